// The contract of the shop's order export, shared by the programs in this
// folder and usable on its own with `hql vet`:
//
//     hql vet examples/io/contracts.hql examples/io/orders.csv --errors 3
//
// It declares one record type, so `vet` needs no `--type`.
type Order : DataContract = {
    order_id: String
    customer: Email
    amount: Float
    paid: Bool
    placed: Date
    note: String | Null

    require positive: amount > 0
}
