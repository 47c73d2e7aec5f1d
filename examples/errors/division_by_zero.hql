// A runtime error stops the program with exit status 1; what was printed
// before it stays.
let trips = source(file("examples/errors/trips.jsonl"), Json)
let empty = trips | filter(t => t.km > 100)

trips | count()
(trips | map(t => t.km) | sum()) / (empty | count())
"never printed"
