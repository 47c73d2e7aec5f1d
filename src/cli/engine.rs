//! Running a contract compiled to SQL in an engine beside `hql` (`hql vet
//! --engine duckdb`): Python's `duckdb` module (`$HQL_PYTHON`, else
//! `python3`) or the `duckdb` command. No engine is built into `hql`; the
//! exported query (`hql export --format sql`) stays the interface. Or on
//! the server of a configured PostgreSQL table (`--engine postgres`),
//! through the client PostgreSQL sources use.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::formats::catalog::{column_of, Catalog};
use crate::formats::postgres::check;
use crate::runtime::contract::Contract;
use crate::runtime::eval::io::{DatabaseAt, Place, Select};
use crate::runtime::eval::Interp;
use crate::runtime::value::{Record, Value};
use crate::tooling::sql::{compile, Dialect, Options, TypedFrom};

/// The engines `hql vet --engine` runs a contract compiled to SQL in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    #[value(name = "duckdb")]
    DuckDb,
    /// The server of a configured PostgreSQL table.
    Postgres,
}

impl Engine {
    /// Its name on the command line (`--engine`), as clap has it.
    pub fn name(self) -> String {
        clap::ValueEnum::to_possible_value(&self)
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    }
}

/// Does the engine path read `data`: a file of one JSON text a line (a
/// format whose records are JSON texts, not written whole as one array),
/// or a Parquet file (its typed columns checked where they lie)?
pub fn reads(data: &str) -> bool {
    (crate::formats::FORMATS.of_path(data)).is_some_and(|f| {
        crate::formats::codec(f).json_text().is_some() && !f.writes_whole(data) || parquet(data)
    })
}

fn parquet(data: &str) -> bool {
    crate::formats::parquet::FORMAT.format.is_format_of(data)
}

/// `report()` of `contract` over `data`, computed by DuckDB.
pub fn duckdb_report(contract: &Contract, data: &str, globals: &Interp) -> Result<Value, String> {
    let columns = match parquet(data) {
        true => Some(crate::formats::parquet::schema_of(std::path::Path::new(
            data,
        ))?),
        false => None,
    };
    let sql = compile(
        contract,
        &Options {
            dialect: Dialect::DuckDb,
            from: data,
            summary: true,
            globals: Some(globals),
            // The query runs now: `age` measures to the run's time.
            now: Some(globals.now()),
            typed: columns.as_deref().map(TypedFrom::Parquet),
        },
    )
    .map_err(|e| e.to_string())?;
    let row = run(&sql)?;
    let row: serde_json::Value = serde_json::from_str(row.trim())
        .map_err(|e| format!("DuckDB's answer is not JSON: {e}"))?;
    report(&row).ok_or_else(|| format!("DuckDB's answer is not a report: {row}"))
}

/// `report()` of `contract` over the configured source `id`, a PostgreSQL
/// table, computed by its server: the table's typed columns read from the
/// server's catalog, checked where they lie. Errors name the server
/// without its password.
pub fn postgres_report(contract: &Contract, id: &str, globals: &Interp) -> Result<Value, String> {
    let spec = globals
        .host()
        .configured_source(id)
        .map_err(|e| e.message)?;
    let Place::Database(database) = &spec.place else {
        return Err(format!(
            "--engine postgres checks a configured PostgreSQL table, and source `{id}` is a file"
        ));
    };
    let (DatabaseAt::Server(url), Select::Table(table)) = (&database.at, &database.select) else {
        return Err(format!(
            "--engine postgres checks a configured PostgreSQL table, and source `{id}` is {}",
            match database.at {
                DatabaseAt::Server(_) => "a query: name its table with `table`",
                _ => "not on a PostgreSQL server",
            }
        ));
    };
    if !spec.boundary.columns.is_empty() {
        return Err(format!(
            "--engine postgres checks a table's columns as they are, and source `{id}` maps them \
             (`columns` in hql.toml): check it with hql vet"
        ));
    }
    let failed = |why: String| format!("cannot check source `{id}` on {}: {why}", database.written);
    let columns = check::table_columns(url, table)
        .map_err(failed)?
        .into_iter()
        .map(|(name, ty)| {
            let column = column_of(&ty, Catalog::Postgres)
                .map_err(|why| failed(format!("column `{name}`: {why}")))?;
            Ok((name, column))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let sql = compile(
        contract,
        &Options {
            dialect: Dialect::Postgres,
            from: &check::table_name(table),
            summary: true,
            globals: Some(globals),
            now: Some(globals.now()),
            typed: Some(TypedFrom::Table(&columns)),
        },
    )
    .map_err(|e| e.to_string())?;
    let row = check::one_row(url, &sql).map_err(failed)?;
    let mut object = serde_json::Map::new();
    for (name, text) in row {
        let value = match text {
            Some(text) => serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
            None => serde_json::Value::Null,
        };
        object.insert(name, value);
    }
    let row = serde_json::Value::Object(object);
    report(&row).ok_or_else(|| failed(format!("its answer is not a report: {row}")))
}

/// The columns of `table` (`t`, `schema.t` or `db.schema.t`) in the DuckDB
/// database file `database`, with their types as its catalog names them,
/// in their order.
pub fn duckdb_columns(database: &str, table: &str) -> Result<Vec<(String, String)>, String> {
    let parts: Vec<&str> = table.split('.').collect();
    let (schema, name) = match parts.as_slice() {
        [name] => ("main", *name),
        [schema, name] | [_, schema, name] => (*schema, *name),
        _ => return Err(format!("--from-table {table}: not a table name")),
    };
    let text = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let sql = format!(
        "ATTACH {} AS hql_catalog (READ_ONLY);\n\
         SELECT to_json(list([column_name, data_type] ORDER BY ordinal_position)) AS columns\n\
         FROM information_schema.columns\n\
         WHERE table_catalog = 'hql_catalog' AND table_schema = {} AND table_name = {}",
        text(database),
        text(schema),
        text(name)
    );
    let row: serde_json::Value = serde_json::from_str(run(&sql)?.trim())
        .map_err(|e| format!("DuckDB's answer is not JSON: {e}"))?;
    // Python gives the JSON text as a string; the `duckdb` command, as JSON.
    let columns = match &row["columns"] {
        serde_json::Value::String(text) => serde_json::from_str(text).unwrap_or_default(),
        other => other.clone(),
    };
    let columns: Vec<(String, String)> = columns
        .as_array()
        .map(|pairs| {
            (pairs.iter())
                .filter_map(|p| Some((p[0].as_str()?.to_string(), p[1].as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    if columns.is_empty() {
        return Err(format!("{database} has no table {table}"));
    }
    Ok(columns)
}

/// Writes the query's one row as JSON to the file named by its argument,
/// DuckDB's progress bar off: the answer never shares standard output
/// with anything the engine prints.
const PYTHON: &str = "import duckdb, json, sys\n\
con = duckdb.connect()\n\
con.execute('SET enable_progress_bar = false')\n\
rel = con.sql(sys.stdin.read())\n\
row = dict(zip(rel.columns, rel.fetchall()[0]))\n\
with open(sys.argv[1], 'w') as out:\n    json.dump(row, out, default=str)\n";

/// The `duckdb` command's script: the progress bar off, the answer as JSON
/// into the file `answer`, then `sql`.
fn cli_script(sql: &str, answer: &std::path::Path) -> String {
    let sql = sql.trim_end();
    let end = if sql.ends_with(';') { "" } else { ";" };
    format!(
        "SET enable_progress_bar = false;\n.mode json\n.output {}\n{sql}{end}\n",
        answer.display()
    )
}

/// A file of its own for the engine's answer, removed when dropped.
struct Answer(std::path::PathBuf);

impl Answer {
    fn new() -> Result<Answer, String> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("hql-duckdb-{}-{n}.json", std::process::id()));
        // Made here, anew: never a file someone else put in its place.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| format!("cannot make {}: {e}", path.display()))?;
        Ok(Answer(path))
    }
}

impl Drop for Answer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The query's one row as JSON text, from whichever DuckDB is there.
fn run(sql: &str) -> Result<String, String> {
    let python = std::env::var("HQL_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_module = Command::new(&python)
        .args(["-c", "import duckdb"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let answer = Answer::new()?;
    let (mut cmd, script) = if has_module {
        let mut cmd = Command::new(&python);
        cmd.args(["-c", PYTHON]).arg(&answer.0);
        (cmd, sql.to_string())
    } else {
        let mut cmd = Command::new("duckdb");
        cmd.arg("-batch");
        (cmd, cli_script(sql, &answer.0))
    };
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|_| {
            "DuckDB is not installed: `pip install duckdb` (for $HQL_PYTHON or python3) or put the `duckdb` command on PATH".to_string()
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(script.as_bytes());
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "DuckDB failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = std::fs::read_to_string(&answer.0)
        .map_err(|e| format!("cannot read DuckDB's answer: {e}"))?;
    // The `duckdb` command's JSON mode writes an array of rows.
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
