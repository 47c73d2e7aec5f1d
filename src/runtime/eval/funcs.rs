//! Builtins over single values: text, numbers, records, results
//! (language.md §6.1).

use std::cell::RefCell;
use std::rc::Rc;

use regex::Regex;
use rustc_hash::FxHashMap;

use super::ops::{self, to_f64};
use super::{Result, RuntimeError};
use crate::runtime::builtins::Builtin;
use crate::runtime::print::write_hql;
use crate::runtime::value::{NumKind, Record, Value};

pub fn expected(func: &str, what: &str, found: &Value) -> RuntimeError {
    RuntimeError::new(
        "hql::type",
        format!("`{func}` expects {what}, found {}", found.kind_article()),
    )
}

fn text(b: Builtin, v: &Value) -> Result<&str> {
    v.as_str().ok_or_else(|| expected(b.name(), "a String", v))
}

fn record(b: Builtin, v: &Value) -> Result<Rc<Record>> {
    match v {
        Value::Record(r) => Ok(r.clone()),
        other => Err(expected(b.name(), "a record", other)),
    }
}

pub fn call(b: Builtin, args: &[Value]) -> Result<Value> {
    let a = args.first().unwrap_or(&Value::Null);
    let arg = |i: usize| args.get(i).unwrap_or(&Value::Null);
    let s = |v| Ok(Value::str(v));
    let bool = |v| Ok(Value::Bool(v));
    match b {
        Builtin::Fmt => fmt(text(b, a)?, &args[1..]).map(Value::str),
        Builtin::Len => len(a),
        Builtin::Lower => s(text(b, a)?.to_lowercase()),
        Builtin::Upper => s(text(b, a)?.to_uppercase()),
        Builtin::Trim => s(text(b, a)?.trim().to_string()),
        Builtin::Contains => match a {
            Value::List(items) => bool(items.iter().any(|i| super::equal(i, arg(1)))),
            _ => bool(text(b, a)?.contains(text(b, arg(1))?)),
        },
        Builtin::StartsWith => bool(text(b, a)?.starts_with(text(b, arg(1))?)),
        Builtin::EndsWith => bool(text(b, a)?.ends_with(text(b, arg(1))?)),
        Builtin::Matches => bool(cached_regex(text(b, arg(1))?)?.is_match(text(b, a)?)),
        Builtin::Replace => s(text(b, a)?.replace(text(b, arg(1))?, text(b, arg(2))?)),
        Builtin::Split => Ok(Value::list(
            text(b, a)?
                .split(text(b, arg(1))?)
                .map(Value::str)
                .collect(),
        )),
        Builtin::Join => join(a, text(b, arg(1))?),
        Builtin::Abs => abs(a),
        Builtin::Round => rounded(b, a, f64::round),
        Builtin::Floor => rounded(b, a, f64::floor),
        Builtin::Ceil => rounded(b, a, f64::ceil),
        Builtin::Int => to_int(a),
        Builtin::Float => to_float(a),
        Builtin::String => match a {
            Value::Str(_) => Ok(a.clone()),
            other => s(crate::runtime::print::to_hql(other)),
        },
        Builtin::Keys => Ok(Value::list(
            record(b, a)?.keys().map(|k| Value::str(&**k)).collect(),
        )),
        Builtin::Values => Ok(Value::list(record(b, a)?.values().cloned().collect())),
        Builtin::Has => bool(record(b, a)?.contains_key(text(b, arg(1))?)),
        Builtin::Get => match a {
            Value::Null => Ok(arg(2).clone()),
            _ => Ok(record(b, a)?
                .get(text(b, arg(1))?)
                .cloned()
                .unwrap_or_else(|| arg(2).clone())),
        },
        Builtin::Merge => {
            let mut merged = (*record(b, a)?).clone();
            // A new value: it was read nowhere.
            merged.set_origin(None);
            for (k, v) in record(b, arg(1))?.iter() {
                merged.insert(k.clone(), v.clone());
            }
            Ok(Value::record(merged))
        }
        Builtin::Ok => Ok(Value::ok(a.clone())),
        Builtin::Err => Ok(Value::err(a.clone())),
        Builtin::IsOk => bool(matches!(a, Value::Ok(_))),
        Builtin::IsErr => bool(matches!(a, Value::Err(_))),
        other => Err(RuntimeError::new(
            "hql::type",
            format!("`{}` works on streams and lists", other.name()),
        )),
    }
}

/// `fmt("{} at {}", a, b)`: strings inserted as is, other values printed.
fn fmt(template: &str, args: &[Value]) -> Result<String> {
    let mut out = String::new();
    let mut args = args.iter();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('{', Some('{')) | ('}', Some('}')) => {
                chars.next();
                out.push(c);
            }
            ('{', Some('}')) => {
                chars.next();
                match args.next() {
                    Some(Value::Str(s)) => out.push_str(s),
                    Some(v) => write_hql(&mut out, v),
                    None => {
                        return Err(RuntimeError::new(
                            "hql::fmt",
                            "`fmt` has more `{}` than arguments",
                        ))
                    }
                }
            }
            _ => out.push(c),
        }
    }
    if args.next().is_some() {
        return Err(RuntimeError::new(
            "hql::fmt",
            "`fmt` has more arguments than `{}`",
        ));
    }
    Ok(out)
}

fn len(v: &Value) -> Result<Value> {
    let n = match v {
        Value::Str(s) => s.chars().count(),
        Value::List(items) => items.len(),
        Value::Record(r) => r.len(),
        other => return Err(expected("len", "a String, list or record", other)),
    };
    Ok(Value::Int(n as i64))
}

fn join(list: &Value, sep: &str) -> Result<Value> {
    let Value::List(items) = list else {
        return Err(expected("join", "a list", list));
    };
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        match item {
            Value::Str(s) => out.push_str(s),
            other => write_hql(&mut out, other),
        }
    }
    Ok(Value::str(out))
}

fn abs(v: &Value) -> Result<Value> {
    match v {
        Value::Int(n) => n
            .checked_abs()
            .map(Value::Int)
            .ok_or_else(|| RuntimeError::new("hql::overflow", "integer overflow")),
        v if v.is_int() => ops::negate(v.clone()).and_then(|n| abs(&n)),
        v => {
            let f = to_f64(v).ok_or_else(|| expected("abs", "a number", v))?;
            ops::beyond_float("abs", v, f.abs())
        }
    }
}

/// `round` (half away from zero), `floor`, `ceil`: an Int.
fn rounded(b: Builtin, v: &Value, f: fn(f64) -> f64) -> Result<Value> {
    if v.is_int() {
        return Ok(v.clone());
    }
    let x = f(to_f64(v).ok_or_else(|| expected(b.name(), "a number", v))?);
    float_to_int(x)
}

fn float_to_int(x: f64) -> Result<Value> {
    if x.is_finite() && x.abs() < 9.223e18 {
        Ok(Value::Int(x as i64))
    } else {
        Err(RuntimeError::new(
            "hql::overflow",
            "the number does not fit an Int",
        ))
    }
}

fn to_int(v: &Value) -> Result<Value> {
    match v {
        Value::Str(s) => {
            let t = s.trim();
            if let Ok(n) = t.parse::<i64>() {
                return Ok(Value::Int(n));
            }
            match t.parse::<f64>() {
                Ok(f) => float_to_int(f.trunc()),
                Err(_) => Err(RuntimeError::new(
                    "hql::parse",
                    "`int` cannot read this text as a number",
                )),
            }
        }
        Value::Bool(b) => Ok(Value::Int(i64::from(*b))),
        Value::Num(n) if matches!(n.kind, NumKind::BigInt) => Err(RuntimeError::new(
            "hql::overflow",
            "the number does not fit an Int",
        )),
        v if v.is_int() => Ok(match v {
            Value::Num(n) => match n.kind {
                NumKind::Int(i) => Value::Int(i),
                _ => v.clone(),
            },
            _ => v.clone(),
        }),
        v => float_to_int(
            to_f64(v)
                .ok_or_else(|| expected("int", "a number or a String", v))?
                .trunc(),
        ),
    }
}

fn to_float(v: &Value) -> Result<Value> {
    let f = match v {
        Value::Str(s) => s.trim().parse::<f64>().map_err(|_| {
            RuntimeError::new("hql::parse", "`float` cannot read this text as a number")
        })?,
        v => to_f64(v).ok_or_else(|| expected("float", "a number or a String", v))?,
    };
    ops::finite(f)
}

/// A pattern computed at run time may come from data, and the regex
/// crate's message quotes it: the error says what is wrong in general.
fn bad_pattern(e: regex::Error) -> RuntimeError {
    let message = match e {
        regex::Error::CompiledTooBig(_) => "the pattern given to `matches` makes too large a regex",
        _ => "the pattern given to `matches` is not a valid regex",
    };
    RuntimeError::new("hql::regex", message)
        .with_help("a pattern written in the program as a string literal is checked before the run, with the fault shown")
}

thread_local! {
    static REGEXES: RefCell<FxHashMap<String, Rc<Regex>>> = RefCell::default();
}

/// A regex built at run time (the pattern was not a literal), built once.
fn cached_regex(pattern: &str) -> Result<Rc<Regex>> {
    REGEXES.with(|cache| {
        if let Some(r) = cache.borrow().get(pattern) {
            return Ok(r.clone());
        }
        let regex = Rc::new(Regex::new(pattern).map_err(bad_pattern)?);
        let mut cache = cache.borrow_mut();
        if cache.len() > 256 {
            cache.clear();
        }
        cache.insert(pattern.to_string(), regex.clone());
        Ok(regex)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fmt_fills_placeholders() {
        let out = fmt("{} at {} {{x}}", &[Value::str("owl"), Value::Int(3)]).unwrap();
        assert_eq!(out, "owl at 3 {x}");
        assert!(fmt("{}", &[]).is_err());
    }

    #[test]
    fn rounding_is_half_away_from_zero() {
        assert!(matches!(
            call(Builtin::Round, &[Value::Float(2.5)]),
            Ok(Value::Int(3))
        ));
        assert!(matches!(
            call(Builtin::Round, &[Value::Float(-2.5)]),
            Ok(Value::Int(-3))
        ));
        assert!(matches!(
            call(Builtin::Int, &[Value::Float(-2.7)]),
            Ok(Value::Int(-2))
        ));
    }
}
