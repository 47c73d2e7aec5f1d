// Weather stations: a closed parent makes a closed child. `Station` is a
// plain `Type` (shape only, closed); `WeatherStation` adds a field and, being
// a Type too, no rules. Undeclared fields are refused per field, named
// under the validated type (`WeatherStation.operator.extra`).
type Station : Type = {
    code: String
    lat: Float
    lon: Float
}

type WeatherStation : Station = {
    altitude_m: Int
}

let stations = [
    {code: "ZRH", lat: 47.46, lon: 8.55, altitude_m: 432},
    {code: "SAE", lat: 47.25, lon: 9.34, altitude_m: 2502, operator: "MeteoSwiss"},
    {altitude_m: "high", code: "JUN", lat: 46.55, lon: 7.98}
]

stations | validate(WeatherStation) | map(r => is_ok(r))
stations
    | validate(WeatherStation)
    | errs()
    | flat_map(e => e.failures)
    | map(f => {rule: f.rule, kind: f.kind, path: f.path})
