#!/usr/bin/env bash
# Standard-library types: the cost of `validate(T)` per value, on one core.
#
#   bench/stdlib.sh                      # the hql built from this tree
#   BEFORE=/path/to/old/hql bench/stdlib.sh   # and an older build beside it
#   RUNS=3 bench/stdlib.sh               # fewer runs a measurement (default 5)
#
# Writes 1,000,000 JSON Lines values of each type (about 3% invalid) to
# bench/data/stdlib/, then times, on CPU 0 with one thread,
#   source(file(F), Json) | validate(T) | oks() | count()
# for each type, and the same over the type's base (`String`, or `Float`
# for `Percent`: reading and decoding only). Prints, per type, the medians
# of 5 runs (CPU seconds) and the cost per value above the base, in
# nanoseconds.
set -euo pipefail
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DATA="$ROOT/bench/data/stdlib"
N=1000000
RUNS=${RUNS:-5}
mkdir -p "$DATA"

if [ -z "${AFTER:-}" ]; then
    cargo build --release --quiet --bin hql
    AFTER="${CARGO_TARGET_DIR:-$ROOT/target}/release/hql"
fi

# One file of N values for each type; a valid value most of the time, and
# a near miss every 32nd line.
python3 - "$DATA" "$N" <<'EOF'
import json, os, random, sys
out, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(14)
hexd = "0123456789abcdef"
def timestamp(bad):
    y, m, d = rng.randint(1970, 2030), rng.randint(1, 12), rng.randint(1, 28)
    if bad:
        m, d = 2, 30
    frac = rng.choice(["", ".5", ".123456"])
    zone = rng.choice(["Z", "+05:30", "-08:00"])
    hms = f"{rng.randint(0, 23):02}:{rng.randint(0, 59):02}:{rng.randint(0, 59):02}"
    return f"{y:04}-{m:02}-{d:02}T{hms}{frac}{zone}"
def date(bad):
    return f"{rng.randint(1970, 2030):04}-02-{30 if bad else rng.randint(1, 28):02}"
def email(bad):
    user = "".join(rng.choice("abcdefghij.") for _ in range(8)).strip(".") or "x"
    return f"{user}@example" if bad else f"{user}@mail.example.org"
def url(bad):
    return "https:///x" if bad else f"https://host{rng.randint(0, 999)}.example.org:8443/p/{rng.randint(0, 9999)}?q=1"
def uuid(bad):
    h = "".join(rng.choice(hexd) for _ in range(32))
    u = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return u.replace("-", "", 1) if bad else u
COUNTRIES = ["CH", "GB", "US", "DE", "FR", "JP", "BR", "IN", "ZA", "AU"]
CURRENCIES = ["CHF", "GBP", "USD", "EUR", "JPY", "BRL", "INR", "ZAR", "AUD"]
def country(bad):
    return "UK" if bad else rng.choice(COUNTRIES)
def currency(bad):
    return "HRK" if bad else rng.choice(CURRENCIES)
def nonempty(bad):
    return "   " if bad else rng.choice(["wren", " barn owl ", "kestrel"])
def percent(bad):
    return 100.5 if bad else rng.choice([0, 100, 37.5, rng.randint(0, 100)])
kinds = {"Timestamp": timestamp, "Date": date, "Email": email, "Url": url, "Uuid": uuid,
         "CountryCode": country, "CurrencyCode": currency, "NonEmpty": nonempty, "Percent": percent}
for name, make in kinds.items():
    path = os.path.join(out, f"{name}.jsonl")
    if os.path.exists(path):
        continue
    with open(path, "w") as f:
        for i in range(n):
            f.write(json.dumps(make(i % 32 == 31)) + "\n")
EOF

# Seconds (user + system) of the median of RUNS runs of `hql` over a program.
time_one() {
    local hql=$1 program=$2 times=()
    for _ in $(seq "$RUNS"); do
        local t
        t=$( { /usr/bin/env time -f '%U %S' taskset -c 0 "$hql" run --threads 1 "$program" >/dev/null; } 2>&1 | tail -1 | awk '{print $1 + $2}')
        times+=("$t")
    done
    printf '%s\n' "${times[@]}" | sort -g | sed -n "$(((RUNS + 1) / 2))p"
}

# Per type: seconds, and nanoseconds a value above validating the same
# file against the type's base (`String`, or `Float` for `Percent`).
bench_binary() {
    local hql=$1 label=$2 prog
    prog=$(mktemp --suffix .hql)
    for t in Timestamp Date Email Url Uuid CountryCode CurrencyCode NonEmpty Percent; do
        local base_type=String base s
        [ "$t" = Percent ] && base_type=Float
        printf 'type Base = %s\nsource(file("%s"), Json) | validate(Base) | oks() | count()\n' \
            "$base_type" "$DATA/$t.jsonl" >"$prog"
        base=$(time_one "$hql" "$prog")
        echo "source(file(\"$DATA/$t.jsonl\"), Json) | validate($t) | oks() | count()" >"$prog"
        s=$(time_one "$hql" "$prog")
        printf '%-8s %-13s %6.2f s (%-6s %5.2f s) %7.0f ns/value\n' "$label" "$t" "$s" \
            "$base_type" "$base" "$(echo "($s - $base) * 1000000000 / $N" | bc -l)"
    done
    rm -f "$prog"
}

if [ -n "${BEFORE:-}" ]; then
    bench_binary "$BEFORE" before
fi
bench_binary "$AFTER" after
