//! Operators over values (language.md §3, §4.4): structural equality, exact
//! numeric comparison, checked arithmetic, field and index reads. An absent
//! operand makes the result absent.

use std::cmp::Ordering;

use super::equality::{compare, equal};
use super::{Result, RuntimeError};
use crate::runtime::hir::Logic;
use crate::runtime::value::{NumKind, Value};
use crate::syntax::ast::BinOp;

pub fn binary(op: BinOp, a: &Value, b: &Value) -> Result<Value> {
    if op == BinOp::Coalesce {
        return Ok(match a {
            Value::Absent | Value::Null => b.clone(),
            a => a.clone(),
        });
    }
    if a.is_absent() || b.is_absent() {
        return Ok(Value::Absent);
    }
    match op {
        BinOp::Eq => Ok(Value::Bool(equal(a, b))),
        BinOp::Ne => Ok(Value::Bool(!equal(a, b))),
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            let ord = compare(a, b).ok_or_else(|| cannot(op, a, b))?;
            Ok(Value::Bool(match op {
                BinOp::Lt => ord == Ordering::Less,
                BinOp::Le => ord != Ordering::Greater,
                BinOp::Gt => ord == Ordering::Greater,
                _ => ord != Ordering::Less,
            }))
        }
        BinOp::In => contains(b, a)
            .map(Value::Bool)
            .ok_or_else(|| cannot(op, a, b)),
        BinOp::NotIn => contains(b, a)
            .map(|x| Value::Bool(!x))
            .ok_or_else(|| cannot(op, a, b)),
        BinOp::Add => add(a, b),
        BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => arithmetic(op, a, b),
        BinOp::Implies | BinOp::Or | BinOp::And | BinOp::Coalesce => Err(cannot(op, a, b)),
    }
}

fn cannot(op: BinOp, a: &Value, b: &Value) -> RuntimeError {
    RuntimeError::new(
        "hql::type",
        format!(
            "`{}` cannot take {} and {}",
            crate::syntax::canonical::binop_text(op),
            a.kind_article(),
            b.kind_article()
        ),
    )
}

/// A number as arithmetic sees it.
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
    /// An integer from data beyond i64.
    Big,
}

fn num(v: &Value) -> Option<Num> {
    match v {
        Value::Int(n) => Some(Num::Int(*n)),
        Value::Float(f) => Some(Num::Float(*f)),
        Value::Num(n) => Some(match n.kind {
            NumKind::Int(i) => Num::Int(i),
            NumKind::Float(f) => Num::Float(f),
            NumKind::BigInt => Num::Big,
        }),
        _ => None,
    }
}

/// A value as a number, when it is one (an integer beyond i64 included).
pub fn to_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Int(n) => Some(*n as f64),
        Value::Float(f) => Some(*f),
        Value::Num(n) => match n.kind {
            NumKind::Int(i) => Some(i as f64),
            NumKind::Float(f) => Some(f),
            NumKind::BigInt => n.text.parse().ok(),
        },
        _ => None,
    }
}

fn contains(haystack: &Value, needle: &Value) -> Option<bool> {
    match (haystack, needle) {
        (Value::List(items), n) => Some(items.iter().any(|i| equal(i, n))),
        (Value::Str(h), Value::Str(n)) => Some(h.contains(n.as_str())),
        (Value::Record(r), Value::Str(k)) => Some(r.contains_key(k.as_str())),
        _ => None,
    }
}

fn add(a: &Value, b: &Value) -> Result<Value> {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Ok(Value::str(format!("{x}{y}"))),
        (Value::List(x), Value::List(y)) => {
            Ok(Value::list(x.iter().chain(y.iter()).cloned().collect()))
        }
        _ => arithmetic(BinOp::Add, a, b),
    }
}

fn arithmetic(op: BinOp, a: &Value, b: &Value) -> Result<Value> {
    let (x, y) = match (num(a), num(b)) {
        (Some(x), Some(y)) => (x, y),
        _ => return Err(cannot(op, a, b)),
    };
    match (x, y) {
        (Num::Big, _) | (_, Num::Big) => Err(big_int()),
        (Num::Int(x), Num::Int(y)) => int_arithmetic(op, x, y),
        (x, y) => float_arithmetic(op, as_float(x), as_float(y)),
    }
}

/// Arithmetic on an integer from data beyond i64 (§3: never rounded).
pub fn big_int() -> RuntimeError {
    RuntimeError::new(
        "hql::big_int",
        "arithmetic on an integer beyond 64 bits would lose digits",
    )
}

/// Is `v` an integer from data beyond i64?
pub fn is_big_int(v: &Value) -> bool {
    matches!(num(v), Some(Num::Big))
}

fn as_float(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
        Num::Big => f64::NAN,
    }
}

fn int_arithmetic(op: BinOp, x: i64, y: i64) -> Result<Value> {
    let overflow = || RuntimeError::new("hql::overflow", "integer overflow");
    let by_zero = || RuntimeError::new("hql::division_by_zero", "division by zero");
    match op {
        BinOp::Add => x.checked_add(y).map(Value::Int).ok_or_else(overflow),
        BinOp::Sub => x.checked_sub(y).map(Value::Int).ok_or_else(overflow),
        BinOp::Mul => x.checked_mul(y).map(Value::Int).ok_or_else(overflow),
        BinOp::Div if y == 0 => Err(by_zero()),
        BinOp::Div => float_arithmetic(op, x as f64, y as f64),
        BinOp::Rem if y == 0 => Err(by_zero()),
        // i64::MIN % -1 overflows in the machine, but the remainder is 0.
        BinOp::Rem if y == -1 => Ok(Value::Int(0)),
        _ => x.checked_rem(y).map(Value::Int).ok_or_else(overflow),
    }
}

fn float_arithmetic(op: BinOp, x: f64, y: f64) -> Result<Value> {
    let r = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div if y == 0.0 => {
            return Err(RuntimeError::new(
                "hql::division_by_zero",
                "division by zero",
            ))
        }
        BinOp::Div => x / y,
        _ => {
            return Err(RuntimeError::new("hql::type", "`%` takes two Ints"));
        }
    };
    finite(r)
}

pub fn finite(f: f64) -> Result<Value> {
    if f.is_finite() {
        Ok(Value::Float(f))
    } else {
        Err(RuntimeError::new(
            "hql::not_finite",
            "the result is not a finite number",
        ))
    }
}

/// `f`, the result of `op` on `v`, unless `v` is beyond a Float's range
/// (`1e999` from data): an infinity is never a result.
pub fn beyond_float(op: &str, v: &Value, f: f64) -> Result<Value> {
    if f.is_finite() {
        return Ok(Value::Float(f));
    }
    let text = crate::runtime::print::to_hql(v);
    Err(RuntimeError::new(
        "hql::not_finite",
        format!("`{op}` of {text} is beyond the range of a Float"),
    )
    .with_help("a Float holds numbers up to about 1.8e308 in size"))
}

pub fn negate(v: Value) -> Result<Value> {
    match num(&v) {
        _ if v.is_absent() => Ok(Value::Absent),
        Some(Num::Int(i)) => i
            .checked_neg()
            .map(Value::Int)
            .ok_or_else(|| RuntimeError::new("hql::overflow", "integer overflow")),
        Some(Num::Float(f)) => beyond_float("-", &v, -f),
        Some(Num::Big) => Err(big_int()),
        None => Err(RuntimeError::new(
            "hql::type",
            format!("cannot negate {}", v.kind_article()),
        )),
    }
}

/// `r.name` (`r.name?` when `soft`).
pub fn read_field(target: &Value, name: &str, soft: bool) -> Result<Value> {
    lookup(target, name, soft).map_err(|miss| match miss {
        Miss::Field => RuntimeError::new(
            "hql::missing_field",
            format!("the record has no field `{name}`"),
        )
        .with_help(format!(
            "write `.{name}?` to read it as absent when missing"
        )),
        Miss::NotRecord(kind) => {
            RuntimeError::new("hql::type", format!("cannot read field `{name}` of {kind}"))
        }
    })
}

/// Why a field could not be read.
enum Miss {
    Field,
    /// The kind, with its article, of what is not a record.
    NotRecord(String),
}

fn lookup(target: &Value, name: &str, soft: bool) -> Result<Value, Miss> {
    match target {
        Value::Absent => Ok(Value::Absent),
        Value::Null if soft => Ok(Value::Absent),
        Value::Record(r) => field_value(r.get(name), soft).ok_or(Miss::Field),
        Value::Ok(ok) => lookup(&ok.value, name, soft),
        other => Err(Miss::NotRecord(other.kind_article())),
    }
}

/// A record's field as read by `.name` (`.name?` when `soft`), given what
/// the record holds under the name (a missing field, or `Value::Absent`
/// in a frame slot); `None` when reading it fails.
pub fn field_value(found: Option<&Value>, soft: bool) -> Option<Value> {
    match found {
        None | Some(Value::Absent) if soft => Some(Value::Absent),
        None | Some(Value::Absent) => None,
        Some(Value::Null) if soft => Some(Value::Absent),
        Some(v) => Some(v.clone()),
    }
}

/// `e?` on anything but a field read: absent when `e` is null.
pub fn soft(v: Value) -> Value {
    match v {
        Value::Null => Value::Absent,
        v => v,
    }
}

/// `e?` standing as a condition: is `e` present and not null?
pub fn presence(v: &Value) -> Value {
    Value::Bool(!matches!(v, Value::Null | Value::Absent))
}

/// `not e`, in Kleene logic.
pub fn not(v: Value) -> Result<Value> {
    match v {
        Value::Bool(b) => Ok(Value::Bool(!b)),
        Value::Absent | Value::Null => Ok(Value::Absent),
        other => Err(not_bool(&other)),
    }
}

/// A condition's value: true, false, or absent (None).
pub fn tri(v: Value) -> Result<Option<bool>> {
    match v {
        Value::Bool(b) => Ok(Some(b)),
        // A null that stood for an absent value (bound by `let`, say) is
        // unknown in a condition too.
        Value::Absent | Value::Null => Ok(None),
        other => Err(not_bool(&other)),
    }
}

/// A condition that must be true or false (`if`, a predicate): absent
/// and null are false.
pub fn truth(v: Value) -> Result<bool> {
    Ok(tri(v)?.unwrap_or(false))
}

pub fn not_bool(v: &Value) -> RuntimeError {
    RuntimeError::new(
        "hql::type",
        format!("expected a Bool condition, found {}", v.kind_article()),
    )
}

/// Three-valued `and`, `or`, `=>` (Kleene): the result when the left
/// operand `a` decides it alone (short-circuiting).
pub fn decided(op: Logic, a: Option<bool>) -> Option<bool> {
    match (op, a) {
        (Logic::And, Some(false)) => Some(false),
        (Logic::Or, Some(true)) => Some(true),
        (Logic::Implies, Some(false)) => Some(true),
        _ => None,
    }
}

/// Three-valued `and`, `or`, `=>` of two conditions (see `decided`).
pub fn logic(op: Logic, a: Option<bool>, b: Option<bool>) -> Value {
    let a = if op == Logic::Implies {
        a.map(|x| !x)
    } else {
        a
    };
    let result = match op {
        Logic::And => match (a, b) {
            (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        },
        Logic::Or | Logic::Implies => match (a, b) {
            (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        },
    };
    result.map(Value::Bool).unwrap_or(Value::Absent)
}

/// `matches(s, r"…")` with its pattern compiled.
pub fn matches(regex: &regex::Regex, subject: &Value) -> Result<Value> {
    match subject {
        Value::Absent => Ok(Value::Absent),
        Value::Str(s) => Ok(Value::Bool(regex.is_match(s))),
        other => Err(super::funcs::expected("matches", "a String", other)),
    }
}

/// `t[i]` (`t[i]?` when `soft`). An index the program computed may hold
/// data, so its errors name it only when it is `written` in the program
/// (language.md §4.9: messages never carry data).
pub fn read_index(target: &Value, index: &Value, soft: bool, written: bool) -> Result<Value> {
    let shown = |v: &Value| {
        if written {
            format!(" {}", crate::runtime::print::to_hql(v))
        } else {
            String::new()
        }
    };
    let missing = |message: String| {
        if soft {
            Ok(Value::Absent)
        } else {
            Err(RuntimeError::new("hql::missing_field", message)
                .with_help("write `[…]?` to read it as absent when missing"))
        }
    };
    match (target, index) {
        (Value::Absent, _) | (_, Value::Absent) => Ok(Value::Absent),
        (Value::Record(_), Value::Str(key)) => lookup(target, key, soft).map_err(|_| {
            RuntimeError::new(
                "hql::missing_field",
                format!("the record has no field{}", shown(index)),
            )
            .with_help("write `[…]?` to read it as absent when missing")
        }),
        (Value::List(items), i) if i.is_int() => {
            // An integer beyond i64 is outside every list.
            let at = match num(i) {
                Some(Num::Int(n)) if n < 0 => n.checked_add(items.len() as i64),
                Some(Num::Int(n)) => Some(n),
                _ => None,
            };
            let item = at
                .and_then(|at| usize::try_from(at).ok())
                .and_then(|at| items.get(at));
            match item {
                Some(v) => Ok(v.clone()),
                None => missing(format!("the index{} is outside the list", shown(index))),
            }
        }
        (Value::Null, _) if soft => Ok(Value::Absent),
        _ => Err(RuntimeError::new(
            "hql::type",
            format!(
                "cannot index {} with {}",
                target.kind_article(),
                index.kind_article()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(text: &str) -> Value {
        Value::from_number_text(text)
    }

    #[test]
    fn arithmetic_is_checked() {
        assert!(binary(BinOp::Add, &Value::Int(i64::MAX), &Value::Int(1)).is_err());
        assert!(binary(BinOp::Div, &Value::Int(1), &Value::Int(0)).is_err());
        assert!(binary(BinOp::Add, &n("12345678901234567890123"), &Value::Int(1)).is_err());
        assert!(matches!(
            binary(BinOp::Rem, &Value::Int(-7), &Value::Int(2)),
            Ok(Value::Int(-1))
        ));
        assert!(
            matches!(binary(BinOp::Div, &Value::Int(7), &Value::Int(2)), Ok(Value::Float(f)) if f == 3.5)
        );
        assert!(matches!(
            binary(BinOp::Rem, &Value::Int(i64::MIN), &Value::Int(-1)),
            Ok(Value::Int(0))
        ));
        let big = n("12345678901234567890123");
        assert_eq!(negate(big).unwrap_err().code, "hql::big_int");
    }

    #[test]
    fn absent_propagates() {
        assert!(binary(BinOp::Lt, &Value::Absent, &Value::Int(1))
            .unwrap()
            .is_absent());
        assert!(matches!(
            binary(BinOp::Coalesce, &Value::Absent, &Value::Int(1)),
            Ok(Value::Int(1))
        ));
    }
}
