// A type name after `|` is not a stage: validating takes validate(T).
type Trip : DataContract = {
    trip_id: String
    km: Float
}

source(file("examples/errors/trips.jsonl"), Json) | Trip
