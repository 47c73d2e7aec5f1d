// A film catalogue: literal unions, a field name that is not an identifier,
// a compound unique key, and a subtype that inherits its parent's rules.
type Movie : DataContract = {
    title: String
    rating: "G" | "PG" | "PG-13" | "R"
    year: Int
    "US Gross"?: Int

    require year >= 1888
    require self["US Gross"]? >= 0
    unique (title, year)
}

// inherits Movie's fields and rules; its identities stay `Movie.…`
type Classic : Movie = {
    director?: String
    require classic: year < 1990
}

let movies = source(file("examples/contracts/movies.jsonl"), Json)

movies | validate(Movie) | map(r => if is_ok(r) then "ok" else "err")
movies | validate(Movie) | errs() | flat_map(e => e.failures) | map(f => f.rule)
movies
    | validate(Movie)
    | errs()
    | flat_map(e => e.failures)
    | filter(f => f.kind == "type")
    | map(f => f.message)
movies
    | validate(Classic)
    | errs()
    | map(e => {line: e.origin.line, rules: e.failures | map(f => f.rule) | collect()})
