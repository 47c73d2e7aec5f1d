// `validate` takes the name of a type. `count` is a builtin function, not a
// type: a static error. Nothing runs (exit 2).
type Trip : DataContract = {
    trip_id: String
    km: Float
}

source(file("examples/errors/trips.jsonl"), Json) | validate(count)
