type Sighting : DataContract = {
    species: String
    seen: String

    require seen == "morning" or seen == "dusk" or seen == "night"
}

source(file("examples/structural/sightings.jsonl"), Json)
    | validate(Sighting)
    | oks()
    | map(s => fmt("{} at {}", s.species, s.seen))
