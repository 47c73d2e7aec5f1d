// A contract using every part an export writes out.

/// A line of an order.
type Line : TypeContract = {
    sku: String
    qty: Int
    require qty >= 1 and qty <= 999
}

/// Orders exported for the analytics team.
@version("1.2.0")
@owner("data-platform")
type Order : DataContract = {
    /// The order's key.
    order_id: String
    status: "open" | "shipped" | "cancelled"
    amount: Float
    customer_email?: Email
    phone?: String
    note: String | Null
    country: String = "CH"
    low: Int
    high: Int
    "US Gross"?: Int
    tags: List[String]
    lines: List[Line]
    extra: Map[Int]
    shipping?: { street: String, zip: String | Null }
    code: String
    channel: String

    require order_id != ""
    require ordered_bounds: low <= high else "low must not exceed high"
    require email_or_phone: customer_email? or phone?
    require len(code) >= 2 and len(code) < 9
    require code_shape: matches(code, r"^[A-Z]+-[0-9]{2,}$")
    require loose_shape: matches(order_id, r"^\d+$")
    require channel in ["web", "shop"]
    require amount > 0
    warn amount < 10_000
    validate country with is_country_code
    unique order_id

    expect rows >= 1
    /// A delivery may carry a few broken orders, no more.
    expect warn budget: failures <= 5%
    expect missing(customer_email) + missing(phone) <= 1_000
}
