# Helpers shared by the bench scripts (sourced; SCRIPT names the
# script in its messages).
log() { echo "$SCRIPT: $*" >&2; }
die() { echo "$SCRIPT: FAILED: $*" >&2; exit 1; }
# Run a command quietly; on failure show its output and stop.
quiet() {
    local out
    out=$(mktemp)
    if ! "$@" >"$out" 2>&1; then
        cat "$out" >&2
        rm -f "$out"
        die "$*"
    fi
    rm -f "$out"
}
