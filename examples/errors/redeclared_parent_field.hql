// A child type has its parent's fields; declaring one of them again (even
// with another type) is a static error. Nothing runs (exit 2).
type Sighting : DataContract = {
    species: String
    seen: String
}

type OwlSighting : Sighting = {
    species: "barn owl" | "tawny owl"
    wingspan?: Float
}

[{species: "barn owl", seen: "dusk"}] | validate(OwlSighting)
