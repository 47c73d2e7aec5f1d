// Quarantine: a nightly load keeps the good orders and sets the bad ones
// aside for a person to look at, in one pass over the file. `route` writes
// the oks to one target and the failure records (the dead letters) to
// another, and returns how many went where. The `err` target must be JSON:
// failure records are nested. `write` takes plain values and returns the
// number written; a file's format comes from its extension (.jsonl: JSON
// Lines, .json: one array, .csv: CSV).
//
// Targets are written to a temporary file beside them and put in place when
// the run ends, so a program never reads back what it wrote in the same
// run: `hql run` this file, then look at examples/io/out/.
import "contracts.hql"

let orders = source(file("examples/io/orders.csv"), Csv) | validate(Order)

orders
    | route(ok: file("examples/io/out/clean-orders.csv"), err: file("examples/io/out/dead-orders.jsonl"))

// the same oks as one JSON array, for a dashboard
orders | oks() | write(file("examples/io/out/clean-orders.json"))

// the dead letters' rules, counted the way a report would
orders | errs() | flat_map(e => e.failures) | count_by(f => f.kind)
