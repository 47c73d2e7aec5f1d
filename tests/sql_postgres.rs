//! `hql export --format sql --dialect postgres` held to `hql run` on a
//! real PostgreSQL server: over the fixture with every construct the
//! compiler knows, the expectations' fixture, the examples' contracts and
//! data (JSON lines in a table's text column) and the Parquet fixtures'
//! rows in typed tables, the query gives every line the same failure
//! identities (rule, kind, path, in order) and warnings as `validate`, and
//! `--summary` gives `report()`'s row; `hql vet --engine postgres` over a
//! configured table prints what `hql vet` prints.
//!
//! Each test that needs a server starts a private one (`tests/pg/mod.rs`);
//! they are ignored by a plain `cargo test`, and `.ci/run` runs them.

use std::process::Command;

use serde_json::Value as Json;

mod common;
mod pg;
mod sql;

use sql::{assert_agree, by_hql, export, root};

/// The lines of the JSON Lines file `data`, each a row of a new table
/// `table (line text)`, in order (blank ones too, as a file has them).
fn load_lines(client: &mut postgres::Client, table: &str, data: &str) {
    let text = std::fs::read_to_string(root().join(data)).unwrap();
    client
        .batch_execute(&format!(
            "DROP TABLE IF EXISTS {table}; CREATE TABLE {table} (line text)"
        ))
        .unwrap();
    let insert = client
        .prepare(&format!("INSERT INTO {table} VALUES ($1)"))
        .unwrap();
    for line in text.split('\n') {
        client.execute(&insert, &[&line]).unwrap();
    }
}

/// What PostgreSQL says, running `sql` (the helpers, then the query): one
/// `{line, failures, warnings}` a row, or the summary row, as
/// `tests/sql/run_duckdb.py` prints them.
fn run(client: &mut postgres::Client, sql: &str, summary: bool) -> Result<Vec<Json>, String> {
    let messages = client
        .simple_query(sql)
        .map_err(|e| match e.as_db_error() {
            Some(db) => format!("PostgreSQL failed: {}", db.message()),
            None => format!("PostgreSQL failed: {e}"),
        })?;
    let mut rows = Vec::new();
    for message in messages {
        let postgres::SimpleQueryMessage::Row(row) = message else {
            continue;
        };
        let json = |name: &str| -> Json { serde_json::from_str(row.get(name).unwrap()).unwrap() };
        let int = |name: &str| -> Json { row.get(name).unwrap().parse::<u64>().unwrap().into() };
        let fields = |list: Json, names: &[&str]| -> Vec<Json> {
            (list.as_array().unwrap().iter())
                .map(|f| match names {
                    [one] => f[one].clone(),
                    _ => Json::Array(names.iter().map(|n| f[n].clone()).collect()),
                })
                .collect()
        };
        rows.push(match summary {
            true => serde_json::json!({
                "total": int("total"), "ok": int("ok"), "err": int("err"),
                "warned": int("warned"),
                "by_rule": fields(json("by_rule"), &["rule", "kind", "count"]),
            }),
            false => serde_json::json!({
                "line": int("hql_line"),
                "failures": fields(json("hql_failures"), &["rule", "kind", "path"]),
                "warnings": fields(json("hql_warnings"), &["rule"]),
            }),
        });
    }
    Ok(rows)
}

/// The query for `ty` of `file` over `table` agrees with `hql run` over
/// `data` (the file the table holds) on every line and on the report.
fn agree(
    client: &mut postgres::Client,
    file: &str,
    ty: &str,
    table: &str,
    data: &str,
) -> Result<(), String> {
    sql::agree_by(file, ty, data, |summary| {
        run(
            client,
            &export("postgres", file, ty, table, summary)?,
            summary,
        )
    })
}

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn the_fixture_with_every_construct_agrees_with_hql_run() {
    let server = pg::Server::start("sql-fixture");
    let mut client = server.client("postgres");
    for (ty, data) in [
        ("Reading", "tests/sql/fixture-readings.jsonl"),
        ("Order", "tests/sql/fixture.jsonl"),
        ("Shipment", "tests/sql/fixture-shipments.jsonl"),
        ("Person", "tests/sql/fixture-people.jsonl"),
        ("Pair", "tests/sql/fixture-pairs.jsonl"),
    ] {
        load_lines(&mut client, "lines", data);
        agree(&mut client, "tests/sql/fixture.hql", ty, "lines", data)
            .unwrap_or_else(|e| panic!("{ty} should compile and run: {e}"));
    }
    // Several unique keys that depend on one another in the data: the
    // query stops rather than give another answer than HQL.
    let data = "tests/sql/fixture-pairs-chained.jsonl";
    load_lines(&mut client, "lines", data);
    let err = agree(&mut client, "tests/sql/fixture.hql", "Pair", "lines", data).unwrap_err();
    assert!(
        err.contains("the unique keys of Pair depend on one another in this data"),
        "{err}"
    );
}

/// The summary row judges expectations as `hql run` does.
#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn expectations_in_the_summary_agree_with_hql_run() {
    let server = pg::Server::start("sql-expect");
    let mut client = server.client("postgres");
    let (file, data) = (
        "tests/sql/fixture-expect.hql",
        "tests/sql/fixture-expect.jsonl",
    );
    load_lines(&mut client, "batch", data);
    let sql = export("postgres", file, "Batch", "batch", true).unwrap();
    let summary = run(&mut client, &sql, true).unwrap();
    let said = by_hql(file, "Batch", data);
    assert_agree(
        "Batch",
        &[],
        &summary,
        &sql::Said {
            failures: vec![],
            warnings: vec![],
            ..said
        },
    );
}

#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn every_example_contract_agrees_or_says_what_does_not_compile() {
    let server = pg::Server::start("sql-examples");
    let mut client = server.client("postgres");
    sql::every_example_agrees(common::example_contracts(), |file, ty, data| {
        load_lines(&mut client, "lines", data);
        agree(&mut client, file, ty, "lines", data)
    });
}

/// The Parquet fixtures' orders (their JSON Lines twin) in typed tables:
/// a composite type for the items, a schema `main` as DuckDB has.
const ORDERS: &str = "CREATE TYPE item AS (sku text, qty bigint);
CREATE TABLE orders (order_id text, amount double precision, currency text, qty bigint,
    placed date, items item[], note text);
CREATE SCHEMA main;
CREATE VIEW main.orders AS SELECT * FROM public.orders;
CREATE TABLE orders_no_amount (order_id text, currency text, qty bigint, placed date,
    items item[], note text);
CREATE TABLE blobs (id bigint, blob bytea);
INSERT INTO blobs VALUES (1, convert_to('foobar', 'UTF8')), (2, NULL);";

/// Each row of the JSON Lines file `data` into `table`, its fields into
/// the columns of their names.
fn load_records(client: &mut postgres::Client, table: &str, data: &str) {
    let text = std::fs::read_to_string(root().join(data)).unwrap();
    let insert = format!("INSERT INTO {table} SELECT * FROM json_populate_record(NULL::{table}, CAST($1 AS text)::json)");
    for line in text.lines() {
        client.execute(&insert, &[&line]).unwrap();
    }
}

/// `--from-table` over typed columns, the columns read from the server's
/// catalog as `hql vet --engine postgres` reads them, each row checked in
/// place and held to `hql run` over the Parquet file the rows came from.
#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn typed_tables_agree_with_hql_run() {
    let server = pg::Server::start("sql-tables");
    let mut client = server.client("postgres");
    client.batch_execute(ORDERS).unwrap();
    load_records(&mut client, "orders", "tests/data/parquet/orders.jsonl");
    load_records(
        &mut client,
        "orders_no_amount",
        "tests/data/parquet/orders.jsonl",
    );
    let url = server.url("postgres");
    for (ty, table, data) in sql::TABLE_CASES {
        let columns = hql::formats::postgres::check::table_columns(&url, table)
            .unwrap_or_else(|e| panic!("{table}: {e}"));
        let columns: Vec<String> = (columns.iter())
            .map(|(name, ty)| format!("\"{name}\" {ty}"))
            .collect();
        let more = ["--columns", &columns.join(", ")];
        let query = |summary: bool| {
            let sql = sql::export_table("postgres", ty, table, &more, summary, None)
                .unwrap_or_else(|e| panic!("{ty} over {table}: {e}"));
            run(&mut server.client("postgres"), &sql, summary)
                .unwrap_or_else(|e| panic!("{ty} over {table}: {e}"))
        };
        assert_agree(
            &format!("{ty} over table {table}"),
            &query(false),
            &query(true),
            &by_hql("tests/sql/fixture-parquet.hql", ty, data),
        );
    }
}

/// A flat table `hql vet` reads from the server as it is: every scalar
/// type the PostgreSQL reader and the SQL export share.
const FLAT: &str = "CREATE TABLE flat (order_id varchar(12), amount double precision,
    currency text, qty integer, placed date, note text, tags text[], price numeric(9,2),
    ratio real, seen timestamptz, stamp timestamp(3), ok boolean, code uuid);";

/// The flat table's other columns, set after its rows are loaded.
const FLAT_MORE: &str =
    "UPDATE flat SET tags = ARRAY[currency, NULL], price = amount / 3, ratio = qty / 7.0,
    seen = TIMESTAMPTZ '2024-03-01 10:00:00.5+02' + qty * INTERVAL '1 hour',
    stamp = TIMESTAMP '2024-03-01 10:00:00.120' + qty * INTERVAL '1 minute',
    ok = qty % 2 = 0, code = '6f1c1f9e-2d8a-4b5e-9c3e-1a2b3c4d5e6f'
    WHERE qty <> 3;";

const FLAT_CONTRACT: &str = "type Flat : TypeContract = {
    order_id: String | Null
    amount: Float
    currency: \"EUR\" | \"USD\" | \"GBP\"
    qty: Int
    placed: Date
    tags?: List[String | Null]
    price?: Float
    ratio?: Float
    seen?: Timestamp
    stamp?: String
    ok?: Bool
    code?: String

    require positive: amount > 0
    require late: seen? ?? \"2024\" < \"2024-03-01T12\" or qty > 2
    require stamp? ?? \"\" != \"2024-03-01T10:04:00.12\"
    require ratio? ?? 0.0 < 0.8
    require len(code? ?? \"\") == 36 or qty == 3
    warn small: price? ?? 0.0 < 20.0
    unique order_id

    expect rows >= 60
    expect warn few_nulls: nulls(order_id) == 0
    expect max(price) < 1000.0
}
";

/// `hql vet --engine postgres` over a configured table prints what `hql
/// vet` prints, from the server; what it cannot check is said, naming
/// the server without its password.
#[test]
#[ignore = "needs PostgreSQL (initdb, pg_ctl); .ci/run runs it"]
fn vet_on_postgres_prints_what_vet_prints() {
    let server = pg::Server::start("sql-vet");
    let mut client = server.client("postgres");
    client.batch_execute(FLAT).unwrap();
    load_records(&mut client, "flat", "tests/data/parquet/orders.jsonl");
    client.batch_execute(FLAT_MORE).unwrap();
    let s = common::Scratch::new("sql-vet");
    s.write("flat.hql", FLAT_CONTRACT);
    let url = server.url("postgres");
    s.write(
        "hql.toml",
        format!(
            "[sources.flat]\npostgres = \"{url}\"\ntable = \"flat\"\n\n\
             [sources.gone]\npostgres = \"{url}\"\ntable = \"nowhere\"\n\n\
             [sources.asked]\npostgres = \"{url}\"\nquery = \"SELECT 1 AS a\"\n"
        ),
    );
    let vet = |engine: bool, id: &str| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hql"));
        cmd.args(["vet", "flat.hql", id])
            .current_dir(&s.path)
            .env("HQL_PROGRESS", "0");
        if engine {
            cmd.args(["--engine", "postgres"]);
        }
        let out = cmd.output().unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.status.code(),
        )
    };
    let (by_hql, by_server) = (vet(false, "flat"), vet(true, "flat"));
    // The report and the exit status; what a failed expectation measured,
    // `hql vet` says on standard error from its own count.
    assert_eq!((&by_server.0, by_server.2), (&by_hql.0, by_hql.2));
    assert_eq!(by_server.1, "");
    for expected in ["err: ", "Flat.positive", "Flat.few_nulls", "Flat.small"] {
        assert!(by_hql.0.contains(expected), "{expected}: {by_hql:?}");
    }
    let (out, err, status) = vet(true, "gone");
    assert_eq!((out.as_str(), status), ("", Some(1)), "{err}");
    assert!(
        err.contains(&format!(
            "cannot check source `gone` on postgresql://{}@127.0.0.1:{}/postgres: there is no table nowhere",
            pg::USER,
            server.port
        )),
        "{err}"
    );
    assert!(!err.contains(pg::PASSWORD), "{err}");
    let (_, err, status) = vet(true, "asked");
    assert_eq!(status, Some(1), "{err}");
    assert!(err.contains("source `asked` is a query"), "{err}");
}

/// What PostgreSQL cannot read or check is refused by name before any
/// query is written.
#[test]
fn postgres_refusals_are_named() {
    let refused = [
        (
            "tests/sql/fixture.hql",
            "Order",
            "x.jsonl",
            "--from does not compile to SQL: PostgreSQL reads tables",
        ),
        (
            "tests/sql/fixture-parquet.hql",
            "Order",
            "tests/data/parquet/orders.parquet",
            "--from does not compile to SQL: PostgreSQL reads tables",
        ),
    ];
    for (file, ty, data, message) in refused {
        let err = export("postgres", file, ty, data, false).unwrap_err();
        assert!(err.contains(message), "{ty} over {data}: {err}");
    }
    let dir = common::Scratch::new("sql-pg-refused");
    let file = dir.write(
        "t.hql",
        "type T : DataContract = {\n    a: String\n    require matches(a, r\"a(?i)b\")\n}\n",
    );
    let err = export("postgres", file.to_str().unwrap(), "T", "t", false).unwrap_err();
    assert!(
        err.contains("its regex sets flags (`i`) after its start"),
        "{err}"
    );
    let more = ["--columns", "order_id text, items bigint[][]"];
    let err = sql::export_table("postgres", "Loose", "t", &more, false, None).unwrap_err();
    assert!(err.contains("`items` is a list of lists"), "{err}");
    // The query makes its helpers first, in the session's temporary schema.
    let sql = export("postgres", "tests/sql/fixture.hql", "Order", "lines", false).unwrap();
    assert!(
        sql.starts_with("-- Helpers of this query")
            && sql.contains("CREATE OR REPLACE FUNCTION pg_temp.hql_json(t text)"),
        "{sql}"
    );
    assert!(sql.contains("FROM lines AS hql_input"), "{sql}");
}
