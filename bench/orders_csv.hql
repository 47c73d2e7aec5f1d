// CSV count path: the orders of orders-1m.jsonl written as CSV (`bench/gen.py
// --format csv`), validated and counted as orders.hql counts the JSON Lines.
// Run from the repository root: hql run bench/orders_csv.hql
import "orders_contract.hql"

source(file("bench/data/orders-1m.csv"), Csv) | validate(Order) | oks() | count()
