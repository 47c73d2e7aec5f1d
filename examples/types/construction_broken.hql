// Alert thresholds are configuration the program owns, so they are built
// with `Threshold { … }`, not validated as input. The first is fine; the
// second breaks the rule of its `Percent` field, a refinement from the
// standard library. That is a program bug: a runtime error naming the
// rule (`Percent.in_range`), exit status 1. What printed before stays.
type Threshold : TypeContract = {
    metric: String
    warn_at: Percent
    page_at: Percent

    require escalates: warn_at < page_at
}

Threshold {metric: "cpu", warn_at: 70, page_at: 90}
Threshold {metric: "disk", warn_at: 80, page_at: 105}
"never printed"
