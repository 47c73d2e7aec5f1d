// `<` compares two numbers or two strings. Comparing a Float field with a
// String is a type error the checker sees before anything runs (exit 2).
type Trip : DataContract = {
    trip_id: String
    km: Float

    require km < "100"
}

source(file("examples/errors/trips.jsonl"), Json) | validate(Trip) | count()
