//! What the SQL differential tests share (`tests/sql_duckdb.rs`,
//! `tests/sql_spark.rs`): the engines' Python, `hql` itself, what `hql run`
//! says about a file, the data the benchmark generators write, and the
//! comparison of an engine's rows with HQL's.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value as Json;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A Python in `target/sql-venv` with `module`, installed (pip, as
/// `package`) on first use.
pub fn python_with(module: &str, package: &str) -> PathBuf {
    // Tests run side by side: one at a time sets the environment up.
    static SETUP: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = SETUP
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let venv = root().join("target/sql-venv");
    let python = venv.join("bin/python");
    let has = |p: &Path| {
        Command::new(p)
            .args(["-c", &format!("import {module}")])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !has(&python) {
        if !venv.join("bin/pip").exists() {
            // Made anew when missing or left half made.
            let made = Command::new("python3")
                .args(["-m", "venv", "--clear"])
                .arg(&venv)
                .status()
                .expect("python3 runs");
            assert!(made.success(), "python3 -m venv failed");
        }
        let installed = Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", package])
            .status()
            .expect("pip runs");
        assert!(installed.success(), "pip install {package} failed");
    }
    python
}

pub fn hql(args: &[&str], stdin: Option<&str>) -> (String, String, i32) {
    hql_with(args, stdin, None)
}

/// `hql`, with `$HQL_PYTHON` set to `python` where given.
pub fn hql_with(
    args: &[&str],
    stdin: Option<&str>,
    python: Option<&Path>,
) -> (String, String, i32) {
    use std::io::Write;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hql"));
    if let Some(python) = python {
        cmd.env("HQL_PYTHON", python);
    }
    let mut child = cmd
        .args(args)
        .current_dir(root())
        .env("HQL_PROGRESS", "0")
        // What `age` measures to, in `hql run` and in the exported SQL.
        .env("HQL_NOW", "2026-12-05T00:00:00Z")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("hql runs");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        text(&out.stdout),
        text(&out.stderr),
        out.status.code().unwrap_or(-1),
    )
}

/// The query for `ty` of `file` over `data`, or why it does not compile.
pub fn export(
    dialect: &str,
    file: &str,
    ty: &str,
    data: &str,
    summary: bool,
) -> Result<String, String> {
    let mut args = vec![
        "export",
        file,
        ty,
        "--format",
        "sql",
        "--dialect",
        dialect,
        "--from",
        data,
    ];
    if summary {
        args.push("--summary");
    }
    let (sql, err, status) = hql(&args, None);
    if status != 0 {
        return Err(err);
    }
    Ok(sql)
}

/// The types of `tests/sql/fixture-parquet.hql` and the Parquet files
/// each is checked over in place (their typed columns, not JSON text).
pub const PARQUET_CASES: [(&str, &str); 5] = [
    ("Order", "tests/data/parquet/orders.parquet"),
    ("Loose", "tests/data/parquet/orders.parquet"),
    ("Order", "tests/data/parquet/orders-no-amount.parquet"),
    ("Everything", "tests/data/parquet/types.parquet"),
    ("Blob", "tests/data/parquet/binary.parquet"),
];

/// Tables made from Parquet fixtures (`CREATE TABLE … AS SELECT * FROM
/// read_parquet(…)`), for `--from-table`.
pub const PARQUET_TABLES: [(&str, &str); 3] = [
    ("orders", "tests/data/parquet/orders.parquet"),
    (
        "orders_no_amount",
        "tests/data/parquet/orders-no-amount.parquet",
    ),
    ("blobs", "tests/data/parquet/binary.parquet"),
];

/// A type, the table it is checked over, and the Parquet file `hql run`
/// reads the same rows from.
pub const TABLE_CASES: [(&str, &str, &str); 4] = [
    ("Order", "orders", "tests/data/parquet/orders.parquet"),
    ("Loose", "main.orders", "tests/data/parquet/orders.parquet"),
    (
        "Order",
        "orders_no_amount",
        "tests/data/parquet/orders-no-amount.parquet",
    ),
    ("Blob", "blobs", "tests/data/parquet/binary.parquet"),
];

/// The query for `ty` of `tests/sql/fixture-parquet.hql` over the typed
/// table `table`, its columns from `more` (`--columns …`, `--database …`):
/// its text, or `hql`'s error.
pub fn export_table(
    dialect: &str,
    ty: &str,
    table: &str,
    more: &[&str],
    summary: bool,
    python: Option<&Path>,
) -> Result<String, String> {
    let mut args = vec![
        "export",
        "tests/sql/fixture-parquet.hql",
        ty,
        "--format",
        "sql",
        "--dialect",
        dialect,
        "--from-table",
        table,
    ];
    args.extend(more);
    if summary {
        args.push("--summary");
    }
    let (sql, err, status) = hql_with(&args, None, python);
    match status {
        0 => Ok(sql),
        _ => Err(err),
    }
}

/// An engine's rows (`query(false)`) and summary row (`query(true)`) for
/// `ty` of `file` agree with what `hql run` says over `data`; why the
/// engine gave none, when it did not.
pub fn agree_by(
    file: &str,
    ty: &str,
    data: &str,
    mut query: impl FnMut(bool) -> Result<Vec<Json>, String>,
) -> Result<(), String> {
    let rows = query(false)?;
    let summary = query(true)?;
    assert_agree(
        &format!("{file} {ty} over {data}"),
        &rows,
        &summary,
        &by_hql(file, ty, data),
    );
    Ok(())
}

/// Every example contract over each of its data files: `agree` holds the
/// engine to `hql run`, or says why the contract does not compile. As many
/// as compile in DuckDB must: fewer means a construct stopped compiling.
/// (`examples`: `common::example_contracts()`).
pub fn every_example_agrees(
    examples: Vec<(String, Vec<String>, Vec<String>)>,
    mut agree: impl FnMut(&str, &str, &str) -> Result<(), String>,
) {
    let (mut compiled, mut refused) = (0, 0);
    for (file, types, data) in examples {
        for ty in &types {
            for d in &data {
                match agree(&file, ty, d) {
                    Ok(()) => compiled += 1,
                    Err(err) => {
                        assert!(
                            err.contains("does not compile to SQL:"),
                            "{file} {ty}: {err}"
                        );
                        refused += 1;
                    }
                }
            }
        }
    }
    eprintln!(
        "{compiled} example contracts compiled and agreed; {refused} said what does not compile"
    );
    assert!(
        compiled >= 30,
        "only {compiled} example pairs compiled ({refused} refused)"
    );
}

/// What one side says: each failing line's failures, each warning by line,
/// and the report.
pub struct Said {
    pub failures: Vec<(u64, Json)>,
    pub warnings: Vec<(u64, String)>,
    pub report: Json,
}

/// What `hql run` says.
pub fn by_hql(file: &str, ty: &str, data: &str) -> Said {
    let run = |pipeline: &str| {
        let format = if data.ends_with(".parquet") {
            "Parquet"
        } else {
            "Json"
        };
        let program = format!(
            "import \"{file}\"\nsource(file(\"{data}\"), {format}) | validate({ty}) | {pipeline}\n"
        );
        let (out, err, status) = hql(&["run", "-", "--format", "json"], Some(&program));
        // A failed expectation stops the run (exit 1) after the value.
        let expected = status == 1 && err.contains("hql::expectation");
        assert!(status == 0 || expected, "{program}\n{err}");
        out
    };
    let failures = run(
        "errs() | map(e => {line: e.origin.line, failures: e.failures | map(f => [f.rule, f.kind, f.path]) | collect()})",
    );
    let failures = failures
        .lines()
        .map(|l| {
            let v: Json = serde_json::from_str(l).unwrap();
            (v["line"].as_u64().unwrap(), v["failures"].clone())
        })
        .collect();
    let warnings = run("warnings() | map(w => {line: w.origin.line, rule: w.rule})");
    let warnings = warnings
        .lines()
        .map(|l| {
            let v: Json = serde_json::from_str(l).unwrap();
            (
                v["line"].as_u64().unwrap(),
                v["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let report: Json = serde_json::from_str(run("report()").trim()).unwrap();
    Said {
        failures,
        warnings,
        report,
    }
}

/// The engine's rows (`{line, failures, warnings}`) and summary row agree
/// with what HQL said.
pub fn assert_agree(what: &str, rows: &[Json], summary: &[Json], said: &Said) {
    let engine_failures: Vec<(u64, Json)> = rows
        .iter()
        .filter(|r| !r["failures"].as_array().unwrap().is_empty())
        .map(|r| (r["line"].as_u64().unwrap(), r["failures"].clone()))
        .collect();
    assert_eq!(engine_failures, said.failures, "{what}: failures");
    let engine_warnings: Vec<(u64, String)> = rows
        .iter()
        .flat_map(|r| {
            let line = r["line"].as_u64().unwrap();
            r["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |w| (line, w.as_str().unwrap().to_string()))
        })
        .collect();
    assert_eq!(engine_warnings, said.warnings, "{what}: warnings");
    let report = &said.report;
    let by_rule: Vec<Json> = report["by_rule"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| serde_json::json!([b["rule"], b["kind"], b["count"]]))
        .collect();
    let expected = serde_json::json!({
        "total": report["total"], "ok": report["ok"], "err": report["err"],
        "warned": report["warned"], "by_rule": by_rule,
    });
    assert_eq!(summary, [expected], "{what}: summary");
}

/// The benchmark generators' data, small, in `dir`: (contract file, type,
/// data file). Every defect kind each generator writes is in it.
pub fn bench_data(dir: &Path) -> Vec<(String, String, String)> {
    std::fs::create_dir_all(dir).unwrap();
    let orders = dir.join("orders.jsonl");
    let events = dir.join("events.jsonl");
    let python = python_with("json", "pip");
    for (script, args, out) in [
        ("bench/gen.py", vec!["--records", "3000"], &orders),
        (
            "bench/rich/gen.py",
            vec!["--count", "2000", "--quiet"],
            &events,
        ),
    ] {
        let status = Command::new(&python)
            .arg(root().join(script))
            .args(args)
            .arg("--out")
            .arg(out)
            .current_dir(root())
            .stdout(std::process::Stdio::null())
            .status()
            .expect("python runs");
        assert!(status.success(), "{script} failed");
    }
    let path = |p: &Path| p.to_string_lossy().into_owned();
    vec![
        (
            "bench/orders_contract.hql".into(),
            "Order".into(),
            path(&orders),
        ),
        ("bench/rich/event.hql".into(), "Event".into(), path(&events)),
    ]
}
