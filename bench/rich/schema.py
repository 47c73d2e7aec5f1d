#!/usr/bin/env python3
"""The JSON Schema the rich benchmark's schema peers (ajv, jsonschema-rs) use.

    hql export bench/rich/event.hql Event --format json-schema | python3 bench/rich/schema.py > bench/peers/event.schema.json

`hql export` writes the standard library's refinements as strings with their
rule under `x-hql-rules` (JSON Schema has no word for them). This adds what
JSON Schema does have: `format: email` for `Email`, `format: date-time` for
`Timestamp` (formats the validators are told to assert), and for
`CountryCode` an `enum` of the standard library's own list, so every tool
checks the same codes. `Email` also gets the standard library's shape as a
`pattern` (its regex, with "does not end with a dot" folded in): the
validators' own `email` formats differ on addresses such as `ada@example`,
which `Email` refuses. The rest of the export is kept as it is.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers", "python"))
from rich_common import country_codes  # noqa: E402


# is_email in stdlib/text.hql: its regex, and the last character not a dot.
EMAIL = r"^[^@\s]+@[^@\s.][^@\s]*\.[^@\s]*[^@\s.]$"


def main():
    schema = json.load(sys.stdin)
    defs = schema["$defs"]
    defs["Email"]["format"] = "email"
    defs["Email"]["pattern"] = EMAIL
    defs["Timestamp"]["format"] = "date-time"
    defs["CountryCode"]["enum"] = sorted(country_codes())
    json.dump(schema, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
