"""Run queries `hql export --format sql --dialect spark` wrote, all in one
Spark session (starting Spark is the slow part). The argument is a JSON
manifest: a list of {"sql": file, "summary": bool, "out": file}. Each
out file gets the rows as JSON Lines: per line {"line", "failures",
"warnings"} (each failure [rule, kind, path]), or the one report row; or
{"error": message} when Spark refused the query."""
import json
import sys

from pyspark.sql import SparkSession

spark = (SparkSession.builder.master("local[2]")
         .config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "4")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")

for case in json.load(open(sys.argv[1], encoding="utf-8")):
    text = open(case["sql"], encoding="utf-8").read()
    statements = [s for s in text.split(";\n") if s.strip()]
    out = open(case["out"], "w", encoding="utf-8")
    try:
        for s in statements[:-1]:
            spark.sql(s)
        rows = spark.sql(statements[-1]).collect()
    except Exception as e:  # the test shows Spark's message
        out.write(json.dumps({"error": str(e)[:2000]}) + "\n")
        continue
    for r in rows:
        if case["summary"]:
            by_rule = [[b["rule"], b["kind"], b["count"]] for b in r["by_rule"]]
            out.write(json.dumps({"total": r["total"], "ok": r["ok"], "err": r["err"],
                                  "warned": r["warned"], "by_rule": by_rule}) + "\n")
        else:
            failures = [[f["rule"], f["kind"], f["path"]] for f in r["hql_failures"]]
            warnings = [w["rule"] for w in r["hql_warnings"]]
            out.write(json.dumps({"line": r["hql_line"], "failures": failures,
                                  "warnings": warnings}) + "\n")
    out.close()
