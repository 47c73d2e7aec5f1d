// An annotated function called with an argument of the wrong type is a
// static error, also when the type comes through a pipeline: `t.km` is a
// Float, `label` wants a String. Nothing runs (exit 2).
type Trip : TypeContract = {
    trip_id: String
    km: Float
}

fn label(s: String) -> String = fmt("trip {}", s)

source(file("examples/errors/trips.jsonl"), Json) | validate(Trip) | oks() | map(t => label(t.km))
