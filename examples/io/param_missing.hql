// A parameter without a fallback must be given: run without
// `--set input=…`, this stops with hql::param (exit status 1) when it is
// read, after what ran before it.
"reading the day's file"
source(file(param("input")), Csv) | count()
