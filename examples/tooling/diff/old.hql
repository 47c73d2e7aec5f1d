// The contract as the consumers know it (compared with new.hql by `hql diff`).

/// Orders exported for the analytics team.
@version("1.4.0")
@owner("data-platform")
type Order : DataContract = {
    order_id: String
    status: "open" | "shipped" | "cancelled"
    qty: Int
    note: String | Null

    require order_id != ""
    warn qty < 1_000
}
