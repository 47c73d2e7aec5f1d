#!/usr/bin/env bash
# Install the peers the benchmark compares HQL with, where they are missing:
# ajv with npm (bench/peers/ajv/node_modules, from package-lock.json) and the
# Python peers with pip in a virtual environment (bench/.venv). Used by
# bench/run.sh and by the count-agreement test (tests/bench_counts.rs).
# Exits non-zero, saying which, when one cannot be installed.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
failed=0

if [ ! -f "$B/peers/ajv/node_modules/ajv/package.json" ] ||
    [ ! -f "$B/peers/ajv/node_modules/ajv-formats/package.json" ]; then
    if command -v npm >/dev/null; then
        if ! (cd "$B/peers/ajv" && npm ci --no-audit --no-fund --silent) >&2; then
            echo "install.sh: ajv: \`npm ci\` failed" >&2
            failed=1
        fi
    else
        echo "install.sh: ajv: node/npm not found" >&2
        failed=1
    fi
fi

REQ="$B/peers/python/requirements.txt"
STAMP="$B/.venv/.requirements.sha256"
want=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ ! -x "$B/.venv/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
    if { [ -x "$B/.venv/bin/python" ] || python3 -m venv "$B/.venv"; } >&2 &&
        "$B/.venv/bin/pip" install -q --disable-pip-version-check -r "$REQ" >&2; then
        echo "$want" >"$STAMP"
    else
        echo "install.sh: python peers: venv/pip failed" >&2
        failed=1
    fi
fi
exit $failed
