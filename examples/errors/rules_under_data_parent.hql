// The same under a plain `Data` parent: a `unique` key needs a contract
// kind, and the help names `DataContract`. Nothing runs (exit 2).
type Event : Data = {
    event_id: String
}

type Click : Event = {
    target: String
    unique event_id
}

[{event_id: "e1", target: "buy"}] | validate(Click)
