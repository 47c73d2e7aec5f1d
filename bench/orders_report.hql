// Report path: the same validation, summarised by rule.
// Run from the repository root: hql run bench/orders_report.hql
import "orders_contract.hql"

source(file("bench/data/orders-1m.jsonl"), Json) | validate(Order) | report()
