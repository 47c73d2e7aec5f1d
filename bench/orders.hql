// Count path: validate every order and count the valid ones.
// Run from the repository root: hql run bench/orders.hql
import "orders_contract.hql"

source(file("bench/data/orders-1m.jsonl"), Json) | validate(Order) | oks() | count()
