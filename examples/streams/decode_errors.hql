// Decode errors: a sensor gateway sometimes writes truncated lines. A line
// that does not decode becomes an `err` of kind `decode` at the source,
// with its line number; reading goes on, and `validate` passes it through.
type Reading : DataContract = {
    sensor: String
    celsius: Float
}
type Located : Data = {
    sensor: String
    site: String
}

let readings = source(file("examples/streams/readings.jsonl"), Json) | validate(Reading)

readings | oks() | map(r => r.sensor)
readings
    | errs()
    | map(e => {type: e.type, line: e.origin.line, kind: e.failures[0].kind, input: e.input})
readings | errs() | first()

// A file whose first non-whitespace byte is `[` is one JSON array; each
// element's origin line is the line where the element starts.
let batch = source(file("examples/streams/readings.json"), Json) | validate(Reading)
batch | map(r => if is_ok(r) then "ok" else "err")
batch | errs() | map(e => e.origin)
// every element lacks `site`: the lines where the three elements start
source(file("examples/streams/readings.json"), Json)
    | validate(Located)
    | errs()
    | map(e => e.origin.line)
