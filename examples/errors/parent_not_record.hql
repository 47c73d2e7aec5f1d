// Only a record type can be a parent. `Email` is a refinement of String,
// so declaring a record under it is a static error. Nothing runs (exit 2).
type Contact : Email = {
    name: String
}

[{name: "Ada"}] | validate(Contact)
