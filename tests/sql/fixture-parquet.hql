// Contracts over the Parquet fixtures of tests/data/parquet/, checked in
// place over their typed columns by the SQL compiler and held to
// `hql run` (tests/sql_duckdb.rs, tests/sql_spark.rs).

type Item : TypeContract = {
    sku: String
    qty: Int

    require qty >= 1
}

/// orders.parquet read closed: `note` is an undeclared field where set.
type Order : TypeContract = {
    order_id: String
    amount: Float
    currency: "EUR" | "USD" | "GBP"
    qty: Int
    placed: Date
    items: List[Item]

    require positive: amount > 0
    require recent: placed >= "2024-01-10" or qty == 0
    warn few: qty < 6
    unique order_id
}

/// orders.parquet read open, with a column of the wrong type, a field no
/// column holds (with a default), and nulls admitted.
type Loose : DataContract = {
    order_id: String | Null
    amount: Int
    qty?: Int
    express: Bool = false
    region?: String
    items?: List[{sku: String | Null, qty?: Int}]

    require qty? ?? 0 < 6 or not express
    require len(order_id? ?? "") < 5

    // Judged in the summary row over the typed columns.
    expect rows >= 60
    expect warn few_nulls: nulls(order_id) == 0
    expect sum(qty) > 100
}

/// types.parquet: every logical type the catalog lists.
type Everything : DataContract = {
    i8: Int
    i16: Int
    i32: Int
    i64: Int
    u32: Int
    f32: Float
    f64: Float
    price: Float
    name: String
    flag: Bool
    day: Date
    at_ms: Timestamp
    at_us: String
    at_s: Timestamp
    tags: List[String | Null]
    point: {x?: Int, label: String}
    items: List[{sku: String, qty?: Int}]
    matrix: List[List[Int | Null]]

    require small: i8 < 0
    require price > 0
    require len(name) > 0
    require day < "2000-01-01" or flag
    require at_ms < "2024-02-29T13:45:00.2Z"
    require at_us != "2024-01-01T00:00:00.000000"
    require at_s == "2000-01-01T00:00:00Z"
}

/// binary.parquet: binary data read as base64 text.
type Blob : TypeContract = {
    id: Int
    blob?: String

    require len(blob? ?? "") != 8
}
