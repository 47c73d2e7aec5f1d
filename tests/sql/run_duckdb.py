"""Run a query `hql export --format sql --dialect duckdb` wrote, and print
its rows as JSON Lines: per line `{"line", "failures", "warnings"}` (each
failure `[rule, kind, path]`), or with --summary the one report row. With
`--database FILE` the query runs in that database (its tables)."""
import json
import sys

import duckdb

query = open(sys.argv[1], encoding="utf-8").read()
args = sys.argv[2:]
database = args[args.index("--database") + 1] if "--database" in args else ":memory:"
rows = duckdb.connect(database, read_only=database != ":memory:").sql(query)
names = rows.columns
for row in rows.fetchall():
    r = dict(zip(names, row))
    if "--summary" in sys.argv:
        by_rule = [[b["rule"], b["kind"], b["count"]] for b in r["by_rule"]]
        print(json.dumps({"total": r["total"], "ok": r["ok"], "err": r["err"],
                          "warned": r["warned"], "by_rule": by_rule}))
    else:
        failures = [[f["rule"], f["kind"], f["path"]] for f in r["hql_failures"]]
        warnings = [w["rule"] for w in r["hql_warnings"]]
        print(json.dumps({"line": r["hql_line"], "failures": failures, "warnings": warnings}))
