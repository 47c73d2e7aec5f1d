// A rule must say what happens when an optional field is absent: reading
// `discount` without `?` is a static error whose help suggests `discount?`.
type Invoice : DataContract = {
    invoice_id: String
    total: Float
    discount?: Float

    require discount <= total
}

source(file("examples/errors/trips.jsonl"), Json) | validate(Invoice)
