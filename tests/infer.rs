//! `hql infer DATA` (tooling.md, "Commands"): the
//! inferred contract for each rule, compared exactly; the options; and over
//! every data file of `examples/` and `docs/`, `hql vet` with the inferred
//! contract finds no failure but the lines `hql infer` skipped. The REPL's
//! `:infer` is in `repl_piped.rs`.

mod common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::Command;

/// `hql infer NAME ARGS…` over `data` written to `NAME` in a fresh folder.
fn infer(name: &str, data: &str, args: &[&str]) -> Run {
    let s = Scratch::new("infer");
    s.write(name, data);
    let mut all = vec!["infer", name];
    all.extend_from_slice(args);
    s.hql(&all)
}

/// The contract inferred from `data` (a clean run, nothing on stderr).
fn inferred(name: &str, data: &str) -> String {
    let run = infer(name, data, &[]);
    assert_eq!((run.err.as_str(), run.status), ("", 0), "{}", run.out);
    run.out
}

/// `n` JSON Lines, each `line(i)`.
fn jsonl(n: usize, line: impl Fn(usize) -> String) -> String {
    (0..n).map(|i| line(i) + "\n").collect()
}

#[test]
fn field_types_in_first_seen_order() {
    let data =
        "{\"id\": 1, \"name\": \"a\", \"ok\": true}\n{\"name\": \"b\", \"id\": 2, \"ok\": false}\n";
    assert_eq!(
        inferred("orders.jsonl", data),
        "type Orders : DataContract = {\n    id: Int\n    name: String\n    ok: Bool\n}\n"
    );
}

#[test]
fn mixed_kinds_are_a_union_in_first_seen_order() {
    let data = "{\"v\": \"x\"}\n{\"v\": 3}\n{\"v\": true}\n{\"v\": \"y\"}\n{\"v\": {\"a\": 1}}\n";
    assert_eq!(
        inferred("mixed.jsonl", data),
        "type Mixed : DataContract = {\n    v: String | Int | Bool | { a: Int }\n}\n"
    );
}

#[test]
fn fields_not_in_every_record_are_optional() {
    let data = "{\"a\": 1, \"b\": 2}\n{\"a\": 3}\n{\"a\": 4, \"c\": \"x\"}\n";
    assert_eq!(
        inferred("opt.jsonl", data),
        "type Opt : DataContract = {\n    a: Int\n    b?: Int\n    c?: String\n}\n"
    );
}

#[test]
fn nulls_add_null_and_always_null_is_null() {
    let data = "{\"a\": null, \"b\": null}\n{\"a\": \"x\", \"b\": null}\n{\"b\": null}\n";
    assert_eq!(
        inferred("nulls.jsonl", data),
        "type Nulls : DataContract = {\n    a?: String | Null\n    b: Null\n}\n"
    );
}

#[test]
fn int_and_float_seen_give_float() {
    let data = "{\"a\": 1, \"b\": 2, \"c\": 1.5}\n{\"a\": 2.5, \"b\": 3, \"c\": 1.50}\n";
    assert_eq!(
        inferred("n.jsonl", data),
        "type N : DataContract = {\n    a: Float\n    b: Int\n    c: Float\n}\n"
    );
}

#[test]
fn lists_only_empty_are_list_any_and_elements_are_unions() {
    let data = "{\"e\": [], \"t\": [\"a\"], \"m\": [1, \"x\", null]}\n{\"e\": [], \"t\": [], \"m\": [2.5]}\n";
    assert_eq!(
        inferred("lists.jsonl", data),
        "type Lists : DataContract = {\n    e: List[Any]\n    t: List[String]\n    m: List[Float | String | Null]\n}\n"
    );
}

#[test]
fn lists_of_records_merge_with_fields_not_in_every_element_optional() {
    let data = "{\"items\": [{\"sku\": \"a\", \"qty\": 1}, {\"sku\": \"b\"}]}\n\
                {\"items\": [{\"qty\": 2, \"sku\": \"c\", \"gift\": true}]}\n";
    assert_eq!(
        inferred("carts.jsonl", data),
        "type Carts : DataContract = {\n    items: List[{ sku: String, qty?: Int, gift?: Bool }]\n}\n"
    );
}

#[test]
fn nested_records_are_inline() {
    let data = "{\"to\": {\"name\": \"A\", \"at\": {\"city\": \"B\"}}, \"US Gross\": 1}\n\
                {\"to\": {\"name\": \"C\", \"at\": {\"city\": \"D\", \"zip\": \"1\"}, \"note\": null}}\n";
    assert_eq!(
        inferred("ship.jsonl", data),
        "type Ship : DataContract = {\n    to: { name: String, at: { city: String, zip?: String }, note?: Null }\n    \
         \"US Gross\"?: Int\n}\n"
    );
}

#[test]
fn few_distinct_texts_over_twenty_records_are_a_literal_union() {
    let states = ["open", "shipped", "open", "lost"];
    let data = jsonl(20, |i| {
        format!(
            "{{\"s\": \"{}\", \"n\": \"{i}\"}}",
            states[i % states.len()]
        )
    });
    assert_eq!(
        inferred("st.jsonl", &data),
        "type St : DataContract = {\n    s: \"open\" | \"shipped\" | \"lost\"\n    n: String\n}\n"
    );
    // Nineteen records are too few.
    let data = jsonl(19, |i| format!("{{\"s\": \"{}\"}}", states[i % 4]));
    assert_eq!(
        inferred("st.jsonl", &data),
        "type St : DataContract = {\n    s: String\n}\n"
    );
    // Eight distinct texts still are a union, nine are not.
    let data = jsonl(24, |i| {
        format!("{{\"s\": \"v{}\", \"t\": \"w{}\"}}", i % 8, i % 9)
    });
    assert_eq!(
        inferred("st.jsonl", &data),
        "type St : DataContract = {\n    s: \"v0\" | \"v1\" | \"v2\" | \"v3\" | \"v4\" | \"v5\" | \"v6\" | \"v7\"\n    \
         t: String\n}\n"
    );
}

#[test]
fn the_literal_threshold_counts_records_where_the_field_is_present() {
    // 30 records, `s` present in 20 (a union) and `t` in 19 (not).
    let data = jsonl(30, |i| match i {
        0..=18 => "{\"s\": \"a\", \"t\": \"b\"}".to_string(),
        19 => "{\"s\": \"c\"}".to_string(),
        _ => "{}".to_string(),
    });
    assert_eq!(
        inferred("p.jsonl", &data),
        "type P : DataContract = {\n    s?: \"a\" | \"c\"\n    t?: String\n}\n"
    );
    // A field with other kinds beside texts keeps `String`.
    let data = jsonl(20, |i| match i {
        0 => "{\"s\": 1}".to_string(),
        _ => "{\"s\": \"a\"}".to_string(),
    });
    assert_eq!(
        inferred("p.jsonl", &data),
        "type P : DataContract = {\n    s: Int | String\n}\n"
    );
}

#[test]
fn csv_cells_convert_but_leading_zeros_and_plus_stay_text() {
    // A field with one such cell is `String`, whatever its other cells
    // hold; fields keep the header's order though a cell is empty.
    let data = "zip,qty,price,paid,code,note,tags,id\n\
                0042,1,2.5,true,+41,,[\"a\"],1\n\
                8001,2,3,false,41,x,[],1.5\n";
    assert_eq!(
        inferred("rows.csv", data),
        "type Rows : DataContract = {\n    zip: String\n    qty: Int\n    price: Float\n    paid: Bool\n    \
         code: String\n    note?: String\n    tags: List[String]\n    id: Float\n}\n"
    );
}

#[test]
fn json_arrays_and_standard_input() {
    let data = "[\n  {\"a\": 1},\n  {\"a\": 2, \"b\": \"x\"}\n]\n";
    assert_eq!(
        inferred("arr.json", data),
        "type Arr : DataContract = {\n    a: Int\n    b?: String\n}\n"
    );
    let s = Scratch::new("infer-stdin");
    let run = s.hql_stdin(&["infer", "-"], "{\"a\": 1}\n");
    assert_eq!(
        (run.out.as_str(), run.err.as_str(), run.status),
        ("type Record : DataContract = {\n    a: Int\n}\n", "", 0)
    );
}

#[test]
fn lines_that_do_not_decode_are_skipped_and_counted() {
    let run = infer("r.jsonl", "{\"a\": 1}\nnot json\n[1]\n{\"a\": \n", &[]);
    assert_eq!(run.out, "type R : DataContract = {\n    a: Int\n}\n");
    assert_eq!(
        run.err,
        "hql infer: r.jsonl: skipped 2 lines that do not decode, 1 value that is not a record\n"
    );
    assert_eq!(run.status, 0);
}

#[test]
fn values_that_are_not_records_are_skipped_and_counted_with_undecodable_lines() {
    let run = infer(
        "v.json",
        "[{\"a\": 1}, 2, \"x\", [3], null, {\"a\": 4}]\noops\n",
        &[],
    );
    assert_eq!(run.out, "type V : DataContract = {\n    a: Int\n}\n");
    assert_eq!(
        run.err,
        "hql infer: v.json: skipped 1 line that does not decode, 4 values that are not records\n"
    );
    assert_eq!(run.status, 0);
}

#[test]
fn text_fields_every_value_of_which_is_a_date_timestamp_or_email_get_that_type() {
    let data = "\
{\"d\": \"2024-02-29\", \"t\": \"2024-02-29T13:45:00Z\", \"e\": \"ada@example.org\", \"n\": \"2024-02-29\", \"m\": \"2024-02-29\"}
{\"d\": \"1999-12-31\", \"t\": \"1999-12-31 23:59:60+01:00\", \"e\": \"b.c+d@mail.example.co.uk\", \"n\": \"2023-02-29\", \"m\": 7}
{\"d\": null, \"t\": \"2000-01-01t00:00:00.5z\", \"e\": \"x@y.io\", \"n\": \"soon\", \"m\": \"2024-03-01\"}
";
    assert_eq!(
        inferred("when.jsonl", data),
        "type When : DataContract = {\n    d: Date | Null\n    t: Timestamp\n    e: Email\n    \
         n: String\n    m: String | Int\n}\n"
    );
    // In CSV too; and `hql vet` accepts the file with what was inferred.
    let s = Scratch::new("infer-standard");
    s.write(
        "when.csv",
        "d,e\n2024-02-29,ada@example.org\n2023-02-28,x@y.io\n",
    );
    let run = s.hql(&["infer", "when.csv"]);
    assert_eq!(
        (run.out.as_str(), run.err.as_str(), run.status),
        (
            "type When : DataContract = {\n    d: Date\n    e: Email\n}\n",
            "",
            0
        )
    );
    s.write("when.hql", &run.out);
    let vet = s.hql(&["vet", "when.hql", "when.csv"]);
    assert_eq!(vet.status, 0, "{}{}", vet.out, vet.err);
}

#[test]
fn the_default_name_is_the_stem_capitalised() {
    let data = "{\"a\": 1}\n";
    for (file, name) in [
        ("orders.jsonl", "Orders"),
        ("orders-march.jsonl", "OrdersMarch"),
        ("named_checks.jsonl", "NamedChecks"),
        ("2024.jsonl", "T2024"),
        ("string.jsonl", "StringRecord"),
    ] {
        assert_eq!(
            inferred(file, data),
            format!("type {name} : DataContract = {{\n    a: Int\n}}\n")
        );
    }
}

#[test]
fn name_closed_and_limit() {
    let data = "{\"a\": 1}\n{\"a\": 2, \"b\": true}\n";
    let run = infer("d.jsonl", data, &["--name", "Delivery", "--closed"]);
    assert_eq!(
        (run.out.as_str(), run.status),
        (
            "type Delivery : TypeContract = {\n    a: Int\n    b?: Bool\n}\n",
            0
        )
    );
    let run = infer("d.jsonl", data, &["--limit", "1"]);
    assert_eq!(
        (run.out.as_str(), run.status),
        ("type D : DataContract = {\n    a: Int\n}\n", 0)
    );
}

#[test]
fn usage_errors_and_no_records() {
    let run = infer("d.jsonl", "{\"a\": 1}\n", &["--name", "not a name"]);
    assert_eq!(run.out, "");
    assert_eq!(
        run.err,
        "hql infer: `not a name` is not a type name (letters, digits and `_`, not starting with a digit)\n"
    );
    assert_eq!(run.status, 2);
    let run = infer("d.txt", "{\"a\": 1}\n", &[]);
    assert_eq!(
        run.err,
        "hql infer: cannot tell the format of d.txt from its extension (.jsonl, .json, .csv or .parquet)\n"
    );
    assert_eq!(run.status, 2);
    let run = infer("d.jsonl", "\n", &[]);
    assert_eq!((run.out.as_str(), run.status), ("", 1));
    assert_eq!(
        run.err,
        "hql infer: d.jsonl holds no record to infer from\n"
    );
}

// ------------------------------------------- every data file, inferred then vetted

fn data_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            data_files(&path, found);
        } else if path
            .extension()
            .is_some_and(|e| e == "jsonl" || e == "json" || e == "csv")
        {
            found.push(path);
        }
    }
}

/// The numbers in `hql infer`'s "skipped …" line: what vet must count as
/// failures.
fn skipped(stderr: &str) -> i64 {
    // Only `hql infer`'s own lines: a hint's numbers are not skips.
    let own = stderr.lines().filter(|l| l.starts_with("hql infer:"));
    own.flat_map(|l| l.split(|c: char| !c.is_ascii_digit()))
        .filter_map(|n| n.parse::<i64>().ok())
        .sum()
}

#[test]
fn every_data_files_inferred_contract_is_formatted_and_vet_accepts_the_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    data_files(&root.join("examples"), &mut files);
    data_files(&root.join("docs"), &mut files);
    files.retain(|f| !f.components().any(|c| c.as_os_str() == "out"));
    files.sort();
    assert!(files.len() > 20, "{files:?}");
    let s = Scratch::new("infer-vet");
    for file in &files {
        let data = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let hql = |args: &[&str]| {
            let out = Command::new(env!("CARGO_BIN_EXE_hql"))
                .args(args)
                .current_dir(root)
                .env("HQL_PROGRESS", "0")
                .output()
                .expect("hql runs");
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            (text(&out.stdout), text(&out.stderr), out.status.code())
        };
        let (contract, err, status) = hql(&["infer", &data]);
        assert_eq!(status, Some(0), "{data}: {err}");
        let path = s.write("contract.hql", &contract);
        // In canonical layout: `hql fmt --check` passes on it.
        let (changed, ferr, fstatus) = hql(&["fmt", "--check", path.to_str().unwrap()]);
        assert_eq!(
            fstatus,
            Some(0),
            "{data}: not formatted:\n{contract}{changed}{ferr}"
        );
        let (report, verr, _) = hql(&["vet", path.to_str().unwrap(), &data, "--errors", "100"]);
        let err_count = report
            .split("err: ")
            .nth(1)
            .and_then(|r| r.split(',').next())
            .and_then(|n| n.parse::<i64>().ok());
        assert_eq!(
            err_count,
            Some(skipped(&err)),
            "{data}:\n{contract}{report}{verr}"
        );
        for failure in report.lines().skip(1) {
            assert!(
                failure.contains("kind: \"decode\"") || failure.contains("kind: \"not_record\""),
                "{data}:\n{contract}{failure}"
            );
        }
    }
}

/// The examples of the README and the reference print what they show.
#[test]
fn the_docs_examples_print_what_they_show() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (doc, command) in [
        ("README.md", "hql infer docs/data/orders.jsonl"),
        (
            "docs/reference.md",
            "hql infer examples/contracts/carts.jsonl --name Cart --closed",
        ),
    ] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        let after = text
            .split(&format!("```sh\n{command}\n```\n\n```text\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("{doc} shows `{command}` and its output"));
        let shown = &after[..after.find("```").expect("the output block ends")];
        let out = Command::new(env!("CARGO_BIN_EXE_hql"))
            .args(command.split(' ').skip(1))
            .current_dir(root)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), shown, "{doc}");
        assert_eq!(out.status.code(), Some(0));
    }
}
