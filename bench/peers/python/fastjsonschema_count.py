"""fastjsonschema peer: the order schema compiled once, `json.loads` and the
compiled validator per line. `low <= high` cannot be expressed in JSON
Schema: it is checked in Python after validation."""

import json
import os
import sys

import fastjsonschema

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "order.schema.json")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: fastjsonschema_count.py ORDERS.jsonl")
    with open(SCHEMA, encoding="utf-8") as f:
        validate = fastjsonschema.compile(json.load(f))
    invalid = fastjsonschema.JsonSchemaException
    loads = json.loads
    count = 0
    with open(sys.argv[1], "rb") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                value = validate(loads(line))
            except (ValueError, invalid):
                continue
            if value["low"] <= value["high"]:
                count += 1
    print(count)


if __name__ == "__main__":
    main()
