// An import chain: this program imports `shared/owls.hql`, which imports
// `shared/base.hql`. Both files' declarations are visible here; their own
// self-test statements do not run when imported.
import "shared/owls.hql"

let survey = [
    {species: "tawny owl", seen: "night", site: "wood"},
    {species: "wren", seen: "morning"},
    {species: " ", seen: "noon"}
]

survey | validate(OwlSighting) | map(r => is_ok(r))
survey
    | validate(OwlSighting)
    | errs()
    | map(e => e.failures | map(f => {rule: f.rule, path: f.path}) | collect())
survey | validate(Sighting) | oks() | count()
