// Web-shop orders with nested shapes.
// Inline records take the openness of the declaration they appear in: the
// closed `Order` refuses undeclared fields at every depth of its inline
// records, the open `Received` keeps them. Inline failures are identified
// under the enclosing declaration with the dotted field path and no list
// index (`Order.lines.qty.type`); the failure's `path` is the full path from
// the validated value (`lines[1].qty`).
// `Pickup` is a named type of the open kind `Data`: it uses its own kind, so
// its undeclared `dock` is kept even inside the closed `Order`, and its
// failures are identified under `Pickup`.
type Pickup : Data = {
    site: String
    gate: String
}

type Order : TypeContract = {
    order_id: String
    ship_to: { name: String, address: { city: String, zip: String } }
    lines: List[{ sku: String, qty: Int }]
    pickup: Pickup

    require len(lines) > 0
}

type Received : DataContract = {
    order_id: String
    ship_to: { name: String, address: { city: String, zip: String } }
    lines: List[{ sku: String, qty: Int }]
    pickup: Pickup
}

let orders = source(file("examples/types/nested_inline.jsonl"), Json)

orders | validate(Order) | map(r => is_ok(r))
orders
    | validate(Order)
    | errs()
    | map(e => e.failures | map(f => {rule: f.rule, kind: f.kind, path: f.path}) | collect())
orders | validate(Order) | oks() | map(o => o.pickup)

// The open contract admits `floor` and `note`; only the shape errors remain.
orders | validate(Received) | map(r => is_ok(r))
orders | validate(Received) | errs() | flat_map(e => e.failures) | map(f => f.rule)
