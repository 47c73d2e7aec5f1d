#!/usr/bin/env python3
"""Deterministic generator of the benchmark data (pure Python stdlib).

    python3 bench/gen.py                       # orders-1m.jsonl and wide-1m.jsonl
    python3 bench/gen.py --records 10000000 --out bench/data/orders-10m.jsonl
    python3 bench/gen.py --shape wide --records 1000 --out /tmp/w.jsonl

Every file is written with the same fixed seed per shape, so the first N
records of a larger file equal the N-record file. Next to each file a
`PATH.meta.json` records how many records are valid and how the invalid ones
are spread over the rule kinds; bench/run.sh checks every tool against it.

Orders: `order_id` string, `status` one of "open"/"shipped"/"cancelled",
`amount` number >= 0, optional nullable `customer_email` matching
^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$, integers `low` <= `high`, plus extra fields.
About 5% of the records break exactly one rule each.
"""

import argparse
import json
import os
import random
import sys

SEED = {"orders": 20240611, "wide": 20240612}
INVALID_RATE = 0.05
ORDER_DEFECTS = [
    "negative_amount",
    "low_gt_high",
    "bad_status",
    "bad_email",
    "missing_order_id",
    "wrong_type",
]
WIDE_DEFECTS = [
    "zero_qty",
    "negative_price",
    "missing_customer_name",
    "no_items",
    "tag_not_string",
    "bad_email",
]
STATUSES = ("open", "shipped", "cancelled")
BAD_STATUSES = ("pending", "Open", "SHIPPED", "refunded", "")
CHANNELS = ("web", "app", "store", "phone")
DOMAINS = ("example.com", "mail.example.org", "shop.example.net", "example.co.uk")
CITIES = ("Zurich", "Basel", "Bern", "Geneva", "Lausanne", "Lugano")
COUNTRIES = ("CH", "DE", "FR", "IT", "AT")
TAGS = ("gift", "priority", "fragile", "repeat", "promo", "b2b")


def money(cents):
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"


def good_email(rng, n):
    return f"user{n}@{DOMAINS[rng.randrange(len(DOMAINS))]}"


def bad_email(rng, n):
    k = rng.randrange(4)
    if k == 0:
        return f"user{n}.example.com"  # no @
    if k == 1:
        return f"user{n}@example"  # no dot in the domain
    if k == 2:
        return f"us er{n}@example.com"  # a space
    return f"user{n}@@example.com"  # two @


def timestamp(rng):
    return (
        f"2024-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T"
        f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}Z"
    )


def order_line(rng, i):
    defect = None
    if rng.random() < INVALID_RATE:
        defect = ORDER_DEFECTS[rng.randrange(len(ORDER_DEFECTS))]

    order_id = f'"ORD-{i:08d}"'
    status = f'"{STATUSES[rng.randrange(3)]}"'
    cents = rng.randrange(0, 250000)
    amount = money(cents) if rng.random() < 0.9 else str(cents // 100)  # Ints are numbers too
    low = rng.randrange(0, 500)
    high = low + rng.randrange(0, 500)
    e = rng.random()
    email = None  # absent
    if e < 0.6:
        email = f'"{good_email(rng, i)}"'
    elif e < 0.8:
        email = "null"

    if defect == "negative_amount":
        amount = money(-rng.randrange(1, 100000))
    elif defect == "low_gt_high":
        low, high = high + 1 + rng.randrange(50), low
    elif defect == "bad_status":
        status = f'"{BAD_STATUSES[rng.randrange(len(BAD_STATUSES))]}"'
    elif defect == "bad_email":
        email = f'"{bad_email(rng, i)}"'
    elif defect == "missing_order_id":
        order_id = None
    elif defect == "wrong_type":
        k = rng.randrange(4)
        if k == 0:
            amount = f'"{amount}"'  # number as a string
        elif k == 1:
            low = f'"{low}"'  # Int as a string
        elif k == 2:
            order_id = str(i)  # String as a number
        else:
            high = f"{high}.5"  # Float where an Int is required

    parts = []
    if order_id is not None:
        parts.append(f'"order_id":{order_id}')
    parts.append(f'"status":{status}')
    parts.append(f'"amount":{amount}')
    if email is not None:
        parts.append(f'"customer_email":{email}')
    parts.append(f'"low":{low}')
    parts.append(f'"high":{high}')
    parts.append(f'"channel":"{CHANNELS[rng.randrange(4)]}"')
    parts.append(f'"qty":{rng.randrange(1, 10)}')
    return "{" + ",".join(parts) + "}\n", defect


def wide_line(rng, i):
    defect = None
    if rng.random() < INVALID_RATE:
        defect = WIDE_DEFECTS[rng.randrange(len(WIDE_DEFECTS))]

    cust_id = rng.randrange(1, 400000)
    email = f'"{good_email(rng, cust_id)}"' if rng.random() < 0.7 else "null"
    if defect == "bad_email":
        email = f'"{bad_email(rng, cust_id)}"'
    name = f'"name":"Customer {cust_id}",' if defect != "missing_customer_name" else ""
    address = (
        f'{{"city":"{CITIES[rng.randrange(len(CITIES))]}",'
        f'"country":"{COUNTRIES[rng.randrange(len(COUNTRIES))]}","zip":"{rng.randrange(1000, 9999)}"}}'
    )
    customer = f'{{"id":"C-{cust_id:06d}",{name}"email":{email},"address":{address}}}'

    n_items = 0 if defect == "no_items" else rng.randrange(1, 5)
    bad_item = rng.randrange(n_items) if n_items else -1
    items = []
    for k in range(n_items):
        qty = rng.randrange(1, 10)
        price = rng.randrange(0, 20000)
        if k == bad_item and defect == "zero_qty":
            qty = 0
        if k == bad_item and defect == "negative_price":
            price = -rng.randrange(1, 20000)
        sku = f"{chr(65 + rng.randrange(26))}{chr(65 + rng.randrange(26))}{chr(65 + rng.randrange(26))}-{rng.randrange(10000):04d}"
        items.append(f'{{"sku":"{sku}","qty":{qty},"price":{money(price)}}}')

    tags = [f'"{TAGS[rng.randrange(len(TAGS))]}"' for _ in range(rng.randrange(0, 4))]
    if defect == "tag_not_string":
        tags.insert(rng.randrange(len(tags) + 1), str(rng.randrange(100)))

    line = (
        f'{{"order_id":"W-{i:08d}","placed_at":"{timestamp(rng)}","customer":{customer},'
        f'"items":[{",".join(items)}],"tags":[{",".join(tags)}],"channel":"{CHANNELS[rng.randrange(4)]}"}}\n'
    )
    return line, defect


def generate(shape, records, out):
    rng = random.Random(SEED[shape])
    make = order_line if shape == "orders" else wide_line
    kinds = ORDER_DEFECTS if shape == "orders" else WIDE_DEFECTS
    by_kind = {k: 0 for k in kinds}
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp"
    size = 0
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        buf = []
        for i in range(1, records + 1):
            line, defect = make(rng, i)
            if defect is not None:
                by_kind[defect] += 1
            buf.append(line)
            if len(buf) == 20000:
                chunk = "".join(buf)
                size += len(chunk)
                f.write(chunk)
                buf = []
        chunk = "".join(buf)
        size += len(chunk)
        f.write(chunk)
    os.replace(tmp, out)
    invalid = sum(by_kind.values())
    meta = {
        "shape": shape,
        "records": records,
        "valid": records - invalid,
        "invalid": invalid,
        "invalid_by_kind": by_kind,
        "bytes": size,
        "seed": SEED[shape],
    }
    with open(out + ".meta.json", "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    return meta


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, help="number of records (with --out)")
    ap.add_argument("--out", help="output path (with --records)")
    ap.add_argument("--shape", choices=("orders", "wide"), default="orders")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    if (args.records is None) != (args.out is None):
        ap.error("--records and --out go together")
    if args.out:
        jobs = [(args.shape, args.records, args.out)]
    else:
        data = os.path.join(here, "data")
        jobs = [
            ("orders", 1_000_000, os.path.join(data, "orders-1m.jsonl")),
            ("wide", 1_000_000, os.path.join(data, "wide-1m.jsonl")),
        ]
    for shape, records, out in jobs:
        meta = generate(shape, records, out)
        if not args.quiet:
            print(
                f"{out}: {meta['records']} records, {meta['valid']} valid, "
                f"{meta['bytes'] / 1e6:.1f} MB, invalid by kind {meta['invalid_by_kind']}",
                file=sys.stderr,
            )


if __name__ == "__main__":
    main()
