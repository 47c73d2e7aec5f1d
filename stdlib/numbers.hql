// HQL standard library: numbers.

/// A percentage: a number from 0 to 100, both ends included. As with
/// `Float`, an Int is accepted and kept as received.
/// example: is_ok(validate(0, Percent))
/// example: is_ok(validate(100, Percent))
/// example: is_ok(validate(37.5, Percent))
/// example: is_err(validate(100.5, Percent))
/// example: is_err(validate(-1, Percent))
/// example: is_err(validate("50", Percent))
type Percent = Float
    require in_range: self >= 0 and self <= 100

/// True when `x` is a number from 0 to 100 inclusive. Any other value,
/// including a String such as "50", gives false rather than an error.
/// example: is_percent(0)
/// example: is_percent(100)
/// example: is_percent(0.0)
/// example: is_percent(99.99)
/// example: not is_percent(100.5)
/// example: not is_percent(-1)
/// example: not is_percent(-0.001)
/// example: not is_percent("50")
/// example: not is_percent(null)
fn is_percent(x) -> Bool = is_ok(validate(x, Percent))
