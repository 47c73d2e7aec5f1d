// Shared contracts of the orders domain, imported by several pipelines.
// Declarations only: run on its own it prints nothing.
fn is_order_id(s: String) -> Bool = matches(s, r"^O-[0-9]+$")

type OrderId = String
    require well_formed: is_order_id(self)

type Order : DataContract = {
    order_id: OrderId
    status: "open" | "shipped" | "cancelled"
    amount: Float
    currency: CurrencyCode

    require positive: amount > 0
    unique order_id
}
