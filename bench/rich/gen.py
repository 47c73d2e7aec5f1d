#!/usr/bin/env python3
"""Deterministic generator of the rich benchmark's nested events (stdlib only).

    python3 bench/rich/gen.py                                  # bench/data/events-200k.jsonl
    python3 bench/rich/gen.py --count 5000 --out /tmp/ev.jsonl --seed 7

One JSON object a line, about 260 bytes each:

    {"event_id": "ev-000000001",
     "user": {"email": "...", "country": "CH"},      closed record
     "ts": "2024-03-01T09:30:12.250+01:00",           RFC 3339, offset required
     "type": "click" | "view" | "cart" | "purchase",
     "items": [{"sku": "ABC-1234", "qty": 2, "price": 1999}, ...],   prices in cents
     "total": 3998,                                   the sum of qty * price
     "page": "/cart"}                                 an extra field (the event is open)

Valid events have 1 to 3 items. About 4% of the events carry exactly one
defect, spread evenly over DEFECTS (missing field, wrong type, null, bad
e-mail, unknown country, a date that is not in the calendar, a malformed
timestamp, a literal outside the union, a bad event id or sku, qty 0, a
purchase without items, a total that is not the sum, an extra field in a
closed record, a line that does not decode). Each defect is one that every
tool of the benchmark refuses: the tools' formats differ on corner cases
(leap seconds, offsets without a colon, a space for `T`), and the generator
never writes those, valid or not.

Next to the data, `PATH.counts.json` says how many events there are, how
many are valid and invalid, and how the invalid ones split over the defects.
The same seed and count always give the same bytes; the first N events of a
larger file equal the N-event file.
"""

import argparse
import json
import os
import random
import sys

SEED = 20240301
DEFECT_RATE = 0.04
TYPES = ("click", "view", "cart", "purchase")
# Codes the generator draws from; every one is in the standard library's list.
COUNTRIES = ("CH", "DE", "FR", "IT", "AT", "GB", "US", "NL", "SE", "JP", "BR", "IN", "ZA", "AX")
BAD_COUNTRIES = ("UK", "EU", "XK", "gb", "CHE", "")
DOMAINS = ("example.com", "mail.example.org", "shop.example.net", "example.co.uk")
FIRST = ("ada", "alan", "grace", "edsger", "barbara", "donald", "frances", "ken", "radia", "tim")
LAST = ("lovelace", "turing", "hopper", "dijkstra", "liskov", "knuth", "allen", "thompson", "perlman")
PAGES = ("/", "/search", "/cart", "/checkout", "/product", "/help", "/account")
MISSING_FIELDS = ("event_id", "user", "ts", "type", "items", "total", "user.email", "user.country", "item.sku", "item.qty")
DEFECTS = (
    "missing_field",
    "wrong_type",
    "null_field",
    "bad_email",
    "unknown_country",
    "bad_calendar_date",
    "malformed_timestamp",
    "type_outside_union",
    "bad_event_id",
    "bad_sku",
    "zero_qty",
    "purchase_without_items",
    "total_not_sum",
    "extra_field_in_closed_record",
    "undecodable_line",
)


def sku(rng):
    letters = "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(3))
    return f"{letters}-{rng.randrange(10000):04d}"


def item(rng):
    return {"sku": sku(rng), "qty": rng.randint(1, 5), "price": rng.randint(99, 49999)}


def total(items):
    return sum(i["qty"] * i["price"] for i in items)


def email(rng, n):
    return f"{rng.choice(FIRST)}.{rng.choice(LAST)}{n % 1000}@{rng.choice(DOMAINS)}"


def days_in_month(year, month):
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def timestamp(rng, year=None, month=None, day=None):
    year = year or rng.randint(2020, 2025)
    month = month or rng.randint(1, 12)
    day = day or rng.randint(1, days_in_month(year, month))
    clock = f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}"
    frac = rng.choice(("", "", ".250", ".123456"))
    zone = rng.choice(("Z", "Z", "+01:00", "-05:00", "+05:30"))
    return f"{year:04d}-{month:02d}-{day:02d}T{clock}{frac}{zone}"


def event(rng, n):
    kind = rng.choice(TYPES)
    items = [item(rng) for _ in range(rng.randint(1, 3))]
    return {
        "event_id": f"ev-{n:09d}",
        "user": {"email": email(rng, n), "country": rng.choice(COUNTRIES)},
        "ts": timestamp(rng, year=2024, month=2, day=29) if n % 97 == 0 else timestamp(rng),
        "type": kind,
        "items": items,
        "total": total(items),
        "page": rng.choice(PAGES),
    }


def break_event(rng, ev, defect):
    """Give `ev` exactly one defect; returns the line to write (a str, or bytes
    for a line that does not decode)."""
    if defect == "missing_field":
        field = rng.choice(MISSING_FIELDS)
        if field.startswith("user."):
            del ev["user"][field[5:]]
        elif field.startswith("item."):
            del rng.choice(ev["items"])[field[5:]]
        else:
            del ev[field]
    elif defect == "wrong_type":
        k = rng.randrange(6)
        if k == 0:
            ev["total"] = str(ev["total"])
        elif k == 1:
            ev["event_id"] = int(ev["event_id"][3:])
        elif k == 2:
            ev["user"] = [ev["user"]["email"], ev["user"]["country"]]
        elif k == 3:
            rng.choice(ev["items"])["qty"] = "2"
        elif k == 4:
            ev["items"] = ev["items"][0]
        else:
            it = rng.choice(ev["items"])
            # A fraction: not an Int in any tool (a whole number like 5.0 is
            # an integer to JSON Schema, so none is written).
            it["price"] = it["price"] + 0.5
            ev["total"] = total(ev["items"])
    elif defect == "null_field":
        k = rng.randrange(3)
        if k == 0:
            ev["ts"] = None
        elif k == 1:
            ev["user"]["email"] = None
        else:
            rng.choice(ev["items"])["sku"] = None
    elif defect == "bad_email":
        name = ev["user"]["email"].split("@")[0]
        ev["user"]["email"] = rng.choice(
            (f"{name}.example.com", f"{name}@example", f"{name}@@example.com", f"{name} x@example.com", "@example.com")
        )
    elif defect == "unknown_country":
        ev["user"]["country"] = rng.choice(BAD_COUNTRIES)
    elif defect == "bad_calendar_date":
        year, month, day = rng.choice(((2023, 2, 30), (2023, 2, 29), (2025, 4, 31), (2021, 6, 31), (2022, 11, 31), (2100, 2, 29)))
        # The day does not exist; build the rest of the timestamp around it.
        good = timestamp(rng, year=year, month=month, day=1)
        ev["ts"] = f"{year:04d}-{month:02d}-{day:02d}" + good[10:]
    elif defect == "malformed_timestamp":
        good = ev["ts"]
        date = good[:10]
        ev["ts"] = rng.choice(
            (
                f"{date}T09:30:00",  # no offset
                f"{date}T25:10:00Z",  # hour 25
                f"{date}T09:61:00Z",  # minute 61
                date.replace("-", "/") + "T09:30:00Z",
                f"{date}T9:30:00Z",
                "yesterday",
                date,
            )
        )
    elif defect == "type_outside_union":
        ev["type"] = rng.choice(("Click", "purchased", "refund", "", "VIEW"))
    elif defect == "bad_event_id":
        ev["event_id"] = rng.choice((ev["event_id"][:-1], "EV" + ev["event_id"][2:], ev["event_id"] + "x", ""))
    elif defect == "bad_sku":
        it = rng.choice(ev["items"])
        it["sku"] = rng.choice((it["sku"].lower(), it["sku"].replace("-", ""), it["sku"][1:] + "5", "ABC-12"))
    elif defect == "zero_qty":
        it = rng.choice(ev["items"])
        it["qty"] = rng.choice((0, -1))
        ev["total"] = total(ev["items"])
    elif defect == "purchase_without_items":
        ev["type"] = "purchase"
        ev["items"] = []
        ev["total"] = 0
    elif defect == "total_not_sum":
        ev["total"] += rng.choice((1, -1, 100))
    elif defect == "extra_field_in_closed_record":
        if rng.randrange(2):
            ev["user"]["phone"] = "+41 44 000 00 00"
        else:
            rng.choice(ev["items"])["discount"] = 100
    elif defect == "undecodable_line":
        text = json.dumps(ev, separators=(",", ":"))
        k = rng.randrange(4)
        if k == 0:
            return text[: rng.randrange(10, len(text) - 10)]  # cut short
        if k == 1:
            return text + "}"
        if k == 2:
            return "event " + ev["event_id"]
        return b"\xff\xfe" + text.encode()  # not UTF-8, outside any string
    else:
        raise ValueError(defect)
    return json.dumps(ev, separators=(",", ":"))


def generate(out, count, seed):
    rng = random.Random(seed)
    defects = {d: 0 for d in DEFECTS}
    valid = 0
    with open(out, "wb") as f:
        for n in range(1, count + 1):
            ev = event(rng, n)
            if rng.random() < DEFECT_RATE:
                defect = DEFECTS[rng.randrange(len(DEFECTS))]
                defects[defect] += 1
                line = break_event(rng, ev, defect)
            else:
                valid += 1
                line = json.dumps(ev, separators=(",", ":"))
            f.write(line if isinstance(line, bytes) else line.encode())
            f.write(b"\n")
    counts = {
        "records": count,
        "valid": valid,
        "invalid": count - valid,
        "seed": seed,
        "defects": defects,
    }
    with open(out + ".counts.json", "w", encoding="utf-8") as f:
        json.dump(counts, f, indent=2)
        f.write("\n")
    return counts


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--count", type=int, default=200_000, help="number of events (default 200000)")
    p.add_argument("--seed", type=int, default=SEED, help=f"random seed (default {SEED})")
    p.add_argument("--out", default=None, help="output file (default bench/data/events-200k.jsonl)")
    p.add_argument("--quiet", action="store_true", help="print nothing")
    args = p.parse_args()
    if args.count < 1:
        p.error("--count must be at least 1")
    out = args.out
    if out is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        os.makedirs(os.path.join(root, "data"), exist_ok=True)
        out = os.path.join(root, "data", "events-200k.jsonl")
    counts = generate(out, args.count, args.seed)
    if not args.quiet:
        print(f"{out}: {counts['records']} events, {counts['valid']} valid, {counts['invalid']} invalid", file=sys.stderr)


if __name__ == "__main__":
    main()
