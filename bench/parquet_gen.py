#!/usr/bin/env python3
"""The Parquet side of bench/parquet.py.

    parquet_gen.py ORDERS.jsonl ORDERS.parquet   # write the Parquet file
    parquet_gen.py --polars ORDERS.parquet       # polars: count the valid orders
    parquet_gen.py --pandera ORDERS.parquet      # pyarrow + pandera: the same

Writing: the orders of bench/gen.py, typed as the contract declares them
(`order_id`, `status`, `customer_email` text, `amount` double, `low` and
`high` 64-bit integers; the extra fields as text), in row groups of 65,536
rows with pyarrow's defaults (Snappy). A value whose JSON type does not fit
its column is written as null, so its record still fails (as missing).
"""

import json
import sys

ROW_GROUP = 65_536
TEXT = ["order_id", "status", "customer_email", "channel"]
INTS = ["low", "high", "qty"]


def fits(v, kind):
    if v is None:
        return True
    if kind == "text":
        return isinstance(v, str)
    if kind == "int":
        return isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def write(src, dst):
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [(c, pa.string()) for c in TEXT[:3]]
        + [("amount", pa.float64())]
        + [(c, pa.int64()) for c in INTS[:2]]
        + [("channel", pa.string()), ("qty", pa.int64())]
    )
    kinds = {**{c: "text" for c in TEXT}, **{c: "int" for c in INTS}, "amount": "float"}
    writer = pq.ParquetWriter(dst, schema)
    batch = {c: [] for c in schema.names}

    def flush():
        if batch["order_id"] or any(batch.values()):
            writer.write_table(pa.table(batch, schema=schema), row_group_size=ROW_GROUP)
            for c in batch:
                batch[c].clear()

    with open(src) as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            for c in schema.names:
                v = record.get(c)
                batch[c].append(v if fits(v, kinds[c]) else None)
            if len(batch["order_id"]) == ROW_GROUP:
                flush()
    flush()
    writer.close()


def polars_count(path):
    import polars as pl

    email = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"
    df = pl.read_parquet(path)
    valid = (
        pl.col("order_id").is_not_null()
        & pl.col("status").is_in(["open", "shipped", "cancelled"])
        & pl.col("amount").is_not_null()
        & (pl.col("amount") >= 0)
        & pl.col("low").is_not_null()
        & pl.col("high").is_not_null()
        & (pl.col("low") <= pl.col("high"))
        & (pl.col("customer_email").is_null() | pl.col("customer_email").str.contains(email))
    )
    print(df.filter(valid).height)


def pandera_count(path):
    """pyarrow reads the file into pandas (integers as nullable Int64, as
    the CSV peer converts them), and the CSV peer's pandera schema
    (bench/peers/python/pandera_count.py) checks the same rules with every
    failure collected; the valid rows are those no failure names."""
    import os

    import pandas as pd
    import pyarrow
    import pyarrow.parquet as pq

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "python"))
    from pandera_count import SCHEMA
    import pandera.pandas as pandera

    columns = ["order_id", "status", "amount", "customer_email", "low", "high"]
    df = pq.read_table(path, columns=columns).to_pandas(types_mapper={pyarrow.int64(): pd.Int64Dtype()}.get)
    try:
        SCHEMA.validate(df, lazy=True)
        failed = 0
    except pandera.errors.SchemaErrors as e:
        failed = e.failure_cases["index"].dropna().nunique()
    print(len(df) - failed)


if __name__ == "__main__":
    if sys.argv[1] == "--polars":
        polars_count(sys.argv[2])
    elif sys.argv[1] == "--pandera":
        pandera_count(sys.argv[2])
    else:
        write(sys.argv[1], sys.argv[2])
