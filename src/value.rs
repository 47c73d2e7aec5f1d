//! Runtime values (language.md §3).
//!
//! A `Value` is 16 bytes: scalars inline, everything compound behind an `Rc`
//! so that cloning a record into a failure envelope or a stream stage is a
//! reference-count bump, never a deep copy.

use std::fmt;
use std::rc::Rc;

use indexmap::IndexMap;
use rustc_hash::FxBuildHasher;

use crate::contract::Contract;
use crate::eval::{Function, Stream};

/// A record's field name. Shared, since the JSON decoder interns the keys it
/// sees repeatedly and every record of a stream points at the same names.
pub type Key = Rc<str>;

/// A string-keyed map that keeps insertion order for printing.
pub type Record = IndexMap<Key, Value, FxBuildHasher>;

#[derive(Clone)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A number read from data whose text is not what `Int`/`Float` would
    /// print back (`1.50`, `-0`, an integer beyond i64): kept digit for digit.
    Num(Rc<DataNum>),
    Str(Rc<String>),
    List(Rc<Vec<Value>>),
    Record(Rc<Record>),
    Ok(Rc<Okay>),
    Err(Rc<Value>),
    Func(Rc<Function>),
    /// A declared type used as a value (`validate(T)`).
    Type(Rc<Contract>),
    Stream(Rc<Stream>),
    /// The result of reading a missing or null optional field with `?`
    /// (language.md §4.4). Never stored: it becomes `null` when it is.
    Absent,
}

/// `ok(v)` and the warnings collected while validating `v`.
pub struct Okay {
    pub value: Value,
    pub warnings: Vec<Value>,
}

/// A number from data, with its source text.
#[derive(Debug, Clone, PartialEq)]
pub struct DataNum {
    pub text: Box<str>,
    pub kind: NumKind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NumKind {
    /// Written as an integer and within i64.
    Int(i64),
    /// Written as an integer, beyond i64: its value is only in `text`.
    BigInt,
    /// Written with a fraction or exponent.
    Float(f64),
}

impl Value {
    pub fn str(s: impl Into<String>) -> Value {
        Value::Str(Rc::new(s.into()))
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(items))
    }

    pub fn record(r: Record) -> Value {
        Value::Record(Rc::new(r))
    }

    pub fn ok(v: Value) -> Value {
        Value::Ok(Rc::new(Okay {
            value: v,
            warnings: Vec::new(),
        }))
    }

    pub fn err(v: Value) -> Value {
        Value::Err(Rc::new(v))
    }

    /// A number read from data, given its JSON text (already known to be a
    /// well-formed JSON number). Stores a plain `Int`/`Float` when that
    /// prints back to the same text, so the common case allocates nothing.
    pub fn from_number_text(text: &str) -> Value {
        let is_int = !text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'));
        if is_int {
            match text.parse::<i64>() {
                Ok(n) if n.to_string() == text => Value::Int(n),
                Ok(n) => Value::data_num(text, NumKind::Int(n)),
                Err(_) => Value::data_num(text, NumKind::BigInt),
            }
        } else {
            let f: f64 = text.parse().unwrap_or(f64::NAN);
            if format!("{f:?}") == text {
                Value::Float(f)
            } else {
                Value::data_num(text, NumKind::Float(f))
            }
        }
    }

    fn data_num(text: &str, kind: NumKind) -> Value {
        Value::Num(Rc::new(DataNum {
            text: text.into(),
            kind,
        }))
    }

    /// Absent becomes null wherever a value is stored (§4.4).
    pub fn stored(self) -> Value {
        match self {
            Value::Absent => Value::Null,
            v => v,
        }
    }

    pub fn is_absent(&self) -> bool {
        matches!(self, Value::Absent)
    }

    /// The name of the value's kind, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Null => "Null",
            Value::Bool(_) => "Bool",
            Value::Int(_) => "Int",
            Value::Float(_) => "Float",
            Value::Num(n) => match n.kind {
                NumKind::Float(_) => "Float",
                _ => "Int",
            },
            Value::Str(_) => "String",
            Value::List(_) => "List",
            Value::Record(_) => "Record",
            Value::Ok(_) | Value::Err(_) => "Result",
            Value::Func(_) => "Function",
            Value::Type(_) => "Type",
            Value::Stream(_) => "Stream",
            Value::Absent => "absent",
        }
    }

    /// The kind with its article, for error messages: `an Int`, `a String`.
    pub fn kind_article(&self) -> String {
        crate::typeflow::article(self.kind_name())
    }

    /// Is this an integer by its lexical form (§3)?
    pub fn is_int(&self) -> bool {
        match self {
            Value::Int(_) => true,
            Value::Num(n) => !matches!(n.kind, NumKind::Float(_)),
            _ => false,
        }
    }

    pub fn is_number(&self) -> bool {
        matches!(self, Value::Int(_) | Value::Float(_) | Value::Num(_))
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::print::to_hql(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Value>(), 16);
    }

    #[test]
    fn plain_numbers_stay_plain() {
        assert!(matches!(Value::from_number_text("42"), Value::Int(42)));
        assert!(matches!(Value::from_number_text("2.5"), Value::Float(_)));
        assert!(matches!(Value::from_number_text("1.50"), Value::Num(_)));
        assert!(matches!(Value::from_number_text("-0"), Value::Num(_)));
        let big = Value::from_number_text("12345678901234567890123");
        assert!(big.is_int());
        assert!(!Value::from_number_text("1.0").is_int());
    }
}
