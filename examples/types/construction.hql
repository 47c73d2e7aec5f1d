// Values the program builds: `Type { … }` constructs a value of a declared
// type and checks it at once. A good one prints as a record (fields as
// written, defaults appended); it can be validated, filtered and compared
// like any record.
type Sighting : DataContract = {
    species: String
    seen: String
    count: Int = 1

    require seen == "morning" or seen == "dusk" or seen == "night"
}

type Threshold : TypeContract = {
    metric: String
    high: Percent
}

let owl = Sighting {species: "owl", seen: "dusk"}
owl
owl.count
Sighting {species: "wren", seen: "morning", count: 3, site: "hedge"}
Threshold {metric: "cpu", high: 85}

// A built value passes validation against its own type.
validate(owl, Sighting)
[owl, Sighting {species: "kestrel", seen: "morning"}] | map(s => s.species)
