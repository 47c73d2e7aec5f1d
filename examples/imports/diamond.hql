// Importing a file twice — directly and through another import — loads it
// once: `Sighting` is not redeclared.
import "shared/base.hql"
import "shared/owls.hql"

validate({species: "little owl", seen: "dusk"}, OwlSighting)
validate({species: "little owl", seen: "dusk"}, Sighting) | is_ok()
