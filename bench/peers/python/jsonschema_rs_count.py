"""jsonschema-rs peer: the order schema compiled once, `json.loads` and
`is_valid` per line. `low <= high` cannot be expressed in JSON Schema: it is
checked in Python after validation."""

import json

import jsonschema_rs

from common import count_valid, load_schema, orders_path


def main():
    path = orders_path("jsonschema_rs_count.py")
    schema_valid = jsonschema_rs.validator_for(load_schema()).is_valid
    loads = json.loads

    def is_valid(line):
        try:
            value = loads(line)
        except ValueError:
            return False
        return schema_valid(value) and value["low"] <= value["high"]

    print(count_valid(path, is_valid))


if __name__ == "__main__":
    main()
