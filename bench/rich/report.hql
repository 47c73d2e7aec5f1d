// Report path: the same validation, summarised by rule.
// Run from the repository root: hql run bench/rich/report.hql
import "event.hql"

source(file("bench/data/events-200k.jsonl"), Json) | validate(Event) | report()
