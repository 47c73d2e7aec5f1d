#!/usr/bin/env python3
"""Deterministic generator of the benchmark data (pure Python stdlib).

    python3 bench/gen.py                       # orders-1m.jsonl and wide-1m.jsonl
    python3 bench/gen.py --records 10000000 --out bench/data/orders-10m.jsonl
    python3 bench/gen.py --shape wide --records 1000 --out /tmp/w.jsonl
    python3 bench/gen.py --records 1000000 --out bench/data/orders-1m.csv   # CSV (--format csv)

Every file is written with the same fixed seed per shape, so the first N
records of a larger file equal the N-record file. Next to each file a
`PATH.meta.json` records how many records are valid and how the invalid ones
are spread over the rule kinds; bench/run.sh checks every tool against it.

Orders: `order_id` string, `status` one of "open"/"shipped"/"cancelled",
`amount` number >= 0, optional nullable `customer_email` matching
^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$, integers `low` <= `high`, plus extra fields.
About 5% of the records break exactly one rule each.

CSV (orders only): the same orders from the same seed, one row each after
the header `order_id,status,amount,customer_email,low,high,channel,qty`;
absent and null are an empty cell. The JSON type errors, which text cells
cannot carry, become cells that do not convert to the declared type (see
`order_row`), so the CSV has the same valid records and the same counts as
the JSON Lines file; its meta also says `"format": "csv"` and how the
`wrong_type` records split over the CSV variants.
"""

import argparse
import csv
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
ABSENT = object()  # a field the record does not have (None is JSON null)
CSV_COLUMNS = ("order_id", "status", "amount", "customer_email", "low", "high", "channel", "qty")
CSV_WRONG_TYPE = ("amount_decimal_comma", "low_float_text", "amount_currency_suffix", "high_fraction")


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


def order_record(rng, i):
    """The i-th order's values, drawn from `rng`, and its defect: what both
    the JSON Lines and the CSV form write. `wrong` is the variant (0-3) of a
    `wrong_type` defect, else None."""
    defect = None
    if rng.random() < INVALID_RATE:
        defect = ORDER_DEFECTS[rng.randrange(len(ORDER_DEFECTS))]

    rec = {"order_id": f"ORD-{i:08d}", "status": STATUSES[rng.randrange(3)]}
    cents = rng.randrange(0, 250000)
    rec["amount"] = money(cents) if rng.random() < 0.9 else str(cents // 100)  # Ints are numbers too
    low = rng.randrange(0, 500)
    high = low + rng.randrange(0, 500)
    e = rng.random()
    email = ABSENT
    if e < 0.6:
        email = good_email(rng, i)
    elif e < 0.8:
        email = None

    wrong = None
    if defect == "negative_amount":
        rec["amount"] = money(-rng.randrange(1, 100000))
    elif defect == "low_gt_high":
        low, high = high + 1 + rng.randrange(50), low
    elif defect == "bad_status":
        rec["status"] = BAD_STATUSES[rng.randrange(len(BAD_STATUSES))]
    elif defect == "bad_email":
        email = bad_email(rng, i)
    elif defect == "missing_order_id":
        rec["order_id"] = ABSENT
    elif defect == "wrong_type":
        wrong = rng.randrange(4)
    rec["customer_email"] = email
    rec["low"] = low
    rec["high"] = high
    rec["channel"] = CHANNELS[rng.randrange(4)]
    rec["qty"] = rng.randrange(1, 10)
    return rec, defect, wrong


def order_json(rec, i, wrong):
    """One JSON Lines line. `wrong`: 0 the amount as a string, 1 `low` as a
    string, 2 `order_id` as a number, 3 a fraction in `high`."""
    order_id = str(i) if wrong == 2 else rec["order_id"]
    amount = f'"{rec["amount"]}"' if wrong == 0 else rec["amount"]
    low = f'"{rec["low"]}"' if wrong == 1 else rec["low"]
    high = f'{rec["high"]}.5' if wrong == 3 else rec["high"]
    email = rec["customer_email"]
    parts = []
    if order_id is not ABSENT:
        parts.append(f'"order_id":{order_id}' if wrong == 2 else f'"order_id":"{order_id}"')
    parts.append(f'"status":"{rec["status"]}"')
    parts.append(f'"amount":{amount}')
    if email is not ABSENT:
        parts.append('"customer_email":null' if email is None else f'"customer_email":"{email}"')
    parts.append(f'"low":{low}')
    parts.append(f'"high":{high}')
    parts.append(f'"channel":"{rec["channel"]}"')
    parts.append(f'"qty":{rec["qty"]}')
    return "{" + ",".join(parts) + "}\n"


def order_line(rng, i):
    rec, defect, wrong = order_record(rng, i)
    return order_json(rec, i, wrong), defect


def order_row(rng, i):
    """The same order as `order_line`, as the cells of one CSV row (see
    CSV_COLUMNS). Absent and null are both an empty cell. A CSV cell is text,
    so a JSON type error has no CSV form as such; each `wrong_type` variant
    becomes a cell that does not convert to the column's declared type, so
    the record stays invalid (under the same kind) and the valid records and
    counts equal the JSON file's:
      0 amount "12.34" (a JSON string)  -> decimal comma: 12,34 (1234,00 for a whole amount)
      1 low "12" (a JSON string)        -> 12.0 (a Float's text where an Int is declared)
      2 order_id 123 (a JSON number)    -> the text 123, a valid String; the record's
                                           type error moves to amount: "12.34 CHF"
      3 high 12.5                       -> 12.5 (as in JSON)
    A bad status "" becomes an empty cell: status absent. Returns (cells,
    defect, variant name or None)."""
    rec, defect, wrong = order_record(rng, i)
    cells = [
        "" if rec[c] is ABSENT or rec[c] is None else str(rec[c]) for c in CSV_COLUMNS
    ]
    if wrong == 0:
        amount = rec["amount"]
        cells[2] = amount.replace(".", ",") if "." in amount else amount + ",00"
    elif wrong == 1:
        cells[4] = f'{rec["low"]}.0'
    elif wrong == 2:
        cells[0] = str(i)
        cells[2] = f'{rec["amount"]} CHF'
    elif wrong == 3:
        cells[5] = f'{rec["high"]}.5'
    return cells, defect, None if wrong is None else CSV_WRONG_TYPE[wrong]


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


def write_jsonl(f, make, rng, records, by_kind):
    """Write the JSON Lines file; returns its size."""
    size = 0
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
    return size


def write_csv(f, rng, records, by_kind, by_variant):
    """Write the orders as CSV: a header row, then one row an order (RFC 4180
    quoting where a cell needs it, "\n" line ends)."""
    out = csv.writer(f, lineterminator="\n")
    out.writerow(CSV_COLUMNS)
    rows = []
    for i in range(1, records + 1):
        cells, defect, variant = order_row(rng, i)
        if defect is not None:
            by_kind[defect] += 1
        if variant is not None:
            by_variant[variant] += 1
        rows.append(cells)
        if len(rows) == 20000:
            out.writerows(rows)
            rows = []
    out.writerows(rows)


def generate(shape, records, out, fmt="json"):
    rng = random.Random(SEED[shape])
    make = order_line if shape == "orders" else wide_line
    kinds = ORDER_DEFECTS if shape == "orders" else WIDE_DEFECTS
    by_kind = {k: 0 for k in kinds}
    by_variant = {v: 0 for v in CSV_WRONG_TYPE}
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        if fmt == "csv":
            write_csv(f, rng, records, by_kind, by_variant)
        else:
            size = write_jsonl(f, make, rng, records, by_kind)
    if fmt == "csv":
        size = os.path.getsize(tmp)
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
    if fmt == "csv":
        meta["format"] = "csv"
        meta["wrong_type_by_variant"] = by_variant
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
    ap.add_argument(
        "--format",
        choices=("json", "csv"),
        help="json (JSON Lines) or csv (orders only); default: csv when --out ends in .csv, else json",
    )
    ap.add_argument("--csv", action="store_const", const="csv", dest="format", help="same as --format csv")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    if (args.records is None) != (args.out is None):
        ap.error("--records and --out go together")
    fmt = args.format or ("csv" if args.out and args.out.endswith(".csv") else "json")
    if fmt == "csv" and args.shape != "orders":
        ap.error("--format csv writes the orders shape only")
    if fmt == "csv" and not args.out:
        ap.error("--format csv needs --records and --out")
    if args.out:
        jobs = [(args.shape, args.records, args.out)]
    else:
        data = os.path.join(here, "data")
        jobs = [
            ("orders", 1_000_000, os.path.join(data, "orders-1m.jsonl")),
            ("wide", 1_000_000, os.path.join(data, "wide-1m.jsonl")),
        ]
    for shape, records, out in jobs:
        meta = generate(shape, records, out, fmt)
        if not args.quiet:
            print(
                f"{out}: {meta['records']} records, {meta['valid']} valid, "
                f"{meta['bytes'] / 1e6:.1f} MB, invalid by kind {meta['invalid_by_kind']}",
                file=sys.stderr,
            )


if __name__ == "__main__":
    main()
