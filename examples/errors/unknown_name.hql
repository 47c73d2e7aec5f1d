// A misspelt name is a static error with a "did you mean" hint; nothing runs.
type Sighting : DataContract = {
    species: String
    seen: String
}

let sightings = source(file("examples/structural/sightings.jsonl"), Json) | validate(Sighting)

sightings | oks() | count()
sighitngs | errs() | count()
