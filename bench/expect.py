#!/usr/bin/env python3
"""What expectations cost (language.md 4.11), side by side with the same
work without them.

    python3 bench/expect.py                 # 7 rounds, 1,000,000 records
    python3 bench/expect.py --rounds 11 --hql target/release/hql

Two pairs, each run in turns, round after round, so that the machine's
load falls on both alike:

- `report()` of the benchmark's 1M orders (`orders_report.hql`) and the
  same with four counter expectations (`orders_expect.hql`: rows, a
  failure share, missing, nulls), on one thread and on the default
  threads;
- `oks() | count()` of 1M events with `unique event_id` and with
  `expect duplicates(event_id) == 0` instead, on one thread: the key store
  they share, by time and by peak memory.

Prints a Markdown table: the median wall time, CPU time (user + system)
and peak RSS of each program, and the median of the rounds' own ratios.
Generates the data with bench/gen.py and bench/gen_event_ids.py when it
is missing. Pure Python (the per-child figures come from os.wait4).
"""

import argparse
import os
import statistics
import sys
import tempfile

from measure import ensure, hql_run, orders

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORDERS = "bench/data/orders-1m.jsonl"
EVENTS = "bench/data/events-1000000.jsonl"

EVENT_TYPE = """type Event : DataContract = {{
    event_id: String
    kind: "click" | "view" | "buy" | "share"
    user: String
    amount: Int
    require amount >= 0
{extra}
}}
source(file("{events}"), Json) | validate(Event) | oks() | count()
"""


def run(hql, program, threads):
    """One run: (wall seconds, CPU seconds, peak RSS in KiB, stdout)."""
    return hql_run(hql, program, threads)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--hql", default=os.path.join(ROOT, "target/release/hql"))
    a = ap.parse_args()
    os.chdir(ROOT)
    orders(ORDERS)
    ensure(EVENTS, [sys.executable, "bench/gen_event_ids.py", "--records", "1000000", "--out", EVENTS])
    work = tempfile.mkdtemp()
    unique = os.path.join(work, "unique.hql")
    duplicates = os.path.join(work, "duplicates.hql")
    with open(unique, "w", encoding="utf-8") as f:
        f.write(EVENT_TYPE.format(extra="    unique event_id", events=EVENTS))
    with open(duplicates, "w", encoding="utf-8") as f:
        f.write(EVENT_TYPE.format(extra="    expect duplicates(event_id) == 0", events=EVENTS))
    pairs = [
        ("report(), one thread", ("bench/orders_report.hql", "bench/orders_expect.hql"), 1),
        ("report(), default threads", ("bench/orders_report.hql", "bench/orders_expect.hql"), 0),
        ("unique vs duplicates, one thread", (unique, duplicates), 1),
    ]
    rows = []
    for label, (before, after), threads in pairs:
        figures = {before: [], after: []}
        outs = {}
        for r in range(a.rounds):
            order = (before, after) if r % 2 == 0 else (after, before)
            for program in order:
                wall, cpu, rss, out = run(a.hql, program, threads)
                figures[program].append((wall, cpu, rss))
                outs[program] = out
        if "report" in label and outs[before] != outs[after]:
            sys.exit(f"expect.py: {label}: the two programs print differently")
        med = lambda program, i: statistics.median(f[i] for f in figures[program])
        ratios = [a_[0] / b_[0] for a_, b_ in zip(figures[after], figures[before])]
        rows.append(
            (
                label,
                med(before, 0), med(after, 0),
                med(before, 1), med(after, 1),
                med(before, 2) / 1024, med(after, 2) / 1024,
                statistics.median(ratios),
            )
        )
    print(f"{a.rounds} rounds in turns, medians; `without` is the program without expectations")
    print()
    print("| pair | wall without | wall with | CPU without | CPU with | RSS without (MiB) | RSS with (MiB) | rounds' wall ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, wb, wa, cb, ca, mb, ma, ratio in rows:
        print(f"| {label} | {wb:.2f} s | {wa:.2f} s | {cb:.2f} s | {ca:.2f} s | {mb:.1f} | {ma:.1f} | {ratio:.3f}x |")


if __name__ == "__main__":
    main()
