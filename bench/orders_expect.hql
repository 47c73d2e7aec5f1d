// The report path of orders_report.hql with four counter expectations on
// the contract: what measuring a delivery costs (bench/expect.py).
import "orders_contract.hql"

type MeasuredOrder : Order = {
    expect rows >= 1000
    expect failures <= 10%
    expect missing(customer_email) <= 50%
    expect nulls(customer_email) <= 50%
}

source(file("bench/data/orders-1m.jsonl"), Json) | validate(MeasuredOrder) | report()
