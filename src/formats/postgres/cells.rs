//! A PostgreSQL cell's text as an HQL value, by its column's type. The
//! rows are read in the text form (the transaction sets ISO dates, UTC
//! times, shortest exact floats and hex `bytea`), so every value arrives
//! as the server prints it and is converted here once.

use postgres::types::{Kind, Type};

use crate::formats::base64;
use crate::runtime::json::Decoder;
use crate::runtime::value::Value;

/// How a column's cells convert.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Bool,
    Int,
    Float,
    /// `numeric`: its exact digits.
    Numeric,
    /// Text types, `uuid`, enums: as they are.
    Text,
    /// `YYYY-MM-DD`.
    Date,
    /// RFC 3339, `Z` when the column has a time zone.
    Timestamp {
        utc: bool,
    },
    Time,
    Json,
    /// Hex text, as base64.
    Bytea,
    Array(Box<Cell>),
}

impl Cell {
    /// How cells of `ty` convert, or the type's name when they have no
    /// HQL value.
    pub fn of(ty: &Type) -> Result<Cell, String> {
        match ty.kind() {
            Kind::Array(element) => return Ok(Cell::Array(Box::new(Cell::of(element)?))),
            Kind::Domain(base) => return Cell::of(base),
            Kind::Enum(_) => return Ok(Cell::Text),
            _ => {}
        }
        Ok(match *ty {
            Type::BOOL => Cell::Bool,
            Type::INT2 | Type::INT4 | Type::INT8 | Type::OID => Cell::Int,
            Type::FLOAT4 | Type::FLOAT8 => Cell::Float,
            Type::NUMERIC => Cell::Numeric,
            Type::TEXT
            | Type::VARCHAR
            | Type::BPCHAR
            | Type::NAME
            | Type::UUID
            | Type::CHAR
            | Type::UNKNOWN => Cell::Text,
            Type::DATE => Cell::Date,
            Type::TIMESTAMP => Cell::Timestamp { utc: false },
            Type::TIMESTAMPTZ => Cell::Timestamp { utc: true },
            Type::TIME => Cell::Time,
            Type::JSON | Type::JSONB => Cell::Json,
            Type::BYTEA => Cell::Bytea,
            _ if ty.name() == "citext" => Cell::Text,
            _ => return Err(ty.name().to_string()),
        })
    }

    /// The value of a cell's text; what it holds when that has no HQL
    /// value (a NaN, an infinity, a date out of the calendar's range).
    pub fn value(&self, text: &str, decoder: &mut Decoder) -> Result<Value, &'static str> {
        Ok(match self {
            Cell::Bool => Value::Bool(text == "t"),
            Cell::Int => match text.parse::<i64>() {
                Ok(n) => Value::Int(n),
                Err(_) => Value::from_number_text(text),
            },
            Cell::Float => match text {
                "NaN" => return Err("NaN"),
                "Infinity" => return Err("Infinity"),
                "-Infinity" => return Err("-Infinity"),
                _ => Value::Float(text.parse().map_err(|_| "a number it cannot read")?),
            },
            Cell::Numeric => match text {
                "NaN" => return Err("NaN"),
                "Infinity" => return Err("Infinity"),
                "-Infinity" => return Err("-Infinity"),
                _ => Value::from_number_text(text),
            },
            Cell::Text | Cell::Time => Value::str(text),
            Cell::Date => {
                if !calendar(text) {
                    return Err("a date outside the years 1 to 9999");
                }
                Value::str(text)
            }
            Cell::Timestamp { utc } => Value::str(timestamp(text, *utc)?),
            Cell::Json => decoder
                .decode(text.as_bytes())
                .unwrap_or_else(|_| Value::str(text)),
            Cell::Bytea => Value::str(base64(&unhex(text).ok_or("bytea it cannot read")?)),
            Cell::Array(element) => {
                let parsed = parse_array(text).ok_or("an array it cannot read")?;
                array_value(&parsed, element, decoder)?
            }
        })
    }
}

/// Is `text` a date of the ISO calendar as HQL writes one (`YYYY-MM-DD`,
/// no era, no infinity)?
fn calendar(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// `2024-01-02 03:04:05.678+00` as `2024-01-02T03:04:05.678Z` (the
/// transaction's time zone is UTC); without a zone, no `Z`.
fn timestamp(text: &str, utc: bool) -> Result<String, &'static str> {
    if !calendar(text.get(..10).unwrap_or_default()) || text.as_bytes().get(10) != Some(&b' ') {
        return Err("a time outside the years 1 to 9999");
    }
    let (date, time) = text.split_at(10);
    let time = &time[1..];
    Ok(match utc {
        true => {
            let time = time.strip_suffix("+00").unwrap_or(time);
            format!("{date}T{time}Z")
        }
        false => format!("{date}T{time}"),
    })
}

/// `\x68690a` as its bytes.
fn unhex(text: &str) -> Option<Vec<u8>> {
    let hex = text.strip_prefix("\\x")?.as_bytes();
    if hex.len() % 2 != 0 {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    hex.chunks(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

/// An array's text, parsed: nested lists of elements, `None` for `NULL`.
#[derive(Debug, PartialEq)]
enum Element {
    Null,
    Text(String),
    List(Vec<Element>),
}

fn array_value(e: &Element, cell: &Cell, decoder: &mut Decoder) -> Result<Value, &'static str> {
    Ok(match e {
        Element::Null => Value::Null,
        Element::Text(text) => cell.value(text, decoder)?,
        Element::List(items) => Value::list(
            items
                .iter()
                .map(|i| array_value(i, cell, decoder))
                .collect::<Result<Vec<_>, _>>()?,
        ),
    })
}

/// Nested arrays deeper than this are not read (PostgreSQL allows 6).
const MAX_DIMENSIONS: usize = 16;

/// `{1,2,NULL}`, `{"a b","c\"d"}`, `{{1,2},{3,4}}`, `[0:1]={1,2}`.
fn parse_array(text: &str) -> Option<Element> {
    // Bounds other than the default are written before an `=`.
    let text = match text.strip_prefix('[') {
        Some(_) => &text[text.find('=')? + 1..],
        None => text,
    };
    let mut chars = text.chars().peekable();
    let list = parse_list(&mut chars, 0)?;
    chars.all(char::is_whitespace).then_some(list)
}

fn parse_list(chars: &mut std::iter::Peekable<std::str::Chars>, depth: usize) -> Option<Element> {
    if depth == MAX_DIMENSIONS || chars.next()? != '{' {
        return None;
    }
    let mut items = Vec::new();
    if chars.peek() == Some(&'}') {
        chars.next();
        return Some(Element::List(items));
    }
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let item = match chars.peek()? {
            '{' => parse_list(chars, depth + 1)?,
            '"' => {
                chars.next();
                let mut text = String::new();
                loop {
                    match chars.next()? {
                        '\\' => text.push(chars.next()?),
                        '"' => break,
                        c => text.push(c),
                    }
                }
                Element::Text(text)
            }
            _ => {
                let mut text = String::new();
                while let Some(&c) = chars.peek() {
                    if c == ',' || c == '}' {
                        break;
                    }
                    if c == '\\' {
                        chars.next();
                        text.push(chars.next()?);
                        continue;
                    }
                    text.push(c);
                    chars.next();
                }
                let text = text.trim_end();
                match text.eq_ignore_ascii_case("NULL") {
                    true => Element::Null,
                    false => Element::Text(text.to_string()),
                }
            }
        };
        items.push(item);
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.next()? {
            ',' => continue,
            '}' => return Some(Element::List(items)),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::print::to_hql;

    /// The value of `text` in a column of `cell`, as HQL prints it.
    fn value(cell: Cell, text: &str) -> Result<String, &'static str> {
        cell.value(text, &mut Decoder::new()).map(|v| to_hql(&v))
    }

    #[test]
    fn cells_read_as_hql_values() {
        assert_eq!(value(Cell::Int, "-42").unwrap(), "-42");
        assert_eq!(value(Cell::Float, "1").unwrap(), "1.0");
        assert_eq!(value(Cell::Float, "NaN"), Err("NaN"));
        assert_eq!(value(Cell::Numeric, "12.30").unwrap(), "12.30");
        assert_eq!(
            value(Cell::Timestamp { utc: true }, "2024-02-29 13:45:00.12+00").unwrap(),
            "\"2024-02-29T13:45:00.12Z\""
        );
        assert_eq!(
            value(Cell::Timestamp { utc: false }, "2024-02-29 13:45:00").unwrap(),
            "\"2024-02-29T13:45:00\""
        );
        assert!(value(Cell::Timestamp { utc: true }, "infinity").is_err());
        assert!(value(Cell::Date, "0044-03-15 BC").is_err());
        assert_eq!(value(Cell::Bytea, "\\x666f6f").unwrap(), "\"Zm9v\"");
        assert_eq!(value(Cell::Bool, "f").unwrap(), "false");
        assert_eq!(
            value(Cell::Json, r#"{"a": [1, 2.50]}"#).unwrap(),
            "{a: [1, 2.50]}"
        );
    }

    #[test]
    fn arrays_read_as_lists() {
        let ints = Cell::Array(Box::new(Cell::Int));
        assert_eq!(value(ints.clone(), "{1,NULL,3}").unwrap(), "[1, null, 3]");
        assert_eq!(
            value(ints.clone(), "{{1,2},{3,4}}").unwrap(),
            "[[1, 2], [3, 4]]"
        );
        assert_eq!(value(ints.clone(), "{}").unwrap(), "[]");
        assert_eq!(value(ints, "[0:1]={5,6}").unwrap(), "[5, 6]");
        let texts = Cell::Array(Box::new(Cell::Text));
        assert_eq!(
            value(texts.clone(), r#"{"a b","c\"d",NULL,"NULL",plain}"#).unwrap(),
            r#"["a b", "c\"d", null, "NULL", "plain"]"#
        );
        assert!(value(texts.clone(), "{\"open").is_err());
        assert!(value(texts.clone(), "{a}x").is_err());
        let deep = format!("{}{}", "{".repeat(100), "}".repeat(100));
        assert!(value(texts, &deep).is_err());
    }
}
