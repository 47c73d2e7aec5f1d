// Stock movements: a refinement type gives a field a meaning beyond its
// base type. `Sku` is a String that must look like `ABC-1234`.
// Used as a field type, a broken refinement rule is reported with the
// refinement's identity (`Sku.well_formed`), kind `require`, and the path of
// the field (`sku`, `alt_skus[1]`); a field's value that is not even a String
// fails as the field (`Movement.sku.type`), a value validated on its own as
// `Sku.type`. Unnamed refinement rules use their canonical text
// (`Quantity.self > 0`).
type Sku = String
    require well_formed: matches(self, r"^[A-Z]{3}-[0-9]{4}$")
type Quantity = Int
    require self > 0

type Movement : DataContract = {
    sku: Sku
    qty: Quantity
    alt_skus: List[Sku]
    warehouse?: Sku
}

let moves = source(file("examples/types/refinements.jsonl"), Json) | validate(Movement)

moves | map(r => is_ok(r))
moves
    | errs()
    | map(e => e.failures | map(f => {rule: f.rule, kind: f.kind, path: f.path, fields: f.fields}) | collect())

// A refinement validates on its own too.
validate("QRS-9999", Sku)
validate("QRS-99", Sku)
validate(1234, Sku)
