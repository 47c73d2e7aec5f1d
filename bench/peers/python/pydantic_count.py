"""pydantic 2 peer: a TypeAdapter over the order model, `validate_json` per
line. Strict mode, so no value is coerced ("5" is not an Int, as in HQL);
extra fields are allowed (ignored). `low <= high` is a model_validator."""

from typing import Annotated, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from common import count_validated, orders_path

EMAIL = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"


class Order(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    order_id: str
    status: Literal["open", "shipped", "cancelled"]
    amount: Annotated[float, Field(ge=0)]
    customer_email: Optional[Annotated[str, Field(pattern=EMAIL)]] = None
    low: int
    high: int

    @model_validator(mode="after")
    def ordered_bounds(self):
        if self.low > self.high:
            raise ValueError("low must not exceed high")
        return self


def main():
    path = orders_path("pydantic_count.py")
    print(count_validated(path, TypeAdapter(Order).validate_json, ValidationError))


if __name__ == "__main__":
    main()
