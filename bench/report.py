#!/usr/bin/env python3
"""Turn the raw measurements of bench/run.sh into bench/RESULTS.md.

    python3 bench/report.py RESULTS_DIR OUT.md

RESULTS_DIR holds what run.sh wrote: hyperfine exports (`bench_*.json`,
`pairs/round*.json`, `startup.json`), `counts.tsv` (one verification run of
every tool under /usr/bin/time -v) and `notes.txt` (one note a line).
"""

import datetime
import glob
import json
import os
import re
import platform
import statistics
import sys

LABELS = {
    "hql_count": "HQL count path, 1 core (`taskset -c 0`)",
    "hql_report": "HQL `report()` path, 1 core",
    "hql_threads": "HQL count path, `--threads 2`, 2 cores",
    "hql_route": "HQL `route()` to clean.jsonl + dead.jsonl, 1 core",
    "hql_wide": "HQL wide nested shape (wide-1m), 1 core",
    "value": "Rust `serde_json::Value` + hand checks, 1 core",
    "typed": "Rust serde derive struct + hand checks, 1 core",
    "ajv": "ajv 8 (Node), schema compiled once",
    "pydantic": "pydantic 2 `TypeAdapter.validate_json`",
    "jsonschema_rs": "jsonschema-rs (Python) + `json.loads`",
    "fastjsonschema": "fastjsonschema + `json.loads`",
    "jq": "jq (optional)",
}
ORDER = list(LABELS)
# The same orders as CSV (orders-1m.csv), in a table of their own.
CSV_LABELS = {
    "hql_csv": "HQL CSV count path, 1 core (`taskset -c 0`, `--threads 1`)",
    "pydantic_csv": "pydantic 2 + `csv` module, `validate_python` per row",
    "pandera": "pandas `read_csv` (pyarrow engine) + pandera, lazy",
}
MIB = 1024.0


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def hyperfine_results(rdir):
    """key -> hyperfine result, the first invocation that measured the key wins."""
    out = {}
    for path in sorted(glob.glob(os.path.join(rdir, "bench_*.json"))):
        for r in load_json(path)["results"]:
            out.setdefault(r["command"], r)
    return out


def read_counts(rdir):
    rows = {}
    path = os.path.join(rdir, "counts.tsv")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                key, count, expected, rss_kb, records = line.rstrip("\n").split("\t")
                rows[key] = {
                    "count": count,
                    "expected": expected,
                    "rss_kb": int(rss_kb),
                    "records": int(records),
                }
    return rows


def machine():
    model = "unknown"
    mem = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                    break
    except OSError:
        pass
    return os.cpu_count(), model, mem


def machine_line():
    """The machine as the sections of RESULTS.md describe it."""
    ncpu, model, mem = machine()
    return f"{ncpu} CPUs (`nproc`), {model}, {mem} memory, Linux {platform.release()}"


def write_section(path, begin, end, section):
    """Put `section`, which starts with the marker line `begin` and ends
    with `end`, in the file at `path` in place of the section between the
    same markers, or at its end the first time; the rest is kept."""
    text = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + section + rest.split(end, 1)[1].lstrip("\n")
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def verdict(ok):
    return "**met**" if ok else "**not met**"


def table(add, labels, hf, counts):
    """One row a tool of `labels` that was timed or counted."""
    add("| tool | wall s | records/s | peak RSS | valid count |")
    add("| --- | ---: | ---: | ---: | ---: |")
    for key, label in labels.items():
        r = hf.get(key)
        c = counts.get(key)
        if r is None and c is None:
            continue
        records = c["records"] if c else 1_000_000
        if r is not None:
            med = r["median"]
            runs = len(r["times"])
            wall = f"{med:.3f}" + ("" if runs == 5 else f" ({runs} runs)")
            rate = f"{records / med:,.0f}"
        else:
            wall, rate = "not timed", "–"
        rss = f"{c['rss_kb'] / MIB:.1f} MiB" if c else "–"
        cnt = c["count"] if c else "–"
        add(f"| {label} | {wall} | {rate} | {rss} | {cnt} |")


def main():
    rdir, out_path = sys.argv[1], sys.argv[2]
    hf = hyperfine_results(rdir)
    counts = read_counts(rdir)
    notes = []
    notes_path = os.path.join(rdir, "notes.txt")
    if os.path.exists(notes_path):
        with open(notes_path, encoding="utf-8") as f:
            notes = [n.rstrip("\n") for n in f if n.strip()]

    lines = []
    add = lines.append
    ncpu, model, mem = machine()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    add("# HQL benchmark results")
    add("")
    add("Written by `bench/run.sh` (do not edit by hand; re-run the script).")
    add("")
    add(f"- Date: {now}")
    add(f"- Machine: {ncpu} CPUs (`nproc`), {model}, {mem} memory, Linux {platform.release()}")
    for n in notes:
        if n.startswith("env: "):
            add(f"- {n[5:]}")
    meta_path = os.path.join(rdir, "..", "orders-1m.jsonl.meta.json")
    if os.path.exists(meta_path):
        m = load_json(meta_path)
        add(
            f"- Data: {m['records']:,} records, {m['bytes'] / 1e6:.1f} MB, {m['valid']:,} valid; "
            f"invalid by kind: " + ", ".join(f"{k} {v:,}" for k, v in m["invalid_by_kind"].items())
        )
    add("")
    add("Task: validate `bench/data/orders-1m.jsonl` (1,000,000 JSON Lines orders, ~5% invalid) and")
    add("print the number of valid records; whole process, wall time is the median of hyperfine runs")
    add("(`--warmup 1 --runs 5` unless noted). Peak RSS is `/usr/bin/time -v` of one separate run.")
    add("Every tool's count was checked against the generator's expected count before timing.")
    add("")
    table(add, LABELS, hf, counts)
    add("")
    add("HQL and the two Rust baselines run pinned to CPU 0 with `taskset -c 0`; the peers")
    add("(Node, Python, jq) run unpinned, as they would be used. JSON Schema cannot express")
    add("`low <= high`: the ajv, jsonschema-rs and fastjsonschema peers check it in code after")
    add("validation. pydantic runs in strict mode (no coercion, as HQL) with a `model_validator`.")
    if "hql_route" in hf or "hql_route" in counts:
        add("The `route()` row writes the valid orders to `bench/data/clean.jsonl` and the failure")
        add("records to `bench/data/dead.jsonl`; their line counts were checked after the run.")
    add("")
    csv_meta_path = os.path.join(rdir, "..", "orders-1m.csv.meta.json")
    if any(k in hf or k in counts for k in CSV_LABELS):
        add("### CSV input")
        add("")
        if os.path.exists(csv_meta_path):
            m = load_json(csv_meta_path)
            variants = ", ".join(f"{k} {v:,}" for k, v in m.get("wrong_type_by_variant", {}).items())
            add(f"The same orders as CSV, `bench/data/orders-1m.csv` ({m['bytes'] / 1e6:.1f} MB, "
                f"{m['valid']:,} valid; `bench/gen.py --format csv`):")
            add("a header row, one row an order, empty cells for absent and null values. The JSON type")
            add("errors, which CSV text cannot carry, are cells that do not convert to the column's type")
            add(f"(wrong_type: {variants}).")
            add("")
        table(add, CSV_LABELS, hf, counts)
        add("")
        add("The peers convert cells as HQL's CSV decoding does (an empty cell is absent, or null")
        add("where the type admits it; an Int is an optional sign and digits, a Float a decimal or")
        add("exponent number; anything else stays text and fails), then validate: pydantic strict, the")
        add("model of the JSON peer; pandera a DataFrameSchema with the same checks, rows counted")
        add("valid when no failure case names them. HQL is pinned to CPU 0, the peers run unpinned.")
        add("")

    # Goals.
    add("## Goals")
    add("")
    add("| goal | measured | target | verdict |")
    add("| --- | --- | --- | --- |")

    # Goals 1-3: rounds that run each command once, alternating.
    rounds = []
    for path in sorted(glob.glob(os.path.join(rdir, "pairs", "round*.json"))):
        rounds.append({r["command"]: r["times"][0] for r in load_json(path)["results"]})

    def paired(num, den):
        """Median ratio num/den over the rounds that ran both, and the medians."""
        both = [r for r in rounds if num in r and den in r]
        if not both:
            return None
        return (
            statistics.median(r[num] / r[den] for r in both),
            statistics.median(r[num] for r in both),
            statistics.median(r[den] for r in both),
            len(both),
        )

    def back_to_back(fname, num, den):
        path = os.path.join(rdir, fname)
        if not os.path.exists(path):
            return ""
        res = {r["command"]: r["median"] for r in load_json(path)["results"]}
        if num not in res or den not in res:
            return ""
        return f"; one hyperfine invocation (5 runs each, back to back): {res[num] / res[den]:.2f}×"

    hql_t = [r["hql_count"] for r in rounds if "hql_count" in r]
    goals = (
        ("1. count path on one core vs `serde_json::Value` program", "hql_count", "value",
         "HQL", "Value", "bench_goal1.json", "hql_count", "value", 1.0),
        ("2. `--threads 2` on 2 cores vs 1 core", "hql_threads", "hql_count",
         "2 threads", "1 thread", "bench_goal2.json", "hql_threads", "hql_count_1core", 0.6),
        ("3. `report()` path vs count path", "hql_report", "hql_count",
         "report", "count", "bench_goal3.json", "hql_report", "hql_count_g3", 1.3),
    )
    for title, num, den, num_name, den_name, fname, bnum, bden, target in goals:
        got = paired(num, den)
        if got is None:
            add(f"| {title} | not measured | ≤ {target}× | **not measured** |")
            continue
        ratio, tn, td, n = got
        add(
            f"| {title} | {ratio:.2f}× (median of {n} alternating rounds; {num_name} "
            f"{tn:.3f} s, {den_name} {td:.3f} s{back_to_back(fname, bnum, bden)}) | "
            f"≤ {target}× | {verdict(ratio <= target)} |"
        )

    # Goal 4: peak RSS.
    limit = 20 * MIB
    rss_parts, rss_ok, missing10 = [], True, True
    for key, what in (
        ("hql_count", "1M count"),
        ("hql_report", "1M report"),
        ("hql_threads", "1M --threads 2"),
        ("hql_count_10m", "10M count"),
    ):
        c = counts.get(key)
        if c:
            rss_parts.append(f"{what} {c['rss_kb'] / MIB:.1f} MiB")
            rss_ok = rss_ok and c["rss_kb"] <= limit
            if key == "hql_count_10m":
                missing10 = False
    g4 = ", ".join(rss_parts) or "not measured"
    if missing10:
        g4 += "; 10M not measured (run `bench/run.sh --full`)"
    add(f"| 4. peak RSS of HQL, 1M and 10M records | {g4} | ≤ 20 MiB | "
        f"{verdict(rss_ok) if not missing10 else ('**met for 1M only**' if rss_ok else '**not met**')} |")

    # Goal 5: start-up.
    st = os.path.join(rdir, "startup.json")
    if os.path.exists(st):
        r = load_json(st)["results"][0]
        ms = r["median"] * 1000
        add(
            f"| 5. `hql run` of a one-line program | {ms:.2f} ms median ({len(r['times'])} runs, "
            f"mean {r['mean'] * 1000:.2f} ms) | ≤ 10 ms | {verdict(ms <= 10)} |"
        )
    else:
        add("| 5. `hql run` of a one-line program | not measured | ≤ 10 ms | **not measured** |")

    # Goals 6 and 7: like goals 1-3, from the alternating rounds.
    got = paired("hql_route", "hql_count")
    if got is None:
        add("| 6. `route()` path vs count path | not measured | ≤ 1.5× | **not measured** |")
    else:
        ratio, tn, td, n = got
        add(
            f"| 6. `route()` path vs count path | {ratio:.2f}× (median of {n} alternating rounds; "
            f"route {tn:.3f} s, count {td:.3f} s"
            f"{back_to_back('bench_route.json', 'hql_route', 'hql_count_g6')}) | ≤ 1.5× | "
            f"{verdict(ratio <= 1.5)} |"
        )
    got = paired("hql_csv", "hql_count")
    target7 = "≤ 1.3×; faster than pydantic + csv and pandas + pandera"
    if got is None:
        add(f"| 7. CSV count path vs JSON Lines count path, and the CSV peers | not measured | {target7} | "
            "**not measured** |")
    else:
        ratio, tn, td, n = got
        hql_csv = hf.get("hql_csv")
        peers = [(name, hf.get(key)) for key, name in (("pydantic_csv", "pydantic + csv"),
                                                     ("pandera", "pandas + pandera"))]
        peer_parts, faster = [], hql_csv is not None
        for name, r in peers:
            if r is None or hql_csv is None:
                peer_parts.append(f"{name} not timed")
                faster = False
            else:
                peer_parts.append(f"{name} {r['median']:.3f} s ({r['median'] / hql_csv['median']:.1f}× HQL's)")
                faster = faster and hql_csv["median"] < r["median"]
        hql_part = f"HQL CSV {hql_csv['median']:.3f} s" if hql_csv else "HQL CSV not timed"
        add(
            f"| 7. CSV count path vs JSON Lines count path, and the CSV peers | {ratio:.2f}× (median of "
            f"{n} alternating rounds; CSV {tn:.3f} s, JSON Lines {td:.3f} s"
            f"{back_to_back('bench_csv.json', 'hql_csv', 'hql_count_g7')}); {hql_part}, "
            f"{', '.join(peer_parts)} (5 runs each) | {target7} | {verdict(ratio <= 1.3 and faster)} |"
        )
    add("")

    # How far apart the separate measurements of the same HQL command are.
    same = []
    for name, fname in (("hql_count", "bench_goal1.json"), ("hql_count_1core", "bench_goal2.json"),
                        ("hql_count_g3", "bench_goal3.json"), ("hql_count_g6", "bench_route.json"),
                        ("hql_count_g7", "bench_csv.json")):
        path = os.path.join(rdir, fname)
        if os.path.exists(path):
            same += [r["median"] for r in load_json(path)["results"] if r["command"] == name]
    if hql_t:
        same.append(statistics.median(hql_t))
    if len(same) > 1:
        spread = (max(same) - min(same)) / min(same) * 100
        notes.append(
            f"The HQL count path (same command) was measured in {len(same)} separate hyperfine "
            f"invocations: medians {min(same):.3f}–{max(same):.3f} s, a spread of {spread:.0f}%. "
            "Read differences smaller than that as noise."
        )
    other = [n for n in notes if not n.startswith("env: ")]
    if other:
        add("## Notes")
        add("")
        for n in other:
            add(f"- {n}")
        add("")
    # The profile-guided pass is written by hand beside the script.
    profile = os.path.join(os.path.dirname(os.path.abspath(__file__)), "PROFILE.md")
    if os.path.exists(profile):
        with open(profile, encoding="utf-8") as f:
            lines.extend(f.read().rstrip("\n").split("\n"))
        add("")
    add("Reproduce: `bench/run.sh` from anywhere (`--full` also generates the 10M-record file, ~1.4 GB,")
    add("for the memory check). Raw hyperfine exports are in `bench/data/results/`.")

    # Sections other scripts write (bench/rich.sh, bench/sql.sh) are kept
    # as they were, after this one.
    kept = []
    if os.path.exists(out_path):
        with open(out_path, encoding="utf-8") as f:
            old = f.read()
        marked = r"<!-- (\w+) benchmark: begin .*?<!-- \1 benchmark: end -->"
        kept = [m.group(0) for m in re.finditer(marked, old, re.S)]
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
        for section in kept:
            f.write("\n" + section + "\n")


if __name__ == "__main__":
    main()
