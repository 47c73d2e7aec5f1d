// A default must match its field's type; this one is checked before running.
type Trip : DataContract = {
    trip_id: String
    km: Float
    passengers: Int = "one"
}

source(file("examples/errors/trips.jsonl"), Json) | validate(Trip)
