// CSV into SQLite: valid orders go to the table, failure records to a
// file. The table is created from the contract (NOT NULL for required
// fields); March's export has a new column `channel`, which `on_drift =
// "evolve"` adds to the table before writing. Order 1002 is in both
// deliveries: `upsert` updates its row. Everything is one transaction,
// committed when the run ends.
type Order : DataContract = {
    order_id: Int
    customer: String
    amount: Float
    paid: Bool

    unique order_id
}

source("orders") | validate(Order) | route(ok: "warehouse", err: "rejected")
source("orders_march") | validate(Order) | route(ok: "warehouse", err: "rejected")
