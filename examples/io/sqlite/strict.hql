// A strict target: `on_drift = "fail"` stops the run at the first batch
// whose shape differs from the table's, naming the column and the change.
// The run's transaction is rolled back: the first delivery is not written
// either, and the database this run created is removed.
type Order : DataContract = {
    order_id: Int
    customer: String
    amount: Float
    paid: Bool
}

source("orders") | validate(Order) | oks() | write("strict_warehouse")
source("orders_march") | validate(Order) | oks() | write("strict_warehouse")
