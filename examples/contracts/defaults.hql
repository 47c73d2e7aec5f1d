// Defaults: our Swiss address book omits the country for domestic entries.
// A default is filled before any rule runs, only when the field is absent
// (an explicit null is still a `null` failure), and a filled field is
// appended after the fields that were received.
type Address : DataContract = {
    street: String
    city: String
    country: String = "CH"
    zip: String = "0000"

    // runs after the default is filled, so domestic entries pass
    require country == "CH" or country == "DE" or country == "AT"
    require swiss_zip: country == "CH" => len(zip) == 4
}

let addresses = source(file("examples/contracts/addresses.jsonl"), Json) | validate(Address)

addresses | oks()
// the failure record's `input` is the value as received, before defaults
addresses | errs() | map(e => {input: e.input, rules: e.failures | map(f => f.rule) | collect()})
