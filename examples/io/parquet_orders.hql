// Parquet: the same orders as a columnar export holds them (written by
// pyarrow; make_parquet.py beside this file). Its columns are typed, so
// nothing converts: a decimal keeps its digits at the column's scale
// (`120.50`), a DATE reads as "YYYY-MM-DD", and a null cell is absent, or
// `null` where the field's type admits `Null` (`note`). A record's line is
// its row number. The valid orders go to a Parquet target whose columns
// are the contract's fields, in their order.
import "contracts.hql"

let orders = source(file("examples/io/orders.parquet"), Parquet) | validate(Order)

orders | oks() | map(o => [o.order_id, o.amount, o.placed, o.note])

orders | errs() | map(e => {line: e.origin.line, rules: e.failures | map(f => f.rule)})

orders | oks() | write(file("examples/io/out/clean-orders.parquet"))
