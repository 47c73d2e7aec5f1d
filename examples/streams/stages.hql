// Stream stages over a bike-share export. A stream bound by `let` is a
// recipe: every use below reads the file again from the start.
let trips = source(file("examples/streams/trips.jsonl"), Json)

trips | count()
trips | map(t => t.rider) | distinct()
trips
    | filter(t => t.km >= 3)
    | sort_by(t => t.minutes)
    | map(t => fmt("{} {}min", t.rider, t.minutes))
trips | skip(1) | take(2) | map(t => t.city)
trips | map(t => t.km) | sum()
[trips | map(t => t.minutes) | min(), trips | map(t => t.minutes) | max()]
trips | map(t => t.minutes) | avg()
trips | filter(t => t.km > 100) | avg()
trips | filter(t => t.km > 100) | first()
trips
    | group_by(t => t.city)
    | map(g => {city: g.key, riders: g.items | map(t => t.rider) | distinct() | collect()})
trips | count_by(t => t.rider)
[trips | all(t => t.minutes > 0), trips | any(t => t.city == "Chur")]
trips | flat_map(t => [t.rider, t.city]) | take(4)
// a stream given to fmt is printed as a list
fmt("riders: {}", trips | map(t => t.rider) | distinct())
