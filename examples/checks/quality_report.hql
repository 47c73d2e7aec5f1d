// A nightly quality job over production batches: summarise what broke with
// report(), count batches per plant, and assert expectations with `check`.
type Batch : DataContract = {
    batch: String
    plant: String
    units: Int
    rejected: Int

    require units >= 0
    // raises (division by zero) when units is 0: kind `eval`, same identity
    require reject_rate: rejected / units < 0.5
}

let batches = source(file("examples/checks/batches.jsonl"), Json) | validate(Batch)

// by_rule: count descending, then rule, then kind
batches | report()
batches | oks() | count_by(b => b.plant)
source(file("examples/checks/batches.jsonl"), Json) | count_by(b => b.plant)

// passing checks print nothing
check "some batches pass": batches | oks() | count() >= 3
check no_unknown_plants: batches | oks() | all(b => b.plant in ["Basel", "Bern", "Chur"])
"done"
