//! Expectations (language.md §4.11) in the `--summary` row: each
//! expectation's condition compiled over the counts of the whole result,
//! and a failed one added to `by_rule` as `{rule, kind, count: 1}`, as
//! `report()` adds it.
//!
//! Input: a record type's `ExpectSpec`s. Output: one SQL query of the
//! failed expectations' rows (`rule, kind, n`) over `hql_result`, or the
//! first expectation that does not compile, named with the reason.
//!
//! Every measure but `orphans` compiles (docs/scale.md): `rows` and
//! `failures`, the counts the summary row already has; `missing(f)` and
//! `nulls(f)` over the records as delivered (`hql_j`, or the typed
//! columns; before defaults);
//! `invalid(f)` from the failures' paths; `min`, `max`, `sum` and `avg`
//! of the numbers that passed their checks, read as doubles; `age(f)`, the
//! latest valid instant in microseconds, against `--now` or the engine's
//! clock; `duplicates` and `distinct` over keys of each value's kind and
//! canonical text (`keys`). Each is absent (SQL's NULL) where `hql run`'s is.
//! A condition's absent parts are SQL's NULL: `and`, `or` and `not`
//! are three-valued in both, and an expectation fails only when its
//! condition is false, as in `hql run`. Shares compare exactly
//! (`failures * 100 <= 5 * rows`).

use super::dialect::{Dialect, Kind, Loc, Ty};
use super::{literal, Compiled, NotCompiled};
use crate::runtime::contract::{ExpectCond, ExpectSpec, FieldPath, Measure, Share};
use crate::syntax::ast::BinOp;

/// The counts one expectation reads, one row over `hql_result`: `rows`,
/// `failures`, and its measures `hql_m0`, `hql_m1`, … (`Cond::measure`).
fn measures(d: Dialect, top: &Loc, e: &ExpectSpec) -> String {
    let mut columns = format!(
        "count(*) AS hql_n_rows, count(*) FILTER (WHERE {} > 0) AS hql_n_failures",
        d.failure_count("hql_failures")
    );
    let object = d.is(Kind::Object, &d.kind_of(top), top);
    for (i, m) in e.measures.iter().enumerate() {
        let records = match &m.measure {
            Measure::Missing(f) => format!("NOT coalesce({}, FALSE)", present(d, top, f).0),
            Measure::Nulls(f) => {
                let (present, last) = present(d, top, f);
                let null = d.is(Kind::Null, &d.kind_of(&last), &last);
                format!("coalesce({present} AND {null}, FALSE)")
            }
            Measure::Invalid(f) => failed_at(d, f),
            // Each record's key counted once: `distinct` is how many keys
            // there are, and `duplicates` how many keyed records are not
            // the first of their key.
            Measure::Distinct(f) => {
                let (keyed, key) = keys(d, top, std::slice::from_ref(f), &object);
                columns.push_str(&format!(
                    ", count(DISTINCT CASE WHEN {keyed} THEN {key} END) AS hql_m{i}"
                ));
                continue;
            }
            Measure::Duplicates(fields) => {
                let (keyed, key) = keys(d, top, fields, &object);
                columns.push_str(&format!(
                    ", count(*) FILTER (WHERE {keyed}) - count(DISTINCT CASE WHEN {keyed} THEN {key} END) AS hql_m{i}"
                ));
                continue;
            }
            Measure::Min(f) | Measure::Max(f) | Measure::Sum(f) | Measure::Avg(f) => {
                let aggregate = match m.measure {
                    Measure::Min(_) => "min",
                    Measure::Max(_) => "max",
                    Measure::Sum(_) => "sum",
                    _ => "avg",
                };
                let (counted, last) = passed(d, top, f, Kind::Number, &object);
                columns.push_str(&format!(
                    ", {aggregate}(CASE WHEN {counted} THEN {} END) AS hql_m{i}",
                    d.read(&last, Ty::Float)
                ));
                continue;
            }
            // The latest instant, in microseconds; `Cond::sql` takes it from
            // the time measured to.
            Measure::Age { field: f, date } => {
                let (counted, last) = passed(d, top, f, Kind::Text, &object);
                let instant = d.instant_micros(&d.read(&last, Ty::Text), *date);
                columns.push_str(&format!(
                    ", max(CASE WHEN {counted} THEN {instant} END) AS hql_m{i}"
                ));
                continue;
            }
            _ => continue,
        };
        columns.push_str(&format!(
            ", count(*) FILTER (WHERE coalesce({object}, FALSE) AND {records}) AS hql_m{i}"
        ));
    }
    format!("SELECT {columns} FROM hql_result")
}

/// Is the value at `f` present in the record as delivered (every step
/// before the last an object, the last there, null or not)? And where it is.
fn present(d: Dialect, top: &Loc, f: &FieldPath) -> (String, Loc) {
    let mut at = top.clone();
    let mut tests = Vec::new();
    for (i, name) in f.names.iter().enumerate() {
        if i > 0 {
            tests.push(d.is(Kind::Object, &d.kind_of(&at), &at));
        }
        at = d.field(&at, name);
    }
    tests.push(format!("{} IS NOT NULL", d.kind_of(&at)));
    (format!("({})", tests.join(" AND ")), at)
}

/// When a record has a key of `fields` (each present and not null), and
/// the key as text: each value's kind and canonical text, as `unique`
/// keys tell values apart (numbers by value: `5` and `5.0` are one key),
/// with its length before it, so no two keys read alike. A list or record
/// among them stops the query rather than be keyed differently from
/// `hql run`.
fn keys(d: Dialect, top: &Loc, fields: &[FieldPath], object: &str) -> (String, String) {
    let mut keyed = vec![format!("coalesce({object}, FALSE)")];
    let mut parts = Vec::new();
    for f in fields {
        let (present, at) = present(d, top, f);
        let kind = d.kind_of(&at);
        let null = d.is(Kind::Null, &kind, &at);
        keyed.push(format!("coalesce({present} AND NOT {null}, FALSE)"));
        let float = d.read(&at, Ty::Float);
        // Integral doubles below 2^53 are the Ints they equal.
        let number = format!(
            "CASE WHEN {float} = floor({float}) AND abs({float}) < 9007199254740992 \
             THEN 'n' || {} ELSE 'f' || {} END",
            d.to_text(&d.trunc_to_int(&float)),
            d.to_text(&float),
        );
        let key = format!(
            "CASE WHEN {text} THEN 's' || {read_text} WHEN {boolean} THEN 'b' || {read_bool} \
             WHEN {int} THEN 'n' || {read_int} WHEN {num} THEN {number} ELSE {stop} END",
            text = d.is(Kind::Text, &kind, &at),
            read_text = d.read(&at, Ty::Text),
            boolean = d.is(Kind::Bool, &kind, &at),
            read_bool = d.to_text(&d.read(&at, Ty::Bool)),
            int = d.is(Kind::Int, &kind, &at),
            read_int = d.to_text(&d.read(&at, Ty::Int)),
            num = d.is(Kind::Number, &kind, &at),
            stop = d.raise(
                &format!(
                    "the SQL summary keys only scalars, and `{}` holds a list or record here",
                    f.text()
                ),
                d.type_name(Ty::Text)
            ),
        );
        parts.push(format!(
            "CAST(length({key}) AS {}) || ':' || {key}",
            d.type_name(Ty::Text)
        ));
    }
    (keyed.join(" AND "), parts.join(" || "))
}

/// Is the value at `f` one a value measure reads: in a record, present,
/// of `kind`, and without a failure of its own? And where it is.
fn passed(d: Dialect, top: &Loc, f: &FieldPath, kind: Kind, object: &str) -> (String, Loc) {
    let (present, last) = present(d, top, f);
    let of_kind = d.is(kind, &d.kind_of(&last), &last);
    let counted = format!(
        "coalesce({object}, FALSE) AND coalesce({present} AND {of_kind}, FALSE) AND NOT {}",
        failed_at(d, f)
    );
    (counted, last)
}

/// Has the row a failure at `f` or inside it (`items[1].qty` is inside
/// `items`), as `invalid` counts and the value measures leave out?
fn failed_at(d: Dialect, f: &FieldPath) -> String {
    let text = f.text();
    let inside = |mark: &str| d.string(&format!("{text}{mark}"));
    let path = d.failure_field("x", "path");
    let test = format!(
        "{path} = {} OR substr({path}, 1, {}) IN ({}, {})",
        d.string(&text),
        text.chars().count() + 1,
        inside("."),
        inside("["),
    );
    format!(
        "({} > 0)",
        d.failure_count(&d.filter_failures("hql_failures", "x", &test))
    )
}

/// `UNION ALL` parts giving a row `rule, kind, n` for each failed
/// expectation, in declaration order (the summary sorts them with the
/// rest); empty when there are none.
pub(super) fn failed_rows(
    d: Dialect,
    top: &Loc,
    expects: &[ExpectSpec],
    now: Option<i128>,
) -> Compiled<String> {
    let mut out = String::new();
    for e in expects {
        let cond = Cond { d, e, now }.sql(&e.cond)?;
        out.push_str(&format!(
            "\n  UNION ALL SELECT {rule} AS rule, {kind} AS kind, CAST(1 AS BIGINT) AS n \
             FROM ({measures}) hql_m WHERE NOT coalesce({cond}, TRUE)",
            rule = d.string(&e.id),
            kind = d.string(e.kind()),
            measures = measures(d, top, e),
        ));
    }
    Ok(out)
}

/// One expectation's condition, compiled.
struct Cond<'a> {
    d: Dialect,
    e: &'a ExpectSpec,
    /// The time `age` measures to (nanoseconds); `None`, the engine's clock.
    now: Option<i128>,
}

impl Cond<'_> {
    fn refuse<T>(&self, why: String) -> Compiled<T> {
        Err(NotCompiled {
            what: format!("expectation {}", self.e.id),
            why,
        })
    }

    fn sql(&self, c: &ExpectCond) -> Compiled<String> {
        Ok(match c {
            ExpectCond::Measure(m) => self.measure(*m)?,
            ExpectCond::Number(v) => match literal(v, self.d) {
                Some(text) => text,
                None => return self.refuse(format!("the number {v:?} has no SQL literal")),
            },
            ExpectCond::Bool(b) => if *b { "TRUE" } else { "FALSE" }.into(),
            ExpectCond::Neg(a) => format!("(- {})", self.sql(a)?),
            ExpectCond::Arith(op, a, b) | ExpectCond::Compare(op, a, b) => {
                let Some(operator) = operator(*op) else {
                    return self.refuse(format!(
                        "it uses `{}` (HQL's and SQL's differ)",
                        crate::syntax::canonical::binop_text(*op)
                    ));
                };
                format!("({} {operator} {})", self.sql(a)?, self.sql(b)?)
            }
            ExpectCond::Share { op, count, share } => self.share(*op, count, *share)?,
            ExpectCond::Age {
                op,
                measure,
                seconds,
            } => {
                let Some(operator) = operator(*op) else {
                    return self.refuse("its age is compared with an unknown operator".into());
                };
                let now = match self.now {
                    Some(nanos) => nanos.div_euclid(1000).to_string(),
                    None => self.d.now_micros().to_string(),
                };
                let limit = i128::from(*seconds) * 1_000_000;
                format!("(({now} - {}) {operator} {limit})", self.measure(*measure)?)
            }
            ExpectCond::Not(a) => format!("(NOT {})", self.sql(a)?),
            ExpectCond::And(a, b) => format!("({} AND {})", self.sql(a)?, self.sql(b)?),
            ExpectCond::Or(a, b) => format!("({} OR {})", self.sql(a)?, self.sql(b)?),
        })
    }

    fn measure(&self, m: u32) -> Compiled<String> {
        let spec = &self.e.measures[m as usize];
        match &spec.measure {
            Measure::Rows => Ok("hql_n_rows".into()),
            Measure::Failures => Ok("hql_n_failures".into()),
            Measure::Missing(_)
            | Measure::Nulls(_)
            | Measure::Invalid(_)
            | Measure::Min(_)
            | Measure::Max(_)
            | Measure::Sum(_)
            | Measure::Avg(_)
            | Measure::Distinct(_)
            | Measure::Duplicates(_)
            | Measure::Age { .. } => Ok(format!("hql_m{m}")),
            Measure::Orphans { .. } => self.refuse(format!(
                "it measures `{}`: `orphans` compiles to SQL only as an anti-join over a \
                 configured table, which is not compiled yet",
                spec.text
            )),
        }
    }

    /// `count op share` of the rows, exactly: `count * denom op numer * rows`.
    fn share(&self, op: BinOp, count: &ExpectCond, share: Share) -> Compiled<String> {
        let (Ok(numer), Ok(denom)) = (i64::try_from(share.numer), i64::try_from(share.denom))
        else {
            return self.refuse("its share does not fit SQL's 64-bit integers".into());
        };
        let Some(operator) = operator(op) else {
            return self.refuse("its share is compared with an unknown operator".into());
        };
        Ok(format!(
            "({} * {denom} {operator} {numer} * hql_n_rows)",
            self.sql(count)?
        ))
    }
}

/// The operators HQL and SQL mean the same by, over numbers and Bools;
/// not division, whose meaning over Ints differs.
fn operator(op: BinOp) -> Option<&'static str> {
    Some(match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Eq => "=",
        BinOp::Ne => "<>",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        _ => return None,
    })
}
