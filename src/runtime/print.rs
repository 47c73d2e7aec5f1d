//! HQL's printed form of values (language.md §8).
//!
//! Input: a [`Value`]. Output: its text as HQL prints it — strings quoted
//! with JSON escapes, numbers from data as their source text, floats as
//! Rust's `{:?}` prints them, `[a, b]`, `{key: value, "not ident": 2}`,
//! `ok(v)`, `err(v)`, a type by its name, a function as `<fn name>`.
//! Streams are expanded to lists by the caller; one reaching here prints as
//! `<stream>`.

use crate::runtime::json::{write_float, write_int};
use crate::runtime::value::{Record, Value};
use crate::syntax::canonical::{write_json_string, write_separated};

/// `v` in HQL's printed form.
pub fn to_hql(v: &Value) -> String {
    let mut out = String::new();
    write_hql(&mut out, v);
    out
}

/// Appends `v` in HQL's printed form.
pub fn write_hql(out: &mut String, v: &Value) {
    write_value::<Hql>(out, v);
}

/// How a value's text is spelled: HQL's printed form and compact JSON
/// differ only in these, and one walker (`write_value`) serves both.
pub trait Syntax {
    /// Between a list's items and a record's fields.
    const SEPARATOR: &'static str;
    /// A record's field name, and what follows it.
    fn field(out: &mut String, name: &str);
    /// `ok(v)` / `err(v)`: before the value, and after it.
    fn wrapped(out: &mut String, tag: &str, v: &Value);
    /// A function's, a type's or a format's name.
    fn name(out: &mut String, name: &str);
    /// A stream that reached the printer (the caller expands streams).
    const STREAM: &'static str;
}

/// HQL's printed form.
pub struct Hql;

impl Syntax for Hql {
    const SEPARATOR: &'static str = ", ";
    const STREAM: &'static str = "<stream>";

    fn field(out: &mut String, name: &str) {
        write_field_name(out, name);
        out.push_str(": ");
    }

    fn wrapped(out: &mut String, tag: &str, v: &Value) {
        out.push_str(tag);
        out.push('(');
        write_value::<Hql>(out, v);
        out.push(')');
    }

    fn name(out: &mut String, name: &str) {
        out.push_str(name);
    }
}

/// Compact JSON.
pub struct Json;

impl Syntax for Json {
    const SEPARATOR: &'static str = ",";
    const STREAM: &'static str = "null";

    fn field(out: &mut String, name: &str) {
        write_json_string(out, name);
        out.push(':');
    }

    fn wrapped(out: &mut String, tag: &str, v: &Value) {
        out.push_str("{\"");
        out.push_str(tag);
        out.push_str("\":");
        write_value::<Json>(out, v);
        out.push('}');
    }

    fn name(out: &mut String, name: &str) {
        write_json_string(out, name);
    }
}

/// Appends `v` spelled as `S` spells values.
pub fn write_value<S: Syntax>(out: &mut String, v: &Value) {
    match v {
        Value::Null | Value::Absent => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(n) => write_int(out, *n),
        Value::Float(f) => write_float(out, *f),
        Value::Num(n) => out.push_str(&n.text),
        Value::Str(s) => write_json_string(out, s),
        Value::List(items) => {
            out.push('[');
            write_separated(out, S::SEPARATOR, items.iter(), write_value::<S>);
            out.push(']');
        }
        Value::Record(record) => write_record::<S>(out, record),
        Value::Ok(okay) => S::wrapped(out, "ok", &okay.value),
        Value::Err(error) => S::wrapped(out, "err", error),
        Value::Func(function) => S::name(out, &function.display_name()),
        Value::Type(contract) => S::name(out, &contract.name),
        Value::Format(format) => S::name(out, format.name()),
        Value::Stream(_) => out.push_str(S::STREAM),
    }
}

fn write_record<S: Syntax>(out: &mut String, record: &Record) {
    out.push('{');
    write_separated(out, S::SEPARATOR, record.iter(), |out, (key, value)| {
        S::field(out, key);
        write_value::<S>(out, value);
    });
    out.push('}');
}

/// A field name bare when it is an identifier, quoted otherwise.
pub fn write_field_name(out: &mut String, name: &str) {
    if is_identifier(name) {
        out.push_str(name);
    } else {
        write_json_string(out, name);
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`
fn is_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    let starts_well = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    starts_well && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;
    use crate::runtime::contract::Contract;
    use crate::runtime::stream::Stream;

    fn record(fields: &[(&str, Value)]) -> Value {
        let mut record = Record::default();
        for (name, value) in fields {
            record.insert(Rc::from(*name), value.clone());
        }
        Value::record(record)
    }

    #[test]
    fn floats_print_like_rust_debug() {
        let cases = [
            (2.0, "2.0"),
            (0.001, "0.001"),
            (1e16, "1e16"),
            (1.5e300, "1.5e300"),
            (1e-5, "1e-5"),
            (-0.0, "-0.0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (123456.5, "123456.5"),
        ];
        for (f, text) in cases {
            assert_eq!(to_hql(&Value::Float(f)), text);
        }
    }

    #[test]
    fn scalars_print() {
        assert_eq!(to_hql(&Value::Null), "null");
        assert_eq!(to_hql(&Value::Absent), "null");
        assert_eq!(to_hql(&Value::Bool(true)), "true");
        assert_eq!(to_hql(&Value::Bool(false)), "false");
        assert_eq!(to_hql(&Value::Int(-42)), "-42");
        assert_eq!(to_hql(&Value::Int(i64::MIN)), "-9223372036854775808");
        for text in ["1.50", "-0", "12345678901234567890123", "1e400", "1E5"] {
            assert_eq!(to_hql(&Value::from_number_text(text)), text);
        }
    }

    #[test]
    fn strings_print_with_json_escapes() {
        let v = Value::str("say \"hi\"\\\n\t\u{0}é");
        assert_eq!(to_hql(&v), r#""say \"hi\"\\\n\t\u0000é""#);
        assert_eq!(to_hql(&Value::str("")), r#""""#);
    }

    #[test]
    fn lists_and_records_print() {
        let v = record(&[
            ("key", Value::Int(1)),
            ("other", Value::list(vec![Value::Int(2), Value::str("x")])),
            ("empty", record(&[])),
            ("none", Value::list(vec![])),
        ]);
        assert_eq!(
            to_hql(&v),
            r#"{key: 1, other: [2, "x"], empty: {}, none: []}"#
        );
    }

    #[test]
    fn field_names_are_quoted_unless_identifiers() {
        let v = record(&[
            ("b c", Value::Int(1)),
            ("_ok9", Value::Int(2)),
            ("9lives", Value::Int(3)),
            ("", Value::Int(4)),
            ("é", Value::Int(5)),
            ("q\"", Value::Int(6)),
            ("a-b", Value::Int(7)),
        ]);
        assert_eq!(
            to_hql(&v),
            r#"{"b c": 1, _ok9: 2, "9lives": 3, "": 4, "é": 5, "q\"": 6, "a-b": 7}"#
        );
    }

    #[test]
    fn results_types_functions_and_streams_print() {
        let named = Value::Func(Rc::new(crate::runtime::stream::test_fn("total")));
        let lambda = Value::Func(Rc::new(crate::runtime::stream::test_fn("")));
        let order = Value::Type(Rc::new(Contract::alias(
            "Order",
            crate::runtime::contract::TypeSpec::Any,
        )));
        let v = Value::list(vec![
            Value::ok(record(&[("a", Value::Int(1))])),
            Value::err(Value::str("bad")),
            named,
            lambda,
            order,
            Value::Stream(Rc::new(Stream::new(|| Ok(Box::new(std::iter::empty()))))),
        ]);
        assert_eq!(
            to_hql(&v),
            r#"[ok({a: 1}), err("bad"), <fn total>, <fn>, Order, <stream>]"#
        );
        assert_eq!(format!("{:?}", Value::ok(Value::Null)), "ok(null)");
    }
}
