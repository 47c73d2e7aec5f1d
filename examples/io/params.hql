// One program, any file: `param("input", fallback)` is the value given on
// the command line as `--set input=…`, or the fallback when there is none,
// so this checks the sample file when run as it is and another day's file
// with
//
//     hql run examples/io/params.hql --set input=exports/2024-03-02.csv
//
// `env("VAR", fallback)` reads the environment the same way. Without a
// fallback, a parameter that is not set is a runtime error (hql::param).
import "contracts.hql"

let input = param("input", "examples/io/orders.csv")
let owner = env("HQL_EXAMPLE_OWNER", "the shop team")

let orders = source(file(input), Csv) | validate(Order)

fmt("{}: {} orders, {} to look at (for {})", input, orders | count(), orders | errs() | count(), owner)
