#!/usr/bin/env python3
"""Events with distinct ids, for measuring `unique` (pure Python stdlib).

    python3 bench/gen_event_ids.py                                   # 5,000,000 lines
    python3 bench/gen_event_ids.py --records 1000 --out /tmp/e.jsonl
    python3 bench/gen_event_ids.py --repeat-every 10 --out /tmp/d.jsonl
    python3 bench/gen_event_ids.py --shuffle --out /tmp/s.jsonl

Line i (from 1) is `{"event_id": "ev-000000001", "kind": ..., "user": ...,
"amount": ...}`: every `event_id` distinct, so a `unique event_id` keeps one
key per line. With `--repeat-every K`, every K-th line takes the id of the
line before it instead, so exactly floor(N / K) lines are duplicates; the
number of valid records under bench/events_unique.hql is printed on stderr.
With `--shuffle`, the ids are those of the same file in a random order
(every other field as without it).
The same seed always gives the same file.
"""

import argparse
import os
import random
import sys

KINDS = ("click", "view", "buy", "share")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=5_000_000)
    p.add_argument("--out", default="bench/data/events-5m.jsonl")
    p.add_argument("--repeat-every", type=int, default=0)
    p.add_argument("--shuffle", action="store_true")
    a = p.parse_args()
    ids = None
    if a.shuffle:
        ids = list(range(1, a.records + 1))
        random.Random(20240702).shuffle(ids)
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    rng = random.Random(20240701)
    duplicates = 0
    with open(a.out, "w", encoding="ascii") as out:
        lines = []
        for i in range(1, a.records + 1):
            n = i
            if a.repeat_every and i % a.repeat_every == 0 and i > 1:
                n = i - 1
                duplicates += 1
            lines.append(
                '{"event_id":"ev-%09d","kind":"%s","user":"u%d","amount":%d}\n'
                % (
                    ids[n - 1] if ids else n,
                    KINDS[rng.randrange(4)],
                    rng.randrange(100000),
                    rng.randrange(10000),
                )
            )
            if len(lines) == 100_000:
                out.writelines(lines)
                lines.clear()
        out.writelines(lines)
    print(f"{a.out}: {a.records} lines, {a.records - duplicates} valid", file=sys.stderr)


if __name__ == "__main__":
    main()
