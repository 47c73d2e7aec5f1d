// Types flow through pipelines: after `validate(Trip) | oks()` the checker
// knows each element is a Trip, so `t.km` is a Float and `t.rider` a
// String; the fn annotations below are checked against them before
// anything runs. After `errs()` each element is a failure record.
type Trip : TypeContract = {
    trip_id: String
    rider: String
    km: Float
    tags?: List[String]

    require km >= 0
}

fn fare(km: Float) -> Float = 2.5 + km * 0.8
fn shout(s: String) -> String = upper(s)

let trips = [
    {trip_id: "T1", rider: "ada", km: 3.0, tags: ["night"]},
    {trip_id: "T2", rider: "bo", km: -1.0},
    {trip_id: "T3", rider: "cy", km: 10}
]

trips | validate(Trip) | oks() | map(t => {rider: shout(t.rider), fare: fare(t.km)})
trips | validate(Trip) | oks() | map(t => len(t.tags? ?? []))
trips | validate(Trip) | errs() | map(e => e.failures | map(f => f.rule) | collect())
