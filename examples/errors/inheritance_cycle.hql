// Types cannot inherit from each other in a circle: Route is declared under
// Leg and Leg under Route. A static error; nothing runs (exit 2).
type Route : Leg = {
    route_id: String
}

type Leg : Route = {
    leg_no: Int
}

[{route_id: "R1", leg_no: 1}] | validate(Leg)
