// Nested values: failure paths run from the validated value (`items[2].qty`,
// list indices from 0). A field of an inline record is reported under the
// enclosing type (`Cart.address.city.missing`); a field of a named type
// under that type (`Item.qty.type`), which also brings its own rules.
type Item : DataContract = {
    sku: String
    qty: Int
    require qty > 0
}

type Cart : TypeContract = {
    cart_id: String
    address: { street: String, city: String }
    items: List[Item]
}

let carts = source(file("examples/contracts/carts.jsonl"), Json) | validate(Cart)

carts | map(r => is_ok(r))
carts | errs() | flat_map(e => e.failures) | map(f => {rule: f.rule, kind: f.kind, path: f.path})
// Item is open (a DataContract), so its undeclared `gift` is kept even
// inside the closed Cart
carts | oks() | map(c => c.items)
