// Count path: validate every event and count the valid ones.
// Run from the repository root: hql run bench/rich/count.hql
import "event.hql"

source(file("bench/data/events-200k.jsonl"), Json) | validate(Event) | oks() | count()
