"""Write examples/io/orders.parquet with pyarrow: the shop's orders of
orders.csv as a typed, columnar export would hold them (amounts as
decimals, dates as DATE). Run it again only to change the file:

    python3 examples/io/make_parquet.py
"""

import datetime as dt
import decimal
import os

import pyarrow as pa
import pyarrow.parquet as pq

D = decimal.Decimal
SCHEMA = pa.schema(
    [
        ("order_id", pa.string()),
        ("customer", pa.string()),
        ("amount", pa.decimal128(10, 2)),
        ("paid", pa.bool_()),
        ("placed", pa.date32()),
        ("note", pa.string()),
    ]
)
ROWS = [
    ("A-1001", "ada@example.org", D("120.50"), True, dt.date(2024, 3, 1), None),
    ("A-1002", "grace@example.org", D("35.00"), False, dt.date(2024, 3, 2), "gift wrap"),
    ("A-1003", "linus at example.org", D("12.00"), True, dt.date(2024, 3, 2), None),
    ("A-1004", None, D("12.00"), True, dt.date(2024, 3, 3), None),
    ("A-1005", "ken@example.org", D("8.50"), True, None, None),
    ("A-1006", "barbara@example.org", D("70.00"), False, dt.date(2024, 3, 4), "leave it at the door, please"),
    ("A-1007", "edsger@example.org", D("-3.00"), True, dt.date(2024, 3, 5), "refund"),
]

table = pa.Table.from_pylist([dict(zip(SCHEMA.names, r)) for r in ROWS], schema=SCHEMA)
pq.write_table(table, os.path.join(os.path.dirname(os.path.abspath(__file__)), "orders.parquet"))
