#!/usr/bin/env bash
# HQL benchmark: validate 1,000,000 JSON Lines orders and count the valid ones,
# against hand-written Rust baselines and the usual peers; the same orders as
# CSV (HQL, pydantic + csv, pandas + pandera); route() of the orders to a clean
# and a dead-letter file; writes bench/RESULTS.md. At the end, bench/rich.sh
# adds the rich benchmark (nested events, the standard library's types).
#
#   bench/run.sh          # everything except the 10M-record file
#   bench/run.sh --full   # also generate orders-10m.jsonl (~1.4 GB) for the memory check
#
# Installs what is missing (hyperfine, time, npm packages, a Python venv in
# bench/.venv), builds hql and the baselines, generates the data if missing,
# verifies that every tool counts the same valid records (exit 1 if not), then
# times everything. Progress goes to stderr; a failing step prints its output.
set -euo pipefail

FULL=0
for arg in "$@"; do
    case "$arg" in
        --full) FULL=1 ;;
        -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown argument: $arg" >&2; exit 2 ;;
    esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# The binaries are taken from ./target, whatever the environment says.
export CARGO_TARGET_DIR="$ROOT/target"
B=bench
DATA=$B/data
R=$DATA/results
# The benchmark runs a snapshot of the freshly built binary, so that a rebuild
# of target/release/hql by someone else during the run cannot mix versions.
HQL=$DATA/hql-under-test
VALUE=$B/baseline/target/release/value
TYPED=$B/baseline/target/release/typed
PY=$B/.venv/bin/python
ORDERS=$DATA/orders-1m.jsonl
WIDE=$DATA/wide-1m.jsonl
ORDERS10=$DATA/orders-10m.jsonl
ORDERS_CSV=$DATA/orders-1m.csv
# Written by bench/orders_route.hql (paths fixed there).
CLEAN=$DATA/clean.jsonl
DEAD=$DATA/dead.jsonl

SCRIPT=run.sh
# shellcheck source=bench/lib.sh
. $B/lib.sh
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
APT_UPDATED=0
apt_install() {
    if [ "$APT_UPDATED" -eq 0 ]; then
        quiet $SUDO apt-get update -qq
        APT_UPDATED=1
    fi
    quiet $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

rm -rf "$R"
mkdir -p "$R/pairs"
: >"$R/counts.tsv"
: >"$R/notes.txt"
note() { echo "$*" >>"$R/notes.txt"; }
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
PEER_FAILED=0
peer_failed() {
    echo "run.sh: PEER NOT RUN: $*" >&2
    note "Peer not run: $*"
    PEER_FAILED=1
}

# ---------------------------------------------------------------- tools
command -v hyperfine >/dev/null || { log "installing hyperfine"; apt_install hyperfine; }
[ -x /usr/bin/time ] || { log "installing time"; apt_install time; }
command -v taskset >/dev/null || { log "installing util-linux (taskset)"; apt_install util-linux; }
command -v cargo >/dev/null || die "cargo not found: install a Rust toolchain (rustup)"

log "building hql (release)"
quiet cargo build --release --quiet
mkdir -p $DATA
cp target/release/hql $HQL.tmp && mv -f $HQL.tmp $HQL
log "building the Rust baselines"
quiet cargo build --release --quiet --manifest-path $B/baseline/Cargo.toml --target-dir $B/baseline/target

log "installing the peers where missing (bench/peers/install.sh)"
bash $B/peers/install.sh 2>"$R/install.log" ||
    peer_failed "bench/peers/install.sh: $(grep '^install.sh:' "$R/install.log" | tr '\n' ' ')"
HAVE_AJV=0
command -v node >/dev/null && [ -f $B/peers/ajv/node_modules/ajv/package.json ] && HAVE_AJV=1
HAVE_PY=0
[ -f $B/.venv/.requirements.sha256 ] && [ -x "$PY" ] && HAVE_PY=1
HAVE_JQ=0
command -v jq >/dev/null && HAVE_JQ=1

HAVE_THREADS=0
run_help=$($HQL run --help 2>&1) || die "\`$HQL run --help\` failed: $run_help"
grep -q -- '--threads' <<<"$run_help" && HAVE_THREADS=1
# CSV sources and route() are measured once `hql check` accepts the programs
# that use them (before, `Csv` and `route` are unknown names).
HAVE_CSV=0
if csv_check=$($HQL check $B/orders_csv.hql 2>&1); then
    HAVE_CSV=1
else
    note "HQL CSV count path not measured: \`hql check bench/orders_csv.hql\` refused it: $(grep -m1 '×' <<<"$csv_check" | sed 's/^ *× *//')"
fi
HAVE_ROUTE=0
if route_check=$($HQL check $B/orders_route.hql 2>&1); then
    HAVE_ROUTE=1
else
    note "HQL route path not measured: \`hql check bench/orders_route.hql\` refused it: $(grep -m1 '×' <<<"$route_check" | sed 's/^ *× *//')"
fi

# ---------------------------------------------------------------- data
if [ ! -f $ORDERS.meta.json ] || [ ! -f $ORDERS ]; then
    log "generating $ORDERS"
    quiet python3 $B/gen.py --records 1000000 --out $ORDERS
fi
if [ ! -f $WIDE.meta.json ] || [ ! -f $WIDE ]; then
    log "generating $WIDE"
    quiet python3 $B/gen.py --shape wide --records 1000000 --out $WIDE
fi
if [ ! -f $ORDERS_CSV.meta.json ] || [ ! -f $ORDERS_CSV ]; then
    log "generating $ORDERS_CSV"
    quiet python3 $B/gen.py --format csv --records 1000000 --out $ORDERS_CSV
fi
if [ "$FULL" -eq 1 ] && { [ ! -f $ORDERS10.meta.json ] || [ ! -f $ORDERS10 ]; }; then
    log "generating $ORDERS10 (--full)"
    quiet python3 $B/gen.py --records 10000000 --out $ORDERS10
fi
expected() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["valid"])' "$1.meta.json"; }
EXP=$(expected $ORDERS)
EXP_WIDE=$(expected $WIDE)
EXP_CSV=$(expected $ORDERS_CSV)
# The CSV holds the same orders with the same valid ones (bench/gen.py), so
# that its count path compares with the JSON Lines one on equal work.
[ "$EXP_CSV" = "$EXP" ] ||
    die "$ORDERS_CSV has $EXP_CSV valid orders, $ORDERS $EXP: delete both (and their .meta.json) to regenerate them"

# ---------------------------------------------------------------- verify counts (+ peak RSS)
# verify KEY EXPECTED RECORDS CMD...: one run under /usr/bin/time -v; the
# count is the last integer the command prints (for report(): the `ok:` field).
MISMATCH=0
verify() {
    local key=$1 exp=$2 records=$3
    shift 3
    local out=$R/$key.out tim=$R/$key.time
    if ! /usr/bin/time -v -o "$tim" "$@" >"$out" 2>"$R/$key.err"; then
        cat "$R/$key.err" >&2
        die "$key: \`$*\` exited non-zero"
    fi
    local got
    if [ "$key" = hql_report ] || [ "$key" = hql_route ]; then
        got=$(grep -o 'ok: [0-9]*' "$out" | head -n1 | cut -d' ' -f2)
    else
        got=$(grep -Eo '^[0-9]+$' "$out" | tail -n1)
    fi
    local rss
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tim")
    printf '%s\t%s\t%s\t%s\t%s\n' "$key" "${got:-?}" "$exp" "$rss" "$records" >>"$R/counts.tsv"
    if [ "${got:-}" != "$exp" ]; then
        echo "run.sh: COUNT MISMATCH: $key counted '${got:-nothing}', expected $exp ($*)" >&2
        MISMATCH=1
    fi
}

# routed_lines FILE EXPECTED: route() wrote EXPECTED lines to FILE.
routed_lines() {
    local lines=missing
    [ -f "$1" ] && lines=$(wc -l <"$1")
    if [ "$lines" != "$2" ]; then
        echo "run.sh: COUNT MISMATCH: hql_route wrote $lines lines to $1, expected $2" >&2
        MISMATCH=1
    fi
}

HQL1=(taskset -c 0 $HQL run)
# The CSV and route sections name the thread count. Under `taskset -c 0` the
# default is one thread already (hql counts the cores it may run on), so
# HQL1's count path is the same single-threaded path.
HQL1T=("${HQL1[@]}")
[ "$HAVE_THREADS" -eq 1 ] && HQL1T+=(--threads 1)
log "verifying counts (expected $EXP valid of 1,000,000)"
verify hql_count "$EXP" 1000000 "${HQL1[@]}" $B/orders.hql
verify hql_report "$EXP" 1000000 "${HQL1[@]}" $B/orders_report.hql
[ "$HAVE_THREADS" -eq 1 ] && verify hql_threads "$EXP" 1000000 taskset -c 0,1 $HQL run --threads 2 $B/orders.hql
verify hql_wide "$EXP_WIDE" 1000000 "${HQL1[@]}" $B/wide.hql
verify value "$EXP" 1000000 taskset -c 0 $VALUE $ORDERS
verify typed "$EXP" 1000000 taskset -c 0 $TYPED $ORDERS
[ "$HAVE_AJV" -eq 1 ] && verify ajv "$EXP" 1000000 node $B/peers/ajv/validate.js $ORDERS
if [ "$HAVE_PY" -eq 1 ]; then
    verify pydantic "$EXP" 1000000 $PY $B/peers/python/pydantic_count.py $ORDERS
    verify jsonschema_rs "$EXP" 1000000 $PY $B/peers/python/jsonschema_rs_count.py $ORDERS
    verify fastjsonschema "$EXP" 1000000 $PY $B/peers/python/fastjsonschema_count.py $ORDERS
fi
[ "$HAVE_JQ" -eq 1 ] && verify jq "$EXP" 1000000 jq -n -f $B/peers/jq/count.jq $ORDERS
log "verifying the CSV counts (expected $EXP_CSV valid of 1,000,000)"
[ "$HAVE_CSV" -eq 1 ] && verify hql_csv "$EXP_CSV" 1000000 "${HQL1T[@]}" $B/orders_csv.hql
if [ "$HAVE_PY" -eq 1 ]; then
    verify pydantic_csv "$EXP_CSV" 1000000 $PY $B/peers/python/pydantic_csv_count.py $ORDERS_CSV
    verify pandera "$EXP_CSV" 1000000 $PY $B/peers/python/pandera_count.py $ORDERS_CSV
fi
if [ "$HAVE_ROUTE" -eq 1 ]; then
    log "verifying route(): $EXP lines to $CLEAN, $((1000000 - EXP)) to $DEAD"
    rm -f $CLEAN $DEAD
    verify hql_route "$EXP" 1000000 "${HQL1T[@]}" $B/orders_route.hql
    routed_lines $CLEAN "$EXP"
    routed_lines $DEAD "$((1000000 - EXP))"
    note "route(): $(wc -l <$CLEAN) lines in $CLEAN (valid orders), $(wc -l <$DEAD) in $DEAD (failure records), as expected."
fi
if [ -f $ORDERS10 ] && [ -f $ORDERS10.meta.json ]; then
    log "10M-record memory check (HQL only)"
    sed "s|bench/data/orders-1m.jsonl|$ORDERS10|; s|import \"orders_contract.hql\"|import \"../orders_contract.hql\"|" \
        $B/orders.hql >$DATA/orders-10m.hql
    verify hql_count_10m "$(expected $ORDERS10)" 10000000 "${HQL1[@]}" $DATA/orders-10m.hql
else
    note "10M-record memory check not run: $ORDERS10 is missing (\`bench/run.sh --full\` generates it)."
fi
[ "$MISMATCH" -eq 0 ] || die "the tools do not agree on the number of valid records (see $R/counts.tsv)"

# ---------------------------------------------------------------- timing
HF=(hyperfine --shell=none --style none --warmup 1 --runs 5)
exec 3>&1 1>>"$R/hyperfine.log"  # hyperfine's own output goes to the log
log "timing goal 1: HQL count path vs serde_json::Value, one core"
"${HF[@]}" --export-json $R/bench_goal1.json \
    -n hql_count "${HQL1[*]} $B/orders.hql" \
    -n value "taskset -c 0 $VALUE $ORDERS"
# hyperfine runs each command's runs back to back, so a burst of load on the
# machine lands on one command; the goals' ratios are taken from rounds that
# run each command once, alternating, instead (median of the rounds).
log "timing goals 1-3, 6 and 7 in alternating rounds"
rm -f $R/pairs/round*.json
for i in 1 2 3 4 5 6 7; do
    round=(-n hql_count "${HQL1[*]} $B/orders.hql" -n value "taskset -c 0 $VALUE $ORDERS"
        -n hql_report "${HQL1[*]} $B/orders_report.hql")
    [ "$HAVE_THREADS" -eq 1 ] && round+=(-n hql_threads "taskset -c 0,1 $HQL run --threads 2 $B/orders.hql")
    [ "$HAVE_CSV" -eq 1 ] && round+=(-n hql_csv "${HQL1T[*]} $B/orders_csv.hql")
    [ "$HAVE_ROUTE" -eq 1 ] && round+=(-n hql_route "${HQL1T[*]} $B/orders_route.hql")
    hyperfine --shell=none --style none --runs 1 --export-json $R/pairs/round$i.json "${round[@]}"
done

if [ "$HAVE_THREADS" -eq 1 ]; then
    log "timing goal 2: --threads 2 on two cores vs one core"
    "${HF[@]}" --export-json $R/bench_goal2.json \
        -n hql_count_1core "${HQL1[*]} $B/orders.hql" \
        -n hql_threads "taskset -c 0,1 $HQL run --threads 2 $B/orders.hql"
else
    note "\`hql run --help\` does not mention \`--threads\`: goal 2 not measured."
fi

log "timing goal 3: report() vs count"
"${HF[@]}" --export-json $R/bench_goal3.json \
    -n hql_count_g3 "${HQL1[*]} $B/orders.hql" \
    -n hql_report "${HQL1[*]} $B/orders_report.hql"

if [ "$HAVE_ROUTE" -eq 1 ]; then
    log "timing goal 6: route() vs count"
    "${HF[@]}" --export-json $R/bench_route.json \
        -n hql_route "${HQL1T[*]} $B/orders_route.hql" \
        -n hql_count_g6 "${HQL1T[*]} $B/orders.hql"
fi

if [ "$HAVE_CSV" -eq 1 ]; then
    log "timing goal 7: CSV count vs JSON Lines count"
    "${HF[@]}" --export-json $R/bench_csv.json \
        -n hql_csv "${HQL1T[*]} $B/orders_csv.hql" \
        -n hql_count_g7 "${HQL1T[*]} $B/orders.hql"
fi
if [ "$HAVE_PY" -eq 1 ]; then
    log "timing the CSV peers"
    "${HF[@]}" --export-json $R/bench_peers_csv.json \
        -n pydantic_csv "$PY $B/peers/python/pydantic_csv_count.py $ORDERS_CSV" \
        -n pandera "$PY $B/peers/python/pandera_count.py $ORDERS_CSV"
fi

log "timing the typed baseline and the wide shape"
"${HF[@]}" --export-json $R/bench_rust.json \
    -n typed "taskset -c 0 $TYPED $ORDERS" \
    -n hql_wide "${HQL1[*]} $B/wide.hql"

peers=()
[ "$HAVE_AJV" -eq 1 ] && peers+=(-n ajv "node $B/peers/ajv/validate.js $ORDERS")
if [ "$HAVE_PY" -eq 1 ]; then
    peers+=(-n pydantic "$PY $B/peers/python/pydantic_count.py $ORDERS")
    peers+=(-n jsonschema_rs "$PY $B/peers/python/jsonschema_rs_count.py $ORDERS")
    peers+=(-n fastjsonschema "$PY $B/peers/python/fastjsonschema_count.py $ORDERS")
fi
if [ ${#peers[@]} -gt 0 ]; then
    log "timing the peers"
    "${HF[@]}" --export-json $R/bench_peers.json "${peers[@]}"
fi
if [ "$HAVE_JQ" -eq 1 ]; then
    log "timing jq (optional peer; 3 runs, no warm-up: it is slow)"
    hyperfine --shell=none --style none --runs 3 --export-json $R/bench_peers_jq.json \
        -n jq "jq -n -f $B/peers/jq/count.jq $ORDERS"
fi

log "timing goal 5: start-up of a one-line program"
hyperfine --shell=none --style none --warmup 20 --runs 300 --export-json $R/startup.json \
    -n startup "$HQL run $B/one_line.hql"

# ---------------------------------------------------------------- report
note "env: load average (1, 5, 15 min) at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg) — on $(nproc) CPUs; anything near or above 1 means other work shared the machine"
note "env: hql $(git rev-parse --short HEAD 2>/dev/null || echo '?') (files changed under src/ in the working tree: $(git status --porcelain -- src 2>/dev/null | wc -l); binary sha256 $(sha256sum $HQL | cut -c1-12)), $(rustc --version)"
note "env: $(hyperfine --version), node $(node --version 2>/dev/null || echo absent), $($PY --version 2>/dev/null || echo 'python absent'), $(jq --version 2>/dev/null || echo 'jq absent')"
if [ "$HAVE_PY" -eq 1 ]; then
    note "env: python packages: $($B/.venv/bin/pip freeze 2>/dev/null | grep -iE '^(pydantic|pydantic.core|jsonschema.rs|fastjsonschema|pandas|pandera|pyarrow)==' | tr '\n' ' ')"
fi
[ "$HAVE_AJV" -eq 1 ] && note "env: ajv $(node -p 'require("./bench/peers/ajv/node_modules/ajv/package.json").version')"
exec 1>&3 3>&-
python3 $B/report.py $R $B/RESULTS.md
log "wrote $B/RESULTS.md"
log "the rich benchmark (bench/rich.sh)"
bash $B/rich.sh || die "bench/rich.sh"
if [ "$PEER_FAILED" -ne 0 ]; then
    die "some peers could not be installed or run (see the Notes in $B/RESULTS.md)"
fi
