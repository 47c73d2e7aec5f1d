// Which records claim unique keys. A key is claimed only by a record that
// is otherwise ok: a record rejected because its *compound* key is taken is
// an err, so it must not claim its `order_id` either — otherwise the id
// would vanish from the clean output altogether.
type Order : DataContract = {
    order_id: String
    shop: String
    receipt: Int

    unique order_id
    unique (shop, receipt)
}

let orders = [
    {order_id: "O-1", shop: "zrh", receipt: 1},
    {order_id: "O-2", shop: "zrh", receipt: 1}, // (zrh, 1) taken: err, claims nothing
    {order_id: "O-2", shop: "zrh", receipt: 2}, // O-2 still free: ok
    {order_id: "O-1", shop: "zrh", receipt: 1} // both keys taken: two failures
]

orders | validate(Order) | map(r => is_ok(r))
orders | validate(Order) | errs() | map(e => e.failures | map(f => f.rule) | collect())
orders | validate(Order) | oks() | map(o => o.order_id)
