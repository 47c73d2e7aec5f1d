//! The records of a database source (SQLite, PostgreSQL): the format reads
//! its rows in batches — on a thread of its own, which sends them over (a
//! statement or a cursor borrows its connection, and the records are pulled
//! one at a time), or from a cursor in the run's own transaction —; the
//! records are built here, one a row, its origin line the row's position.
//!
//! A `NULL` is absent, or `null` for a column read as nullable; a cell with
//! no HQL value (a NaN, a BLOB) makes its row an `err` of kind `decode`
//! whose input keeps every cell, that one as text.

use std::rc::Rc;
use std::sync::mpsc::Receiver;

use crate::runtime::eval::io::Decoded;
use crate::runtime::eval::{check_interrupt, Origin, Result, RuntimeError};
use crate::runtime::validate::undecodable_input;
use crate::runtime::value::{Key, Record, Value};

/// What the reading thread sends: the columns (`H`, the format's own
/// description of them) first, then rows of cells `C`, or why it failed.
pub(crate) enum Message<H, C> {
    Columns(H),
    Rows(Vec<Vec<C>>),
    Failed(String),
}

/// A cell as read.
pub(crate) enum Cell {
    Null,
    Value(Value),
    /// A value with no HQL value: its text, and what it holds (`NaN`).
    NoValue(Value, &'static str),
}

/// How a format's cells become values.
pub(crate) trait Convert {
    type Cell;

    /// Cell `cell` of column `column`.
    fn convert(&mut self, column: usize, cell: Self::Cell) -> Cell;
}

/// One column: the field it fills, and whether a `NULL` is `null`.
pub(crate) struct Column {
    pub field: Key,
    pub null: bool,
}

/// Where a source's batches come from: the next message, `None` at the end.
pub(crate) type Feed<H, C> = Box<dyn FnMut() -> Option<Message<H, C>>>;

/// The batches a reading thread sends over `rx`.
pub(crate) fn received<H: 'static, C: 'static>(rx: Receiver<Message<H, C>>) -> Feed<H, C> {
    Box::new(move || rx.recv().ok())
}

/// The records of a database source.
pub(crate) struct Rows<H, F: Convert> {
    pub feed: Feed<H, F::Cell>,
    pub columns: Vec<Column>,
    pub convert: F,
    pub name: Rc<str>,
    /// The database as messages name it.
    pub database: String,
    batch: std::vec::IntoIter<Vec<F::Cell>>,
    line: u64,
    done: bool,
}

impl<H, F: Convert> Rows<H, F> {
    pub fn new(
        feed: Feed<H, F::Cell>,
        columns: Vec<Column>,
        convert: F,
        name: Rc<str>,
        database: String,
    ) -> Self {
        Rows {
            feed,
            columns,
            convert,
            name,
            database,
            batch: Vec::new().into_iter(),
            line: 0,
            done: false,
        }
    }

    fn record(&mut self, row: Vec<F::Cell>) -> Decoded {
        let origin = Origin {
            source: self.name.clone(),
            line: self.line,
        };
        let mut record = Record::with_capacity(row.len());
        let mut no_value = None;
        for (i, cell) in row.into_iter().enumerate() {
            let Some(column) = self.columns.get(i) else {
                break;
            };
            let value = match self.convert.convert(i, cell) {
                Cell::Null if column.null => Value::Null,
                Cell::Null => continue,
                Cell::Value(v) => v,
                Cell::NoValue(text, what) => {
                    no_value.get_or_insert((i, what));
                    text
                }
            };
            record.insert(column.field.clone(), value);
        }
        if let Some((i, what)) = no_value {
            let message = format!(
                "row {} of source `{}`: column `{}` holds {what}, which has no HQL value",
                self.line, self.name, self.columns[i].field
            );
            let value = undecodable_input(&origin, Value::record(record), message);
            return Decoded { value, origin };
        }
        Decoded {
            value: Value::record(record),
            origin,
        }
    }
}

impl<H, F: Convert> Iterator for Rows<H, F> {
    type Item = Result<Decoded>;

    fn next(&mut self) -> Option<Result<Decoded>> {
        loop {
            if let Some(row) = self.batch.next() {
                if let Err(e) = check_interrupt() {
                    return Some(Err(e));
                }
                self.line += 1;
                return Some(Ok(self.record(row)));
            }
            if self.done {
                return None;
            }
            match (self.feed)() {
                Some(Message::Rows(rows)) => self.batch = rows.into_iter(),
                Some(Message::Failed(why)) => {
                    self.done = true;
                    return Some(Err(RuntimeError::new(
                        "hql::io",
                        format!(
                            "reading source `{}` from {} failed after row {}: {why}",
                            self.name, self.database, self.line
                        ),
                    )));
                }
                Some(Message::Columns(_)) | None => {
                    self.done = true;
                    return None;
                }
            }
        }
    }
}
