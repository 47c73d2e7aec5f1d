// The most general survey record, shared by every bird survey.
type Sighting : DataContract = {
    species: NonEmpty
    seen: "morning" | "dusk" | "night"
    site?: String
}

// A self-test that prints when this file is run on its own, and does not
// run when the file is imported.
validate({species: "wren", seen: "morning"}, Sighting) | is_ok()
