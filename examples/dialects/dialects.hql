// Files as other tools write them. An R export spells missing as `NA`:
// with `nulls: ["NA"]` such a cell is absent (a missing optional field),
// while a quoted empty cell stays the empty string.

type Sighting : DataContract = {
    id: Int
    species: String
    count?: Int
    note?: String

    require counted: count? >= 0 ?? true
}

let r = source(file("examples/dialects/counts_r.csv"), Csv, nulls: ["NA"]) | validate(Sighting)
r | oks()
r | errs() | map(e => {line: e.origin.line, rules: e.failures | map(f => f.rule)})

// An API response keeps its records in an array inside one document:
// `at` is the JSON pointer to it.
let api = source(file("examples/dialects/envelope.json"), Json, at: "/data") | validate(Sighting)
api | report()
api | errs() | map(e => e.origin)
