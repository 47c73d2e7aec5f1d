// The contract as it is now: `hql diff old.hql new.hql` lists the changes.

/// Orders exported for the analytics team.
@version("1.5.0")
@owner("data-platform")
type Order : DataContract = {
    order_id: String
    status: "open" | "shipped"
    qty: Float
    note: String | Null
    channel?: String

    require order_id != ""
    require positive: qty > 0
}
