//! SQLite sources and targets on real databases in temporary folders
//! (tooling.md, "Sources, targets and the schema boundary"; seed `003` on
//! schema drift): type mapping both ways, a table or a query as a source,
//! one transaction per run, every drift policy and option, the write
//! modes, a database locked by another connection, and `hql vet`.

mod common;
use common::*;

use rusqlite::Connection;

const CONTRACT: &str = "type Order : DataContract = {\n  id: Int,\n  name: String,\n  \
                        amount: Float,\n  paid: Bool,\n  tags?: List[Int],\n  note: String | Null,\n  \
                        unique id\n}\n";

/// A scratch folder with `hql.toml` (a CSV source and the given entries).
fn setup(name: &str, entries: &str) -> Scratch {
    let s = Scratch::new(name);
    s.write(
        "hql.toml",
        format!("[sources.orders]\nfile = \"orders.csv\"\n\n[targets.dead]\nfile = \"dead.jsonl\"\n\n{entries}"),
    );
    s
}

fn target(id: &str, extra: &str) -> String {
    format!("[targets.{id}]\nsqlite = \"w.db\"\ntable = \"orders\"\n{extra}\n\n")
}

fn open(s: &Scratch) -> Connection {
    Connection::open(s.path.join("w.db")).expect("the database opens")
}

/// The table's `CREATE TABLE` text.
fn schema(s: &Scratch) -> String {
    open(s)
        .query_row(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'orders'",
            [],
            |r| r.get(0),
        )
        .unwrap_or_default()
}

fn count(s: &Scratch) -> i64 {
    open(s)
        .query_row("SELECT count(*) FROM orders", [], |r| r.get(0))
        .expect("the table exists")
}

/// Every row, each cell in SQLite's own text form (`quote()`).
fn rows(s: &Scratch, columns: &str) -> Vec<String> {
    let conn = open(s);
    let quoted = columns
        .split(',')
        .map(|c| format!("quote({c})"))
        .collect::<Vec<_>>()
        .join(" || ' ' || ");
    let mut stmt = conn
        .prepare(&format!("SELECT {quoted} FROM orders ORDER BY rowid"))
        .unwrap();
    let rows = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
    rows.map(Result::unwrap).collect()
}

#[track_caller]
fn ok(s: &Scratch, program: &str) -> Run {
    let r = s.run(program, &[]);
    assert_eq!(r.status, 0, "stdout:\n{}\nstderr:\n{}", r.out, r.err);
    r
}

#[track_caller]
fn fails(s: &Scratch, program: &str, code: &str) -> Run {
    let r = s.run(program, &[]);
    assert_eq!(r.status, 1, "stdout:\n{}\nstderr:\n{}", r.out, r.err);
    assert!(r.err.contains(code), "expected {code} in:\n{}", r.err);
    r
}

const ORDERS: &str = "id,name,amount,paid,tags,note\n\
                      1,a,3,true,\"[1,2]\",x\n\
                      2,b,7.5,false,,\n";

fn load(id: &str) -> String {
    format!("{CONTRACT}source(\"orders\") | validate(Order) | oks() | write(\"{id}\")\n")
}

// ---------------------------------------------------------- types and reading

#[test]
fn create_table_maps_the_contracts_types_with_not_null_for_required_fields() {
    let s = setup("sq-create", &target("w", ""));
    s.write("orders.csv", ORDERS);
    let r = ok(&s, &load("w"));
    assert_eq!(r.out, "{written: 2, drift: []}\n");
    assert!(r.err.is_empty(), "{}", r.err);
    assert_eq!(
        schema(&s),
        "CREATE TABLE \"orders\" (\"id\" INTEGER NOT NULL, \"name\" TEXT NOT NULL, \
         \"amount\" REAL NOT NULL, \"paid\" BOOLEAN NOT NULL, \"tags\" JSON, \"note\" TEXT)"
    );
    // Bool as 0/1, a list as JSON text, an absent field and a null as NULL.
    assert_eq!(
        rows(&s, "id,name,amount,paid,tags,note"),
        ["1 'a' 3.0 1 '[1,2]' 'x'", "2 'b' 7.5 0 NULL NULL"]
    );
}

#[test]
fn a_table_reads_back_as_the_records_written_with_null_only_where_the_type_admits_it() {
    let s = setup(
        "sq-read",
        &format!(
            "{}[sources.stored]\nsqlite = \"w.db\"\ntable = \"orders\"\n",
            target("w", "")
        ),
    );
    s.write("orders.csv", ORDERS);
    ok(&s, &load("w"));
    let r = ok(
        &s,
        &format!(
            "{CONTRACT}source(\"stored\") | collect()\n\
             source(\"stored\") | validate(Order) | oks() | collect()\n"
        ),
    );
    // Without a contract the column types tell: BOOLEAN is a Bool, JSON is
    // decoded, a NULL is absent; with one, `note: String | Null` reads null.
    assert_eq!(
        r.out,
        "[{id: 1, name: \"a\", amount: 3.0, paid: true, tags: [1, 2], note: \"x\"}, \
         {id: 2, name: \"b\", amount: 7.5, paid: false}]\n\
         [{id: 1, name: \"a\", amount: 3.0, paid: true, tags: [1, 2], note: \"x\"}, \
         {id: 2, name: \"b\", amount: 7.5, paid: false, note: null}]\n"
    );
}

#[test]
fn a_query_source_gives_rows_with_their_position_as_origin_line() {
    let s = setup(
        "sq-query",
        "[sources.q]\nsqlite = \"legacy.db\"\nquery = \"SELECT code, qty, flag FROM stock WHERE qty > 0 ORDER BY code\"\n",
    );
    let conn = Connection::open(s.path.join("legacy.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE stock (code VARCHAR(8), qty BIGINT, flag INTEGER);
         INSERT INTO stock VALUES ('a', 2, 1), ('b', 0, 0), ('c', 5, 7), ('d', 1, NULL);",
    )
    .unwrap();
    drop(conn);
    let r = ok(
        &s,
        "type Stock : DataContract = { code: String, qty: Int, flag: Bool }\n\
         source(\"q\") | validate(Stock) | errs() | map(e => {line: e.origin.line, source: e.origin.source, rules: e.failures | map(f => f.rule)}) | collect()\n\
         source(\"q\") | validate(Stock) | oks() | collect()\n",
    );
    assert_eq!(
        r.out,
        "[{line: 2, source: \"q\", rules: [\"Stock.flag.type\"]}, {line: 3, source: \"q\", rules: [\"Stock.flag.missing\"]}]\n\
         [{code: \"a\", qty: 2, flag: true}]\n"
    );
}

#[test]
fn a_missing_table_or_database_is_a_clear_runtime_error() {
    let s = setup(
        "sq-missing",
        "[sources.nofile]\nsqlite = \"none.db\"\ntable = \"t\"\n\n\
         [sources.notable]\nsqlite = \"w.db\"\ntable = \"nothing\"\n",
    );
    Connection::open(s.path.join("w.db"))
        .unwrap()
        .execute_batch("CREATE TABLE other (a)")
        .unwrap();
    let r = fails(&s, "source(\"nofile\") | count()\n", "hql::io");
    assert!(
        r.err.contains("cannot read none.db: no such database file"),
        "{}",
        r.err
    );
    let r = fails(&s, "source(\"notable\") | count()\n", "hql::io");
    assert!(r.err.contains("no such table: nothing"), "{}", r.err);
}

#[test]
fn an_int_beyond_64_bits_is_a_runtime_error_and_nothing_is_written() {
    let s = setup("sq-bigint", &target("w", ""));
    s.write(
        "in.jsonl",
        "{\"n\": 1}\n{\"n\": 123456789012345678901234567890}\n",
    );
    let r = fails(
        &s,
        "source(file(\"in.jsonl\"), Json) | write(\"w\")\n",
        "hql::overflow",
    );
    assert!(r.err.contains("beyond 64 bits"), "{}", r.err);
    assert!(!r.err.contains("1234567890"), "never the value: {}", r.err);
    assert!(!s.exists("w.db"), "the database the run created is removed");
}

#[test]
fn a_real_infinity_read_as_a_source_is_a_decode_err_for_its_record() {
    let s = setup(
        "sq-infinity",
        "[sources.t]\nsqlite = \"legacy.db\"\ntable = \"t\"\n",
    );
    Connection::open(s.path.join("legacy.db"))
        .unwrap()
        .execute_batch(
            "CREATE TABLE t (id INTEGER, x REAL);
             INSERT INTO t VALUES (1, 1.5), (2, 9e999), (3, -9e999), (4, 2.5);",
        )
        .unwrap();
    let r = ok(
        &s,
        "type T : DataContract = { id: Int, x: Float }\n\
         source(\"t\") | validate(T) | errs() | map(e => {line: e.origin.line, input: e.input, failure: e.failures[0]})\n\
         source(\"t\") | validate(T) | oks() | write(file(\"o.jsonl\"))\n",
    );
    assert_eq!(
        r.out,
        "[{line: 2, input: {id: 2, x: \"Infinity\"}, failure: {rule: \"decode\", kind: \"decode\", path: null, fields: [], severity: \"error\", \
         message: \"row 2 of source `t`: column `x` holds Infinity, which has no HQL value\"}}, \
         {line: 3, input: {id: 3, x: \"-Infinity\"}, failure: {rule: \"decode\", kind: \"decode\", path: null, fields: [], severity: \"error\", \
         message: \"row 3 of source `t`: column `x` holds -Infinity, which has no HQL value\"}}]\n2\n"
    );
    assert_eq!(
        s.read("o.jsonl"),
        "{\"id\":1,\"x\":1.5}\n{\"id\":4,\"x\":2.5}\n"
    );
}

#[test]
fn a_blob_rows_dead_letter_keeps_its_other_columns_with_the_blob_as_base64() {
    let s = setup(
        "sq-blob",
        "[sources.t]\nsqlite = \"legacy.db\"\ntable = \"t\"\n",
    );
    Connection::open(s.path.join("legacy.db"))
        .unwrap()
        .execute_batch(
            "CREATE TABLE t (id INTEGER, data BLOB, name TEXT);
             INSERT INTO t VALUES (1, x'00ff10', 'a'), (2, NULL, 'b');",
        )
        .unwrap();
    let r = ok(
        &s,
        "type R : DataContract = { id: Int }\n\
         source(\"t\") | validate(R) | route(ok: file(\"ok.jsonl\"), err: file(\"dead.jsonl\"))\n",
    );
    assert_eq!(r.status, 0, "{}", r.err);
    assert_eq!(s.read("ok.jsonl"), "{\"id\":2,\"name\":\"b\"}\n");
    let dead = s.read("dead.jsonl");
    assert!(
        dead.contains("\"input\":{\"id\":1,\"data\":\"AP8Q\",\"name\":\"a\"}"),
        "{dead}"
    );
    assert!(
        dead.contains("column `data` holds a BLOB, which has no HQL value"),
        "{dead}"
    );
}

#[test]
fn a_number_a_real_column_cannot_hold_exactly_is_a_runtime_error_naming_the_column() {
    let s = setup("sq-real-exact", &target("w", ""));
    open(&s)
        .execute_batch("CREATE TABLE orders (id INTEGER, x REAL)")
        .unwrap();
    s.write(
        "fine.jsonl",
        "{\"id\": 1, \"x\": 0.1}\n{\"id\": 2, \"x\": 9007199254740992}\n",
    );
    let r = ok(&s, "source(file(\"fine.jsonl\"), Json) | write(\"w\")\n");
    assert_eq!(r.out, "{written: 2, drift: []}\n");
    assert_eq!(rows(&s, "x"), ["0.1", "9007199254740992.0"]);
    for (i, x) in [
        "9007199254740993",
        "1e-400",
        "1.00000000000000000001",
        "1e999",
    ]
    .iter()
    .enumerate()
    {
        s.write(
            "in.jsonl",
            format!("{{\"id\": 3, \"x\": 2.5}}\n{{\"id\": 4, \"x\": {x}}}\n"),
        );
        let r = fails(
            &s,
            "source(file(\"in.jsonl\"), Json) | write(\"w\")\n",
            "hql::precision",
        );
        let err = squash(&r.err);
        assert!(
            err.contains("target `w`: column `x` cannot hold a record's number exactly"),
            "{i}: {err}"
        );
        assert!(!err.contains(x), "never the value: {err}");
        assert_eq!(count(&s), 2, "nothing is written ({x})");
    }
}

#[test]
fn a_nul_in_a_column_name_is_an_io_error_naming_the_column() {
    let s = setup("sq-nul-column", &target("w", ""));
    s.write("in.jsonl", "{\"id\": 1, \"a\\u0000b\": 2}\n");
    let r = fails(
        &s,
        "source(file(\"in.jsonl\"), Json) | write(\"w\")\n",
        "hql::io",
    );
    assert!(
        squash(&r.err).contains("target `w`: column `a\\0b` has a NUL character in its name"),
        "{}",
        r.err
    );
    assert!(!s.exists("w.db"), "nothing is written");
}

// --------------------------------------------------------------- transactions

#[test]
fn a_failed_run_leaves_the_table_untouched() {
    let s = setup("sq-atomic", &target("w", ""));
    s.write("orders.csv", ORDERS);
    ok(&s, &load("w"));
    let before = (schema(&s), count(&s));
    s.write(
        "orders.csv",
        "id,name,amount,paid,tags,note,extra\n3,c,1,true,,,e\n4,d,x,true,,,\n",
    );
    // An unwrap() stop after a record was written; a runtime error in a
    // later statement.
    fails(
        &s,
        &format!("{CONTRACT}source(\"orders\") | validate(Order) | unwrap() | write(\"w\")\n"),
        "hql::unwrap",
    );
    assert_eq!((schema(&s), count(&s)), before);
    fails(
        &s,
        &format!("{CONTRACT}source(\"orders\") | validate(Order) | oks() | write(\"w\")\n1 / 0\n"),
        "division",
    );
    assert_eq!((schema(&s), count(&s)), before);
}

#[test]
fn a_database_locked_by_another_connection_is_refused_and_nothing_is_half_written() {
    let s = setup("sq-locked", &target("w", ""));
    s.write("orders.csv", ORDERS);
    ok(&s, &load("w"));
    let holder = open(&s);
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let r = fails(&s, &load("w"), "hql::io");
    assert!(
        r.err
            .contains("the database is locked by another connection"),
        "{}",
        r.err
    );
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    assert_eq!(count(&s), 2);
}

#[test]
fn two_targets_of_one_database_share_the_runs_transaction() {
    let s = setup(
        "sq-shared",
        &format!(
            "{}[targets.other]\nsqlite = \"w.db\"\ntable = \"copies\"\n",
            target("w", "")
        ),
    );
    s.write("orders.csv", ORDERS);
    let r = ok(
        &s,
        &format!(
            "{CONTRACT}let rows = source(\"orders\") | validate(Order) | oks()\n\
             rows | write(\"w\")\nrows | write(\"other\")\n"
        ),
    );
    assert_eq!(r.out, "{written: 2, drift: []}\n{written: 2, drift: []}\n");
    let copies: i64 = open(&s)
        .query_row("SELECT count(*) FROM copies", [], |r| r.get(0))
        .unwrap();
    assert_eq!((count(&s), copies), (2, 2));
}

// ---------------------------------------------------------------------- drift

/// The table of `ORDERS`, then a batch with a new column `email`.
fn drifting(name: &str, extra: &str) -> Scratch {
    let s = setup(
        name,
        &format!("{}{}", target("w", extra), target("init", "")),
    );
    s.write("orders.csv", ORDERS);
    ok(&s, &load("init"));
    s.write(
        "orders.csv",
        "id,name,amount,paid,tags,note,email\n3,c,1,true,,,c@x\n4,d,2,true,,,\n",
    );
    s
}

#[test]
fn on_drift_fail_names_the_column_and_its_change_and_writes_nothing() {
    let s = drifting("sq-fail", "schema = { on_drift = \"fail\" }");
    let before = (schema(&s), count(&s));
    let r = fails(&s, &load("w"), "hql::schema_drift");
    assert!(
        r.err.contains("column `email` drifted (added: 1 record)"),
        "{}",
        r.err
    );
    assert_eq!((schema(&s), count(&s)), before);
}

#[test]
fn on_drift_warn_reports_once_on_stderr_and_writes_what_fits() {
    let s = drifting("sq-warn", "");
    let r = ok(&s, &load("w"));
    assert_eq!(
        r.out,
        "{written: 2, drift: [{column: \"email\", change: \"added\", count: 1}]}\n"
    );
    assert_eq!(
        r.err.matches("warning: target `w`: column `email`").count(),
        1,
        "{}",
        r.err
    );
    assert_eq!(count(&s), 4);
    assert!(!schema(&s).contains("email"));
}

#[test]
fn on_drift_ignore_drops_unknown_fields_silently() {
    let s = drifting("sq-ignore", "schema = { on_drift = \"ignore\" }");
    let r = ok(&s, &load("w"));
    assert!(r.err.is_empty(), "{}", r.err);
    assert_eq!(count(&s), 4);
    assert!(!schema(&s).contains("email"));
}

#[test]
fn on_drift_evolve_adds_the_column_then_writes() {
    let s = drifting("sq-evolve", "schema = { on_drift = \"evolve\" }");
    let r = ok(&s, &load("w"));
    assert!(r.err.is_empty(), "{}", r.err);
    assert!(schema(&s).ends_with(", \"email\" TEXT)"), "{}", schema(&s));
    assert_eq!(
        rows(&s, "id,email"),
        ["1 NULL", "2 NULL", "3 'c@x'", "4 NULL"]
    );
}

#[test]
fn on_drift_quarantine_sends_drifting_records_to_the_dead_letters() {
    let s = drifting(
        "sq-quarantine",
        "schema = { on_drift = \"quarantine\", dead_letters = \"dead\" }",
    );
    let r = ok(&s, &load("w"));
    assert_eq!(
        r.out,
        "{written: 1, drift: [{column: \"email\", change: \"added\", count: 1}]}\n"
    );
    assert_eq!(count(&s), 3);
    assert_eq!(
        s.read("dead.jsonl"),
        "{\"type\":\"Order\",\"version\":null,\"origin\":{\"source\":\"orders\",\"line\":2},\
         \"input\":{\"id\":3,\"name\":\"c\",\"amount\":1.0,\"paid\":true,\"note\":null,\"email\":\"c@x\"},\
         \"failures\":[{\"rule\":\"w.email.schema_drift\",\"kind\":\"schema_drift\",\"path\":\"email\",\
         \"fields\":[\"email\"],\"severity\":\"error\",\"message\":\"target `w`: column `email` drifted \
         (added): the table `orders` has no column `email`\"}]}\n"
    );
}

#[test]
fn quarantine_without_dead_letters_needs_route_whose_err_target_takes_them() {
    let s = drifting(
        "sq-quarantine-route",
        "schema = { on_drift = \"quarantine\" }",
    );
    // Refused before anything runs: a static error.
    let r = s.run(&load("w"), &[]);
    assert_eq!((r.status, r.out.as_str()), (2, ""), "{}", r.err);
    assert!(r.err.contains("hql::config"), "{}", r.err);
    assert!(r.err.contains("names no dead letters"), "{}", r.err);
    let r = ok(
        &s,
        &format!("{CONTRACT}source(\"orders\") | validate(Order) | route(ok: \"w\", err: file(\"bad.jsonl\"))\n"),
    );
    // The report of the results route consumed (both valid), and the drift
    // that set one of them aside.
    assert_eq!(
        r.out,
        "{total: 2, ok: 2, err: 0, warned: 0, by_rule: [], \
         drift: [{column: \"email\", change: \"added\", count: 1}]}\n"
    );
    assert!(s.read("bad.jsonl").contains("\"kind\":\"schema_drift\""));
}

/// A table with an INTEGER column `n` and a NOT NULL column `s`, and the
/// records of `data` (JSON Lines) written to it with `extra` options.
fn typed(name: &str, extra: &str, data: &str) -> (Scratch, Run) {
    let s = setup(name, &target("w", extra));
    open(&s)
        .execute_batch(
            "CREATE TABLE orders (n INTEGER, s TEXT NOT NULL); INSERT INTO orders VALUES (1, 'a');",
        )
        .unwrap();
    s.write("in.jsonl", data);
    let r = s.run("source(file(\"in.jsonl\"), Json) | write(\"w\")\n", &[]);
    (s, r)
}

#[test]
fn evolve_takes_a_lossless_widening_and_refuses_it_when_widening_is_not_allowed() {
    let data = "{\"n\": 2.5, \"s\": \"b\"}\n";
    let (s, r) = typed("sq-widen", "schema = { on_drift = \"evolve\" }", data);
    assert_eq!(r.status, 0, "{}", r.err);
    assert_eq!(
        r.out,
        "{written: 1, drift: [{column: \"n\", change: \"widened\", count: 1}]}\n"
    );
    assert_eq!(rows(&s, "n,s"), ["1 'a'", "2.5 'b'"]);
    let (s, r) = typed(
        "sq-no-widen",
        "schema = { on_drift = \"evolve\", allow_type_widening = false }",
        data,
    );
    assert_eq!(r.status, 1, "{}", r.err);
    assert!(
        r.err.contains("column `n` drifted (widened: 1 record)"),
        "{}",
        r.err
    );
    assert_eq!(count(&s), 1);
}

#[test]
fn evolve_sends_an_incompatible_change_by_on_incompatible() {
    let data = "{\"n\": \"many\", \"s\": \"b\"}\n{\"n\": 3, \"s\": \"c\"}\n";
    let (s, r) = typed(
        "sq-incompatible",
        "schema = { on_drift = \"evolve\" }",
        data,
    );
    assert_eq!(r.status, 1);
    assert!(
        r.err
            .contains("column `n` drifted (incompatible: 1 record)"),
        "{}",
        r.err
    );
    assert_eq!(count(&s), 1);
    let (s, r) = typed(
        "sq-incompatible-q",
        "schema = { on_drift = \"evolve\", on_incompatible = \"quarantine\", dead_letters = \"dead\" }",
        data,
    );
    assert_eq!(r.status, 0, "{}", r.err);
    assert_eq!(rows(&s, "n,s"), ["1 'a'", "3 'c'"]);
    assert!(s
        .read("dead.jsonl")
        .contains("\"rule\":\"w.n.schema_drift\""));
}

#[test]
fn a_null_into_a_not_null_column_relaxes_it_by_rebuilding_the_table_under_evolve() {
    let data = "{\"n\": 2, \"s\": null}\n";
    let (s, r) = typed("sq-nullable", "schema = { on_drift = \"evolve\" }", data);
    assert_eq!(r.status, 0, "{}", r.err);
    assert_eq!(
        r.out,
        "{written: 1, drift: [{column: \"s\", change: \"nullable\", count: 1}]}\n"
    );
    assert_eq!(schema(&s), "CREATE TABLE \"orders\" (n INTEGER, s TEXT)");
    assert_eq!(rows(&s, "n,s"), ["1 'a'", "2 NULL"]);
}

#[test]
fn an_absent_not_null_column_is_relaxed_only_when_relax_nullability_on_missing() {
    let data = "{\"n\": 2}\n";
    let (s, r) = typed(
        "sq-missing-kept",
        "schema = { on_drift = \"evolve\" }",
        data,
    );
    assert_eq!(r.status, 1);
    assert!(
        r.err.contains("column `s` drifted (missing: 1 record)"),
        "{}",
        r.err
    );
    assert!(schema(&s).contains("NOT NULL"));
    let (s, r) = typed(
        "sq-missing-relaxed",
        "schema = { on_drift = \"evolve\", relax_nullability_on_missing = true }",
        data,
    );
    assert_eq!(r.status, 0, "{}", r.err);
    assert!(!schema(&s).contains("NOT NULL"), "{}", schema(&s));
    assert_eq!(rows(&s, "n,s"), ["1 'a'", "2 NULL"]);
}

#[test]
fn a_string_of_numeric_text_into_a_real_column_is_no_drift() {
    let s = setup(
        "sq-numeric-text",
        &target("w", "schema = { on_drift = \"fail\" }"),
    );
    open(&s)
        .execute_batch("CREATE TABLE orders (x REAL)")
        .unwrap();
    s.write("in.jsonl", "{\"x\": \"12.50\"}\n");
    let r = ok(&s, "source(file(\"in.jsonl\"), Json) | write(\"w\")\n");
    assert_eq!(r.out, "{written: 1, drift: []}\n");
    assert_eq!(rows(&s, "x"), ["12.5"]);
}

// ---------------------------------------------------------------------- modes

#[test]
fn replace_empties_the_table_in_the_same_transaction() {
    let s = setup("sq-replace", &target("w", "mode = \"replace\""));
    s.write("orders.csv", ORDERS);
    ok(&s, &load("w"));
    ok(&s, &load("w"));
    assert_eq!(count(&s), 2);
    // A failed replacing run keeps the old rows.
    fails(&s, &format!("{}1 / 0\n", load("w")), "division");
    assert_eq!(count(&s), 2);
}

#[test]
fn upsert_on_the_unique_key_does_not_double_rows_on_a_rerun() {
    let s = setup("sq-upsert", &target("w", "mode = \"upsert\""));
    s.write("orders.csv", ORDERS);
    ok(&s, &load("w"));
    s.write(
        "orders.csv",
        "id,name,amount,paid,tags,note\n2,B,8,true,,\n3,c,1,false,,\n",
    );
    ok(&s, &load("w"));
    assert_eq!(
        rows(&s, "id,name,amount"),
        ["1 'a' 3.0", "2 'B' 8.0", "3 'c' 1.0"]
    );
    let indexes: String = open(&s)
        .query_row(
            "SELECT sql FROM sqlite_master WHERE type = 'index'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(indexes.starts_with("CREATE UNIQUE INDEX"), "{indexes}");
    // Records of no contract have no key.
    s.write("in.jsonl", "{\"id\": 9}\n");
    let r = fails(
        &s,
        "source(file(\"in.jsonl\"), Json) | write(\"w\")\n",
        "hql::sqlite",
    );
    assert!(r.err.contains("needs the records' unique key"), "{}", r.err);
}

#[test]
fn create_table_false_refuses_a_missing_table() {
    let s = setup("sq-no-create", &target("w", "create_table = false"));
    s.write("orders.csv", ORDERS);
    let r = fails(&s, &load("w"), "hql::sqlite");
    assert!(r.err.contains("the table does not exist"), "{}", r.err);
}

// ------------------------------------------------------------------------ vet

#[test]
fn vet_reads_a_configured_sqlite_source() {
    let s = setup(
        "sq-vet",
        &format!(
            "{}[sources.stored]\nsqlite = \"w.db\"\ntable = \"orders\"\n",
            target("w", "")
        ),
    );
    s.write("orders.csv", ORDERS);
    ok(&s, &load("w"));
    s.write(
        "contracts.hql",
        "type Order : DataContract = { id: Int, name: String, amount: Float, paid: Bool, note: String, tags?: List[Int] }\n",
    );
    let r = s.hql(&["vet", "contracts.hql", "stored"]);
    assert_eq!(r.status, 1, "{}\n{}", r.out, r.err);
    assert!(r.out.contains("Order.note.missing"), "{}", r.out);
}

// ------------------------------------------------ one commit, all targets

/// A run that writes the table and a file: both commit, or neither.
fn table_and_file() -> String {
    format!(
        "{CONTRACT}let rows = source(\"orders\") | validate(Order) | oks()\n\
         rows | write(\"w\")\nrows | write(file(\"copy.jsonl\"))\n"
    )
}

const OLD_COPY: &str = "{\"old\":true}\n";

/// The table and the file are both as before the run, or both as after.
#[track_caller]
fn table_and_file_agree(s: &Scratch) -> bool {
    let copy = s.read("copy.jsonl");
    let rows = count(s);
    if copy == OLD_COPY {
        assert_eq!(rows, 2, "the file is old but the table new");
        false
    } else {
        assert_eq!(copy.lines().count(), 2);
        assert_eq!(rows, 4, "the file is new but the table old");
        true
    }
}

#[test]
fn a_crash_at_each_step_of_a_table_and_file_commit_ends_all_old_or_all_new() {
    use std::os::unix::process::ExitStatusExt;
    for (step, new) in [
        ("prepared", false),
        ("journaled", false),
        ("database", true),
        ("renamed-1", true),
        ("renamed", true),
    ] {
        let s = setup("sq-crash", &target("w", ""));
        s.write("orders.csv", ORDERS);
        ok(&s, &load("w"));
        s.write("copy.jsonl", OLD_COPY);
        s.write("main.hql", table_and_file());
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
            .args(["run", "main.hql"])
            .current_dir(&s.path)
            .env("HQL_PROGRESS", "0")
            .env("HQL_TEST_CRASH_AT", step)
            .output()
            .expect("hql runs");
        assert_eq!(out.status.signal(), Some(6), "{step} was never reached");
        let r = s.hql(&["recover"]);
        assert_eq!(r.status, 0, "{step}: {}{}", r.out, r.err);
        assert_eq!(table_and_file_agree(&s), new, "{step}");
        let left: Vec<String> = (s.files().into_iter())
            .filter(|f| f.contains(".hql-"))
            .collect();
        assert!(left.is_empty(), "{step}: {left:?}");
    }
}

#[test]
fn a_reader_holding_the_database_stops_the_commit_and_no_file_changes() {
    let s = setup("sq-reader", &target("w", ""));
    s.write("orders.csv", ORDERS);
    ok(&s, &load("w"));
    s.write("copy.jsonl", OLD_COPY);
    let reader = open(&s);
    reader.execute_batch("BEGIN").unwrap();
    let n: i64 = reader
        .query_row("SELECT count(*) FROM orders", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2);
    let r = fails(&s, &table_and_file(), "hql::commit");
    // The values printed when their statements ended, before the commit.
    assert_eq!(r.out, "{written: 2, drift: []}\n2\n");
    assert!(r.err.contains("copy.jsonl"), "{}", r.err);
    reader.execute_batch("COMMIT").unwrap();
    drop(reader);
    assert!(!table_and_file_agree(&s));
    let left: Vec<String> = (s.files().into_iter())
        .filter(|f| f.contains(".hql-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_second_database_in_one_run_is_refused() {
    let s = setup(
        "sq-two-dbs",
        &format!(
            "{}[targets.other]\nsqlite = \"other.db\"\ntable = \"orders\"\n",
            target("w", "")
        ),
    );
    s.write("orders.csv", ORDERS);
    let r = s.run(
        &format!(
            "{CONTRACT}let rows = source(\"orders\") | validate(Order) | oks()\n\
             rows | write(\"w\")\nrows | write(\"other\")\n"
        ),
        &[],
    );
    // Refused before anything runs: a static error.
    assert_eq!((r.status, r.out.as_str()), (2, ""), "{}", r.err);
    assert!(r.err.contains("hql::config"), "{}", r.err);
    assert!(r.err.contains("at most one"), "{}", r.err);
    assert!(!s.exists("w.db") || count(&s) == 0);
    assert!(!s.exists("other.db"));
}

#[test]
fn relaxing_not_null_keeps_checks_unique_collation_autoincrement_and_triggers() {
    let s = setup(
        "sq-relax-keeps",
        &target("w", "schema = { on_drift = \"evolve\" }"),
    );
    open(&s)
        .execute_batch(
            "CREATE TABLE orders (\n\
               id INTEGER PRIMARY KEY AUTOINCREMENT,\n\
               code TEXT NOT NULL UNIQUE COLLATE NOCASE,\n\
               n INTEGER CHECK (n >= 0 AND n IN (0, 1, 2, 3)),\n\
               s TEXT NOT NULL ON CONFLICT ABORT DEFAULT 'x'\n\
             );\n\
             CREATE TABLE log (what TEXT);\n\
             CREATE TRIGGER orders_log AFTER INSERT ON orders BEGIN INSERT INTO log VALUES (new.code); END;\n\
             CREATE INDEX orders_n ON orders (n);\n\
             INSERT INTO orders (id, code, n, s) VALUES (40, 'A', 1, 'a');\n\
             DELETE FROM orders; INSERT INTO orders (code, n, s) VALUES ('A', 1, 'a');",
        )
        .unwrap();
    s.write("in.jsonl", "{\"code\": \"b\", \"n\": 2, \"s\": null}\n");
    let r = s.run("source(file(\"in.jsonl\"), Json) | write(\"w\")\n", &[]);
    assert_eq!(r.status, 0, "{}", r.err);
    assert_eq!(
        schema(&s),
        "CREATE TABLE \"orders\" (\nid INTEGER PRIMARY KEY AUTOINCREMENT,\n\
         code TEXT NOT NULL UNIQUE COLLATE NOCASE,\n\
         n INTEGER CHECK (n >= 0 AND n IN (0, 1, 2, 3)),\ns TEXT DEFAULT 'x'\n)"
    );
    let db = open(&s);
    // The counter goes on from where it was (41 was the last id given).
    let ids: Vec<i64> = db
        .prepare("SELECT id FROM orders ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(ids, [41, 42]);
    // The CHECK, the UNIQUE with its collation, and the trigger still hold.
    assert!(db
        .execute("INSERT INTO orders (code, n) VALUES ('z', 9)", [])
        .is_err());
    assert!(db
        .execute("INSERT INTO orders (code, n) VALUES ('B', 1)", [])
        .is_err());
    db.execute("INSERT INTO orders (code, n) VALUES ('c', 3)", [])
        .unwrap();
    let logged: i64 = db
        .query_row("SELECT count(*) FROM log", [], |r| r.get(0))
        .unwrap();
    assert_eq!(logged, 4);
    let index: i64 = db
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'orders_n'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(index, 1);
}

#[test]
fn on_drift_warn_prints_one_line_a_target_a_run_however_many_writes() {
    let s = drifting("sq-warn-once", "");
    let r = ok(
        &s,
        &format!(
            "{CONTRACT}let rows = source(\"orders\") | validate(Order) | oks()\n\
             rows | write(\"w\")\nrows | write(\"w\")\nrows | write(\"w\")\n"
        ),
    );
    assert_eq!(r.err.matches("warning: target `w`").count(), 1, "{}", r.err);
    assert_eq!(count(&s), 2 + 3 * 2);
}

#[test]
fn replace_applies_once_a_run_and_later_writes_add_to_it() {
    let s = setup("sq-replace-once", &target("w", "mode = \"replace\""));
    s.write("orders.csv", ORDERS);
    ok(&s, &load("w"));
    ok(
        &s,
        &format!(
            "{CONTRACT}let rows = source(\"orders\") | validate(Order) | oks()\n\
             rows | write(\"w\")\nrows | filter(r => r.id == 1) | write(\"w\")\n"
        ),
    );
    assert_eq!(count(&s), 3);
}

/// The table the run's first write makes is replaced no more than one it
/// found: the later writes add to it.
#[test]
fn replace_of_a_table_the_run_made_keeps_the_runs_first_write() {
    let s = setup("sq-replace-made", &target("w", "mode = \"replace\""));
    s.write("orders.csv", ORDERS);
    ok(
        &s,
        &format!(
            "{CONTRACT}let rows = source(\"orders\") | validate(Order) | oks()\n\
             rows | write(\"w\")\nrows | filter(r => r.id == 1) | write(\"w\")\n"
        ),
    );
    assert_eq!(count(&s), 3);
}

#[test]
fn upsert_on_a_key_that_may_be_null_or_absent_is_refused_before_writing() {
    for (field, why) in [("id?: Int", "absent"), ("id: Int | Null", "null")] {
        let s = setup("sq-upsert-null", &target("w", "mode = \"upsert\""));
        s.write("in.jsonl", "{\"id\": 1}\n{\"id\": null}\n");
        let r = s.run(
            &format!(
                "type K : DataContract = {{ {field}, unique id }}\n\
                 source(file(\"in.jsonl\"), Json) | validate(K) | oks() | write(\"w\")\n"
            ),
            &[],
        );
        assert_ne!(r.status, 0, "{field}: {}", r.out);
        assert!(r.err.contains("hql::config"), "{field}: {}", r.err);
        assert!(
            r.err.contains(&format!("may be {why}")),
            "{field}: {}",
            r.err
        );
        assert!(!s.exists("w.db"), "{field}: nothing is written");
    }
}
