//! `hql export FILE TYPE --format F` (tooling.md, "Commands"): one type of
//! a contracts file as a JSON Schema, an OpenLineage facet or HQL's
//! canonical JSON, pretty-printed on standard output.

use crate::cli::args::ExportFormat;
use crate::cli::contracts::load;
use crate::session::{Session, Sinks, EXIT_OK, EXIT_STATIC};
use crate::tooling::export::{export_text, Format};
use crate::tooling::sql::{compile, Dialect, Options};

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
        return usage(sinks, "--format sql needs --dialect duckdb, spark or trino");
    };
    let Some(from) = args.from.as_deref() else {
        return usage(
            sinks,
            "--format sql needs --from: a JSON Lines file (or glob), a Parquet file, or a table expression with a text column `line`",
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
    // A Parquet file's columns are checked where they lie: its schema
    // says what they hold.
    let columns = match crate::formats::parquet::FORMAT.format.is_format_of(from) {
        true => match crate::formats::parquet::schema_of(std::path::Path::new(from)) {
            Ok(columns) => Some(columns),
            Err(why) => return usage(sinks, &format!("--from {from}: {why}")),
        },
        false => None,
    };
    let options = Options {
        dialect,
        from,
        summary: args.summary,
        globals: Some(session.interp()),
        now: args.now,
        columns: columns.as_deref(),
    };
    match compile(contract, &options) {
        Ok(sql) => {
            let _ = sinks.out.write_all(sql.as_bytes());
            EXIT_OK
        }
        Err(e) => usage(sinks, &e.to_string()),
    }
}
