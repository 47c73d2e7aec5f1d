// An owl survey reuses the general sighting contract. `OwlSighting` is
// declared under `Sighting`: it has Sighting's fields, checked first, then
// its own; Sighting's rules, whose identities stay `Sighting.…`; and
// Sighting's kind (an open DataContract: `site` is kept). A structural
// failure names the type that declares the field (`Sighting.species.missing`,
// `OwlSighting.wingspan.type`).
type Sighting : DataContract = {
    species: String
    seen: String

    require seen == "morning" or seen == "dusk" or seen == "night"
}

type OwlSighting : Sighting = {
    wingspan?: Float
    require owl: contains(species, "owl")
}

let sightings = source(file("examples/inheritance/owls.jsonl"), Json)
let owls = sightings | validate(OwlSighting)

owls | map(r => is_ok(r))
owls
    | errs()
    | map(e => {type: e.type, failures: e.failures | map(f => {rule: f.rule, kind: f.kind, path: f.path, fields: f.fields}) | collect()})
owls | oks() | collect()

// Every OwlSighting is a Sighting: validating as the parent ignores `owl`.
sightings | validate(Sighting) | map(r => is_ok(r))
