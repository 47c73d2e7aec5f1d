#!/usr/bin/env python3
"""What reading a compressed source costs, beside the plain file.

    python3 bench/compressed.py                 # 7 rounds, 1,000,000 orders
    python3 bench/compressed.py --rounds 11 --hql target/release/hql

`validate(Order) | oks() | count()` of the benchmark's 1M orders
(bench/data/orders-1m.jsonl, made by bench/gen.py when missing) as the
plain file, gzip (`.jsonl.gz`) and zstd (`.jsonl.zst`), with `--threads 1`
and with the default threads. The three run in turns, round after round,
in an order turned each round, so the machine's load falls on all alike.
A compressed file is decompressed on a thread of its own and cannot be
split, so on the default threads the plain file is read in chunks and the
compressed ones are not.

Prints a Markdown table: the median wall time and CPU time (user +
system) of each, and the median of the rounds' own ratios to the plain
file. The compressed copies are written with Python's gzip (level 6) and,
when the `zstd` command is installed, `zstd -3`. Pure Python.
"""

import argparse
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from measure import hql_run, orders

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORDERS = "bench/data/orders-1m.jsonl"

PROGRAM = """import "{contract}"

source(file("{data}"), Json) | validate(Order) | oks() | count()
"""


def run(hql, program, threads):
    """One run: (wall seconds, CPU seconds, stdout)."""
    wall, cpu, _, out = hql_run(hql, program, threads)
    return wall, cpu, out


def compressed_copies(work):
    """The orders as .jsonl.gz and, where `zstd` is installed, .jsonl.zst."""
    copies = {}
    gz = os.path.join(work, "orders-1m.jsonl.gz")
    with open(ORDERS, "rb") as src, gzip.open(gz, "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    copies["gzip"] = gz
    if shutil.which("zstd"):
        zst = os.path.join(work, "orders-1m.jsonl.zst")
        subprocess.run(["zstd", "-q", "-3", "-f", ORDERS, "-o", zst], check=True)
        copies["zstd"] = zst
    else:
        print("compressed.py: no `zstd` command, so no zstd row", file=sys.stderr)
    return copies


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--hql", default=os.path.join(ROOT, "target/release/hql"))
    a = ap.parse_args()
    os.chdir(ROOT)
    orders(ORDERS)
    work = tempfile.mkdtemp()
    files = {"plain": os.path.abspath(ORDERS), **compressed_copies(work)}
    contract = os.path.join(ROOT, "bench/orders_contract.hql")
    programs = {}
    for name, data in files.items():
        programs[name] = os.path.join(work, f"{name}.hql")
        with open(programs[name], "w", encoding="utf-8") as f:
            f.write(PROGRAM.format(contract=contract, data=data))
    sizes = {name: os.path.getsize(path) for name, path in files.items()}
    rows = []
    for threads in (1, 0):
        figures = {name: [] for name in programs}
        outs = set()
        names = list(programs)
        for r in range(a.rounds):
            turn = r % len(names)
            for name in names[turn:] + names[:turn]:
                wall, cpu, out = run(a.hql, programs[name], threads)
                figures[name].append((wall, cpu))
                outs.add(out)
        if len(outs) != 1:
            sys.exit("compressed.py: the files count differently")
        for name in programs:
            ratios = [f[0] / p[0] for f, p in zip(figures[name], figures["plain"])]
            rows.append(
                (
                    "1" if threads else "default",
                    name,
                    sizes[name] / 1e6,
                    statistics.median(f[0] for f in figures[name]),
                    statistics.median(f[1] for f in figures[name]),
                    statistics.median(ratios),
                )
            )
    shutil.rmtree(work)
    print(f"{a.rounds} rounds in turns, medians; `oks() | count()` of 1M orders")
    print()
    print("| threads | file | size (MB) | wall | CPU | rounds' wall ratio to plain |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for threads, name, size, wall, cpu, ratio in rows:
        print(f"| {threads} | {name} | {size:.1f} | {wall:.2f} s | {cpu:.2f} s | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
