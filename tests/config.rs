//! `hql.toml` on real folders (tooling.md "Sources, targets and the schema
//! boundary"): configured sources and targets by id, the schema boundary
//! (renamed columns, physical types, nullable columns, CSV options), the
//! lookup from the program's folder upward, and its errors.

mod common;
use common::*;

const TOML: &str = r#"[sources.orders]
file = "data/orders.csv"
columns = { order_id = "Order ID", amount = { name = "Amount", type = "float" }, note = { name = "Note", nullable = true } }
csv = { delimiter = ";" }

[targets.clean]
file = "out/clean.jsonl"

[targets.dead]
file = "out/dead.jsonl"

[targets.sheet]
file = "out/sheet.txt"
format = "csv"
csv = { delimiter = ";" }
"#;

/// Line 1 header; `A2` has an amount that is no number.
const ORDERS_CSV: &str = "Order ID;Amount;Note;qty\nA1;10;;2\nA2;x;hi;3\nA3;2.5;;\n";

const ORDER: &str = "type Order : DataContract = { order_id: String, amount: Float, note?: String | Null, qty: Int }\n";

/// A project folder `proj/` with the toml, its data and an `out/` folder.
fn project(name: &str) -> Scratch {
    let s = Scratch::new(name);
    s.write("proj/hql.toml", TOML);
    s.write("proj/data/orders.csv", ORDERS_CSV);
    std::fs::create_dir_all(s.path.join("proj/out")).expect("out folder");
    s
}

/// `hql run proj/progs/main.hql` from the scratch folder (not the
/// toml's): the toml is found from the program's folder upward.
fn run_in_project(s: &Scratch, program: &str) -> Run {
    s.write("proj/progs/main.hql", program);
    s.hql(&["run", "proj/progs/main.hql"])
}

#[track_caller]
fn ok(r: &Run) -> &str {
    assert_eq!(
        r.status, 0,
        "expected status 0\nstdout:\n{}\nstderr:\n{}",
        r.out, r.err
    );
    assert!(r.err.is_empty(), "expected empty stderr:\n{}", r.err);
    &r.out
}

#[test]
fn a_configured_csv_source_applies_the_schema_boundary() {
    let s = project("cfg-source");
    let r = run_in_project(&s, "source(\"orders\")\n");
    // Renamed columns, `Amount` read as float, the nullable `Note` null when
    // empty; `qty` has no contract here, so it stays text.
    assert_eq!(
        ok(&r),
        "[{order_id: \"A1\", amount: 10.0, note: null, qty: \"2\"}, \
         {order_id: \"A2\", amount: \"x\", note: \"hi\", qty: \"3\"}, \
         {order_id: \"A3\", amount: 2.5, note: null}]\n"
    );
}

#[test]
fn route_to_configured_targets_writes_under_the_tomls_folder() {
    let s = project("cfg-route");
    let r = run_in_project(
        &s,
        &format!(
            "{ORDER}source(\"orders\") | validate(Order) | route(ok: \"clean\", err: \"dead\")\n"
        ),
    );
    assert_eq!(ok(&r), "{total: 3, ok: 1, err: 2, warned: 0, by_rule: [{rule: \"Order.amount.type\", kind: \"type\", count: 1}, {rule: \"Order.qty.missing\", kind: \"missing\", count: 1}]}\n");
    assert_eq!(
        s.read("proj/out/clean.jsonl"),
        "{\"order_id\":\"A1\",\"amount\":10.0,\"note\":null,\"qty\":2}\n"
    );
    // Failure records carry the configured id and the cells as received,
    // under the HQL names.
    assert_eq!(
        s.read("proj/out/dead.jsonl"),
        "{\"type\":\"Order\",\"version\":null,\"origin\":{\"source\":\"orders\",\"line\":3},\
         \"input\":{\"order_id\":\"A2\",\"amount\":\"x\",\"note\":\"hi\",\"qty\":\"3\"},\
         \"failures\":[{\"rule\":\"Order.amount.type\",\"kind\":\"type\",\"path\":\"amount\",\"fields\":[\"amount\"],\
         \"severity\":\"error\",\"message\":\"field amount must be Float\"}]}\n\
         {\"type\":\"Order\",\"version\":null,\"origin\":{\"source\":\"orders\",\"line\":4},\
         \"input\":{\"order_id\":\"A3\",\"amount\":\"2.5\"},\
         \"failures\":[{\"rule\":\"Order.qty.missing\",\"kind\":\"missing\",\"path\":\"qty\",\"fields\":[\"qty\"],\
         \"severity\":\"error\",\"message\":\"required field qty (Int) is missing\"}]}\n"
    );
    assert!(
        !s.exists("out"),
        "nothing is written beside the current folder"
    );
}

#[test]
fn write_to_configured_targets_with_csv_options_and_a_named_format() {
    let s = project("cfg-write");
    let r = run_in_project(
        &s,
        &format!(
            "{ORDER}source(\"orders\") | validate(Order) | oks() | write(\"clean\")\n\
             source(\"orders\") | validate(Order) | oks() | write(\"sheet\")\n"
        ),
    );
    assert_eq!(ok(&r), "1\n1\n");
    assert_eq!(
        s.read("proj/out/clean.jsonl"),
        "{\"order_id\":\"A1\",\"amount\":10.0,\"note\":null,\"qty\":2}\n"
    );
    assert_eq!(
        s.read("proj/out/sheet.txt"),
        "order_id;amount;note;qty\nA1;10.0;;2\n"
    );
}

#[test]
fn the_toml_is_found_from_the_programs_folder_upward() {
    let s = project("cfg-parent");
    // Deeper still, and run from a folder that has no toml of its own.
    s.write(
        "proj/a/b/c/main.hql",
        "source(\"orders\") | count()\n[{x: 1}] | write(\"clean\")\n",
    );
    let r = s.hql(&["run", "proj/a/b/c/main.hql"]);
    assert_eq!(ok(&r), "3\n1\n");
    assert_eq!(s.read("proj/out/clean.jsonl"), "{\"x\":1}\n");
    // The nearest toml wins.
    s.write(
        "proj/a/hql.toml",
        "[sources.orders]\nfile = \"other.jsonl\"\n",
    );
    s.write("proj/a/other.jsonl", "{\"id\":1}\n");
    let r = s.hql(&["run", "proj/a/b/c/main.hql"]);
    assert_eq!(r.status, 2, "`clean` is not in the nearer toml: {}", r.err);
    s.write("proj/a/b/c/main.hql", "source(\"orders\")\n");
    let r = s.hql(&["run", "proj/a/b/c/main.hql"]);
    assert_eq!(ok(&r), "[{id: 1}]\n");
}

#[test]
fn an_unknown_id_is_a_static_error_with_did_you_mean_and_nothing_runs() {
    let s = project("cfg-unknown");
    let r = run_in_project(
        &s,
        "[{a: 1}] | write(\"clean\")\n\"runs?\"\nsource(\"ordrs\") | count()\n",
    );
    assert_eq!(r.status, 2, "{}", r.err);
    assert_eq!(r.out, "", "nothing runs");
    let err = squash(&r.err);
    assert!(err.contains("hql::config"), "{err}");
    assert!(err.contains("unknown source `ordrs`"), "{err}");
    assert!(err.contains("help: did you mean `orders`?"), "{err}");
    assert!(err.contains("hql.toml"), "the file is named: {err}");
    assert!(!s.exists("proj/out/clean.jsonl"), "nothing was written");

    let r = run_in_project(
        &s,
        "\"runs?\"\n[{a: 1}] | route(ok: \"clean\", err: \"daed\")\n",
    );
    assert_eq!(r.status, 2, "{}", r.err);
    assert_eq!(r.out, "");
    let err = squash(&r.err);
    assert!(err.contains("unknown target `daed`"), "{err}");
    assert!(err.contains("did you mean `dead`?"), "{err}");
}

#[test]
fn an_id_without_any_toml_is_a_static_error() {
    let s = Scratch::new("cfg-none");
    let r = s.run("\"runs?\"\nsource(\"orders\") | count()\n", &[]);
    assert_eq!(r.status, 2, "{}", r.err);
    assert_eq!(r.out, "");
    let err = squash(&r.err);
    assert!(err.contains("hql::config"), "{err}");
    assert!(err.contains("no hql.toml was found"), "{err}");
    assert!(err.contains("[sources.orders]"), "{err}");
}

#[test]
fn a_bad_key_is_an_error_naming_the_key_and_the_file() {
    let s = project("cfg-bad-key");
    s.write(
        "proj/hql.toml",
        TOML.replace(
            "csv = { delimiter = \";\" }\n\n[targets.clean]",
            "cvs = { delimiter = \";\" }\n\n[targets.clean]",
        ),
    );
    let r = run_in_project(&s, "\"runs?\"\n[{a: 1}] | write(file(\"x.jsonl\"))\n");
    assert_eq!(r.status, 2, "{}", r.err);
    assert_eq!(r.out, "");
    let toml = s.path.join("proj/hql.toml");
    let err = squash(&r.err);
    assert!(err.contains("hql::config"), "{err}");
    assert!(
        err.contains("`sources.orders.cvs`: unknown key `cvs`"),
        "{err}"
    );
    assert!(err.contains(&format!("[{}:4:1]", toml.display())), "{err}");
    assert!(err.contains("did you mean `csv`?"), "{err}");
    assert!(!s.exists("x.jsonl"));

    // A bad value names its dotted key too.
    s.write(
        "proj/hql.toml",
        TOML.replace("type = \"float\"", "type = \"flaot\""),
    );
    let r = run_in_project(&s, "\"runs?\"\n");
    assert_eq!(r.status, 2, "{}", r.err);
    assert_eq!(r.out, "");
    let err = squash(&r.err);
    assert!(
        err.contains("`sources.orders.columns.amount.type`: unknown value `flaot`"),
        "{err}"
    );
    assert!(err.contains("did you mean `float`?"), "{err}");
}

#[test]
fn a_missing_data_file_is_a_runtime_io_error() {
    let s = project("cfg-missing-data");
    std::fs::remove_file(s.path.join("proj/data/orders.csv")).expect("remove");
    let r = run_in_project(&s, "\"before\"\nsource(\"orders\") | count()\n\"after\"\n");
    assert_eq!(r.status, 1, "{}", r.err);
    assert_eq!(r.out, "\"before\"\n");
    let err = squash(&r.err);
    assert!(err.contains("hql::io"), "{err}");
    let data = s.path.join("proj/data/orders.csv");
    assert!(
        err.contains(&format!("cannot read {}", data.display())),
        "{err}"
    );
}

#[test]
fn a_missing_data_files_diagnostic_shows_the_statement() {
    let s = project("cfg-missing-span");
    std::fs::remove_file(s.path.join("proj/data/orders.csv")).expect("remove");
    let r = run_in_project(&s, "\"before\"\nsource(\"orders\")\n");
    assert_eq!(r.status, 1, "{}", r.err);
    assert!(r.err.contains("hql::io"), "{}", r.err);
    assert!(
        r.err.contains("main.hql:2:1"),
        "the diagnostic points at the statement:\n{}",
        r.err
    );
}

#[test]
fn a_missing_configured_files_help_points_at_the_tomls_folder() {
    let s = project("cfg-missing-help");
    std::fs::remove_file(s.path.join("proj/data/orders.csv")).expect("remove");
    let r = run_in_project(&s, "source(\"orders\") | count()\n");
    assert_eq!(r.status, 1, "{}", r.err);
    assert!(
        !squash(&r.err).contains("relative to the directory `hql` runs in"),
        "{}",
        r.err
    );
}

#[test]
fn header_false_takes_the_contracts_field_order() {
    let s = Scratch::new("cfg-no-header");
    s.write(
        "hql.toml",
        "[sources.people]\nfile = \"people.csv\"\ncsv = { header = false }\n",
    );
    s.write("people.csv", "ann,31\nbob,x\ncy,4,extra\n");
    let out = s.run(
        "type P : DataContract = { name: String, age: Int }\n\
         source(\"people\") | validate(P) | oks()\n\
         source(\"people\") | validate(P) | errs() | map(e => {line: e.origin.line, rule: e.failures[0].rule, input: e.input})\n\
         source(\"people\")\n",
        &[],
    );
    assert_eq!(
        ok(&out),
        "[{name: \"ann\", age: 31}]\n\
         [{line: 2, rule: \"P.age.type\", input: {name: \"bob\", age: \"x\"}}, \
         {line: 3, rule: \"decode\", input: \"cy,4,extra\"}]\n\
         [{column_1: \"ann\", column_2: \"31\"}, {column_1: \"bob\", column_2: \"x\"}, \
         err({type: null, version: null, origin: {source: \"people\", line: 3}, input: \"cy,4,extra\", \
         failures: [{rule: \"decode\", kind: \"decode\", path: null, fields: [], severity: \"error\", \
         message: \"line 3 has 3 cells where the header has 2\"}]})]\n"
    );
}

#[test]
fn run_from_stdin_looks_up_the_toml_from_the_current_folder() {
    let s = project("cfg-stdin");
    let r = s.hql_stdin(&["run", "-"], "source(\"orders\") | count()\n");
    assert_eq!(
        r.status, 2,
        "no toml in the scratch folder itself: {}",
        r.err
    );
    s.write(
        "hql.toml",
        "[sources.orders]\nfile = \"proj/data/orders.csv\"\ncsv = { delimiter = \";\" }\n",
    );
    let r = s.hql_stdin(&["run", "-"], "source(\"orders\") | count()\n");
    assert_eq!(ok(&r), "3\n");
}

#[test]
fn check_reports_an_unknown_id_like_run() {
    let s = project("cfg-check");
    s.write("proj/progs/main.hql", "source(\"ordrs\") | count()\n");
    let run = s.hql(&["run", "proj/progs/main.hql"]);
    assert_eq!(run.status, 2, "{}", run.err);
    let check = s.hql(&["check", "proj/progs/main.hql"]);
    assert_eq!(
        check.status, 2,
        "stdout:\n{}\nstderr:\n{}",
        check.out, check.err
    );
    assert!(
        check.err.contains("unknown source `ordrs`"),
        "{}",
        check.err
    );
}

#[test]
fn test_command_uses_the_toml_of_the_tested_file() {
    let s = project("cfg-test-cmd");
    s.write(
        "proj/progs/orders.hql",
        "check \"three orders\": (source(\"orders\") | count()) == 3\n",
    );
    let r = s.hql(&["test", "proj/progs/orders.hql"]);
    assert_eq!(r.status, 0, "stdout:\n{}\nstderr:\n{}", r.out, r.err);
    assert!(r.out.contains("1 passed, 0 failed"), "{}", r.out);
}

#[test]
fn piped_repl_uses_the_toml_of_the_current_folder() {
    let s = project("cfg-repl");
    s.write(
        "hql.toml",
        "[sources.orders]\nfile = \"proj/data/orders.csv\"\ncsv = { delimiter = \";\" }\n",
    );
    let r = s.hql_stdin(&["repl"], "source(\"orders\") | count()\n");
    assert_eq!(r.status, 0, "stdout:\n{}\nstderr:\n{}", r.out, r.err);
    assert_eq!(r.out, "3\n");
}

#[test]
fn a_csv_target_configured_without_a_header_writes_rows_only() {
    let dir = Scratch::new("config-nohead");
    dir.write(
        "hql.toml",
        "[targets.nohead]\nfile = \"out.csv\"\ncsv = { header = false, quote = \"'\" }\n",
    );
    let run = dir.run(
        "[{a: 1, b: \"x,y\"}, {a: 2, b: \"z\"}] | write(\"nohead\")\n",
        &[],
    );
    assert_eq!((run.status, run.out.as_str()), (0, "2\n"), "{}", run.err);
    assert_eq!(dir.read("out.csv"), "1,'x,y'\n2,z\n");
}

/// The fast paths over a JSON file (validate read with the line check,
/// route copying valid lines) name a configured source by its id too.
#[test]
fn a_configured_json_sources_origins_name_its_id() {
    let dir = Scratch::new("config-json-origin");
    dir.write("hql.toml", "[sources.ev]\nfile = \"data/ev.jsonl\"\n");
    dir.write("data/ev.jsonl", "{\"a\": 1}\n{\"a\": \"x\"}\n");
    let run = dir.run(
        "type E : DataContract = { a: Int }\n\
         source(\"ev\") | validate(E) | errs() | map(e => e.origin)\n\
         source(\"ev\") | validate(E) | route(ok: file(\"o.jsonl\"), err: file(\"d.jsonl\"))\n",
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.err);
    assert_eq!(run.out, "[{source: \"ev\", line: 2}]\n{total: 2, ok: 1, err: 1, warned: 0, by_rule: [{rule: \"E.a.type\", kind: \"type\", count: 1}]}\n");
    assert!(dir
        .read("d.jsonl")
        .contains("\"origin\":{\"source\":\"ev\",\"line\":2}"));
}

/// `columns` renames a JSON source's keys too; such a source is read the
/// ordinary way (the line check matches keys by the program's names), so
/// `count()` and `report()` give what `validate` gives record by record.
#[test]
fn a_json_sources_columns_rename_its_keys() {
    let dir = Scratch::new("config-json-columns");
    dir.write(
        "hql.toml",
        "[sources.people]\nfile = \"people.jsonl\"\ncolumns = { name = \"Full Name\" }\n",
    );
    dir.write(
        "people.jsonl",
        "{\"Full Name\": \"Ada\", \"age\": 36}\n{\"age\": 2}\n",
    );
    let run = dir.run(
        "type P : DataContract = { name: String, age: Int }\n\
         source(\"people\") | take(1)\n\
         source(\"people\") | validate(P) | oks() | count()\n\
         source(\"people\") | validate(P) | errs() | map(e => e.failures | map(f => f.rule))\n",
        &[],
    );
    assert_eq!(run.status, 0, "{}", run.err);
    assert_eq!(
        run.out,
        "[{name: \"Ada\", age: 36}]\n1\n[[\"P.name.missing\"]]\n"
    );
}

#[test]
fn an_hql_toml_error_is_a_coded_diagnostic_at_the_keys_line_and_column() {
    let s = project("cfg-json");
    s.write(
        "proj/hql.toml",
        TOML.replace("type = \"float\"", "type = \"flaot\""),
    );
    s.write("proj/progs/main.hql", "\"runs?\"\n");
    let toml = s.path.join("proj/hql.toml").display().to_string();
    for command in ["run", "check"] {
        let r = s.hql(&[command, "--diagnostics", "json", "proj/progs/main.hql"]);
        assert_eq!((r.out.as_str(), r.status), ("", 2), "{command}: {}", r.err);
        assert_eq!(
            r.err,
            format!(
                "{{\"code\":\"hql::config\",\"severity\":\"error\",\"message\":\"`sources.orders.columns.amount.type`: unknown value `flaot`\",\"file\":\"{toml}\",\"line\":3,\"column\":64,\"end_line\":3,\"end_column\":68,\"help\":\"did you mean `float`?\"}}\n"
            ),
            "{command}"
        );
    }
    // A TOML syntax error is placed where the parser stopped.
    s.write("proj/hql.toml", "[sources.orders]\nfile = \n");
    let r = s.hql(&[
        "vet",
        "--diagnostics",
        "json",
        "proj/progs/main.hql",
        "x.jsonl",
    ]);
    assert_eq!(r.status, 2, "{}", r.err);
    assert!(
        r.err.starts_with("{\"code\":\"hql::config\",\"severity\":\"error\",\"message\":\"invalid TOML at line 2, column 8"),
        "{}",
        r.err
    );
    assert!(
        r.err
            .contains(&format!("\"file\":\"{toml}\",\"line\":2,\"column\":8")),
        "{}",
        r.err
    );
}

#[test]
fn confine_refuses_configured_paths_outside_the_configs_folder() {
    let s = project("cfg-confine");
    s.write("secret.jsonl", "{\"s\": 1}\n");
    s.write(
        "proj/hql.toml",
        "[sources.inside]\nfile = \"data/orders.csv\"\n\n[sources.outside]\nfile = \"../secret.jsonl\"\n",
    );
    let program = "source(\"inside\") | count()\n";
    // Without --confine a path may leave the folder.
    let r = run_in_project(&s, "source(\"outside\") | count()\n");
    assert_eq!((r.out.as_str(), r.status), ("1\n", 0), "{}", r.err);
    for command in ["run", "check", "vet"] {
        s.write("proj/progs/main.hql", program);
        let mut args = vec![
            command,
            "--confine",
            "--diagnostics",
            "json",
            "proj/progs/main.hql",
        ];
        if command == "vet" {
            args.push("inside");
        }
        let r = s.hql(&args);
        assert_eq!((r.out.as_str(), r.status), ("", 2), "{command}: {}", r.err);
        assert!(
            r.err.starts_with("{\"code\":\"hql::config\",\"severity\":\"error\",\"message\":\"`sources.outside.file`: `../secret.jsonl` is outside "),
            "{command}: {}",
            r.err
        );
        assert!(
            r.err.contains("\"line\":5,\"column\":1,"),
            "{command}: {}",
            r.err
        );
    }
    // An absolute path outside is refused too; one inside is not.
    let inside = s.path.join("proj/data/orders.csv").display().to_string();
    s.write(
        "proj/hql.toml",
        format!("[sources.inside]\nfile = \"{inside}\"\ncsv = {{ delimiter = \";\" }}\n\n[targets.out]\nfile = \"/tmp/elsewhere.jsonl\"\n"),
    );
    let r = s.hql(&["run", "--confine", "proj/progs/main.hql"]);
    assert_eq!(r.status, 2, "{}", r.err);
    assert!(r.err.contains("`targets.out.file`"), "{}", r.err);
    s.write(
        "proj/hql.toml",
        format!("[sources.inside]\nfile = \"{inside}\"\ncsv = {{ delimiter = \";\" }}\n"),
    );
    let r = s.hql(&["run", "--confine", "proj/progs/main.hql"]);
    assert_eq!((r.out.as_str(), r.status), ("3\n", 0), "{}", r.err);
}

#[test]
fn config_names_the_file_and_no_config_uses_none() {
    let s = project("cfg-choose");
    // The toml found upward configures `orders`; `other.toml` elsewhere
    // configures `other` over the same file.
    s.write(
        "conf/other.toml",
        "[sources.other]\nfile = \"../proj/data/orders.csv\"\ncsv = { delimiter = \";\" }\n",
    );
    s.write("proj/progs/main.hql", "source(\"other\") | count()\n");
    s.write(
        "proj/progs/cases.hql",
        "check \"three\": (source(\"other\") | count()) == 3\n",
    );
    s.write("proj/progs/c.hql", ORDER);
    let with = ["--config", "conf/other.toml"];
    let r = s.hql(&[&["run", "proj/progs/main.hql"][..], &with].concat());
    assert_eq!((r.out.as_str(), r.status), ("3\n", 0), "run: {}", r.err);
    let r = s.hql(&[&["check", "proj/progs/main.hql"][..], &with].concat());
    assert_eq!(r.status, 0, "check: {}", r.err);
    let r = s.hql(&[&["test", "proj/progs/cases.hql"][..], &with].concat());
    assert_eq!(
        (r.out.as_str(), r.status),
        (
            "PASS three (proj/progs/cases.hql:1)\n1 passed, 0 failed\n",
            0
        ),
        "test: {}",
        r.err
    );
    let r = s.hql(&[&["vet", "proj/progs/c.hql", "other"][..], &with].concat());
    assert_eq!(r.status, 1, "vet: {}", r.err);
    assert!(r.out.starts_with("other: {total: 3,"), "vet: {}", r.out);
    let r = s.hql_stdin(
        &["repl", "--config", "conf/other.toml"],
        "source(\"other\") | count()\n",
    );
    assert_eq!((r.out.as_str(), r.status), ("3\n", 0), "repl: {}", r.err);
    // Without --config the toml found upward has no `other`.
    let r = s.hql(&["run", "proj/progs/main.hql"]);
    assert_eq!(r.status, 2, "{}", r.err);
    // --no-config: no toml at all, though one is found upward.
    s.write("proj/progs/main.hql", "source(\"orders\") | count()\n");
    let r = s.hql(&["run", "proj/progs/main.hql"]);
    assert_eq!((r.out.as_str(), r.status), ("3\n", 0), "{}", r.err);
    for command in ["run", "check"] {
        let r = s.hql(&[command, "--no-config", "proj/progs/main.hql"]);
        assert_eq!(r.status, 2, "{command}: {}", r.err);
        assert!(r.err.contains("orders"), "{command}: {}", r.err);
    }
    // A --config file that does not exist is an hql::config error.
    let r = s.hql(&["run", "--config", "nope.toml", "proj/progs/main.hql"]);
    assert_eq!(r.status, 2, "{}", r.err);
    assert!(
        r.err.contains("hql::config") && r.err.contains("nope.toml: cannot read it"),
        "{}",
        r.err
    );
}
