//! `hql export --format sql --dialect duckdb` held to `hql run`: over the
//! examples' contracts and data and a fixture with every construct the
//! compiler knows, DuckDB running the generated query gives every line the
//! same failure identities (rule, kind, path, in order) and warnings as
//! `validate`, and `--summary` gives `report()`'s row.
//!
//! DuckDB is installed on first use (pip, into `target/sql-venv`), so these
//! tests are ignored by a plain `cargo test`; `.ci/run` runs them with
//! `--include-ignored`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value as Json;

mod common;
mod sql;

use sql::{assert_agree, by_hql, export, hql, root};

/// A Python with the `duckdb` module, installed on first use.
fn duckdb_python() -> PathBuf {
    sql::python_with("duckdb", "duckdb")
}

/// What DuckDB says, running the exported query.
fn by_duckdb(
    python: &Path,
    file: &str,
    ty: &str,
    data: &str,
    summary: bool,
) -> Result<Vec<Json>, String> {
    let sql = export("duckdb", file, ty, data, summary)?;
    run_duckdb(python, &sql, ty, summary, None)
}

/// What DuckDB says, running `sql` (in `database`, where given).
fn run_duckdb(
    python: &Path,
    sql: &str,
    ty: &str,
    summary: bool,
    database: Option<&Path>,
) -> Result<Vec<Json>, String> {
    let dir = std::env::temp_dir().join(format!("hql-sql-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Tests run at once in one process: each query its own file.
    static QUERIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = QUERIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let query = dir.join(format!("{ty}-{summary}-{n}.sql"));
    std::fs::write(&query, sql).unwrap();
    let mut cmd = Command::new(python);
    cmd.arg(root().join("tests/sql/run_duckdb.py"))
        .arg(&query)
        .current_dir(root());
    if summary {
        cmd.arg("--summary");
    }
    if let Some(database) = database {
        cmd.arg("--database").arg(database);
    }
    let out = cmd.output().expect("python runs");
    if !out.status.success() {
        return Err(format!(
            "{ty}: DuckDB failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect())
}

/// The two agree on every line and on the report.
fn agree(python: &Path, file: &str, ty: &str, data: &str) -> Result<(), String> {
    sql::agree_by(file, ty, data, |summary| {
        by_duckdb(python, file, ty, data, summary)
    })
}

#[test]
#[ignore = "installs DuckDB (pip); .ci/run runs it"]
fn the_fixture_with_every_construct_agrees_with_hql_run() {
    let python = duckdb_python();
    for (ty, data) in [
        ("Reading", "tests/sql/fixture-readings.jsonl"),
        ("Order", "tests/sql/fixture.jsonl"),
        ("Shipment", "tests/sql/fixture-shipments.jsonl"),
        ("Person", "tests/sql/fixture-people.jsonl"),
    ] {
        agree(&python, "tests/sql/fixture.hql", ty, data)
            .unwrap_or_else(|e| panic!("{ty} should compile: {e}"));
    }
}

#[test]
#[ignore = "installs DuckDB (pip); .ci/run runs it"]
fn typed_parquet_columns_agree_with_hql_run() {
    let python = duckdb_python();
    for (ty, data) in sql::PARQUET_CASES {
        agree(&python, "tests/sql/fixture-parquet.hql", ty, data)
            .unwrap_or_else(|e| panic!("{ty} over {data} should compile: {e}"));
    }
}

#[test]
#[ignore = "installs DuckDB (pip); .ci/run runs it"]
fn every_example_contract_agrees_or_says_what_does_not_compile() {
    let python = duckdb_python();
    sql::every_example_agrees(common::example_contracts(), |file, ty, data| {
        agree(&python, file, ty, data)
    });
}

#[test]
#[ignore = "installs DuckDB (pip); .ci/run runs it"]
fn the_benchmark_generators_data_agrees_or_says_what_does_not_compile() {
    let python = duckdb_python();
    let dir = std::env::temp_dir().join(format!("hql-sql-bench-{}", std::process::id()));
    let mut compiled = 0;
    for (file, ty, data) in sql::bench_data(&dir) {
        match agree(&python, &file, &ty, &data) {
            Ok(()) => compiled += 1,
            Err(err) => assert!(
                err.contains("does not compile to SQL:"),
                "{file} {ty}: {err}"
            ),
        }
    }
    assert_eq!(compiled, 2, "both benchmarks compile");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Several unique keys: where they depend on one another in the data, the
/// query stops with an error instead of giving another answer than HQL.
#[test]
#[ignore = "installs DuckDB (pip); .ci/run runs it"]
fn several_unique_keys_agree_or_stop_the_query() {
    let python = duckdb_python();
    agree(
        &python,
        "tests/sql/fixture.hql",
        "Pair",
        "tests/sql/fixture-pairs.jsonl",
    )
    .unwrap();
    let err = agree(
        &python,
        "tests/sql/fixture.hql",
        "Pair",
        "tests/sql/fixture-pairs-chained.jsonl",
    )
    .unwrap_err();
    assert!(
        err.contains("the unique keys of Pair depend on one another in this data"),
        "{err}"
    );
}

/// `report()` of `ty` over `data` by `hql run`, which exits 1 when an
/// error expectation fails and still prints the report.
fn report_by_hql(file: &str, ty: &str, data: &str) -> Json {
    let program =
        format!("import \"{file}\"\nsource(file(\"{data}\"), Json) | validate({ty}) | report()\n");
    let (out, err, status) = hql(&["run", "-", "--format", "json"], Some(&program));
    assert!(status == 0 || status == 1, "{program}\n{err}");
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{out}: {e}\n{err}"))
}

/// The summary row judges expectations as `hql run` does: each failed one
/// is in `by_rule` once, in `report()`'s order.
#[test]
#[ignore = "installs DuckDB (pip); .ci/run runs it"]
fn expectations_in_the_summary_agree_with_hql_run() {
    let python = duckdb_python();
    let (file, data) = (
        "tests/sql/fixture-expect.hql",
        "tests/sql/fixture-expect.jsonl",
    );
    let summary = by_duckdb(&python, file, "Batch", data, true).unwrap();
    let report = report_by_hql(file, "Batch", data);
    let by_rule: Vec<Json> = (report["by_rule"].as_array().unwrap().iter())
        .map(|b| serde_json::json!([b["rule"], b["kind"], b["count"]]))
        .collect();
    let expected = serde_json::json!({
        "total": report["total"], "ok": report["ok"], "err": report["err"],
        "warned": report["warned"], "by_rule": by_rule,
    });
    assert_eq!(summary, [expected]);
    // The fixture holds failed and held expectations of both kinds.
    let kinds: Vec<&Json> = by_rule.iter().map(|b| &b[1]).collect();
    assert!(kinds.contains(&&Json::from("expect")), "{by_rule:?}");
    assert!(kinds.contains(&&Json::from("expect_warn")), "{by_rule:?}");
    let held = [
        "Batch.rows >= 3",
        "Batch.held_counts",
        "Batch.held_values",
        "Batch.held_age",
        "Batch.held_day",
        "Batch.held_keys",
    ];
    for held in held {
        assert!(!by_rule.iter().any(|b| b[0] == held), "{held}: {by_rule:?}");
    }
    let failed = [
        "Batch.qty_range",
        "Batch.no_bad_qty",
        "Batch.fresh_day",
        "Batch.day_strict",
        "Batch.unique_ids",
    ];
    for failed in failed {
        assert!(
            by_rule.iter().any(|b| b[0] == failed),
            "{failed}: {by_rule:?}"
        );
    }
}

/// `hql vet --engine duckdb` exits 1 when an error expectation fails, even
/// with every record valid, and its report lists it; a failed `expect
/// warn` alone exits 0.
#[test]
#[ignore = "installs DuckDB (pip); .ci/run runs it"]
fn vet_in_duckdb_fails_on_a_failed_expectation() {
    let python = duckdb_python();
    let dir = std::env::temp_dir().join(format!("hql-sql-vet-expect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("t.jsonl");
    std::fs::write(&data, "{\"a\": 1}\n{\"a\": 2}\n").unwrap();
    for (expect, status) in [("expect", 1), ("expect warn", 0)] {
        let contract = dir.join("t.hql");
        let program =
            format!("type T : DataContract = {{\n    a: Int\n    {expect} many: rows >= 100\n}}\n");
        std::fs::write(&contract, &program).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_hql"))
            .arg("vet")
            .args([&contract, &data])
            .args(["--engine", "duckdb"])
            .current_dir(root())
            .env("HQL_PROGRESS", "0")
            .env("HQL_PYTHON", &python)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(status), "{program}: {stdout}");
        let kind = expect.replace(' ', "_");
        assert!(
            stdout.contains(&format!(
                "err: 0, warned: 0, by_rule: [{{rule: \"T.many\", kind: \"{kind}\", count: 1}}]"
            )),
            "{program}: {stdout}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Expectations compile into the summary row only: each as a row of the
/// failed ones, the measures counted over the whole result; what does not
/// compile yet is named, `orphans` with what it would need.
#[test]
fn expectations_compile_into_the_summary_or_are_named() {
    let sql = |summary: bool| {
        export(
            "duckdb",
            "tests/sql/fixture-expect.hql",
            "Batch",
            "x.jsonl",
            summary,
        )
        .unwrap()
    };
    let summary = sql(true);
    assert!(
        summary.contains(
            "UNION ALL SELECT 'Batch.budget' AS rule, 'expect' AS kind, CAST(1 AS BIGINT) AS n"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("WHERE NOT coalesce((hql_n_failures * 4 <= 1 * hql_n_rows), TRUE)"),
        "{summary}"
    );
    assert!(
        summary.contains("'Batch.few_failures' AS rule, 'expect_warn' AS kind"),
        "{summary}"
    );
    for dialect in ["spark", "trino"] {
        let text = export(dialect, "tests/sql/fixture-expect.hql", "Batch", "t", true).unwrap();
        assert!(
            text.contains("'Batch.mostly_good' AS rule"),
            "{dialect}: {text}"
        );
    }
    // One row a line judges no stream.
    assert!(!sql(false).contains("Batch.budget"));
    let dir = std::env::temp_dir().join(format!("hql-sql-expect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "expect known: orphans(e, [\"a\"]) == 0",
            "expectation T.known does not compile to SQL: it measures `orphans(e, [\"a\"])`: `orphans` compiles to SQL only as an anti-join over a configured table",
        ),
        (
            "expect half: rows / 2 >= failures",
            "expectation T.half does not compile to SQL: it uses `/` (HQL's and SQL's differ)",
        ),
    ];
    for (i, (expect, message)) in cases.iter().enumerate() {
        let file = dir.join(format!("t{i}.hql"));
        let program = format!("type T : DataContract = {{\n    e?: String\n    {expect}\n}}\n");
        std::fs::write(&file, &program).unwrap();
        let file = file.to_str().unwrap();
        let err = export("duckdb", file, "T", "x.jsonl", true).unwrap_err();
        assert!(err.contains(message), "{program}: {err}");
        // Without --summary the per-line query is made, expectations aside.
        assert!(export("duckdb", file, "T", "x.jsonl", false).is_ok());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// What does not compile is named, with the reason, and nothing is printed.
#[test]
fn what_does_not_compile_is_named_with_the_reason() {
    let cases = [
        (
            "fn f(n: Int) -> Bool = if n <= 0 then true else f(n - 1)\ntype T : DataContract = {\n    a: Int\n    require deep: f(a)\n}\n",
            "rule T.deep does not compile to SQL: it calls `f`, which calls itself (recursion does not compile to SQL)",
        ),
        (
            "type T : DataContract = {\n    a: List[Int]\n    require good: len(a) > 0 and all(a, x => x > 0)\n}\n",
            "rule T.good does not compile to SQL: it calls `all` (not compiled to SQL)",
        ),
        (
            "type T : DataContract = {\n    a: Map[Int]\n}\n",
            "field T.a does not compile to SQL: its type is a Map",
        ),
        (
            "type T : DataContract = {\n    a: String\n    require matches(a, r\"\\w+\")\n}\n",
            "does not compile to SQL: its regex uses `\\w`",
        ),
        (
            "type T : DataContract = {\n    a: String\n    require matches(a, r\"[^\\S]\")\n}\n",
            "does not compile to SQL: its regex has `\\S` inside a class",
        ),
        (
            "type T : DataContract = {\n    a: String\n    require string(a) != \"\"\n}\n",
            "does not compile to SQL: it calls `string`",
        ),
    ];
    let dir = std::env::temp_dir().join(format!("hql-sql-refused-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, (program, message)) in cases.iter().enumerate() {
        let file = dir.join(format!("t{i}.hql"));
        std::fs::write(&file, program).unwrap();
        let (out, err, status) = hql(
            &[
                "export",
                file.to_str().unwrap(),
                "T",
                "--format",
                "sql",
                "--dialect",
                "duckdb",
                "--from",
                "x.jsonl",
            ],
            None,
        );
        assert_eq!((out.as_str(), status), ("", 2), "{program}: {err}");
        assert!(err.contains(message), "{program}: {err}");
    }
    let (_, err, status) = hql(
        &[
            "export",
            "tests/sql/fixture.hql",
            "Order",
            "--format",
            "sql",
            "--dialect",
            "oracle",
            "--from",
            "t",
        ],
        None,
    );
    assert_eq!(status, 2);
    assert!(
        err.contains(
            "invalid value 'oracle' for '--dialect <D>'\n  [possible values: duckdb, spark, trino, postgres]"
        ),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Parquet files named by a glob are checked in one query: each row keeps
/// its file and its position there, and the summary counts them all.
#[test]
#[ignore = "installs DuckDB (pip); .ci/run runs it"]
fn a_glob_of_parquet_files_agrees_with_hql_run_file_by_file() {
    let python = duckdb_python();
    let dir = std::env::temp_dir().join(format!("hql-sql-glob-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for part in ["part-0.parquet", "part-1.parquet"] {
        std::fs::copy(
            root().join("tests/data/parquet/orders.parquet"),
            dir.join(part),
        )
        .unwrap();
    }
    let glob = dir.join("part-*.parquet").display().to_string();
    let file = "tests/sql/fixture-parquet.hql";
    // `Loose` has no unique key: the two files' rows are judged alike (a
    // key would be claimed across the files, as over one stream).
    let rows = by_duckdb(&python, file, "Loose", &glob, false).unwrap();
    let summary = by_duckdb(&python, file, "Loose", &glob, true).unwrap();
    let said = by_hql(file, "Loose", "tests/data/parquet/orders.parquet");
    // Ordered by file, then line: each half is one file's.
    assert_eq!(rows.len(), 120);
    let total = said.report["total"].as_u64().unwrap();
    assert_eq!(total, 60);
    for half in rows.chunks(60) {
        let failing: Vec<(u64, Json)> = half
            .iter()
            .filter(|r| !r["failures"].as_array().unwrap().is_empty())
            .map(|r| (r["line"].as_u64().unwrap(), r["failures"].clone()))
            .collect();
        assert_eq!(failing, said.failures);
    }
    let doubled: Vec<Json> = said.report["by_rule"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            // An expectation is judged once over all the files.
            let once = b["kind"].as_str().unwrap().starts_with("expect");
            let n = b["count"].as_u64().unwrap() * if once { 1 } else { 2 };
            serde_json::json!([b["rule"], b["kind"], n])
        })
        .collect();
    assert_eq!(summary[0]["total"], 120);
    assert_eq!(summary[0]["err"], said.report["err"].as_u64().unwrap() * 2);
    assert_eq!(summary[0]["by_rule"], Json::Array(doubled));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--from-table` over a DuckDB database: the table's columns read from
/// its catalog (`--database`), each row checked in place and held to `hql
/// run` over the Parquet file the table was made from.
#[test]
#[ignore = "installs DuckDB (pip); .ci/run runs it"]
fn typed_tables_agree_with_hql_run() {
    let python = duckdb_python();
    let dir = std::env::temp_dir().join(format!("hql-sql-tables-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let database = dir.join("shop.duckdb");
    let _ = std::fs::remove_file(&database);
    let mut script = format!("import duckdb\ncon = duckdb.connect({:?})\n", database);
    for (table, file) in sql::PARQUET_TABLES {
        script.push_str(&format!(
            "con.execute(\"CREATE TABLE {table} AS SELECT * FROM read_parquet('{file}')\")\n"
        ));
    }
    let made = Command::new(&python)
        .args(["-c", &script])
        .current_dir(root())
        .status()
        .unwrap();
    assert!(made.success());
    for (ty, table, data) in sql::TABLE_CASES {
        let query = |summary: bool| {
            let more = ["--database", database.to_str().unwrap()];
            let sql = sql::export_table("duckdb", ty, table, &more, summary, Some(&python))
                .unwrap_or_else(|e| panic!("{ty} over {table}: {e}"));
            run_duckdb(&python, &sql, ty, summary, Some(&database))
                .unwrap_or_else(|e| panic!("{ty} over {table}: {e}"))
        };
        assert_agree(
            &format!("{ty} over table {table}"),
            &query(false),
            &query(true),
            &by_hql("tests/sql/fixture-parquet.hql", ty, data),
        );
    }
    let more = ["--database", database.to_str().unwrap()];
    let err = sql::export_table(
        "duckdb",
        "Order",
        "main.nowhere",
        &more,
        false,
        Some(&python),
    )
    .unwrap_err();
    assert!(err.contains("has no table main.nowhere"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A typed input is read where it lies: the query reads the Parquet
/// files with their row numbers, and what cannot be checked there is
/// refused by name before any query is written.
#[test]
fn typed_inputs_are_read_in_place_or_refused_by_name() {
    let parquet = "tests/data/parquet/orders.parquet";
    let sql = export(
        "duckdb",
        "tests/sql/fixture-parquet.hql",
        "Order",
        parquet,
        false,
    )
    .unwrap();
    assert!(
        sql.contains("read_parquet('tests/data/parquet/orders.parquet', filename = true, file_row_number = true)"),
        "{sql}"
    );
    assert!(
        !sql.contains("json"),
        "typed columns are not read as JSON:\n{sql}"
    );
    let sql = export(
        "spark",
        "tests/sql/fixture-parquet.hql",
        "Order",
        parquet,
        false,
    )
    .unwrap();
    assert!(sql.contains("_metadata.row_index + 1 AS hql_line"), "{sql}");
    let refused = [
        (
            "spark",
            "Everything",
            "tests/data/parquet/types.parquet",
            "column `at_ns` does not compile to SQL: `at_ns` holds nanosecond timestamps, which Spark does not read",
        ),
        (
            "trino",
            "Order",
            parquet,
            "--from does not compile to SQL: Trino reads tables",
        ),
        (
            "duckdb",
            "Order",
            "tests/data/parquet/binary.parquet",
            "column `blob` does not compile to SQL: `blob` holds binary data",
        ),
        (
            "duckdb",
            "Order",
            "tests/data/parquet/no-such.parquet",
            "--from tests/data/parquet/no-such.parquet: cannot open",
        ),
        (
            "duckdb",
            "Order",
            "tests/data/parquet/truncated.parquet",
            "--from tests/data/parquet/truncated.parquet: tests/data/parquet/truncated.parquet is not a Parquet file that can be read",
        ),
    ];
    for (dialect, ty, data, message) in refused {
        let err = export(dialect, "tests/sql/fixture-parquet.hql", ty, data, false).unwrap_err();
        assert!(err.contains(message), "{dialect} {ty} over {data}: {err}");
    }
    // A glob's files must share one schema, and match at least one file.
    let dir = std::env::temp_dir().join(format!("hql-sql-glob-refused-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (from, to) in [
        ("orders.parquet", "a-1.parquet"),
        ("orders-no-amount.parquet", "a-2.parquet"),
    ] {
        std::fs::copy(root().join("tests/data/parquet").join(from), dir.join(to)).unwrap();
    }
    let glob = dir.join("a-*.parquet").display().to_string();
    let err = export(
        "duckdb",
        "tests/sql/fixture-parquet.hql",
        "Order",
        &glob,
        false,
    )
    .unwrap_err();
    assert!(err.contains("a-2.parquet has other columns than"), "{err}");
    let none = dir.join("b-*.parquet").display().to_string();
    let err = export(
        "duckdb",
        "tests/sql/fixture-parquet.hql",
        "Order",
        &none,
        false,
    )
    .unwrap_err();
    assert!(err.contains("no file matches it"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
    // A table's columns come from --columns (or DuckDB's catalog).
    let columns = ["--columns", "order_id STRING, amount DOUBLE"];
    let sql = sql::export_table("spark", "Order", "shop.orders", &columns, false, None).unwrap();
    assert!(sql.contains("FROM shop.orders"), "{sql}");
    // A column the table lacks is absent on every row, as in `hql run`.
    assert!(sql.contains("Order.qty.missing"), "{sql}");
    for (dialect, more, message) in [
        (
            "spark",
            vec![],
            "--from-table needs the table's columns: --columns 'name TYPE, …' as the catalog names them\n",
        ),
        (
            "duckdb",
            vec![],
            "(or --database FILE, whose catalog has them)",
        ),
        (
            "duckdb",
            vec!["--columns", "a INT, x INTERVAL"],
            "--columns: column `x`: INTERVAL has no HQL value",
        ),
        (
            "duckdb",
            vec!["--columns", "a STRUCT(b INT"],
            "--columns: column `a`: expected `)` at the end",
        ),
        (
            "duckdb",
            vec!["--from", "x.jsonl"],
            "cannot be used with",
        ),
    ] {
        let err = sql::export_table(dialect, "Order", "orders", &more, false, None).unwrap_err();
        assert!(err.contains(message), "{more:?}: {err}");
    }
    // --columns belongs to --from-table.
    let (out, err, status) = hql(
        &[
            "export",
            "tests/sql/fixture-parquet.hql",
            "Order",
            "--format",
            "sql",
            "--dialect",
            "duckdb",
            "--columns",
            "a INT",
        ],
        None,
    );
    assert_eq!((out.as_str(), status), ("", 2), "{err}");
    assert!(err.contains("--from-table <TABLE>"), "{err}");
}

/// `hql vet --engine duckdb` prints what `hql vet` prints, from DuckDB.
#[test]
#[ignore = "installs DuckDB (pip); .ci/run runs it"]
fn vet_in_duckdb_prints_what_vet_prints() {
    let python = duckdb_python();
    for (file, ty, data) in [
        ("tests/sql/fixture.hql", "Order", "tests/sql/fixture.jsonl"),
        (
            "tests/sql/fixture.hql",
            "Shipment",
            "tests/sql/fixture-shipments.jsonl",
        ),
        // A Parquet file's typed columns, checked where they lie.
        (
            "tests/sql/fixture-parquet.hql",
            "Order",
            "tests/data/parquet/orders.parquet",
        ),
    ] {
        let vet = |engine: bool| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_hql"));
            cmd.args(["vet", file, data, "--type", ty])
                .current_dir(root())
                .env("HQL_PROGRESS", "0")
                .env("HQL_PYTHON", &python);
            if engine {
                cmd.args(["--engine", "duckdb"]);
            }
            let out = cmd.output().unwrap();
            (
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
                out.status.code(),
            )
        };
        let (by_hql, by_duckdb) = (vet(false), vet(true));
        assert_eq!(by_duckdb, by_hql, "{ty}");
        assert!(by_hql.0.contains("err: "), "{by_hql:?}");
    }
}

/// DuckDB's answer is read from a file of its own: whatever the engine
/// prints on its standard output (a progress bar, say) cannot mix with it.
/// A stand-in for Python's `duckdb` prints a progress bar and writes its
/// row where it is told to.
#[test]
fn vet_in_duckdb_reads_the_answer_apart_from_what_the_engine_prints() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("hql-fake-duckdb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let python = dir.join("python");
    std::fs::write(
        &python,
        "#!/bin/sh\n\
         if [ \"$2\" = \"import duckdb\" ]; then exit 0; fi\n\
         case \"$2\" in *enable_progress_bar*) ;; *) echo 'progress bar left on' >&2; exit 3;; esac\n\
         cat > /dev/null\n\
         printf '\\r[=====>      ] 50%%\\r[============] 100%%\\n'\n\
         printf '{\"total\": 3, \"ok\": 2, \"err\": 1, \"warned\": 0, \"by_rule\": [{\"rule\": \"Order.positive\", \"kind\": \"require\", \"count\": 1}]}' > \"$3\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args([
            "vet",
            "tests/sql/fixture.hql",
            "tests/sql/fixture.jsonl",
            "--type",
            "Order",
            "--engine",
            "duckdb",
        ])
        .current_dir(root())
        .env("HQL_PYTHON", &python)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "tests/sql/fixture.jsonl: {total: 3, ok: 2, err: 1, warned: 0, by_rule: [{rule: \"Order.positive\", kind: \"require\", count: 1}]}\n",
        "{err}"
    );
    assert_eq!(out.status.code(), Some(1), "{err}");
}

/// Without DuckDB, `--engine duckdb` says how to get it.
#[test]
fn vet_in_duckdb_without_duckdb_says_how_to_install_it() {
    let empty = std::env::temp_dir().join(format!("hql-no-duckdb-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args([
            "vet",
            "tests/sql/fixture.hql",
            "tests/sql/fixture.jsonl",
            "--type",
            "Order",
            "--engine",
            "duckdb",
        ])
        .current_dir(root())
        .env("PATH", &empty)
        .env("HQL_PYTHON", empty.join("no-python"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("DuckDB is not installed: `pip install duckdb`"),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args([
            "vet",
            "tests/sql/fixture.hql",
            "x.csv",
            "--type",
            "Order",
            "--engine",
            "duckdb",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("reads JSON Lines files"));
    let _ = std::fs::remove_dir_all(&empty);
}

/// A key that is a list or record would be told apart otherwise than
/// `hql run` tells it: the summary query stops, naming the field, rather
/// than count it.
#[test]
#[ignore = "installs DuckDB (pip); .ci/run runs it"]
fn a_list_among_keys_stops_the_summary() {
    let python = duckdb_python();
    let dir = std::env::temp_dir().join(format!("hql-sql-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (contract, data) = (dir.join("k.hql"), dir.join("k.jsonl"));
    let program =
        "type K : DataContract = {\n    id: String\n    expect warn distinct(id) >= 1\n}\n";
    std::fs::write(&contract, program).unwrap();
    let (contract, data_path) = (contract.to_str().unwrap(), data.to_str().unwrap());
    std::fs::write(&data, "{\"id\": \"a\"}\n{\"id\": \"a\"}\n").unwrap();
    let held = by_duckdb(&python, contract, "K", data_path, true).unwrap();
    assert!(!held[0].to_string().contains("distinct(id)"), "{held:?}");
    std::fs::write(&data, "{\"id\": \"a\"}\n{\"id\": [1]}\n").unwrap();
    let stopped = by_duckdb(&python, contract, "K", data_path, true).unwrap_err();
    assert!(
        stopped.contains("keys only scalars, and `id` holds a list or record here"),
        "{stopped}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
