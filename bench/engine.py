#!/usr/bin/env python3
"""Two builds of hql side by side on every figure of bench/: a build from
before a change and one from after it, run in turns round after round.

    python3 bench/engine.py --before /path/to/old/hql [--after target/release/hql] [--rounds 7]
        [--only "rich count"]

The programs: the flat orders counted, reported and routed (one thread
and two), the orders as CSV counted, the rich events counted and routed,
a unique key over 1M events, and a SQLite table written. Each round runs
every program once with each build, in an order that turns round after
round, so that the machine's load falls on both alike. Prints a Markdown
table of the median wall time of each build and the median of the
rounds' own after/before ratios; the outputs of both builds must agree.
Generates missing data with bench/gen.py and bench/rich/gen.py.
"""

import argparse
import os
import statistics
import sys
import tempfile

from measure import ROOT, child, ensure, orders

DATA = "bench/data"


def data():
    """Make the data files the programs read, where missing."""
    orders(f"{DATA}/orders-1m.jsonl")
    orders(f"{DATA}/orders-1m.csv")
    ensure(f"{DATA}/events-200k.jsonl", [sys.executable, "bench/rich/gen.py"])
    events = f"{DATA}/events-1000000.jsonl"
    ensure(events, [sys.executable, "bench/gen_event_ids.py", "--records", "1000000", "--out", events])


def programs(work):
    """(label, program file, threads, folder to run in) of every figure."""
    unique = os.path.join(work, "unique.hql")
    with open(unique, "w", encoding="utf-8") as f:
        f.write(
            "type Event : DataContract = {\n    event_id: String\n    kind: \"click\" | \"view\" | \"buy\" | \"share\"\n"
            "    user: String\n    amount: Int\n    require amount >= 0\n    unique event_id\n}\n"
            f'source(file("{ROOT}/{DATA}/events-1000000.jsonl"), Json) | validate(Event) | oks() | count()\n'
        )
    sqlite = os.path.join(work, "sqlite")
    os.makedirs(sqlite, exist_ok=True)
    with open(os.path.join(sqlite, "hql.toml"), "w", encoding="utf-8") as f:
        f.write('[targets.warehouse]\nsqlite = "warehouse.db"\ntable = "orders"\n')
    write = os.path.join(sqlite, "write.hql")
    with open(write, "w", encoding="utf-8") as f:
        f.write(
            f'import "{ROOT}/bench/orders_contract.hql"\n'
            f'source(file("{ROOT}/{DATA}/orders-1m.jsonl"), Json) | validate(Order) | oks()'
            ' | map(o => {order_id: o.order_id, amount: o.amount, low: o.low, high: o.high}) | write("warehouse")\n'
        )
    return [
        ("flat count, 1 thread", "bench/orders.hql", 1, ROOT),
        ("flat count, 2 threads", "bench/orders.hql", 2, ROOT),
        ("flat report, 1 thread", "bench/orders_report.hql", 1, ROOT),
        ("flat route, 1 thread", "bench/orders_route.hql", 1, ROOT),
        ("flat route, 2 threads", "bench/orders_route.hql", 2, ROOT),
        ("CSV count, 1 thread", "bench/orders_csv.hql", 1, ROOT),
        ("rich count, 1 thread", "bench/rich/count.hql", 1, ROOT),
        ("rich route, 2 threads", "bench/rich/route.hql", 2, ROOT),
        ("unique key, 1 thread", unique, 1, ROOT),
        ("SQLite write, 1 thread", write, 1, sqlite),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", default=os.path.join(ROOT, "target/release/hql"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", action="append", default=[],
                    help="run only the figures whose label starts with this (repeatable)")
    a = ap.parse_args()
    data()
    work = tempfile.mkdtemp()
    rows = []
    for label, program, threads, folder in programs(work):
        if a.only and not any(label.startswith(o) for o in a.only):
            continue
        builds = [("before", os.path.abspath(a.before)), ("after", os.path.abspath(a.after))]
        walls = {"before": [], "after": []}
        outs = {}
        for r in range(a.rounds):
            for name, hql in builds if r % 2 == 0 else builds[::-1]:
                for stale in ["warehouse.db", "warehouse.db-journal"]:
                    if os.path.exists(os.path.join(folder, stale)):
                        os.remove(os.path.join(folder, stale))
                wall, _, _, out = child([hql, "run", "--threads", str(threads), program], cwd=folder)
                walls[name].append(wall)
                outs[name] = out
        if outs["before"] != outs["after"]:
            sys.exit(f"engine.py: {label}: the builds print differently")
        ratios = [x / y for x, y in zip(walls["after"], walls["before"])]
        rows.append((label, statistics.median(walls["before"]), statistics.median(walls["after"]), statistics.median(ratios)))
    print(f"{a.rounds} rounds in turns, medians of wall time")
    print()
    print("| program | before | after | rounds' after/before |")
    print("| --- | ---: | ---: | ---: |")
    for label, before, after, ratio in rows:
        print(f"| {label} | {before:.3f} s | {after:.3f} s | {ratio:.3f}× |")


if __name__ == "__main__":
    main()
