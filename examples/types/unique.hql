// Till exports from several shops: order ids must be unique across the
// stream, and a receipt number is unique per shop.
// A key is claimed by the first record that is otherwise ok; a later ok
// record with the same key becomes an `err` of kind `unique`
// (`Order.order_id.unique`, `Order.shop+receipt.unique`). A record that
// fails another rule claims nothing (line 2's O-2 leaves the id free for
// line 3). A record whose key field is absent or null is not checked.
type Order : DataContract = {
    order_id?: String | Null
    shop: String
    receipt?: Int
    amount: Float

    require amount > 0
    unique order_id
    unique (shop, receipt)
}

let orders = source(file("examples/types/unique.jsonl"), Json) | validate(Order)

orders | map(r => is_ok(r))
orders
    | errs()
    | map(e => {line: e.origin.line, failures: e.failures | map(f => {rule: f.rule, kind: f.kind, path: f.path, fields: f.fields}) | collect()})
orders | report()
