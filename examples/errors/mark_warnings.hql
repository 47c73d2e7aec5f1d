// Static warnings go to stderr and leave the exit status alone: `?` on a
// required, non-nullable field is needless, and `f?` on a Bool field tests
// presence, not the value (write `f? == true` for the value).
type Member : DataContract = {
    member_id: String
    newsletter?: Bool
    age: Int

    require age? >= 16
    warn newsletter? => age >= 18
}

source(file("examples/errors/members.jsonl"), Json) | validate(Member) | map(r => is_ok(r))
