// An Int read from data may exceed 64 bits: it prints and compares exactly,
// but arithmetic on it is a runtime error rather than a silent rounding.
let prices = source(file("examples/numbers/prices.jsonl"), Json)

prices | filter(p => p.stock > 1_000) | map(p => p.stock)
prices | map(p => p.stock + 1)
"never printed"
