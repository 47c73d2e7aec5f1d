#!/usr/bin/env python3
"""Write the rich benchmark's section of bench/RESULTS.md from what
bench/rich.sh measured (RESULTS_DIR: counts.tsv, hyperfine.json, notes.txt).

    python3 bench/rich/report.py RESULTS_DIR EVENTS.jsonl bench/RESULTS.md

The section lies between two marker lines; it replaces the section already
there, or is appended, so the rest of the file (written by bench/report.py)
is kept as it is.
"""

import datetime
import importlib.util
import json
import statistics
import os
import sys

BEGIN = "<!-- rich benchmark: begin (bench/rich.sh writes this section) -->"
END = "<!-- rich benchmark: end -->"
LABELS = {
    "hql_count": "HQL, `validate(Event) \\| oks() \\| count()`",
    "hql_report": "HQL, `validate(Event) \\| report()`",
    "rich": "hand-written Rust, `serde_json::Value` per line + `regex` + calendar",
    "pydantic": "pydantic 2 (`validate_json`, `AwareDatetime`, `Literal`, validators)",
    "ajv": "ajv 8 + ajv-formats (`date-time`, `email`), Node",
    "jsonschema_rs": "jsonschema-rs (Python binding), `json.loads` per line",
}


def flat_report():
    """bench/report.py, which describes the machine and writes sections."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report.py")
    spec = importlib.util.spec_from_file_location("flat_report", path)
    flat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(flat)
    return flat


def section(rdir, events):
    with open(os.path.join(rdir, "hyperfine.json"), encoding="utf-8") as f:
        timed = json.load(f)
    medians = {r["command"]: r["median"] for r in timed["results"]}
    counts = {}
    with open(os.path.join(rdir, "counts.tsv"), encoding="utf-8") as f:
        for line in f:
            name, got, _expected, rss = line.rstrip("\n").split("\t")
            counts[name] = (int(got), int(rss))
    with open(events + ".counts.json", encoding="utf-8") as f:
        meta = json.load(f)
    with open(os.path.join(rdir, "notes.txt"), encoding="utf-8") as f:
        notes = [line.strip() for line in f if line.strip()]
    size = os.path.getsize(events)
    # When the timings were taken, also when the section is written again later.
    measured = datetime.datetime.fromtimestamp(
        os.path.getmtime(os.path.join(rdir, "hyperfine.json")), datetime.timezone.utc
    )
    base = medians["rich"]
    lines = [
        BEGIN,
        "## Rich benchmark: nested events with the standard library's types",
        "",
        "Written by `bench/rich.sh` (do not edit by hand; re-run the script).",
        "",
        f"- Date: {measured:%Y-%m-%d %H:%M} UTC",
        f"- Machine: {flat_report().machine_line()}",
    ]
    lines += [f"- {n}" for n in notes]
    defects = ", ".join(f"{k} {v:,}" for k, v in meta["defects"].items())
    lines += [
        f"- Data: `{os.path.basename(events)}` from `bench/rich/gen.py`: {meta['records']:,} events, "
        f"{size / 1e6:.1f} MB ({size / meta['records']:.0f} bytes each), {meta['valid']:,} valid; "
        f"invalid by defect: {defects}",
        "",
        "Task: validate every event against `bench/rich/event.hql` (a closed `User` with `Email` and",
        "`CountryCode`, a `Timestamp`, a literal union, a `List[Item]` of closed records with a regex",
        "and a `qty >= 1` rule, two cross-field rules) and print the number of valid events; every",
        "tool does the same checks. One core (`taskset -c 0`, HQL with `--threads 1`), whole process;",
        f"wall time is the median of {timed['rounds']} rounds (after one warm-up round) that each run",
        "every tool once, in an order turned by one each round (`bench/rounds.py`).",
        "Peak RSS is `/usr/bin/time -v` of one separate run, which also checked each tool's count",
        "against the generator's.",
        "",
        "| tool | wall s | × Rust baseline | events/s | peak RSS | valid count |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, label in LABELS.items():
        t = medians[name]
        got, rss = counts[name]
        lines.append(
            f"| {label} | {t:.3f} | {t / base:.2f} | {meta['records'] / t:,.0f} | {rss / 1024:.1f} MiB | {got:,} |"
        )
    lines += [
        "",
        f"HQL `count()` is {medians['hql_count'] / base:.2f}× the hand-written baseline and "
        f"{medians['hql_count'] / medians['pydantic']:.2f}× pydantic; `report()` "
        f"{medians['hql_report'] / base:.2f}× and {medians['hql_report'] / medians['pydantic']:.2f}×.",
    ]
    threads = os.path.join(rdir, "threads.json")
    if os.path.exists(threads):
        with open(threads, encoding="utf-8") as f:
            timed = json.load(f)
        spread = {r["command"]: r["median"] for r in timed["results"]}
        times = {r["command"]: r["times"] for r in timed["results"]}
        lines += [
            "",
            "HQL on one thread and on two (`--threads 1` and `2`, no `taskset`): medians of "
            f"{timed['rounds']} rounds",
            "that each run all six once; the last column is the median of the rounds' own ratios,",
            "and their range:",
            "",
            "| pipeline | 1 thread s | 2 threads s | 2 ÷ 1 | 2 ÷ 1 by round (range) |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for what, label in [
            ("count", "`validate(Event) \\| oks() \\| count()`"),
            ("report", "`validate(Event) \\| report()`"),
            ("route", "`validate(Event) \\| route(ok: …, err: …)` to two files"),
        ]:
            one, two = spread[f"{what}_1"], spread[f"{what}_2"]
            ratios = [b / a for a, b in zip(times[f"{what}_1"], times[f"{what}_2"])]
            by_round = f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})"
            lines.append(f"| {label} | {one:.3f} | {two:.3f} | {two / one:.2f} | {by_round} |")
    lines.append(END)
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: report.py RESULTS_DIR EVENTS.jsonl RESULTS.md")
    rdir, events, out = sys.argv[1:]
    flat_report().write_section(out, BEGIN, END, section(rdir, events))


if __name__ == "__main__":
    main()
