#!/usr/bin/env python3
"""Validate + count of the benchmark's 1M orders from Parquet, side by
side with the same orders as JSON Lines and with two peers.

    python3 bench/parquet.py                 # 5 rounds
    python3 bench/parquet.py --rounds 9 --hql target/release/hql

Each round runs every entry once, in an order that turns round after
round, so that the machine's load falls on all alike:

- `hql run` of `validate(Order) | oks() | count()` over
  bench/data/orders-1m.jsonl and over bench/data/orders-1m.parquet, on
  one thread and on two;
- pyarrow + pandera: the file read into pandas, the same rules checked
  with every failure collected, the valid rows counted;
- polars: the file read, the same rules as one filter, the rows counted.

Every entry must print the same count. Prints a Markdown table of the
median wall time, CPU time (user + system) and peak RSS of each, from
os.wait4. The Parquet file is written by bench/parquet_gen.py with
pyarrow, in row groups of 65,536 rows. Python packages come from the
interpreter given by --python (default: target/sql-venv's, which
`pip install pyarrow pandas pandera polars` readies).
"""

import argparse
import os
import statistics
import sys
import tempfile

from measure import child, ensure, orders

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JSONL = "bench/data/orders-1m.jsonl"
PARQUET = "bench/data/orders-1m.parquet"


def run(args):
    """One run: (wall seconds, CPU seconds, peak RSS in KiB, stdout)."""
    wall, cpu, rss, out = child(args)
    return wall, cpu, rss, out.decode().strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--hql", default=os.path.join(ROOT, "target/release/hql"))
    ap.add_argument("--python", default=os.path.join(ROOT, "target/sql-venv/bin/python"))
    a = ap.parse_args()
    os.chdir(ROOT)
    orders(JSONL)
    ensure(PARQUET, [a.python, "bench/parquet_gen.py", JSONL, PARQUET])
    work = tempfile.mkdtemp()
    programs = {}
    for kind, path, fmt in [("jsonl", JSONL, "Json"), ("parquet", PARQUET, "Parquet")]:
        programs[kind] = os.path.join(work, f"count-{kind}.hql")
        with open(programs[kind], "w", encoding="utf-8") as f:
            f.write(f'import "{ROOT}/bench/orders_contract.hql"\n')
            f.write(f'source(file("{ROOT}/{path}"), {fmt}) | validate(Order) | oks() | count()\n')
    entries = [
        ("hql, JSON Lines, 1 thread", [a.hql, "run", "--threads", "1", programs["jsonl"]]),
        ("hql, Parquet, 1 thread", [a.hql, "run", "--threads", "1", programs["parquet"]]),
        ("hql, JSON Lines, 2 threads", [a.hql, "run", "--threads", "2", programs["jsonl"]]),
        ("hql, Parquet, 2 threads", [a.hql, "run", "--threads", "2", programs["parquet"]]),
        ("pyarrow + pandera", [a.python, "bench/parquet_gen.py", "--pandera", PARQUET]),
        ("polars", [a.python, "bench/parquet_gen.py", "--polars", PARQUET]),
    ]
    figures = {label: [] for label, _ in entries}
    counts = {}
    for r in range(a.rounds):
        turn = r % len(entries)
        for label, args in entries[turn:] + entries[:turn]:
            wall, cpu, rss, out = run(args)
            figures[label].append((wall, cpu, rss))
            counts[label] = out
    if len(set(counts.values())) != 1:
        sys.exit(f"parquet.py: the entries count differently: {counts}")
    print(f"{a.rounds} rounds in turns, medians; every entry counted {counts[entries[0][0]]} valid orders")
    print()
    print("| entry | wall | CPU | peak RSS (MiB) |")
    print("| --- | ---: | ---: | ---: |")
    for label, _ in entries:
        med = lambda i: statistics.median(f[i] for f in figures[label])
        print(f"| {label} | {med(0):.2f} s | {med(1):.2f} s | {med(2) / 1024:.1f} |")


if __name__ == "__main__":
    main()
