// Number fidelity: a price list passes through untouched. A number read
// from JSON keeps its source text until arithmetic makes a new value; it
// validates by its lexical form (`1.0` is a Float, a 23-digit integer is
// still an Int).
type Price : DataContract = {
    sku: String
    price: Float // Float accepts Ints; the value is kept as received
    stock: Int
    weight: Int
}

let prices = source(file("examples/numbers/prices.jsonl"), Json)

prices | map(p => p.price)
prices | map(p => p.stock)
prices | validate(Price) | map(r => is_ok(r))
prices | validate(Price) | errs() | map(e => e.failures | map(f => f.rule) | collect())
// comparisons use the exact value; arithmetic makes new values
prices | filter(p => p.stock > 9_223_372_036_854_775_807) | map(p => p.sku)
prices | map(p => p.price * 2)
prices | map(p => p.price == 1.5)
