"""jsonschema-rs peer: the order schema compiled once, `json.loads` and
`is_valid` per line. `low <= high` cannot be expressed in JSON Schema: it is
checked in Python after validation."""

import json
import os
import sys

import jsonschema_rs

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "order.schema.json")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: jsonschema_rs_count.py ORDERS.jsonl")
    with open(SCHEMA, encoding="utf-8") as f:
        validator = jsonschema_rs.validator_for(json.load(f))
    is_valid = validator.is_valid
    loads = json.loads
    count = 0
    with open(sys.argv[1], "rb") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                value = loads(line)
            except ValueError:
                continue
            if is_valid(value) and value["low"] <= value["high"]:
                count += 1
    print(count)


if __name__ == "__main__":
    main()
