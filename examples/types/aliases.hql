// Type aliases name a type expression so that `validate` can take it:
// `validate` takes a type *name*. An alias has no rules of its own, so as a
// field type its failure is the field's (`Movie.rating.type`); validated on
// its own, a bare value fails as `Rating.type` with no path (the value
// itself, not a field of it) and no fields — like a refinement's `Sku.type`.
type Rating = "G" | "PG" | "PG-13" | "R"
type MaybeText = String | Null
type Sku = String
    require well_formed: matches(self, r"^[A-Z]{3}-[0-9]{4}$")

type Movie : DataContract = {
    title: String
    rating: Rating
    tagline: MaybeText
}

[{title: "Up", rating: "PG", tagline: null}, {title: "Heat", rating: "X", tagline: 3}]
    | validate(Movie)
    | map(r => if is_ok(r) then [] else [r] | errs() | flat_map(e => e.failures) | map(f => {rule: f.rule, path: f.path, fields: f.fields}) | collect())

["PG", "X", 3]
    | validate(Rating)
    | errs()
    | flat_map(e => e.failures)
    | map(f => {rule: f.rule, kind: f.kind, path: f.path, fields: f.fields})
[null, "tagline"] | validate(MaybeText) | map(r => is_ok(r))
[42]
    | validate(Sku)
    | errs()
    | flat_map(e => e.failures)
    | map(f => {rule: f.rule, kind: f.kind, path: f.path, fields: f.fields})
