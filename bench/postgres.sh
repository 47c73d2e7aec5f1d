#!/usr/bin/env bash
# HQL benchmark: validate 1,000,000 records and write them into a
# PostgreSQL table (append, no index, the run's one transaction), against
# loading the same rows with `psql \copy` on the same machine — the server
# shares the cores. Reports rows per second and the ratio (the bar: HQL at
# 0.8× psql's rate or better).
#
#   bench/postgres.sh             # 1,000,000 records, 5 rounds
#   bench/postgres.sh 200000 3    # another count, rounds
#
# A private cluster is made with initdb in a temporary folder and started
# with pg_ctl on a free port (as the `postgres` user when run as root),
# and removed at the end. The records are bench/sqlite.sh's (id, name,
# amount, paid), as JSON Lines for HQL and as CSV for psql. Each round
# empties the table first; HQL and psql alternate. It also times psql
# loading the rows in COPY's text and binary forms (the binary file made
# by the server itself), which says what HQL's text form costs the server.
set -euo pipefail

N="${1:-1000000}"
ROUNDS="${2:-5}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SCRIPT=postgres.sh
source bench/lib.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
DATA=$ROOT/bench/data
mkdir -p "$DATA"

BIN=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort | tail -1)")
[ -x "$BIN/initdb" ] || BIN=$(dirname "$(command -v initdb || true)")
[ -x "$BIN/initdb" ] || die "PostgreSQL's initdb is not installed (apt-get install postgresql)"
PSQL="$BIN/psql"

log "building hql (release)…"
cargo build --release --quiet
HQL="$CARGO_TARGET_DIR/release/hql"

JSONL=$DATA/sqlite-$N.jsonl
CSV=$DATA/postgres-$N.csv
if [ ! -f "$JSONL" ] || [ ! -f "$CSV" ]; then
    log "generating $JSONL and $CSV…"
    python3 - "$N" "$JSONL" "$CSV" <<'PY'
import json, sys
n, jsonl, csv = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(jsonl, "w") as j, open(csv, "w") as c:
    for i in range(n):
        row = {"id": i, "name": f"customer-{i % 977}",
               "amount": round(i * 0.37 % 1000, 2), "paid": i % 3 != 0}
        j.write(json.dumps(row, separators=(",", ":")) + "\n")
        c.write(f"{i},{row['name']},{row['amount']!r},{'t' if row['paid'] else 'f'}\n")
PY
fi

# The cluster, in a folder of its own (short: the socket path must fit).
DIR=$(mktemp -d /tmp/hql-pgbench.XXXXXX)
chmod 755 "$DIR"
AS=()
if [ "$(id -u)" = 0 ]; then
    chown postgres "$DIR"
    AS=(runuser -u postgres --)
fi
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() {
    "${AS[@]}" "$BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$DIR"
}
trap cleanup EXIT
quiet "${AS[@]}" "$BIN/initdb" -D "$DIR/data" -U bench --auth=trust -E UTF8 --no-locale
quiet "${AS[@]}" "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w \
    -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c fsync=on" start

sql() { "$PSQL" -X -q -h 127.0.0.1 -p "$PORT" -U bench -d postgres -v ON_ERROR_STOP=1 "$@"; }
sql -c "CREATE TABLE orders (id bigint NOT NULL, name text NOT NULL, amount double precision NOT NULL, paid boolean NOT NULL)"

RUN=$DATA/postgres-run
mkdir -p "$RUN"
cat > "$RUN/hql.toml" <<TOML
[targets.warehouse]
postgres = "postgresql://bench@127.0.0.1:$PORT/postgres"
table = "orders"
TOML
cat > "$RUN/write.hql" <<HQL
type Order : DataContract = { id: Int, name: String, amount: Float, paid: Bool }
source(file("$JSONL"), Json) | validate(Order) | oks() | write("warehouse")
HQL

seconds() {
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
}
empty() { sql -c "TRUNCATE orders" -c "CHECKPOINT"; }
check() {
    local rows
    rows=$(sql -tA -c "SELECT count(*) FROM orders")
    [ "$rows" = "$N" ] || die "$1 left $rows rows, expected $N"
}

# The binary form of the same rows, as the server writes it.
empty
sql -c "\\copy orders FROM '$CSV' (FORMAT csv)"
BINARY=$DIR/orders.bin
sql -c "\\copy orders TO '$BINARY' (FORMAT binary)"

declare -a T_HQL T_CSV T_TEXT T_BIN
TEXT=$DIR/orders.txt
sql -c "\\copy orders TO '$TEXT'"
for r in $(seq 1 "$ROUNDS"); do
    empty; T_HQL+=("$(seconds "$HQL" run "$RUN/write.hql")"); check hql
    empty; T_CSV+=("$(seconds sql -c "\\copy orders FROM '$CSV' (FORMAT csv)")"); check "psql csv"
    empty; T_TEXT+=("$(seconds sql -c "\\copy orders FROM '$TEXT'")"); check "psql text"
    empty; T_BIN+=("$(seconds sql -c "\\copy orders FROM '$BINARY' (FORMAT binary)")"); check "psql binary"
    log "round $r: hql ${T_HQL[-1]} s, psql csv ${T_CSV[-1]} s, text ${T_TEXT[-1]} s, binary ${T_BIN[-1]} s"
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
H=$(median "${T_HQL[@]}")
C=$(median "${T_CSV[@]}")
X=$(median "${T_TEXT[@]}")
B=$(median "${T_BIN[@]}")
rate() { echo "$N / $1" | bc -l; }
printf 'records: %d, rounds: %d (medians)\n' "$N" "$ROUNDS"
printf 'hql validate + write (COPY text): %.2f s, %.0f rows/s\n' "$H" "$(rate "$H")"
printf 'psql \\copy from CSV:              %.2f s, %.0f rows/s\n' "$C" "$(rate "$C")"
printf 'psql \\copy, COPY text form:       %.2f s, %.0f rows/s\n' "$X" "$(rate "$X")"
printf 'psql \\copy, COPY binary form:     %.2f s, %.0f rows/s\n' "$B" "$(rate "$B")"
printf 'hql / psql csv rate: %.2f×\n' "$(echo "$C / $H" | bc -l)"
