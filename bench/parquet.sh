#!/usr/bin/env bash
# HQL benchmark: `validate + count()` over the 1M orders as Parquet
# against the same orders as JSON Lines, on one thread and on two.
#
#   bench/parquet.sh
#
# Builds hql (release), generates bench/data/orders-1m.jsonl if missing
# (bench/gen.py), writes bench/data/orders-1m.parquet from it with pyarrow
# (row groups of 65,536 rows; a value whose JSON type does not fit its
# column's becomes null, so its record fails as missing rather than as a
# wrong type), then times each run and prints HQL's counts beside the
# times. pyarrow is installed with pip into target/sql-venv when missing;
# polars, when it installs there, is timed as a peer (read the file, count
# the rows that meet the same rules). The machine's other work shows in
# the times: run it more than once.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
DATA=bench/data
mkdir -p "$DATA"

echo "building hql (release)…" >&2
cargo build --release --quiet
HQL="$CARGO_TARGET_DIR/release/hql"

JSONL=$DATA/orders-1m.jsonl
PARQUET=$DATA/orders-1m.parquet
if [ ! -f "$JSONL" ]; then
    echo "generating $JSONL…" >&2
    python3 bench/gen.py
fi

VENV=$CARGO_TARGET_DIR/sql-venv
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
"$VENV/bin/python" -c "import pyarrow" 2>/dev/null || "$VENV/bin/pip" install --quiet pyarrow
PY="$VENV/bin/python"

if [ ! -f "$PARQUET" ]; then
    echo "writing $PARQUET…" >&2
    "$PY" bench/parquet_gen.py "$JSONL" "$PARQUET"
fi

RUN=$DATA/parquet-run
mkdir -p "$RUN"
for f in jsonl parquet; do
    format=Json
    [ "$f" = parquet ] && format=Parquet
    cat > "$RUN/count-$f.hql" <<HQL
import "$ROOT/bench/orders_contract.hql"
source(file("$ROOT/$DATA/orders-1m.$f"), $format) | validate(Order) | oks() | count()
HQL
done

seconds() {
    local t0 t1
    t0=$(date +%s.%N)
    "$@" > "$RUN/last.out"
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc
}

printf '%-34s %8s  %s\n' "run" "seconds" "count"
for f in jsonl parquet; do
    for threads in 1 2; do
        s=$(seconds "$HQL" run --threads "$threads" "$RUN/count-$f.hql")
        printf '%-34s %8.2f  %s\n' "hql $f, $threads thread(s)" "$s" "$(cat "$RUN/last.out")"
    done
done

# Peak memory of the Parquet count on one thread.
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "%M" -o "$RUN/rss" "$HQL" run --threads 1 "$RUN/count-parquet.hql" > /dev/null
    printf '%-34s %8s KiB\n' "hql parquet peak RSS" "$(cat "$RUN/rss")"
fi

if "$PY" -c "import polars" 2>/dev/null || "$VENV/bin/pip" install --quiet polars 2>/dev/null; then
    s=$(seconds "$PY" bench/parquet_gen.py --polars "$PARQUET")
    printf '%-34s %8.2f  %s\n' "polars (same rules)" "$s" "$(cat "$RUN/last.out")"
fi
