// Route path: validate every order, write the valid ones to clean.jsonl and
// the failure records to dead.jsonl in one pass; prints `{ok: n, err: m}`.
// Run from the repository root: hql run bench/orders_route.hql
import "orders_contract.hql"

source(file("bench/data/orders-1m.jsonl"), Json)
    | validate(Order)
    | route(ok: file("bench/data/clean.jsonl"), err: file("bench/data/dead.jsonl"))
