// `write` takes values, not results: writing the output of `validate`
// would put `ok`/`err` wrappers in a file, so it is a static error (exit
// status 2, nothing runs) whose help names the three ways to say what is
// meant: `oks()` to keep the valid records, `unwrap()` to stop at the
// first failure, `route(ok: …, err: …)` to keep both.
import "contracts.hql"

"nothing runs"
source(file("examples/io/orders.csv"), Csv)
    | validate(Order)
    | write(file("examples/io/out/orders.jsonl"))
