//! A table target of any database (tooling.md, "schema drift"): records
//! written in the run's one transaction, by batches of [`BATCH`], each
//! compared with the table's live schema and the drift policy applied
//! (seed `003`). What is the same for every database lives here, once:
//! what a drift is, the policies, the write modes, the messages, the
//! failure records of records set aside. What a database does its own
//! way — reading its catalog, typing its columns, altering them, loading
//! rows — is its [`Store`] (`sqlite/target.rs`, `postgres/target.rs`).
//!
//! Each top-level field of a record is one column (a nested value is one
//! JSON column, so a change inside it is no drift). A record drifts where
//! it has a field the table has no column for (`added`), a value a column
//! takes only once widened (`widened`), a `null` for a NOT NULL column
//! (`nullable`), a value of another kind (`incompatible`), or no value for
//! a NOT NULL column without a default (`missing`).
//!
//! A run writes at most one database, and every target of it shares one
//! connection and one transaction ([`run_database`]), which the run
//! commits when it ends or abandons when it stops.

use std::any::Any;
use std::cell::RefCell;
use std::rc::{Rc, Weak};

use crate::runtime::contract::{Contract, TypeSpec};
use crate::runtime::eval::io::{Pending, TableSink};
use crate::runtime::eval::policy::{OnDrift, OnIncompatible, TableTarget, WriteMode};
use crate::runtime::eval::{compare_numbers, Origin, Result, RuntimeError};
use crate::runtime::validate::schema_drift_failure;
use crate::runtime::value::{Key, NumKind, Record, Value};

/// Records compared with the table and written at a time.
pub const BATCH: usize = 10_000;

/// How a batch's records differ from the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
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

/// One column of the live schema, typed as its database types it.
#[derive(Debug, Clone)]
pub(crate) struct Column<K> {
    pub name: String,
    /// Its type as the catalog writes it (empty: none).
    pub decl: String,
    pub kind: K,
    pub not_null: bool,
    /// Its `DEFAULT` as SQL text (or how the database fills it).
    pub default: Option<String>,
}

/// Does a value fit a column as it is, once the column is widened to a
/// kind, or not at all? `null` is the nullability check's.
pub(crate) enum Fit<K> {
    Fits,
    Widened(K),
    Incompatible,
}

/// A record to write: each column's value (`None`: the record has no
/// field for it), and where the record came from.
pub(crate) struct Row {
    pub values: Vec<Option<Value>>,
    pub origin: Option<Origin>,
}

impl Row {
    /// Does this row leave out a column the table fills by default? Such a
    /// column is left out of the row's statement, so its default applies.
    pub fn lacks_default<K>(&self, columns: &[Column<K>]) -> bool {
        self.values
            .iter()
            .zip(columns)
            .any(|(v, c)| v.is_none() && c.default.is_some())
    }

    /// The columns the row's statement names: all but those it leaves to
    /// their defaults.
    pub fn present<K>(&self, columns: &[Column<K>]) -> Vec<bool> {
        self.values
            .iter()
            .zip(columns)
            .map(|(v, c)| v.is_some() || c.default.is_none())
            .collect()
    }
}

/// What one database does its own way under a [`TableSink`].
pub(crate) trait Store {
    /// How the database types a column.
    type Kind: Copy + PartialEq + std::fmt::Debug;

    /// The database's name in messages (`SQLite`, `PostgreSQL`).
    const NAME: &'static str;
    /// The code of an error the database reports.
    const CODE: &'static str;

    /// The target written.
    fn target(&self) -> &TableTarget;

    /// The table's columns now; none when it does not exist.
    fn columns(&mut self) -> Result<Vec<Column<Self::Kind>>>;

    /// The kind of column an HQL type gives (`create_table`, `evolve`).
    fn kind_of_type(&self, ty: &TypeSpec) -> Self::Kind;

    /// The kind of column a contract's field gives: its type's, unless
    /// the target says otherwise.
    fn kind_of_field(&self, _name: &str, ty: &TypeSpec) -> Self::Kind {
        self.kind_of_type(ty)
    }

    /// The kind of column a value gives, for a column made from records
    /// alone; `None` for `null`.
    fn kind_of_value(&self, v: &Value) -> Option<Self::Kind>;

    /// The kind of a column whose values nothing types.
    fn any(&self) -> Self::Kind;

    /// A kind as a column's type in SQL.
    fn decl(&self, kind: Self::Kind) -> String;

    /// How `v` fits `column`.
    fn fit(&self, column: &Column<Self::Kind>, v: &Value) -> Fit<Self::Kind>;

    /// The narrower of two widenings a column needs is the wider one.
    fn wider(&self, a: Self::Kind, b: Self::Kind) -> Self::Kind;

    /// Does a column take values its type does not (SQLite's dynamic
    /// types), so that `warn` and `ignore` can write them as they are?
    fn takes_any_value(&self) -> bool;

    /// How a widening reads in a message, to the kind `to` when known.
    fn widening(&self, to: Option<Self::Kind>) -> String;

    /// Run SQL that changes the schema (in the run's transaction).
    fn execute(&mut self, sql: &str) -> Result<()>;

    /// The table's name in SQL.
    fn table_sql(&self) -> String;

    /// Widen `column` to `to`.
    fn widen(&mut self, column: &Column<Self::Kind>, to: Self::Kind) -> Result<()>;

    /// Drop NOT NULL from `relaxed`, of the table's `columns`.
    fn relax(&mut self, relaxed: &[String], columns: &[Column<Self::Kind>]) -> Result<()>;

    /// Write `rows` (upserting on `key` when it is not empty); how many.
    fn write(
        &mut self,
        columns: &[Column<Self::Kind>],
        rows: Vec<Row>,
        key: &[String],
    ) -> Result<i64>;

    /// Wait until every row handed to the database is written (a store
    /// that writes as it goes has nothing to wait for).
    fn settle(&mut self) -> Result<()> {
        Ok(())
    }

    /// Is this the run's first write to the table (`replace` applies once)?
    fn first_write(&self) -> bool;

    /// Is this the run's first drift warning of the target?
    fn first_warning(&self) -> bool;

    /// The run's transaction, for the run to commit or abandon.
    fn pending(&self) -> Box<dyn Pending>;
}

/// `name`, quoted as an SQL identifier.
pub(crate) fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A column's definition in `CREATE TABLE` / `ADD COLUMN`.
pub(crate) fn column_sql(name: &str, decl: &str, not_null: bool) -> String {
    let mut sql = ident(name);
    if !decl.is_empty() {
        sql.push(' ');
        sql.push_str(decl);
    }
    if not_null {
        sql.push_str(" NOT NULL");
    }
    sql
}

/// An error of `target`'s database.
pub(crate) fn failed<S: Store>(target: &TableTarget, e: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::new(
        S::CODE,
        format!(
            "target `{}` (table `{}` in {}): {e}",
            target.id, target.table, target.written
        ),
    )
}

/// The double a column of doubles would store for `v`, when it differs in
/// value from `v`: a decimal no double holds (`1e-400`, twenty digits);
/// an integer past 2^53 (`9007199254740993` → `9007199254740992`) when
/// `ints_too`, as a column of doubles turns it into one.
pub(crate) fn double_changes(v: &Value, ints_too: bool) -> Option<f64> {
    let int = |i: i64| {
        let f = i as f64;
        (ints_too && f as i128 != i128::from(i)).then_some(f)
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

/// A number `column` cannot hold exactly (the value is not shown, as for
/// an Int beyond 64 bits).
pub(crate) fn inexact(target: &TableTarget, column: &str, stored: f64, what: &str) -> RuntimeError {
    let why = match stored.is_finite() {
        true => format!("as a {what} it would read back as another number"),
        false => format!("it is beyond the range of a {what}"),
    };
    RuntimeError::new(
        "hql::precision",
        format!(
            "target `{}`: column `{column}` cannot hold a record's number exactly: {why}",
            target.id
        ),
    )
    .with_help(
        "a number is never rounded silently: store it as a String, or round it in a `map` before writing",
    )
}

/// Open a table target on `store`: read the live schema, create the table
/// from the contract when it is missing, and prepare the write mode.
pub(crate) fn open<S: Store + 'static>(
    store: S,
    shape: Option<&Rc<Contract>>,
    warn: Box<dyn Fn(&str)>,
) -> Result<Box<dyn TableSink>> {
    let mut sink = Sink {
        store,
        shape: shape.cloned(),
        warn,
        columns: Vec::new(),
        batch: Vec::with_capacity(BATCH.min(1024)),
        totals: Totals::default(),
        widen_to: Vec::new(),
        aside: Vec::new(),
        written: 0,
        key: Vec::new(),
        positions: Vec::new(),
    };
    sink.start()?;
    Ok(Box::new(sink))
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

struct Sink<S: Store> {
    store: S,
    shape: Option<Rc<Contract>>,
    warn: Box<dyn Fn(&str)>,
    /// The live schema; empty while the table does not exist.
    columns: Vec<Column<S::Kind>>,
    batch: Vec<(Value, Option<Origin>)>,
    totals: Totals,
    /// The batch's widenings: the kind each widened column must become.
    widen_to: Vec<(Key, S::Kind)>,
    /// Failure records of records set aside, for the dead letters.
    aside: Vec<Value>,
    written: i64,
    /// The upsert key's columns.
    key: Vec<String>,
    /// Reused per batch: the column of each field position, by key.
    positions: Vec<(Key, Option<usize>)>,
}

impl<S: Store> Sink<S> {
    fn target(&self) -> &TableTarget {
        self.store.target()
    }

    fn failed(&self, e: impl std::fmt::Display) -> RuntimeError {
        failed::<S>(self.target(), e)
    }

    fn start(&mut self) -> Result<()> {
        self.refresh()?;
        if self.target().mode == WriteMode::Upsert {
            self.key = self.upsert_key()?;
        }
        // A run applies `replace` once, to the table as it found it (or
        // made it): its later writes add to it.
        let first = self.store.first_write();
        if self.columns.is_empty() {
            if !self.target().create_table {
                return Err(self.failed("the table does not exist").with_help(
                    "create the table, or set `create_table = true` in its hql.toml entry",
                ));
            }
            if let Some(columns) = self.contract_columns() {
                self.create(&columns)?;
            }
        } else {
            if self.target().mode == WriteMode::Replace && first {
                let sql = format!("DELETE FROM {}", self.store.table_sql());
                self.store.execute(&sql)?;
            }
            self.unique_index()?;
        }
        Ok(())
    }

    /// The table's columns now.
    fn refresh(&mut self) -> Result<()> {
        self.columns = self.store.columns()?;
        self.positions.clear();
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
                        self.target().id,
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
    fn contract_columns(&self) -> Option<Vec<(String, S::Kind, bool)>> {
        let record = self.shape.as_ref()?.record()?;
        Some(
            record
                .fields
                .iter()
                .map(|f| {
                    let kind = self.store.kind_of_field(&f.name, &f.ty);
                    let not_null = !f.optional && !f.ty.admits_null();
                    (f.name.to_string(), kind, not_null)
                })
                .collect(),
        )
    }

    fn create(&mut self, columns: &[(String, S::Kind, bool)]) -> Result<()> {
        if columns.is_empty() {
            return Ok(());
        }
        for (name, _, _) in columns {
            self.nameable(name)?;
        }
        let list = columns
            .iter()
            .map(|(name, kind, not_null)| column_sql(name, &self.store.decl(*kind), *not_null))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!("CREATE TABLE {} ({list})", self.store.table_sql());
        self.store.execute(&sql)?;
        self.refresh()?;
        self.unique_index()
    }

    /// The upsert key's UNIQUE index (upsert's `ON CONFLICT` needs one).
    fn unique_index(&mut self) -> Result<()> {
        if self.key.is_empty() || self.columns.is_empty() {
            return Ok(());
        }
        let table = &self.target().table;
        let last = table.rsplit('.').next().unwrap_or(table);
        let name = format!("{last}_{}_unique", self.key.join("_"));
        let columns = self.key.iter().map(|k| ident(k)).collect::<Vec<_>>();
        let sql = format!(
            "CREATE UNIQUE INDEX IF NOT EXISTS {} ON {} ({})",
            ident(&name),
            self.store.table_sql(),
            columns.join(", ")
        );
        self.store.execute(&sql).map_err(|e| {
            e.with_help("the table's rows must be distinct on the contract's unique key")
        })
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
            match self.store.fit(column, value) {
                Fit::Fits => {}
                Fit::Widened(to) => {
                    drift.push((key.clone(), Change::Widened));
                    self.widen(key, to);
                }
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

    /// Note that the batch needs `column` widened to `to` at least.
    fn widen(&mut self, column: &Key, to: S::Kind) {
        match self
            .widen_to
            .iter_mut()
            .find(|(c, _)| c.eq_ignore_ascii_case(column))
        {
            Some((_, kind)) => *kind = self.store.wider(*kind, to),
            None => self.widen_to.push((column.clone(), to)),
        }
    }

    fn widened_to(&self, column: &str) -> Option<S::Kind> {
        self.widen_to
            .iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(column))
            .map(|(_, kind)| *kind)
    }

    /// Compare a batch with the table, apply the policy, write what it
    /// keeps.
    fn flush(&mut self) -> Result<()> {
        let batch = std::mem::take(&mut self.batch);
        if batch.is_empty() {
            return Ok(());
        }
        if self.columns.is_empty() {
            let columns = self.inferred_columns(&batch);
            self.create(&columns)?;
        }
        self.widen_to.clear();
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
        let policy = self.target().schema.clone();
        let all = || seen.0.iter().map(|(c, ch, _)| (c.clone(), *ch)).collect();
        let as_is = |change: &Change| *change == Change::Added || self.store.takes_any_value();
        match policy.on_drift {
            OnDrift::Fail => Err(self.refused(&seen.0[0])),
            OnDrift::Quarantine => Ok(all()),
            OnDrift::Warn | OnDrift::Ignore if !seen.0.iter().all(|(_, ch, _)| as_is(ch)) => {
                let entry = seen.0.iter().find(|(_, ch, _)| !as_is(ch));
                Err(self.not_as_is(entry.expect("a change the table cannot take")))
            }
            OnDrift::Ignore => Ok(Vec::new()),
            OnDrift::Warn => {
                // One line a target a run, however many writes and batches:
                // the drift of the first batch that drifts.
                if !self.store.first_warning() {
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
                    self.target().id,
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
                        Change::Widened if policy.allow_type_widening => {
                            let to = self.widened_to(column);
                            let at = self.column(column);
                            if let (Some(to), Some(at)) = (to, at) {
                                let current = self.columns[at].clone();
                                self.store.widen(&current, to)?;
                            }
                        }
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
                    self.store.relax(&relax, &self.columns)?;
                }
                self.refresh()?;
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
        let table = &self.target().table;
        match change {
            Change::Added => format!("the table `{table}` has no column `{column}`"),
            Change::Widened => format!(
                "column `{column}` is {decl} and takes the value only by widening {}",
                self.store.widening(self.widened_to(column))
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
                self.target().id,
                change.name(),
                if *n == 1 { "" } else { "s" },
                self.explain(column, *change)
            ),
        )
        .with_help(help)
    }

    /// `warn` and `ignore` write values as they are; a column whose type
    /// cannot take one (any column but SQLite's) stops the run instead.
    fn not_as_is(&self, (column, change, n): &(Key, Change, i64)) -> RuntimeError {
        RuntimeError::new(
            "hql::schema_drift",
            format!(
                "target `{}`: column `{column}` drifted ({}: {n} record{}): {}; {} cannot store \
                 the values as they are, so nothing is written",
                self.target().id,
                change.name(),
                if *n == 1 { "" } else { "s" },
                self.explain(column, *change),
                S::NAME,
            ),
        )
        .with_help(
            "set `schema.on_drift = \"evolve\"` (with `allow_type_widening = true` for a widening \
             or a null) to change the column, or \"quarantine\" to set the records aside",
        )
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
            .map(|f| self.store.kind_of_field(&f.name, &f.ty));
        let kind = declared.or_else(|| {
            batch.iter().find_map(|(v, _)| match v {
                Value::Record(r) => r.get(column).and_then(|v| self.store.kind_of_value(v)),
                _ => None,
            })
        });
        let decl = self.store.decl(kind.unwrap_or_else(|| self.store.any()));
        let sql = format!(
            "ALTER TABLE {} ADD COLUMN {}",
            self.store.table_sql(),
            column_sql(column, &decl, false)
        );
        self.store.execute(&sql)?;
        self.refresh()
    }

    /// A new table's columns when no contract describes the records: each
    /// field in order of first sight, typed by its first value; none NOT
    /// NULL.
    fn inferred_columns(&self, batch: &[(Value, Option<Origin>)]) -> Vec<(String, S::Kind, bool)> {
        let mut columns: Vec<(String, Option<S::Kind>)> = Vec::new();
        for (record, _) in batch {
            let Value::Record(r) = record else { continue };
            for (key, value) in r.iter() {
                let kind = self.store.kind_of_value(value);
                match columns
                    .iter_mut()
                    .find(|(c, _)| c.eq_ignore_ascii_case(key))
                {
                    Some((_, known @ None)) => *known = kind,
                    Some(_) => {}
                    None => columns.push((key.to_string(), kind)),
                }
            }
        }
        columns
            .into_iter()
            .map(|(name, kind)| (name, kind.unwrap_or_else(|| self.store.any()), false))
            .collect()
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
        let mut rows = Vec::with_capacity(batch.len());
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
            let mut values = vec![None; self.columns.len()];
            for (i, (key, value)) in r.iter().enumerate() {
                if let Some(c) = self.column_at(i, key) {
                    values[c] = Some(value.clone());
                }
            }
            rows.push(Row { values, origin });
        }
        self.written += self.store.write(&self.columns, rows, &self.key)?;
        Ok(())
    }

    /// A column name the database can take: one without a NUL (its SQL
    /// text would end there).
    fn nameable(&self, name: &str) -> Result<()> {
        if !name.contains('\0') {
            return Ok(());
        }
        Err(RuntimeError::new(
            "hql::io",
            format!(
                "target `{}`: column `{}` has a NUL character in its name, which {} cannot take",
                self.target().id,
                name.escape_debug(),
                S::NAME
            ),
        )
        .with_help("rename the field in a `map` before writing"))
    }

    /// The failure record of a record set aside.
    fn failure(&self, record: &Value, origin: Option<&Origin>, drift: &[&Drift]) -> Value {
        let id = &self.target().id;
        let columns = drift
            .iter()
            .map(|(column, change)| {
                (
                    format!("{id}.{column}.schema_drift"),
                    column.clone(),
                    format!(
                        "target `{id}`: column `{column}` drifted ({}): {}",
                        change.name(),
                        self.explain(column, *change)
                    ),
                )
            })
            .collect();
        schema_drift_failure(self.shape.as_deref(), origin, record.clone(), columns)
    }
}

impl<S: Store> TableSink for Sink<S> {
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
        let schema = &self.target().schema;
        let quarantines = schema.on_drift == OnDrift::Quarantine
            || schema.on_drift == OnDrift::Evolve
                && schema.on_incompatible == OnIncompatible::Quarantine;
        quarantines.then(|| schema.dead_letters.clone())
    }

    fn finish(&mut self) -> Result<(i64, Value)> {
        self.flush()?;
        self.store.settle()?;
        let drift = self
            .totals
            .0
            .iter()
            .map(|(column, change, n)| {
                let mut r = Record::default();
                r.insert("column".into(), Value::str(&**column));
                r.insert("change".into(), Value::str(change.name()));
                r.insert("count".into(), Value::Int(*n));
                Value::record(r)
            })
            .collect();
        Ok((self.written, Value::list(drift)))
    }

    fn into_pending(self: Box<Self>) -> Box<dyn Pending> {
        self.store.pending()
    }
}

// ------------------------------------------------------- the run's database

/// A database a run holds a transaction on.
pub(crate) trait RunDatabase: Any {
    /// Is the run's transaction still open?
    fn is_open(&self) -> bool;
    /// The database, to be told apart from others (a canonical path, a
    /// server's URL without its password).
    fn key(&self) -> String;
    fn into_any(self: Rc<Self>) -> Rc<dyn Any>;
}

thread_local! {
    /// The databases with a transaction open on this thread (a run).
    static OPEN: RefCell<Vec<Weak<dyn RunDatabase>>> = const { RefCell::new(Vec::new()) };
}

/// The run's open transaction on the database `key`, if it has one.
pub(crate) fn open_database<D: RunDatabase>(key: &str) -> Option<Rc<D>> {
    let found = OPEN.with(|open| {
        (open.borrow().iter())
            .filter_map(Weak::upgrade)
            .find(|db| db.is_open() && db.key() == key)
    });
    found?.into_any().downcast::<D>().ok()
}

/// The run's transaction on the database `key`: the one already open, or
/// a new one `open` begins. A run writes at most one database: another
/// one's is an error naming both.
pub(crate) fn run_database<D: RunDatabase>(
    key: &str,
    written: &str,
    open: impl FnOnce() -> Result<Rc<D>>,
) -> Result<Rc<D>> {
    let found = OPEN.with(|open| {
        let mut open = open.borrow_mut();
        open.retain(|db| db.strong_count() > 0);
        let open: Vec<Rc<dyn RunDatabase>> = open
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|db| db.is_open())
            .collect();
        match open.iter().find(|db| db.key() == key) {
            Some(db) => Some(Ok(db.clone())),
            None => open.first().map(|db| Err(db.key())),
        }
    });
    match found {
        Some(Ok(db)) => {
            return db.into_any().downcast::<D>().map_err(|_| {
                RuntimeError::new(
                    "hql::config",
                    format!(
                        "cannot write {written}: this run opened it as another kind of database"
                    ),
                )
            })
        }
        Some(Err(other)) => {
            return Err(RuntimeError::new(
                "hql::config",
                format!(
                    "cannot write {written}: this run already writes the database {other}, and a \
                     run writes at most one"
                ),
            )
            .with_help(
                "a database and files commit together only for one database: write the other \
                 database in a run of its own",
            ))
        }
        None => {}
    }
    let db = open()?;
    let weak: Weak<dyn RunDatabase> = Rc::downgrade(&(db.clone() as Rc<dyn RunDatabase>));
    OPEN.with(|open| open.borrow_mut().push(weak));
    Ok(db)
}

/// Upsert's `ON CONFLICT` clause for a statement naming `names`: the row
/// the `key` names takes the other columns' new values.
pub(crate) fn on_conflict(names: &[&str], key: &[String]) -> String {
    let quoted = key.iter().map(|k| ident(k)).collect::<Vec<_>>();
    let updates = names
        .iter()
        .filter(|n| !key.iter().any(|k| k.eq_ignore_ascii_case(n)))
        .map(|n| format!("{0} = excluded.{0}", ident(n)))
        .collect::<Vec<_>>();
    let mut sql = format!(" ON CONFLICT ({}) DO ", quoted.join(", "));
    if updates.is_empty() {
        sql.push_str("NOTHING");
    } else {
        sql.push_str(&format!("UPDATE SET {}", updates.join(", ")));
    }
    sql
}
