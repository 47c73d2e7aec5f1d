// Invoice intake: named checks call a function on one field.
// `validate field with f` works with a user `fn` and with a standard
// library `is_…` function alike. The identity is `Type.field.f`, the kind
// `check`, the path the field's. An optional field that is absent (or null)
// is not checked.
fn is_vat_id(v: String) -> Bool =
    matches(v, r"^CHE-[0-9]{3}\.[0-9]{3}\.[0-9]{3}$") or matches(v, r"^[A-Z]{2}[0-9]{9}$")

type Invoice : DataContract = {
    invoice: String
    vat_id?: String | Null
    country?: String
    currency: String

    validate vat_id with is_vat_id
    validate country with is_country_code
    validate currency with is_currency_code
}

let invoices = source(file("examples/types/named_checks.jsonl"), Json) | validate(Invoice)

invoices | map(r => is_ok(r))
invoices
    | errs()
    | map(e => {invoice: e.input.invoice, failures: e.failures | map(f => {rule: f.rule, kind: f.kind, path: f.path, fields: f.fields}) | collect()})
