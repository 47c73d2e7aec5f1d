// A failed `expect` fails the run: the statement finishes and prints its
// value, with the expectation in by_rule, then the run stops (exit 1).
type Reading : DataContract = {
    sensor: String
    at: Timestamp
    celsius: Float

    expect fresh: age(at) <= 12h
    expect enough: rows >= 2
}

[
    {sensor: "s-1", at: "2026-11-29T06:00:00Z", celsius: 4.5},
    {sensor: "s-2", at: "2026-11-29T06:10:00Z", celsius: 5.0}
] | validate(Reading) | report()
"not reached"
