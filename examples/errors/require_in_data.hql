// A plain `Data` type declares shape only: a rule inside it is a static
// error, and the help names the contract kind to use instead.
type Trip : Data = {
    trip_id: String
    km: Float

    require km >= 0
}

source(file("examples/errors/trips.jsonl"), Json) | validate(Trip)
