// A failure budget: `failures == 0` bounds a count from above, so reading
// stops at the first failure, the run stops without printing a value, and
// neither target is written (a later run starts from the same files).
import "expectations.hql"

type StrictOrder : Order = {
    expect no_failures: failures == 0
}

source(file("examples/checks/deliveries.jsonl"), Json)
    | validate(StrictOrder)
    | route(ok: file("examples/checks/out/clean.jsonl"), err: file("examples/checks/out/dead_letters.jsonl"))
"not reached"
