"""Write the Parquet files `tests/parquet.rs` reads, with pyarrow.

Run it from anywhere with a Python that has pyarrow:

    python3 tests/data/parquet/make.py

The files are kept in the repository, so that `cargo test` reads them
without Python; run this again only to change them. Each `orders*` file
has a JSON Lines twin with the same records, which the tests read the
same contracts over and compare.
"""

import datetime as dt
import decimal
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
UTC = dt.timezone.utc


def path(name):
    return os.path.join(HERE, name)


# ---------------------------------------------------------------- every type

TYPES = pa.schema(
    [
        ("i8", pa.int8()),
        ("i16", pa.int16()),
        ("i32", pa.int32()),
        ("i64", pa.int64()),
        ("u32", pa.uint32()),
        ("u64", pa.uint64()),
        ("f32", pa.float32()),
        ("f64", pa.float64()),
        ("price", pa.decimal128(9, 2)),
        ("big", pa.decimal128(38, 10)),
        ("name", pa.string()),
        ("flag", pa.bool_()),
        ("day", pa.date32()),
        ("at_ms", pa.timestamp("ms", tz="UTC")),
        ("at_us", pa.timestamp("us")),
        ("at_ns", pa.timestamp("ns", tz="UTC")),
        ("at_s", pa.timestamp("s", tz="UTC")),
        ("tags", pa.list_(pa.string())),
        ("point", pa.struct([("x", pa.int64()), ("label", pa.string())])),
        ("attrs", pa.map_(pa.string(), pa.int64())),
        ("items", pa.list_(pa.struct([("sku", pa.string()), ("qty", pa.int32())]))),
        ("matrix", pa.list_(pa.list_(pa.int64()))),
    ]
)

TYPE_ROWS = [
    {
        "i8": -8,
        "i16": 1600,
        "i32": -320000,
        "i64": 6400000000,
        "u32": 4000000000,
        "u64": 18446744073709551615,
        "f32": 0.1,
        "f64": 2.5,
        "price": decimal.Decimal("12.30"),
        "big": decimal.Decimal("1234567890123456789012345678.0123456789"),
        "name": "Ada",
        "flag": True,
        "day": dt.date(2024, 2, 29),
        "at_ms": dt.datetime(2024, 2, 29, 13, 45, 0, 120000, tzinfo=UTC),
        "at_us": dt.datetime(2024, 2, 29, 13, 45, 0, 123456),
        "at_ns": dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC),
        "at_s": dt.datetime(2000, 1, 1, tzinfo=UTC),
        "tags": ["a", "b"],
        "point": {"x": 1, "label": "p"},
        "attrs": [("k", 1), ("j", 2)],
        "items": [{"sku": "A-1", "qty": 2}, {"sku": "B-2", "qty": 1}],
        "matrix": [[1, 2], [], [3]],
    },
    # Nulls at every level: every column, then inside each nesting.
    {name: None for name in TYPES.names},
    {
        "i8": 0,
        "i16": 0,
        "i32": 0,
        "i64": -1,
        "u32": 0,
        "u64": 0,
        "f32": -1.5,
        "f64": -0.0,
        "price": decimal.Decimal("-0.05"),
        "big": decimal.Decimal("0E-10"),
        "name": "",
        "flag": False,
        "day": dt.date(1969, 12, 31),
        "at_ms": dt.datetime(1970, 1, 1, tzinfo=UTC),
        "at_us": dt.datetime(2024, 1, 1),
        "at_ns": dt.datetime(2024, 1, 1, tzinfo=UTC),
        "at_s": dt.datetime(2024, 1, 1, tzinfo=UTC),
        "tags": ["x", None],
        "point": {"x": None, "label": "only label"},
        "attrs": [("gone", None)],
        "items": [{"sku": "C-3", "qty": None}, None],
        "matrix": [None, [None]],
    },
]


def write_types():
    table = pa.Table.from_pylist(TYPE_ROWS, schema=TYPES)
    pq.write_table(table, path("types.parquet"))
    # Spark reads no nanosecond timestamps: the same rows without them.
    pq.write_table(table.drop_columns(["at_ns"]), path("types-no-ns.parquet"))
    binary = pa.table(
        {
            "id": pa.array([1, 2], pa.int64()),
            "blob": pa.array([b"foobar", None], pa.binary()),
        }
    )
    pq.write_table(binary, path("binary.parquet"))


# ---------------------------------------------------------------- orders

ORDER = pa.schema(
    [
        ("order_id", pa.string()),
        ("amount", pa.float64()),
        ("currency", pa.string()),
        ("qty", pa.int64()),
        ("placed", pa.date32()),
        ("items", pa.list_(pa.struct([("sku", pa.string()), ("qty", pa.int64())]))),
        ("note", pa.string()),
    ]
)


def order(i):
    """The `i`th order: most valid, some failing in several ways."""
    row = {
        "order_id": f"o-{i}",
        "amount": round(10 + i * 1.25, 2),
        "currency": ["EUR", "USD", "GBP"][i % 3],
        "qty": i % 7,
        "placed": dt.date(2024, 1, 1) + dt.timedelta(days=i),
        "items": [{"sku": f"s-{i}", "qty": 1 + i % 2}],
        "note": None,
    }
    if i % 5 == 0:
        row["amount"] = -row["amount"]  # a broken rule
    if i % 7 == 3:
        row["currency"] = "XXX"  # not one of the literals
    if i % 11 == 4:
        row["order_id"] = None  # a required field null
    if i % 13 == 6:
        row["note"] = "gift"  # an extra field for a closed contract
    if i % 9 == 2:
        row["items"] = [{"sku": None, "qty": 0}, {"sku": "z", "qty": None}]
    if i % 17 == 8:
        row["items"] = None
    return row


def json_line(row):
    """The record as JSON, with a SQL NULL left out (absent)."""

    def plain(v):
        if isinstance(v, dt.date):
            return v.isoformat()
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items() if x is not None}
        return v

    return json.dumps(plain({k: v for k, v in row.items() if v is not None}))


def write_orders():
    rows = [order(i) for i in range(1, 61)]
    table = pa.Table.from_pylist(rows, schema=ORDER)
    # Row groups of 16 rows: four of them, the last short.
    pq.write_table(table, path("orders.parquet"), row_group_size=16)
    with open(path("orders.jsonl"), "w") as out:
        for row in rows:
            out.write(json_line(row) + "\n")
    pq.write_table(table, path("orders-zstd.parquet"), compression="zstd")
    pq.write_table(table, path("orders-gzip.parquet"), compression="gzip")
    pq.write_table(
        table.drop_columns(["amount"]), path("orders-no-amount.parquet")
    )
    with open(path("orders.parquet"), "rb") as f:
        whole = f.read()
    # Cut short: the footer is gone.
    with open(path("truncated.parquet"), "wb") as f:
        f.write(whole[: len(whole) // 2])
    # Whole, but a page in the middle overwritten.
    damaged = bytearray(whole)
    for i in range(200, 400):
        damaged[i] = 0xA5
    with open(path("damaged.parquet"), "wb") as f:
        f.write(bytes(damaged))
    # Dictionary-encoded text, as pandas categoricals are written.
    categorical = pa.table(
        {
            "currency": pa.array(["EUR", "USD", "EUR", None]).dictionary_encode(),
            "n": pa.array([1, 2, 3, 4], pa.int64()),
        }
    )
    pq.write_table(categorical, path("dictionary.parquet"))


if __name__ == "__main__":
    write_types()
    write_orders()
