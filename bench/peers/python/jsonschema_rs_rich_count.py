"""jsonschema-rs peer of the rich benchmark: bench/peers/event.schema.json
(the contract exported by `hql export`, with `email` and `date-time` formats
and the country list added by bench/rich/schema.py), compiled once with
format assertion on; `json.loads` and `is_valid` per line. The two
cross-field rules cannot be said in JSON Schema: they are checked in Python
after validation."""

import json

import jsonschema_rs

from common import count_valid, orders_path
from rich_common import load_event_schema


def rules_hold(event):
    items = event["items"]
    if event["type"] == "purchase" and not items:
        return False
    return event["total"] == sum(i["qty"] * i["price"] for i in items)


def main():
    path = orders_path("jsonschema_rs_rich_count.py")
    schema_valid = jsonschema_rs.validator_for(load_event_schema(), validate_formats=True).is_valid
    loads = json.loads

    def is_valid(line):
        try:
            event = loads(line)
        except ValueError:
            return False
        return schema_valid(event) and rules_hold(event)

    print(count_valid(path, is_valid))


if __name__ == "__main__":
    main()
