//! Operators over values (language.md §3, §4.4): structural equality, exact
//! numeric comparison, checked arithmetic, field and index reads. An absent
//! operand makes the result absent.

use std::cmp::Ordering;

use super::{Result, RuntimeError};
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

/// Structural equality: `1 == 1.0`, records equal whatever their order.
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) | (Value::Absent, Value::Absent) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| equal(p, q))
        }
        (Value::Record(x), Value::Record(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        (Value::Ok(x), Value::Ok(y)) => equal(&x.value, &y.value),
        (Value::Err(x), Value::Err(y)) => equal(x, y),
        (Value::Type(x), Value::Type(y)) => std::rc::Rc::ptr_eq(x, y),
        (Value::Format(x), Value::Format(y)) => x == y,
        (Value::Func(x), Value::Func(y)) => std::rc::Rc::ptr_eq(x, y),
        _ if a.is_number() && b.is_number() => compare_numbers(a, b) == Some(Ordering::Equal),
        _ => false,
    }
}

/// `<` and friends: two numbers (exactly) or two strings (by code point).
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Some(x.as_str().cmp(y.as_str())),
        _ => compare_numbers(a, b),
    }
}

/// Total order for sorting: numbers, then strings, then everything else
/// by its printed form.
pub fn sort_order(a: &Value, b: &Value) -> Ordering {
    let rank = |v: &Value| match v {
        Value::Null | Value::Absent => 0,
        Value::Bool(_) => 1,
        v if v.is_number() => 2,
        Value::Str(_) => 3,
        _ => 4,
    };
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => match compare(a, b) {
            Some(o) => o,
            None => rank(a).cmp(&rank(b)).then_with(|| {
                crate::runtime::print::to_hql(a).cmp(&crate::runtime::print::to_hql(b))
            }),
        },
    }
}

fn compare_numbers(a: &Value, b: &Value) -> Option<Ordering> {
    match (num(a)?, num(b)?) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        (Num::Int(x), Num::Float(y)) => int_float(x, y),
        (Num::Float(x), Num::Int(y)) => int_float(y, x).map(Ordering::reverse),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y),
        _ => compare_big(a, b),
    }
}

/// Compare an i64 with an f64 exactly (no rounding of the integer).
fn int_float(i: i64, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    let as_float = i as f64;
    match as_float.partial_cmp(&f)? {
        Ordering::Equal if f.abs() < 9.2e18 => Some((i as i128).cmp(&(f as i128))),
        o => Some(o),
    }
}

/// Comparisons where one side is an integer beyond i64, read from its text.
fn compare_big(a: &Value, b: &Value) -> Option<Ordering> {
    let (sa, da) = decimal(a)?;
    let (sb, db) = decimal(b)?;
    if let (Some(x), Some(y)) = (&da, &db) {
        return Some(match (sa, sb) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => x.len().cmp(&y.len()).then_with(|| x.cmp(y)),
            (true, true) => y.len().cmp(&x.len()).then_with(|| y.cmp(x)),
        });
    }
    to_f64(a)?.partial_cmp(&to_f64(b)?)
}

/// (negative, digits without leading zeros) for an integer value.
fn decimal(v: &Value) -> Option<(bool, Option<String>)> {
    let text = match v {
        Value::Int(n) => n.to_string(),
        Value::Num(n) if !matches!(n.kind, NumKind::Float(_)) => n.text.to_string(),
        v if v.is_number() => return Some((false, None)),
        _ => return None,
    };
    let neg = text.starts_with('-');
    let digits = text
        .trim_start_matches('-')
        .trim_start_matches('0')
        .to_string();
    Some((neg && !digits.is_empty(), Some(digits)))
}

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
        (Num::Big, _) | (_, Num::Big) => Err(RuntimeError::new(
            "hql::big_int",
            "arithmetic on an integer beyond 64 bits would lose digits",
        )),
        (Num::Int(x), Num::Int(y)) => int_arithmetic(op, x, y),
        (x, y) => float_arithmetic(op, as_float(x), as_float(y)),
    }
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

pub fn negate(v: Value) -> Result<Value> {
    match num(&v) {
        _ if v.is_absent() => Ok(Value::Absent),
        Some(Num::Int(i)) => i
            .checked_neg()
            .map(Value::Int)
            .ok_or_else(|| RuntimeError::new("hql::overflow", "integer overflow")),
        Some(Num::Float(f)) => Ok(Value::Float(-f)),
        _ => Err(RuntimeError::new(
            "hql::type",
            format!("cannot negate {}", v.kind_article()),
        )),
    }
}

pub fn read_field(target: &Value, name: &str, soft: bool) -> Result<Value> {
    match target {
        Value::Absent => Ok(Value::Absent),
        Value::Null if soft => Ok(Value::Absent),
        Value::Record(r) => match r.get(name) {
            Some(Value::Null) if soft => Ok(Value::Absent),
            Some(v) => Ok(v.clone()),
            None if soft => Ok(Value::Absent),
            None => Err(RuntimeError::new(
                "hql::missing_field",
                format!("the record has no field `{name}`"),
            )
            .with_help(format!(
                "write `.{name}?` to read it as absent when missing"
            ))),
        },
        Value::Ok(ok) => read_field(&ok.value, name, soft),
        other => Err(RuntimeError::new(
            "hql::type",
            format!("cannot read field `{name}` of {}", other.kind_article()),
        )),
    }
}

pub fn read_index(target: &Value, index: &Value, soft: bool) -> Result<Value> {
    let missing = |what: String| {
        if soft {
            Ok(Value::Absent)
        } else {
            Err(RuntimeError::new("hql::missing_field", what))
        }
    };
    match (target, index) {
        (Value::Absent, _) | (_, Value::Absent) => Ok(Value::Absent),
        (Value::Record(_), Value::Str(k)) => read_field(target, k, soft),
        (Value::List(items), i) if i.is_int() => {
            let n = match num(i) {
                Some(Num::Int(n)) => n,
                _ => -1,
            };
            let at = if n < 0 { n + items.len() as i64 } else { n };
            match items.get(at as usize).filter(|_| at >= 0) {
                Some(v) => Ok(v.clone()),
                None => missing(format!("index {n} is outside a list of {}", items.len())),
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
    fn numbers_compare_exactly() {
        assert!(equal(&Value::Int(1), &Value::Float(1.0)));
        assert_eq!(
            compare(&n("12345678901234567890123"), &Value::Int(i64::MAX)),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare(&n("-12345678901234567890123"), &Value::Int(i64::MIN)),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare(&n("1.50"), &Value::Float(1.5)),
            Some(Ordering::Equal)
        );
        assert_eq!(
            compare(
                &Value::Int(9007199254740993),
                &Value::Float(9007199254740992.0)
            ),
            Some(Ordering::Greater)
        );
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
