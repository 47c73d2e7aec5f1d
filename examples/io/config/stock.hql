// Configured sources and targets: the program names ids; hql.toml, found
// from this file's folder upward, says where they are and how to read
// them. The warehouse's columns `SKU`, `On Hand` and `Unit Price` arrive
// under the names the contract uses; `On Hand` is read as an int and
// `Unit Price` as a float even before a contract converts anything, and an
// empty `Unit Price` is null because the column is nullable. `Shelf` is not
// renamed or declared, so it stays text under its own name.
type Stock : DataContract = {
    sku: String
    on_hand: Int
    price: Float | Null

    require stocked: on_hand >= 0
}

source("stock") | take(2)

// oks to one configured target, failure records to another; their
// origin names the source by its id
source("stock") | validate(Stock) | route(ok: "stock_clean", err: "stock_dead")
source("stock")
    | validate(Stock)
    | errs()
    | map(e => {source: e.origin.source, line: e.origin.line, rules: e.failures | map(f => f.rule)})

// a CSV target with the toml's `;` delimiter: the contract's fields first
source("stock") | validate(Stock) | oks() | write("stock_sheet")

// no header row: the cells take the contract's field order
type Recount : DataContract = {
    sku: String
    on_hand: Int
}
source("recounts") | validate(Recount) | map(r => if is_ok(r) then "ok" else "err")
