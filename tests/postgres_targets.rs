//! PostgreSQL targets on a real server (tooling.md, "Sources, targets and
//! the schema boundary", "schema drift"): `create_table` with the contract
//! → column mapping, the write modes, every drift policy and option on
//! real column types (each lossless widening an `ALTER`), the run's one
//! transaction committed with its files or not at all, recovery of a
//! commit a crash interrupted, and the faults — each an error naming the
//! target, never the password, with the table's rows and schema as they
//! were.
//!
//! Each test starts a private server (`tests/pg/mod.rs`); they are ignored
//! by a plain `cargo test`, and `.ci/run` runs them.

mod common;
mod pg;

use common::*;
use pg::{Server, PASSWORD};

/// `hql.toml`'s entry for a PostgreSQL target.
fn target(id: &str, url: &str, table: &str, more: &str) -> String {
    format!("[targets.{id}]\npostgres = \"{url}\"\ntable = \"{table}\"\n{more}\n\n")
}

fn setup(name: &str, entries: &str) -> Scratch {
    let s = Scratch::new(name);
    s.write("hql.toml", entries);
    s
}

#[track_caller]
fn ok(s: &Scratch, program: &str) -> Run {
    let r = s.run(program, &[]);
    assert_eq!(r.status, 0, "stdout:\n{}\nstderr:\n{}", r.out, r.err);
    assert!(!r.err.contains(PASSWORD), "{}", r.err);
    r
}

/// A run that fails with `code` and exit `status`; its standard error,
/// which never holds the password.
#[track_caller]
fn fails(s: &Scratch, program: &str, code: &str, status: i32) -> String {
    let r = s.run(program, &[]);
    assert_eq!(r.status, status, "stdout:\n{}\nstderr:\n{}", r.out, r.err);
    assert!(r.err.contains(code), "{}", r.err);
    assert!(
        !r.err.contains(PASSWORD),
        "the password is shown:\n{}",
        r.err
    );
    assert!(!r.err.contains("panicked"), "{}", r.err);
    r.err
}

/// The rows `sql` selects, each as its cells joined by `|` (NULL: `∅`).
fn rows(pg: &Server, sql: &str) -> Vec<String> {
    let mut client = pg.client("postgres");
    client
        .simple_query(sql)
        .unwrap_or_else(|e| panic!("{sql}\n{e}"))
        .into_iter()
        .filter_map(|m| match m {
            postgres::SimpleQueryMessage::Row(row) => Some(
                (0..row.len())
                    .map(|i| row.get(i).unwrap_or("∅"))
                    .collect::<Vec<_>>()
                    .join("|"),
            ),
            _ => None,
        })
        .collect()
}

/// A table's columns as `name type [not null]`, in order.
fn columns(pg: &Server, table: &str) -> Vec<String> {
    rows(
        pg,
        &format!(
            "SELECT attname || ' ' || format_type(atttypid, atttypmod) || \
             CASE WHEN attnotnull THEN ' not null' ELSE '' END \
             FROM pg_attribute WHERE attrelid = '{table}'::regclass AND attnum > 0 \
             AND NOT attisdropped ORDER BY attnum"
        ),
    )
}

const ORDER: &str = "type Order : DataContract = {\n  id: Int\n  name: String\n  price: Float\n  \
                     paid: Bool\n  day: Date\n  at: Timestamp\n  tags: List[String]\n  \
                     note: String | Null\n  unique id\n}\n";

fn order_records() -> &'static str {
    "[{id: 1, name: \"tab\\there\", price: 2.5, paid: true, day: \"2024-02-29\", \
     at: \"2024-02-29T13:45:00.5+02:00\", tags: [\"a\", \"b\\\\c\"], note: null}, \
     {id: 2, name: \"line\\nbreak\", price: 0.1, paid: false, day: \"2024-03-01\", \
     at: \"2024-03-01T00:00:00Z\", tags: [], note: \"n\"}]"
}

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn create_table_maps_the_contract_and_the_modes_append_replace_and_upsert() {
    let pg = Server::start("t-modes");
    let url = pg.url("postgres");
    let s = setup(
        "pgt-modes",
        &(target("orders", &url, "shop.orders", "")
            + &target("again", &url, "shop.orders", "mode = \"replace\"")
            + &target("keyed", &url, "shop.orders", "mode = \"upsert\"")),
    );
    pg.sql("postgres", "CREATE SCHEMA shop");
    let program = format!(
        "{ORDER}{} | validate(Order) | oks() | write(\"orders\")\n",
        order_records()
    );
    let r = ok(&s, &program);
    assert_eq!(r.out, "{written: 2, drift: []}\n");
    assert_eq!(
        columns(&pg, "shop.orders"),
        [
            "id bigint not null",
            "name text not null",
            "price double precision not null",
            "paid boolean not null",
            "day date not null",
            "at timestamp with time zone not null",
            "tags jsonb not null",
            "note text",
        ]
    );
    let select = "SELECT id, name, price, paid, day, at AT TIME ZONE 'UTC', tags, note \
                  FROM shop.orders ORDER BY id, name";
    assert_eq!(
        rows(&pg, select),
        [
            "1|tab\there|2.5|t|2024-02-29|2024-02-29 11:45:00.5|[\"a\", \"b\\\\c\"]|∅",
            "2|line\nbreak|0.1|f|2024-03-01|2024-03-01 00:00:00|[]|n",
        ]
    );
    // Append adds the rows again; the unique index is upsert's alone.
    ok(&s, &program);
    assert_eq!(rows(&pg, "SELECT count(*) FROM shop.orders"), ["4"]);
    // Replace empties the table once a run: its second write adds.
    let r = ok(
        &s,
        &format!(
            "{ORDER}let o = {} | validate(Order) | oks()\n\
             o | write(\"again\")\no | filter(r => r.id == 2) | write(\"again\")\n",
            order_records()
        ),
    );
    assert_eq!(r.out, "{written: 2, drift: []}\n{written: 1, drift: []}\n");
    assert_eq!(
        rows(&pg, "SELECT id FROM shop.orders ORDER BY id"),
        ["1", "2", "2"]
    );
    // Upsert needs distinct keys: the rows must be made so first.
    ok(
        &s,
        &format!(
            "{ORDER}{} | validate(Order) | oks() | write(\"again\")\n",
            order_records()
        ),
    );
    let upsert = |name: &str| {
        format!(
            "{ORDER}[{{id: 2, name: \"{name}\", price: 1.0, paid: true, day: \"2024-01-01\", \
             at: \"2024-01-01T00:00:00Z\", tags: [], note: null}}, \
             {{id: 3, name: \"{name}\", price: 1.0, paid: true, day: \"2024-01-01\", \
             at: \"2024-01-01T00:00:00Z\", tags: [], note: null}}] \
             | validate(Order) | oks() | write(\"keyed\")\n"
        )
    };
    let r = ok(&s, &upsert("updated"));
    assert_eq!(r.out, "{written: 2, drift: []}\n");
    ok(&s, &upsert("again"));
    assert_eq!(
        rows(&pg, "SELECT id, name FROM shop.orders ORDER BY id"),
        ["1|tab\there", "2|again", "3|again"]
    );
}

// ---------------------------------------------------------------------- drift

/// A table of real types, and records that drift from it in every way:
/// widenings (`smallint` to `integer` and on to `bigint`, `real` to
/// `double precision`, `varchar(3)` to `varchar(6)`, `bigint` to
/// `numeric`), a column added, a null into a NOT NULL column, a NOT NULL
/// column missing, and a value of another kind.
const TABLE: &str = "CREATE TABLE t (id integer NOT NULL, small smallint, r real, \
                     code varchar(3), big bigint, req text NOT NULL, made text DEFAULT 'by default');
                     INSERT INTO t (id, req) VALUES (0, 'first');";

const DRIFTING: &str = "[\
    {id: 1, small: 40000, r: 0.5, code: \"ab\", big: 1, req: \"a\"},\n\
    {id: 2, small: 1, r: 0.1, code: \"abcdef\", big: 1, req: \"b\"},\n\
    {id: 3, small: 3000000000, r: 0.5, code: \"ab\", big: 1.5, req: \"c\"},\n\
    {id: 4, small: 1, r: 0.5, code: \"ab\", big: 1, req: \"d\", email: \"d@x\"},\n\
    {id: 5, small: 1, r: 0.5, code: \"ab\", big: 1, req: null},\n\
    {id: 6, small: 1, r: 0.5, code: \"ab\", big: 1},\n\
    {id: \"seven\", small: 1, r: 0.5, code: \"ab\", big: 1, req: \"g\"},\n\
    {id: 8, small: 1, r: 0.5, code: \"ab\", big: 1, req: \"h\"}]";

fn drifting(name: &str, schema: &str) -> (Server, Scratch) {
    let pg = Server::start(name);
    pg.sql("postgres", TABLE);
    let url = pg.url("postgres");
    let s = setup(
        &format!("pgt-{name}"),
        &(target("t", &url, "t", schema) + "[targets.dead]\nfile = \"dead.jsonl\"\n"),
    );
    (pg, s)
}

const BEFORE: [&str; 7] = [
    "id integer not null",
    "small smallint",
    "r real",
    "code character varying(3)",
    "big bigint",
    "req text not null",
    "made text",
];

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn evolve_alters_each_column_in_the_runs_transaction() {
    let (pg, s) = drifting(
        "evolve",
        "schema = { on_drift = \"evolve\", relax_nullability_on_missing = true, \
         on_incompatible = \"quarantine\", dead_letters = \"dead\" }",
    );
    let r = ok(&s, &format!("{DRIFTING} | write(\"t\")\n"));
    assert_eq!(
        r.out,
        "{written: 7, drift: [\
         {column: \"small\", change: \"widened\", count: 2}, \
         {column: \"r\", change: \"widened\", count: 1}, \
         {column: \"code\", change: \"widened\", count: 1}, \
         {column: \"big\", change: \"widened\", count: 1}, \
         {column: \"email\", change: \"added\", count: 1}, \
         {column: \"req\", change: \"nullable\", count: 1}, \
         {column: \"req\", change: \"missing\", count: 1}, \
         {column: \"id\", change: \"incompatible\", count: 1}]}\n"
    );
    assert_eq!(
        columns(&pg, "t"),
        [
            "id integer not null",
            "small bigint",
            "r double precision",
            "code character varying(6)",
            "big numeric",
            "req text",
            "made text",
            "email text",
        ]
    );
    assert_eq!(
        rows(
            &pg,
            "SELECT id, small, r, code, big, req, made, email FROM t ORDER BY id"
        ),
        [
            "0|∅|∅|∅|∅|first|by default|∅",
            "1|40000|0.5|ab|1|a|by default|∅",
            "2|1|0.1|abcdef|1|b|by default|∅",
            "3|3000000000|0.5|ab|1.5|c|by default|∅",
            "4|1|0.5|ab|1|d|by default|d@x",
            "5|1|0.5|ab|1|∅|by default|∅",
            "6|1|0.5|ab|1|∅|by default|∅",
            "8|1|0.5|ab|1|h|by default|∅",
        ]
    );
    let dead = s.read("dead.jsonl");
    assert_eq!(dead.lines().count(), 1, "{dead}");
    assert!(
        dead.contains(
            "\"rule\":\"t.id.schema_drift\",\"kind\":\"schema_drift\",\"path\":\"id\",\
             \"fields\":[\"id\"],\"severity\":\"error\",\"message\":\"target `t`: column `id` \
             drifted (incompatible): column `id` is integer and the value is of another kind\""
        ),
        "{dead}"
    );
}

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn each_policy_and_option_on_real_types() {
    // fail: nothing written, the schema as it was.
    let (pg, s) = drifting("policies", "schema = { on_drift = \"fail\" }");
    let err = fails(
        &s,
        &format!("{DRIFTING} | write(\"t\")\n"),
        "hql::schema_drift",
        1,
    );
    assert!(
        err.contains(
            "target `t`: column `small` drifted (widened: 2 records): column `small` is smallint \
             and takes the value only by widening to bigint; nothing is written"
        ),
        "{err}"
    );
    assert_eq!(columns(&pg, "t"), BEFORE);
    assert_eq!(rows(&pg, "SELECT count(*) FROM t"), ["1"]);
    let url = pg.url("postgres");
    let policy = |schema: &str| {
        s.write(
            "hql.toml",
            target("t", &url, "t", schema) + "[targets.dead]\nfile = \"dead.jsonl\"\n",
        );
    };
    // warn and ignore: a field the table lacks is left out (once warned);
    // a value the column's type cannot take stops the run.
    let added = "[{id: 9, req: \"i\", email: \"i@x\"}, {id: 10, req: \"j\", email: \"j@x\"}] | write(\"t\")\n";
    policy("");
    let r = ok(&s, &format!("{added}{added}"));
    assert_eq!(
        r.err.trim_end(),
        "warning: target `t`: column `email` drifted (added: 2 records): the table `t` has no \
         column `email`; the field is not written"
    );
    policy("schema = { on_drift = \"ignore\" }");
    let r = ok(&s, added);
    assert_eq!(r.err, "");
    assert_eq!(
        rows(&pg, "SELECT count(*) FROM t WHERE id IN (9, 10)"),
        ["6"]
    );
    for schema in ["", "schema = { on_drift = \"ignore\" }"] {
        policy(schema);
        let err = fails(
            &s,
            &format!("{DRIFTING} | write(\"t\")\n"),
            "hql::schema_drift",
            1,
        );
        assert!(
            err.contains("PostgreSQL cannot store the values as they are, so nothing is written"),
            "{err}"
        );
    }
    // quarantine: every drifting record to the dead letters.
    policy("schema = { on_drift = \"quarantine\", dead_letters = \"dead\" }");
    let r = ok(&s, &format!("{DRIFTING} | write(\"t\")\n"));
    assert!(r.out.starts_with("{written: 1, drift: ["), "{}", r.out);
    assert_eq!(s.read("dead.jsonl").lines().count(), 7);
    assert_eq!(rows(&pg, "SELECT count(*) FROM t WHERE id = 8"), ["1"]);
    // evolve without widening: the widenings are incompatible, and fail.
    policy("schema = { on_drift = \"evolve\", allow_type_widening = false }");
    let err = fails(
        &s,
        &format!("{DRIFTING} | write(\"t\")\n"),
        "hql::schema_drift",
        1,
    );
    assert!(
        err.contains("column `small` drifted (widened: 2 records)"),
        "{err}"
    );
    // Nothing of the failed runs reached the table: the column was not added.
    assert_eq!(columns(&pg, "t"), BEFORE);
    // evolve, missing NOT NULL not relaxed by default: quarantined.
    policy(
        "schema = { on_drift = \"evolve\", on_incompatible = \"quarantine\", dead_letters = \"dead\" }",
    );
    let r = ok(&s, "[{id: 11}, {id: 12, req: \"l\"}] | write(\"t\")\n");
    assert_eq!(
        r.out,
        "{written: 1, drift: [{column: \"req\", change: \"missing\", count: 1}]}\n"
    );
    assert_eq!(columns(&pg, "t")[5], "req text not null");
}

// ---------------------------------------------------------------- faults

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn faults_name_the_target_never_the_password_and_change_nothing() {
    let pg = Server::start("t-faults");
    pg.sql(
        "postgres",
        "CREATE TABLE t (id bigint, note text); INSERT INTO t VALUES (0, 'kept');
         CREATE TABLE slow (id bigint);
         CREATE FUNCTION wait() RETURNS trigger AS $$ BEGIN PERFORM pg_sleep(2); RETURN NEW; END $$
           LANGUAGE plpgsql;
         CREATE TRIGGER waits BEFORE INSERT ON slow FOR EACH ROW EXECUTE FUNCTION wait();
         CREATE ROLE reader LOGIN PASSWORD 'reader-pw-3';",
    );
    let url = pg.url("postgres");
    let reader = format!(
        "postgresql://reader:reader-pw-3@127.0.0.1:{}/postgres",
        pg.port
    );
    let entries = [
        target(
            "port",
            &url.replace(&format!(":{}/", pg.port), ":1/"),
            "t",
            "",
        ),
        target("password", &url.replace(PASSWORD, "not-it"), "t", ""),
        target("missing", &url, "nothing", "create_table = false"),
        target("denied", &reader, "t", ""),
        target(
            "slow",
            &format!("{url}?options=-c%20statement_timeout%3D300"),
            "slow",
            "",
        ),
        target("t", &url, "t", ""),
        "[targets.copy]\nfile = \"copy.jsonl\"\n".to_string(),
        "[targets.local]\nsqlite = \"local.db\"\ntable = \"t\"\n".to_string(),
    ];
    let s = setup("pgt-faults", &entries.concat());
    let unchanged = |s: &Scratch| {
        assert_eq!(rows(&pg, "SELECT id, note FROM t"), ["0|kept"]);
        assert_eq!(columns(&pg, "t"), ["id bigint", "note text"]);
        assert!(!s.path.join("copy.jsonl").exists());
    };
    let write = |id: &str| {
        format!("[{{id: 1, note: \"a\"}}] | write(\"copy\")\n[{{id: 1, note: \"a\"}}] | write(\"{id}\")\n")
    };
    for (id, says) in [
        (
            "port",
            "cannot write target `port` on postgresql://hql@127.0.0.1:1/postgres",
        ),
        ("password", "password authentication failed"),
        (
            "missing",
            "target `missing` (table `nothing` in postgresql://hql@127.0.0.1",
        ),
        ("denied", "permission denied for table t"),
        ("slow", "canceling statement due to statement timeout"),
    ] {
        let err = fails(&s, &write(id), "hql::io", 1);
        assert!(err.contains(says), "{id}: {err}");
        unchanged(&s);
    }
    // A value the server refuses names its column and the record's line.
    pg.sql("postgres", "CREATE TABLE days (id bigint, day date)");
    s.write(
        "days.jsonl",
        "{\"id\": 1, \"day\": \"2024-02-29\"}\n{\"id\": 2, \"day\": \"2024-13-45\"}\n",
    );
    s.write(
        "hql.toml",
        s.read("hql.toml") + &target("days", &url, "days", ""),
    );
    let err = fails(
        &s,
        "source(file(\"days.jsonl\"), Json) | write(\"days\")\n",
        "hql::io",
        1,
    );
    assert!(
        err.contains("column `day`: date/time field value out of range"),
        "{err}"
    );
    assert!(err.contains("(record at days.jsonl:2)"), "{err}");
    assert_eq!(rows(&pg, "SELECT count(*) FROM days"), ["0"]);
    // A NUL in text is refused by column, before the server sees it.
    s.write("nul.jsonl", "{\"id\": 1, \"note\": \"a\\u0000b\"}\n");
    let err = fails(
        &s,
        "[{id: 1, note: \"fine\"}] | write(\"t\")\nsource(file(\"nul.jsonl\"), Json) | write(\"t\")\n",
        "hql::io",
        1,
    );
    assert!(
        err.contains("target `t`: column `note` would hold text with a NUL character"),
        "{err}"
    );
    unchanged(&s);
    // A run writes at most one database: refused before anything runs.
    let r = s.run(
        "[{id: 1}] | write(\"t\")\n[{id: 1}] | write(\"local\")\n",
        &[],
    );
    assert_eq!((r.status, r.out.as_str()), (2, ""), "{}", r.err);
    assert!(r.err.contains("a run writes at most one"), "{}", r.err);
    unchanged(&s);
    // A later failure of the run abandons the table with the files.
    let err = fails(
        &s,
        &format!("{}[1] | map(x => x / 0) | collect()\n", write("t")),
        "hql::",
        1,
    );
    assert!(!err.contains("hql::commit"), "{err}");
    unchanged(&s);
}

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn a_server_stopped_mid_run_commits_nothing() {
    let pg = Server::start("t-killed");
    pg.sql(
        "postgres",
        "CREATE TABLE t (id bigint, name text); INSERT INTO t VALUES (0, 'kept');",
    );
    let s = setup("pgt-killed", &target("t", &pg.url("postgres"), "t", ""));
    let mut lines = String::new();
    for i in 1..=3_000_000 {
        lines.push_str(&format!("{{\"id\":{i},\"name\":\"row {i}\"}}\n"));
    }
    s.write("big.jsonl", lines);
    s.write(
        "main.hql",
        "source(file(\"big.jsonl\"), Json) | write(\"t\")\n[1] | write(file(\"after.jsonl\"))\n",
    );
    let child = s.spawn(&["run", "main.hql"]);
    // Once the server has taken some rows, it stops at once.
    let mut client = pg.client("postgres");
    let started = std::time::Instant::now();
    loop {
        let copying = client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'COPY%'",
                &[],
            )
            .unwrap()
            .get::<_, i64>(0);
        if copying > 0 {
            break;
        }
        assert!(started.elapsed().as_secs() < 60, "no COPY began");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(client);
    pg.kill();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("hql::io") && err.contains("target `t`"),
        "{err}"
    );
    assert!(!err.contains(PASSWORD), "{err}");
    assert!(!s.path.join("after.jsonl").exists());
    pg.restart();
    assert_eq!(rows(&pg, "SELECT id, name FROM t"), ["0|kept"]);
}

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn a_crash_at_each_step_of_a_server_and_file_commit_is_recovered_all_old_or_all_new() {
    use std::os::unix::process::ExitStatusExt;
    let pg = Server::start("t-crash");
    pg.sql(
        "postgres",
        "CREATE TABLE t (id bigint); INSERT INTO t VALUES (0);",
    );
    // The URL is kept in the environment: the journal names the target,
    // and recovery reads it from there again.
    let s = setup(
        "pgt-crash",
        "[targets.t]\npostgres_env = \"HQL_TEST_PG\"\ntable = \"t\"\n",
    );
    s.write(
        "main.hql",
        "let rows = [{id: 1}, {id: 2}]\nrows | write(\"t\")\nrows | write(file(\"copy.jsonl\"))\n",
    );
    for (step, new) in [
        ("prepared", false),
        ("journaled", false),
        ("database", true),
        ("renamed", true),
    ] {
        pg.sql("postgres", "DELETE FROM t WHERE id > 0");
        s.write("copy.jsonl", "old\n");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
            .args(["run", "main.hql"])
            .current_dir(&s.path)
            .env("HQL_PROGRESS", "0")
            .env("HQL_TEST_PG", pg.url("postgres"))
            .env("HQL_TEST_CRASH_AT", step)
            .output()
            .expect("hql runs");
        assert_eq!(out.status.signal(), Some(6), "{step} was never reached");
        let recovered = std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
            .args(["recover"])
            .current_dir(&s.path)
            .env("HQL_TEST_PG", pg.url("postgres"))
            .output()
            .expect("hql runs");
        let said = String::from_utf8_lossy(&recovered.stdout).to_string()
            + &String::from_utf8_lossy(&recovered.stderr);
        assert!(recovered.status.success(), "{step}: {said}");
        assert!(!said.contains(PASSWORD), "{said}");
        let table = rows(&pg, "SELECT count(*) FROM t");
        let copy = s.read("copy.jsonl");
        if new {
            assert_eq!(
                (table[0].as_str(), copy.lines().count()),
                ("3", 2),
                "{step}: {said}"
            );
        } else {
            assert_eq!(
                (table[0].as_str(), copy.as_str()),
                ("1", "old\n"),
                "{step}: {said}"
            );
        }
        let left: Vec<String> = (s.files().into_iter())
            .filter(|f| f.contains(".hql-"))
            .collect();
        assert!(left.is_empty(), "{step}: {left:?}");
    }
}

// ------------------------------------------------------- reading back

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn a_source_reads_what_earlier_statements_of_the_run_wrote() {
    let pg = Server::start("t-read");
    pg.sql(
        "postgres",
        "CREATE TABLE t (id bigint, note text); INSERT INTO t VALUES (0, 'old');",
    );
    let url = pg.url("postgres");
    let s = setup(
        "pgt-read",
        &(target("t", &url, "t", "")
            + &target("clean", &url, "t", "mode = \"replace\"")
            + &format!("[sources.t]\npostgres = \"{url}\"\ntable = \"t\"\n\n")
            + &format!(
                "[sources.q]\npostgres = \"{url}\"\nquery = \"SELECT count(*) AS n FROM t\"\n"
            )),
    );
    // Two writes to one table in one run, each read back by the next
    // statement before anything is committed.
    let r = ok(
        &s,
        "source(\"t\") | count()\n\
         [{id: 1, note: \"a\"}] | write(\"t\")\n\
         source(\"t\") | map(r => r.id) | collect()\n\
         [{id: 2, note: \"b\"}] | write(\"t\")\n\
         source(\"q\") | collect()\n",
    );
    assert_eq!(
        r.out,
        "1\n{written: 1, drift: []}\n[0, 1]\n{written: 1, drift: []}\n[{n: 3}]\n"
    );
    // Within one statement the source reads what was there before: a
    // table is cleaned in place.
    let r = ok(
        &s,
        "source(\"t\") | filter(r => r.id != 1) | map(r => {id: r.id * 10, note: r.note}) | write(\"clean\")\n",
    );
    assert_eq!(r.out, "{written: 2, drift: []}\n");
    assert_eq!(
        rows(&pg, "SELECT id, note FROM t ORDER BY id"),
        ["0|old", "20|b"]
    );
    // A run that stops commits none of it, the reads through it aside.
    let err = fails(
        &s,
        "[{id: 3, note: \"c\"}] | write(\"t\")\nsource(\"t\") | count()\n[1] | map(x => x / 0) | collect()\n",
        "hql::",
        1,
    );
    assert!(!err.contains("hql::commit"), "{err}");
    assert_eq!(rows(&pg, "SELECT count(*) FROM t"), ["2"]);
}

// ---------------------------------------------------------------- the guide

/// `docs/postgres/loading.md`, run against a fresh server: every cell,
/// those that need the server too, gives its stored output.
#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn the_loading_postgresql_guide_runs_on_a_server() {
    let pg = Server::start("t-guide");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["test", "--with", "postgres", "docs/postgres/loading.md"])
        .current_dir(root)
        .env("NO_COLOR", "1")
        .env("HQL_TUTORIAL_PG", pg.url("postgres"))
        .output()
        .expect("hql runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.ends_with("6 passed, 0 failed\n"), "{text}");
    assert_eq!(
        rows(&pg, "SELECT order_id, coupon FROM orders ORDER BY order_id"),
        [
            "A-1001|∅",
            "A-1002|∅",
            "A-1007|∅",
            "A-2001|SPRING",
            "A-2002|∅"
        ]
    );
}

// ---------------------------------------------------------------- numeric

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn columns_typed_numeric_keep_numbers_exact_at_any_size() {
    let pg = Server::start("t-numeric");
    let s = setup(
        "pgt-numeric",
        &target(
            "t",
            &pg.url("postgres"),
            "t",
            "columns = { big = { type = \"numeric\" }, amount = { type = \"numeric\" } }",
        ),
    );
    // Numbers past 64 bits come from data (a literal in a program is an Int).
    s.write(
        "in.jsonl",
        "{\"id\": 1, \"big\": 123456789012345678901234567890, \"amount\": 0.1}\n\
         {\"id\": 9007199254740993, \"big\": 2, \"amount\": 12.30}\n",
    );
    let r = ok(
        &s,
        "type T : DataContract = { id: Int, big: Int, amount: Float }\n\
         source(file(\"in.jsonl\"), Json) | validate(T) | oks() | write(\"t\")\n",
    );
    assert_eq!(r.out, "{written: 2, drift: []}\n");
    assert_eq!(
        columns(&pg, "t"),
        [
            "id bigint not null",
            "big numeric not null",
            "amount numeric not null"
        ]
    );
    assert_eq!(
        rows(&pg, "SELECT id, big, amount FROM t ORDER BY id"),
        [
            "1|123456789012345678901234567890|0.1",
            "9007199254740993|2|12.30"
        ]
    );
}

/// No server needed: `columns` on a target is refused where it cannot mean
/// anything, before the program runs.
#[test]
fn a_targets_columns_are_a_postgresql_tables_numeric_ones_only() {
    for (entry, says) in [
        (
            "[targets.t]\nsqlite = \"x.db\"\ntable = \"t\"\ncolumns = { a = { type = \"numeric\" } }\n",
            "a target's `columns` types a PostgreSQL table's columns",
        ),
        (
            "[targets.t]\npostgres = \"postgresql://u@127.0.0.1:1/db\"\ntable = \"t\"\ncolumns = { a = { type = \"int\" } }\n",
            "`int` is not a column type a target takes",
        ),
    ] {
        let s = setup("pgt-columns", entry);
        let r = s.run("[{a: 1}] | write(\"t\")\n", &[]);
        assert_eq!(r.status, 2, "{}", r.err);
        assert!(r.err.contains("hql::config") && r.err.contains(says), "{}", r.err);
    }
}
