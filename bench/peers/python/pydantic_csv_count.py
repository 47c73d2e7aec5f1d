"""pydantic 2 peer on the CSV orders: the `csv` module reads the rows, each
row's cells are converted as HQL's CSV decoding converts them, and the same
strict model as pydantic_count.py validates the record (`validate_python`).

HQL's CSV decoding, for the contract's fields: an empty cell is absent, or
None for `customer_email` (its type admits Null); an Int cell that is an
optional sign and digits becomes an int, a Float cell that is a decimal or
exponent number becomes a float; any other cell stays text, which the strict
model then refuses. A row with another number of cells than the header does
not decode: it is not valid."""

import csv
import re
import sys

from pydantic import TypeAdapter, ValidationError

from pydantic_count import Order

INT = re.compile(r"[+-]?[0-9]+")
FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def text(cell):
    return cell


def to_int(cell):
    return int(cell) if INT.fullmatch(cell) else cell


def to_float(cell):
    return float(cell) if FLOAT.fullmatch(cell) else cell


# The declared type of each of the model's fields decides its cell's conversion.
CONVERT = {
    "order_id": text,
    "status": text,
    "amount": to_float,
    "customer_email": text,
    "low": to_int,
    "high": to_int,
}
NULLABLE = {"customer_email"}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: pydantic_csv_count.py ORDERS.csv")
    validate = TypeAdapter(Order).validate_python
    count = 0
    with open(sys.argv[1], newline="", encoding="utf-8") as f:
        rows = csv.reader(f)
        header = next(rows)
        width = len(header)
        # (position, name, conversion, nullable) of the model's columns;
        # the other columns are extra fields, ignored by the model.
        columns = [
            (k, name, CONVERT[name], name in NULLABLE) for k, name in enumerate(header) if name in CONVERT
        ]
        for row in rows:
            if len(row) != width:
                continue  # does not decode
            record = {}
            for k, name, convert, nullable in columns:
                cell = row[k]
                if cell:
                    record[name] = convert(cell)
                elif nullable:
                    record[name] = None
            try:
                validate(record)
            except ValidationError:
                continue
            count += 1
    print(count)


if __name__ == "__main__":
    main()
