"""What the Python peers share: the schema's path, the argument, and the
line loop that counts valid records."""

import json
import os
import sys

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "order.schema.json")


def load_schema():
    with open(SCHEMA, encoding="utf-8") as f:
        return json.load(f)


def orders_path(script):
    if len(sys.argv) != 2:
        sys.exit(f"usage: {script} ORDERS.jsonl")
    return sys.argv[1]


def count_valid(path, is_valid):
    """Count the non-blank lines of `path` (bytes) for which `is_valid` holds."""
    count = 0
    with open(path, "rb") as f:
        for line in f:
            if line.strip() and is_valid(line):
                count += 1
    return count


def count_validated(path, validate, error):
    """Count the non-blank lines of `path` that `validate` (a function of the
    line's bytes) takes without raising `error`."""

    def is_valid(line):
        try:
            validate(line)
        except error:
            return False
        return True

    return count_valid(path, is_valid)
