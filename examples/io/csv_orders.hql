// CSV in: a shop exports its orders as CSV. Every cell is text; a source
// alone gives records of strings, and an empty cell is absent. Validated,
// a cell converts to its field's declared type when the text parses
// ("35" is the Float 35.0, "7e1" is 70.0, "true" the Bool true), an empty
// cell is null where the type admits Null, and a row that does not split
// into as many cells as the header is an `err` of kind `decode`.
import "contracts.hql"

let raw = source(file("examples/io/orders.csv"), Csv)
let orders = raw | validate(Order)

// the cells as read: text, the empty `note` absent
raw | take(2)

// converted by the contract: Floats, Bools, a null note
orders | oks()

// one of each kind of bad row: a wrong type (line 4), an empty required
// cell (line 5), a ragged row (line 6), a broken rule (line 8); the header
// is line 1
orders | errs() | map(e => {line: e.origin.line, rules: e.failures | map(f => f.rule)})

// a failure record keeps the cells as text; a ragged row, the raw line
orders | errs() | map(e => e.input)

orders | report()
