// Swapped letters in a short type name (`Flaot` for `Float`) are the
// commonest typo; the "did you mean" hint must catch them too. A static
// error; nothing runs (exit 2).
type Reading : DataContract = {
    sensor: String
    value: Flaot
}

[{sensor: "t-01", value: 21.5}] | validate(Reading)
