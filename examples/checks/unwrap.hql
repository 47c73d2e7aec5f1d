// Fail-fast: a load job that must stop at the first bad record. unwrap()
// passes oks through as plain values and stops the run at the first err,
// naming its rule (exit status 1). What was printed before stays.
type Batch : DataContract = {
    batch: String
    plant: String
    units: Int
    rejected: Int
    require units >= 0
}

let batches = source(file("examples/checks/batches.jsonl"), Json) | validate(Batch)

batches | take(2) | unwrap() | map(b => b.batch)
batches | unwrap() | map(b => b.batch)
"never printed"
