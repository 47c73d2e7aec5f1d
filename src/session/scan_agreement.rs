//! The differential tests of the line check (`runtime::scan`): what it
//! says of many lines, valid ones and each of them broken in the ways data
//! arrives broken, against what the ordinary path (decode, then validate)
//! says. They sit on the session floor because the contracts they check
//! against are declared in HQL and checked by a session.

#[cfg(test)]
pub(crate) mod tests {
    //! The line check against the ordinary path, over many lines: valid
    //! ones, and each of them broken in the ways data arrives broken.

    use std::rc::Rc;

    use crate::runtime::contract::{Contract, RecordShape, Shape, TypeSpec};
    use crate::runtime::eval::Interp;
    use crate::runtime::exec::stages::Tally;
    use crate::runtime::json::{Decoder, Parser};
    use crate::runtime::print::to_hql;
    use crate::runtime::scan::{LineCheck, Verdict};
    use crate::runtime::validate::{findings, validate_unplanned, validate_value};
    use crate::runtime::value::Value;
    use crate::session::memory::MemHost;
    use crate::session::{Session, Sinks};

    pub(crate) fn session(declarations: &str) -> Session {
        let mut session = Session::new(Rc::new(MemHost::new(&[], None)));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut sinks = Sinks::plain(&mut out, &mut err);
        let status = session.submit("decl.hql", declarations, &mut sinks, &mut |_, _| Ok(()));
        assert_eq!(status, 0, "{}", String::from_utf8_lossy(&err));
        session
    }

    /// What the ordinary path makes of a line.
    #[derive(Debug, PartialEq)]
    enum Outcome {
        Clean,
        Warned,
        Failed,
        Raised,
    }

    fn ordinary(interp: &Rc<Interp>, c: &Rc<Contract>, line: &str) -> Outcome {
        let Ok(v) = Decoder::new().decode(line.as_bytes()) else {
            return Outcome::Failed;
        };
        match validate_value(interp, c, v, None, None) {
            Ok(Value::Ok(ok)) if ok.warnings.is_empty() => Outcome::Clean,
            Ok(Value::Ok(_)) => Outcome::Warned,
            Ok(_) => Outcome::Failed,
            Err(_) => Outcome::Raised,
        }
    }

    /// A small deterministic generator (xorshift).
    pub(crate) struct Dice(pub(crate) u64);

    impl Dice {
        pub(crate) fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Values that stand in for a field's value when a line is broken.
    const ODD_VALUES: &[&str] = &[
        "null",
        "true",
        "false",
        "0",
        "-0",
        "7",
        "-3",
        "1.50",
        "2.5e3",
        "99999999999999999999",
        "\"\"",
        "\"open\"",
        "\"op\\u0065n\"",
        "\"a@b.co\"",
        "\"not an email\"",
        "\"tab\\there\"",
        "\"\u{e9}t\u{e9}\"",
        "[]",
        "[1, 2]",
        "[\"x\", null]",
        "{}",
        "{\"city\": \"Oslo\", \"zip\": 1}",
        "{\"city\": 3}",
        "tru",
        "01",
        "\"unterminated",
        "[1,",
    ];

    /// Break `line` (a JSON object written with `", "` between fields) in
    /// one of several ways.
    pub(crate) fn mutate(line: &str, dice: &mut Dice) -> String {
        if dice.below(4) == 0 {
            return mutate_anywhere(line, dice);
        }
        let Some(inner) = line.strip_prefix('{').and_then(|l| l.strip_suffix('}')) else {
            return format!("{line}}}");
        };
        let mut fields: Vec<String> = if inner.is_empty() {
            vec![]
        } else {
            inner.split(", ").map(str::to_string).collect()
        };
        let n = fields.len().max(1);
        match dice.below(9) {
            0 if !fields.is_empty() => {
                fields.remove(dice.below(n));
            }
            1 if !fields.is_empty() => {
                let f = fields[dice.below(n)].clone();
                fields.push(f);
            }
            2 | 3 if !fields.is_empty() => {
                let i = dice.below(n);
                let key = fields[i].split(':').next().unwrap_or("\"k\"").to_string();
                let value = ODD_VALUES[dice.below(ODD_VALUES.len())];
                fields[i] = format!("{key}: {value}");
            }
            4 => fields.push(format!(
                "\"extra{}\": {}",
                dice.below(3),
                ODD_VALUES[dice.below(ODD_VALUES.len())]
            )),
            5 if fields.len() > 1 => fields.swap(0, n - 1),
            6 => {
                let mut cut = dice.below(line.len());
                while !line.is_char_boundary(cut) {
                    cut -= 1;
                }
                return line[..cut].to_string();
            }
            7 => return format!("  {line}\t "),
            8 if !fields.is_empty() => {
                // The same key, its first letter written as an escape.
                let i = dice.below(n);
                let first = fields[i].chars().nth(1).unwrap_or('k');
                fields[i] = format!("\"\\u{:04x}{}", first as u32, &fields[i][2..]);
            }
            _ => return format!("[{line}]"),
        }
        format!("{{{}}}", fields.join(", "))
    }

    /// Replace one value anywhere in the line, nested ones too: the text
    /// after a `:`, `[` or `,` up to the next `,`, `]` or `}`.
    fn mutate_anywhere(line: &str, dice: &mut Dice) -> String {
        let starts: Vec<usize> = line
            .char_indices()
            .filter(|(_, c)| matches!(c, ':' | '[' | ','))
            .map(|(i, _)| i + 1)
            .collect();
        if starts.is_empty() {
            return format!("{line} ");
        }
        let start = starts[dice.below(starts.len())];
        let len = line[start..]
            .find([',', ']', '}'])
            .unwrap_or(line.len() - start);
        let odd = ODD_VALUES[dice.below(ODD_VALUES.len())];
        format!("{}{odd}{}", &line[..start], &line[start + len..])
    }

    /// Does the line's top-level object have a key twice?
    /// Does a record of type `spec`, or one inside it, have warnings?
    fn warns_inside(spec: &TypeSpec, depth: usize) -> bool {
        let record = |r: &RecordShape| {
            !r.warns.is_empty() || r.fields.iter().any(|f| warns_inside(&f.ty, depth + 1))
        };
        depth < 6
            && match spec {
                TypeSpec::Record(r) => record(r),
                TypeSpec::List(t) | TypeSpec::Map(t) => warns_inside(t, depth + 1),
                TypeSpec::Union(ms) => ms.iter().any(|m| warns_inside(m, depth + 1)),
                TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
                    Some(Shape::Record { record: r, .. }) => record(r),
                    Some(Shape::Refined { base, .. }) => warns_inside(base, depth + 1),
                    None => false,
                },
                _ => false,
            }
    }

    fn repeats_a_key(line: &str) -> bool {
        let mut decoder = Decoder::new();
        let mut p = Parser::new(line.as_bytes(), &mut decoder);
        let mut repeated = false;
        let _ = repeats_in(&mut p, &mut repeated);
        repeated
    }

    /// Read the value at the parser, noting in `repeated` an object with
    /// a key twice at any depth, up to where it stops parsing (`None`).
    fn repeats_in(p: &mut Parser, repeated: &mut bool) -> Option<()> {
        let close = match p.peek_token().ok()? {
            b'{' => b'}',
            b'[' => b']',
            _ => return p.skip_value().ok(),
        };
        p.open().ok()?;
        let mut keys = Vec::new();
        if p.peek_token().ok()? != close {
            loop {
                if close == b'}' {
                    p.peek_token().ok()?;
                    let key = p.string().ok()?;
                    *repeated |= keys.contains(&key);
                    keys.push(key);
                    p.colon().ok()?;
                }
                repeats_in(p, repeated)?;
                match p.peek_token().ok()? {
                    b',' => p.bump(),
                    b if b == close => break,
                    _ => return None,
                }
            }
        }
        p.close();
        Some(())
    }

    /// Check `lines` and broken copies of them against `name`: the line
    /// check never claims what the ordinary path denies, decides every line
    /// it can, and `report()`'s findings count as the results do.
    pub(super) fn agree(declarations: &str, name: &str, lines: &[&str]) {
        let session = session(declarations);
        let interp = session.interp().clone();
        let contract = session.contract(name).expect("declared");
        let mut check = LineCheck::keyed(&contract, &interp).expect("a line check");
        let nested_warns = contract
            .record()
            .is_some_and(|r| r.fields.iter().any(|f| warns_inside(&f.ty, 0)));
        let mut dice = Dice(0x9E37_79B9_7F4A_7C15);
        let mut cases: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        for _ in 0..10_000 {
            let base = lines[dice.below(lines.len())];
            let once = mutate(base, &mut dice);
            cases.push(if once.starts_with('{') && dice.below(2) == 0 {
                mutate(&once, &mut dice)
            } else {
                once
            });
        }
        let (mut by_value, mut by_findings) = (Tally::default(), Tally::default());
        let mut decided = [0; 3];
        let mut named = 0;
        for line in &cases {
            let expected = ordinary(&interp, &contract, line);
            let verdict = check.verdict(&interp, line.as_bytes());
            match verdict {
                Verdict::Valid => assert_eq!(expected, Outcome::Clean, "{line}"),
                Verdict::Invalid => assert_eq!(expected, Outcome::Failed, "{line}"),
                Verdict::Unsure => {}
            }
            decided[verdict as usize] += 1;
            // Only a repeated key, a warning or a contract that may raise
            // leaves a clean or failing line undecided (a nested record's
            // warning leaves the verdict to the ordinary path before the
            // rest of the line is read).
            if !repeats_a_key(line) {
                match expected {
                    Outcome::Clean => assert_eq!(verdict, Verdict::Valid, "{line}"),
                    Outcome::Failed if check.certain() && !nested_warns => {
                        assert_eq!(verdict, Verdict::Invalid, "{line}")
                    }
                    _ => {}
                }
            }
            // A record built as it is read is the one `validate` gives.
            let built = check.validated(&interp, line.as_bytes());
            if let Some(built) = &built {
                let v = Decoder::new().decode(line.as_bytes()).expect("it decodes");
                let result = validate_value(&interp, &contract, v, None, None).expect("no error");
                assert_eq!(to_hql(built), to_hql(&result), "{line}");
                assert_eq!(
                    crate::runtime::json::to_json(built),
                    crate::runtime::json::to_json(&result)
                );
            }
            // (Defaults at any depth change a record: `validated` leaves
            // those to the ordinary path.)
            let keeps = contract
                .record()
                .is_some_and(|r| r.fields.iter().all(|f| f.default.is_none()))
                && check.keeps_records();
            if expected == Outcome::Clean && keeps && !repeats_a_key(line) {
                assert!(built.is_some(), "{line}");
            }
            // Failures named as the line is read are the ones `validate`
            // finds, in its order.
            let decoded = Decoder::new().decode(line.as_bytes());
            match (check.findings(&interp, line.as_bytes()), &decoded) {
                (Some(found), Ok(v)) => {
                    let wanted = findings(&interp, &contract, v).expect("no error");
                    assert_eq!(found.failures, wanted.failures, "{line}");
                    assert_eq!(found.warnings, wanted.warnings, "{line}");
                    named += 1;
                }
                (Some(_), Err(e)) => {
                    panic!("named failures of a line that does not decode ({e}): {line}")
                }
                (None, Ok(Value::Record(_))) if check.names() && !repeats_a_key(line) => {
                    panic!("failures left unnamed: {line}")
                }
                (None, _) => {}
            }
            if let Ok(v) = &decoded {
                // Scalars judged by the plan, as by the types it was
                // compiled from.
                let planned = validate_value(&interp, &contract, v.clone(), None, None);
                let unplanned = validate_unplanned(&interp, &contract, v.clone());
                match (&planned, &unplanned) {
                    (Ok(a), Ok(b)) => assert_eq!(to_hql(a), to_hql(b), "{line}"),
                    (a, b) => assert_eq!(a.is_ok(), b.is_ok(), "{line}"),
                }
            }
            if let Ok(v) = decoded {
                if let Ok(result) = validate_value(&interp, &contract, v.clone(), None, None) {
                    by_value.add(&result);
                    by_findings.add_findings(&findings(&interp, &contract, &v).expect("same run"));
                }
            }
        }
        eprintln!("{name}: valid, invalid, unsure = {decided:?}; failures named for {named}");
        assert_eq!(check.names(), named > 0, "{name}");
        assert!(decided[Verdict::Valid as usize] > 100, "{decided:?}");
        assert_eq!(
            to_hql(&by_value.into_value()),
            to_hql(&by_findings.into_value())
        );
    }
}

#[cfg(test)]
mod agreement {
    use super::tests::agree;

    #[test]
    fn orders() {
        agree(
            r#"type OrderEmail = String require well_formed: matches(self, r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
type Order : DataContract = {
    order_id: String
    status: "open" | "shipped" | "cancelled"
    amount: Float
    customer_email?: OrderEmail | Null
    low: Int
    high: Int
    require non_negative_amount: amount >= 0
    require ordered_bounds: low <= high
}"#,
            "Order",
            &[
                r#"{"order_id": "A1", "status": "open", "amount": 12.5, "customer_email": "a@b.co", "low": 1, "high": 2}"#,
                r#"{"order_id": "A2", "status": "shipped", "amount": 0, "low": 5, "high": 5, "channel": "web"}"#,
                r#"{"order_id": "A3", "status": "cancelled", "amount": 1e2, "customer_email": null, "low": -1, "high": 9}"#,
            ],
        );
    }
}

#[cfg(test)]
mod agreement_more {
    use super::tests::agree;

    /// Closed, with a nested record, a list, a map, a default, a check, a
    /// warning and an optional field a rule reads: the contract may raise,
    /// so failures are left to the ordinary path.
    #[test]
    fn closed_nested_defaults_checks_and_warnings() {
        agree(
            r#"fn short(s) = len(s) < 12
type Place : Type = { city: String, zip?: Int }
type Visit : TypeContract = {
    id: Int | String
    flag: Bool = false
    place: Place
    tags: List[String]
    scores?: Map[Float]
    note?: String
    anything?: Any
    validate id with short
    require tagged: len(tags) > 0 or flag
    warn noted: note? != "todo"
}"#,
            "Visit",
            &[
                r#"{"id": 1, "flag": true, "place": {"city": "Oslo"}, "tags": [], "note": "x"}"#,
                r#"{"id": "v-2", "place": {"city": "Rome", "zip": 100}, "tags": ["a", "b"], "scores": {"x": 1.5}}"#,
                r#"{"id": 3, "place": {"city": "Lima"}, "tags": ["c"], "anything": [1, {"k": null}], "note": "todo"}"#,
            ],
        );
    }

    /// Open, unions of scalars and literals, an alias, `Any`, and rules
    /// over optional fields, one calling a builtin with one (absent when
    /// the field is, so it holds).
    #[test]
    fn unions_aliases_and_optional_reads() {
        agree(
            r#"type Code = String
type Reading : DataContract = {
    sensor: Code
    kind: "temp" | "wind" | 3
    value: Int | Float | Null
    ok?: Bool
    raw?: Any
    require when_ok: not ok? or value? != null
    require bounded: value? == null or value? < 1000
    require sized: len(raw?) < 5
}"#,
            "Reading",
            &[
                r#"{"sensor": "s1", "kind": "temp", "value": 12, "ok": true}"#,
                r#"{"sensor": "s2", "kind": 3, "value": null, "raw": {"a": [1, 2]}}"#,
                r#"{"sensor": "s3", "kind": "wind", "value": 7.25, "ok": false, "raw": "x"}"#,
            ],
        );
    }
}

#[cfg(test)]
mod agreement_nested {
    use super::tests::agree;

    /// Nested records, inline and declared, lists of records and of
    /// strings, a rule reading a list and rules inside list elements.
    #[test]
    fn nested_records_and_lists() {
        agree(
            r#"type Item : DataContract = {
    sku: String
    qty: Int
    price: Float
    require positive_qty: qty > 0
}
type Order : DataContract = {
    id: String
    customer: { name: String, email?: String | Null, address: { city: String } }
    items: List[Item]
    tags: List[String | Null]
    codes?: List[List[Int]]
    require has_items: len(items) > 0
}"#,
            "Order",
            &[
                r#"{"id": "o1", "customer": {"name":"Ann","address":{"city":"Oslo","zip":"0150"}}, "items": [{"sku":"a","qty":1,"price":2.5},{"sku":"b","qty":3,"price":0}], "tags": ["x",null]}"#,
                r#"{"id": "o2", "customer": {"name":"Bo","email":null,"address":{"city":"Rome"}}, "items": [{"sku":"c","qty":2,"price":1e1,"note":"gift"}], "tags": [], "codes": [[1,2],[]]}"#,
                r#"{"id": "o3", "customer": {"name":"Cy","email":"c@d.e","address":{"city":"Lima"}}, "items": [{"sku":"d","qty":9,"price":4}], "tags": ["y"], "codes": []}"#,
            ],
        );
    }
}

#[cfg(test)]
mod agreement_nested_closed {
    use super::tests::agree;

    /// Closed records inside records and lists, refinements as list
    /// elements, a declared type with a warning inside a list, null
    /// elements: every failure named as the line is read, in
    /// `validate`'s order.
    #[test]
    fn closed_nested_records_refined_elements_and_nested_warnings() {
        agree(
            r#"type Mail = String require at: matches(self, r"@")
type Part : TypeContract = {
    name: String
    n: Int
    warn small: n < 10
}
type Box : TypeContract = {
    id: Int
    parts: List[Part]
    mails: List[Mail | Null]
    meta: { kind: "a" | "b", size?: Int }
    main?: Part
    require some: len(parts) > 0
}"#,
            "Box",
            &[
                r#"{"id": 1, "parts": [{"name": "p", "n": 3}], "mails": ["a@b", null], "meta": {"kind": "a"}}"#,
                r#"{"meta": {"size": 4, "kind": "b"}, "mails": [], "parts": [{"n": 30, "name": "q"}, {"name": "r", "n": 1}], "id": 2, "main": {"name": "m", "n": 12}}"#,
                r#"{"id": 3, "parts": [], "mails": ["x@y"], "meta": {"kind": "a", "size": 1}, "main": {"name": "z", "n": 0}}"#,
            ],
        );
    }
}

#[cfg(test)]
mod agreement_flat {
    use super::tests::agree;

    /// The standard library's refinements, whose rules call functions with
    /// native twins: checked on the token by the twin.
    #[test]
    fn standard_library_refinements() {
        agree(
            r#"type Visit : TypeContract = {
    mail: Email
    at: Timestamp | Null
    country?: CountryCode
    day?: Date
    require dated: at? != null or day? != null
}"#,
            "Visit",
            &[
                r#"{"mail": "a@b.co", "at": "2024-02-29T13:45:00Z", "country": "GB"}"#,
                r#"{"mail": "x.y@example.org", "at": null, "day": "2023-12-31"}"#,
                r#"{"mail": "nobody", "at": "2023-02-29T00:00:00Z", "country": "XX", "day": "2024-13-01"}"#,
            ],
        );
    }

    /// A closed record of scalars: literals, a refinement declared
    /// directly and one in a union, `Any`, optional fields read by rules,
    /// a warning. Failures are named as lines are read.
    #[test]
    fn closed_scalars_with_refinements_and_warnings() {
        agree(
            r#"type Code = String require shape: matches(self, r"^[A-Z]{2}-[0-9]+$") require short: matches(self, r"^.{0,8}$")
type Mail = String require at: matches(self, r"@")
type Ticket : TypeContract = {
    code: Code
    state: "new" | "done"
    urgent: Bool
    contact?: Mail | Null
    size?: Int
    note?: Any
    require sized: size? == null or size? > 0
    require done_ok: state != "done" or not urgent
    warn big: size? == null or size? < 100
}"#,
            "Ticket",
            &[
                r#"{"code": "AB-1", "state": "new", "urgent": true, "contact": "a@b", "size": 3}"#,
                r#"{"code": "CD-22", "state": "done", "urgent": false, "note": [1, {"x": null}]}"#,
                r#"{"code": "EF-333", "state": "new", "urgent": false, "contact": null, "size": 150}"#,
            ],
        );
    }
}

#[cfg(test)]
mod agreement_folds {
    use super::tests::agree;

    /// The order lines of `folds_*` below.
    const ORDERS: &[&str] = &[
        r#"{"id": "o1", "kind": "buy", "lines": [{"sku": "a", "qty": 2, "price": 300}, {"sku": "b", "qty": 1, "price": 50, "note": "x"}], "kept": [], "tags": ["t"], "total": 650}"#,
        r#"{"id": "o2", "kind": "gift", "lines": [{"sku": "c", "qty": 7, "price": 10, "gift": true, "note": "none"}], "spare": [{"sku": "s", "qty": 1, "price": 1, "note": "y"}], "kept": [{"sku": "k", "qty": 1, "price": 5, "note": "z"}], "tags": [], "total": 70}"#,
        r#"{"id": "o3", "kind": "buy", "lines": [], "kept": [], "tags": ["a", "b"], "total": 0, "more": 1}"#,
        r#"{"id": "o4", "kind": "buy", "lines": [{"sku": "d", "qty": 4611686018427387904, "price": 4, "note": "none"}], "kept": [], "tags": [], "total": 1}"#,
        r#"{"id": "o5", "kind": "gift", "lines": [{"sku": "", "qty": 6, "price": 1, "gift": false}, {"sku": "e", "qty": 9, "price": 2, "note": "w"}], "kept": [], "tags": [], "total": 24}"#,
        r#"{"id": "o6", "kind": "buy", "lines": [{"sku": "f", "qty": 1, "price": 99999, "note": "a"}, {"sku": "g", "qty": 1, "price": 1, "note": "b"}, {"sku": "h", "qty": 1, "price": 1, "note": "c"}, {"sku": "i", "qty": 1, "price": 1, "note": "d"}], "kept": [], "tags": [], "total": 100002}"#,
    ];

    /// The order contract, with `note` declared as `note`.
    fn orders(note: &str) -> String {
        format!(
            r#"type Line : DataContract = {{
    sku: String
    qty: Int
    price: Int
    gift?: Bool
    {note}
    require positive_qty: qty >= 1
}}
type Order : DataContract = {{
    id: String
    kind: "buy" | "gift"
    lines: List[Line]
    spare?: List[Line]
    kept: List[Line]
    tags: List[String]
    total: Int
    require total_is_sum: total == lines | map(l => l.qty * l.price) | sum()
    require few_big: lines | filter(l => l.qty > 5) | count() <= 1
    require named: all(lines, l => len(l.sku) > 0)
    require gift_kind: kind == "gift" => any(lines, l => l.gift?)
    require noted: lines | filter(l => l.note? != "none") | map(l => l.qty) | sum() < 50
    require tagged: len(tags) <= len(lines) + 2
    require huge_few: lines | map(l => l.qty) | filter(q => q > 8) | count() <= 1
    require spare_small: (spare? | map(l => l.qty) | sum()) ?? 0 < 10
    require kept_whole: kept == [] or kept[0].qty > 0
    require within_total: all(lines, l => l.price <= total or kind == "gift")
    require kept_sum: (kept | map(l => l.price) | sum()) >= 0
    warn many: len(lines) < 4
    warn cheap: lines | map(l => l.price) | sum() < 100000
}}"#
        )
    }

    /// Rules that fold over lists of records (`map`, `filter`, `sum`,
    /// `count`, `len`, `all`, `any`), which the line check runs over the
    /// elements' rows without building the list; element fields optional
    /// and soft-read; a fold whose product overflows (an `eval` failure);
    /// a list also read whole, and one folded through `?`, which are built.
    #[test]
    fn folds_over_lists_of_records() {
        agree(&orders("note?: String"), "Order", ORDERS);
    }

    /// The same with a defaulted element field, which the rows hold as
    /// `validate` fills it.
    #[test]
    fn folds_over_lists_of_records_with_defaults() {
        agree(&orders("note: String = \"none\""), "Order", ORDERS);
    }
}

#[cfg(test)]
mod generated {
    //! Contracts nobody wrote by hand: random kinds, nesting, unions,
    //! literals, refinements, rules, warnings, named checks, unique keys
    //! and defaults, each with lines of valid records. The line check must
    //! agree with the ordinary path on them and on their broken copies
    //! (`tests::agree`).

    use super::tests::{agree, session, Dice};
    use crate::runtime::json::Decoder;
    use crate::runtime::validate::validate_value;
    use crate::runtime::value::Value;

    /// A field's type, as written and as its valid values are made.
    enum Ty {
        Int,
        Float,
        Text,
        Bool,
        IntOrText,
        Literals,
        /// `Small`, an `Int` refined below 1000.
        Small,
        /// `Word`, a `String` refined to lower-case letters.
        Word,
        List(Box<Ty>),
        Map(Box<Ty>),
        Nullable(Box<Ty>),
        /// The declared record type `Place`.
        Place,
        /// An inline record.
        Inline(Vec<Field>),
    }

    struct Field {
        name: String,
        ty: Ty,
        optional: bool,
        default: Option<&'static str>,
    }

    fn scalar(dice: &mut Dice) -> Ty {
        match dice.below(9) {
            0 => Ty::Int,
            1 => Ty::Float,
            2 => Ty::Text,
            3 => Ty::Bool,
            4 => Ty::IntOrText,
            5 => Ty::Literals,
            6 => Ty::Small,
            7 => Ty::Word,
            _ => Ty::Int,
        }
    }

    fn ty(dice: &mut Dice, depth: usize) -> Ty {
        if depth >= 2 {
            return scalar(dice);
        }
        match dice.below(12) {
            0 => Ty::List(Box::new(ty(dice, depth + 1))),
            1 => Ty::Map(Box::new(scalar(dice))),
            2 => Ty::Nullable(Box::new(scalar(dice))),
            3 => Ty::Place,
            4 => Ty::Inline(fields(dice, depth + 1, "i", false)),
            _ => scalar(dice),
        }
    }

    /// Fields; defaults only where `defaults` (a contract kind's own).
    fn fields(dice: &mut Dice, depth: usize, prefix: &str, defaults: bool) -> Vec<Field> {
        (0..1 + dice.below(7))
            .map(|i| {
                let ty = ty(dice, depth);
                let optional = dice.below(4) == 0;
                // A default for a scalar that is not optional, now and then.
                let default = match (&ty, optional || !defaults, dice.below(4)) {
                    (Ty::Int | Ty::Small, false, 0) => Some("5"),
                    (Ty::Text, false, 0) => Some("\"dflt\""),
                    (Ty::Bool, false, 0) => Some("false"),
                    _ => None,
                };
                Field {
                    name: format!("{prefix}{i}"),
                    ty,
                    optional,
                    default,
                }
            })
            .collect()
    }

    fn ty_text(t: &Ty) -> String {
        match t {
            Ty::Int => "Int".into(),
            Ty::Float => "Float".into(),
            Ty::Text => "String".into(),
            Ty::Bool => "Bool".into(),
            Ty::IntOrText => "Int | String".into(),
            Ty::Literals => "\"red\" | \"green\" | 3".into(),
            Ty::Small => "Small".into(),
            Ty::Word => "Word".into(),
            Ty::List(t) => format!("List[{}]", ty_text(t)),
            Ty::Map(t) => format!("Map[{}]", ty_text(t)),
            Ty::Nullable(t) => format!("{} | Null", ty_text(t)),
            Ty::Place => "Place".into(),
            Ty::Inline(fs) => {
                let fs: Vec<String> = fs.iter().map(field_text).collect();
                format!("{{ {} }}", fs.join(", "))
            }
        }
    }

    fn field_text(f: &Field) -> String {
        let mark = if f.optional { "?" } else { "" };
        let default = f.default.map(|d| format!(" = {d}")).unwrap_or_default();
        format!("{}{mark}: {}{default}", f.name, ty_text(&f.ty))
    }

    /// A valid value of `t`, as JSON.
    fn value(t: &Ty, dice: &mut Dice) -> String {
        match t {
            Ty::Int => (dice.below(200) as i64 - 20).to_string(),
            Ty::Small => dice.below(999).to_string(),
            Ty::Float => ["1.5", "2", "-0.25", "3e2"][dice.below(4)].into(),
            Ty::Text => ["\"a\"", "\"b c\"", "\"\"", "\"\\u00e9t\\u00e9\""][dice.below(4)].into(),
            Ty::Word => ["\"abc\"", "\"x y\""][dice.below(2)].into(),
            Ty::Bool => ["true", "false"][dice.below(2)].into(),
            Ty::IntOrText => ["7", "\"seven\""][dice.below(2)].into(),
            Ty::Literals => ["\"red\"", "\"green\"", "3"][dice.below(3)].into(),
            Ty::List(item) => {
                let items: Vec<String> = (0..dice.below(3)).map(|_| value(item, dice)).collect();
                format!("[{}]", items.join(", "))
            }
            Ty::Map(item) => format!("{{\"k\": {}}}", value(item, dice)),
            Ty::Nullable(inner) if dice.below(3) == 0 => "null".into(),
            Ty::Nullable(inner) => value(inner, dice),
            Ty::Place => match dice.below(2) {
                0 => "{\"city\": \"Oslo\"}".into(),
                _ => "{\"city\": \"Rome\", \"zip\": 10}".into(),
            },
            Ty::Inline(fs) => record(fs, dice),
        }
    }

    /// A record of `fields`, as one JSON line with `", "` between fields
    /// (as `mutate` expects); optional and defaulted fields left out now
    /// and then.
    fn record(fields: &[Field], dice: &mut Dice) -> String {
        let mut parts = Vec::new();
        for f in fields {
            if !(f.optional || f.default.is_some()) || dice.below(3) != 0 {
                parts.push(format!("\"{}\": {}", f.name, value(&f.ty, dice)));
            }
        }
        format!("{{{}}}", parts.join(", "))
    }

    /// A contract `G` and its declarations, with rules over its top-level
    /// fields.
    fn contract(dice: &mut Dice) -> (String, Vec<Field>) {
        let kind = ["DataContract", "TypeContract", "Data", "Type"][dice.below(4)];
        let contract = kind.ends_with("Contract");
        let fields = fields(dice, 0, "f", contract);
        let mut members: Vec<String> = fields.iter().map(field_text).collect();
        for f in &fields {
            let read = if f.optional {
                format!("{}?", f.name)
            } else {
                f.name.clone()
            };
            let rule = match (&f.ty, dice.below(3)) {
                (Ty::Int, 0) if !f.optional => Some(format!("require {0}_low: {0} >= -20", f.name)),
                (Ty::Int | Ty::Small, 1) if !f.optional => {
                    Some(format!("warn {0}_seven: {0} != 7", f.name))
                }
                (Ty::Text, 0) => Some(format!(
                    "require {0}_short: len({read} ?? \"\") < 40",
                    f.name
                )),
                (Ty::Text, 1) if !f.optional => Some(format!("validate {} with short", f.name)),
                (Ty::List(_), 0) if !f.optional => {
                    Some(format!("require {0}_few: len({0}) <= 3", f.name))
                }
                (Ty::Bool, 0) if !f.optional => Some(format!("warn {0}_set: {0} or true", f.name)),
                _ => None,
            };
            members.extend(rule.filter(|_| contract));
        }
        // A unique key on a required scalar, now and then.
        let key = fields.iter().find(|f| {
            !f.optional && f.default.is_none() && matches!(f.ty, Ty::Int | Ty::Text | Ty::Word)
        });
        if let Some(key) = key.filter(|_| contract && dice.below(3) == 0) {
            members.push(format!("unique {}", key.name));
        }
        let declarations = format!(
            "fn short(s) = len(s) < 12
type Small = Int require small: self < 1000
type Word = String require word: matches(self, r\"^[a-z ]+$\")
type Place : {} = {{ city: String, zip?: Int }}
type G : {kind} = {{
    {}
}}",
            ["Data", "Type"][dice.below(2)],
            members.join("\n    ")
        );
        (declarations, fields)
    }

    #[test]
    fn generated_contracts_agree() {
        let mut dice = Dice(0x2F_6B1D_A3C4_9E27);
        let mut agreed = 0;
        for _ in 0..32 {
            let (declarations, fields) = contract(&mut dice);
            let s = session(&declarations);
            let (interp, g) = (s.interp().clone(), s.contract("G").expect("declared"));
            // The lines the ordinary path finds valid, without warnings.
            let lines: Vec<String> = (0..12)
                .map(|_| record(&fields, &mut dice))
                .filter(|line| {
                    let v = Decoder::new().decode(line.as_bytes()).expect("well formed");
                    matches!(validate_value(&interp, &g, v, None, None),
                        Ok(Value::Ok(ok)) if ok.warnings.is_empty())
                })
                .collect();
            if lines.len() < 3 {
                continue;
            }
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            agree(&declarations, "G", &lines);
            agreed += 1;
        }
        assert!(
            agreed >= 16,
            "only {agreed} generated contracts had valid lines"
        );
    }
}
