// A type under a plain `Type` parent has the parent's kind, so it may not
// declare rules: a static error whose help names the contract kind to give
// the parent (`TypeContract`). Nothing runs (exit 2).
type Station : Type = {
    code: String
    altitude_m: Int
}

type AlpineStation : Station = {
    glacier?: String
    require high: altitude_m > 1500
}

[{code: "JUN", altitude_m: 3571}] | validate(AlpineStation)
