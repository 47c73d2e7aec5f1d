// Presence: a CRM export where contact details and age are often missing.
//   f?: T      the field may be absent (a present null still fails)
//   T | Null   the field must be present but may be null
type Customer : DataContract = {
    id: Int
    name: String
    email?: String
    phone?: String
    age?: Int
    nickname: String | Null

    // at least one way to reach the customer (presence tests)
    require reachable: email? or phone?
    // an absent age is "unknown", and a rule over unknown holds (§4.4)
    require age? <= 150
}

let customers = source(file("examples/presence/customers.jsonl"), Json) | validate(Customer)

customers | oks() | map(c => c.id)
customers | errs() | map(e => {line: e.origin.line, rules: e.failures | map(f => f.rule)})

// `??` picks a fallback when a value is absent (missing or null)
customers | oks() | map(c => fmt("{}: {}", c.name, c.nickname? ?? c.name))
customers | oks() | map(c => c.email? ?? c.phone? ?? "no contact")
// absent in a filter counts as false: only customers whose age is known
customers | oks() | filter(c => c.age? >= 18) | map(c => c.name)
