//! Parquet sources and targets (tooling.md, "Sources, targets and the
//! schema boundary"): every logical type read as its HQL value, nulls at
//! every level, row groups, columns the contract lacks or misses, damaged
//! files, and the same failure records as the same data read as JSON Lines.
//!
//! The files are in `tests/data/parquet/`, written by pyarrow with the
//! `make.py` beside them, so that these tests need no Python. The tests at
//! the end that read HQL's own Parquet back with pyarrow and DuckDB are
//! `#[ignore]`d (`.ci/run` runs them; they install pyarrow with pip into
//! `target/sql-venv`).

mod common;
mod sql;

use common::*;

/// A scratch folder holding the fixture files.
fn with_fixtures(name: &str) -> Scratch {
    let s = Scratch::new(name);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/parquet");
    for entry in std::fs::read_dir(dir).expect("the fixtures").flatten() {
        let bytes = std::fs::read(entry.path()).expect("a fixture");
        s.write(&entry.file_name().to_string_lossy(), bytes);
    }
    s
}

/// Run `program` in `s`; it must succeed with nothing on stderr.
#[track_caller]
fn ok_run(s: &Scratch, program: &str) -> String {
    let r = s.run(program, &[]);
    assert_eq!(
        r.status, 0,
        "expected status 0\nprogram:\n{program}\nstdout:\n{}\nstderr:\n{}",
        r.out, r.err
    );
    assert!(r.err.is_empty(), "expected empty stderr, got:\n{}", r.err);
    r.out
}

/// Run `program` in `s`; it must fail at run time (exit 1) with `code`.
#[track_caller]
fn failing_run(s: &Scratch, program: &str, code: &str) -> String {
    let r = s.run(program, &[]);
    assert_eq!(r.status, 1, "stdout:\n{}\nstderr:\n{}", r.out, r.err);
    assert!(r.err.contains(code), "expected {code}, got:\n{}", r.err);
    assert!(!r.err.contains("panicked"), "a panic:\n{}", r.err);
    r.err
}

/// The same contract closed: its valid records have no undeclared field,
/// so every one has a column in a Parquet target.
const CLOSED: &str = r#"type Order : TypeContract = {
    order_id: String
    amount: Float
    currency: "EUR" | "USD" | "GBP"
    qty: Int
    placed: Date
    items: List[{sku: String, qty: Int}]
    require positive: amount > 0
}
"#;

const ORDER: &str = r#"type Order : DataContract = {
    order_id: String
    amount: Float
    currency: "EUR" | "USD" | "GBP"
    qty: Int
    placed: Date
    items: List[{sku: String, qty: Int}]
    require positive: amount > 0
}
"#;

// ------------------------------------------------------------ types

#[test]
fn every_logical_type_reads_as_its_hql_value() {
    let s = with_fixtures("parquet-types");
    let out = ok_run(&s, "source(file(\"types.parquet\"), Parquet) | first()\n");
    let expected = concat!(
        "{i8: -8, i16: 1600, i32: -320000, i64: 6400000000, u32: 4000000000, ",
        "u64: 18446744073709551615, f32: 0.1, f64: 2.5, price: 12.30, ",
        "big: 1234567890123456789012345678.0123456789, name: \"Ada\", flag: true, ",
        "day: \"2024-02-29\", at_ms: \"2024-02-29T13:45:00.120Z\", ",
        "at_us: \"2024-02-29T13:45:00.123456\", at_ns: \"1969-12-31T23:59:59.000000000Z\", ",
        "at_s: \"2000-01-01T00:00:00.000Z\", tags: [\"a\", \"b\"], point: {x: 1, label: \"p\"}, ",
        "attrs: {k: 1, j: 2}, items: [{sku: \"A-1\", qty: 2}, {sku: \"B-2\", qty: 1}], ",
        "matrix: [[1, 2], [], [3]]}\n"
    );
    assert_eq!(out, expected);
}

#[test]
fn numbers_keep_their_kinds_and_digits() {
    let s = with_fixtures("parquet-numbers");
    let program =
        "type K : DataContract = {i64: Int, u64: Int, f32: Float, price: Float, big: Float}\n\
                   type W : DataContract = {price: Int}\n\
                   let r = source(file(\"types.parquet\"), Parquet) | first()\n\
                   source(file(\"types.parquet\"), Parquet) | validate(K) | oks() | count()\n\
                   (source(file(\"types.parquet\"), Parquet) | validate(W) | report()).by_rule\n\
                   [r.price == 12.3, r.u64 > r.i64]\n";
    let out = ok_run(&s, program);
    assert_eq!(
        out,
        "2\n[{rule: \"W.price.type\", kind: \"type\", count: 2}, \
         {rule: \"W.price.missing\", kind: \"missing\", count: 1}]\n[true, true]\n"
    );
}

#[test]
fn nulls_are_absent_or_null_at_every_level() {
    let s = with_fixtures("parquet-nulls");
    // Without a contract every null field is absent; a null inside a list
    // or a map is `null`, since a list has no absent elements.
    let out = ok_run(&s, "source(file(\"types.parquet\"), Parquet) | collect()\n");
    assert!(out.contains("}, {}, {"), "the row of nulls is empty: {out}");
    assert!(
        out.contains("tags: [\"x\", null]")
            && out.contains("point: {label: \"only label\"}")
            && out.contains("attrs: {gone: null}")
            && out.contains("items: [{sku: \"C-3\"}, null]")
            && out.contains("matrix: [null, [null]]"),
        "{out}"
    );
    // A field whose type admits `Null` reads a null cell as `null`, at the
    // top and inside a struct.
    let program = "type P = {x: Int | Null, label: String}\n\
                   type T : DataContract = {name: String | Null, point: P | Null, i8?: Int}\n\
                   source(file(\"types.parquet\"), Parquet) | validate(T) | oks() \
                   | map(r => {name: r.name, point: r.point}) | collect()\n";
    let out = ok_run(&s, program);
    assert_eq!(
        out,
        "[{name: \"Ada\", point: {x: 1, label: \"p\"}}, {name: null, point: null}, \
         {name: \"\", point: {x: null, label: \"only label\"}}]\n"
    );
}

#[test]
fn a_binary_column_is_refused_by_name_unless_read_as_a_string() {
    let s = with_fixtures("parquet-binary");
    let err = failing_run(
        &s,
        "source(file(\"binary.parquet\"), Parquet) | collect()\n",
        "hql::io",
    );
    assert!(err.contains("column `blob` holds binary data"), "{err}");
    let program = "type B : DataContract = {id: Int, blob?: String}\n\
                   source(file(\"binary.parquet\"), Parquet) | validate(B) | oks() | collect()\n";
    assert_eq!(
        ok_run(&s, program),
        "[{id: 1, blob: \"Zm9vYmFy\"}, {id: 2}]\n"
    );
}

#[test]
fn dictionary_encoded_text_reads_as_its_values() {
    let s = with_fixtures("parquet-dictionary");
    let out = ok_run(
        &s,
        "source(file(\"dictionary.parquet\"), Parquet) | collect()\n",
    );
    assert_eq!(
        out,
        "[{currency: \"EUR\", n: 1}, {currency: \"USD\", n: 2}, {currency: \"EUR\", n: 3}, {n: 4}]\n"
    );
}

// ------------------------------------------------------------ rows

#[test]
fn origin_lines_are_row_numbers_across_row_groups() {
    let s = with_fixtures("parquet-lines");
    // orders.parquet holds 60 rows in row groups of 16.
    let program = "source(file(\"orders.parquet\"), Parquet) | count()\n\
                   type Id : DataContract = {order_id: String}\n\
                   source(file(\"orders.parquet\"), Parquet) | validate(Id) | errs() \
                   | map(e => e.origin.line) | collect()\n\
                   (source(file(\"orders.parquet\"), Parquet) | validate(Id) | errs() | first()).origin.source\n";
    let out = ok_run(&s, program);
    assert_eq!(out, "60\n[4, 15, 26, 37, 48, 59]\n\"orders.parquet\"\n");
}

#[test]
fn every_codec_pyarrow_writes_reads_the_same() {
    let s = with_fixtures("parquet-codecs");
    let read = |file: &str| {
        ok_run(
            &s,
            &format!("source(file(\"{file}\"), Parquet) | collect()\n"),
        )
    };
    let snappy = read("orders.parquet");
    assert_eq!(read("orders-zstd.parquet"), snappy);
    assert_eq!(read("orders-gzip.parquet"), snappy);
}

// ------------------------------------------------------------ the same as JSON

/// What a program prints over `orders.parquet`, and over the same records
/// as JSON Lines, with the source's name taken out.
fn both(s: &Scratch, contract: &str, pipeline: &str) -> (String, String) {
    let run = |file: &str, format: &str| {
        let program =
            format!("{contract}source(file(\"{file}\"), {format}) | validate(Order) {pipeline}\n");
        ok_run(s, &program).replace(file, "<file>")
    };
    (
        run("orders.parquet", "Parquet"),
        run("orders.jsonl", "Json"),
    )
}

#[test]
fn failure_records_are_those_of_the_same_data_as_json_lines() {
    let s = with_fixtures("parquet-differential");
    let open = ORDER;
    let closed = ORDER.replace("DataContract", "TypeContract");
    for contract in [open, closed.as_str()] {
        for pipeline in [
            "| errs() | collect()",
            "| report()",
            "| oks() | count()",
            "| oks() | collect()",
        ] {
            let (parquet, json) = both(&s, contract, pipeline);
            assert_eq!(parquet, json, "{contract}{pipeline}");
        }
    }
    // The closed contract sees the `note` column wherever it holds a value.
    let (parquet, _) = both(&s, &closed, "| report()");
    assert!(parquet.contains("Order.note.extra"), "{parquet}");
}

#[test]
fn count_and_report_read_only_an_open_contracts_columns() {
    let s = with_fixtures("parquet-explain");
    let program = format!(
        "{ORDER}source(file(\"orders.parquet\"), Parquet) | validate(Order) | report()\n\
         source(file(\"orders.parquet\"), Parquet) | validate(Order) | errs()\n"
    );
    let r = s.run(&program, &["--explain"]);
    assert_eq!(r.status, 0, "{}", r.err);
    let lines: Vec<&str> = r.out.lines().collect();
    assert_eq!(
        lines[0],
        "main.hql:10: report(): counting: Parquet cells checked, one thread"
    );
    assert_eq!(
        lines[1],
        "    columns read: the contract's fields only (order_id, amount, currency, qty, placed, items)"
    );
    assert!(r.out.contains("columns read: every column"), "{}", r.out);
}

#[test]
fn a_missing_required_column_fails_every_record() {
    let s = with_fixtures("parquet-missing");
    let program = format!(
        "{ORDER}let r = source(file(\"orders-no-amount.parquet\"), Parquet) | validate(Order) | report()\n\
         r.by_rule | filter(b => b.rule == \"Order.amount.missing\") | collect()\n"
    );
    assert_eq!(
        ok_run(&s, &program),
        "[{rule: \"Order.amount.missing\", kind: \"missing\", count: 60}]\n"
    );
}

// ------------------------------------------------------------ errors

#[test]
fn a_damaged_file_is_an_io_error_naming_it() {
    let s = with_fixtures("parquet-damaged");
    for file in ["truncated.parquet", "damaged.parquet", "orders.jsonl"] {
        let err = failing_run(
            &s,
            &format!("source(file(\"{file}\"), Parquet) | collect()\n"),
            "hql::io",
        );
        assert!(err.contains(file), "{err}");
    }
    let err = failing_run(
        &s,
        "source(file(\"nope.parquet\"), Parquet) | collect()\n",
        "hql::io",
    );
    assert!(err.contains("cannot read nope.parquet"), "{err}");
}

#[test]
fn parquet_cannot_come_from_standard_input() {
    let s = with_fixtures("parquet-stdin");
    s.write("main.hql", "source(stdin(), Parquet) | collect()\n");
    let bytes = std::fs::read(s.path.join("orders.parquet")).unwrap();
    let r = s.hql_stdin(&["run", "main.hql"], bytes);
    assert_eq!(r.status, 1, "{}", r.err);
    assert!(r.err.contains("hql::io"), "{}", r.err);
    assert!(
        r.err.contains("Parquet cannot be read from standard input"),
        "{}",
        r.err
    );
    assert!(r.err.contains("data.parquet"), "{}", r.err);
    // Nor from a FIFO or a folder: refused without waiting for a writer.
    s.fifo("pipe.parquet");
    std::fs::create_dir(s.path.join("dir.parquet")).unwrap();
    for name in ["pipe.parquet", "dir.parquet"] {
        let err = failing_run(
            &s,
            &format!("source(file(\"{name}\"), Parquet) | count()\n"),
            "hql::io",
        );
        assert!(
            err.contains(&format!("cannot read {name}: it is not a regular file")),
            "{err}"
        );
    }
}

// ------------------------------------------------------------ configured, extensions

#[test]
fn a_configured_source_takes_parquet_from_its_extension_or_format() {
    let s = with_fixtures("parquet-config");
    s.write(
        "hql.toml",
        "[sources.orders]\nfile = \"orders.parquet\"\n\n\
         [sources.renamed]\nfile = \"types.parquet\"\nformat = \"parquet\"\n\
         columns = { who = \"name\" }\n",
    );
    let out = ok_run(
        &s,
        "source(\"orders\") | collect() | len()\n(source(\"renamed\") | first()).who\n",
    );
    assert_eq!(out, "60\n\"Ada\"\n");
}

// ------------------------------------------------------------ targets

#[test]
fn a_target_written_reads_back_the_same() {
    let s = with_fixtures("parquet-roundtrip");
    let write = format!(
        "{CLOSED}source(file(\"orders.parquet\"), Parquet) | validate(Order) | oks() | write(file(\"out.parquet\"))\n"
    );
    assert_eq!(ok_run(&s, &write), "26\n");
    let read = format!(
        "{CLOSED}let a = source(file(\"out.parquet\"), Parquet) | validate(Order) | oks() | collect()\n\
         let b = source(file(\"orders.parquet\"), Parquet) | validate(Order) | oks() | collect()\n\
         [a == b, len(a)]\n"
    );
    assert_eq!(ok_run(&s, &read), "[true, 26]\n");
    assert_eq!(
        s.files().iter().filter(|f| f.contains("out")).count(),
        1,
        "{:?}",
        s.files()
    );
}

/// A Parquet target named `….gz` or `….zst` is written compressed, and a
/// compressed Parquet source is decompressed before its footer is read.
#[test]
fn compressed_parquet_files_write_and_read_back() {
    let s = with_fixtures("parquet-compressed");
    let write = format!(
        "{CLOSED}source(file(\"orders.parquet\"), Parquet) | validate(Order) | oks() | write(file(\"out.parquet.gz\"))\n\
         source(file(\"orders.parquet\"), Parquet) | validate(Order) | oks() | write(file(\"out.parquet.zst\"))\n"
    );
    assert_eq!(ok_run(&s, &write), "26\n26\n");
    assert_eq!(&s.read_bytes("out.parquet.gz")[..2], &[0x1f, 0x8b]);
    assert_eq!(
        &s.read_bytes("out.parquet.zst")[..4],
        &[0x28, 0xb5, 0x2f, 0xfd]
    );
    let read = format!(
        "{CLOSED}let a = source(file(\"out.parquet.gz\"), Parquet) | validate(Order) | oks() | collect()\n\
         let b = source(file(\"out.parquet.zst\"), Parquet) | validate(Order) | oks() | collect()\n\
         let c = source(file(\"orders.parquet\"), Parquet) | validate(Order) | oks() | collect()\n\
         [a == c, b == c, len(a)]\n"
    );
    assert_eq!(ok_run(&s, &read), "[true, true, 26]\n");
}

#[test]
fn route_writes_oks_as_parquet_and_failures_as_json() {
    let s = with_fixtures("parquet-route");
    let program = format!(
        "{CLOSED}source(file(\"orders.parquet\"), Parquet) | validate(Order) \
         | route(ok: file(\"ok.parquet\"), err: file(\"bad.jsonl\"))\n\
         "
    );
    assert!(ok_run(&s, &program).starts_with("{total: 60, ok: 26, err: 34, "));
    assert_eq!(s.read("bad.jsonl").lines().count(), 34);
    let out = ok_run(
        &s,
        "source(file(\"ok.parquet\"), Parquet) | collect() | len()\n",
    );
    assert_eq!(out, "26\n");
}

#[test]
fn a_contract_without_lossless_columns_is_refused_before_anything_is_written() {
    let s = with_fixtures("parquet-refused");
    for (decl, field) in [
        ("{id: String, extra: Any}", "field `extra` is `Any`"),
        (
            "{id: String, v: Int | String}",
            "field `v` is a union of different kinds",
        ),
        ("{id: String, n: {deep: Any}}", "field `n.deep` is `Any`"),
    ] {
        let program = format!(
            "type T : DataContract = {decl}\n\
             source(file(\"missing-source.jsonl\"), Json) | validate(T) | oks() | write(file(\"out.parquet\"))\n"
        );
        let err = failing_run(&s, &program, "hql::io");
        assert!(err.contains(field), "{err}");
        assert!(!s.exists("out.parquet"), "{:?}", s.files());
        // Refused before the source was opened.
        assert!(!err.contains("cannot read"), "{err}");
    }
    let err = failing_run(
        &s,
        "source(file(\"orders.jsonl\"), Json) | write(file(\"out.parquet\"))\n",
        "hql::io",
    );
    assert!(err.contains("no contract"), "{err}");
    assert_eq!(
        s.files().iter().filter(|f| f.contains("out")).count(),
        0,
        "{:?}",
        s.files()
    );
}

#[test]
fn a_record_that_does_not_fit_the_columns_leaves_no_target() {
    let s = with_fixtures("parquet-abandoned");
    s.write(
        "big.jsonl",
        "{\"n\": 1}\n{\"n\": 123456789012345678901234567890}\n",
    );
    s.write("out.parquet", "old");
    let program = "type N : DataContract = {n: Int}\n\
                   source(file(\"big.jsonl\"), Json) | validate(N) | oks() | write(file(\"out.parquet\"))\n";
    let err = failing_run(&s, program, "hql::io");
    assert!(err.contains("past 64 bits"), "{err}");
    assert_eq!(s.read("out.parquet"), "old");
    s.write("extra.jsonl", "{\"n\": 1, \"more\": true}\n");
    let program = "type N : DataContract = {n: Int}\n\
                   source(file(\"extra.jsonl\"), Json) | validate(N) | oks() | write(file(\"out.parquet\"))\n";
    let err = failing_run(&s, program, "hql::io");
    assert!(err.contains("`more`"), "{err}");
    assert_eq!(s.read("out.parquet"), "old");
    let left: Vec<String> = s
        .files()
        .into_iter()
        .filter(|f| f.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "no temporary left: {left:?}");
}

#[test]
fn a_parquet_target_cannot_be_read_in_the_run_that_writes_it() {
    let s = with_fixtures("parquet-same-run");
    let program = format!(
        "{CLOSED}source(file(\"orders.parquet\"), Parquet) | validate(Order) | oks() | write(file(\"out.parquet\"))\n\
         source(file(\"out.parquet\"), Parquet) | collect()\n"
    );
    let err = failing_run(&s, &program, "hql::io");
    assert!(err.contains("cannot read out.parquet"), "{err}");
    assert!(err.contains("this run writes it"), "{err}");
    assert!(!s.exists("out.parquet"));
}

#[test]
fn dates_timestamps_and_nesting_write_as_their_columns() {
    let s = with_fixtures("parquet-write-types");
    s.write(
        "in.jsonl",
        concat!(
            "{\"d\": \"2024-02-29\", \"t\": \"2024-02-29T13:45:00.5+01:00\", \"m\": {\"a\": 1}, \"l\": [{\"x\": 1.5}], \"o\": null}\n",
            "{\"d\": \"1969-12-31\", \"t\": \"1970-01-01T00:00:00Z\", \"m\": {}, \"l\": [], \"o\": \"y\"}\n",
        ),
    );
    let program = "type R : DataContract = {d: Date, t: Timestamp, m: Map[Int], l: List[{x: Float}], o: String | Null}\n\
                   source(file(\"in.jsonl\"), Json) | validate(R) | oks() | write(file(\"out.parquet\"))\n";
    assert_eq!(ok_run(&s, program), "2\n");
    let out = ok_run(&s, "source(file(\"out.parquet\"), Parquet) | collect()\n");
    assert_eq!(
        out,
        "[{d: \"2024-02-29\", t: \"2024-02-29T12:45:00.500000Z\", m: {a: 1}, l: [{x: 1.5}]}, \
         {d: \"1969-12-31\", t: \"1970-01-01T00:00:00.000000Z\", m: {}, l: [], o: \"y\"}]\n"
    );
}

// ------------------------------------------------------------ tools

#[test]
fn infer_and_vet_read_parquet_files() {
    let s = with_fixtures("parquet-tools");
    let r = s.hql(&["infer", "orders.parquet", "--name", "Order"]);
    assert_eq!(r.status, 0, "{}", r.err);
    assert!(r.out.contains("amount: Float"), "{}", r.out);
    assert!(r.out.contains("placed: Date"), "{}", r.out);
    assert!(r.out.contains("items?: List[{"), "{}", r.out);
    s.write("order.hql", &r.out);
    let vet = s.hql(&["vet", "order.hql", "orders.parquet"]);
    assert_eq!(vet.status, 0, "{}\n{}", vet.out, vet.err);
    assert!(
        vet.out
            .starts_with("orders.parquet: {total: 60, ok: 60, err: 0"),
        "{}",
        vet.out
    );
    s.write("strict.hql", ORDER);
    let vet = s.hql(&["vet", "strict.hql", "orders.parquet"]);
    assert_eq!(vet.status, 1, "{}", vet.err);
    assert!(
        vet.out
            .starts_with("orders.parquet: {total: 60, ok: 30, err: 30"),
        "{}",
        vet.out
    );
}

#[test]
fn the_repl_describes_and_peeks_into_a_parquet_file() {
    let s = with_fixtures("parquet-repl");
    let input = "let orders = source(file(\"orders.parquet\"), Parquet)\n\
                 :describe orders\n\
                 (orders | first()).placed\n";
    let r = s.hql_stdin(&["repl"], input);
    assert_eq!((r.err.as_str(), r.status), ("", 0), "{}", r.out);
    let lines: Vec<&str> = r.out.lines().collect();
    assert_eq!(lines[0], "60 records, 7 fields", "{}", r.out);
    assert!(
        r.out
            .lines()
            .any(|l| l.starts_with("6 │ note ") && l.contains("│ 5 (8.3%) ")),
        "{}",
        r.out
    );
    assert_eq!(lines.last(), Some(&"\"2024-01-02\""), "{}", r.out);
}

// ------------------------------------------------------------ read back by others

/// `hql` writes `out.parquet` in `s` from the orders' valid records.
/// What `script` prints, run by `python` with `arg`; it must succeed.
#[track_caller]
fn python_prints(python: &std::path::Path, script: &str, arg: &std::path::Path) -> String {
    let out = std::process::Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(arg)
        .output()
        .expect("python runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn write_orders(s: &Scratch) {
    let write = format!(
        "{CLOSED}source(file(\"orders.parquet\"), Parquet) | validate(Order) | oks() | write(file(\"out.parquet\"))\n"
    );
    assert_eq!(ok_run(s, &write), "26\n");
}

#[test]
#[ignore = "installs pyarrow with pip into target/sql-venv"]
fn pyarrow_reads_hqls_target_with_its_types() {
    let s = with_fixtures("parquet-pyarrow");
    write_orders(&s);
    let python = sql::python_with("pyarrow", "pyarrow");
    let script = r#"
import json, sys
import pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
print(t.schema.to_string(show_schema_metadata=False))
rows = t.to_pylist()
print(len(rows))
print(json.dumps(rows[0], default=str))
print(pq.ParquetFile(sys.argv[1]).metadata.row_group(0).column(0).compression)
"#;
    let text = python_prints(&python, script, &s.path.join("out.parquet"));
    assert_eq!(
        text,
        "order_id: string not null\n\
         amount: double not null\n\
         currency: string not null\n\
         qty: int64 not null\n\
         placed: date32[day] not null\n\
         items: list<element: struct<sku: string not null, qty: int64 not null> not null> not null\n  \
         child 0, element: struct<sku: string not null, qty: int64 not null> not null\n      \
         child 0, sku: string not null\n      \
         child 1, qty: int64 not null\n\
         26\n\
         {\"order_id\": \"o-1\", \"amount\": 11.25, \"currency\": \"USD\", \"qty\": 1, \"placed\": \"2024-01-02\", \"items\": [{\"sku\": \"s-1\", \"qty\": 2}]}\n\
         SNAPPY\n"
    );
}

#[test]
#[ignore = "installs DuckDB with pip into target/sql-venv"]
fn duckdb_reads_hqls_target() {
    let s = with_fixtures("parquet-duckdb");
    write_orders(&s);
    s.write(
        "t.jsonl",
        "{\"id\": \"a\", \"at\": \"2024-02-29T13:45:00.123456Z\", \"n\": null}\n",
    );
    let program = "type T : DataContract = {id: String, at: Timestamp, n?: Int | Null}\n\
                   source(file(\"t.jsonl\"), Json) | validate(T) | oks() | write(file(\"t.parquet\"))\n";
    assert_eq!(ok_run(&s, program), "1\n");
    let python = sql::python_with("duckdb", "duckdb");
    let script = r#"
import sys, duckdb
con = duckdb.connect()
print(con.sql(f"select count(*), sum(qty), min(placed), max(amount) from '{sys.argv[1]}/out.parquet'").fetchall())
print(con.sql(f"select typeof(\"at\"), \"at\", n from '{sys.argv[1]}/t.parquet'").fetchall())
"#;
    let text = python_prints(&python, script, &s.path);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("[(26, "), "{text}");
    assert!(lines[0].contains("datetime.date(2024, 1, 2)"), "{text}");
    assert!(
        lines[1].starts_with(
            "[('TIMESTAMP WITH TIME ZONE', datetime.datetime(2024, 2, 29, 13, 45, 0, 123456"
        ),
        "{text}"
    );
    assert!(lines[1].ends_with(", None)]"), "{text}");
}

#[test]
#[ignore = "installs PySpark with pip into target/sql-venv; needs a Java runtime"]
fn spark_reads_hqls_target() {
    let s = with_fixtures("parquet-spark");
    write_orders(&s);
    s.write(
        "t.jsonl",
        "{\"id\": \"a\", \"at\": \"2024-02-29T13:45:00.123456Z\", \"n\": null}\n",
    );
    let program = "type T : DataContract = {id: String, at: Timestamp, n?: Int | Null}\n\
                   source(file(\"t.jsonl\"), Json) | validate(T) | oks() | write(file(\"t.parquet\"))\n";
    assert_eq!(ok_run(&s, program), "1\n");
    let python = sql::python_with("pyspark", "pyspark>=4,<5");
    let script = r#"
import sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.sql.session.timeZone", "UTC").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
orders = spark.read.parquet(sys.argv[1] + "/out.parquet")
print(orders.schema.simpleString())
row = orders.selectExpr("count(*)", "sum(qty)", "cast(min(placed) as string)", "max(amount)").first()
print(list(row))
t = spark.read.parquet(sys.argv[1] + "/t.parquet")
print(t.schema.simpleString())
print([str(v) for v in t.selectExpr("id", "date_format(at, 'yyyy-MM-dd HH:mm:ss.SSSSSS')", "n").first()])
"#;
    let text = python_prints(&python, script, &s.path);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "struct<order_id:string,amount:double,currency:string,qty:bigint,placed:date,items:array<struct<sku:string,qty:bigint>>>",
        "{text}"
    );
    assert!(lines[1].starts_with("[26, "), "{text}");
    assert!(lines[1].contains("'2024-01-02'"), "{text}");
    assert_eq!(
        lines[2], "struct<id:string,at:timestamp,n:bigint>",
        "{text}"
    );
    assert_eq!(
        lines[3], "['a', '2024-02-29 13:45:00.123456', 'None']",
        "{text}"
    );
}

/// `count()` and `report()` of a file of several row groups read them on
/// worker threads, one row group a piece, and give what one thread gives:
/// the same counts, the same rules in the same order, and `errs()` (which
/// reads on one thread) agrees. The file is written by HQL itself, 200,000
/// rows in row groups of 65,536, so it is large enough to be split.
#[test]
fn row_groups_are_counted_on_threads_as_on_one() {
    let s = Scratch::new("parquet-row-groups");
    let mut lines = String::new();
    for i in 0..200_000u64 {
        // Every 997th row breaks the rule, every 1,009th has no amount, and
        // every 4,999th holds a currency the contract does not admit.
        let amount = match i % 997 {
            0 => "-1.5".to_string(),
            _ => format!("{}.{:02}", i % 5000, i % 100),
        };
        let currency = if i % 4999 == 0 {
            "JPY"
        } else {
            ["EUR", "USD", "GBP"][(i % 3) as usize]
        };
        lines.push_str(&format!(
            "{{\"order_id\": \"o-{i:07}-{:x}\", ",
            i.wrapping_mul(2654435761)
        ));
        if i % 1009 != 0 {
            lines.push_str(&format!("\"amount\": {amount}, "));
        }
        lines.push_str(&format!(
            "\"currency\": \"{currency}\", \"qty\": {}, \"placed\": \"2024-{:02}-{:02}\", \"items\": []}}\n",
            i % 7,
            i % 12 + 1,
            i % 28 + 1
        ));
    }
    s.write("orders.jsonl", lines);
    let closed = ORDER.replace("DataContract", "TypeContract");
    let write = format!(
        "{closed}source(file(\"orders.jsonl\"), Json) | validate(Order) | oks() | write(file(\"valid.parquet\"))\n"
    );
    let r = s.run(&write, &["--threads", "1"]);
    assert_eq!(r.status, 0, "{}", r.err);
    assert!(
        s.read_bytes("valid.parquet").len() > 1 << 20,
        "a file to split: {}",
        r.err
    );
    let program = format!(
        "{ORDER}type Strict : DataContract = {{\n    order_id: String\n    amount: Float\n    require cheap: amount < 4000\n}}\n\
         source(file(\"valid.parquet\"), Parquet) | validate(Order) | report()\n\
         source(file(\"valid.parquet\"), Parquet) | validate(Strict) | report()\n\
         source(file(\"valid.parquet\"), Parquet) | validate(Strict) | oks() | count()\n"
    );
    let one = s.run(&program, &["--threads", "1"]);
    let two = s.run(&program, &["--threads", "2"]);
    assert_eq!((one.status, two.status), (0, 0), "{}{}", one.err, two.err);
    assert_eq!(one.out, two.out);
    assert!(one.out.contains("Strict.cheap"), "{}", one.out);
    let explain = s.run(&program, &["--threads", "2", "--explain"]);
    assert!(
        explain
            .out
            .contains("report(): counting: Parquet cells checked, 4 parts on 2 threads"),
        "{}",
        explain.out
    );
    let explain = s.run(&program, &["--threads", "1", "--explain"]);
    assert!(
        explain
            .out
            .contains("report(): counting: Parquet cells checked, one thread"),
        "{}",
        explain.out
    );
    // The ordinary path (records built and validated one by one, in a
    // list) gives the same report as the row groups on threads.
    let ordinary = "type Strict : DataContract = {\n    order_id: String\n    amount: Float\n    require cheap: amount < 4000\n}\n\
         let xs = source(file(\"valid.parquet\"), Parquet) | validate(Strict) | collect()\n\
         xs | report()\n";
    let built = s.run(ordinary, &["--threads", "2"]);
    assert_eq!(built.status, 0, "{}", built.err);
    let reported = two.out.lines().nth(1).expect("the second report");
    assert_eq!(built.out.trim_end(), reported);
}
