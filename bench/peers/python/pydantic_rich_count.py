"""pydantic 2 peer of the rich benchmark: the event model, `validate_json`
per line (`model_validate_json` through a TypeAdapter). Strict mode, so no
value is coerced; the event admits extra fields, `User` and `Item` do not.
`ts` is an `AwareDatetime` (RFC 3339 with an offset, a real calendar date);
the e-mail is the standard library's pattern, the country its list."""

import re
from typing import Annotated, List, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, TypeAdapter, ValidationError, model_validator

from common import count_validated, orders_path
from rich_common import country_codes

EMAIL = re.compile(r"^[^@\s]+@[^@\s.][^@\s]*\.[^@\s]+$")
SKU = re.compile(r"^[A-Z]{3}-[0-9]{4}$")
EVENT_ID = re.compile(r"^ev-[0-9]{9}$")
COUNTRIES = country_codes()


def matching(pattern):
    def check(s):
        if not pattern.match(s):
            raise ValueError("does not match")
        return s

    return AfterValidator(check)


def email(s):
    if not EMAIL.match(s) or s.endswith("."):
        raise ValueError("not an e-mail address")
    return s


def country(s):
    if s not in COUNTRIES:
        raise ValueError("not an assigned country code")
    return s


class Item(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")

    sku: Annotated[str, matching(SKU)]
    qty: int
    price: int

    @model_validator(mode="after")
    def rules(self):
        if self.qty < 1:
            raise ValueError("qty must be at least 1")
        if self.price < 0:
            raise ValueError("price must not be negative")
        return self


class User(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")

    email: Annotated[str, AfterValidator(email)]
    country: Annotated[str, AfterValidator(country)]


class Event(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    event_id: Annotated[str, matching(EVENT_ID)]
    user: User
    ts: AwareDatetime
    type: Literal["click", "view", "cart", "purchase"]
    items: List[Item]
    total: int

    @model_validator(mode="after")
    def rules(self):
        if self.type == "purchase" and not self.items:
            raise ValueError("a purchase has items")
        if self.total != sum(i.qty * i.price for i in self.items):
            raise ValueError("total is not the sum of the items")
        return self


def main():
    path = orders_path("pydantic_rich_count.py")
    print(count_validated(path, TypeAdapter(Event).validate_json, ValidationError))


if __name__ == "__main__":
    main()
