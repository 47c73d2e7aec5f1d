// The order contract of the benchmark, shared by orders.hql and orders_report.hql.
// The e-mail rule is the regex every peer uses, not the stdlib's `Email`.
type OrderEmail = String require well_formed: matches(self, r"^[^@\s]+@[^@\s]+\.[^@\s]+$")

type Order : DataContract = {
    order_id: String
    status: "open" | "shipped" | "cancelled"
    amount: Float
    customer_email?: OrderEmail | Null
    low: Int
    high: Int

    require non_negative_amount: amount >= 0
    require ordered_bounds: low <= high
}
