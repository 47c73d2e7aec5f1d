//! Runtime values (language.md §3).
//!
//! A `Value` is 16 bytes: scalars inline, everything compound behind an `Rc`
//! so that cloning a record into a failure envelope or a stream stage is a
//! reference-count bump, never a deep copy.

use std::fmt;
use std::rc::Rc;

use crate::runtime::contract::Contract;
use crate::runtime::stream::{Function, Stream};

/// A record's field name. Shared, since the JSON decoder interns the keys it
/// sees repeatedly and every record of a stream points at the same names.
pub type Key = Rc<str>;

/// A string-keyed map that keeps insertion order for printing.
///
/// Records from data are small and their keys are shared, so fields sit in
/// one vector and a lookup compares pointers, then bytes: no hashing, one
/// allocation per record.
#[derive(Clone, Default)]
pub struct Record {
    fields: Vec<(Key, Value)>,
    /// Where the record was read, once a stage that passes records through
    /// has put it into a list or given it as its result (`sort()`,
    /// `first()`, …): a stream's items carry their origin beside them, a
    /// list's elements in them (language.md §4.9). Not part of its value;
    /// boxed, so that records which never leave a stream stay small.
    origin: Option<Box<Origin>>,
}

impl Record {
    pub fn with_capacity(n: usize) -> Record {
        Record {
            fields: Vec::with_capacity(n),
            origin: None,
        }
    }

    pub fn origin(&self) -> Option<&Origin> {
        self.origin.as_deref()
    }

    pub fn set_origin(&mut self, origin: Option<Origin>) {
        self.origin = origin.map(Box::new);
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.fields.iter().position(|(k, _)| {
            std::ptr::eq(k.as_ptr(), key.as_ptr()) && k.len() == key.len() || **k == *key
        })
    }

    /// A record of fields whose keys are known to be distinct (no lookups).
    pub fn from_distinct(fields: impl IntoIterator<Item = (Key, Value)>) -> Record {
        Record {
            fields: fields.into_iter().collect(),
            origin: None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.position(key).map(|i| &self.fields[i].1)
    }

    pub fn get_index(&self, i: usize) -> Option<(&Key, &Value)> {
        self.fields.get(i).map(|(k, v)| (k, v))
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// Set a field: a new key goes last, an existing one keeps its place.
    pub fn insert(&mut self, key: Key, value: Value) -> Option<Value> {
        match self.position(&key) {
            Some(i) => Some(std::mem::replace(&mut self.fields[i].1, value)),
            None => {
                self.fields.push((key, value));
                None
            }
        }
    }

    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Key, &Value)> {
        self.fields.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &Key> {
        self.fields.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.fields.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.fields.iter_mut().map(|(_, v)| v)
    }
}

/// Past this many fields, a record being built looks its keys up in a hash
/// table: one by one, a record of n fields would cost n² comparisons.
const INDEX_FROM: usize = 32;

impl Extend<(Key, Value)> for Record {
    fn extend<I: IntoIterator<Item = (Key, Value)>>(&mut self, iter: I) {
        let mut iter = iter.into_iter();
        while self.fields.len() < INDEX_FROM {
            let Some((k, v)) = iter.next() else { return };
            self.insert(k, v);
        }
        let mut index: rustc_hash::FxHashMap<Key, usize> = (self.fields.iter().enumerate())
            .map(|(i, (k, _))| (k.clone(), i))
            .collect();
        for (k, v) in iter {
            match index.get(&k) {
                Some(&i) => self.fields[i].1 = v,
                None => {
                    index.insert(k.clone(), self.fields.len());
                    self.fields.push((k, v));
                }
            }
        }
    }
}

impl FromIterator<(Key, Value)> for Record {
    fn from_iter<I: IntoIterator<Item = (Key, Value)>>(iter: I) -> Record {
        let iter = iter.into_iter();
        let mut r = Record::with_capacity(iter.size_hint().0);
        r.extend(iter);
        r
    }
}

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
    /// A format used as a value (`source(file(p), Csv)`).
    Format(crate::runtime::builtins::Format),
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
            // JSON forbids leading zeros, so only `-0` prints back otherwise.
            match text.parse::<i64>() {
                Ok(n) if text != "-0" => Value::Int(n),
                Ok(n) => Value::data_num(text, NumKind::Int(n)),
                Err(_) => Value::data_num(text, NumKind::BigInt),
            }
        } else {
            let f: f64 = text.parse().unwrap_or(f64::NAN);
            if prints_back(text, f) {
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
            Value::Format(_) => "Format",
            Value::Stream(_) => "Stream",
            Value::Absent => "absent",
        }
    }

    /// The kind with its article, for error messages: `an Int`, `a String`.
    pub fn kind_article(&self) -> String {
        article(self.kind_name())
    }

    /// Is this an integer by its lexical form (§3)?
    /// An Int, or a number from data written as an integer within 64
    /// bits; `None` for a fraction or a larger integer.
    pub fn small_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Num(n) => match n.kind {
                NumKind::Int(i) => Some(i),
                _ => None,
            },
            _ => None,
        }
    }

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

/// `a String`, `an Int`.
pub fn article(name: &str) -> String {
    let vowel = name.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o', 'u']);
    format!("{} {name}", if vowel { "an" } else { "a" })
}

/// Does `f` print (as Rust's `{:?}` does, §8) exactly as `text`?
///
/// Decided without formatting in the common case: a positional decimal with
/// at most 15 significant digits, no superfluous zeros and a magnitude in
/// the positional range prints back as written, because distinct decimals
/// of up to 15 digits are distinct doubles, so none shorter reads back to
/// `f`. Anything else is formatted and compared.
fn prints_back(text: &str, f: f64) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let Some((int, frac)) = digits.split_once('.') else {
        return format!("{f:?}") == text;
    };
    let simple = !int.is_empty()
        && !frac.is_empty()
        && int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        && (int == "0" || !int.starts_with('0'))
        && (frac == "0" || !frac.ends_with('0'));
    let significant = int.trim_start_matches('0').len()
        + if int.trim_start_matches('0').is_empty() {
            frac.trim_start_matches('0').len()
        } else {
            frac.len()
        };
    let magnitude = f.abs();
    // A zero double is the text's value only when the text is all zeros
    // (`0.000…01` past a double's range is not `0.0`).
    let positional = (magnitude == 0.0 && significant == 0) || (1e-4..1e16).contains(&magnitude);
    if simple && positional && significant <= 15 && !(frac == "0" && int.len() > 15) {
        return true;
    }
    format!("{f:?}") == text
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::runtime::print::to_hql(self))
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
    fn decimal_texts_print_back_exactly() {
        for text in [
            "2.0",
            "0.001",
            "1.5",
            "-0.25",
            "123456.789",
            "0.0001",
            "9999999999999.5",
            "0.1",
        ] {
            assert!(prints_back(text, text.parse().unwrap()), "{text}");
            assert_eq!(format!("{:?}", text.parse::<f64>().unwrap()), text);
        }
        for text in [
            "1.50",
            "00.5",
            "0.00001",
            "1e3",
            "2.5E6",
            "1.0e0",
            "0.30000000000000004",
        ] {
            let f: f64 = text.parse().unwrap();
            assert_eq!(prints_back(text, f), format!("{f:?}") == text, "{text}");
        }
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

/// Where a value was read from: `{source, line}` (language.md §4.9).
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    pub source: Rc<str>,
    pub line: u64,
}

impl Origin {
    pub fn to_value(&self) -> Value {
        let mut r = Record::default();
        r.insert("source".into(), Value::str(&*self.source));
        r.insert("line".into(), Value::Int(self.line as i64));
        Value::record(r)
    }
}
