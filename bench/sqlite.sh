#!/usr/bin/env bash
# HQL benchmark: write 1,000,000 records into a SQLite table in one
# transaction (the run's), and report rows per second. The bar is 300,000
# rows/s on one core.
#
#   bench/sqlite.sh             # 1,000,000 records
#   bench/sqlite.sh 200000      # another count
#
# Builds hql (release), generates bench/data/sqlite-N.jsonl if missing
# (id, name, amount, paid), writes it to a fresh database with
# `source(file(…), Json) | write("warehouse")` under `taskset -c 0` where
# taskset exists, and checks the table's row count. Reading the file alone
# (`count()`) is timed too, so the cost of the table can be told apart.
set -euo pipefail

N="${1:-1000000}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
DATA=bench/data
RUN=$DATA/sqlite-run
mkdir -p "$DATA" "$RUN"

echo "building hql (release)…" >&2
cargo build --release --quiet
HQL="$CARGO_TARGET_DIR/release/hql"

INPUT=$DATA/sqlite-$N.jsonl
if [ ! -f "$INPUT" ]; then
    echo "generating $INPUT…" >&2
    python3 - "$N" "$INPUT" <<'PY'
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as out:
    for i in range(n):
        out.write(json.dumps({"id": i, "name": f"customer-{i % 977}",
                              "amount": round(i * 0.37 % 1000, 2), "paid": i % 3 != 0},
                             separators=(",", ":")) + "\n")
PY
fi

ABS_INPUT="$ROOT/$INPUT"
cat > "$RUN/hql.toml" <<TOML
[targets.warehouse]
sqlite = "warehouse.db"
table = "orders"
TOML
cat > "$RUN/write.hql" <<HQL
type Order : DataContract = { id: Int, name: String, amount: Float, paid: Bool }
source(file("$ABS_INPUT"), Json) | validate(Order) | oks() | write("warehouse")
HQL
cat > "$RUN/read.hql" <<HQL
type Order : DataContract = { id: Int, name: String, amount: Float, paid: Bool }
source(file("$ABS_INPUT"), Json) | validate(Order) | oks() | count()
HQL

PIN=()
if command -v taskset >/dev/null; then PIN=(taskset -c 0); fi

seconds() {
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
}

rm -f "$RUN/warehouse.db"
READ=$(seconds "${PIN[@]}" "$HQL" run "$RUN/read.hql")
WRITE=$(seconds "${PIN[@]}" "$HQL" run "$RUN/write.hql")
ROWS=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from orders').fetchone()[0])" "$RUN/warehouse.db")
if [ "$ROWS" != "$N" ]; then
    echo "sqlite.sh: the table holds $ROWS rows, expected $N" >&2
    exit 1
fi
printf 'records: %d\nread and validate only: %.2f s\nwrite to SQLite (one transaction): %.2f s, %.0f rows/s\n' \
    "$N" "$READ" "$WRITE" "$(echo "$N / $WRITE" | bc -l)"
