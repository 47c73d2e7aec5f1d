// Owl surveys build on the general sighting record of `base.hql` (a path
// relative to this file, not to the program that imports it).
import "base.hql"

type OwlSighting : Sighting = {
    wingspan?: Float
    require owl: contains(species, "owl")
}

validate({species: "barn owl", seen: "dusk"}, OwlSighting) | is_ok()
