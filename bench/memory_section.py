#!/usr/bin/env python3
"""Write bench/memory.sh's figures as the memory section of bench/RESULTS.md.

    python3 bench/memory_section.py REPORT.md bench/RESULTS.md COMMIT

REPORT.md is what memory.sh printed; the section between the memory
markers is replaced, or added at the end the first time.
"""

import datetime
import os
import platform
import sys

BEGIN = "<!-- memory benchmark: begin"
END = "<!-- memory benchmark: end -->"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    report, results, commit = sys.argv[1:4]
    now = datetime.datetime.now(datetime.timezone.utc)
    section = "\n".join(
        [
            BEGIN + " (bench/memory.sh writes this section) -->",
            "## Memory, unique keys and start-up",
            "",
            "Written by `bench/memory.sh` (do not edit by hand; re-run the script).",
            "",
            f"- Date: {now:%Y-%m-%d %H:%M} UTC",
            f"- Machine: {os.cpu_count()} CPUs (`nproc`), {cpu_model()}, "
            f"{platform.system()} {platform.release()}",
            f"- hql {commit}; CPU seconds (user + system) on one thread, medians of "
            "three runs (seven, in turns, for the counts with and without the key); "
            "`unique event_id` over ids in order and over the same ids shuffled",
            "",
            open(report).read().strip(),
            END,
            "",
        ]
    )
    text = open(results).read() if os.path.exists(results) else ""
    if BEGIN in text:
        head, rest = text.split(BEGIN, 1)
        text = head + section + rest.split(END, 1)[1].lstrip("\n")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(results, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
