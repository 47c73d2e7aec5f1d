// Types flow through pipelines: after `validate(Trip) | oks()` each element
// is a Trip, a closed type, so reading a field it does not declare is a
// static error with a "did you mean" hint. Nothing runs (exit 2).
type Trip : TypeContract = {
    trip_id: String
    rider: String
    km: Float
}

source(file("examples/errors/trips.jsonl"), Json) | validate(Trip) | oks() | map(t => t.ridr)
