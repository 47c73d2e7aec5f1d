// Route path: the same validation, the valid events to one file and the
// failure records to another, in one pass.
// Run from the repository root: hql run bench/rich/route.hql
import "event.hql"

source(file("bench/data/events-200k.jsonl"), Json)
    | validate(Event)
    | route(ok: file("bench/data/events-clean.jsonl"), err: file("bench/data/events-dead.jsonl"))
