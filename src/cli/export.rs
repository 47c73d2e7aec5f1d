//! `hql export FILE TYPE --format F` (tooling.md, "Commands"): one type of
//! a contracts file as a JSON Schema, an OpenLineage facet or HQL's
//! canonical JSON, pretty-printed on standard output.

use crate::cli::args::ExportFormat;
use crate::cli::contracts::load;
use crate::formats::catalog::{column_of, columns_of, Catalog, Column};
use crate::session::{Session, Sinks, EXIT_OK, EXIT_STATIC};
use crate::tooling::export::{export_text, Format};
use crate::tooling::sql::{compile, Dialect, Options, TypedFrom};

/// Export `ty` of `file` as `format`; the exit status (2 for an unknown
/// type, or a file that does not check).
pub fn export(
    mut session: Session,
    file: &str,
    ty: &str,
    format: ExportFormat,
    sql: &SqlArgs,
    sinks: &mut Sinks,
) -> i32 {
    let format = match format {
        ExportFormat::Sql => return export_sql(session, file, ty, sql, sinks),
        ExportFormat::JsonSchema => Format::JsonSchema,
        ExportFormat::OpenLineage => Format::OpenLineage,
        ExportFormat::Contract => Format::Contract,
    };
    let declared = match load(&mut session, file, sinks) {
        Ok(declared) => declared,
        Err(status) => return status,
    };
    match declared.get(ty) {
        Ok(contract) => {
            let _ = sinks
                .out
                .write_all(export_text(contract, format).as_bytes());
            EXIT_OK
        }
        Err(message) => usage(sinks, &message),
    }
}

fn usage(sinks: &mut Sinks, message: &str) -> i32 {
    let _ = writeln!(sinks.err, "hql: {message}");
    EXIT_STATIC
}

/// What `--format sql` takes besides the type.
#[derive(Debug, Default)]
pub struct SqlArgs {
    /// `--dialect D`.
    pub dialect: Option<Dialect>,
    /// `--from`: a JSON Lines file (or glob), a Parquet file, or a table
    /// expression.
    pub from: Option<String>,
    /// `--from-table`: a table with typed columns.
    pub from_table: Option<String>,
    /// `--columns`: the table's columns in its catalog's words.
    pub columns: Option<String>,
    /// `--database`: the DuckDB database whose catalog has the table.
    pub database: Option<String>,
    /// `--summary`: `report()`'s one row.
    pub summary: bool,
    /// `--now` or `HQL_NOW`: the time `age(f)` measures to.
    pub now: Option<i128>,
}

fn export_sql(
    mut session: Session,
    file: &str,
    ty: &str,
    args: &SqlArgs,
    sinks: &mut Sinks,
) -> i32 {
    let Some(dialect) = args.dialect else {
        return usage(
            sinks,
            "--format sql needs --dialect duckdb, spark, trino or postgres",
        );
    };
    let declared = match load(&mut session, file, sinks) {
        Ok(declared) => declared,
        Err(status) => return status,
    };
    let contract = match declared.get(ty) {
        Ok(contract) => contract,
        Err(message) => return usage(sinks, &message),
    };
    let (from, columns) = match typed_input(dialect, args) {
        Ok(input) => input,
        Err(message) => return usage(sinks, &message),
    };
    let typed = match (&columns, args.from_table.is_some()) {
        (Some(columns), false) => Some(TypedFrom::Parquet(columns)),
        (Some(columns), true) => Some(TypedFrom::Table(columns)),
        (None, _) => None,
    };
    let options = Options {
        dialect,
        from,
        summary: args.summary,
        globals: Some(session.interp()),
        now: args.now,
        typed,
    };
    match compile(contract, &options) {
        Ok(sql) => {
            let _ = sinks.out.write_all(sql.as_bytes());
            EXIT_OK
        }
        Err(e) => usage(sinks, &e.to_string()),
    }
}

/// What the query reads, and its typed columns where it has them: a
/// Parquet file's from its schema, a table's from `--columns` or from a
/// DuckDB database's catalog.
type Input<'a> = (&'a str, Option<Vec<(String, Column)>>);

fn typed_input<'a>(dialect: Dialect, args: &'a SqlArgs) -> Result<Input<'a>, String> {
    let catalog = match dialect {
        Dialect::DuckDb => Catalog::DuckDb,
        Dialect::Spark => Catalog::Spark,
        Dialect::Trino => Catalog::Trino,
        Dialect::Postgres => Catalog::Postgres,
    };
    if let Some(table) = args.from_table.as_deref() {
        let columns = match (&args.columns, &args.database) {
            (Some(text), _) => columns_of(text, catalog).map_err(|why| format!("--columns: {why}"))?,
            (None, Some(database)) if dialect == Dialect::DuckDb => {
                crate::cli::engine::duckdb_columns(database, table)?
                    .into_iter()
                    .map(|(name, ty)| {
                        let column = column_of(&ty, catalog)
                            .map_err(|why| format!("column `{name}` of {table}: {why}"))?;
                        Ok((name, column))
                    })
                    .collect::<Result<_, String>>()?
            }
            _ => return Err(format!(
                "--from-table needs the table's columns: --columns 'name TYPE, …' as the catalog names them{}",
                if dialect == Dialect::DuckDb { " (or --database FILE, whose catalog has them)" } else { "" }
            )),
        };
        return Ok((table, Some(columns)));
    }
    let Some(from) = args.from.as_deref() else {
        return Err("--format sql needs --from: a JSON Lines file (or glob), a Parquet file, or a table expression with a text column `line`; or --from-table".into());
    };
    // A Parquet file's columns are checked where they lie: its schema
    // says what they hold.
    if !crate::formats::parquet::FORMAT.format.is_format_of(from) {
        return Ok((from, None));
    }
    let failed = |why: String| format!("--from {from}: {why}");
    let files = parquet_files(from).map_err(failed)?;
    let mut columns = None;
    for file in &files {
        let these = crate::formats::parquet::schema_of(file).map_err(failed)?;
        match &columns {
            None => columns = Some(these),
            Some(first) if *first == these => {}
            Some(_) => {
                return Err(failed(format!(
                    "{} has other columns than {}: the query checks one schema",
                    file.display(),
                    files[0].display()
                )))
            }
        }
    }
    Ok((from, columns))
}

/// The Parquet files `from` names: itself, or the files its last part
/// matches where it has `*` or `?` (`data/orders-*.parquet`), in order.
fn parquet_files(from: &str) -> Result<Vec<std::path::PathBuf>, String> {
    let path = std::path::Path::new(from);
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if !name.contains(['*', '?']) {
        return Ok(vec![path.to_path_buf()]);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| matches_glob(name, n))
        })
        .map(|e| e.path())
        .collect();
    files.sort();
    if files.is_empty() {
        return Err("no file matches it".into());
    }
    Ok(files)
}

/// Does `name` match `pattern`, where `*` is any run of characters and
/// `?` any one?
fn matches_glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // The last `*` seen, and where in `name` it began to match.
    let (mut i, mut j, mut star) = (0, 0, None);
    while j < n.len() {
        match p.get(i) {
            Some('*') => {
                star = Some((i, j));
                i += 1;
            }
            Some(&c) if c == '?' || c == n[j] => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((si, sj)) => {
                    star = Some((si, sj + 1));
                    i = si + 1;
                    j = sj + 1;
                }
                None => return false,
            },
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::matches_glob;

    #[test]
    fn globs_match_names() {
        assert!(matches_glob("orders-*.parquet", "orders-1.parquet"));
        assert!(matches_glob("*.parquet", ".parquet"));
        assert!(matches_glob("part-?.parquet", "part-0.parquet"));
        assert!(!matches_glob("part-?.parquet", "part-10.parquet"));
        assert!(matches_glob("a*b*c", "axxbyyc"));
        assert!(!matches_glob("a*b*c", "axxbyy"));
        assert!(!matches_glob("orders-*.parquet", "orders-1.jsonl"));
    }
}
