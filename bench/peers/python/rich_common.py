"""What the rich benchmark's Python peers share: the JSON Schema exported
from bench/rich/event.hql, and the standard library's country codes."""

import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
SCHEMA = os.path.join(HERE, "..", "event.schema.json")


def load_event_schema():
    with open(SCHEMA, encoding="utf-8") as f:
        return json.load(f)


def country_codes():
    """The codes of `COUNTRY_CODES` in stdlib/codes.hql, the list behind
    HQL's `CountryCode`."""
    with open(os.path.join(ROOT, "stdlib", "codes.hql"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("let COUNTRY_CODES = [")
    return frozenset(re.findall(r'"([A-Z]{2})"', text[start : text.index("]", start)]))
