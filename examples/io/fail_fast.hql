// Fail-fast: a load that must be all or nothing. `unwrap()` passes the oks
// on as plain values and stops the run at the first err, naming its rule
// and the line it came from (exit status 1). Because targets are put in
// place only when the run ends, a stopped run writes nothing at all: not
// all-orders.jsonl, and not first-orders.jsonl either, although its `write`
// finished and printed its count. A target that existed before is left
// byte for byte as it was.
import "contracts.hql"

let orders = source(file("examples/io/orders.csv"), Csv) | validate(Order)

orders | take(2) | unwrap() | write(file("examples/io/out/first-orders.jsonl"))
orders | unwrap() | write(file("examples/io/out/all-orders.jsonl"))
"never printed"
