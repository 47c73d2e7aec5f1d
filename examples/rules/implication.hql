// Implication: a parcel that has shipped must carry a tracking number;
// an open or cancelled one may or may not. `a => b` means `not a or b`.
type Parcel : DataContract = {
    parcel: String
    status: "open" | "shipped" | "cancelled"
    tracking?: String | Null

    require status == "shipped" => tracking?
    // a cancelled parcel never had a tracking number
    require never_sent: status == "cancelled" => not tracking?
}

let parcels = source(file("examples/rules/parcels.jsonl"), Json) | validate(Parcel)

parcels | oks() | map(p => p.parcel)
parcels
    | errs()
    | map(e => fmt("line {}: {}", e.origin.line, join(e.failures | map(f => f.rule) | collect(), "; ")))
parcels | errs() | first()
