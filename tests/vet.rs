//! `hql vet CONTRACTS DATA…` on real files (tooling.md, "Commands"): a
//! report per file in §8 form, `--type`, `--errors N`, `--format json`,
//! `--dead-letters`, `-` for stdin, configured source ids, usage errors,
//! and the same report as `hql run` gives.

mod common;
use common::*;

const CONTRACTS: &str =
    "type Order : DataContract = {\n    id: Int\n    qty: Int\n    require qty > 0\n}\n";

/// Four lines: one valid, one breaking the rule, one of the wrong type, one
/// that is not JSON.
const A_JSONL: &str =
    "{\"id\":1,\"qty\":2}\n{\"id\":2,\"qty\":0}\n{\"id\":\"x\",\"qty\":1}\nnot json\n";

const A_REPORT: &str = "{total: 4, ok: 1, err: 3, warned: 0, by_rule: [\
    {rule: \"Order.id.type\", kind: \"type\", count: 1}, \
    {rule: \"Order.qty > 0\", kind: \"require\", count: 1}, \
    {rule: \"decode\", kind: \"decode\", count: 1}]}";

const B_CSV: &str = "id,qty\n1,5\n2,7\n";

const B_REPORT: &str = "{total: 2, ok: 2, err: 0, warned: 0, by_rule: []}";

/// The failure records of `a.jsonl`, as JSON Lines.
const A_FAILURES: [&str; 3] = [
    "{\"type\":\"Order\",\"version\":null,\"origin\":{\"source\":\"a.jsonl\",\"line\":2},\"input\":{\"id\":2,\"qty\":0},\
     \"failures\":[{\"rule\":\"Order.qty > 0\",\"kind\":\"require\",\"path\":null,\"fields\":[\"qty\"],\"severity\":\"error\",\
     \"message\":\"rule Order.qty > 0 does not hold\"}]}",
    "{\"type\":\"Order\",\"version\":null,\"origin\":{\"source\":\"a.jsonl\",\"line\":3},\"input\":{\"id\":\"x\",\"qty\":1},\
     \"failures\":[{\"rule\":\"Order.id.type\",\"kind\":\"type\",\"path\":\"id\",\"fields\":[\"id\"],\"severity\":\"error\",\
     \"message\":\"field id must be Int\"}]}",
    "{\"type\":null,\"version\":null,\"origin\":{\"source\":\"a.jsonl\",\"line\":4},\"input\":\"not json\",\
     \"failures\":[{\"rule\":\"decode\",\"kind\":\"decode\",\"path\":null,\"fields\":[],\"severity\":\"error\",\
     \"message\":\"line 4 is not valid JSON: invalid literal at column 1\"}]}",
];

fn scratch(name: &str) -> Scratch {
    let s = Scratch::new(name);
    s.write("contracts.hql", CONTRACTS);
    s.write("a.jsonl", A_JSONL);
    s.write("b.csv", B_CSV);
    s
}

#[track_caller]
fn usage_error(r: &Run) -> String {
    assert_eq!(
        r.status, 2,
        "expected a usage error (exit 2)\nstdout:\n{}\nstderr:\n{}",
        r.out, r.err
    );
    assert_eq!(r.out, "", "nothing is printed before a usage error");
    squash(&r.err)
}

#[test]
fn a_report_per_file_and_exit_1_when_any_record_fails() {
    let s = scratch("vet-reports");
    let r = s.hql(&["vet", "contracts.hql", "a.jsonl", "b.csv"]);
    assert_eq!(r.status, 1, "{}", r.err);
    assert_eq!(r.out, format!("a.jsonl: {A_REPORT}\nb.csv: {B_REPORT}\n"));
    assert_eq!(r.err, "", "failing records are not diagnostics");
}

#[test]
fn exit_0_when_no_record_fails() {
    let s = scratch("vet-clean");
    s.write(
        "c.json",
        "[\n{\"id\":1,\"qty\":1},\n{\"id\":2,\"qty\":2}\n]\n",
    );
    let r = s.hql(&["vet", "contracts.hql", "b.csv", "c.json"]);
    assert_eq!(r.status, 0, "{}", r.err);
    assert_eq!(
        r.out,
        format!("b.csv: {B_REPORT}\nc.json: {{total: 2, ok: 2, err: 0, warned: 0, by_rule: []}}\n")
    );
    assert_eq!(r.err, "");
}

#[test]
fn several_record_types_need_type_and_without_it_are_a_usage_error() {
    let s = scratch("vet-type");
    s.write(
        "multi.hql",
        "type Order : DataContract = { id: Int }\ntype Customer : DataContract = { name: String }\n",
    );
    let err = usage_error(&s.hql(&["vet", "multi.hql", "a.jsonl"]));
    assert!(
        err.contains("the contracts file declares 2 record types (Order, Customer); choose one with `--type T`"),
        "{err}"
    );
    let r = s.hql(&["vet", "multi.hql", "b.csv", "--type", "Customer"]);
    assert_eq!(r.status, 1, "{}", r.err);
    assert_eq!(
        r.out,
        "b.csv: {total: 2, ok: 0, err: 2, warned: 0, by_rule: [{rule: \"Customer.name.missing\", kind: \"missing\", count: 2}]}\n"
    );
    let r = s.hql(&["vet", "multi.hql", "b.csv", "--type", "Order"]);
    assert_eq!(r.status, 0, "{}", r.err);
    assert_eq!(r.out, format!("b.csv: {B_REPORT}\n"));
}

#[test]
fn the_default_type_sets_imports_and_refinements_aside() {
    let s = scratch("vet-default-type");
    s.write("base.hql", "type Base : DataContract = { id: Int }\n");
    s.write(
        "child.hql",
        "import \"base.hql\"\ntype Positive = Int require self > 0\ntype Level = 1 | 2\n\
         type Order : Base = { qty: Positive }\n",
    );
    let r = s.hql(&["vet", "child.hql", "a.jsonl"]);
    assert_eq!(r.status, 1, "{}", r.err);
    assert_eq!(
        r.out,
        "a.jsonl: {total: 4, ok: 1, err: 3, warned: 0, by_rule: [\
         {rule: \"Base.id.type\", kind: \"type\", count: 1}, \
         {rule: \"Positive.self > 0\", kind: \"require\", count: 1}, \
         {rule: \"decode\", kind: \"decode\", count: 1}]}\n"
    );
}

#[test]
fn errors_n_prints_up_to_n_failure_records_under_each_report() {
    let s = scratch("vet-errors");
    s.write("c.jsonl", "{\"id\":1,\"qty\":-1}\n{\"id\":2,\"qty\":3}\n");
    let r = s.hql(&[
        "vet",
        "contracts.hql",
        "a.jsonl",
        "b.csv",
        "c.jsonl",
        "--errors",
        "2",
    ]);
    assert_eq!(r.status, 1, "{}", r.err);
    assert_eq!(
        r.out,
        format!(
            "a.jsonl: {A_REPORT}\n\
             \x20 {{type: \"Order\", version: null, origin: {{source: \"a.jsonl\", line: 2}}, input: {{id: 2, qty: 0}}, \
             failures: [{{rule: \"Order.qty > 0\", kind: \"require\", path: null, fields: [\"qty\"], severity: \"error\", \
             message: \"rule Order.qty > 0 does not hold\"}}]}}\n\
             \x20 {{type: \"Order\", version: null, origin: {{source: \"a.jsonl\", line: 3}}, input: {{id: \"x\", qty: 1}}, \
             failures: [{{rule: \"Order.id.type\", kind: \"type\", path: \"id\", fields: [\"id\"], severity: \"error\", \
             message: \"field id must be Int\"}}]}}\n\
             b.csv: {B_REPORT}\n\
             c.jsonl: {{total: 2, ok: 1, err: 1, warned: 0, by_rule: [{{rule: \"Order.qty > 0\", kind: \"require\", count: 1}}]}}\n\
             \x20 {{type: \"Order\", version: null, origin: {{source: \"c.jsonl\", line: 1}}, input: {{id: 1, qty: -1}}, \
             failures: [{{rule: \"Order.qty > 0\", kind: \"require\", path: null, fields: [\"qty\"], severity: \"error\", \
             message: \"rule Order.qty > 0 does not hold\"}}]}}\n"
        )
    );
}

#[test]
fn format_json_prints_one_object_a_line() {
    let s = scratch("vet-json");
    let r = s.hql(&[
        "vet",
        "contracts.hql",
        "a.jsonl",
        "b.csv",
        "--format",
        "json",
        "--errors",
        "1",
    ]);
    assert_eq!(r.status, 1, "{}", r.err);
    let report = "{\"total\":4,\"ok\":1,\"err\":3,\"warned\":0,\"by_rule\":[\
        {\"rule\":\"Order.id.type\",\"kind\":\"type\",\"count\":1},\
        {\"rule\":\"Order.qty > 0\",\"kind\":\"require\",\"count\":1},\
        {\"rule\":\"decode\",\"kind\":\"decode\",\"count\":1}]}";
    assert_eq!(
        r.out,
        format!(
            "{{\"file\":\"a.jsonl\",\"report\":{report},\"errors\":[{}]}}\n\
             {{\"file\":\"b.csv\",\"report\":{{\"total\":2,\"ok\":2,\"err\":0,\"warned\":0,\"by_rule\":[]}},\"errors\":[]}}\n",
            A_FAILURES[0]
        )
    );
    let r = s.hql(&["vet", "contracts.hql", "b.csv", "--format", "json"]);
    assert_eq!(r.status, 0, "{}", r.err);
    assert_eq!(
        r.out,
        "{\"file\":\"b.csv\",\"report\":{\"total\":2,\"ok\":2,\"err\":0,\"warned\":0,\"by_rule\":[]},\"errors\":[]}\n"
    );
}

#[test]
fn dead_letters_hold_every_failure_record_of_all_files() {
    let s = scratch("vet-dead");
    s.write("c.csv", "id,qty\n7,0\n8,1\n");
    s.write("dl.jsonl", "old\n");
    let r = s.hql(&[
        "vet",
        "contracts.hql",
        "a.jsonl",
        "b.csv",
        "c.csv",
        "--dead-letters",
        "dl.jsonl",
    ]);
    assert_eq!(r.status, 1, "{}", r.err);
    assert_eq!(
        r.out,
        format!(
            "a.jsonl: {A_REPORT}\nb.csv: {B_REPORT}\n\
             c.csv: {{total: 2, ok: 1, err: 1, warned: 0, by_rule: [{{rule: \"Order.qty > 0\", kind: \"require\", count: 1}}]}}\n"
        )
    );
    let c_failure = "{\"type\":\"Order\",\"version\":null,\"origin\":{\"source\":\"c.csv\",\"line\":2},\
        \"input\":{\"id\":\"7\",\"qty\":\"0\"},\"failures\":[{\"rule\":\"Order.qty > 0\",\"kind\":\"require\",\
        \"path\":null,\"fields\":[\"qty\"],\"severity\":\"error\",\"message\":\"rule Order.qty > 0 does not hold\"}]}";
    let dead = s.read("dl.jsonl");
    assert_eq!(
        dead,
        format!(
            "{}\n{}\n{}\n{c_failure}\n",
            A_FAILURES[0], A_FAILURES[1], A_FAILURES[2]
        )
    );
    // As many as the reports' `err` add up to: 3 + 0 + 1.
    assert_eq!(dead.lines().count(), 4);
    assert!(s.temporaries().is_empty(), "{:?}", s.files());
}

#[test]
fn dead_letters_of_a_clean_run_are_an_empty_file() {
    let s = scratch("vet-dead-clean");
    s.write("dl.jsonl", "old\n");
    let r = s.hql(&[
        "vet",
        "contracts.hql",
        "b.csv",
        "--dead-letters",
        "dl.jsonl",
    ]);
    assert_eq!(r.status, 0, "{}", r.err);
    assert_eq!(s.read("dl.jsonl"), "");
}

#[test]
fn dead_letters_are_not_written_when_a_data_file_is_missing() {
    let s = scratch("vet-dead-missing");
    s.write("dl.jsonl", "old\n");
    let r = s.hql(&[
        "vet",
        "contracts.hql",
        "a.jsonl",
        "missing.jsonl",
        "--dead-letters",
        "dl.jsonl",
    ]);
    assert_eq!(r.status, 1, "{}", r.err);
    assert_eq!(
        r.out,
        format!("a.jsonl: {A_REPORT}\n"),
        "what ran before stays"
    );
    let err = squash(&r.err);
    assert!(err.contains("hql::io"), "{err}");
    assert!(err.contains("cannot read missing.jsonl"), "{err}");
    assert_eq!(s.read("dl.jsonl"), "old\n");
    assert!(s.temporaries().is_empty(), "{:?}", s.files());
}

#[test]
fn a_dash_reads_json_from_stdin() {
    let s = scratch("vet-stdin");
    let r = s.hql_stdin(
        &["vet", "contracts.hql", "-", "--dead-letters", "dl.jsonl"],
        A_JSONL,
    );
    assert_eq!(r.status, 1, "{}", r.err);
    assert_eq!(r.out, format!("-: {A_REPORT}\n"));
    let dead = s.read("dl.jsonl");
    assert_eq!(dead.lines().count(), 3);
    assert!(
        dead.lines()
            .all(|l| l.contains("\"origin\":{\"source\":\"<stdin>\",")),
        "{dead}"
    );
    let r = s.hql_stdin(&["vet", "contracts.hql", "-"], "[{\"id\":1,\"qty\":1}]\n");
    assert_eq!(r.status, 0, "{}", r.err);
    assert_eq!(
        r.out,
        "-: {total: 1, ok: 1, err: 0, warned: 0, by_rule: []}\n"
    );
}

#[test]
fn a_configured_source_id_works_as_data() {
    let s = scratch("vet-config");
    s.write(
        "project/hql.toml",
        "[sources.orders]\nfile = \"data/orders.csv\"\ncolumns = { qty = \"Quantity\" }\n",
    );
    s.write("project/data/orders.csv", "id,Quantity\n1,0\n2,3\n");
    s.write("project/contracts.hql", CONTRACTS);
    // Run from the scratch folder: the toml is found from the contracts' folder.
    let r = s.hql(&["vet", "project/contracts.hql", "orders", "b.csv"]);
    assert_eq!(r.status, 1, "{}", r.err);
    assert_eq!(
        r.out,
        format!(
            "orders: {{total: 2, ok: 1, err: 1, warned: 0, by_rule: [{{rule: \"Order.qty > 0\", kind: \"require\", count: 1}}]}}\n\
             b.csv: {B_REPORT}\n"
        )
    );
}

#[test]
fn an_existing_path_wins_over_a_configured_id() {
    let s = scratch("vet-path-wins");
    s.write(
        "hql.toml",
        "[sources.\"b.csv\"]\nfile = \"elsewhere.csv\"\n",
    );
    s.write("elsewhere.csv", "id,qty\n1,0\n");
    let r = s.hql(&["vet", "contracts.hql", "b.csv"]);
    assert_eq!(r.status, 0, "{}", r.err);
    assert_eq!(r.out, format!("b.csv: {B_REPORT}\n"));
    std::fs::remove_file(s.path.join("b.csv")).expect("remove");
    let r = s.hql(&["vet", "contracts.hql", "b.csv"]);
    assert_eq!(r.status, 1, "{}", r.err);
    assert_eq!(
        r.out,
        "b.csv: {total: 1, ok: 0, err: 1, warned: 0, by_rule: [{rule: \"Order.qty > 0\", kind: \"require\", count: 1}]}\n"
    );
}

#[test]
fn an_unknown_extension_is_a_usage_error_before_anything_is_printed() {
    let s = scratch("vet-extension");
    s.write("data.txt", "{\"id\":1,\"qty\":1}\n");
    s.write("dl.jsonl", "old\n");
    let err = usage_error(&s.hql(&[
        "vet",
        "contracts.hql",
        "a.jsonl",
        "data.txt",
        "--dead-letters",
        "dl.jsonl",
    ]));
    assert!(
        err.contains(
            "cannot tell the format of data.txt from its extension (.jsonl, .json, .csv or .parquet)"
        ),
        "{err}"
    );
    assert_eq!(s.read("dl.jsonl"), "old\n");
    let err = usage_error(&s.hql(&["vet", "missing.hql", "a.jsonl"]));
    assert!(err.contains("cannot read missing.hql"), "{err}");
}

/// The report `hql run` prints for `source(P) | validate(T) | report()`.
fn run_report(s: &Scratch, source: &str, threads: &str) -> String {
    let r = s.run(
        &format!("{CONTRACTS}{source} | validate(Order) | report()\n"),
        &["--threads", threads],
    );
    assert_eq!(r.status, 0, "{}", r.err);
    r.out
}

#[test]
fn vets_report_equals_the_report_of_hql_run() {
    let s = scratch("vet-same-report");
    // Large enough to be split between threads, with every kind of line
    // and a `unique` key claimed across the whole file.
    let contracts = CONTRACTS.replace("require qty > 0\n", "require qty > 0\n    unique id\n");
    s.write("unique.hql", &contracts);
    let mut big = String::new();
    for i in 0..40_000 {
        let line = if i % 997 == 0 {
            "not json".to_string()
        } else if i % 101 == 0 {
            format!(
                "{{\"id\": {}, \"qty\": 1, \"pad\": \"{}\"}}",
                i % 50,
                "y".repeat(20)
            )
        } else if i % 13 == 0 {
            format!("{{\"id\": \"{i}\", \"qty\": 0}}")
        } else if i % 777 == 0 {
            String::new()
        } else {
            format!(
                "{{\"id\": {i}, \"qty\": {}, \"pad\": \"xxxxxxxxxx\"}}",
                i % 5 + 1
            )
        };
        big.push_str(&line);
        big.push_str(if i % 5 == 0 { "\r\n" } else { "\n" });
    }
    s.write("big.jsonl", &big);
    assert!(big.len() > 1 << 20);

    for (contracts, data, source) in [
        (
            "contracts.hql",
            "a.jsonl",
            "source(file(\"a.jsonl\"), Json)",
        ),
        ("contracts.hql", "b.csv", "source(file(\"b.csv\"), Csv)"),
        (
            "contracts.hql",
            "big.jsonl",
            "source(file(\"big.jsonl\"), Json)",
        ),
        (
            "unique.hql",
            "big.jsonl",
            "source(file(\"big.jsonl\"), Json)",
        ),
    ] {
        let program_contracts = s.read(contracts);
        let run = |threads: &str| {
            let r = s.run(
                &format!("{program_contracts}{source} | validate(Order) | report()\n"),
                &["--threads", threads],
            );
            assert_eq!(r.status, 0, "{}", r.err);
            r.out
        };
        let one = run("1");
        assert_eq!(run("2"), one, "{contracts} {data}");
        for extra in [&[][..], &["--threads", "2"][..], &["--errors", "1"][..]] {
            let mut args = vec!["vet", contracts, data];
            args.extend_from_slice(extra);
            let r = s.hql(&args);
            let first = r.out.lines().next().unwrap_or("").to_string();
            assert_eq!(
                format!("{first}\n"),
                format!("{data}: {one}"),
                "{contracts} {data} {extra:?}"
            );
        }
    }
    // The report of the big file is what its lines make it.
    // 41 lines are not JSON, 48 are blank, 3043 break both fields' rules.
    let report = run_report(&s, "source(file(\"big.jsonl\"), Json)", "2");
    assert_eq!(
        report,
        "{total: 39952, ok: 36868, err: 3084, warned: 0, by_rule: [\
         {rule: \"Order.id.type\", kind: \"type\", count: 3043}, \
         {rule: \"Order.qty > 0\", kind: \"require\", count: 3043}, \
         {rule: \"decode\", kind: \"decode\", count: 41}]}\n"
    );
}

#[test]
fn a_type_the_contracts_file_does_not_declare_is_a_usage_error_naming_those_it_does() {
    let s = scratch("vet-unknown-type");
    let r = s.hql(&["vet", "contracts.hql", "a.jsonl", "--type", "Nope"]);
    let err = usage_error(&r);
    assert!(
        err.contains("`Nope` is not a record type of contracts.hql (it declares Order)"),
        "{err}"
    );
}

/// The README's CI example: the command it shows prints what it shows,
/// and the exit status says a record failed.
#[test]
fn the_readmes_vet_example_prints_what_the_readme_shows() {
    let (shown, r) =
        readme_example("hql vet examples/io/contracts.hql examples/io/orders.csv --errors 1");
    assert_eq!(r.out, shown);
    assert_eq!(r.status, 1);
}

/// `--errors` shortens a failure record's `input` longer than 4 KiB in its
/// printed form, saying how much was left out; the dead letters keep it
/// whole.
#[test]
fn errors_shorten_an_input_longer_than_4_kib_with_a_note() {
    let s = scratch("vet-long-input");
    let long = "z".repeat(6000);
    s.write(
        "long.jsonl",
        format!("{{\"id\":\"{long}\",\"qty\":1}}\nnot json {long}\n"),
    );
    let r = s.hql(&[
        "vet",
        "contracts.hql",
        "long.jsonl",
        "--errors",
        "2",
        "--dead-letters",
        "dead.jsonl",
    ]);
    assert_eq!(r.status, 1, "{}", r.err);
    let lines: Vec<&str> = r.out.lines().collect();
    assert_eq!(lines.len(), 3, "{}", r.out);
    // The record's printed form, `{id: "zzz…", qty: 1}`, cut at 4096 bytes.
    let record = format!("{{id: \"{}", &long[..4096 - 6]);
    let left = 6 + 6000 + 10 - 4096;
    assert!(
        lines[1].contains(&format!(
            "input: \"{}… ({left} more bytes not shown)\"",
            to_hql_str(&record)
        )),
        "{}",
        lines[1]
    );
    let text = format!("not json {long}");
    assert!(
        lines[2].contains(&format!(
            "input: \"{}… ({} more bytes not shown)\"",
            &text[..4096],
            text.len() - 4096
        )),
        "{}",
        lines[2]
    );
    assert!(s.read("dead.jsonl").contains(&long));
}

/// `text` as an HQL string's inside (quotes escaped).
fn to_hql_str(text: &str) -> String {
    text.replace('"', "\\\"")
}

#[test]
fn expectations_are_judged_per_file_and_a_budget_does_not_stop_the_reading() {
    let s = Scratch::new("vet-expect");
    s.write(
        "contracts.hql",
        "type Order : DataContract = {\n    id: Int\n    expect budget: failures <= 0\n    expect warn many: rows > 100\n    expect rows >= 2\n}\n",
    );
    s.write("bad.jsonl", "{\"id\":1}\n{\"id\":\"x\"}\n{\"id\":\"y\"}\n");
    s.write("short.jsonl", "{\"id\":1}\n");
    s.write("good.jsonl", "{\"id\":1}\n{\"id\":2}\n");
    let r = s.hql(&[
        "vet",
        "contracts.hql",
        "bad.jsonl",
        "short.jsonl",
        "good.jsonl",
        "--dead-letters",
        "dead.jsonl",
    ]);
    assert_eq!(r.status, 1, "{}", r.err);
    // The budget is spent at the second line, and every line is still read
    // and reported; each file is judged on its own.
    assert_eq!(
        lines(&r.out),
        [
            "bad.jsonl: {total: 3, ok: 1, err: 2, warned: 0, by_rule: [\
             {rule: \"Order.id.type\", kind: \"type\", count: 2}, \
             {rule: \"Order.budget\", kind: \"expect\", count: 1}, \
             {rule: \"Order.many\", kind: \"expect_warn\", count: 1}]}",
            "short.jsonl: {total: 1, ok: 1, err: 0, warned: 0, by_rule: [\
             {rule: \"Order.many\", kind: \"expect_warn\", count: 1}, \
             {rule: \"Order.rows >= 2\", kind: \"expect\", count: 1}]}",
            "good.jsonl: {total: 2, ok: 2, err: 0, warned: 0, by_rule: [\
             {rule: \"Order.many\", kind: \"expect_warn\", count: 1}]}",
        ]
    );
    assert_eq!(
        lines(&r.err),
        [
            "warning: expectation Order.many failed: rows > 100 (rows is 3)",
            "error: bad.jsonl: expectation Order.budget failed: failures <= 0 (failures is 2)",
            "error: short.jsonl: expectation Order.rows >= 2 failed: rows >= 2 (rows is 1)",
        ]
    );
    // vet is a check, not a pipeline: its dead letters are still written.
    assert_eq!(s.read("dead.jsonl").lines().count(), 2);
    // A file that meets every error expectation passes, warnings aside.
    let r = s.hql(&["vet", "contracts.hql", "good.jsonl"]);
    assert_eq!(r.status, 0, "{}", r.err);
}
