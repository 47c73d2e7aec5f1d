#!/usr/bin/env bash
# HQL memory and start-up: peak RSS of streaming pipelines over 5,000,000
# events, the memory `unique event_id` takes a key, how much slower a
# unique key makes `validate(T) | oks() | count()` (with the ids in order,
# and the same ids shuffled) and a pipeline past `validate` on every core,
# and the start-up time.
#
#   bench/memory.sh                 # 5,000,000 events (about 380 MB of data)
#   bench/memory.sh --records 500000
#
# Needs /usr/bin/time (package `time`) and hyperfine; generates
# bench/data/events-N.jsonl and events-N-shuffled.jsonl with
# bench/gen_event_ids.py if missing, builds
# target/release/hql, prints a Markdown table on stdout and writes it as
# the memory section of bench/RESULTS.md. Times are CPU
# seconds (user + system), the median of three runs, on one thread; the
# count with and without a unique key, whose ratio is the key's cost, are
# run in turns, 11 rounds (ROUNDS=n to change), so that the machine's load
# weighs on all, and each round's own ratio is given too; the same two are
# then timed by the clock on every core, in turns as well.
# HQL=path, EVENTS=path and SHUFFLED=path use that binary (no build) and
# those data files.
set -euo pipefail

RECORDS=5000000
while [ $# -gt 0 ]; do
    case "$1" in
        --records) RECORDS="$2"; shift 2 ;;
        -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "memory.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export CARGO_TARGET_DIR="$ROOT/target"
DATA=bench/data
EVENTS=${EVENTS:-$DATA/events-$RECORDS.jsonl}
SHUFFLED=${SHUFFLED:-$DATA/events-$RECORDS-shuffled.jsonl}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
BUILD=0
[ -n "${HQL:-}" ] || { HQL=$ROOT/target/release/hql; BUILD=1; }

command -v /usr/bin/time >/dev/null || { echo "memory.sh: install the package 'time'" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "memory.sh: install hyperfine" >&2; exit 1; }
[ "$BUILD" -eq 0 ] || cargo build --release --quiet --bin hql
[ -f "$EVENTS" ] || python3 bench/gen_event_ids.py --records "$RECORDS" --out "$EVENTS"
[ -f "$SHUFFLED" ] || python3 bench/gen_event_ids.py --shuffle --records "$RECORDS" --out "$SHUFFLED"

contract() {
    cat <<EOF
type Event : DataContract = {
    event_id: String
    kind: "click" | "view" | "buy" | "share"
    user: String
    amount: Int
    require amount >= 0
$1
}
EOF
}
program() { # name, unique line, pipeline[, data file]
    { contract "$2"; echo "source(file(\"$(realpath "${4:-$EVENTS}")\"), Json) | validate(Event) | $3"; } >"$WORK/$1.hql"
}
program count "" "oks() | count()"
program unique "    unique event_id" "oks() | count()"
program count_shuffled "" "oks() | count()" "$SHUFFLED"
program unique_shuffled "    unique event_id" "oks() | count()" "$SHUFFLED"
program report "" "report()"
program map "" "oks() | map(e => e.amount * 2) | filter(a => a > 100) | count()"
program route "" "route(ok: file(\"$WORK/ok.jsonl\"), err: file(\"$WORK/err.jsonl\"))"
program write "" "oks() | map(e => {id: e.event_id, amount: e.amount}) | write(file(\"$WORK/out.jsonl\"))"
program print "" "oks()"
routed="map(e => e) | route(ok: file(\"$WORK/ok.jsonl\"), err: file(\"$WORK/err.jsonl\"))"
program spread "" "$routed"
program spread_unique "    unique event_id" "$routed"

# "peak-KiB cpu-seconds" of one run.
measure() {
    /usr/bin/time -f "%M %U %S" -o "$WORK/time" "$HQL" run --threads 1 "$WORK/$1.hql" >/dev/null
    awk '{ printf "%d %.2f\n", $1, $2 + $3 }' "$WORK/time"
}
# The median of the runs in file $1, each figure on its own.
median() {
    local mid=$((($(wc -l <"$1") + 1) / 2))
    echo "$(cut -d' ' -f1 "$1" | sort -n | sed -n ${mid}p) $(cut -d' ' -f2 "$1" | sort -n | sed -n ${mid}p)"
}
# The counts with and without the key run in turns, ROUNDS rounds (11
# unless set): the machine's speed drifts, and each round's own ratio is
# taken too.
ROUNDS=${ROUNDS:-11}
for ((r = 0; r < ROUNDS; r++)); do
    for p in count unique count_shuffled unique_shuffled; do
        measure $p >>"$WORK/runs-$p"
    done
done
# Wall-clock seconds of one run on every core (`--threads` left to its
# default), for the count with and without a unique key.
wall() { # program[, threads]
    /usr/bin/time -f "%e" -o "$WORK/time" "$HQL" run ${2:+--threads "$2"} "$WORK/$1.hql" >/dev/null
    cat "$WORK/time"
}
for ((r = 0; r < ROUNDS; r++)); do
    wall count >>"$WORK/wall-count"
    wall unique >>"$WORK/wall-unique"
done
# A pipeline past `validate` with the key, on every core and on one, and
# without the key on every core: five rounds in turns.
for ((r = 0; r < 5; r++)); do
    wall spread >>"$WORK/wall-spread"
    wall spread_unique >>"$WORK/wall-spread_unique"
    wall spread_unique 1 >>"$WORK/wall-spread_unique_1"
done
for p in report map route write print; do
    for _ in 1 2 3; do measure "$p"; done >"$WORK/runs-$p"
done

# A pipeline's row in the table.
label() {
    case "$1" in
        count) echo '`validate(Event) \| oks() \| count()`' ;;
        report) echo '`validate(Event) \| report()`' ;;
        map) echo '`… \| oks() \| map(…) \| filter(…) \| count()`' ;;
        route) echo '`… \| route(ok: …, err: …)`' ;;
        write) echo '`… \| oks() \| map(…) \| write(…)`' ;;
        print) echo '`… \| oks()` printed (HQL form)' ;;
        unique) echo '`unique event_id`, then `oks() \| count()`' ;;
        count_shuffled) echo 'the count, the ids shuffled' ;;
        unique_shuffled) echo '`unique event_id` over the shuffled ids' ;;
    esac
}
{
echo "| pipeline over $RECORDS events | peak RSS | CPU |"
echo "| --- | ---: | ---: |"
for p in count report map route write print unique count_shuffled unique_shuffled; do
    read -r kib cpu <<<"$(median "$WORK/runs-$p")"
    eval "KIB_$p=$kib CPU_$p=$cpu"
    printf '| %s | %.1f MiB | %s s |\n' "$(label "$p")" "$(echo "$kib / 1024" | bc -l)" "$cpu"
done
echo
# The median of the rounds' own ratios of column $3 in files $2 to $1,
# and their range: "median low high".
ratios() {
    paste -d' ' "$1" "$2" | awk -v c="$3" '{ print $(c + NF / 2) / $c }' | sort -g |
        awk '{ r[NR] = $1 } END { printf "%.2f %.2f %.2f", (r[int((NR + 1) / 2)] + r[int(NR / 2) + 1]) / 2, r[1], r[NR] }'
}
key() { # label, count, unique
    read -r med low high <<<"$(ratios "$WORK/runs-$2" "$WORK/runs-$3" 2)"
    awk -v l="$1" -v u="$(eval echo "\$KIB_$3")" -v c="$(eval echo "\$KIB_$2")" -v n="$RECORDS" \
        -v tu="$(eval echo "\$CPU_$3")" -v tc="$(eval echo "\$CPU_$2")" -v r="$ROUNDS" \
        -v med="$med" -v low="$low" -v high="$high" 'BEGIN {
        printf "unique event_id, %s: %.1f bytes a distinct key beyond the run without it (a key is 12 bytes); %.2fx the CPU time (the median of the %d rounds'"'"' own ratios %.2fx, from %.2fx to %.2fx)\n", l, (u - c) * 1024 / n, tu / tc, r, med, low, high
    }'
}
key "ids in order" count unique
key "ids shuffled" count_shuffled unique_shuffled
mid() { sort -n "$1" | sed -n "$(((ROUNDS + 1) / 2))p"; }
read -r med low high <<<"$(ratios "$WORK/wall-count" "$WORK/wall-unique" 1)"
awk -v u="$(mid "$WORK/wall-unique")" -v c="$(mid "$WORK/wall-count")" -v t="$(nproc)" \
    -v med="$med" -v low="$low" -v high="$high" 'BEGIN {
    printf "on every core (%d): count %.2f s, with the unique key %.2f s of wall-clock time: %.2fx (the median of the rounds'"'"' own ratios %.2fx, from %.2fx to %.2fx)\n", t, c, u, u / c, med, low, high
}'
mid5() { sort -n "$1" | sed -n 3p; }
awk -v k="$(mid5 "$WORK/wall-spread_unique")" -v one="$(mid5 "$WORK/wall-spread_unique_1")" \
    -v plain="$(mid5 "$WORK/wall-spread")" -v t="$(nproc)" 'BEGIN {
    printf "`unique event_id`, then `map(e => e) | route(…)`, wall-clock medians of 5 rounds: on every core (%d) %.2f s, on one %.2f s (%.2fx); without the key on every core %.2f s (the key %.2fx)\n", t, k, one, k / one, plain, k / plain
}'
echo 1 >"$WORK/one.hql"
hyperfine -N --warmup 5 --runs 50 --style none --export-json "$WORK/start.json" "$HQL run $WORK/one.hql" >/dev/null
python3 - "$WORK/start.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(f"start-up (hql run of a one-line program): median {r['median'] * 1000:.1f} ms")
EOF
} | tee "$WORK/report.md"
python3 bench/memory_section.py "$WORK/report.md" bench/RESULTS.md "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
