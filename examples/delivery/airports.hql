// A real delivery checked as a whole: 3,376 airports from a CSV file.
// Each record is validated, and the expectations judge the delivery in
// the same pass. tests/expectations_pandas.rs computes the same counts
// with pandas and holds these to them.
type Airport : DataContract = {
    iata: String
    name: String
    city: String
    state: String
    country: String
    latitude: Float
    longitude: Float

    require on_earth: -90 <= latitude and latitude <= 90 and -180 <= longitude and longitude <= 180
    // The file spells a missing city or state `NA`.
    warn city_given: city != "NA"
    warn state_given: state != "NA"
    require domestic: country == "USA"

    expect rows >= 3000
    expect codes_unique: duplicates(iata) == 0
    expect enough_states: distinct(state) >= 50
    expect mostly_domestic: failures <= 1%
    expect warn one_name_each: duplicates(name) == 0
    expect northern: min(latitude) > 0 and max(latitude) < 72
}

source(file("examples/delivery/airports.csv"), Csv) | validate(Airport) | report()
