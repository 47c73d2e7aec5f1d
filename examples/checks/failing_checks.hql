// Failing checks: each false check is reported on stderr with its label, its
// line and the operands of its top-level comparison; the program goes on
// (later statements still print) and the run exits with status 1.
type Batch : DataContract = {
    batch: String
    plant: String
    units: Int
    rejected: Int
    require units >= 0
}

let batches = source(file("examples/checks/batches.jsonl"), Json) | validate(Batch)

check "at most two bad batches": batches | errs() | count() <= 2
check "this one holds": batches | count() == 8
check total_units: batches | oks() | map(b => b.units) | sum() > 1_000
batches | oks() | count()
