#!/usr/bin/env python3
"""Write bench/memory.sh's figures as the memory section of bench/RESULTS.md.

    python3 bench/memory_section.py REPORT.md bench/RESULTS.md COMMIT

REPORT.md is what memory.sh printed; the section between the memory
markers is replaced, or added at the end the first time
(`report.write_section`).
"""

import datetime
import sys

import report

BEGIN = "<!-- memory benchmark: begin (bench/memory.sh writes this section) -->"
END = "<!-- memory benchmark: end -->"


def main():
    printed, results, commit = sys.argv[1:4]
    now = datetime.datetime.now(datetime.timezone.utc)
    with open(printed, encoding="utf-8") as f:
        figures = f.read().strip()
    section = "\n".join(
        [
            BEGIN,
            "## Memory, unique keys and start-up",
            "",
            "Written by `bench/memory.sh` (do not edit by hand; re-run the script).",
            "",
            f"- Date: {now:%Y-%m-%d %H:%M} UTC",
            f"- Machine: {report.machine_line()}",
            f"- hql {commit}; CPU seconds (user + system) on one thread, medians of "
            "three runs (for the counts with and without the key, of the rounds run in turns below); "
            "`unique event_id` over ids in order and over the same ids shuffled",
            "",
            figures,
            END,
            "",
        ]
    )
    report.write_section(results, BEGIN, END, section)


if __name__ == "__main__":
    main()
