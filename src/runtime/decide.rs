//! The decisions of §4.8 that both ways of validating make: the value path
//! (`validate`, over a built value) and the token path (`scan`, over a
//! line's bytes or a row's cells). What a rule's outcome is, which rules
//! are not evaluated, what an undeclared field's failure is called and when
//! warnings count: each is written here once, so the two paths differ only
//! in how they reach the values and how much they say about a failure.

use std::rc::Rc;

use crate::runtime::contract::{RecordShape, RuleSpec};
use crate::runtime::eval::{Env, Interp, RuntimeError};
use crate::runtime::kernel::{Bail, InFrame};
use crate::runtime::value::Value;
use crate::syntax::ast::Severity;

/// What kind of broken check a failure or warning is: the `kind` of its
/// record (language.md §4.9). Decided once, named by `name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// The value is not a record.
    NotRecord,
    /// A required field is absent.
    Missing,
    /// A field is null where its type does not admit `Null`.
    Null,
    /// A field's value is not of its type.
    Type,
    /// A `require` is false.
    Require,
    /// A named check of a field is false.
    Check,
    /// A rule's condition raised an error or is not a Bool.
    Eval,
    /// A `warn` is false.
    Warn,
    /// A closed record has a field it does not declare.
    Extra,
    /// A unique key was claimed by an earlier record.
    Unique,
    /// A record does not fit its table's columns.
    SchemaDrift,
    /// The input did not decode.
    Decode,
}

impl FailureKind {
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::NotRecord => "not_record",
            FailureKind::Missing => "missing",
            FailureKind::Null => "null",
            FailureKind::Type => "type",
            FailureKind::Require => "require",
            FailureKind::Check => "check",
            FailureKind::Eval => "eval",
            FailureKind::Warn => "warn",
            FailureKind::Extra => "extra",
            FailureKind::Unique => "unique",
            FailureKind::SchemaDrift => "schema_drift",
            FailureKind::Decode => "decode",
        }
    }
}

/// What a rule came to in a record's frame (steps 5 and 7).
pub enum Outcome {
    /// True, or absent: a rule over an optional field that is missing
    /// (read with `?`) holds.
    Holds,
    /// False.
    Broken,
    /// Another value: the kind of it, with its article ("an Int").
    NotBool(String),
    /// The condition raised an error.
    Raised(RuntimeError),
}

/// Evaluate `rule` in the frame `env`.
pub fn outcome(interp: &Rc<Interp>, rule: &RuleSpec, env: &Env) -> Outcome {
    match interp.eval(&rule.cond, env) {
        Ok(v) => value_outcome(v),
        Err(e) => Outcome::Raised(e),
    }
}

/// Evaluate `rule`, of `record` (`None` for a refinement's), in the frame
/// `env` with its kernel; where the kernel bails, the evaluator raises an
/// error, and is asked for it.
pub fn compiled_outcome(
    interp: &Rc<Interp>,
    rule: &RuleSpec,
    record: Option<&RecordShape>,
    env: &Env,
) -> Outcome {
    match rule.kernel(record).run(interp, env, &InFrame) {
        Ok(v) => value_outcome(v),
        Err(Bail) => outcome(interp, rule, env),
    }
}

/// What a rule whose condition has the value `v` came to.
fn value_outcome(v: Value) -> Outcome {
    match v {
        Value::Bool(true) | Value::Absent => Outcome::Holds,
        Value::Bool(false) => Outcome::Broken,
        other => Outcome::NotBool(other.kind_article()),
    }
}

/// The kind of the failure or warning a rule makes whose condition came
/// to `result` (an error, such as a kernel's `Bail`, is `eval`); `None`
/// when it holds.
pub fn kind_of<E>(rule: &RuleSpec, result: Result<Value, E>) -> Option<FailureKind> {
    match result {
        Ok(v) => value_outcome(v).kind(rule),
        Err(_) => Some(FailureKind::Eval),
    }
}

/// Does a rule whose condition came to `value` hold? (For a caller that
/// needs no more than that.) A kernel that could not decide passes on
/// its `Bail`.
pub fn holds_in<E>(value: Result<Value, E>) -> Result<bool, E> {
    Ok(matches!(value?, Value::Bool(true) | Value::Absent))
}

impl Outcome {
    /// The kind of the failure or warning `rule` makes with this outcome;
    /// `None` when it holds.
    pub fn kind(&self, rule: &RuleSpec) -> Option<FailureKind> {
        match self {
            Outcome::Holds => None,
            Outcome::Broken if rule.severity == Severity::Warn => Some(FailureKind::Warn),
            Outcome::Broken => Some(FailureKind::Require),
            Outcome::NotBool(_) | Outcome::Raised(_) => Some(FailureKind::Eval),
        }
    }
}

/// Step 5: a rule that reads a field which already failed is not
/// evaluated. `failed` is by field position, and may be shorter than the
/// record (a field past its end did not fail).
pub fn skipped(rule: &RuleSpec, failed: &[bool]) -> bool {
    rule.slots
        .iter()
        .any(|&s| failed.get(s as usize).copied().unwrap_or(false))
}

/// Step 7: a record's warnings are evaluated only when it has no failure.
pub fn warns(failures: usize) -> bool {
    failures == 0
}

/// The identity of the failure of a field `key` that a closed record of
/// `owner` does not declare (step 4).
pub fn extra_id(owner: &str, key: &str) -> Rc<str> {
    format!("{owner}.{key}{EXTRA_SUFFIX}").into()
}

/// How an undeclared field's identity ends, after `OWNER.KEY`.
pub const EXTRA_SUFFIX: &str = ".extra";

/// The identity of the failure of a value that is not a record, validated
/// against the record type `name` (step 1).
pub fn not_record_id(name: &str) -> Rc<str> {
    format!("{name}.not_record").into()
}
