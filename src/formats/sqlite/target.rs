//! A SQLite table target: records written in the run's one transaction,
//! by batches of [`BATCH`], each compared with the table's live schema
//! (seed `003`, tooling.md "schema drift").
//!
//! Each top-level field of a record is one column (a nested value is one
//! JSON column, so a change inside it is no drift). A record drifts where
//! it has a field the table has no column for (`added`), a value a column
//! takes only by widening — a Float into an `INTEGER` column, a `null` into
//! a `NOT NULL` one (`widened`) —, a value of another kind (`incompatible`),
//! or no value for a `NOT NULL` column without a default (`missing`). The
//! policy (`runtime::eval::policy`) then decides per batch.
//!
//! Every target of one database in a run shares one connection and one
//! transaction (a second would wait on the first's lock): the run commits
//! it when it ends, or rolls it back — and removes a database file the run
//! created — when it stops.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::rc::{Rc, Weak};

use rusqlite::types::{ToSqlOutput, Value as Sql, ValueRef};
use rusqlite::{Connection, ErrorCode, ToSql};

use super::{ident, Class, LOCK_WAIT};
use crate::runtime::contract::Contract;
use crate::runtime::eval::io::{CommitStep, Pending, TableSink};
use crate::runtime::eval::policy::{OnDrift, OnIncompatible, TableTarget, WriteMode};
use crate::runtime::eval::{compare_numbers, Origin, Result, RuntimeError};
use crate::runtime::json::write_json;
use crate::runtime::validate::schema_drift_failure;
use crate::runtime::value::{Key, NumKind, Value};

/// Records compared with the table and written at a time.
pub const BATCH: usize = 10_000;

/// How a batch's records differ from the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Added,
    Widened,
    /// A `null` into a NOT NULL column (a widening, by nullability).
    Nullable,
    Incompatible,
    Missing,
}

impl Change {
    fn name(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Widened => "widened",
            Change::Nullable => "nullable",
            Change::Incompatible => "incompatible",
            Change::Missing => "missing",
        }
    }
}

/// One column of the live schema.
#[derive(Debug, Clone)]
struct Column {
    name: String,
    decl: String,
    class: Class,
    not_null: bool,
    /// Its `DEFAULT` as SQL text.
    default: Option<String>,
}

/// One drift of one record: the field (or column) and how.
type Drift = (Key, Change);

/// The same drift (column names are not case-sensitive in SQL).
fn same(a: &Drift, b: &Drift) -> bool {
    a.1 == b.1 && a.0.eq_ignore_ascii_case(&b.0)
}

/// The drift of a run so far, by column and change, in order of first
/// sight.
#[derive(Default)]
struct Totals(Vec<(Key, Change, i64)>);

impl Totals {
    fn add(&mut self, column: &Key, change: Change, n: i64) {
        match self
            .0
            .iter_mut()
            .find(|(c, ch, _)| *ch == change && c.eq_ignore_ascii_case(column))
        {
            Some(entry) => entry.2 += n,
            None => self.0.push((column.clone(), change, n)),
        }
    }
}

/// Open a table target in the run's transaction on its database.
/// `warn` puts one line on standard error.
pub fn open_target(
    target: &TableTarget,
    shape: Option<&Rc<Contract>>,
    warn: Box<dyn Fn(&str)>,
) -> Result<Box<dyn TableSink>> {
    let db = transaction(&target.path, &target.written)?;
    let mut sink = Sink {
        db,
        target: target.clone(),
        shape: shape.cloned(),
        warn,
        columns: Vec::new(),
        batch: Vec::with_capacity(BATCH.min(1024)),
        totals: Totals::default(),
        aside: Vec::new(),
        written: 0,
        key: Vec::new(),
        params: Vec::new(),
        positions: Vec::new(),
    };
    sink.start()?;
    Ok(Box::new(sink))
}

struct Sink {
    db: Rc<Db>,
    target: TableTarget,
    shape: Option<Rc<Contract>>,
    warn: Box<dyn Fn(&str)>,
    /// The live schema; empty while the table does not exist.
    columns: Vec<Column>,
    batch: Vec<(Value, Option<Origin>)>,
    totals: Totals,
    /// Failure records of records set aside, for the dead letters.
    aside: Vec<Value>,
    written: i64,
    /// The upsert key's columns.
    key: Vec<String>,
    /// Reused per record: each column's value.
    params: Vec<Option<Value>>,
    /// Reused per batch: the column of each field position, by key.
    positions: Vec<(Key, Option<usize>)>,
}

impl Sink {
    fn failed(&self, e: impl std::fmt::Display) -> RuntimeError {
        RuntimeError::new(
            "hql::sqlite",
            format!(
                "target `{}` (table `{}` in {}): {e}",
                self.target.id, self.target.table, self.target.written
            ),
        )
    }

    fn conn(&self) -> &Connection {
        &self.db.conn
    }

    fn execute(&self, sql: &str) -> Result<()> {
        self.conn().execute_batch(sql).map_err(|e| self.failed(e))
    }

    /// Read the live schema, create the table from the contract when it
    /// is missing, and prepare the write mode.
    fn start(&mut self) -> Result<()> {
        self.refresh()?;
        if self.target.mode == WriteMode::Upsert {
            self.key = self.upsert_key()?;
        }
        if self.columns.is_empty() {
            if !self.target.create_table {
                return Err(self.failed("the table does not exist").with_help(
                    "create the table, or set `create_table = true` in its hql.toml entry",
                ));
            }
            if let Some(columns) = self.contract_columns() {
                self.create(&columns)?;
            }
        } else {
            // A run applies `replace` once: its later writes add to it.
            let first = (self.db.replaced.borrow_mut()).insert(self.target.table.clone());
            if self.target.mode == WriteMode::Replace && first {
                self.execute(&format!("DELETE FROM {}", ident(&self.target.table)))?;
            }
            self.unique_index()?;
        }
        Ok(())
    }

    /// `PRAGMA table_info`: the table's columns now.
    fn refresh(&mut self) -> Result<()> {
        let sql = format!("PRAGMA table_info({})", ident(&self.target.table));
        let read = (|| -> rusqlite::Result<Vec<Column>> {
            let mut stmt = self.conn().prepare(&sql)?;
            let rows = stmt.query_map([], |r| {
                let decl: String = r.get(2)?;
                Ok(Column {
                    name: r.get(1)?,
                    class: Class::of_decl(&decl),
                    decl,
                    not_null: r.get::<_, i64>(3)? != 0,
                    default: r.get(4)?,
                })
            })?;
            rows.collect()
        })();
        self.columns = read.map_err(|e| self.failed(e))?;
        Ok(())
    }

    /// The contract's unique key: upsert replaces the row it names.
    fn upsert_key(&self) -> Result<Vec<String>> {
        let record = self.shape.as_ref().and_then(|c| c.record());
        if let Some(r) = record {
            let unique = r
                .uniques
                .first()
                .map(|u| u.slots.as_slice())
                .unwrap_or_default();
            let fields = unique.iter().map(|&s| &r.fields[s as usize]);
            if let Some(f) = fields.clone().find(|f| f.optional || f.ty.admits_null()) {
                // SQL's NULLs are never equal: a row keyed by one would be
                // added again on every run instead of updated.
                return Err(RuntimeError::new(
                    "hql::config",
                    format!(
                        "target `{}`: `mode = \"upsert\"` on the unique key `{}`, whose field `{}` \
                         may be {}",
                        self.target.id,
                        fields.map(|f| f.name.to_string()).collect::<Vec<_>>().join(", "),
                        f.name,
                        if f.optional { "absent" } else { "null" },
                    ),
                )
                .with_help(
                    "make the key's fields required and not nullable, or write with \
                     `mode = \"append\"`",
                ));
            }
        }
        let key = record.and_then(|r| {
            let unique = r.uniques.first()?;
            Some(
                unique
                    .slots
                    .iter()
                    .map(|&s| r.fields[s as usize].name.to_string())
                    .collect(),
            )
        });
        key.ok_or_else(|| {
            self.failed("`mode = \"upsert\"` needs the records' unique key")
                .with_help(
                    "validate the records against a contract with a `unique` key \
                     (`unique id`) before writing them",
                )
        })
    }

    /// The columns a contract's fields give a new table: NOT NULL for a
    /// required field whose type does not admit `Null`.
    fn contract_columns(&self) -> Option<Vec<(String, Class, bool)>> {
        let record = self.shape.as_ref()?.record()?;
        Some(
            record
                .fields
                .iter()
                .map(|f| {
                    let class = Class::of_type(&f.ty).unwrap_or(Class::Any);
                    let not_null = !f.optional && !f.ty.admits_null();
                    (f.name.to_string(), class, not_null)
                })
                .collect(),
        )
    }

    fn create(&mut self, columns: &[(String, Class, bool)]) -> Result<()> {
        if columns.is_empty() {
            return Ok(());
        }
        for (name, _, _) in columns {
            self.nameable(name)?;
        }
        let list = columns
            .iter()
            .map(|(name, class, not_null)| column_sql(name, class.decl(), *not_null, None))
            .collect::<Vec<_>>()
            .join(", ");
        self.execute(&format!(
            "CREATE TABLE {} ({list})",
            ident(&self.target.table)
        ))?;
        self.refresh()?;
        self.unique_index()
    }

    /// The upsert key's UNIQUE index (upsert's `ON CONFLICT` needs one).
    fn unique_index(&self) -> Result<()> {
        if self.key.is_empty() || self.columns.is_empty() {
            return Ok(());
        }
        let name = format!("{}_{}_unique", self.target.table, self.key.join("_"));
        let columns = self.key.iter().map(|k| ident(k)).collect::<Vec<_>>();
        self.execute(&format!(
            "CREATE UNIQUE INDEX IF NOT EXISTS {} ON {} ({})",
            ident(&name),
            ident(&self.target.table),
            columns.join(", ")
        ))
        .map_err(|e| e.with_help("the table's rows must be distinct on the contract's unique key"))
    }

    fn column(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// The column of a record's `i`th field, remembered by position: the
    /// records of one stream mostly share their keys.
    fn column_at(&mut self, i: usize, key: &Key) -> Option<usize> {
        if let Some((k, column)) = self.positions.get(i) {
            if Rc::ptr_eq(k, key) {
                return *column;
            }
        }
        let column = self.column(key);
        if i < self.positions.len() {
            self.positions[i] = (key.clone(), column);
        } else if i == self.positions.len() {
            self.positions.push((key.clone(), column));
        }
        column
    }

    /// How one record differs from the table.
    fn drift_of(&mut self, record: &Value) -> Result<Vec<Drift>> {
        let Value::Record(r) = record else {
            return Err(self.failed(format!(
                "a table row is a record, not {}",
                record.kind_article()
            )));
        };
        let mut drift = Vec::new();
        let mut provided = 0usize;
        for (i, (key, value)) in r.iter().enumerate() {
            let Some(c) = self.column_at(i, key) else {
                drift.push((key.clone(), Change::Added));
                continue;
            };
            provided += 1;
            let column = &self.columns[c];
            let null = matches!(value, Value::Null | Value::Absent);
            if null && column.not_null {
                drift.push((key.clone(), Change::Nullable));
            }
            match fit(column.class, value) {
                Fit::Fits => {}
                Fit::Widened => drift.push((key.clone(), Change::Widened)),
                Fit::Incompatible => drift.push((key.clone(), Change::Incompatible)),
            }
        }
        // A NOT NULL column without a default that the record lacks.
        if provided < self.columns.len() {
            for column in &self.columns {
                let required = column.not_null && column.default.is_none();
                if required && !r.iter().any(|(k, _)| k.eq_ignore_ascii_case(&column.name)) {
                    drift.push((column.name.as_str().into(), Change::Missing));
                }
            }
        }
        Ok(drift)
    }

    /// Compare a batch with the table, apply the policy, write what it
    /// keeps.
    fn flush(&mut self) -> Result<()> {
        let batch = std::mem::take(&mut self.batch);
        if batch.is_empty() {
            return Ok(());
        }
        if self.columns.is_empty() {
            let columns = inferred_columns(&batch);
            self.create(&columns)?;
        }
        let mut drifts = Vec::with_capacity(batch.len());
        let mut seen = Totals::default();
        for (record, _) in &batch {
            let drift = self.drift_of(record)?;
            for (column, change) in &drift {
                seen.add(column, *change, 1);
            }
            drifts.push(drift);
        }
        let residue = if seen.0.is_empty() {
            Vec::new()
        } else {
            self.apply(&seen, &batch)?
        };
        for (column, change, n) in &seen.0 {
            self.totals.add(column, *change, *n);
        }
        self.insert(batch, drifts, &residue)
    }

    /// Apply the policy to a batch's drift: the changes whose records are
    /// set aside.
    fn apply(
        &mut self,
        seen: &Totals,
        batch: &[(Value, Option<Origin>)],
    ) -> Result<Vec<(Key, Change)>> {
        let policy = self.target.schema.clone();
        let all = || seen.0.iter().map(|(c, ch, _)| (c.clone(), *ch)).collect();
        match policy.on_drift {
            OnDrift::Fail => Err(self.refused(&seen.0[0])),
            OnDrift::Quarantine => Ok(all()),
            OnDrift::Ignore => Ok(Vec::new()),
            OnDrift::Warn => {
                // One line a target a run, however many writes and batches:
                // the drift of the first batch that drifts.
                if !self.db.warned.borrow_mut().insert(self.target.id.clone()) {
                    return Ok(Vec::new());
                }
                let drifts: Vec<String> = seen
                    .0
                    .iter()
                    .map(|(column, change, n)| {
                        let what = match change {
                            Change::Added => "the field is not written",
                            _ => "the values are written as they are",
                        };
                        format!(
                            "column `{column}` drifted ({}: {n} record{}): {}; {what}",
                            change.name(),
                            if *n == 1 { "" } else { "s" },
                            self.explain(column, *change),
                        )
                    })
                    .collect();
                (self.warn)(&format!(
                    "warning: target `{}`: {}",
                    self.target.id,
                    drifts.join("; ")
                ));
                Ok(Vec::new())
            }
            OnDrift::Evolve => {
                let mut residue = Vec::new();
                let mut relax = Vec::new();
                for (column, change, _) in &seen.0 {
                    match change {
                        Change::Added => self.add_column(column, batch)?,
                        // SQLite's columns take any value: a type widening
                        // changes no column.
                        Change::Widened if policy.allow_type_widening => {}
                        Change::Nullable if policy.allow_type_widening => {
                            relax.push(column.to_string())
                        }
                        Change::Missing if policy.relax_nullability_on_missing => {
                            relax.push(column.to_string())
                        }
                        _ => residue.push((column.clone(), *change)),
                    }
                }
                if !relax.is_empty() {
                    self.relax(&relax)?;
                }
                self.refresh()?;
                self.positions.clear();
                if let Some(first) = residue.first() {
                    if policy.on_incompatible == OnIncompatible::Fail {
                        let entry = seen
                            .0
                            .iter()
                            .find(|(c, ch, _)| Rc::ptr_eq(c, &first.0) && *ch == first.1)
                            .expect("residue comes from the batch's drift");
                        return Err(self.refused(entry));
                    }
                }
                Ok(residue)
            }
        }
    }

    /// What a change of a column means, in words (never a value).
    fn explain(&self, column: &str, change: Change) -> String {
        let decl = self
            .column(column)
            .map(|c| {
                let c = &self.columns[c];
                if c.decl.is_empty() {
                    "untyped".to_string()
                } else {
                    c.decl.clone()
                }
            })
            .unwrap_or_default();
        let table = &self.target.table;
        match change {
            Change::Added => format!("the table `{table}` has no column `{column}`"),
            Change::Widened => format!(
                "column `{column}` is {decl} and takes the value only by widening (a Float into \
                 an INTEGER column)"
            ),
            Change::Nullable => format!("column `{column}` is NOT NULL and the value is null"),
            Change::Incompatible => {
                format!("column `{column}` is {decl} and the value is of another kind")
            }
            Change::Missing => {
                format!("column `{column}` is NOT NULL and the record has no value for it")
            }
        }
    }

    /// The error of `fail` (or of `evolve`'s residue under
    /// `on_incompatible = "fail"`): nothing of the run is written.
    fn refused(&self, (column, change, n): &(Key, Change, i64)) -> RuntimeError {
        let help = match change {
            Change::Added => {
                "add the column to the table, or choose `schema.on_drift`: \"evolve\" adds it, \
                 \"ignore\" drops the field, \"quarantine\" sets the records aside"
            }
            Change::Missing => {
                "give the records the field, or set `schema.relax_nullability_on_missing = true` \
                 with `on_drift = \"evolve\"`"
            }
            _ => {
                "fix the records or the column, or set `schema.on_drift = \"quarantine\"` \
                 (or `on_incompatible = \"quarantine\"` with \"evolve\") to set them aside"
            }
        };
        RuntimeError::new(
            "hql::schema_drift",
            format!(
                "target `{}`: column `{column}` drifted ({}: {n} record{}): {}; nothing is written",
                self.target.id,
                change.name(),
                if *n == 1 { "" } else { "s" },
                self.explain(column, *change)
            ),
        )
        .with_help(help)
    }

    /// `evolve`: `ALTER TABLE … ADD COLUMN`, typed by the contract's field
    /// or else by the batch's first value.
    fn add_column(&mut self, column: &Key, batch: &[(Value, Option<Origin>)]) -> Result<()> {
        if self.column(column).is_some() {
            return Ok(());
        }
        let declared = self
            .shape
            .as_ref()
            .and_then(|c| c.record())
            .and_then(|r| r.field(column))
            .and_then(|f| Class::of_type(&f.ty));
        let class = declared.or_else(|| {
            batch.iter().find_map(|(v, _)| match v {
                Value::Record(r) => r.get(column).and_then(Class::of_value),
                _ => None,
            })
        });
        let decl = class.unwrap_or(Class::Any).decl();
        self.execute(&format!(
            "ALTER TABLE {} ADD COLUMN {}",
            ident(&self.target.table),
            column_sql(column, decl, false, None)
        ))?;
        self.columns.push(Column {
            name: column.to_string(),
            decl: decl.to_string(),
            class: Class::of_decl(decl),
            not_null: false,
            default: None,
        });
        Ok(())
    }

    /// Drop NOT NULL from `columns`: SQLite cannot alter a column, so the
    /// table is rebuilt inside the run's transaction from its own
    /// `CREATE TABLE` text with those `NOT NULL`s taken out — so its
    /// CHECK and UNIQUE constraints, collations, defaults, primary key and
    /// AUTOINCREMENT stay as they were — and its indexes, triggers and
    /// AUTOINCREMENT counter are made again. A definition the rebuild
    /// cannot read is refused (`hql::config`), before anything is written.
    fn relax(&mut self, relaxed: &[String]) -> Result<()> {
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
        let names = self
            .columns
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

    /// Write the batch's records, but for those whose drift is in
    /// `aside` (set aside as failure records).
    fn insert(
        &mut self,
        batch: Vec<(Value, Option<Origin>)>,
        drifts: Vec<Vec<Drift>>,
        aside: &[(Key, Change)],
    ) -> Result<()> {
        if self.columns.is_empty() {
            return Ok(());
        }
        let db = self.db.clone();
        let full = self.insert_sql(None);
        let mut stmt = db.conn.prepare_cached(&full).map_err(|e| self.failed(e))?;
        for ((record, origin), drift) in batch.into_iter().zip(drifts) {
            if drift.iter().any(|d| aside.iter().any(|a| same(a, d))) {
                let set_aside: Vec<&Drift> = drift
                    .iter()
                    .filter(|d| aside.iter().any(|a| same(a, d)))
                    .collect();
                let failure = self.failure(&record, origin.as_ref(), &set_aside);
                self.aside.push(failure);
                continue;
            }
            let Value::Record(r) = &record else {
                continue;
            };
            let mut params = std::mem::take(&mut self.params);
            params.clear();
            params.resize(self.columns.len(), None);
            for (i, (key, value)) in r.iter().enumerate() {
                if let Some(c) = self.column_at(i, key) {
                    params[c] = Some(value.clone());
                }
            }
            self.params = params;
            // A column the record lacks keeps its default: it is left out
            // of the statement.
            let lacks_default = self
                .params
                .iter()
                .zip(&self.columns)
                .any(|(p, c)| p.is_none() && c.default.is_some());
            let inserted = if lacks_default {
                let present: Vec<bool> = self
                    .params
                    .iter()
                    .zip(&self.columns)
                    .map(|(p, c)| p.is_some() || c.default.is_none())
                    .collect();
                let sql = self.insert_sql(Some(&present));
                let mut own = db.conn.prepare_cached(&sql).map_err(|e| self.failed(e))?;
                self.insert_row(&mut own)
            } else {
                self.insert_row(&mut stmt)
            };
            inserted.map_err(|e| e.from_record(&origin))?;
        }
        Ok(())
    }

    /// Bind the record in `params` and run the statement.
    fn insert_row(&mut self, stmt: &mut rusqlite::Statement) -> Result<()> {
        let mut n = 0;
        for (p, c) in self.params.iter().zip(&self.columns) {
            if p.is_none() && c.default.is_some() {
                continue;
            }
            n += 1;
            if let Some(stored) = p.as_ref().and_then(|v| real_changes(c.class, v)) {
                return Err(self.inexact(&c.name, stored));
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
        self.written += 1;
        Ok(())
    }

    /// A column name SQLite can take: one without a NUL (its SQL text would
    /// end there).
    fn nameable(&self, name: &str) -> Result<()> {
        if !name.contains('\0') {
            return Ok(());
        }
        Err(RuntimeError::new(
            "hql::io",
            format!(
                "target `{}`: column `{}` has a NUL character in its name, which SQLite cannot take",
                self.target.id,
                name.escape_debug()
            ),
        )
        .with_help("rename the field in a `map` before writing"))
    }

    /// A number column `column` cannot hold exactly (the value is not
    /// shown, as for an Int beyond 64 bits).
    fn inexact(&self, column: &str, stored: f64) -> RuntimeError {
        let why = match stored.is_finite() {
            true => "as a REAL it would read back as another number",
            false => "it is beyond the range of a REAL",
        };
        RuntimeError::new(
            "hql::precision",
            format!(
                "target `{}`: column `{column}` cannot hold a record's number exactly: {why}",
                self.target.id
            ),
        )
        .with_help(
            "a number is never rounded silently: store it as a String, or round it in a `map` before writing",
        )
    }

    /// `INSERT INTO t (…) VALUES (…)`, of every column or of `present`
    /// ones; upsert updates the row its key names.
    fn insert_sql(&self, present: Option<&[bool]>) -> String {
        let names: Vec<&str> = self
            .columns
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
            let key = self.key.iter().map(|k| ident(k)).collect::<Vec<_>>();
            let updates = names
                .iter()
                .filter(|n| !self.key.iter().any(|k| k.eq_ignore_ascii_case(n)))
                .map(|n| format!("{0} = excluded.{0}", ident(n)))
                .collect::<Vec<_>>();
            sql.push_str(&format!(" ON CONFLICT ({}) DO ", key.join(", ")));
            if updates.is_empty() {
                sql.push_str("NOTHING");
            } else {
                sql.push_str(&format!("UPDATE SET {}", updates.join(", ")));
            }
        }
        sql
    }

    /// The failure record of a record set aside.
    fn failure(&self, record: &Value, origin: Option<&Origin>, drift: &[&Drift]) -> Value {
        let columns = drift
            .iter()
            .map(|(column, change)| {
                (
                    format!("{}.{column}.schema_drift", self.target.id),
                    column.clone(),
                    format!(
                        "target `{}`: column `{column}` drifted ({}): {}",
                        self.target.id,
                        change.name(),
                        self.explain(column, *change)
                    ),
                )
            })
            .collect();
        schema_drift_failure(self.shape.as_deref(), origin, record.clone(), columns)
    }
}

impl TableSink for Sink {
    fn put(&mut self, record: &Value, origin: Option<&Origin>) -> Result<()> {
        let record = crate::runtime::exec::stages::force(record.clone())?;
        if let Value::Record(r) = &record {
            for key in r.keys() {
                self.nameable(key)?;
            }
        }
        self.batch.push((record, origin.cloned()));
        if self.batch.len() >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn quarantined(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.aside)
    }

    fn dead_letters(&self) -> Option<Option<String>> {
        let schema = &self.target.schema;
        let quarantines = schema.on_drift == OnDrift::Quarantine
            || schema.on_drift == OnDrift::Evolve
                && schema.on_incompatible == OnIncompatible::Quarantine;
        quarantines.then(|| schema.dead_letters.clone())
    }

    fn finish(&mut self) -> Result<(i64, Value)> {
        self.flush()?;
        let drift = self
            .totals
            .0
            .iter()
            .map(|(column, change, n)| {
                let mut r = crate::runtime::value::Record::default();
                r.insert("column".into(), Value::str(&**column));
                r.insert("change".into(), Value::str(change.name()));
                r.insert("count".into(), Value::Int(*n));
                Value::record(r)
            })
            .collect();
        Ok((self.written, Value::list(drift)))
    }

    fn into_pending(self: Box<Self>) -> Box<dyn Pending> {
        Box::new(Transaction(self.db.clone()))
    }
}

/// A column's definition in `CREATE TABLE` / `ADD COLUMN`.
fn column_sql(name: &str, decl: &str, not_null: bool, default: Option<&str>) -> String {
    let mut sql = ident(name);
    if !decl.is_empty() {
        sql.push(' ');
        sql.push_str(decl);
    }
    if not_null {
        sql.push_str(" NOT NULL");
    }
    if let Some(d) = default {
        sql.push_str(" DEFAULT ");
        sql.push_str(d);
    }
    sql
}

/// A new table's columns when no contract describes the records: each
/// field in order of first sight, typed by its first value; none NOT NULL.
fn inferred_columns(batch: &[(Value, Option<Origin>)]) -> Vec<(String, Class, bool)> {
    let mut columns: Vec<(String, Option<Class>)> = Vec::new();
    for (record, _) in batch {
        let Value::Record(r) = record else { continue };
        for (key, value) in r.iter() {
            let class = Class::of_value(value);
            match columns
                .iter_mut()
                .find(|(c, _)| c.eq_ignore_ascii_case(key))
            {
                Some((_, known @ None)) => *known = class,
                Some(_) => {}
                None => columns.push((key.to_string(), class)),
            }
        }
    }
    columns
        .into_iter()
        .map(|(name, class)| (name, class.unwrap_or(Class::Any), false))
        .collect()
}

enum Fit {
    Fits,
    Widened,
    Incompatible,
}

/// Does a value fit a column as it is, by widening, or not at all? A
/// string of numeric text fits a number column (SQLite stores it as the
/// number); `null` is the nullability check's.
fn fit(class: Class, v: &Value) -> Fit {
    let int = v.is_int();
    let number = v.is_number();
    let fits = match (class, v) {
        (_, Value::Null | Value::Absent) | (Class::Any, _) => true,
        (Class::Int, _) if int => true,
        (Class::Int, _) if number => return Fit::Widened,
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
    let int = |i: i64| {
        let f = i as f64;
        (class == Class::Float && f as i128 != i128::from(i)).then_some(f)
    };
    match v {
        Value::Int(i) => int(*i),
        Value::Num(n) => match n.kind {
            NumKind::Int(i) => int(i),
            NumKind::Float(f) if !f.is_finite() => Some(f),
            NumKind::Float(f) => {
                let same = compare_numbers(&Value::Float(f), v) == Some(std::cmp::Ordering::Equal);
                (!same).then_some(f)
            }
            NumKind::BigInt => None,
        },
        _ => None,
    }
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

thread_local! {
    /// The databases with a transaction open on this thread (a run).
    static OPEN: RefCell<Vec<Weak<Db>>> = const { RefCell::new(Vec::new()) };
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
    let open = OPEN.with(|open| {
        let mut open = open.borrow_mut();
        open.retain(|db| db.strong_count() > 0);
        let open: Vec<Rc<Db>> = open
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|db| db.open.get())
            .collect();
        match open.iter().find(|db| db.key == key) {
            Some(db) => Some(Ok(db.clone())),
            None => open.first().map(|db| Err(db.key.clone())),
        }
    });
    match open {
        Some(Ok(db)) => return Ok(db),
        Some(Err(other)) => {
            return Err(RuntimeError::new(
                "hql::config",
                format!(
                    "cannot write {written}: this run already writes the database {}, and a run \
                     writes at most one",
                    other.display()
                ),
            )
            .with_help(
                "a database and files commit together only for one database: write the other \
                 database in a run of its own",
            ))
        }
        None => {}
    }
    let existed = path.exists();
    let conn = Connection::open(path).map_err(|e| cannot(e.to_string()))?;
    let db = Rc::new(Db {
        conn,
        open: Cell::new(false),
        created: (!existed).then(|| path.to_path_buf()),
        key,
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
    OPEN.with(|open| open.borrow_mut().push(Rc::downgrade(&db)));
    Ok(db)
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
