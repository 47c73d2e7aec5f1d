// A builtin given an argument of the wrong type is a static error:
// `upper` takes a String. Nothing runs (exit 2).
"before"
upper(3)
