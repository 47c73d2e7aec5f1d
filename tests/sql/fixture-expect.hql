// Expectations the SQL summary compiles: over `rows`, `failures`,
// `missing` and `nulls` (of the input as delivered, before defaults; a
// nested path absent when a step is missing, null or no object),
// `invalid`, `min`, `max`, `sum` and `avg` of the numbers that passed
// their checks, `duplicates` and `distinct` (numbers keyed by value),
// `age` of the latest valid instant (HQL_NOW is
// 2026-12-05T00:00:00Z in the tests), with shares, arithmetic, `not`/`and`/`or`, failing and
// holding, `warn` or not.
type Batch : DataContract = {
    id: String
    qty: Int
    note?: String | Null
    unit: String = "kg"
    weight?: Float
    at?: Timestamp
    day?: Date
    code?: Int | String
    origin?: { city?: String | Null }

    require qty >= 0

    expect rows >= 3
    expect enough: rows >= 100
    expect budget: failures <= 25%
    expect warn few_failures: failures * 4 < rows
    expect warn mostly_good: rows - failures >= 2 and not (rows > 1_000)
    expect some_fail: failures > 0 or rows == 0
    expect exact: failures * 3 != rows
    expect warn noted: missing(note) <= 25%
    expect warn null_notes: nulls(note) == 0
    expect warn units: missing(unit) == 0
    expect warn cities: missing(origin.city) <= 2
    expect warn null_cities: nulls(origin.city) < 1
    expect held_counts: missing(note) == 4 and nulls(note) == 1 and missing(origin.city) == 3 and nulls(origin.city) == 1
    expect warn qty_range: min(qty) >= 0 and max(qty) <= 3
    expect warn no_bad_qty: invalid(qty) == 0
    expect held_values: sum(qty) == 9 and avg(qty) == 1.8 and invalid(qty) == 2 and min(qty) == -1 and max(qty) == 4
    expect warn fresh_day: age(at) <= 1d
    expect held_age: age(at) <= 28h and age(at) > 26h
    expect held_day: age(day) <= 1d
    expect warn day_strict: age(day) < 1d
    expect warn unique_ids: duplicates(id) == 0
    expect held_keys: duplicates(id) == 1 and distinct(id) == 6 and distinct(code) == 3 and duplicates(code) == 1 and duplicates(id, code) == 0
    expect warn no_weights: min(weight) > 0 or avg(weight) < 0
}
