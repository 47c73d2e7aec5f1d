#!/usr/bin/env python3
"""Two builds of hql side by side: each of bench/'s programs (and a few
pipelines written here) run by the old build and the new in alternating
rounds on the same machine, so that the machine's drift falls on both
alike. Prints a Markdown table of the medians (wall clock) and the ratio
new / old, and checks that both builds print the same.

    python3 bench/compare.py OLD_HQL NEW_HQL [--rounds 7]

Run from the repository root, after generating the data:

    python3 bench/gen.py --records 1000000 --out bench/data/orders-1m.jsonl
    python3 bench/gen.py --records 1000000 --out bench/data/orders-1m.csv --format csv
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

# Programs written here go to bench/data/, beside the data.
CONTRACT = 'import "../orders_contract.hql"\n'
SOURCE = 'source(file("bench/data/orders-1m.jsonl"), Json) | validate(Order)'

# (name, program text or file, threads)
CASES = [
    ("count, flat", "bench/orders.hql"),
    ("report", "bench/orders_report.hql"),
    ("route", "bench/orders_route.hql"),
    ("CSV count", "bench/orders_csv.hql"),
    ("errs | map, printed", CONTRACT + SOURCE + " | errs() | map(e => e.origin.line) | count()\n"),
    ("oks | filter | count", CONTRACT + SOURCE + " | oks() | filter(o => o.amount > 2.0) | count()\n"),
]


def program_file(text_or_path, scratch):
    if text_or_path.endswith(".hql") and "\n" not in text_or_path:
        return text_or_path
    path = os.path.join(scratch, f"compare-{len(text_or_path)}.hql")
    with open(path, "w") as f:
        f.write(text_or_path)
    return path


def timed(hql, program, threads):
    start = time.perf_counter()
    out = subprocess.run(
        [hql, "run", "--threads", str(threads), program],
        capture_output=True,
        env={**os.environ, "HQL_PROGRESS": "0"},
    )
    elapsed = time.perf_counter() - start
    if out.returncode not in (0, 1):
        sys.exit(f"{hql} {program}: exit {out.returncode}\n{out.stderr.decode()}")
    return elapsed, out.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", help="only the pipelines whose name holds this")
    args = parser.parse_args()
    scratch = "bench/data"
    print("| pipeline | threads | old (s) | new (s) | new / old |")
    print("| --- | --- | --- | --- | --- |")
    for name, case in CASES:
        if args.only and args.only not in name:
            continue
        program = program_file(case, scratch)
        for threads in (1, 2):
            times = {"old": [], "new": []}
            outputs = {}
            for r in range(args.rounds):
                order = ("old", "new") if r % 2 == 0 else ("new", "old")
                for which in order:
                    hql = args.old if which == "old" else args.new
                    t, out = timed(hql, program, threads)
                    times[which].append(t)
                    outputs[which] = out
            if outputs["old"] != outputs["new"]:
                sys.exit(f"{name}: the builds print differently")
            old, new = (statistics.median(times[w]) for w in ("old", "new"))
            print(f"| {name} | {threads} | {old:.3f} | {new:.3f} | {new / old:.3f} |", flush=True)


if __name__ == "__main__":
    main()
