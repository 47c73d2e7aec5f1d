// The rich benchmark's contract: nested events checked with the standard
// library's `Email`, `CountryCode` and `Timestamp` (bench/rich/gen.py writes
// the data). Prices and totals are Ints (cents), so the sum rule is exact.

/// One line of an order: a SKU such as `ABC-1234`, a quantity of at least
/// one, and a unit price in cents.
type Item : TypeContract = {
    sku: String
    qty: Int
    price: Int

    require sku_format: matches(sku, r"^[A-Z]{3}-[0-9]{4}$")
    require positive_qty: qty >= 1
    require non_negative_price: price >= 0
}

/// Who caused the event; no other field is allowed.
type User : Type = {
    email: Email
    country: CountryCode
}

/// A user's event on the shop; fields beyond these are admitted and kept.
type Event : DataContract = {
    event_id: String
    user: User
    ts: Timestamp
    type: "click" | "view" | "cart" | "purchase"
    items: List[Item]
    total: Int

    require event_id_format: matches(event_id, r"^ev-[0-9]{9}$")
    require purchase_has_items: self["type"] == "purchase" => len(items) > 0
    require total_is_sum: total == items | map(i => i.qty * i.price) | sum()
}
