// Sensor registry export: collection, union and literal types.
// - `List[T]` checks every element (paths like `tags[1]`),
// - `Map[T]` is a record with any keys whose values are all `T` (`limits.high`),
// - `"active" | "retired" | 0` is a literal union, `String | Null` a nullable
//   field (present, maybe null), `Any` admits every value, null included.
// A value matching no member of a union is one `type` failure.
type Sensor : DataContract = {
    sensor: String
    tags: List[String]
    limits: Map[Float]
    state: "active" | "retired" | 0
    calibrated: String | Null
    payload: Any
}

let sensors = source(file("examples/types/collections.jsonl"), Json) | validate(Sensor)

sensors | map(r => is_ok(r))
sensors
    | errs()
    | map(e => e.failures | map(f => {rule: f.rule, kind: f.kind, path: f.path}) | collect())
// The union failure's message lists the members (never the value received).
sensors
    | errs()
    | flat_map(e => e.failures)
    | filter(f => f.path == "state")
    | map(f => f.message)
    | first()
// The nullable field is kept as received; Map values that are Ints stay Ints.
sensors | oks() | map(s => {sensor: s.sensor, calibrated: s.calibrated, limits: s.limits})
