// Expectations the SQL summary compiles: over `rows` and `failures`, with
// shares, arithmetic, `not`/`and`/`or`, failing and holding, `warn` or not.
type Batch : DataContract = {
    id: String
    qty: Int

    require qty >= 0

    expect rows >= 3
    expect enough: rows >= 100
    expect budget: failures <= 25%
    expect warn few_failures: failures * 4 < rows
    expect warn mostly_good: rows - failures >= 2 and not (rows > 1_000)
    expect some_fail: failures > 0 or rows == 0
    expect exact: failures * 3 != rows
}
