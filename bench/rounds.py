#!/usr/bin/env python3
"""Merge the exports of hyperfine rounds into one export.

    python3 bench/rounds.py OUT.json ROUND.json...

Each round is a `hyperfine --runs 1 --export-json` of every command once.
Run in rounds, a burst of load on the machine, or its speed drifting over a
minute, falls on every command alike, where hyperfine's own runs of one
command back to back would give it to that command alone. OUT.json has
hyperfine's shape (`results`, each with `command`, `times`, `median`,
`mean`) so the reports read it as they read hyperfine's, and `rounds`.
"""

import json
import statistics
import sys


def merge(paths):
    times = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for result in json.load(f)["results"]:
                times.setdefault(result["command"], []).extend(result["times"])
    return {
        "rounds": len(paths),
        "results": [
            {
                "command": command,
                "times": ts,
                "median": statistics.median(ts),
                "mean": statistics.fmean(ts),
            }
            for command, ts in times.items()
        ],
    }


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: rounds.py OUT.json ROUND.json...")
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(merge(sys.argv[2:]), f, indent=1)


if __name__ == "__main__":
    main()
