// Open vs closed: the same shipments checked by the contract we *receive*
// (open: a carrier may add fields) and by the contract we *own* (closed:
// anything undeclared is refused with an `extra` failure per field).

// What the carrier sends us: extra fields are admitted and kept.
type Received : DataContract = {
    shipment_id: String
    weight_kg: Float
    carrier: String

    require weight_kg > 0
}

// What our warehouse table holds: nothing undeclared gets in.
type Stored : TypeContract = {
    shipment_id: String
    weight_kg: Float
    carrier: String

    require weight_kg > 0
}

// The plain kinds have no rules: only the shape is checked.
type Loose : Data = {
    shipment_id: String
}
type Strict : Type = {
    shipment_id: String
    carrier: String
}

let shipments = source(file("examples/contracts/shipments.jsonl"), Json)

shipments | validate(Received)
shipments | validate(Stored)
shipments | validate(Loose) | oks() | count()
shipments | validate(Strict) | errs() | map(e => e.failures | map(f => f.rule))
