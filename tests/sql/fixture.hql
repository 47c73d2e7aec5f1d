// Contracts for the SQL compiler's differential test: every construct it
// compiles, over tests/sql/fixture.jsonl (every kind of defect).

type Reading : TypeContract = {
    sensor: String
    low: Int
    high: Int
    unit?: String

    require ordered: low <= high else "low must not exceed high"
    require unit? != "F"
    warn high < 100
}

type Status = "open" | "shipped" | "cancelled"

@version("1.0.0")
type Order : DataContract = {
    id: String
    status: Status
    qty: Int
    price: Float
    discount?: Float = 0.0
    note?: String | Null
    tags?: List[String]
    code?: Int | String
    express?: Bool

    require positive: qty > 0
    require price * qty - discount? >= 0
    require id_shape: matches(id, r"^ord-\d{3}$")
    require status in ["open", "shipped"] or note?
    require shipped_ready: status == "shipped" => express? ?? false or len(note? ?? "") > 0
    require lower(id) == id
    require if qty > 100 then price < 10 else true
    require not contains(note? ?? "", "fraud")
    require starts_with(id, "ord") and ends_with(id, id)
    warn big: qty < 50
    warn qty % 2 == 0 or qty / 2 < 10
    unique id
}

type Item : TypeContract = {
    sku: String
    qty: Int

    require qty > 0
}

type Shipment : DataContract = {
    address: { city: String, zip?: Int }
    items: List[Item]
    lines: List[{ n: Int, tags?: List[String] }]
    main?: Item
    box?: Box
}

type Box : TypeContract = {
    w: Float
    h: Float
    dims?: { unit: "cm" | "in" }
}

// The standard library's types, functions inlined, builtins and two keys.
fn half(n: Int) -> Float = n / 2
fn year(d: String) -> Int = int(split(d, "-")[0])

type Person : TypeContract = {
    id: Uuid
    email: Email
    site?: Url
    born: Date
    seen: Timestamp
    country: CountryCode
    currency?: CurrencyCode
    name: NonEmpty
    share?: Percent
    score?: Float
    tags?: List[CountryCode]
    handle?: String

    require adult: year(born) <= 2010
    require half(len(name)) < 20
    require round(score? ?? 0.5) <= 3 and floor(score? ?? 0) >= 0 and ceil(score? ?? 0) < 5
    require abs(score? ?? 0) < 100 and int(score? ?? 0) < 9
    require float(handle? ?? "1.5") > 0 and int(handle? ?? "7") > 0
    require upper(trim(name)) != "X"
    require replace(handle? ?? "", "-", "_") != "no_one"
    require matches(handle? ?? "a", r"(?i)^[a-z][^\s]*$")
    unique id
    unique email
}

type Pair : DataContract = {
    a: Int
    b?: Int

    require a >= 0
    unique a
    unique b
}
