// `|` binds looser than `+`: `xs | count() + 1` would pipe into `count() + 1`,
// so arithmetic on a pipeline's result needs parentheses.
let trips = source(file("examples/errors/trips.jsonl"), Json)
trips | count() + 1
