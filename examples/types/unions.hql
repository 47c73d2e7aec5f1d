// CRM export: unions whose members are named types.
// `billing: Address | Null` must be present and may be null. A value that
// matches no member gives one `type` failure under the field's declaring
// type (`Customer.billing.type`) whose message lists the members. A value
// that has a member's shape but breaks that member's rule fails with the
// member's rule identity (`Address.swiss_zip`) at the field's path.
type Address : TypeContract = {
    city: String
    zip: String
    require swiss_zip: len(zip) == 4
}

type Customer : DataContract = {
    name: String
    billing: Address | Null
    contact: String | Address
}

let customers = source(file("examples/types/unions.jsonl"), Json) | validate(Customer)

customers | map(r => is_ok(r))
customers
    | errs()
    | map(e => e.failures | map(f => {rule: f.rule, kind: f.kind, path: f.path, message: f.message}) | collect())
