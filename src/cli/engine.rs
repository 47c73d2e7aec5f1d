//! Running a contract compiled to SQL in an engine installed beside `hql`
//! (`hql vet --engine duckdb`): Python's `duckdb` module (`$HQL_PYTHON`,
//! else `python3`) or the `duckdb` command. No engine is built into `hql`;
//! the exported query (`hql export --format sql`) stays the interface.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::runtime::contract::Contract;
use crate::runtime::eval::Interp;
use crate::runtime::value::{Record, Value};
use crate::tooling::sql::{compile, Dialect, Options};

/// Does the engine path read `data` (a JSON Lines file)?
pub fn reads(data: &str) -> bool {
    let lower = data.to_ascii_lowercase();
    lower.ends_with(".jsonl") || lower.ends_with(".ndjson")
}

/// `report()` of `contract` over `data`, computed by DuckDB.
pub fn duckdb_report(contract: &Contract, data: &str, globals: &Interp) -> Result<Value, String> {
    let sql = compile(
        contract,
        &Options {
            dialect: Dialect::DuckDb,
            from: data,
            summary: true,
            globals: Some(globals),
        },
    )
    .map_err(|e| e.to_string())?;
    let row = run(&sql)?;
    let row: serde_json::Value = serde_json::from_str(row.trim())
        .map_err(|e| format!("DuckDB's answer is not JSON: {e}"))?;
    report(&row).ok_or_else(|| format!("DuckDB's answer is not a report: {row}"))
}

/// Prints the query's one row as JSON.
const PYTHON: &str = "import duckdb, json, sys\n\
rel = duckdb.sql(sys.stdin.read())\n\
print(json.dumps(dict(zip(rel.columns, rel.fetchall()[0]))))\n";

/// The query's one row as JSON text, from whichever DuckDB is there.
fn run(sql: &str) -> Result<String, String> {
    let python = std::env::var("HQL_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_module = Command::new(&python)
        .args(["-c", "import duckdb"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let mut cmd = if has_module {
        let mut cmd = Command::new(&python);
        cmd.args(["-c", PYTHON]);
        cmd
    } else {
        let mut cmd = Command::new("duckdb");
        cmd.arg("-json");
        cmd
    };
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|_| {
            "DuckDB is not installed: `pip install duckdb` (for $HQL_PYTHON or python3) or put the `duckdb` command on PATH".to_string()
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(sql.as_bytes());
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "DuckDB failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // The `duckdb` command's `-json` prints an array of rows.
    Ok(
        match serde_json::from_str::<serde_json::Value>(text.trim()) {
            Ok(serde_json::Value::Array(rows)) if rows.len() == 1 => rows[0].to_string(),
            _ => text,
        },
    )
}

/// The report record `report()` gives, from the summary row.
fn report(row: &serde_json::Value) -> Option<Value> {
    let int = |v: &serde_json::Value| v.as_i64().map(Value::Int);
    let mut r = Record::default();
    for key in ["total", "ok", "err", "warned"] {
        r.insert(key.into(), int(&row[key])?);
    }
    let by_rule = row["by_rule"]
        .as_array()?
        .iter()
        .map(|b| {
            let mut e = Record::default();
            e.insert("rule".into(), Value::str(b["rule"].as_str()?));
            e.insert("kind".into(), Value::str(b["kind"].as_str()?));
            e.insert("count".into(), int(&b["count"])?);
            Some(Value::record(e))
        })
        .collect::<Option<Vec<Value>>>()?;
    r.insert("by_rule".into(), Value::list(by_rule));
    Some(Value::record(r))
}
