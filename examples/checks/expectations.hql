// Checks over a whole delivery, judged in the same pass that validates
// each record. The examples run with HQL_NOW=2026-12-01T00:00:00Z, so that
// `age` does not change from day to day (`hql run --now TIME` does the same).
type Order : DataContract = {
    order_id: String
    customer_id: String
    email?: String | Null
    placed: Timestamp
    amount: Float

    require amount >= 0

    expect rows >= 5
    expect budget: failures <= 25%
    expect missing(email) <= 20%
    expect nulls(email) <= 1
    expect fresh: age(placed) <= 2d
    expect warn unique_orders: duplicates(order_id) == 0
    expect warn known_customers: orphans(customer_id, source(file("examples/checks/customers.jsonl"), Json) | map(c => c.id)) == 0
    expect sane_totals: max(amount) < 1000 and avg(amount) > 1
}

let orders = source(file("examples/checks/deliveries.jsonl"), Json) | validate(Order)

// A failed `expect warn` warns once a run; report() lists it in by_rule.
orders | report()
orders | oks() | count()

// A stream that is not read to its end is not judged.
orders | take(2) | map(r => is_ok(r))
