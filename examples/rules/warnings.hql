// Warn rules: large payments are allowed but flagged for review. A broken
// `warn` keeps the value `ok`; `warnings()` lists each broken warn rule,
// shaped like a failure plus the origin of its value as a last field.
@version("2.1.0")
type Payment : DataContract = {
    payment_id: String
    amount: Float
    currency: String

    require amount > 0
    warn amount < 10_000
    warn upper_case_currency: currency == upper(currency) else "currency codes are upper case"
}

let payments = source(file("examples/rules/payments.jsonl"), Json) | validate(Payment)

payments | oks() | count()
payments | warnings()
// `warned` counts the oks that carry at least one warning
payments | report()
// warn rules only run on values with no error, and errors carry the version
payments | errs() | map(e => {version: e.version, line: e.origin.line, n: len(e.failures)})
