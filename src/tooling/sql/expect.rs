//! Expectations (language.md §4.11) in the `--summary` row: each
//! expectation's condition compiled over the counts of the whole result,
//! and a failed one added to `by_rule` as `{rule, kind, count: 1}`, as
//! `report()` adds it.
//!
//! Input: a record type's `ExpectSpec`s. Output: one SQL query of the
//! failed expectations' rows (`rule, kind, n`) over `hql_result`, or the
//! first expectation that does not compile, named with the reason.
//!
//! The measures compiled so far are `rows` and `failures`, the counts the
//! summary row already has (every line read, decode and not-a-record ones
//! too). A condition's absent parts are SQL's NULL: `and`, `or` and `not`
//! are three-valued in both, and an expectation fails only when its
//! condition is false, as in `hql run`. Shares compare exactly
//! (`failures * 100 <= 5 * rows`).

use super::dialect::Dialect;
use super::{literal, Compiled, NotCompiled};
use crate::runtime::contract::{ExpectCond, ExpectSpec, Measure, Share};
use crate::syntax::ast::BinOp;

/// The counts the conditions read, one row over `hql_result`.
fn measures(d: Dialect) -> String {
    format!(
        "SELECT count(*) AS hql_n_rows, count(*) FILTER (WHERE {} > 0) AS hql_n_failures \
         FROM hql_result",
        d.size("hql_failures")
    )
}

/// `UNION ALL` parts giving a row `rule, kind, n` for each failed
/// expectation, in declaration order (the summary sorts them with the
/// rest); empty when there are none.
pub(super) fn failed_rows(d: Dialect, expects: &[ExpectSpec]) -> Compiled<String> {
    let mut out = String::new();
    for e in expects {
        let cond = Cond { d, e }.sql(&e.cond)?;
        out.push_str(&format!(
            "\n  UNION ALL SELECT {rule} AS rule, {kind} AS kind, CAST(1 AS BIGINT) AS n \
             FROM ({measures}) hql_m WHERE NOT coalesce({cond}, TRUE)",
            rule = d.string(&e.id),
            kind = d.string(e.kind()),
            measures = measures(d),
        ));
    }
    Ok(out)
}

/// One expectation's condition, compiled.
struct Cond<'a> {
    d: Dialect,
    e: &'a ExpectSpec,
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
            ExpectCond::Age { measure, .. } => self.measure(*measure)?,
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
            Measure::Orphans { .. } => self.refuse(format!(
                "it measures `{}`: `orphans` compiles to SQL only as an anti-join over a \
                 configured table, which is not compiled yet",
                spec.text
            )),
            _ => self.refuse(format!(
                "it measures `{}` (only `rows` and `failures` compile to SQL yet)",
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
