//! PostgreSQL sources (tooling.md, "Sources, targets and the schema
//! boundary"), through the `postgres` crate: a configured `table` or
//! `query` of a server, read with a cursor a batch of rows at a time, so a
//! table of any size is read in bounded memory.
//!
//! Each row is one record, its origin line the row's position in the
//! result, its source the configured id. A cell converts by its column's
//! type (`cells.rs`): integers are Ints, `real` and `double precision`
//! Floats, `numeric` a number with its exact digits, `date` `YYYY-MM-DD`,
//! `timestamptz` RFC 3339 in UTC (`Z`), `json` and `jsonb` their values,
//! `uuid` and text types Strings, `bytea` base64 text, arrays Lists. A
//! `NULL` is absent, or `null` for a field whose type admits `Null` (or a
//! column the boundary declares nullable). A NaN or an infinity has no HQL
//! value: its row is an `err` of kind `decode`. A column of another type
//! (`interval`, `inet`, …) is refused by name before any row is read.
//!
//! The server is reached by the URL the configuration gives (or the
//! environment variable it names); messages name the server by its URL
//! without the password (`Database::written`), never the URL itself.

mod cells;
pub mod check;
mod connection;
mod target;
mod tls;

pub use target::run_committed;

use std::rc::Rc;
use std::sync::mpsc::{sync_channel, SyncSender};

use crate::runtime::builtins::{Format, FormatDef};
use crate::runtime::contract::{Contract, TypeSpec};
use crate::runtime::eval::io::{
    Codec, Database, DatabaseAt, DecodedRecords, Input, Plain, Registered, Select, SourceSpec,
    TableSink, Tables,
};
use crate::runtime::eval::policy::TableTarget;
use crate::runtime::eval::{Result, RuntimeError};
use crate::runtime::json::Decoder;
use crate::runtime::value::Value;

use super::rows::{self, Rows};
use cells::Cell;

/// The PostgreSQL format: a source's table or query read as records.
pub struct Postgres;

pub static POSTGRES: Postgres = Postgres;

/// PostgreSQL as the registry knows it: named only by sources configured
/// in `hql.toml`, never by a program or an extension.
pub const FORMAT: Registered = Registered {
    format: Format::new(&FormatDef::database("Postgres")),
    codec: &POSTGRES,
};

impl Codec for Postgres {
    fn read(
        &self,
        input: Input,
        spec: &SourceSpec,
        shape: Option<&Rc<Contract>>,
    ) -> Result<DecodedRecords> {
        let Input::Database(Database {
            written,
            at: DatabaseAt::Server(url),
            select,
        }) = input
        else {
            return Err(RuntimeError::new(
                "hql::format",
                format!("source `{}` is not a PostgreSQL table or query", spec.name),
            )
            .with_help("a PostgreSQL source is configured in hql.toml, with `postgres` and `table` or `query`"));
        };
        read_rows(url, written, select, spec, shape)
    }

    fn reads_by_shape(&self) -> bool {
        true
    }

    fn tables(&self) -> Option<&dyn Tables> {
        Some(self)
    }
}

impl Tables for Postgres {
    fn open(
        &self,
        target: &TableTarget,
        shape: Option<&Rc<Contract>>,
        warn: Box<dyn Fn(&str)>,
    ) -> Result<Box<dyn TableSink>> {
        target::open_target(target, shape, warn)
    }
}

/// Rows fetched from the cursor at a time (and sent over at a time).
const ROWS_A_FETCH: usize = 1000;

/// A table name as `hql.toml` writes it (`orders`, `shop.orders`), quoted
/// part by part.
fn table_ident(table: &str) -> String {
    table
        .split('.')
        .map(crate::formats::table::ident)
        .collect::<Vec<_>>()
        .join(".")
}

/// A result's columns: each name, and how its cells read (or the type that
/// has no HQL value).
pub(super) type Columns = Vec<(String, std::result::Result<Cell, String>)>;

pub(super) type Message = rows::Message<Columns, Option<String>>;

/// The rows of a configured PostgreSQL source, as records. The cursor is
/// read on a thread of its own, which sends the rows over in batches of
/// text cells; the records are built here.
fn read_rows(
    url: &str,
    written: &str,
    select: &Select,
    spec: &SourceSpec,
    shape: Option<&Rc<Contract>>,
) -> Result<DecodedRecords> {
    let sql = match select {
        Select::Table(t) => format!("SELECT * FROM {}", table_ident(t)),
        Select::Query(q) => q.trim().trim_end_matches(';').to_string(),
    };
    // A cursor reads the rows of a query that gives rows.
    let first = first_word(&sql);
    if !["SELECT", "WITH", "VALUES", "TABLE"]
        .iter()
        .any(|k| first.eq_ignore_ascii_case(k))
    {
        return Err(RuntimeError::new(
            "hql::config",
            format!(
                "source `{}`: its query {}, and a source reads rows",
                spec.name,
                match first {
                    "" => "is empty".to_string(),
                    word => format!("starts with `{word}`"),
                }
            ),
        )
        .with_help("write a query that starts with SELECT, WITH, VALUES or TABLE"));
    }
    // A table an earlier statement of this run wrote is read through the
    // run's own transaction, so that what the run has written so far is
    // read; any other on a connection and thread of its own.
    let table = match select {
        Select::Table(t) => Some(t.as_str()),
        Select::Query(_) => None,
    };
    let mut feed = match target::in_run(written, table) {
        Some(run) => target::cursor_in_run(run, sql),
        None => {
            let (tx, rx) = sync_channel::<Message>(2);
            let url = url.to_string();
            std::thread::spawn(move || {
                if let Err(why) = run_cursor(&url, &sql, &tx) {
                    let _ = tx.send(Message::Failed(why));
                }
            });
            rows::received(rx)
        }
    };
    let failed = |why: String| {
        RuntimeError::new(
            "hql::io",
            format!("cannot read source `{}` from {written}: {why}", spec.name),
        )
    };
    let columns = match feed() {
        Some(Message::Columns(columns)) => columns,
        Some(Message::Failed(why)) => return Err(failed(why)),
        _ => return Err(failed("the connection stopped".into())),
    };
    let mut readings = Vec::with_capacity(columns.len());
    let mut cells = Vec::with_capacity(columns.len());
    for (name, cell) in columns {
        let cell = cell.map_err(|ty| {
            failed(format!(
                "column `{name}` is of type {ty}, which has no HQL value"
            ))
            .with_help("leave it out of the query, or cast it to text there (`col::text`)")
        })?;
        let (field, column) = spec.boundary.field_of(&name);
        let declared = shape
            .and_then(|c| c.record())
            .and_then(|r| r.field(field))
            .map(|f| &f.ty);
        readings.push(rows::Column {
            field: field.into(),
            null: declared.is_some_and(TypeSpec::admits_null) || column.is_some_and(|c| c.nullable),
        });
        cells.push(cell);
    }
    let cells = Cells {
        cells,
        decoder: Decoder::new(),
    };
    let rows = Rows::new(
        feed,
        readings,
        cells,
        spec.name.clone(),
        written.to_string(),
    );
    Ok(Box::new(Plain(rows)))
}

/// The first word of a query, past comments and opening parentheses
/// (`-- why\n(SELECT*FROM t)` → `SELECT`).
fn first_word(sql: &str) -> &str {
    let mut rest = sql;
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, tail)| tail);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, tail)| tail);
        } else if let Some(after) = rest.strip_prefix('(') {
            rest = after;
        } else {
            break;
        }
    }
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    &rest[..end]
}

/// A PostgreSQL cell's text as a value, by its column's type.
struct Cells {
    cells: Vec<Cell>,
    decoder: Decoder,
}

impl rows::Convert for Cells {
    type Cell = Option<String>;

    fn convert(&mut self, column: usize, cell: Option<String>) -> rows::Cell {
        let Some(text) = cell else {
            return rows::Cell::Null;
        };
        match self.cells[column].value(&text, &mut self.decoder) {
            Ok(value) => rows::Cell::Value(value),
            Err(what) => rows::Cell::NoValue(Value::str(text), what),
        }
    }
}

/// What a server error says, without the protocol's wrapping.
pub(crate) fn said(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return db.message().to_string();
    }
    // The causes too: a TLS handshake says why it failed only there.
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        let said = c.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = c.source();
    }
    text
}

/// The text forms `cells` reads: ISO dates, UTC times, shortest exact
/// floats, hex `bytea`.
pub(super) const TEXT_FORMS: &str = "SET LOCAL TimeZone = 'UTC';\n\
                          SET LOCAL DateStyle = 'ISO, YMD';\n\
                          SET LOCAL extra_float_digits = 1;\n\
                          SET LOCAL bytea_output = 'hex'";

/// The columns `sql` gives, each with how its cells read (or the type
/// that has no HQL value).
pub(super) fn describe(
    client: &mut impl postgres::GenericClient,
    sql: &str,
) -> std::result::Result<Columns, String> {
    let statement = client.prepare(sql).map_err(|e| said(&e))?;
    Ok(statement
        .columns()
        .iter()
        .map(|c| (c.name().to_string(), Cell::of(c.type_())))
        .collect())
}

/// The next rows of an open cursor, as text cells.
pub(super) fn fetch(
    client: &mut impl postgres::GenericClient,
    cursor: &str,
) -> std::result::Result<Vec<Vec<Option<String>>>, String> {
    let fetch = format!("FETCH FORWARD {ROWS_A_FETCH} FROM {cursor}");
    let mut rows = Vec::with_capacity(ROWS_A_FETCH);
    for message in client.simple_query(&fetch).map_err(|e| said(&e))? {
        if let postgres::SimpleQueryMessage::Row(row) = message {
            rows.push(
                (0..row.len())
                    .map(|i| row.get(i).map(str::to_string))
                    .collect(),
            );
        }
    }
    Ok(rows)
}

/// Connect, open a read-only transaction whose text forms are the ones
/// `cells` reads (ISO dates, UTC times, shortest exact floats, hex
/// `bytea`), and read `sql` through a cursor, sending its columns and
/// then its rows.
fn run_cursor(url: &str, sql: &str, tx: &SyncSender<Message>) -> std::result::Result<(), String> {
    let mut client = tls::connect(url)?;
    let mut t = client.transaction().map_err(|e| said(&e))?;
    t.batch_execute(&format!(
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY;\n{TEXT_FORMS}"
    ))
    .map_err(|e| said(&e))?;
    let columns = describe(&mut t, sql)?;
    t.batch_execute(&format!("DECLARE hql_rows NO SCROLL CURSOR FOR {sql}"))
        .map_err(|e| said(&e))?;
    if tx.send(Message::Columns(columns)).is_err() {
        return Ok(());
    }
    loop {
        let rows = fetch(&mut t, "hql_rows")?;
        if rows.is_empty() {
            break;
        }
        if tx.send(Message::Rows(rows)).is_err() {
            return Ok(());
        }
    }
    t.commit().map_err(|e| said(&e))
}

#[cfg(test)]
mod tests {
    use super::first_word;

    #[test]
    fn a_querys_first_word_is_read_past_comments_and_parentheses() {
        assert_eq!(first_word("SELECT*FROM t"), "SELECT");
        assert_eq!(
            first_word("  -- the orders\n/* all */ (select a from t)"),
            "select"
        );
        assert_eq!(first_word("DELETE FROM t"), "DELETE");
        assert_eq!(first_word("-- only a comment"), "");
    }
}
