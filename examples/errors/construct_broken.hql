// A value the program builds is checked at once: breaking a rule there is a
// program bug, so it is a runtime error naming the rule (exit status 1),
// not an `err` value. Use validate(T) for input.
type Threshold : DataContract = {
    metric: String
    low: Float
    high: Float
    require ordered: low <= high
}

Threshold {metric: "latency_ms", low: 0, high: 250}
Threshold {metric: "error_rate", low: 0.5, high: 0.1}
"never printed"
