//! A PostgreSQL table target: the [`Store`] under the shared table sink
//! (`formats/table.rs`), with PostgreSQL's real column types.
//!
//! The live schema is read from `pg_catalog`; a widening (`smallint` →
//! `integer` → `bigint` → `numeric`, `real` → `double precision`,
//! `varchar(n)` → a longer `varchar`) is an `ALTER COLUMN … TYPE`, a
//! relaxed column an `ALTER COLUMN … DROP NOT NULL`, both in the run's
//! transaction. Rows go in with `COPY … FROM STDIN` in its text form (an
//! upsert copies into a temporary table and inserts from it with `ON
//! CONFLICT`). A column's type takes only its own values, so `warn` and
//! `ignore` stop the run at a value that would need the column changed.
//!
//! Every target on one server in a run shares one connection and one
//! transaction; the run commits it, with its marker row in `_hql_runs`,
//! when it ends, or rolls it back when it stops.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::io::Write;
use std::rc::Rc;
use std::sync::Arc;

use postgres::Client;

use super::connection::{Connection, Failed};
use super::{describe, fetch, said, table_ident, tls, Message, TEXT_FORMS};
use crate::formats::rows::Feed;
use crate::formats::table::{self, ident, Column, Fit, Row, Store};
use crate::runtime::contract::{Contract, Shape, TypeSpec};
use crate::runtime::eval::io::{CommitStep, DatabaseAt, Pending, TableSink};
use crate::runtime::eval::policy::{TableTarget, WriteMode};
use crate::runtime::eval::{Origin, Result, RuntimeError};
use crate::runtime::json::write_json;
use crate::runtime::value::{NumKind, Value};

/// A column's type, as far as writing to it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Small,
    Integer,
    Big,
    Numeric,
    Real,
    Double,
    Text,
    /// `varchar(n)`; `None`: no limit.
    Varchar(Option<u32>),
    Bool,
    Date,
    Timestamptz,
    Timestamp,
    Jsonb,
    Json,
    Uuid,
    /// Any other type: it takes text, which the server reads.
    Other,
}

impl Kind {
    /// The kind of a type as `format_type` writes it.
    pub(crate) fn of_decl(decl: &str) -> Kind {
        match decl {
            "smallint" => Kind::Small,
            "integer" => Kind::Integer,
            "bigint" => Kind::Big,
            "real" => Kind::Real,
            "double precision" => Kind::Double,
            "text" => Kind::Text,
            "character varying" => Kind::Varchar(None),
            "boolean" => Kind::Bool,
            "date" => Kind::Date,
            "timestamp with time zone" => Kind::Timestamptz,
            "timestamp without time zone" => Kind::Timestamp,
            "jsonb" => Kind::Jsonb,
            "json" => Kind::Json,
            "uuid" => Kind::Uuid,
            d if d.starts_with("numeric") => Kind::Numeric,
            d => match d
                .strip_prefix("character varying(")
                .and_then(|n| n.strip_suffix(')'))
                .and_then(|n| n.parse().ok())
            {
                Some(n) => Kind::Varchar(Some(n)),
                None => Kind::Other,
            },
        }
    }

    fn decl(self) -> String {
        match self {
            Kind::Small => "smallint".into(),
            Kind::Integer => "integer".into(),
            Kind::Big => "bigint".into(),
            Kind::Numeric => "numeric".into(),
            Kind::Real => "real".into(),
            Kind::Double => "double precision".into(),
            Kind::Text | Kind::Other => "text".into(),
            Kind::Varchar(Some(n)) => format!("varchar({n})"),
            Kind::Varchar(None) => "varchar".into(),
            Kind::Bool => "boolean".into(),
            Kind::Date => "date".into(),
            Kind::Timestamptz => "timestamptz".into(),
            Kind::Timestamp => "timestamp".into(),
            Kind::Jsonb => "jsonb".into(),
            Kind::Json => "json".into(),
            Kind::Uuid => "uuid".into(),
        }
    }

    /// The place of an integer or exact type on the widening ladder.
    fn rung(self) -> Option<u8> {
        match self {
            Kind::Small => Some(0),
            Kind::Integer => Some(1),
            Kind::Big => Some(2),
            Kind::Numeric => Some(3),
            _ => None,
        }
    }

    /// The column type a contract's field gives a new column (tooling.md:
    /// `String` → `text`, `Int` → `bigint`, `Float` → `double precision`,
    /// `Bool` → `boolean`, `Date` → `date`, `Timestamp` → `timestamptz`,
    /// records, lists, maps and anything mixed → `jsonb`).
    fn of_type(ty: &TypeSpec) -> Kind {
        match ty {
            TypeSpec::Bool => Kind::Bool,
            TypeSpec::Int => Kind::Big,
            TypeSpec::Float => Kind::Double,
            TypeSpec::String => Kind::Text,
            TypeSpec::Literal(v) => Kind::of_value(v).unwrap_or(Kind::Jsonb),
            TypeSpec::Named(cell) => match cell.get() {
                Some(c) => match (&c.shape, c.name.as_str()) {
                    (Shape::Refined { .. }, "Date") => Kind::Date,
                    (Shape::Refined { .. }, "Timestamp") => Kind::Timestamptz,
                    (Shape::Refined { base, .. }, _) => Kind::of_type(base),
                    (Shape::Record { .. }, _) => Kind::Jsonb,
                },
                None => Kind::Jsonb,
            },
            TypeSpec::Union(members) => {
                let mut kinds = members
                    .iter()
                    .filter(|m| !matches!(m, TypeSpec::Null))
                    .map(Kind::of_type);
                let Some(first) = kinds.next() else {
                    return Kind::Jsonb;
                };
                kinds.fold(first, |a, b| match (a, b) {
                    _ if a == b => a,
                    (Kind::Big, Kind::Double) | (Kind::Double, Kind::Big) => Kind::Double,
                    _ => Kind::Jsonb,
                })
            }
            TypeSpec::Any
            | TypeSpec::Null
            | TypeSpec::List(_)
            | TypeSpec::Map(_)
            | TypeSpec::Record(_) => Kind::Jsonb,
        }
    }

    fn of_value(v: &Value) -> Option<Kind> {
        Some(match v {
            Value::Bool(_) => Kind::Bool,
            Value::Int(_) => Kind::Big,
            Value::Float(_) => Kind::Double,
            Value::Num(n) => match n.kind {
                NumKind::Int(_) => Kind::Big,
                NumKind::Float(_) => Kind::Double,
                NumKind::BigInt => Kind::Numeric,
            },
            Value::Str(_) => Kind::Text,
            Value::List(_) | Value::Record(_) => Kind::Jsonb,
            _ => return None,
        })
    }
}

/// How a value fits a column of `kind`.
fn fit(kind: Kind, v: &Value) -> Fit<Kind> {
    let fits = match (kind, v) {
        (_, Value::Null | Value::Absent) | (Kind::Jsonb | Kind::Json, _) => true,
        (Kind::Small | Kind::Integer | Kind::Big, _) if v.is_number() => {
            let Some(i) = v.small_int() else {
                return Fit::Widened(Kind::Numeric);
            };
            let needs = if i16::try_from(i).is_ok() {
                Kind::Small
            } else if i32::try_from(i).is_ok() {
                Kind::Integer
            } else {
                Kind::Big
            };
            if needs.rung() <= kind.rung() {
                return Fit::Fits;
            }
            return Fit::Widened(needs);
        }
        (Kind::Numeric | Kind::Double, _) => v.is_number(),
        (Kind::Real, _) if v.is_number() => {
            if !holds_as_real(v) {
                return Fit::Widened(Kind::Double);
            }
            true
        }
        (Kind::Varchar(Some(n)), Value::Str(s)) => {
            let length = s.chars().count();
            if length > n as usize {
                return Fit::Widened(Kind::Varchar(Some(length.try_into().unwrap_or(u32::MAX))));
            }
            true
        }
        (Kind::Text | Kind::Varchar(None) | Kind::Other, Value::Str(_)) => true,
        (Kind::Bool, Value::Bool(_)) => true,
        (Kind::Date, Value::Str(s)) => is_date(s),
        (Kind::Timestamptz | Kind::Timestamp, Value::Str(s)) => {
            s.is_char_boundary(10)
                && is_date(&s[..10])
                && matches!(s.as_bytes().get(10), Some(b'T' | b't' | b' '))
        }
        (Kind::Uuid, Value::Str(s)) => is_uuid(s),
        _ => false,
    };
    if fits {
        Fit::Fits
    } else {
        Fit::Incompatible
    }
}

/// Does a `real` (single precision) hold the number exactly?
fn holds_as_real(v: &Value) -> bool {
    let double = match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Num(n) => match n.kind {
            NumKind::Int(i) => i as f64,
            NumKind::Float(f) => f,
            NumKind::BigInt => return false,
        },
        _ => return false,
    };
    table::double_changes(v, true).is_none() && f64::from(double as f32) == double
}

/// `YYYY-MM-DD`.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// A UUID's text: 32 hexadecimal digits, dashed 8-4-4-4-12 or not.
fn is_uuid(s: &str) -> bool {
    let digits = s.bytes().filter(u8::is_ascii_hexdigit).count();
    let dashes = s.bytes().filter(|b| *b == b'-').count();
    digits == 32 && digits + dashes == s.len() && (dashes == 0 || dashes == 4)
}

/// Open a table target in the run's transaction on its server.
pub fn open_target(
    target: &TableTarget,
    shape: Option<&Rc<Contract>>,
    warn: Box<dyn Fn(&str)>,
) -> Result<Box<dyn TableSink>> {
    let DatabaseAt::Server(url) = &target.at else {
        return Err(RuntimeError::new(
            "hql::config",
            format!("target `{}` is not a PostgreSQL table", target.id),
        ));
    };
    let db = transaction(url, target)?;
    table::open(
        Postgres {
            db,
            target: target.clone(),
        },
        shape,
        warn,
    )
}

/// A table on the run's PostgreSQL server.
struct Postgres {
    db: Rc<Db>,
    target: TableTarget,
}

impl Postgres {
    fn failed(&self, e: impl std::fmt::Display) -> RuntimeError {
        table::failed::<Self>(&self.target, e)
    }

    /// The connection's failure, with the row a `COPY` stopped at.
    fn lost(&self, failed: Failed) -> RuntimeError {
        let origin = failed.row.map(|(source, line)| Origin {
            source: Rc::from(&*source),
            line,
        });
        self.failed(failed.why).from_record(&origin)
    }

    /// The rows' values of the `present` columns in `COPY`'s text form.
    fn copy_text(
        &self,
        columns: &[Column<Kind>],
        present: &[bool],
        rows: &[&Row],
    ) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(rows.len() * 64);
        let mut json = String::new();
        for row in rows {
            let mut first = true;
            for ((value, column), _) in row
                .values
                .iter()
                .zip(columns)
                .zip(present)
                .filter(|(_, p)| **p)
            {
                if !first {
                    out.push(b'\t');
                }
                first = false;
                let written = self.copy_value(&mut out, &mut json, column, value.as_ref());
                written.map_err(|e| e.from_record(&row.origin))?;
            }
            out.push(b'\n');
        }
        Ok(out)
    }

    /// One value in `COPY`'s text form: `\N` for NULL; text escaped.
    fn copy_value(
        &self,
        out: &mut Vec<u8>,
        json: &mut String,
        column: &Column<Kind>,
        value: Option<&Value>,
    ) -> Result<()> {
        let text: &str = match value {
            None | Some(Value::Null | Value::Absent) => {
                out.extend_from_slice(b"\\N");
                return Ok(());
            }
            Some(v) if matches!(column.kind, Kind::Jsonb | Kind::Json) => {
                json.clear();
                write_json(json, v);
                if column.kind == Kind::Jsonb && json.contains("\\u0000") {
                    return Err(self.nul(&column.name));
                }
                json
            }
            Some(Value::Str(s)) => {
                if s.contains('\0') {
                    return Err(self.nul(&column.name));
                }
                s
            }
            Some(Value::Bool(b)) => {
                out.push(if *b { b't' } else { b'f' });
                return Ok(());
            }
            Some(v @ (Value::Int(_) | Value::Float(_) | Value::Num(_))) => {
                let doubles = matches!(column.kind, Kind::Double | Kind::Real);
                if let Some(stored) = table::double_changes(v, doubles).filter(|_| doubles) {
                    return Err(table::inexact(
                        &self.target,
                        &column.name,
                        stored,
                        "double precision",
                    ));
                }
                if let (Value::Num(n), Kind::Small | Kind::Integer | Kind::Big) = (v, column.kind) {
                    if n.kind == NumKind::BigInt {
                        return Err(RuntimeError::new(
                            "hql::overflow",
                            format!(
                                "target `{}`: field `{}` holds an Int beyond 64 bits, which a {} column cannot store",
                                self.target.id,
                                column.name,
                                column.decl
                            ),
                        )
                        .with_help("an Int beyond 64 bits is never rounded: make the column `numeric`, or store it as a String"));
                    }
                }
                // Numbers need no escaping.
                match v {
                    Value::Num(n) => out.extend_from_slice(n.text.as_bytes()),
                    Value::Int(i) => {
                        let _ = write!(out, "{i}");
                    }
                    Value::Float(f) => {
                        let _ = write!(out, "{f}");
                    }
                    _ => {}
                }
                return Ok(());
            }
            Some(other) => {
                return Err(RuntimeError::new(
                    "hql::io",
                    format!(
                        "target `{}`: field `{}` holds {}, which a table cannot store",
                        self.target.id,
                        column.name,
                        other.kind_article()
                    ),
                ))
            }
        };
        if !text
            .bytes()
            .any(|b| matches!(b, b'\\' | b'\n' | b'\r' | b'\t'))
        {
            out.extend_from_slice(text.as_bytes());
            return Ok(());
        }
        for b in text.bytes() {
            match b {
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                b => out.push(b),
            }
        }
        Ok(())
    }

    /// A NUL in text, which PostgreSQL refuses.
    fn nul(&self, column: &str) -> RuntimeError {
        RuntimeError::new(
            "hql::io",
            format!(
                "target `{}`: column `{column}` would hold text with a NUL character, which \
                 PostgreSQL cannot store",
                self.target.id
            ),
        )
        .with_help("take the NUL out in a `map` before writing (`replace(s, \"\\u{0}\", \"\")`)")
    }

    /// `COPY` the rows into `into`, naming the `names` columns: handed to
    /// the connection without waiting for the server.
    fn copy(&self, into: &str, names: &[&str], text: Vec<u8>, rows: &[&Row]) -> Result<()> {
        let quoted = names.iter().map(|n| ident(n)).collect::<Vec<_>>();
        let sql = format!("COPY {into} ({}) FROM STDIN", quoted.join(", "));
        let mut last: Option<(Rc<str>, Arc<str>)> = None;
        let origins = rows
            .iter()
            .map(|row| {
                let o = row.origin.as_ref()?;
                let source = match &last {
                    Some((rc, arc)) if Rc::ptr_eq(rc, &o.source) => arc.clone(),
                    _ => {
                        let arc: Arc<str> = Arc::from(&*o.source);
                        last = Some((o.source.clone(), arc.clone()));
                        arc
                    }
                };
                Some((source, o.line))
            })
            .collect();
        let conn = self.db.conn.borrow();
        conn.copy(sql, text, origins).map_err(|f| self.lost(f))
    }

    /// Run `f` on the connection and wait for its answer.
    fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Client) -> std::result::Result<T, String> + Send + 'static,
    ) -> Result<T> {
        let answer = self.db.conn.borrow().call(f);
        answer.map_err(|failed| self.lost(failed))
    }
}

impl Store for Postgres {
    type Kind = Kind;

    const NAME: &'static str = "PostgreSQL";
    const CODE: &'static str = "hql::io";

    fn target(&self) -> &TableTarget {
        &self.target
    }

    /// The table's columns from `pg_catalog` (generated columns aside:
    /// nothing writes them); an identity column counts as having a default.
    fn columns(&mut self) -> Result<Vec<Column<Kind>>> {
        let sql = "SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, \
                   COALESCE(pg_get_expr(d.adbin, d.adrelid), \
                            CASE WHEN a.attidentity <> '' THEN 'identity' END) \
                   FROM pg_attribute a \
                   LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
                   WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 \
                   AND NOT a.attisdropped AND a.attgenerated = '' \
                   ORDER BY a.attnum";
        let name = table_ident(&self.target.table);
        let rows = self.call(move |client| {
            let rows = client.query(sql, &[&name]).map_err(|e| said(&e))?;
            Ok(rows
                .iter()
                .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
                .collect::<Vec<(String, String, bool, Option<String>)>>())
        })?;
        Ok(rows
            .into_iter()
            .map(|(name, decl, not_null, default)| Column {
                name,
                kind: Kind::of_decl(&decl),
                decl,
                not_null,
                default,
            })
            .collect())
    }

    fn kind_of_type(&self, ty: &TypeSpec) -> Kind {
        Kind::of_type(ty)
    }

    fn kind_of_value(&self, v: &Value) -> Option<Kind> {
        Kind::of_value(v)
    }

    fn kind_of_field(&self, name: &str, ty: &TypeSpec) -> Kind {
        match self.target.numeric.iter().any(|n| n == name) {
            true => Kind::Numeric,
            false => Kind::of_type(ty),
        }
    }

    fn any(&self) -> Kind {
        Kind::Jsonb
    }

    fn decl(&self, kind: Kind) -> String {
        kind.decl()
    }

    fn fit(&self, column: &Column<Kind>, v: &Value) -> Fit<Kind> {
        fit(column.kind, v)
    }

    fn wider(&self, a: Kind, b: Kind) -> Kind {
        match (a, b) {
            (Kind::Varchar(Some(x)), Kind::Varchar(Some(y))) => Kind::Varchar(Some(x.max(y))),
            _ => match (a.rung(), b.rung()) {
                (Some(x), Some(y)) if y > x => b,
                (Some(_), Some(_)) => a,
                _ if a == Kind::Numeric || b == Kind::Numeric => Kind::Numeric,
                _ => b,
            },
        }
    }

    fn takes_any_value(&self) -> bool {
        false
    }

    fn widening(&self, to: Option<Kind>) -> String {
        match to {
            Some(kind) => format!("to {}", kind.decl()),
            None => "of the column".into(),
        }
    }

    fn execute(&mut self, sql: &str) -> Result<()> {
        let sql = sql.to_string();
        self.call(move |client| client.batch_execute(&sql).map_err(|e| said(&e)))
    }

    fn table_sql(&self) -> String {
        table_ident(&self.target.table)
    }

    /// `ALTER COLUMN … TYPE`: each widening is a cast PostgreSQL makes
    /// without loss.
    fn widen(&mut self, column: &Column<Kind>, to: Kind) -> Result<()> {
        let sql = format!(
            "ALTER TABLE {} ALTER COLUMN {} TYPE {}",
            self.table_sql(),
            ident(&column.name),
            to.decl()
        );
        self.execute(&sql)
    }

    fn relax(&mut self, relaxed: &[String], columns: &[Column<Kind>]) -> Result<()> {
        let table = self.table_sql();
        let sql = relaxed
            .iter()
            .map(|name| {
                let name = columns
                    .iter()
                    .find(|c| c.name.eq_ignore_ascii_case(name))
                    .map_or(name.as_str(), |c| c.name.as_str());
                format!(
                    "ALTER TABLE {table} ALTER COLUMN {} DROP NOT NULL",
                    ident(name)
                )
            })
            .collect::<Vec<_>>()
            .join(";\n");
        self.execute(&sql)
    }

    /// `COPY` the rows, a statement for each set of columns they name (a
    /// row leaving a column to its default names fewer). An upsert copies
    /// into a temporary table, keeps the last row of each key, and inserts
    /// from there with `ON CONFLICT`.
    fn write(&mut self, columns: &[Column<Kind>], rows: Vec<Row>, key: &[String]) -> Result<i64> {
        let mut groups: Vec<(Vec<bool>, Vec<&Row>)> = Vec::new();
        for row in &rows {
            // Most rows name every column: a mask is made only for others.
            let at = match row.lacks_default(columns) {
                true => {
                    let present = row.present(columns);
                    groups
                        .iter()
                        .position(|(p, _)| *p == present)
                        .ok_or(present)
                }
                false => (groups
                    .iter()
                    .position(|(p, _)| p.iter().all(|named| *named)))
                .ok_or_else(|| vec![true; columns.len()]),
            };
            match at {
                Ok(at) => groups[at].1.push(row),
                Err(present) => groups.push((present, vec![row])),
            }
        }
        for (present, members) in &groups {
            let names: Vec<&str> = columns
                .iter()
                .zip(present)
                .filter(|(_, p)| **p)
                .map(|(c, _)| c.name.as_str())
                .collect();
            if self.target.mode != WriteMode::Upsert {
                let text = self.copy_text(columns, present, members)?;
                self.copy(&self.table_sql(), &names, text, members)?;
                continue;
            }
            let members = last_of_each_key(columns, members, key);
            let text = self.copy_text(columns, present, &members)?;
            let quoted = names
                .iter()
                .map(|n| ident(n))
                .collect::<Vec<_>>()
                .join(", ");
            self.execute(&format!(
                "DROP TABLE IF EXISTS pg_temp.hql_upsert; \
                 CREATE TEMPORARY TABLE hql_upsert AS SELECT {quoted} FROM {} WITH NO DATA",
                self.table_sql()
            ))?;
            self.copy("pg_temp.hql_upsert", &names, text, &members)?;
            self.execute(&format!(
                "INSERT INTO {} ({quoted}) SELECT {quoted} FROM pg_temp.hql_upsert{}; \
                 DROP TABLE pg_temp.hql_upsert",
                self.table_sql(),
                table::on_conflict(&names, key)
            ))?;
        }
        Ok(rows.len() as i64)
    }

    fn settle(&mut self) -> Result<()> {
        let settled = self.db.conn.borrow().settle();
        settled.map_err(|failed| self.lost(failed))
    }

    fn first_write(&self) -> bool {
        (self.db.replaced.borrow_mut()).insert(self.target.table.clone())
    }

    fn first_warning(&self) -> bool {
        self.db.warned.borrow_mut().insert(self.target.id.clone())
    }

    fn pending(&self) -> Box<dyn Pending> {
        (self.db.written.borrow_mut()).insert(self.target.table.clone());
        Box::new(Transaction(self.db.clone()))
    }
}

/// Of rows with the same key, the last: one `INSERT … ON CONFLICT` may
/// not change a row twice, and a later record replaces an earlier one.
fn last_of_each_key<'r>(
    columns: &[Column<Kind>],
    rows: &[&'r Row],
    key: &[String],
) -> Vec<&'r Row> {
    let at: Vec<usize> = key
        .iter()
        .filter_map(|k| columns.iter().position(|c| c.name.eq_ignore_ascii_case(k)))
        .collect();
    let mut seen = HashSet::new();
    let mut kept: Vec<&Row> = rows
        .iter()
        .rev()
        .filter(|row| {
            let mut text = String::new();
            for &i in &at {
                if let Some(v) = &row.values[i] {
                    write_json(&mut text, v);
                }
                text.push('\u{1}');
            }
            seen.insert(text)
        })
        .copied()
        .collect();
    kept.reverse();
    kept
}

// -------------------------------------------------------------- transactions

/// The run's connection to a server and its transaction there.
pub(super) struct Db {
    conn: RefCell<Connection>,
    /// The transaction is still open.
    open: Cell<bool>,
    /// The server as messages name it (its URL without the password).
    key: String,
    /// Where recovery finds the server again: the configuration file and
    /// the target's id.
    recover: Option<(std::path::PathBuf, String)>,
    warned: RefCell<HashSet<String>>,
    replaced: RefCell<HashSet<String>>,
    /// The tables whose writes have ended: a later source reads them
    /// through this transaction.
    written: RefCell<HashSet<String>>,
}

impl table::RunDatabase for Db {
    fn is_open(&self) -> bool {
        self.open.get()
    }

    fn key(&self) -> String {
        self.key.clone()
    }

    fn into_any(self: Rc<Self>) -> Rc<dyn std::any::Any> {
        self
    }
}

/// The run's transaction on the server: the one already open, or a new
/// one.
fn transaction(url: &str, target: &TableTarget) -> Result<Rc<Db>> {
    let written = &target.written;
    table::run_database(written, written, || {
        let cannot = |why: String| {
            RuntimeError::new(
                "hql::io",
                format!("cannot write target `{}` on {written}: {why}", target.id),
            )
        };
        let mut client = tls::connect(url).map_err(cannot)?;
        // The text forms a source read in the run's transaction reads.
        client
            .batch_execute(&format!(
                "BEGIN ISOLATION LEVEL READ COMMITTED;\n\
                 SET LOCAL lock_timeout = '{LOCK_WAIT}';\n{TEXT_FORMS}"
            ))
            .map_err(|e| cannot(said(&e)))?;
        Ok(Rc::new(Db {
            conn: RefCell::new(Connection::new(client)),
            open: Cell::new(true),
            key: written.clone(),
            recover: target.recover.clone(),
            warned: RefCell::default(),
            replaced: RefCell::default(),
            written: RefCell::default(),
        }))
    })
}

impl Db {
    fn rollback(&self) {
        if self.open.replace(false) {
            self.conn.borrow_mut().close_with("ROLLBACK");
        }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        self.rollback();
    }
}

/// How long a statement waits for a lock another transaction holds (an
/// `ALTER` behind a reader, say) before the run stops instead of hanging.
const LOCK_WAIT: &str = "30s";

/// The run's hold on the server's transaction.
struct Transaction(Rc<Db>);

/// The table of the runs that committed, one marker row each (as for
/// SQLite): recovery reads it to tell whether the run's database committed.
const RUNS_TABLE: &str = "_hql_runs";

impl Pending for Transaction {
    fn target(&self) -> String {
        self.0.key.clone()
    }

    fn prepare(&mut self, run: &str) -> std::io::Result<()> {
        let db = &self.0;
        if !db.open.get() {
            return Ok(());
        }
        let run = run.to_string();
        let marked = db.conn.borrow().call(move |client| {
            client
                .batch_execute(&format!(
                    "CREATE TABLE IF NOT EXISTS {RUNS_TABLE} (run text PRIMARY KEY, \
                     committed_at timestamptz NOT NULL DEFAULT now())"
                ))
                .and_then(|()| {
                    client.execute(
                        &format!(
                            "INSERT INTO {RUNS_TABLE} (run) VALUES ($1) ON CONFLICT DO NOTHING"
                        ),
                        &[&run],
                    )
                })
                .map(|_| ())
                .map_err(|e| said(&e))
        });
        marked.map_err(|f| std::io::Error::other(format!("{}: {}", db.key, f.why)))
    }

    fn step(&self) -> CommitStep {
        CommitStep::Server {
            server: self.0.key.clone(),
            recover: self.0.recover.clone(),
        }
    }

    fn commit(self: Box<Self>) -> std::io::Result<()> {
        let db = &self.0;
        if !db.open.get() {
            return Ok(());
        }
        let committed =
            (db.conn.borrow()).call(|client| client.batch_execute("COMMIT").map_err(|e| said(&e)));
        match committed {
            Ok(()) => {
                db.open.set(false);
                Ok(())
            }
            Err(f) => {
                db.rollback();
                Err(std::io::Error::other(format!("{}: {}", db.key, f.why)))
            }
        }
    }

    fn abandon(self: Box<Self>) {
        self.0.rollback();
    }
}

/// The run's transaction on the server `written`, when an earlier write of
/// the run ended on the `table` read (or on any, for a query). Within one
/// statement a source reads what was there before the run, on a
/// connection of its own, so that a table can be cleaned in place.
pub(super) fn in_run(written: &str, table: Option<&str>) -> Option<Rc<Db>> {
    let run = table::open_database::<Db>(written)?;
    let ended = run.written.borrow();
    let read = match table {
        Some(t) => ended.contains(t),
        None => !ended.is_empty(),
    };
    drop(ended);
    read.then_some(run)
}

/// The rows of `sql` through a cursor in the run's transaction: what the
/// run has written so far is read. The columns come first.
pub(super) fn cursor_in_run(run: Rc<Db>, sql: String) -> Feed<super::Columns, Option<String>> {
    static CURSORS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let cursor = format!(
        "hql_run_rows_{}",
        CURSORS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let mut opened = false;
    let mut done = false;
    Box::new(move || {
        if done {
            return None;
        }
        let conn = run.conn.borrow();
        let message = if opened {
            let fetched = {
                let cursor = cursor.clone();
                conn.call(move |client| fetch(client, &cursor))
            };
            match fetched {
                Ok(rows) if rows.is_empty() => {
                    let close = format!("CLOSE {cursor}");
                    let _ =
                        conn.call(move |client| client.batch_execute(&close).map_err(|e| said(&e)));
                    None
                }
                Ok(rows) => Some(Message::Rows(rows)),
                Err(failed) => Some(Message::Failed(failed.why)),
            }
        } else {
            opened = true;
            let (sql, cursor) = (sql.clone(), cursor.clone());
            let declared = conn.call(move |client| {
                let columns = describe(client, &sql)?;
                let declare = format!("DECLARE {cursor} NO SCROLL CURSOR FOR {sql}");
                client.batch_execute(&declare).map_err(|e| said(&e))?;
                Ok(columns)
            });
            Some(match declared {
                Ok(columns) => Message::Columns(columns),
                Err(failed) => Message::Failed(failed.why),
            })
        };
        done = !matches!(message, Some(Message::Columns(_) | Message::Rows(_)));
        message
    })
}

/// Did the run `run` commit on the server at `url` (its marker row is
/// there)? An error where the server cannot be asked.
pub fn run_committed(url: &str, run: &str) -> std::result::Result<bool, String> {
    let mut client = tls::connect(url)?;
    let exists = client
        .query_one(
            &format!("SELECT to_regclass('{RUNS_TABLE}') IS NOT NULL"),
            &[],
        )
        .map_err(|e| said(&e))?
        .get::<_, bool>(0);
    if !exists {
        return Ok(false);
    }
    client
        .query_one(
            &format!("SELECT count(*) FROM {RUNS_TABLE} WHERE run = $1"),
            &[&run],
        )
        .map(|r| r.get::<_, i64>(0) > 0)
        .map_err(|e| said(&e))
}
