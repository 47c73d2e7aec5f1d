//! `hql export --format sql --dialect spark` held to `hql run`: Spark 4 in
//! local mode runs the generated queries over the same files `hql run`
//! reads — the fixtures with every construct, the examples' data (the
//! movies among them), and the benchmark generators' data with every defect
//! kind — and every line's failure identities and warnings, and the
//! summary, agree exactly. The Trino dialect, which no engine runs here,
//! is parsed by `sqlglot`.
//!
//! PySpark (pip, into `target/sql-venv`) needs a Java runtime; `.ci/run`
//! installs one where it is missing. These tests are ignored by a plain
//! `cargo test`; `.ci/run` runs them with `--include-ignored`. All queries
//! run in one Spark session, started once.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value as Json;

mod common;
mod sql;

use sql::{assert_agree, by_hql, export, root};

/// One type over one file, its two queries written, their answers to come.
struct Case {
    file: String,
    ty: String,
    data: String,
    rows: PathBuf,
    summary: PathBuf,
}

#[test]
#[ignore = "installs PySpark (pip) and needs Java; .ci/run runs it"]
fn spark_agrees_with_hql_run_on_every_file() {
    let python = sql::python_with("pyspark", "pyspark>=4,<5");
    let dir = std::env::temp_dir().join(format!("hql-spark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let absolute = |p: &str| root().join(p).to_string_lossy().into_owned();
    let mut pairs: Vec<(String, String, String)> = [
        ("Reading", "tests/sql/fixture-readings.jsonl"),
        ("Order", "tests/sql/fixture.jsonl"),
        ("Shipment", "tests/sql/fixture-shipments.jsonl"),
        ("Person", "tests/sql/fixture-people.jsonl"),
        ("Pair", "tests/sql/fixture-pairs.jsonl"),
    ]
    .iter()
    .map(|(ty, data)| {
        (
            "tests/sql/fixture.hql".to_string(),
            ty.to_string(),
            data.to_string(),
        )
    })
    .collect();
    // Expectations in the summary row, over every measure it compiles.
    pairs.push((
        "tests/sql/fixture-expect.hql".to_string(),
        "Batch".to_string(),
        "tests/sql/fixture-expect.jsonl".to_string(),
    ));
    // Parquet files, checked in place over their typed columns; Spark
    // reads no nanosecond timestamps, so `Everything` reads the file
    // without them.
    for (ty, data) in sql::PARQUET_CASES {
        let data = data.replace("types.parquet", "types-no-ns.parquet");
        pairs.push((
            "tests/sql/fixture-parquet.hql".to_string(),
            ty.to_string(),
            data,
        ));
    }
    for (file, types, data) in common::example_contracts() {
        for ty in &types {
            for d in &data {
                pairs.push((file.clone(), ty.clone(), d.clone()));
            }
        }
    }
    pairs.extend(sql::bench_data(&dir.join("bench")));
    let (mut cases, mut refused) = (Vec::new(), 0);
    let mut manifest = Vec::new();
    for (file, ty, data) in pairs {
        let n = cases.len();
        let write = |summary: bool| -> Result<PathBuf, String> {
            let from = if data.starts_with('/') {
                data.clone()
            } else {
                absolute(&data)
            };
            let sql = export("spark", &file, &ty, &from, summary)?;
            let path = dir.join(format!("q{n}-{summary}.sql"));
            std::fs::write(&path, sql).unwrap();
            Ok(path)
        };
        match (write(false), write(true)) {
            (Ok(rows_sql), Ok(summary_sql)) => {
                let case = Case {
                    rows: dir.join(format!("q{n}-rows.out")),
                    summary: dir.join(format!("q{n}-summary.out")),
                    file,
                    ty,
                    data,
                };
                manifest
                    .push(serde_json::json!({"sql": rows_sql, "summary": false, "out": case.rows}));
                manifest.push(
                    serde_json::json!({"sql": summary_sql, "summary": true, "out": case.summary}),
                );
                cases.push(case);
            }
            (Err(err), _) | (_, Err(err)) => {
                assert!(
                    err.contains("does not compile to SQL:"),
                    "{file} {ty}: {err}"
                );
                refused += 1;
            }
        }
    }
    // Tables with typed columns (`--from-table`, their columns given as
    // Spark's catalog names them), views over the Parquet files here.
    for (ty, table, data) in sql::TABLE_CASES {
        let table = table.trim_start_matches("main.");
        let n = cases.len();
        let write = |summary: bool| -> PathBuf {
            let columns = spark_columns(table);
            let more = ["--columns", columns.as_str()];
            let sql = sql::export_table("spark", ty, table, &more, summary, None)
                .unwrap_or_else(|e| panic!("{ty} over {table}: {e}"));
            let view = format!(
                "CREATE OR REPLACE TEMPORARY VIEW {table} USING parquet OPTIONS (path '{}');\n",
                absolute(data)
            );
            let path = dir.join(format!("q{n}-{summary}.sql"));
            std::fs::write(&path, view + &sql).unwrap();
            path
        };
        let case = Case {
            rows: dir.join(format!("q{n}-rows.out")),
            summary: dir.join(format!("q{n}-summary.out")),
            file: "tests/sql/fixture-parquet.hql".into(),
            ty: ty.into(),
            data: data.into(),
        };
        manifest.push(serde_json::json!({"sql": write(false), "summary": false, "out": case.rows}));
        manifest
            .push(serde_json::json!({"sql": write(true), "summary": true, "out": case.summary}));
        cases.push(case);
    }
    let manifest_path = dir.join("manifest.json");
    std::fs::write(&manifest_path, serde_json::to_string(&manifest).unwrap()).unwrap();
    let out = Command::new(&python)
        .arg(root().join("tests/sql/run_spark.py"))
        .arg(&manifest_path)
        .current_dir(root())
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "Spark failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |p: &PathBuf| -> Vec<Json> {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    for c in &cases {
        let what = format!("{} {} over {}", c.file, c.ty, c.data);
        let (rows, summary) = (read(&c.rows), read(&c.summary));
        if let Some(e) = rows.first().and_then(|r| r.get("error")) {
            panic!("{what}: Spark refused the query: {e}");
        }
        assert_agree(&what, &rows, &summary, &by_hql(&c.file, &c.ty, &c.data));
    }
    eprintln!(
        "{} cases agreed on Spark; {refused} said what does not compile",
        cases.len()
    );
    // The fixtures, 30 example pairs and both benchmarks compile.
    assert!(cases.len() >= 37, "only {} cases compiled", cases.len());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The columns of a table of `sql::PARQUET_TABLES` as Spark's catalog
/// names them.
fn spark_columns(table: &str) -> String {
    let order = |amount: &str| {
        format!(
            "order_id STRING, {amount}currency STRING, qty BIGINT, placed DATE, \
             items ARRAY<STRUCT<sku: STRING, qty: BIGINT>>, note STRING"
        )
    };
    match table {
        "orders" => order("amount DOUBLE, "),
        "orders_no_amount" => order(""),
        "blobs" => "id BIGINT, blob BINARY".into(),
        other => panic!("no columns for {other}"),
    }
}

/// Trino's queries parse (sqlglot, in Trino's dialect).
#[test]
#[ignore = "installs sqlglot (pip); .ci/run runs it"]
fn trino_queries_parse() {
    let python = sql::python_with("sqlglot", "sqlglot");
    for ty in ["Reading", "Order", "Shipment", "Person", "Pair"] {
        for summary in [false, true] {
            let sql = export("trino", "tests/sql/fixture.hql", ty, "raw_lines", summary)
                .unwrap_or_else(|e| panic!("{ty}: {e}"));
            trino_parses(&python, &sql, ty);
        }
    }
    // Typed tables too, their columns in Trino's words.
    let columns = "order_id VARCHAR, amount DOUBLE, currency VARCHAR, qty BIGINT, placed DATE, \
                   items ARRAY(ROW(sku VARCHAR, qty BIGINT)), note VARCHAR";
    for (ty, columns) in [
        ("Order", columns),
        ("Loose", columns),
        ("Blob", "id BIGINT, blob VARBINARY"),
        (
            "Everything",
            "i8 TINYINT, i16 SMALLINT, i32 INTEGER, i64 BIGINT, u32 BIGINT, f32 REAL, f64 DOUBLE, \
             price DECIMAL(9,2), name VARCHAR, flag BOOLEAN, day DATE, \
             at_ms TIMESTAMP(3) WITH TIME ZONE, at_us TIMESTAMP(6), at_s TIMESTAMP(0) WITH TIME ZONE, \
             tags ARRAY(VARCHAR), point ROW(x BIGINT, label VARCHAR), \
             items ARRAY(ROW(sku VARCHAR, qty INTEGER)), matrix ARRAY(ARRAY(BIGINT))",
        ),
    ] {
        for summary in [false, true] {
            let more = ["--columns", columns];
            let sql = sql::export_table("trino", ty, "shop.orders", &more, summary, None)
                .unwrap_or_else(|e| panic!("{ty}: {e}"));
            trino_parses(&python, &sql, ty);
        }
    }
    let err = export(
        "trino",
        "tests/sql/fixture.hql",
        "Order",
        "orders.jsonl",
        false,
    )
    .unwrap_err();
    assert!(err.contains("Trino reads tables"), "{err}");
}

/// `sql` parses as Trino's.
fn trino_parses(python: &std::path::Path, sql: &str, ty: &str) {
    let out = Command::new(python)
        .args([
            "-c",
            "import sys, sqlglot; sys.setrecursionlimit(50000); sqlglot.parse_one(sys.stdin.read(), read='trino', error_level='raise')",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(sql.as_bytes())?;
            child.wait_with_output()
        })
        .expect("python runs");
    assert!(
        out.status.success(),
        "{ty}: {}\n{sql}",
        String::from_utf8_lossy(&out.stderr)
    );
}
