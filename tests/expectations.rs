//! Expectations over a whole stream (language.md §4.11): declared, checked,
//! compiled with their identities (§4.7), listed by `hql contract`, and
//! judged when a validated stream ends. Their static errors are in
//! `static_errors.rs`, their layout in `fmt.rs`.

mod common;
use common::*;

const ORDERS: &str = "\
/// Orders as delivered.
@version(\"1.0.0\")
type Order : DataContract = {
    order_id: String
    customer_id: String
    email?: String
    placed: Timestamp
    amount: Float
    address?: { city: String }

    expect rows >= 1000
    expect budget: failures <= 1%
    expect missing(email) <= 5%
    expect warn distinct(customer_id) >= 10
    expect fresh: age(placed) <= 3d
    expect 0.5% >= missing(address.city)
}

type BigOrder : Order = {
    expect big: min(amount) >= 100
}
";

/// `hql contract FILE [TYPE]` of `text`.
fn contract(text: &str, ty: &[&str]) -> Run {
    let dir = Scratch::new("expect-contract");
    dir.write("c.hql", text);
    let mut args = vec!["contract", "c.hql"];
    args.extend(ty);
    dir.hql(&args)
}

#[test]
fn contract_lists_each_expectation_with_its_identity_and_canonical_text() {
    let run = contract(ORDERS, &["Order"]);
    assert_eq!((run.err.as_str(), run.status), ("", 0));
    assert_eq!(
        run.out,
        "\
type Order: DataContract (open)
  version: 1.0.0
  about: Orders as delivered.
  fields:
    order_id: String
    customer_id: String  (read by Order.distinct(customer_id) >= 10)
    email?: String  (read by Order.missing(email) <= 5%)
    placed: Timestamp  (read by Order.fresh)
    amount: Float
    address?: a record  (read by Order.0.5% >= missing(address.city))
      city: String
  expectations:
    expect Order.rows >= 1000: rows >= 1000
    expect Order.budget: failures <= 1%
    expect Order.missing(email) <= 5%: missing(email) <= 5%
    expect warn Order.distinct(customer_id) >= 10: distinct(customer_id) >= 10
    expect Order.fresh: age(placed) <= 3d
    expect Order.0.5% >= missing(address.city): 0.5% >= missing(address.city)
"
    );
}

#[test]
fn inherited_expectations_keep_their_identities_and_come_first() {
    let run = contract(ORDERS, &["BigOrder"]);
    assert_eq!(run.status, 0, "{}", run.err);
    let listed: Vec<&str> = run
        .out
        .lines()
        .skip_while(|l| *l != "  expectations:")
        .skip(1)
        .map(|l| l.split(':').next().unwrap_or_default().trim())
        .collect();
    assert_eq!(
        listed,
        [
            "expect Order.rows >= 1000",
            "expect Order.budget",
            "expect Order.missing(email) <= 5%",
            "expect warn Order.distinct(customer_id) >= 10",
            "expect Order.fresh",
            "expect Order.0.5% >= missing(address.city)",
            "expect BigOrder.big",
        ]
    );
}

#[test]
fn reformatting_or_reordering_never_changes_an_identity() {
    let one = "type T : DataContract = {\n a?: Int\n b: Float\n expect missing(a)<=5% and   sum(b)>0\n expect warn rows>0\n}\n";
    let other = "type T : DataContract = {\n b: Float\n expect warn rows\n   > 0\n\n expect (missing( a ) <= 5%)\n   and (sum(b) > 0)\n a?: Int\n}\n";
    let ids = |text: &str| -> Vec<String> {
        let run = contract(text, &[]);
        assert_eq!(run.status, 0, "{}", run.err);
        let mut ids: Vec<String> = run
            .out
            .lines()
            .filter(|l| l.starts_with("    expect"))
            .map(str::to_string)
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(
        ids(one),
        [
            "    expect T.missing(a) <= 5% and sum(b) > 0: missing(a) <= 5% and sum(b) > 0",
            "    expect warn T.rows > 0: rows > 0",
        ]
    );
    assert_eq!(ids(one), ids(other));
}

#[test]
fn a_failed_expectation_prints_the_value_then_stops_the_run() {
    let src = format!(
        "{ORDERS}[{{order_id: \"a\", customer_id: \"c\", placed: \"2024-01-01T00:00:00Z\", amount: 1.5}}, {{order_id: \"b\"}}] | validate(Order) | report()\n\"not reached\"\n"
    );
    let (out, err, status) = run(&src, &[]);
    assert_eq!(status, 1, "{err}");
    // The statement's value first, with each failed expectation in by_rule.
    assert_eq!(
        lines(&out),
        ["{total: 2, ok: 1, err: 1, warned: 0, by_rule: [\
{rule: \"Order.0.5% >= missing(address.city)\", kind: \"expect\", count: 1}, \
{rule: \"Order.amount.missing\", kind: \"missing\", count: 1}, \
{rule: \"Order.budget\", kind: \"expect\", count: 1}, \
{rule: \"Order.customer_id.missing\", kind: \"missing\", count: 1}, \
{rule: \"Order.distinct(customer_id) >= 10\", kind: \"expect_warn\", count: 1}, \
{rule: \"Order.fresh\", kind: \"expect\", count: 1}, \
{rule: \"Order.missing(email) <= 5%\", kind: \"expect\", count: 1}, \
{rule: \"Order.placed.missing\", kind: \"missing\", count: 1}, \
{rule: \"Order.rows >= 1000\", kind: \"expect\", count: 1}]}"]
    );
    let err = squash(&err);
    assert!(
        err.starts_with(
            "warning: expectation Order.distinct(customer_id) >= 10 failed: distinct(customer_id) >= 10 (distinct(customer_id) is 1)"
        ),
        "{err}"
    );
    // Every failed error expectation is named; the diagnostic is the first.
    for line in [
        "error: expectation Order.budget failed: failures <= 1% (failures is 1 of 2 rows (50%))",
        "error: expectation Order.missing(email) <= 5% failed: missing(email) <= 5% (missing(email) is 2 of 2 rows (100%))",
        "error: expectation Order.fresh failed: age(placed) <= 3d (age(placed) is",
        "error: expectation Order.0.5% >= missing(address.city) failed: 0.5% >= missing(address.city) (missing(address.city) is 2 of 2 rows (100%))",
        "hql::expectation × expectation Order.rows >= 1000 failed: rows >= 1000 (rows is 2)",
        "help: also failed (above): Order.budget, Order.missing(email) <= 5%, Order.fresh, Order.0.5% >= missing(address.city); nothing is written",
    ] {
        assert!(err.contains(line), "missing {line:?} in {err}");
    }
}

/// Records of every shape a measure meets: absent, null, wrong-typed and
/// repeated values, a nested path, a line that is not JSON and one that
/// is not a record.
const MEASURED: &str = r#"{"id":"a","e":"x","n":1,"amt":5,"t":"2026-12-01T00:00:00Z","c":{"k":"p"}}
{"id":"b","e":null,"n":null,"amt":500,"t":"2026-12-02T00:00:00Z"}
{"id":"a","amt":"bad","t":"2026-11-01T00:00:00Z","c":{"k":"q"}}
{"id":"c","e":"y","n":3,"amt":-1.5,"t":"2026-12-03T12:00:00Z","c":{}}
{"id":
[1,2]
{"id":null,"amt":7,"t":"nope"}
"#;

const MEASURED_TYPE: &str = "type T : DataContract = {
    id: String | Null
    e?: String | Null
    n?: Int | Null
    amt: Float
    t: Timestamp
    c?: { k?: String }
";

/// The warnings of `hql run --now 2026-12-05T00:00:00Z` over `MEASURED`
/// with the given expectations in `T`, and the number it counted.
fn measured(expectations: &str, args: &[&str]) -> Vec<String> {
    let dir = Scratch::new("expect-measured");
    dir.write("d.jsonl", MEASURED);
    let program = format!(
        "{MEASURED_TYPE}{expectations}}}\nsource(file(\"d.jsonl\"), Json) | validate(T) | count()\n"
    );
    let mut all = vec!["--now", "2026-12-05T00:00:00Z"];
    all.extend_from_slice(args);
    let run = dir.run(&program, &all);
    assert_eq!((run.out.as_str(), run.status), ("7\n", 0), "{}", run.err);
    run.err.lines().map(str::to_string).collect()
}

#[test]
fn each_count_measure_counts_what_section_4_11_says() {
    // `== -1` never holds, so each warning shows the measure's value.
    let measures = [
        ("rows", "7"),
        ("failures", "4"),
        ("missing(e)", "2"),
        ("nulls(e)", "1"),
        ("missing(c.k)", "3"),
        ("nulls(c.k)", "0"),
        ("invalid(amt)", "1"),
        ("invalid(t)", "1"),
        ("invalid(c)", "0"),
        ("duplicates(id)", "1"),
        ("duplicates(id, e)", "0"),
        ("distinct(id)", "3"),
        ("distinct(c.k)", "2"),
        ("orphans(id, [\"a\", \"b\"])", "1"),
    ];
    let expectations: String = measures
        .iter()
        .map(|(m, _)| format!("    expect warn {m} == -1\n"))
        .collect();
    let warnings = measured(&expectations, &[]);
    let wanted: Vec<String> = measures
        .iter()
        .map(|(m, v)| format!("warning: expectation T.{m} == -1 failed: {m} == -1 ({m} is {v})"))
        .collect();
    assert_eq!(warnings, wanted);
}

#[test]
fn value_measures_read_values_that_passed_their_checks_and_age_reads_now() {
    // Each of these holds: no warning. `amt` is 5, 500, -1.5 and 7 where it
    // passed (the record whose `t` failed still gives its `amt`); "bad" is
    // not read. `n` is 1 and 3, its null skipped. The latest valid `t` is
    // 2026-12-03T12:00:00Z, 36 hours before `--now`.
    let holding = "    expect warn min(amt) == -1.5
    expect warn max(amt) == 500
    expect warn sum(amt) == 510.5
    expect warn avg(amt) == 127.625
    expect warn sum(n) == 4 and avg(n) == 2 and min(n) == 1
    expect warn age(t) <= 36h and age(t) >= 2160m and age(t) == 129600s
    expect warn age(t) < 2d and not (age(t) < 1d)
";
    assert_eq!(measured(holding, &[]), Vec::<String>::new());
    let failing = "    expect warn late: age(t) < 36h\n    expect warn big: max(amt) > 500\n";
    assert_eq!(
        measured(failing, &[]),
        [
            "warning: expectation T.late failed: age(t) < 36h (age(t) is 1d 12h 0m 0s)",
            // A value from data is never shown.
            "warning: expectation T.big failed: max(amt) > 500",
        ]
    );
}

#[test]
fn an_absent_measure_makes_its_condition_hold() {
    // No record has a valid `c.k` number, and none has `zz`: min, avg and
    // age over no values are absent, and an absent condition holds.
    let src = "type T : DataContract = {\n a?: Int\n at?: Date\n expect min(a) > 100\n expect avg(a) == 3\n expect age(at) < 1d\n}\n[{a: \"x\"}, {b: 1}] | validate(T) | count()\n[] | validate(T) | count()\n";
    assert_eq!(ok_out(src, &[]), "2\n0\n");
}

#[test]
fn shares_compare_exactly_at_the_boundary() {
    // 1 failure in 20 rows is 5%: `<= 5%` holds, `< 5%` does not.
    let rows = |bad: usize| -> String {
        let items: Vec<String> = (0..20)
            .map(|i| {
                if i < bad {
                    "{a: \"x\"}".into()
                } else {
                    format!("{{a: {i}}}")
                }
            })
            .collect();
        format!("[{}]", items.join(", "))
    };
    let ty = |cond: &str| format!("type T : DataContract = {{\n a: Int\n expect {cond}\n}}\n");
    let holds = format!(
        "{}{} | validate(T) | count()\n",
        ty("failures <= 5%"),
        rows(1)
    );
    assert_eq!(ok_out(&holds, &[]), "20\n");
    let holds = format!(
        "{}{} | validate(T) | count()\n",
        ty("5% >= invalid(a)"),
        rows(1)
    );
    assert_eq!(ok_out(&holds, &[]), "20\n");
    let fails = format!(
        "{}{} | validate(T) | count()\n",
        ty("failures < 5%"),
        rows(1)
    );
    let (out, err) = runtime_error(&fails, &[]);
    assert_eq!(out, "20\n");
    assert!(
        squash(&err).contains("failures < 5% (failures is 1 of 20 rows (5%))"),
        "{err}"
    );
    let fails = format!(
        "{}{} | validate(T) | count()\n",
        ty("failures <= 5%"),
        rows(2)
    );
    let (_, err) = runtime_error(&fails, &[]);
    assert!(
        squash(&err).contains("(failures is 2 of 20 rows (10%))"),
        "{err}"
    );
}

#[test]
fn orphans_read_their_keys_from_a_source_once() {
    let files = [
        ("customers.jsonl", "{\"id\": 1}\n{\"id\": 2}\n"),
        (
            "orders.jsonl",
            "{\"c\": 1}\n{\"c\": 3}\n{\"c\": 3}\n{\"c\": null}\n{}\n",
        ),
    ];
    let src = "type O : DataContract = {\n c?: Int | Null\n expect warn known: orphans(c, source(file(\"customers.jsonl\"), Json) | map(r => r.id)) == 0\n}\nsource(file(\"orders.jsonl\"), Json) | validate(O) | count()\n";
    let (out, err, status) = run(src, &files);
    assert_eq!((out.as_str(), status), ("5\n", 0));
    assert_eq!(
        err,
        "warning: expectation O.known failed: orphans(c, source(file(\"customers.jsonl\"), Json) | map(r => r.id)) == 0 (orphans(c, source(file(\"customers.jsonl\"), Json) | map(r => r.id)) is 2)\n"
    );
}

#[test]
fn a_stream_judged_twice_warns_once_and_a_consumer_that_stops_early_judges_nothing() {
    let src = "type T : DataContract = {\n a: Int\n expect warn few: rows <= 1\n expect many: rows >= 100\n}\nlet s = [{a: 1}, {a: 2}] | validate(T)\ns | take(1) | count()\ns | first()\ns | any(r => is_ok(r))\n";
    // Each consumer stopped before the end: nothing judged.
    assert_eq!(ok_out(src, &[]), "1\nok({a: 1})\ntrue\n");
    let src = "type T : DataContract = {\n a: Int\n expect warn few: rows <= 1\n}\nlet s = [{a: 1}, {a: 2}] | validate(T)\ns | count()\ns | collect() | len()\n";
    let (out, err, status) = run(src, &[]);
    assert_eq!((out.as_str(), status), ("2\n2\n", 0));
    assert_eq!(
        err,
        "warning: expectation T.few failed: rows <= 1 (rows is 2)\n"
    );
}

#[test]
fn expectations_of_a_nested_type_are_not_judged_inside_the_outer_record() {
    let src = "type Inner : DataContract = {\n x: Int\n expect rows >= 100\n}\ntype Outer : DataContract = {\n inner: Inner\n}\n[{inner: {x: 1}}] | validate(Outer) | count()\n";
    let (out, _, status) = run(src, &[]);
    assert_eq!((out.as_str(), status), ("1\n", 0));
}

#[test]
fn a_failure_budget_stops_reading_and_writes_nothing() {
    let dir = Scratch::new("expect-budget");
    let mut lines = String::new();
    for i in 0..5000 {
        if i % 10 == 3 {
            lines.push_str("{\"a\": \"bad\"}\n");
        } else {
            lines.push_str(&format!("{{\"a\": {i}}}\n"));
        }
    }
    dir.write("in.jsonl", &lines);
    dir.write("ok.jsonl", "kept\n");
    dir.write("bad.jsonl", "kept too\n");
    let program = "type T : DataContract = {\n a: Int\n expect budget: failures <= 3\n}\nsource(file(\"in.jsonl\"), Json) | validate(T) | route(ok: file(\"ok.jsonl\"), err: file(\"bad.jsonl\"))\n\"not reached\"\n";
    for threads in [&[][..], &["--threads", "2"][..]] {
        let run = dir.run(program, threads);
        assert_eq!((run.out.as_str(), run.status), ("", 1), "{}", run.err);
        let err = squash(&run.err);
        assert!(
            err.contains("hql::expectation × expectation T.budget failed: failures is more than 3 (failures <= 3); reading stopped"),
            "{err}"
        );
        assert!(err.contains("nothing is written"), "{err}");
        assert_eq!(dir.read("ok.jsonl"), "kept\n");
        assert_eq!(dir.read("bad.jsonl"), "kept too\n");
        assert_eq!(dir.temporaries(), Vec::<String>::new());
    }
    // A share is no budget: it is judged at the end, after the value prints.
    let program = program.replace("failures <= 3", "failures <= 1%");
    let run = dir.run(&program, &[]);
    assert_eq!(run.status, 1);
    assert!(
        run.out.starts_with("{total: 5000, ok: 4500, err: 500,"),
        "{}",
        run.out
    );
    assert!(!run.out.contains("not reached"));
    assert_eq!(dir.read("ok.jsonl"), "kept\n");
}

#[test]
fn now_comes_from_the_flag_or_the_environment_and_is_checked() {
    let dir = Scratch::new("expect-now");
    dir.write("d.jsonl", "{\"t\": \"2026-01-01\"}\n");
    let program = "type T : DataContract = {\n t: Date\n expect warn age(t) <= 1d\n}\nsource(file(\"d.jsonl\"), Json) | validate(T) | count()\n";
    let run = dir.run(program, &["--now", "2026-01-02T00:00:00Z"]);
    assert_eq!((run.err.as_str(), run.status), ("", 0));
    let run = dir.run(program, &["--now", "2026-01-02T00:00:01Z"]);
    assert_eq!(
        run.err,
        "warning: expectation T.age(t) <= 1d failed: age(t) <= 1d (age(t) is 1d 0h 0m 1s)\n"
    );
    let run = dir.run(program, &["--now", "yesterday"]);
    assert_eq!(run.status, 2);
    assert!(
        run.err.contains("`yesterday` is not an RFC 3339 time"),
        "{}",
        run.err
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", "main.hql"])
        .current_dir(&dir.path)
        .env("HQL_NOW", "2026-01-03T00:00:00+01:00")
        .output()
        .expect("hql runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "warning: expectation T.age(t) <= 1d failed: age(t) <= 1d (age(t) is 1d 23h 0m 0s)\n"
    );
    // Every command reads it, and refuses a bad one before anything runs.
    dir.write(
        "c.hql",
        "type T : DataContract = {\n t: Date\n expect stale: age(t) <= 1d\n}\n",
    );
    let vet = |now: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
            .args(["vet", "c.hql", "d.jsonl"])
            .current_dir(&dir.path)
            .env("HQL_NOW", now)
            .output()
            .expect("hql runs")
    };
    assert_eq!(vet("2026-01-02T00:00:00Z").status.code(), Some(0));
    let late = vet("2026-01-03T00:00:00Z");
    assert_eq!(late.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&late.stderr).contains("(age(t) is 2d 0h 0m 0s)"));
    let bad = vet("soon");
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("HQL_NOW: `soon` is not an RFC 3339 time")
    );
}

#[test]
fn expect_is_a_name_after_a_dot_as_a_key_and_as_a_field() {
    let src = "type T : DataContract = {\n expect: Int\n expect?: Int\n}\n";
    let (_, err, status) = run(src, &[]);
    // A field declared twice, by name: `expect` is a field's name here.
    assert_eq!(status, 2);
    assert!(err.contains("field `expect` is declared twice"), "{err}");
    let src = "type T : DataContract = {\n expect: Int\n require self.expect % 2 == 0\n}\nlet r = {expect: 10}\n[r.expect % 3, r[\"expect\"]]\n[{expect: 4}] | validate(T) | oks() | map(t => t.expect % 3)\n";
    assert_eq!(ok_out(src, &[]), "[1, 10]\n[1]\n");
}

#[test]
fn the_counting_path_measures_as_the_ordinary_path_does() {
    // A file is counted line by line on the counting path; standard input
    // takes the ordinary path. Both must give the same report, the same
    // warnings and the same stop.
    let dir = Scratch::new("expect-paths");
    let mut data = String::from(MEASURED);
    for i in 0..400 {
        let line = match i % 9 {
            0 => format!("{{\"id\":\"k{}\",\"amt\":{i},\"t\":\"2026-11-{:02}T00:00:00Z\"}}", i % 37, 1 + i % 28),
            1 => format!("{{\"id\":null,\"e\":null,\"amt\":-{i}.5,\"t\":\"2026-12-01\",\"c\":{{\"k\":\"x{}\"}}}}", i % 5),
            2 => "{\"id\":\"z\",\"amt\":true,\"t\":\"2026-12-01T00:00:00Z\"}".to_string(),
            3 => "   ".to_string(),
            4 => format!("{{\"id\":\"k{i}\",\"n\":{i},\"amt\":1e3,\"t\":\"2026-12-02T10:00:00Z\",\"extra\":[1]}}"),
            5 => "{\"id\":\"a\",\"amt\":2,\"t\":\"2026-12-02T10:00:00Z\",\"c\":{\"k\":7}}".to_string(),
            6 => "[]".to_string(),
            7 => format!("{{\"id\":\"q{}\",\"e\":\"m{}\",\"amt\":0.25,\"t\":\"2026-12-04T23:59:59Z\",\"c\":null}}", i % 3, i % 4),
            _ => "{\"id\":".to_string(),
        };
        data.push_str(&line);
        data.push('\n');
    }
    // Large enough to be split among threads (`--threads 2`), in chunks
    // whose measures another thread adds in the order of the file.
    let block = data[MEASURED.len()..].to_string();
    while data.len() < 3 << 20 {
        data.push_str(&block);
    }
    // The extremes in the last chunk only: the smallest and largest
    // amounts, and the latest instant.
    data.push_str("{\"id\":\"end1\",\"amt\":-1000000,\"t\":\"2026-12-05T00:00:00Z\"}\n");
    data.push_str("{\"id\":\"end2\",\"amt\":1000000,\"t\":\"2026-12-01T00:00:00Z\"}\n");
    dir.write("d.jsonl", &data);
    // Presence and null only: a line that fails is measured from what the
    // check saw of it, not decoded.
    let seen = "    expect warn rows == -1
    expect warn failures == -1
    expect warn missing(e) == -1
    expect warn nulls(e) == -1
    expect warn missing(c) == -1
";
    for consumer in ["report()", "oks() | count()"] {
        let program = format!("{MEASURED_TYPE}{seen}}}\nSOURCE | validate(T) | {consumer}\n");
        let file = dir.run(
            &program.replace("SOURCE", "source(file(\"d.jsonl\"), Json)"),
            &[],
        );
        dir.write(
            "main.hql",
            program.replace("SOURCE", "source(stdin(), Json)"),
        );
        let stdin = dir.hql_stdin(&["run", "main.hql"], &data);
        assert_eq!(file.status, 0, "{}", file.err);
        assert_eq!((&file.out, &file.err), (&stdin.out, &stdin.err));
        assert_eq!(file.err.lines().count(), 5, "{}", file.err);
    }
    let measures = "    expect warn rows == -1
    expect warn failures == -1
    expect warn missing(e) == -1
    expect warn nulls(e) == -1
    expect warn missing(c.k) == -1
    expect warn invalid(amt) == -1
    expect warn invalid(c.k) == -1
    expect warn duplicates(id) == -1
    expect warn duplicates(id, e) == -1
    expect warn distinct(id) == -1
    expect warn distinct(c.k) == -1
    expect warn orphans(id, [\"a\", \"k1\"]) == -1
    expect warn lo1: min(amt) > -100
    expect warn lo2: min(amt) > -390
    expect warn lo3: min(amt) > -400
    expect warn hi1: max(amt) < 999
    expect warn hi2: max(amt) < 1000.5
    expect warn total1: sum(amt) > 0
    expect warn total2: sum(amt) > -5000
    expect warn mean1: avg(n) < 100
    expect warn mean2: avg(n) < 300
    expect warn age(t) < 1s
";
    for consumer in ["report()", "oks() | count()"] {
        let from = |source: &str| {
            format!("{MEASURED_TYPE}{measures}}}\n{source} | validate(T) | {consumer}\n")
        };
        let now = ["--now", "2026-12-05T00:00:00Z"];
        let file = dir.run(&from("source(file(\"d.jsonl\"), Json)"), &now);
        let one = dir.hql(&["run", "--explain", "--threads", "1", "main.hql"]);
        assert!(
            one.out.contains("counting: line check, one thread"),
            "{}",
            one.out
        );
        let two = dir.hql(&["run", "--explain", "--threads", "2", "main.hql"]);
        assert!(
            two.out
                .contains("counting: line check, chunks on 2 threads"),
            "{}",
            two.out
        );
        for threads in ["1", "2"] {
            let run = dir.hql(&["run", "--threads", threads, "main.hql", now[0], now[1]]);
            assert_eq!((&run.out, &run.err), (&file.out, &file.err), "{threads}");
        }
        let stdin = {
            dir.write("main.hql", from("source(stdin(), Json)"));
            dir.hql_stdin(&["run", "main.hql", "--now", "2026-12-05T00:00:00Z"], &data)
        };
        assert_eq!(file.status, 0, "{}", file.err);
        assert_eq!((&file.out, &file.err), (&stdin.out, &stdin.err));
        // Each count shown, and the value bounds told apart.
        let told: Vec<&str> = file
            .err
            .lines()
            .map(|l| l.split(" failed").next().unwrap())
            .collect();
        let count = |m: &str| format!("warning: expectation T.{m} == -1");
        let mut wanted: Vec<String> = [
            "rows",
            "failures",
            "missing(e)",
            "nulls(e)",
            "missing(c.k)",
            "invalid(amt)",
            "invalid(c.k)",
            "duplicates(id)",
            "duplicates(id, e)",
            "distinct(id)",
            "distinct(c.k)",
            "orphans(id, [\"a\", \"k1\"])",
        ]
        .map(count)
        .to_vec();
        for named in ["lo1", "lo2", "lo3", "hi1", "hi2", "mean1"] {
            wanted.push(format!("warning: expectation T.{named}"));
        }
        assert_eq!(told, wanted, "{}", file.err);
    }
}

/// A small generator of numbers, the same on every machine.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Contracts nobody wrote: random fields (scalars, nullable, optional, a
/// nested record, a list, now and then a unique key or a default) and
/// random expectations over them, measured over random lines (valid, with
/// fields absent, null, of the wrong type, undecodable, not records). A
/// file is counted on the counting path on one thread and on two;
/// standard input takes the ordinary path. Every expectation is a `warn`
/// whose bound cannot hold, so each prints its measured figure: the
/// reports and the warnings of the three runs must be the same.
#[test]
fn generated_expectations_measure_alike_on_every_path() {
    let dir = Scratch::new("expect-generated");
    let mut dice = Dice(0x51ED_2701_9C3B_A4F5);
    let kinds = [
        "Int",
        "Float",
        "String",
        "Bool",
        "Int | Null",
        "String | Null",
    ];
    for round in 0..6 {
        let n = 2 + dice.below(4) as usize;
        let mut fields: Vec<(String, &str, bool)> = (0..n)
            .map(|i| {
                let ty = kinds[dice.below(kinds.len() as u64) as usize];
                (format!("f{i}"), ty, dice.below(3) == 0)
            })
            .collect();
        fields.push(("nest".into(), "{ k?: String, v: Int }", dice.below(2) == 0));
        let mut members: Vec<String> = fields
            .iter()
            .map(|(name, ty, optional)| format!("{name}{}: {ty}", if *optional { "?" } else { "" }))
            .collect();
        if dice.below(3) == 0 {
            members.push("tag: String = \"none\"".into());
        }
        let key = fields
            .iter()
            .find(|(_, ty, optional)| !optional && *ty == "String");
        if let Some((name, _, _)) = key.filter(|_| dice.below(2) == 0) {
            members.push(format!("unique {name}"));
        }
        members.push("expect warn rows == -1".into());
        members.push("expect warn failures == -1".into());
        for (name, ty, _) in &fields[..n] {
            let measures = match *ty {
                "Int" | "Float" | "Int | Null" => {
                    vec![
                        "missing", "nulls", "invalid", "distinct", "min", "max", "sum", "avg",
                    ]
                }
                _ => vec!["missing", "nulls", "invalid", "duplicates", "distinct"],
            };
            for _ in 0..2 {
                let m = measures[dice.below(measures.len() as u64) as usize];
                let id = format!("{m}_{name}_{}", dice.below(1000));
                members.push(match m {
                    "min" | "max" | "sum" | "avg" => {
                        format!("expect warn {id}: {m}({name}) < -1e300")
                    }
                    _ => format!("expect warn {id}: {m}({name}) == -1"),
                });
            }
        }
        members.push("expect warn missing(nest.k) == -1".into());
        members.push("expect warn distinct(nest.v) == -1".into());
        let contract = format!(
            "type G : {} = {{\n    {}\n}}\n",
            ["DataContract", "TypeContract"][dice.below(2) as usize],
            members.join("\n    ")
        );
        let value = |ty: &str, dice: &mut Dice| -> String {
            match (ty, dice.below(12)) {
                (_, 0) => "null".into(),
                (_, 1) => "[1]".into(),
                ("Int" | "Int | Null", k) => format!("{}", k as i64 * 37 - 150),
                ("Float", k) => format!("{}.25", k as i64 - 6),
                ("Bool", k) => (k % 2 == 0).to_string(),
                (_, k) => format!("\"s{}\"", dice.below(40 + k)),
            }
        };
        let mut data = String::new();
        while data.len() < 3 << 19 {
            let line = match dice.below(40) {
                0 => "{\"f0\":".to_string(),
                1 => "[1, 2]".to_string(),
                2 => "   ".to_string(),
                _ => {
                    let mut parts = Vec::new();
                    for (name, ty, _) in &fields[..n] {
                        if dice.below(9) != 0 {
                            parts.push(format!("\"{name}\": {}", value(ty, &mut dice)));
                        }
                    }
                    match dice.below(6) {
                        0 => {}
                        1 => parts.push("\"nest\": {\"v\": \"x\"}".into()),
                        k => parts.push(format!("\"nest\": {{\"k\": \"n{k}\", \"v\": {k}}}")),
                    }
                    if dice.below(15) == 0 {
                        parts.push("\"other\": 1".into());
                    }
                    format!("{{{}}}", parts.join(", "))
                }
            };
            data.push_str(&line);
            data.push('\n');
        }
        dir.write("d.jsonl", &data);
        for consumer in ["report()", "oks() | count()"] {
            let program = |source: &str| format!("{contract}{source} | validate(G) | {consumer}\n");
            let file = program("source(file(\"d.jsonl\"), Json)");
            let one = dir.run(&file, &["--threads", "1"]);
            assert_eq!(one.status, 0, "{contract}{}", one.err);
            assert!(
                one.err.contains("expect_warn") || one.err.contains("warning"),
                "{}",
                one.err
            );
            let two = dir.run(&file, &["--threads", "2"]);
            dir.write("stdin.hql", program("source(stdin(), Json)"));
            let stdin = dir.hql_stdin(&["run", "stdin.hql"], &data);
            let context = format!("round {round}, {consumer}:\n{contract}");
            assert_eq!((&one.out, &one.err), (&two.out, &two.err), "{context}");
            assert_eq!((&one.out, &one.err), (&stdin.out, &stdin.err), "{context}");
        }
    }
}
