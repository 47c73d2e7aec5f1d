// Named checks: `validate field with f` calls an ordinary function on the
// field; it must return true. The identity is `Type.field.function`, the
// kind `check`, and the check is skipped when the field is absent or null.
fn is_served(c: String) -> Bool = c in ["CH", "DE", "AT", "LI"]
fn is_iban(s: String) -> Bool = matches(s, r"^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$")

type Account : DataContract = {
    iban: String
    country?: String | Null
    currency: String

    validate iban with is_iban
    validate country with is_served
    require iban_country: starts_with(iban, country? ?? "")
}

let accounts = source(file("examples/rules/accounts.jsonl"), Json) | validate(Account)

accounts | map(r => is_ok(r))
accounts
    | errs()
    | map(e => e.failures | map(f => {rule: f.rule, kind: f.kind, path: f.path}) | collect())
