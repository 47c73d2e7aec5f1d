// Rule identities: a named rule is `Type.name`; an unnamed rule is `Type.`
// followed by its condition in canonical form — single spaces around
// operators, `, ` after commas, only the parentheses the tree needs, and
// literals exactly as written (`10_000`, `1.0e0`, raw strings stay raw).
// Reformatting the contract below never changes these identities.
type Order : DataContract = {
    order_id: String
    sku: String
    amount: Float
    low: Int
    high: Int
    discount: Float

    require order_id != ""
    require amount < 10_000
    require discount >= 0 and discount <= 1.0e0
    require matches(sku, r"^[A-Z]{3}-\d+$")
    require (amount - discount) * 2 < 100_000
    require ordered_bounds: low <= high else "low must not exceed high"
    require positive_bounds: low > 0 and high > 0
}

let orders = source(file("examples/rules/orders.jsonl"), Json) | validate(Order)

orders | oks() | map(o => o.order_id)
orders | errs() | flat_map(e => e.failures) | map(f => f.rule)
// a custom message replaces the default one (and never shows the value)
orders
    | errs()
    | flat_map(e => e.failures)
    | filter(f => f.rule == "Order.ordered_bounds")
    | map(f => f.message)
