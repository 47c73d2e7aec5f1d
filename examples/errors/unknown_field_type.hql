// A field's type must be declared (or be a builtin or standard library
// type). A misspelt type name is a static error with a "did you mean"
// hint. Nothing runs (exit 2).
type Signup : DataContract = {
    email: Email
    signed_up: Timestmp
}

[{email: "ada@example.org", signed_up: "2024-03-01T09:30:00Z"}] | validate(Signup)
