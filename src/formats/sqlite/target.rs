//! A SQLite table target: the [`Store`] under the shared table sink
//! (`formats/table.rs`), which compares each batch with the table's live
//! schema and applies the drift policy.
//!
//! SQLite's columns take any value, so a widening changes no column and
//! `warn` writes values as they are; relaxing NOT NULL rebuilds the table
//! inside the run's transaction.
//!
//! Every target of one database in a run shares one connection and one
//! transaction (a second would wait on the first's lock): the run commits
//! it when it ends, or rolls it back — and removes a database file the run
//! created — when it stops.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use rusqlite::types::{ToSqlOutput, Value as Sql, ValueRef};
use rusqlite::{Connection, ErrorCode, ToSql};

use super::{ident, Class, LOCK_WAIT};
use crate::formats::table::{self, Column, Fit, Row, Store};
use crate::runtime::contract::{Contract, TypeSpec};
use crate::runtime::eval::io::{CommitStep, DatabaseAt, Pending, TableSink};
use crate::runtime::eval::policy::{TableTarget, WriteMode};
use crate::runtime::eval::{Result, RuntimeError};
use crate::runtime::json::write_json;
use crate::runtime::value::{NumKind, Value};

/// Open a table target in the run's transaction on its database.
/// `warn` puts one line on standard error.
pub fn open_target(
    target: &TableTarget,
    shape: Option<&Rc<Contract>>,
    warn: Box<dyn Fn(&str)>,
) -> Result<Box<dyn TableSink>> {
    let DatabaseAt::File(path) = &target.at else {
        return Err(RuntimeError::new(
            "hql::config",
            format!("target `{}` is not a SQLite database", target.id),
        ));
    };
    let db = transaction(path, &target.written)?;
    table::open(
        Sqlite {
            db,
            target: target.clone(),
        },
        shape,
        warn,
    )
}

/// A table of the run's SQLite database.
struct Sqlite {
    db: Rc<Db>,
    target: TableTarget,
}

impl Sqlite {
    fn conn(&self) -> &Connection {
        &self.db.conn
    }

    fn failed(&self, e: impl std::fmt::Display) -> RuntimeError {
        table::failed::<Self>(&self.target, e)
    }

    /// The table's `CREATE TABLE` text, and the `CREATE` texts of its
    /// indexes and triggers.
    fn schema_sql(&self, table: &str) -> Result<(String, Vec<String>)> {
        let mut stmt = self
            .conn()
            .prepare(
                "SELECT type, sql FROM sqlite_master WHERE tbl_name = ?1 AND sql IS NOT NULL \
                 ORDER BY type = 'table' DESC, rowid",
            )
            .map_err(|e| self.failed(e))?;
        let rows = stmt
            .query_map([table], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.failed(e))?;
        let mut create = None;
        let mut others = Vec::new();
        for (kind, sql) in rows {
            match kind.as_str() {
                "table" => create = Some(sql),
                _ => others.push(sql),
            }
        }
        let create = create.ok_or_else(|| self.failed(format!("no table `{table}`")))?;
        Ok((create, others))
    }

    /// Bind `row`'s values of the `columns` its statement names and run it.
    fn insert_row(
        &self,
        stmt: &mut rusqlite::Statement,
        columns: &[Column<Class>],
        row: &Row,
    ) -> Result<()> {
        let mut n = 0;
        for (p, c) in row.values.iter().zip(columns) {
            if p.is_none() && c.default.is_some() {
                continue;
            }
            n += 1;
            if let Some(stored) = p.as_ref().and_then(|v| real_changes(c.kind, v)) {
                return Err(table::inexact(&self.target, &c.name, stored, "REAL"));
            }
            let bound = Bound(p.as_ref(), &c.name);
            if let Err(e) = stmt.raw_bind_parameter(n, &bound) {
                return Err(match e {
                    rusqlite::Error::ToSqlConversionFailure(why) => RuntimeError::new(
                        "hql::overflow",
                        format!("target `{}`: {why}", self.target.id),
                    )
                    .with_help(
                        "an Int beyond 64 bits is never rounded: store it as a String, or leave it out",
                    ),
                    e => self.failed(e),
                });
            }
        }
        stmt.raw_execute().map_err(|e| self.failed(e))?;
        Ok(())
    }

    /// `INSERT INTO t (…) VALUES (…)`, of every column or of `present`
    /// ones; upsert updates the row its key names.
    fn insert_sql(
        &self,
        columns: &[Column<Class>],
        present: Option<&[bool]>,
        key: &[String],
    ) -> String {
        let names: Vec<&str> = columns
            .iter()
            .enumerate()
            .filter(|(i, _)| present.is_none_or(|p| p[*i]))
            .map(|(_, c)| c.name.as_str())
            .collect();
        let quoted = names.iter().map(|n| ident(n)).collect::<Vec<_>>();
        let marks = (1..=names.len())
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>();
        let mut sql = format!(
            "INSERT INTO {} ({}) VALUES ({})",
            ident(&self.target.table),
            quoted.join(", "),
            marks.join(", ")
        );
        if self.target.mode == WriteMode::Upsert {
            sql.push_str(&table::on_conflict(&names, key));
        }
        sql
    }
}

impl Store for Sqlite {
    type Kind = Class;

    const NAME: &'static str = "SQLite";
    const CODE: &'static str = "hql::sqlite";

    fn target(&self) -> &TableTarget {
        &self.target
    }

    /// `PRAGMA table_info`: the table's columns now.
    fn columns(&mut self) -> Result<Vec<Column<Class>>> {
        let sql = format!("PRAGMA table_info({})", ident(&self.target.table));
        let read = (|| -> rusqlite::Result<Vec<Column<Class>>> {
            let mut stmt = self.conn().prepare(&sql)?;
            let rows = stmt.query_map([], |r| {
                let decl: String = r.get(2)?;
                Ok(Column {
                    name: r.get(1)?,
                    kind: Class::of_decl(&decl),
                    decl,
                    not_null: r.get::<_, i64>(3)? != 0,
                    default: r.get(4)?,
                })
            })?;
            rows.collect()
        })();
        read.map_err(|e| self.failed(e))
    }

    fn kind_of_type(&self, ty: &TypeSpec) -> Class {
        Class::of_type(ty).unwrap_or(Class::Any)
    }

    fn kind_of_value(&self, v: &Value) -> Option<Class> {
        Class::of_value(v)
    }

    fn any(&self) -> Class {
        Class::Any
    }

    fn decl(&self, kind: Class) -> String {
        kind.decl().to_string()
    }

    fn fit(&self, column: &Column<Class>, v: &Value) -> Fit<Class> {
        fit(column.kind, v)
    }

    fn wider(&self, a: Class, _b: Class) -> Class {
        a
    }

    fn takes_any_value(&self) -> bool {
        true
    }

    fn widening(&self, _to: Option<Class>) -> String {
        "(a Float into an INTEGER column)".into()
    }

    fn execute(&mut self, sql: &str) -> Result<()> {
        self.conn().execute_batch(sql).map_err(|e| self.failed(e))
    }

    fn table_sql(&self) -> String {
        ident(&self.target.table)
    }

    /// SQLite's columns take any value: a type widening changes no column.
    fn widen(&mut self, _column: &Column<Class>, _to: Class) -> Result<()> {
        Ok(())
    }

    /// Drop NOT NULL from `relaxed`: SQLite cannot alter a column, so the
    /// table is rebuilt inside the run's transaction from its own
    /// `CREATE TABLE` text with those `NOT NULL`s taken out — so its
    /// CHECK and UNIQUE constraints, collations, defaults, primary key and
    /// AUTOINCREMENT stay as they were — and its indexes, triggers and
    /// AUTOINCREMENT counter are made again. A definition the rebuild
    /// cannot read is refused (`hql::config`), before anything is written.
    fn relax(&mut self, relaxed: &[String], columns: &[Column<Class>]) -> Result<()> {
        let table = self.target.table.clone();
        let temp = format!("{table}__hql_rebuild");
        let (create, others) = self.schema_sql(&table)?;
        let refused = |what: String| {
            RuntimeError::new(
                "hql::config",
                format!(
                    "target `{}`: cannot relax NOT NULL on table `{table}`: {what}",
                    self.target.id
                ),
            )
            .with_help("relax the column by hand, or set `relax_nullability_on_missing = false`")
        };
        let body = rebuilt_definition(&create, relaxed).map_err(refused)?;
        let names = columns
            .iter()
            .map(|c| ident(&c.name))
            .collect::<Vec<_>>()
            .join(", ");
        let sequence: Option<i64> = self
            .conn()
            .query_row(
                "SELECT seq FROM sqlite_sequence WHERE name = ?1",
                [&table],
                |r| r.get(0),
            )
            .ok();
        let mut sql = format!(
            "CREATE TABLE {t} {body}; INSERT INTO {t} ({names}) SELECT {names} FROM {old}; \
             DROP TABLE {old}; ALTER TABLE {t} RENAME TO {old};",
            t = ident(&temp),
            old = ident(&table),
        );
        for other in others {
            sql.push_str(&other);
            sql.push(';');
        }
        if let Some(seq) = sequence {
            sql.push_str(&format!(
                "UPDATE sqlite_sequence SET seq = max(seq, {seq}) WHERE name = '{}';",
                table.replace('\'', "''")
            ));
        }
        self.execute(&sql)
    }

    /// One `INSERT` a row, prepared once a batch; a row that leaves a
    /// column to its default has a statement without that column.
    fn write(&mut self, columns: &[Column<Class>], rows: Vec<Row>, key: &[String]) -> Result<i64> {
        let db = self.db.clone();
        let full = self.insert_sql(columns, None, key);
        let mut stmt = db.conn.prepare_cached(&full).map_err(|e| self.failed(e))?;
        let mut written = 0;
        for row in &rows {
            let inserted = if row.lacks_default(columns) {
                let present = row.present(columns);
                let sql = self.insert_sql(columns, Some(&present), key);
                let mut own = db.conn.prepare_cached(&sql).map_err(|e| self.failed(e))?;
                self.insert_row(&mut own, columns, row)
            } else {
                self.insert_row(&mut stmt, columns, row)
            };
            inserted.map_err(|e| e.from_record(&row.origin))?;
            written += 1;
        }
        Ok(written)
    }

    fn first_write(&self) -> bool {
        (self.db.replaced.borrow_mut()).insert(self.target.table.clone())
    }

    fn first_warning(&self) -> bool {
        self.db.warned.borrow_mut().insert(self.target.id.clone())
    }

    fn pending(&self) -> Box<dyn Pending> {
        Box::new(Transaction(self.db.clone()))
    }
}

/// Does a value fit a column as it is, by widening, or not at all? A
/// string of numeric text fits a number column (SQLite stores it as the
/// number); `null` is the nullability check's.
fn fit(class: Class, v: &Value) -> Fit<Class> {
    let int = v.is_int();
    let number = v.is_number();
    let fits = match (class, v) {
        (_, Value::Null | Value::Absent) | (Class::Any, _) => true,
        (Class::Int, _) if int => true,
        (Class::Int, _) if number => return Fit::Widened(Class::Float),
        (Class::Float | Class::Number, _) if number => true,
        (Class::Float | Class::Number, Value::Str(s)) => numeric_text(s),
        (Class::Text, Value::Str(_)) => true,
        (Class::Bool, Value::Bool(_)) => true,
        (Class::Json, Value::List(_) | Value::Record(_)) => true,
        _ => false,
    };
    if fits {
        Fit::Fits
    } else {
        Fit::Incompatible
    }
}

/// The double SQLite would store for `v` in a column of class `class`,
/// when it differs in value from `v`: a decimal no double holds
/// (`1e-400`, twenty digits) as a real anywhere; an integer past 2^53
/// that a `REAL` column turns into a real (`9007199254740993` →
/// `9007199254740992`).
fn real_changes(class: Class, v: &Value) -> Option<f64> {
    table::double_changes(v, class == Class::Float)
}

fn numeric_text(s: &str) -> bool {
    let t = s.trim();
    !t.is_empty()
        && t.parse::<f64>().is_ok_and(f64::is_finite)
        && t.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
}

/// A value bound to a statement's parameter.
struct Bound<'a>(Option<&'a Value>, &'a str);

impl ToSql for Bound<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        let Some(v) = self.0 else {
            return Ok(ToSqlOutput::Owned(Sql::Null));
        };
        Ok(match v {
            Value::Null | Value::Absent => ToSqlOutput::Owned(Sql::Null),
            Value::Bool(b) => ToSqlOutput::Owned(Sql::Integer(i64::from(*b))),
            Value::Int(n) => ToSqlOutput::Owned(Sql::Integer(*n)),
            Value::Float(f) => ToSqlOutput::Owned(Sql::Real(*f)),
            Value::Num(n) => match n.kind {
                NumKind::Int(i) => ToSqlOutput::Owned(Sql::Integer(i)),
                NumKind::Float(f) => ToSqlOutput::Owned(Sql::Real(f)),
                NumKind::BigInt => {
                    return Err(rusqlite::Error::ToSqlConversionFailure(
                        format!(
                            "field `{}` holds an Int beyond 64 bits, which SQLite cannot store",
                            self.1
                        )
                        .into(),
                    ))
                }
            },
            Value::Str(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Value::List(_) | Value::Record(_) => {
                let mut text = String::new();
                write_json(&mut text, v);
                ToSqlOutput::Owned(Sql::Text(text))
            }
            other => {
                return Err(rusqlite::Error::ToSqlConversionFailure(
                    format!(
                        "field `{}` holds {}, which a table cannot store",
                        self.1,
                        other.kind_article()
                    )
                    .into(),
                ))
            }
        })
    }
}

// -------------------------------------------------------------- transactions

/// One database's connection and the run's transaction on it.
struct Db {
    conn: Connection,
    /// The transaction is still open.
    open: Cell<bool>,
    /// The file, when this run created it: removed if the run stops.
    created: Option<PathBuf>,
    key: PathBuf,
    /// The targets whose drift this run has warned of (`on_drift = "warn"`).
    warned: RefCell<std::collections::HashSet<String>>,
    /// The tables this run has written, whose `mode` it applied.
    replaced: RefCell<std::collections::HashSet<String>>,
}

/// The run's transaction on the database at `path`: the one already open,
/// or a new one (`BEGIN IMMEDIATE`, so a database locked by another
/// connection is refused at once, before anything is written).
fn transaction(path: &Path, written: &str) -> Result<Rc<Db>> {
    let cannot =
        |why: String| RuntimeError::new("hql::io", format!("cannot write {written}: {why}"));
    let key = identity(path).map_err(|e| {
        cannot(e.to_string()).with_help("the database's folder must exist and be writable")
    })?;
    let shown = key.display().to_string();
    table::run_database(&shown, written, || {
        let existed = path.exists();
        let conn = Connection::open(path).map_err(|e| cannot(e.to_string()))?;
        let db = Rc::new(Db {
            conn,
            open: Cell::new(false),
            created: (!existed).then(|| path.to_path_buf()),
            key: key.clone(),
            warned: RefCell::default(),
            replaced: RefCell::default(),
        });
        db.conn
            .busy_timeout(LOCK_WAIT)
            .map_err(|e| cannot(e.to_string()))?;
        if let Err(e) = db.conn.execute_batch("BEGIN IMMEDIATE") {
            let locked = matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
            );
            return Err(if locked {
                cannot("the database is locked by another connection".into()).with_help(
                    "another program is writing it: run again when it has finished; nothing was written",
                )
            } else {
                cannot(e.to_string())
            });
        }
        db.open.set(true);
        Ok(db)
    })
}

impl table::RunDatabase for Db {
    fn is_open(&self) -> bool {
        self.open.get()
    }

    fn key(&self) -> String {
        self.key.display().to_string()
    }

    fn into_any(self: Rc<Self>) -> Rc<dyn std::any::Any> {
        self
    }
}

/// A database's identity: its canonical path (its folder's, for a file
/// not made yet).
fn identity(path: &Path) -> std::io::Result<PathBuf> {
    if path.exists() {
        return path.canonicalize();
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"))?;
    Ok(dir.canonicalize()?.join(name))
}

impl Db {
    fn rollback(&self) {
        if self.open.replace(false) {
            let _ = self.conn.execute_batch("ROLLBACK");
            if let Some(created) = &self.created {
                let _ = std::fs::remove_file(created);
                let mut journal = created.as_os_str().to_owned();
                journal.push("-journal");
                let _ = std::fs::remove_file(journal);
            }
        }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        self.rollback();
    }
}

/// The run's hold on a database's transaction.
struct Transaction(Rc<Db>);

/// The table of the runs that committed into a database, one marker row
/// each, written in the run's own transaction: recovery reads it to tell
/// whether the run's database committed (tooling.md, "Targets").
pub(super) const RUNS_TABLE: &str = "_hql_runs";

impl Pending for Transaction {
    fn target(&self) -> String {
        self.0.key.display().to_string()
    }

    fn prepare(&mut self, run: &str) -> std::io::Result<()> {
        let db = &self.0;
        if !db.open.get() {
            return Ok(());
        }
        let marked = db
            .conn
            .execute_batch(&format!(
                "CREATE TABLE IF NOT EXISTS {RUNS_TABLE} (run TEXT PRIMARY KEY, committed_at TEXT)"
            ))
            .and_then(|()| {
                db.conn.execute(
                    &format!(
                        "INSERT OR IGNORE INTO {RUNS_TABLE} (run, committed_at) VALUES (?1, datetime('now'))"
                    ),
                    [run],
                )
            });
        marked
            .map(|_| ())
            .map_err(|e| std::io::Error::other(format!("{}: {e}", db.key.display())))
    }

    fn step(&self) -> CommitStep {
        CommitStep::Database {
            path: self.0.key.clone(),
        }
    }

    fn commit(self: Box<Self>) -> std::io::Result<()> {
        let db = &self.0;
        if !db.open.get() {
            return Ok(());
        }
        match db.conn.execute_batch("COMMIT") {
            Ok(()) => {
                db.open.set(false);
                Ok(())
            }
            Err(e) => {
                db.rollback();
                Err(std::io::Error::other(format!("{}: {e}", db.key.display())))
            }
        }
    }

    fn abandon(self: Box<Self>) {
        self.0.rollback();
    }
}

/// The parenthesised definition of a `CREATE TABLE` text (from its first
/// `(` on), with `NOT NULL` taken out of the definitions of the `relaxed`
/// columns; or what cannot be read.
fn rebuilt_definition(create: &str, relaxed: &[String]) -> std::result::Result<String, String> {
    let open = top_level(create)
        .find(|&(_, c, depth)| c == '(' && depth == 0)
        .map(|(i, ..)| i)
        .ok_or("its definition has no column list")?;
    let body = &create[open..];
    let close = top_level(body)
        .find(|&(_, c, depth)| c == ')' && depth == 0)
        .map(|(i, ..)| i)
        .ok_or("its column list does not close")?;
    // The column list's parts: split at commas outside brackets and quotes.
    let inner = &body[1..close];
    let mut parts = Vec::new();
    let mut from = 0;
    for (i, c, depth) in top_level(inner) {
        if c == ',' && depth == 0 {
            parts.push(&inner[from..i]);
            from = i + 1;
        }
    }
    parts.push(&inner[from..]);
    let mut found = vec![false; relaxed.len()];
    let mut out = Vec::with_capacity(parts.len());
    for part in parts {
        let name = first_name(part);
        let at = relaxed
            .iter()
            .position(|r| name.as_deref().is_some_and(|n| n.eq_ignore_ascii_case(r)));
        match at {
            Some(at) => {
                found[at] = true;
                out.push(without_not_null(part));
            }
            None => out.push(part.to_string()),
        }
    }
    if let Some(missing) = found.iter().position(|f| !f) {
        return Err(format!(
            "the definition of column `{}` was not found in its CREATE TABLE text",
            relaxed[missing]
        ));
    }
    Ok(format!("({}){}", out.join(","), &body[close + 1..]))
}

/// The characters of SQL text outside quotes (`'…'`, `"…"`, `` `…` ``,
/// `[…]`) and `--` comments, with their byte positions and how deep in
/// parentheses each is (a bracket counts as outside the pair it makes).
fn top_level(sql: &str) -> impl Iterator<Item = (usize, char, usize)> + '_ {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut chars = sql.char_indices().peekable();
    std::iter::from_fn(move || loop {
        let (i, c) = chars.next()?;
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => quote = Some(c),
            '[' => quote = Some(']'),
            '-' if chars.peek().map(|&(_, n)| n) == Some('-') => {
                for (_, n) in chars.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
            }
            '(' => {
                depth += 1;
                return Some((i, c, depth - 1));
            }
            ')' => {
                depth = depth.saturating_sub(1);
                return Some((i, c, depth));
            }
            _ => return Some((i, c, depth)),
        }
    })
}

/// The column name a column definition starts with (unquoted), or `None`
/// for a table constraint (`PRIMARY KEY (…)`, `CHECK (…)`, …).
fn first_name(def: &str) -> Option<String> {
    let def = def.trim_start();
    let name = match def.chars().next()? {
        '"' | '`' | '[' => {
            let close = match def.as_bytes()[0] {
                b'[' => ']',
                b => b as char,
            };
            let rest = &def[1..];
            let end = rest.find(close)?;
            rest[..end].to_string()
        }
        _ => def
            .split(|c: char| c.is_whitespace() || c == '(')
            .next()?
            .to_string(),
    };
    let keyword = ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"];
    let quoted = matches!(def.as_bytes()[0], b'"' | b'`' | b'[');
    (quoted || !keyword.iter().any(|k| name.eq_ignore_ascii_case(k))).then_some(name)
}

/// A column definition with its `NOT NULL` constraint (and the conflict
/// clause that belongs to it) taken out; the rest kept as written.
fn without_not_null(def: &str) -> String {
    let upper = def.to_ascii_uppercase();
    let outside: Vec<usize> = {
        // Byte positions outside quotes and brackets, where a keyword may start.
        let mut quote: Option<u8> = None;
        let mut depth = 0usize;
        let mut v = Vec::new();
        for (i, &b) in upper.as_bytes().iter().enumerate() {
            match quote {
                Some(q) if b == q => quote = None,
                Some(_) => {}
                None => match b {
                    b'\'' | b'"' | b'`' => quote = Some(b),
                    b'[' => quote = Some(b']'),
                    b'(' => depth += 1,
                    b')' => depth = depth.saturating_sub(1),
                    _ if depth == 0 => v.push(i),
                    _ => {}
                },
            }
        }
        v
    };
    let word_at = |i: usize, w: &str| {
        upper[i..].starts_with(w)
            && (i == 0 || !upper.as_bytes()[i - 1].is_ascii_alphanumeric())
            && upper[i + w.len()..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_')
    };
    for &i in &outside {
        if !word_at(i, "NOT") {
            continue;
        }
        let rest = &upper[i + 3..];
        let gap = rest.len() - rest.trim_start().len();
        let null_at = i + 3 + gap;
        if gap == 0 || !word_at(null_at, "NULL") {
            continue;
        }
        let mut end = null_at + 4;
        // `ON CONFLICT <resolution>` belongs to the constraint.
        let after = &upper[end..];
        let trimmed = after.trim_start();
        if trimmed.starts_with("ON ") || trimmed.starts_with("ON\t") {
            let words: Vec<&str> = trimmed.split_whitespace().take(3).collect();
            if words.len() == 3 && words[1] == "CONFLICT" {
                let skip = after.len() - trimmed.len();
                let tail = &trimmed[trimmed.find(words[2]).unwrap_or(0) + words[2].len()..];
                end += skip + (trimmed.len() - tail.len());
            }
        }
        return format!("{}{}", def[..i].trim_end(), &def[end..]);
    }
    def.to_string()
}

/// Did the run `run` commit into the database at `path` (its marker row is
/// there)? An error where the database cannot be read.
pub fn run_committed(path: &Path, run: &str) -> std::result::Result<bool, String> {
    if !path.exists() {
        return Ok(false);
    }
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let _ = conn.busy_timeout(LOCK_WAIT);
    let has_table: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [RUNS_TABLE],
            |row| row.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if !has_table {
        return Ok(false);
    }
    conn.query_row(
        &format!("SELECT count(*) FROM {RUNS_TABLE} WHERE run = ?1"),
        [run],
        |row| row.get::<_, i64>(0),
    )
    .map(|n| n > 0)
    .map_err(|e| format!("{}: {e}", path.display()))
}
