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

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A Python with the `duckdb` module, installed on first use.
fn duckdb_python() -> PathBuf {
    let venv = root().join("target/sql-venv");
    let python = venv.join("bin/python");
    let has = |p: &Path| {
        Command::new(p)
            .args(["-c", "import duckdb"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !has(&python) {
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .expect("python3 runs");
        assert!(made.success(), "python3 -m venv failed");
        let installed = Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "duckdb"])
            .status()
            .expect("pip runs");
        assert!(installed.success(), "pip install duckdb failed");
    }
    python
}

fn hql(args: &[&str], stdin: Option<&str>) -> (String, String, i32) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(args)
        .current_dir(root())
        .env("HQL_PROGRESS", "0")
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

/// What one side says: each failing line's failures, each warning by line,
/// and the report.
struct Said {
    failures: Vec<(u64, Json)>,
    warnings: Vec<(u64, String)>,
    report: Json,
}

/// What `hql run` says.
fn by_hql(file: &str, ty: &str, data: &str) -> Said {
    let run = |pipeline: &str| {
        let program = format!(
            "import \"{file}\"\nsource(file(\"{data}\"), Json) | validate({ty}) | {pipeline}\n"
        );
        let (out, err, status) = hql(&["run", "-", "--format", "json"], Some(&program));
        assert_eq!(status, 0, "{program}\n{err}");
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

/// What DuckDB says, running the exported query.
fn by_duckdb(
    python: &Path,
    file: &str,
    ty: &str,
    data: &str,
    summary: bool,
) -> Result<Vec<Json>, String> {
    let mut args = vec![
        "export",
        file,
        ty,
        "--format",
        "sql",
        "--dialect",
        "duckdb",
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
    let dir = std::env::temp_dir().join(format!("hql-sql-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let query = dir.join(format!("{ty}-{summary}.sql"));
    std::fs::write(&query, &sql).unwrap();
    let mut cmd = Command::new(python);
    cmd.arg(root().join("tests/sql/run_duckdb.py"))
        .arg(&query)
        .current_dir(root());
    if summary {
        cmd.arg("--summary");
    }
    let out = cmd.output().expect("python runs");
    assert!(
        out.status.success(),
        "{ty} over {data}: DuckDB failed:\n{}\n{sql}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect())
}

/// The two agree on every line and on the report.
fn agree(python: &Path, file: &str, ty: &str, data: &str) -> Result<(), String> {
    let rows = by_duckdb(python, file, ty, data, false)?;
    let Said {
        failures,
        warnings,
        report,
    } = by_hql(file, ty, data);
    let sql_failures: Vec<(u64, Json)> = rows
        .iter()
        .filter(|r| !r["failures"].as_array().unwrap().is_empty())
        .map(|r| (r["line"].as_u64().unwrap(), r["failures"].clone()))
        .collect();
    assert_eq!(sql_failures, failures, "{file} {ty} over {data}: failures");
    let sql_warnings: Vec<(u64, String)> = rows
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
    assert_eq!(sql_warnings, warnings, "{file} {ty} over {data}: warnings");
    let summary = by_duckdb(python, file, ty, data, true)?;
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
    assert_eq!(summary, vec![expected], "{file} {ty} over {data}: summary");
    Ok(())
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
fn every_example_contract_agrees_or_says_what_does_not_compile() {
    let python = duckdb_python();
    let (mut compiled, mut refused) = (0, 0);
    for (file, types, data) in common::example_contracts() {
        for ty in &types {
            for d in &data {
                match agree(&python, &file, ty, d) {
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
    // 24 compile today: fewer means a construct stopped compiling.
    assert!(
        compiled >= 24,
        "only {compiled} example pairs compiled ({refused} refused)"
    );
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
            "rule T.good does not compile to SQL: it reads a, whose type is not one scalar type",
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
        err.contains("no SQL dialect `oracle`; there are duckdb, spark and trino"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `hql vet --engine duckdb` prints what `hql vet` prints, from DuckDB.
#[test]
#[ignore = "installs DuckDB (pip); .ci/run runs it"]
fn vet_in_duckdb_prints_what_vet_prints() {
    let python = duckdb_python();
    for (ty, data) in [
        ("Order", "tests/sql/fixture.jsonl"),
        ("Shipment", "tests/sql/fixture-shipments.jsonl"),
    ] {
        let vet = |engine: bool| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_hql"));
            cmd.args(["vet", "tests/sql/fixture.hql", data, "--type", ty])
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
