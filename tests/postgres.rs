//! PostgreSQL sources on a real server (tooling.md, "Sources, targets and
//! the schema boundary"): every column type read as its HQL value, NULL
//! absent or `null` as the field's type says, a table or a query, a large
//! table read through a cursor in bounded memory, `hql vet` and `hql
//! infer` over a configured source, TLS by `sslmode`, and the faults — a
//! wrong port, a bad password, a missing table, a permission denied, a
//! statement timeout, a query that writes, a server stopped mid-read —
//! each an error naming the source and never the password.
//!
//! Each test that needs a server starts a private one (`tests/pg/mod.rs`);
//! they are ignored by a plain `cargo test`, and `.ci/run` runs them.

mod common;
mod pg;

use common::*;
use pg::{Server, PASSWORD};

/// A scratch folder whose `hql.toml` has the given entries.
fn setup(name: &str, entries: &str) -> Scratch {
    let s = Scratch::new(name);
    s.write("hql.toml", entries);
    s
}

fn source(id: &str, url: &str, what: &str) -> String {
    format!("[sources.{id}]\npostgres = \"{url}\"\n{what}\n\n")
}

#[track_caller]
fn ok(s: &Scratch, program: &str) -> Run {
    let r = s.run(program, &[]);
    assert_eq!(r.status, 0, "stdout:\n{}\nstderr:\n{}", r.out, r.err);
    r
}

/// A run that fails with `hql::io`; its standard error, which never holds
/// the password.
#[track_caller]
fn io_error(s: &Scratch, program: &str) -> String {
    let r = s.run(program, &[]);
    assert_eq!(r.status, 1, "stdout:\n{}\nstderr:\n{}", r.out, r.err);
    assert!(r.err.contains("hql::io"), "{}", r.err);
    assert!(
        !r.err.contains(PASSWORD),
        "the password is shown:\n{}",
        r.err
    );
    assert!(!r.err.contains("panicked"), "{}", r.err);
    r.err
}

/// No server needed: nothing listens on port 1.
#[test]
fn an_unreachable_server_and_a_target_are_named_without_the_password() {
    let url = format!("postgresql://hql:{PASSWORD}@127.0.0.1:1/shop");
    let s = setup(
        "pg-none",
        &format!(
            "{}[targets.w]\npostgres = \"{url}\"\ntable = \"t\"\n",
            source("o", &url, "table = \"orders\"")
        ),
    );
    let err = io_error(&s, "source(\"o\") | count()\n");
    assert!(
        err.contains("cannot read source `o` from postgresql://hql@127.0.0.1:1/shop"),
        "{err}"
    );
    // A target's server is reached when the first record is written: what
    // ran before printed, and nothing is committed.
    let r = s.run("1 + 1\n[{a: 1}] | write(\"w\")\n", &[]);
    assert_eq!((r.out.as_str(), r.status), ("2\n", 1), "{}", r.err);
    assert!(
        r.err.contains("hql::io")
            && r.err
                .contains("cannot write target `w` on postgresql://hql@127.0.0.1:1/shop"),
        "{}",
        r.err
    );
    assert!(!r.err.contains(PASSWORD), "{}", r.err);
}

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn every_column_type_reads_as_its_hql_value() {
    let pg = Server::start("types");
    pg.sql(
        "postgres",
        "CREATE TYPE mood AS ENUM ('calm', 'glad');
         CREATE TABLE t (
           i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision,
           price numeric(9,2), exact numeric, name text, code varchar(5), ch char(3),
           flag boolean, day date, at timestamptz, wall timestamp, doc jsonb, raw json,
           id uuid, blob bytea, tags text[], grid int[], feeling mood, note text
         );
         INSERT INTO t VALUES (
           -2, 40000, 9000000000, 0.1, 2.5,
           12.30, 123456789012345678901234567890.5, 'Ada', 'ab', 'x',
           true, '2024-02-29', '2024-02-29 13:45:00.12+02', '2024-01-01 00:00:00', '{\"a\": [1, 2.50], \"b\": null}', '[true]',
           'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\x666f6f', '{\"a b\",NULL}', '{{1,2},{3,4}}', 'glad', NULL
         );
         INSERT INTO t (i4, note) VALUES (1, 'only');",
    );
    let s = setup(
        "pg-types",
        &source("t", &pg.url("postgres"), "table = \"t\""),
    );
    let r = ok(
        &s,
        "source(\"t\") | collect()\n\
         type T : DataContract = { i4: Int, note: String | Null, name?: String | Null }\n\
         source(\"t\") | validate(T) | oks() | map(r => [r.note, r.name]) | collect()\n",
    );
    assert_eq!(
        r.out,
        "[{i2: -2, i4: 40000, i8: 9000000000, f4: 0.1, f8: 2.5, price: 12.30, \
         exact: 123456789012345678901234567890.5, name: \"Ada\", code: \"ab\", ch: \"x  \", \
         flag: true, day: \"2024-02-29\", at: \"2024-02-29T11:45:00.12Z\", \
         wall: \"2024-01-01T00:00:00\", doc: {a: [1, 2.50], b: null}, raw: [true], \
         id: \"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\", blob: \"Zm9v\", tags: [\"a b\", null], \
         grid: [[1, 2], [3, 4]], feeling: \"glad\"}, {i4: 1, note: \"only\"}]\n\
         [[null, \"Ada\"], [\"only\", null]]\n"
    );
    // `hql infer` reads a configured source as `hql vet` does.
    let r = s.hql(&["infer", "t", "--name", "Row"]);
    assert_eq!(r.status, 0, "{}", r.err);
    for field in [
        "i8?: Int",
        "price?: Float",
        "at?: Timestamp",
        "grid?: List[List[Int]]",
    ] {
        assert!(r.out.contains(field), "{field} in:\n{}", r.out);
    }
}

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn a_query_source_gives_rows_with_their_position_and_nans_are_decode_errs() {
    let pg = Server::start("query");
    pg.sql(
        "postgres",
        "CREATE SCHEMA shop;
         CREATE TABLE shop.stock (code text, qty bigint, price double precision);
         INSERT INTO shop.stock VALUES ('a', 2, 1.5), ('b', 0, 2), ('c', 5, 'NaN'), ('d', -1, 3);",
    );
    let url = pg.url("postgres");
    let entries = source(
        "q",
        &url,
        "query = \"SELECT code, qty, price FROM shop.stock WHERE qty <> 0 ORDER BY code;\"",
    ) + &source("whole", &url, "table = \"shop.stock\"")
        + &source(
            "renamed",
            &url,
            "table = \"shop.stock\"\ncolumns = { sku = \"code\", price = { name = \"price\", nullable = true } }",
        );
    let s = setup("pg-query", &entries);
    let r = ok(
        &s,
        "type Stock : DataContract = { code: String, qty: Int, price: Float\n  require qty > 0 }\n\
         source(\"q\") | validate(Stock) | errs() | map(e => {line: e.origin.line, source: e.origin.source, rules: e.failures | map(f => f.rule)}) | collect()\n\
         source(\"whole\") | count()\n",
    );
    assert_eq!(
        r.out,
        "[{line: 2, source: \"q\", rules: [\"decode\"]}, {line: 3, source: \"q\", rules: [\"Stock.qty > 0\"]}]\n4\n"
    );
    // The boundary renames a column for the contract, as for files.
    let r = ok(&s, "source(\"renamed\") | first()\n");
    assert_eq!(r.out, "{sku: \"a\", qty: 2, price: 1.5}\n");
    let r = ok(
        &s,
        "source(\"q\") | validate(Stock) | errs() | map(e => e.failures[0].message) | first()\n\
         type Stock : DataContract = { code: String }\n",
    );
    assert!(
        r.out
            .contains("column `price` holds NaN, which has no HQL value"),
        "{}",
        r.out
    );
}

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn a_large_table_streams_through_a_cursor_and_vet_reads_a_configured_source() {
    let pg = Server::start("large");
    pg.sql(
        "postgres",
        "CREATE TABLE big AS
           SELECT n AS id, 'name-' || n AS name, ((n % 100)::numeric / 4)::numeric(6, 2) AS amount
           FROM generate_series(1, 300000) AS n;",
    );
    let s = setup(
        "pg-large",
        &source("big", &pg.url("postgres"), "table = \"big\""),
    );
    let r = ok(
        &s,
        "type Row : DataContract = { id: Int, name: String, amount: Float\n  require amount < 24.5 }\n\
         source(\"big\") | validate(Row) | report()\n\
         source(\"big\") | first()\n",
    );
    assert_eq!(
        r.out,
        "{total: 300000, ok: 294000, err: 6000, warned: 0, by_rule: [{rule: \"Row.amount < 24.5\", kind: \"require\", count: 6000}]}\n\
         {id: 1, name: \"name-1\", amount: 0.25}\n"
    );
    s.write(
        "contracts.hql",
        "type Row : DataContract = { id: Int, name: String, amount: Float\n  require amount < 24.5 }\n",
    );
    let r = s.hql(&["vet", "contracts.hql", "big"]);
    assert_eq!(r.status, 1, "{}\n{}", r.out, r.err);
    assert!(
        r.out
            .starts_with("big: {total: 300000, ok: 294000, err: 6000"),
        "{}",
        r.out
    );
}

/// A million rows read through the cursor: the reader holds a batch or
/// two of rows at a time, whatever the table's size.
#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn a_million_rows_are_read_in_bounded_memory() {
    let pg = Server::start("million");
    pg.sql(
        "postgres",
        "CREATE TABLE big AS
           SELECT n AS id, repeat('x', 40) || n AS name, n % 7 AS qty
           FROM generate_series(1, 1000000) AS n;",
    );
    let s = setup(
        "pg-million",
        &source("big", &pg.url("postgres"), "table = \"big\""),
    );
    s.write(
        "p.hql",
        "type Row : DataContract = { id: Int, name: String, qty: Int\n  require qty > 0 }\n\
         source(\"big\") | validate(Row) | oks() | count()\n",
    );
    let mut child = s.spawn(&["run", "p.hql"]);
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    let peak = peak_kib(child);
    assert_eq!(out, "857143\n");
    eprintln!("1,000,000 rows, peak {peak} KiB");
    assert!(peak < 64 * 1024, "peak {peak} KiB");
}

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn faults_are_io_errors_naming_the_source_never_the_password() {
    let pg = Server::start("faults");
    pg.sql(
        "postgres",
        "CREATE TABLE t (a int); INSERT INTO t VALUES (1);
         CREATE TABLE secret (a int);
         CREATE ROLE reader LOGIN PASSWORD 'reader-pw-3';",
    );
    let url = pg.url("postgres");
    let wrong_port = url.replace(&format!(":{}/", pg.port), ":1/");
    let bad_password = url.replace(PASSWORD, "not-it");
    let reader = format!(
        "postgresql://reader:reader-pw-3@127.0.0.1:{}/postgres",
        pg.port
    );
    let entries = [
        source("port", &wrong_port, "table = \"t\""),
        source("password", &bad_password, "table = \"t\""),
        source("missing", &url, "table = \"nothing\""),
        source("denied", &reader, "table = \"secret\""),
        source("typed", &url, "query = \"SELECT interval '1 day' AS span\""),
        source("deleting", &url, "query = \"DELETE FROM t RETURNING a\""),
        source(
            "slow",
            &format!("{url}?options=-c%20statement_timeout%3D200"),
            "query = \"SELECT a, pg_sleep(2) IS NULL AS waited FROM t\"",
        ),
        source(
            "sneaking",
            &url,
            "query = \"WITH gone AS (DELETE FROM t RETURNING a) SELECT a FROM gone\"",
        ),
        "[sources.env]\npostgres_env = \"HQL_TEST_NO_SUCH_VAR\"\ntable = \"t\"\n".to_string(),
    ]
    .concat();
    let s = setup("pg-faults", &entries);
    let err = io_error(&s, "source(\"port\") | count()\n");
    assert!(
        err.contains("cannot read source `port` from postgresql://hql@127.0.0.1:1/postgres"),
        "{err}"
    );
    let err = io_error(&s, "source(\"password\") | count()\n");
    assert!(err.contains("password authentication failed"), "{err}");
    assert!(!err.contains("not-it"), "{err}");
    let err = io_error(&s, "source(\"missing\") | count()\n");
    assert!(err.contains("relation \"nothing\" does not exist"), "{err}");
    let err = io_error(&s, "source(\"denied\") | count()\n");
    assert!(err.contains("permission denied for table secret"), "{err}");
    let err = io_error(&s, "source(\"typed\") | count()\n");
    assert!(
        err.contains("column `span` is of type interval, which has no HQL value"),
        "{err}"
    );
    // A source reads rows: a query that writes is refused, by hql or by
    // the server (and the transaction is read-only besides); the table
    // keeps its row.
    let err = io_error(&s, "source(\"slow\") | count()\n");
    assert!(
        err.contains("canceling statement due to statement timeout"),
        "{err}"
    );
    let r = s.run("source(\"deleting\") | count()\n", &[]);
    assert_eq!(r.status, 1, "{}", r.err);
    assert!(
        r.err
            .contains("its query starts with `DELETE`, and a source reads rows"),
        "{}",
        r.err
    );
    let err = io_error(&s, "source(\"sneaking\") | count()\n");
    assert!(
        err.contains("must not contain data-modifying statements"),
        "{err}"
    );
    let rows: i64 = pg
        .client("postgres")
        .query_one("SELECT count(*) FROM t", &[])
        .unwrap()
        .get(0);
    assert_eq!(rows, 1);
    let r = s.run("source(\"env\") | count()\n", &[]);
    assert_eq!(r.status, 2, "{}", r.err);
    assert!(
        r.err
            .contains("environment variable `HQL_TEST_NO_SUCH_VAR` (postgres_env) is not set"),
        "{}",
        r.err
    );
    // The variable set, the source reads.
    s.write("env.hql", "source(\"env\") | count()\n");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", "env.hql"])
        .current_dir(&s.path)
        .env("HQL_TEST_NO_SUCH_VAR", &url)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n", "{err}");
}

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn a_server_stopped_mid_read_is_an_io_error_after_the_rows_read() {
    let pg = Server::start("killed");
    pg.sql(
        "postgres",
        "CREATE TABLE slow AS SELECT n FROM generate_series(1, 5000) AS n;",
    );
    // Each row waits a little, so the server is stopped while rows come.
    let s = setup(
        "pg-killed",
        &source(
            "slow",
            &pg.url("postgres"),
            "query = \"SELECT n, pg_sleep(0.001) IS NULL AS waited FROM slow ORDER BY n\"",
        ),
    );
    s.write("p.hql", "source(\"slow\") | count()\n");
    let child = s.spawn(&["run", "p.hql"]);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    pg.kill();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("hql::io"), "{err}");
    assert!(
        err.contains("reading source `slow` from postgresql://hql@127.0.0.1"),
        "{err}"
    );
    assert!(!err.contains(PASSWORD), "{err}");
}

/// TLS by the URL's `sslmode`: `require` encrypts without checking the
/// certificate, `verify-ca` checks it is signed by `sslrootcert`'s CA,
/// `verify-full` also that it names the host; `disable` is turned away by
/// a server that takes TLS only.
#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl) and openssl; .ci/run runs it"]
fn tls_follows_the_urls_sslmode() {
    let pg = Server::start_tls("tls");
    pg.sql(
        "postgres",
        "CREATE TABLE t (a int); INSERT INTO t VALUES (1), (2);",
    );
    let url = pg.url("postgres");
    let ca = pg.ca().display().to_string();
    let modes = [
        ("required", format!("{url}?sslmode=require")),
        ("preferred", url.clone()),
        ("ca", format!("{url}?sslmode=verify-ca&sslrootcert={ca}")),
        (
            "full",
            format!("{url}?sslmode=verify-full&sslrootcert={ca}"),
        ),
        ("unknown_ca", format!("{url}?sslmode=verify-full")),
        ("plain", format!("{url}?sslmode=disable")),
    ];
    let entries: String = modes
        .iter()
        .map(|(id, url)| source(id, url, "table = \"t\""))
        .collect();
    let s = setup("pg-tls", &entries);
    for id in ["required", "preferred", "ca"] {
        let r = ok(&s, &format!("source(\"{id}\") | count()\n"));
        assert_eq!(r.out, "2\n", "{id}");
    }
    // The certificate names db.invalid, not 127.0.0.1.
    let err = io_error(&s, "source(\"full\") | count()\n");
    assert!(err.contains("certificate"), "{err}");
    let err = io_error(&s, "source(\"unknown_ca\") | count()\n");
    assert!(err.contains("certificate"), "{err}");
    let err = io_error(&s, "source(\"plain\") | count()\n");
    assert!(err.contains("no encryption"), "{err}");
}
