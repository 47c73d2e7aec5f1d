#!/usr/bin/env bash
# The SQL export's speed: DuckDB running the query `hql export --format sql
# --dialect duckdb --summary` writes, over the JSON Lines file itself, beside
# `hql run` giving the same report() — on the flat orders (1M) and the rich
# events. Both use every core of the machine. The two reports are compared
# first (exit 1 if they differ); then hyperfine takes the median of 5 runs
# of each, and the SQL section of bench/RESULTS.md is written.
#
#   bench/sql.sh                      # bench/data/orders-1m.jsonl, events-200k.jsonl
#   bench/sql.sh ORDERS EVENTS        # other files (RESULTS=path writes there,
#                                     # HQL_BIN=path times that hql unbuilt)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export CARGO_TARGET_DIR="$ROOT/target"
B=bench
DATA=$B/data
ORDERS=${1:-$DATA/orders-1m.jsonl}
EVENTS=${2:-$DATA/events-200k.jsonl}
RESULTS=${RESULTS:-$B/RESULTS.md}
R=$(mktemp -d)
trap 'rm -rf "$R"' EXIT
HQL=$R/hql
VENV=target/sql-venv
PY=$VENV/bin/python

SCRIPT=sql.sh
# shellcheck source=bench/lib.sh
. $B/lib.sh
command -v hyperfine >/dev/null || die "hyperfine not found (bench/run.sh installs it)"

if [ -n "${HQL_BIN:-}" ]; then
    cp "$HQL_BIN" "$HQL"
else
    log "building hql (release)"
    quiet cargo build --release --quiet
    cp target/release/hql "$HQL"
fi
if ! "$PY" -c 'import duckdb' 2>/dev/null; then
    log "installing DuckDB into $VENV"
    [ -x "$PY" ] || quiet python3 -m venv "$VENV"
    quiet "$VENV/bin/pip" install --quiet duckdb
fi
[ -f "$ORDERS" ] || quiet python3 $B/gen.py --records 1000000 --out "$ORDERS"
[ -f "$EVENTS" ] || quiet python3 $B/rich/gen.py --out "$EVENTS" --quiet

NAMES=()
CMDS=()
NOTES=()
# One contract over one file: the query written, the reports compared.
add() {
    local name=$1 contract=$2 ty=$3 file=$4
    local program=$R/$name.hql query=$R/$name.sql
    printf 'import "%s"\nsource(file("%s"), Json) | validate(%s) | report()\n' \
        "$ROOT/$contract" "$file" "$ty" >"$program"
    if ! "$HQL" export "$contract" "$ty" --format sql --dialect duckdb --from "$file" --summary \
        >"$query" 2>"$R/$name.err"; then
        NOTES+=("$name: $(tr '\n' ' ' <"$R/$name.err")")
        log "$name: $(cat "$R/$name.err")"
        return
    fi
    "$HQL" run "$program" --format json >"$R/$name.hql.json"
    "$PY" tests/sql/run_duckdb.py "$query" --summary >"$R/$name.duckdb.json"
    "$PY" - "$R/$name.hql.json" "$R/$name.duckdb.json" <<'PYEOF' || die "$name: DuckDB's report differs from hql run's"
import json, sys
h = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[2]))
h["by_rule"] = [[b["rule"], b["kind"], b["count"]] for b in h["by_rule"]]
sys.exit(0 if h == d else 1)
PYEOF
    NAMES+=("${name}_hql" "${name}_duckdb")
    CMDS+=("$HQL run $program" "$PY tests/sql/run_duckdb.py $query --summary")
}
absolute() { case $1 in /*) echo "$1" ;; *) echo "$ROOT/$1" ;; esac; }
add orders $B/orders_contract.hql Order "$(absolute "$ORDERS")"
add events $B/rich/event.hql Event "$(absolute "$EVENTS")"
[ ${#NAMES[@]} -gt 0 ] || die "no contract compiled"

log "timing, median of 5 runs each"
HF=(hyperfine --shell=none --style none --warmup 1 --runs 5 --export-json "$R/hyperfine.json")
for i in "${!NAMES[@]}"; do
    HF+=(-n "${NAMES[$i]}" "${CMDS[$i]}")
done
"${HF[@]}" >"$R/hyperfine.log"

DUCKDB_VERSION=$("$PY" -c 'import duckdb; print(duckdb.__version__)')
NOTE_TEXT=$(printf '%s\n' "${NOTES[@]+"${NOTES[@]}"}")
"$PY" - "$R/hyperfine.json" "$RESULTS" "$ORDERS" "$EVENTS" "$DUCKDB_VERSION" "$(nproc)" "$NOTE_TEXT" "$B" <<'PYEOF'
import json, os, sys
runs, results, orders, events, version, cpus, notes, bench = sys.argv[1:9]
sys.path.insert(0, bench)
import report
times = {r["command"]: r["median"] for r in json.load(open(runs))["results"]}
lines = [
    "<!-- sql benchmark: begin (bench/sql.sh writes this section) -->",
    "## The contract as SQL: DuckDB beside hql run",
    "",
    f"`report()` of the same contract over the same JSON Lines file: `hql run` against DuckDB {version} "
    f"running the query `hql export --format sql --dialect duckdb --summary` writes (each line read as text, "
    f"decoded by DuckDB's JSON functions). Both on all {cpus} CPUs; median of 5 runs; the reports were "
    "checked equal first.",
    "",
    "| data | hql run | DuckDB | DuckDB / hql |",
    "| --- | ---: | ---: | ---: |",
]
for name, path in (("orders", orders), ("events", events)):
    h, d = times.get(f"{name}_hql"), times.get(f"{name}_duckdb")
    if h is None or d is None:
        continue
    lines.append(f"| `{os.path.basename(path)}` | {h:.2f} s | {d:.2f} s | {d / h:.1f}× |")
for n in filter(None, notes.splitlines()):
    lines += ["", f"Not timed: {n}"]
lines.append("<!-- sql benchmark: end -->")
report.write_section(results, lines[0], lines[-1], "\n".join(lines) + "\n")
PYEOF
log "wrote the SQL section of $RESULTS"
