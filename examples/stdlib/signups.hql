// Newsletter sign-ups checked with the standard library's types. Each is a
// refinement of String (or Float for Percent) with one named rule, so a
// failure has the stdlib type's identity (`Date.calendar_date`,
// `Email.well_formed`, …), kind `require`, and the field's path; a value of
// the wrong base type fails as the field: `Signup.email.type`,
// `Signup.discount.type`.
// Date is a real calendar date: 2024-02-29 exists, 2023-02-29 does not.
type Signup : DataContract = {
    id: Uuid
    email: Email
    born: Date
    signed_up: Timestamp
    country: CountryCode
    currency: CurrencyCode
    display_name: NonEmpty
    discount: Percent
    homepage?: Url
}

let signups = source(file("examples/stdlib/signups.jsonl"), Json) | validate(Signup)

signups | map(r => is_ok(r))
signups
    | errs()
    | map(e => {line: e.origin.line, failures: e.failures | map(f => {rule: f.rule, kind: f.kind, path: f.path}) | collect()})

// The matching functions give the same answers for Strings.
[
    is_date("2024-02-29"),
    is_date("2023-02-29"),
    is_timestamp("2024-03-01T09:30:00Z"),
    is_uuid("not-a-uuid")
]
