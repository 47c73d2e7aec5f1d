// Shared declarations of the shop's order data, imported by
// docs/tutorial.md. Run on its own (`hql test docs/data/shop.hql`), its
// `check` statements are test cases.

/// A stock-keeping unit: three capital letters, a dash, two digits.
type Sku = String require well_formed: matches(self, r"^[A-Z]{3}-[0-9]{2}$")

/// One line of an order.
type Item : DataContract = {
    sku: Sku
    qty: Int
    require positive_qty: qty > 0
}

fn is_sku(s: String) -> Bool = is_ok(validate(s, Sku))

check "a well-formed sku": is_sku("TEA-01")
check "a lower-case sku": not is_sku("tea-01")
