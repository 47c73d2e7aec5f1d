// The nightly orders pipeline takes its contract from the shared file.
// Imports are relative to the importing file; imported types and functions
// keep their own names, so identities read `Order.positive`, `OrderId.…`.
import "shared/contracts.hql"

let orders = source(file("examples/imports/orders.jsonl"), Json) | validate(Order)

orders | map(r => is_ok(r))
orders
    | errs()
    | map(e => e.failures | map(f => {rule: f.rule, kind: f.kind, path: f.path}) | collect())
["O-7", "7"] | map(is_order_id)
