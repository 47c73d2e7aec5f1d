//! SQLite sources and targets (tooling.md, "Sources, targets and the
//! schema boundary"), through `rusqlite`.
//!
//! A source reads a table or a query: each row is one record, its origin
//! line the row's position, its source the configured id. SQL `NULL` is
//! absent, or `null` for a field whose type admits `Null` (or a column the
//! boundary declares nullable); an `INTEGER` 0/1 read for a `Bool` field
//! (or from a `BOOLEAN` column) is a Bool; `TEXT` read for a list, record or
//! map field (or from a `JSON` column) is decoded as JSON; a `BLOB` has no
//! HQL value, so its row is an `err` of kind `decode`.
//!
//! A target (`target.rs`) writes a table in one transaction that the run
//! commits when it ends; each batch of records is compared with the
//! table's live schema and the drift policy applied (configured as
//! `runtime::eval::policy` says).
//!
//! Column types, both ways:
//!
//! | HQL type | column type | stored as |
//! | --- | --- | --- |
//! | `Int` | `INTEGER` | integer (beyond 64 bits: a runtime error) |
//! | `Float` | `REAL` | real |
//! | `String` | `TEXT` | text |
//! | `Bool` | `BOOLEAN` | integer 0 or 1 |
//! | `List[T]`, `Map[T]`, a record | `JSON` | JSON text |
//! | `Int \| Float` | `REAL` | integer or real |
//! | anything else (`Any`, mixed unions) | no type | as the value is |
//!
//! Reading a column whose declared type is none of these goes by SQLite's
//! affinity rules (`VARCHAR` is text, `BIGINT` an integer, `NUMERIC` a
//! number, …).

mod target;

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::mpsc::sync_channel;

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OpenFlags};

pub use target::run_committed;

use super::base64;
use super::rows::{self, Cell, Rows};
use crate::runtime::builtins::{Format, FormatDef};
use crate::runtime::contract::{Contract, Shape, TypeSpec};
use crate::runtime::eval::io::{
    Boundary, Codec, Database, DatabaseAt, DecodedRecords, Input, Plain, Registered, Select,
    SourceSpec, TableSink, Tables,
};
use crate::runtime::eval::policy::TableTarget;
use crate::runtime::eval::{Result, RuntimeError};
use crate::runtime::json::Decoder;
use crate::runtime::value::{NumKind, Value};

/// What a column holds, by its declared type or by an HQL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Int,
    Float,
    /// `NUMERIC`, `DECIMAL`: any number.
    Number,
    Text,
    Bool,
    /// JSON text of a list, record or map.
    Json,
    /// No declared type: any value as it is.
    Any,
}

impl Class {
    /// The class of a declared column type, by SQLite's affinity rules
    /// (with `BOOL…` and `JSON` told apart from other numeric names).
    pub(crate) fn of_decl(decl: &str) -> Class {
        let d = decl.to_ascii_uppercase();
        if d.contains("BOOL") {
            Class::Bool
        } else if d.contains("JSON") {
            Class::Json
        } else if d.contains("INT") {
            Class::Int
        } else if ["CHAR", "CLOB", "TEXT"].iter().any(|t| d.contains(t)) {
            Class::Text
        } else if d.is_empty() || d.contains("BLOB") || d == "ANY" {
            Class::Any
        } else if ["REAL", "FLOA", "DOUB"].iter().any(|t| d.contains(t)) {
            Class::Float
        } else {
            Class::Number
        }
    }

    /// The column type `create_table` and `evolve` give it.
    pub(crate) fn decl(self) -> &'static str {
        match self {
            Class::Int => "INTEGER",
            Class::Float => "REAL",
            Class::Number => "NUMERIC",
            Class::Text => "TEXT",
            Class::Bool => "BOOLEAN",
            Class::Json => "JSON",
            Class::Any => "",
        }
    }

    /// The class of an HQL type (`None` for `Null` alone).
    pub(crate) fn of_type(ty: &TypeSpec) -> Option<Class> {
        Some(match ty {
            TypeSpec::Null => return None,
            TypeSpec::Any => Class::Any,
            TypeSpec::Bool => Class::Bool,
            TypeSpec::Int => Class::Int,
            TypeSpec::Float => Class::Float,
            TypeSpec::String => Class::Text,
            TypeSpec::List(_) | TypeSpec::Map(_) | TypeSpec::Record(_) => Class::Json,
            TypeSpec::Literal(v) => return Class::of_value(v),
            TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
                Some(Shape::Refined { base, .. }) => return Class::of_type(base),
                Some(Shape::Record { .. }) => Class::Json,
                None => Class::Any,
            },
            TypeSpec::Union(members) => {
                let mut classes = members.iter().filter_map(Class::of_type);
                let first = classes.next()?;
                classes.fold(first, |a, b| match (a, b) {
                    _ if a == b => a,
                    (Class::Int, Class::Float) | (Class::Float, Class::Int) => Class::Float,
                    _ => Class::Any,
                })
            }
        })
    }

    /// The class of a value, for a column made from records alone.
    pub(crate) fn of_value(v: &Value) -> Option<Class> {
        match v {
            Value::Bool(_) => Some(Class::Bool),
            Value::Int(_) => Some(Class::Int),
            Value::Float(_) => Some(Class::Float),
            Value::Num(n) => Some(match n.kind {
                NumKind::Float(_) => Class::Float,
                _ => Class::Int,
            }),
            Value::Str(_) => Some(Class::Text),
            Value::List(_) | Value::Record(_) => Some(Class::Json),
            _ => None,
        }
    }
}

/// The class a field's declared type gives its cells, and whether a
/// `NULL` in them is `null` (else absent).
fn field_class(shape: Option<&Rc<Contract>>, field: &str) -> Option<(Class, bool)> {
    let f = shape?.record()?.field(field)?;
    Some((
        Class::of_type(&f.ty).unwrap_or(Class::Any),
        f.ty.admits_null(),
    ))
}

/// `"name"`, quoted as an SQL identifier.
pub(crate) fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// How long a connection waits for another one's lock before giving up.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

/// The SQLite format: a source's table or query read as records; a
/// target's table written record by record (`Tables`), so the format has
/// no writer of bytes.
pub struct Sqlite;

pub static SQLITE: Sqlite = Sqlite;

/// SQLite as the registry knows it: named only by sources and targets
/// configured in `hql.toml`, never by a program or an extension.
pub const FORMAT: Registered = Registered {
    format: Format::new(&FormatDef::database("Sqlite")),
    codec: &SQLITE,
};

impl Codec for Sqlite {
    fn read(
        &self,
        input: Input,
        spec: &SourceSpec,
        shape: Option<&Rc<Contract>>,
    ) -> Result<DecodedRecords> {
        let Input::Database(database) = input else {
            return Err(RuntimeError::new(
                "hql::format",
                format!("source `{}` is not a SQLite database", spec.name),
            )
            .with_help("a SQLite source is configured in hql.toml, with `table` or `query`"));
        };
        read_rows(database, spec, shape)
    }

    fn reads_by_shape(&self) -> bool {
        true
    }

    fn tables(&self) -> Option<&dyn Tables> {
        Some(self)
    }
}

impl Tables for Sqlite {
    fn open(
        &self,
        target: &TableTarget,
        shape: Option<&Rc<Contract>>,
        warn: Box<dyn Fn(&str)>,
    ) -> Result<Box<dyn TableSink>> {
        target::open_target(target, shape, warn)
    }
}

/// The rows of a configured SQLite source, as records. The query runs on
/// a thread of its own (a statement borrows its connection, and the
/// records are pulled one at a time), which sends the rows over in
/// batches; the records are built here.
fn read_rows(
    database: &Database,
    spec: &SourceSpec,
    shape: Option<&Rc<Contract>>,
) -> Result<DecodedRecords> {
    let Database {
        written,
        at,
        select,
    } = database;
    let DatabaseAt::File(path) = at else {
        return Err(RuntimeError::new(
            "hql::format",
            format!("source `{}` is not a SQLite database", spec.name),
        ));
    };
    if !path.is_file() {
        return Err(RuntimeError::new(
            "hql::io",
            format!("cannot read {written}: no such database file"),
        )
        .with_help(format!(
            "source `{}` is configured in hql.toml; its paths are relative to that file's folder",
            spec.name
        )));
    }
    let sql = match select {
        Select::Table(t) => format!("SELECT * FROM {}", ident(t)),
        Select::Query(q) => q.clone(),
    };
    let (tx, rx) = sync_channel::<Message>(4);
    let path: PathBuf = path.to_path_buf();
    std::thread::spawn(move || run_query(&path, &sql, &tx));
    let failed = |why: String| {
        RuntimeError::new(
            "hql::io",
            format!("cannot read source `{}` from {written}: {why}", spec.name),
        )
    };
    let columns = match rx.recv() {
        Ok(Message::Columns(columns)) => columns,
        Ok(Message::Failed(why)) => return Err(failed(why)),
        _ => return Err(failed("the query stopped".into())),
    };
    if let Some((name, _)) = columns.iter().find(|(name, _)| name.contains('\0')) {
        let name = name.escape_debug();
        return Err(failed(format!(
            "column `{name}` has a NUL character in its name"
        )));
    }
    let (columns, classes) = columns
        .into_iter()
        .map(|(name, decl)| column_reading(&name, &decl, &spec.boundary, shape))
        .unzip();
    let cells = Cells {
        classes,
        decoder: Decoder::new(),
    };
    let rows = Rows::new(
        rows::received(rx),
        columns,
        cells,
        spec.name.clone(),
        written.clone(),
    );
    Ok(Box::new(Plain(rows)))
}

/// One column as read: the field it fills (and whether a `NULL` is
/// `null`), and how its cells convert.
fn column_reading(
    name: &str,
    decl: &str,
    boundary: &Boundary,
    shape: Option<&Rc<Contract>>,
) -> (rows::Column, Class) {
    let (field, column) = boundary.field_of(name);
    let nullable = column.is_some_and(|c| c.nullable);
    let (class, null) = match field_class(shape, field) {
        Some((class, null)) => (class, null || nullable),
        None => (Class::of_decl(decl), nullable),
    };
    let column = rows::Column {
        field: field.into(),
        null,
    };
    (column, class)
}

type Message = rows::Message<Vec<(String, String)>, Sql>;

/// Rows sent over at a time.
const ROWS_A_MESSAGE: usize = 256;

fn run_query(path: &Path, sql: &str, tx: &std::sync::mpsc::SyncSender<Message>) {
    let ran = (|| -> rusqlite::Result<()> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(LOCK_WAIT)?;
        let mut stmt = conn.prepare(sql)?;
        let columns: Vec<(String, String)> = stmt
            .columns()
            .map(|c| {
                (
                    c.name().to_string(),
                    c.decl_type().unwrap_or("").to_string(),
                )
            })
            .collect();
        let width = columns.len();
        if tx.send(Message::Columns(columns)).is_err() {
            return Ok(());
        }
        let mut rows = stmt.query([])?;
        let mut batch = Vec::with_capacity(ROWS_A_MESSAGE);
        while let Some(row) = rows.next()? {
            let cells = (0..width)
                .map(|i| row.get::<_, Sql>(i))
                .collect::<rusqlite::Result<Vec<_>>>()?;
            batch.push(cells);
            if batch.len() == ROWS_A_MESSAGE {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(ROWS_A_MESSAGE));
                if tx.send(Message::Rows(full)).is_err() {
                    return Ok(());
                }
            }
        }
        if !batch.is_empty() {
            let _ = tx.send(Message::Rows(batch));
        }
        Ok(())
    })();
    if let Err(e) = ran {
        let _ = tx.send(Message::Failed(e.to_string()));
    }
}

/// A SQLite cell as a value, by its column's class.
struct Cells {
    classes: Vec<Class>,
    decoder: Decoder,
}

impl rows::Convert for Cells {
    type Cell = Sql;

    fn convert(&mut self, column: usize, cell: Sql) -> Cell {
        let class = self.classes[column];
        Cell::Value(match cell {
            Sql::Null => return Cell::Null,
            Sql::Integer(n) => match class {
                Class::Bool if n == 0 || n == 1 => Value::Bool(n == 1),
                Class::Float => Value::Float(n as f64),
                _ => Value::Int(n),
            },
            Sql::Real(f) if f.is_finite() => Value::Float(f),
            Sql::Real(f) => {
                let text = if f > 0.0 { "Infinity" } else { "-Infinity" };
                return Cell::NoValue(Value::str(text), text);
            }
            Sql::Text(text) => match class {
                Class::Json => self
                    .decoder
                    .decode(text.as_bytes())
                    .unwrap_or_else(|_| Value::str(text)),
                _ => Value::str(text),
            },
            Sql::Blob(bytes) => return Cell::NoValue(Value::str(base64(&bytes)), "a BLOB"),
        })
    }
}
