"""fastjsonschema peer: the order schema compiled once, `json.loads` and the
compiled validator per line. `low <= high` cannot be expressed in JSON
Schema: it is checked in Python after validation."""

import json

import fastjsonschema

from common import count_valid, load_schema, orders_path


def main():
    path = orders_path("fastjsonschema_count.py")
    validate = fastjsonschema.compile(load_schema())
    invalid = fastjsonschema.JsonSchemaException
    loads = json.loads

    def is_valid(line):
        try:
            value = validate(loads(line))
        except (ValueError, invalid):
            return False
        return value["low"] <= value["high"]

    print(count_valid(path, is_valid))


if __name__ == "__main__":
    main()
