"""pandas + pandera peer on the CSV orders: `pandas.read_csv` (pyarrow engine)
reads every column as text, vectorised pandas steps convert the cells as
HQL's CSV decoding does, and a pandera DataFrameSchema with the order's
checks validates the frame lazily; the valid orders are the rows that appear
in no failure case.

HQL's CSV decoding, for the contract's fields: an empty cell is absent (null
for `customer_email`, whose type admits Null); an Int cell converts when it
is an optional sign and digits, a Float cell when it is a decimal or exponent
number; a cell that does not convert is a type error. pandas' own inference
would read "12.0" as an integer column's 12, so the columns are read as text
and converted with those rules: a cell that does not convert becomes a null,
which the schema refuses in a required column. Rows with another number of
cells than the header are skipped by the reader (they do not decode)."""

import sys

import pandas as pd
import pandera.pandas as pa

EMAIL = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"
INT = r"[+-]?[0-9]+"
FLOAT = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"

SCHEMA = pa.DataFrameSchema(
    {
        "order_id": pa.Column(str),
        "status": pa.Column(str, pa.Check.isin(["open", "shipped", "cancelled"])),
        "amount": pa.Column(float, pa.Check.ge(0)),
        "customer_email": pa.Column(str, pa.Check.str_matches(EMAIL), nullable=True, required=False),
        "low": pa.Column("Int64"),
        "high": pa.Column("Int64"),
    },
    # A null bound (already a failure of its column) compares as <NA>: not valid.
    checks=pa.Check(lambda df: (df["low"] <= df["high"]).fillna(False), name="ordered_bounds"),
)


def converted(cells, pattern, dtype):
    """The column's cells that match `pattern` as `dtype`; the others null."""
    ok = cells.str.fullmatch(pattern).fillna(False).astype(bool)
    # pyarrow's cast to an integer refuses the sign "+"; HQL's Int takes it.
    return cells.where(ok).str.removeprefix("+").astype(dtype)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: pandera_count.py ORDERS.csv")
    df = pd.read_csv(
        sys.argv[1],
        dtype=str,
        keep_default_na=False,
        na_values=[""],
        on_bad_lines="skip",
        engine="pyarrow",
    )
    df["amount"] = converted(df["amount"], FLOAT, "float64")
    df["low"] = converted(df["low"], INT, "Int64")
    df["high"] = converted(df["high"], INT, "Int64")
    try:
        SCHEMA.validate(df, lazy=True)
        invalid = 0
    except pa.errors.SchemaErrors as errors:
        invalid = errors.failure_cases["index"].dropna().nunique()
    print(len(df) - invalid)


if __name__ == "__main__":
    main()
