#!/usr/bin/env bash
# The rich benchmark: 200,000 nested events (bench/rich/gen.py) validated
# against bench/rich/event.hql with the standard library's Email, Timestamp
# and CountryCode, on ONE core (taskset -c 0, --threads 1): HQL's count()
# and report(), the hand-written Rust baseline (bench/baseline `rich`),
# pydantic 2, ajv with ajv-formats and jsonschema-rs. Every tool's count is
# checked against the generator's first (exit 1 if one differs); then
# every tool runs once a round, for 9 rounds (ROUNDS=n to change), and
# bench/rich/report.py writes the medians to the rich section of
# bench/RESULTS.md. Then HQL's count(), report() and route() on one thread
# and on two (no taskset), in rounds too.
#
#   bench/rich.sh     # bench/run.sh calls it at its end; it also runs alone
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export CARGO_TARGET_DIR="$ROOT/target"
B=bench
DATA=$B/data
R=$DATA/results-rich
EVENTS=$DATA/events-200k.jsonl
HQL=$DATA/hql-rich-under-test
RICH=$B/baseline/target/release/rich
PY=$B/.venv/bin/python

SCRIPT=rich.sh
ROUNDS=${ROUNDS:-9}
# shellcheck source=bench/lib.sh
. $B/lib.sh
for tool in hyperfine taskset node python3; do
    command -v $tool >/dev/null || die "$tool not found (bench/run.sh installs hyperfine and taskset)"
done

rm -rf "$R"
mkdir -p "$R" $DATA
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

log "building hql and the Rust baseline (release)"
quiet cargo build --release --quiet
cp target/release/hql $HQL.tmp && mv -f $HQL.tmp $HQL
quiet cargo build --release --quiet --manifest-path $B/baseline/Cargo.toml --target-dir $B/baseline/target
log "installing the peers where missing"
quiet bash $B/peers/install.sh
if [ ! -f $EVENTS.counts.json ] || [ ! -f $EVENTS ]; then
    log "generating $EVENTS"
    quiet python3 $B/rich/gen.py --out $EVENTS
fi
EXP=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["valid"])' $EVENTS.counts.json)

HQL1="taskset -c 0 $HQL run --threads 1"
NAMES=(hql_count hql_report rich pydantic ajv jsonschema_rs)
CMDS=(
    "$HQL1 $B/rich/count.hql"
    "$HQL1 $B/rich/report.hql"
    "taskset -c 0 $RICH $EVENTS"
    "taskset -c 0 $PY $B/peers/python/pydantic_rich_count.py $EVENTS"
    "taskset -c 0 node $B/peers/ajv/validate_rich.js $EVENTS"
    "taskset -c 0 $PY $B/peers/python/jsonschema_rs_rich_count.py $EVENTS"
)

log "verifying counts (expected $EXP valid)"
MISMATCH=0
: >"$R/counts.tsv"
for i in "${!NAMES[@]}"; do
    name=${NAMES[$i]}
    # shellcheck disable=SC2086 # the command line is split on purpose
    /usr/bin/time -v -o "$R/$name.time" ${CMDS[$i]} >"$R/$name.out" 2>"$R/$name.err" ||
        { cat "$R/$name.err" >&2; die "$name: \`${CMDS[$i]}\` exited non-zero"; }
    if [ "$name" = hql_report ]; then
        got=$(grep -o 'ok: [0-9]*' "$R/$name.out" | head -n1 | cut -d' ' -f2)
    else
        got=$(grep -Eo '^[0-9]+$' "$R/$name.out" | tail -n1)
    fi
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$R/$name.time")
    printf '%s\t%s\t%s\t%s\n' "$name" "${got:-?}" "$EXP" "$rss" >>"$R/counts.tsv"
    if [ "${got:-}" != "$EXP" ]; then
        echo "rich.sh: COUNT MISMATCH: $name counted '${got:-nothing}', expected $EXP" >&2
        MISMATCH=1
    fi
done
[ "$MISMATCH" -eq 0 ] || die "the tools do not agree on the number of valid events (see $R/counts.tsv)"

# hyperfine runs one command's runs back to back, so a burst of load, or
# the machine's speed drifting over a minute, lands on that command alone:
# every command runs once a round instead, in an order turned by one each
# round, and bench/rounds.py merges the rounds (median of each command's).
rounds() { # name of the merged export, rounds, then -n NAME COMMAND for each
    local out=$1 n=$2
    shift 2
    local given=("$@") k=$(($# / 3)) files=() round=() r j at
    hyperfine --shell=none --style none --runs 1 "${given[@]}" >/dev/null # a warm-up round
    for ((r = 0; r < n; r++)); do
        round=()
        for ((j = 0; j < k; j++)); do
            at=$(((j + r) % k * 3))
            round+=("${given[@]:at:3}")
        done
        hyperfine --shell=none --style none --runs 1 --export-json "$R/$out-$r.json" "${round[@]}" >>"$R/hyperfine.log"
        files+=("$R/$out-$r.json")
    done
    python3 $B/rounds.py "$R/$out.json" "${files[@]}"
}

log "timing, one core: $ROUNDS rounds, each tool once a round"
HF=()
for i in "${!NAMES[@]}"; do
    HF+=(-n "${NAMES[$i]}" "${CMDS[$i]}")
done
rounds hyperfine "$ROUNDS" "${HF[@]}"

log "timing HQL on one thread and on two (count, report, route): $ROUNDS rounds"
HT=()
for what in count report route; do
    for n in 1 2; do
        HT+=(-n "${what}_$n" "$HQL run --threads $n $B/rich/$what.hql")
    done
done
rounds threads "$ROUNDS" "${HT[@]}"

{
    echo "load average (1, 5, 15 min) at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg) — on $(nproc) CPUs; anything near or above 1 means other work shared the machine"
    echo "hql $(git rev-parse --short HEAD 2>/dev/null || echo '?') (files changed under src/ in the working tree: $(git status --porcelain -- src 2>/dev/null | wc -l)), $(rustc --version)"
    echo "$(hyperfine --version), node $(node --version), $($PY --version)"
    echo "python packages: $($B/.venv/bin/pip freeze 2>/dev/null | grep -iE '^(pydantic|pydantic.core|jsonschema.rs)==' | tr '\n' ' ')"
    echo "ajv $(node -p 'require("./bench/peers/ajv/node_modules/ajv/package.json").version'), ajv-formats $(node -p 'require("./bench/peers/ajv/node_modules/ajv-formats/package.json").version')"
} >"$R/notes.txt"
python3 $B/rich/report.py "$R" $EVENTS $B/RESULTS.md
log "wrote the rich section of $B/RESULTS.md"
