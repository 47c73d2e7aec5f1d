// Wider nested shape: a customer record with a nested address, a list of
// item records and a list of tags. Run from the repository root.
type WideEmail = String require well_formed: matches(self, r"^[^@\s]+@[^@\s]+\.[^@\s]+$")

type WideItem : DataContract = {
    sku: String
    qty: Int
    price: Float

    require positive_qty: qty > 0
    require non_negative_price: price >= 0
}

type WideOrder : DataContract = {
    order_id: String
    customer: { id: String, name: String, email?: WideEmail | Null, address: { city: String, country: String } }
    items: List[WideItem]
    tags: List[String]

    require has_items: len(items) > 0
}

source(file("bench/data/wide-1m.jsonl"), Json) | validate(WideOrder) | oks() | count()
