//! Column types by the names SQL catalogs give them — what DuckDB's and
//! Spark's `DESCRIBE` print, PostgreSQL's `information_schema` — read
//! into the catalog's `Column`: `BIGINT`, `DECIMAL(9,2)`, `TIMESTAMP WITH
//! TIME ZONE`, `STRUCT(sku VARCHAR, qty BIGINT)[]`,
//! `ARRAY<STRUCT<sku: STRING, qty: BIGINT>>`, `MAP(VARCHAR, INTEGER)`.
//!
//! A column list is written as a table's columns are declared: `order_id
//! VARCHAR, amount DOUBLE, items STRUCT(sku VARCHAR)[]` (a `:` after a
//! name is allowed, as Spark's `simpleString` writes it).

use super::Column;

/// Whose words a type name is in, where the same word means different
/// types: Spark's `TIMESTAMP` is an instant (DuckDB's and PostgreSQL's
/// `TIMESTAMPTZ`), DuckDB's and PostgreSQL's is a wall-clock time
/// (Spark's `TIMESTAMP_NTZ`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Catalog {
    DuckDb,
    Spark,
    Trino,
    Postgres,
}

/// The columns of a list `name TYPE, name TYPE, …`.
pub fn columns_of(text: &str, catalog: Catalog) -> Result<Vec<(String, Column)>, String> {
    let mut p = Parser::new(text, catalog)?;
    let columns = p.fields(None)?;
    match p.peek() {
        None => Ok(columns),
        Some(t) => Err(format!("unexpected `{}` after the columns", t.text())),
    }
}

/// The column of one type name.
pub fn column_of(text: &str, catalog: Catalog) -> Result<Column, String> {
    let mut p = Parser::new(text, catalog)?;
    let column = p.ty()?;
    match p.peek() {
        None => Ok(column),
        Some(t) => Err(format!("unexpected `{}` after the type", t.text())),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// A word or a quoted name, and whether it was quoted.
    Word(String, bool),
    Number(u32),
    Punct(char),
}

impl Token {
    fn text(&self) -> String {
        match self {
            Token::Word(w, _) => w.clone(),
            Token::Number(n) => n.to_string(),
            Token::Punct(c) => c.to_string(),
        }
    }
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    /// How many types the one being read is inside.
    depth: usize,
    catalog: Catalog,
}

/// Nested types deeper than this are refused (a list of lists of … ).
const MAX_DEPTH: usize = 64;

impl Parser {
    fn new(text: &str, catalog: Catalog) -> Result<Parser, String> {
        let mut tokens = Vec::new();
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                c if c.is_whitespace() => {}
                '"' | '`' => {
                    let mut name = String::new();
                    loop {
                        match chars.next() {
                            Some((_, q)) if q == c => {
                                // A doubled quote is one quote inside the name.
                                if chars.peek().is_some_and(|&(_, n)| n == c) {
                                    chars.next();
                                    name.push(c);
                                } else {
                                    break;
                                }
                            }
                            Some((_, other)) => name.push(other),
                            None => return Err(format!("a name quoted at {i} is not closed")),
                        }
                    }
                    tokens.push(Token::Word(name, true));
                }
                '(' | ')' | '<' | '>' | '[' | ']' | ',' | ':' => tokens.push(Token::Punct(c)),
                c if c.is_ascii_digit() => {
                    let mut n = c.to_digit(10).unwrap_or(0);
                    while let Some(&(_, d)) = chars.peek() {
                        let Some(d) = d.to_digit(10) else { break };
                        n = n
                            .checked_mul(10)
                            .and_then(|n| n.checked_add(d))
                            .ok_or("a number too large in a type")?;
                        chars.next();
                    }
                    tokens.push(Token::Number(n));
                }
                c if c.is_alphanumeric() || c == '_' => {
                    let mut word = String::from(c);
                    while let Some(&(_, d)) = chars.peek() {
                        if !(d.is_alphanumeric() || d == '_' || d == '.') {
                            break;
                        }
                        word.push(d);
                        chars.next();
                    }
                    tokens.push(Token::Word(word, false));
                }
                other => return Err(format!("unexpected `{other}` in a column type")),
            }
        }
        Ok(Parser {
            tokens,
            at: 0,
            depth: 0,
            catalog,
        })
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Token::Punct(c)) {
            self.at += 1;
            return true;
        }
        false
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        match self.next() {
            Some(Token::Punct(p)) if p == c => Ok(()),
            Some(t) => Err(format!("expected `{c}`, found `{}`", t.text())),
            None => Err(format!("expected `{c}` at the end")),
        }
    }

    /// `name [:] TYPE, …` up to `close` (or the end).
    fn fields(&mut self, close: Option<char>) -> Result<Vec<(String, Column)>, String> {
        let mut fields = Vec::new();
        loop {
            if close.is_some_and(|c| self.peek() == Some(&Token::Punct(c))) {
                break;
            }
            let name = match self.next() {
                Some(Token::Word(w, _)) => w,
                Some(t) => return Err(format!("expected a column name, found `{}`", t.text())),
                None => return Err("expected a column name at the end".into()),
            };
            self.eat(':');
            let column = self.ty().map_err(|why| format!("column `{name}`: {why}"))?;
            if fields.iter().any(|(n, _): &(String, Column)| *n == name) {
                return Err(format!("column `{name}` is named twice"));
            }
            fields.push((name, column));
            if !self.eat(',') {
                break;
            }
        }
        Ok(fields)
    }

    fn ty(&mut self) -> Result<Column, String> {
        if self.depth == MAX_DEPTH {
            return Err(format!(
                "a column type nested deeper than {MAX_DEPTH} levels"
            ));
        }
        self.depth += 1;
        let column = self.nested_ty();
        self.depth -= 1;
        column
    }

    fn nested_ty(&mut self) -> Result<Column, String> {
        let mut column = self.base()?;
        // `T[]` (DuckDB, PostgreSQL), `T[3]` (DuckDB's arrays).
        while self.eat('[') {
            if let Some(Token::Number(_)) = self.peek() {
                self.at += 1;
            }
            self.expect(']')?;
            column = Column::List(Box::new(column));
        }
        Ok(column)
    }

    fn base(&mut self) -> Result<Column, String> {
        let Some(Token::Word(first, false)) = self.next() else {
            return Err("expected a type name".into());
        };
        let upper = first.to_ascii_uppercase();
        match upper.as_str() {
            "ARRAY" | "LIST" => {
                let close = self.open()?;
                let element = self.ty()?;
                self.expect(close)?;
                return Ok(Column::List(Box::new(element)));
            }
            "STRUCT" | "ROW" => {
                let close = self.open()?;
                let fields = self.fields(Some(close))?;
                self.expect(close)?;
                return Ok(Column::Struct(fields));
            }
            "MAP" => {
                let close = self.open()?;
                self.ty()?;
                self.expect(',')?;
                let value = self.ty()?;
                self.expect(close)?;
                return Ok(Column::Map(Box::new(value)));
            }
            _ => {}
        }
        // A name of one or more words, with numbers in parentheses
        // anywhere among them (`TIMESTAMP(3) WITH TIME ZONE`).
        let mut words = vec![upper];
        let mut numbers = Vec::new();
        loop {
            if self.peek() == Some(&Token::Punct('(')) {
                self.at += 1;
                loop {
                    match self.next() {
                        Some(Token::Number(n)) => numbers.push(n),
                        Some(t) => return Err(format!("expected a number, found `{}`", t.text())),
                        None => return Err("expected a number at the end".into()),
                    }
                    if !self.eat(',') {
                        break;
                    }
                }
                self.expect(')')?;
                continue;
            }
            let more = [
                "PRECISION",
                "VARYING",
                "WITH",
                "WITHOUT",
                "TIME",
                "ZONE",
                "LOCAL",
            ];
            match self.peek() {
                Some(Token::Word(w, false)) if more.iter().any(|m| w.eq_ignore_ascii_case(m)) => {
                    words.push(w.to_ascii_uppercase());
                    self.at += 1;
                }
                _ => break,
            }
        }
        named(&words.join(" "), &numbers, self.catalog)
    }

    /// `(` or `<` opening a type's parameters; the one that closes them.
    fn open(&mut self) -> Result<char, String> {
        if self.eat('(') {
            Ok(')')
        } else if self.eat('<') {
            Ok('>')
        } else {
            Err("expected `(` or `<` after a nested type's name".into())
        }
    }
}

/// A type of a one-or-more-word name and its numbers.
fn named(name: &str, numbers: &[u32], catalog: Catalog) -> Result<Column, String> {
    let timestamp = |digits: u8, utc: bool| {
        let digits = numbers.first().map_or(digits, |&p| fraction(p));
        Column::Timestamp { digits, utc }
    };
    Ok(match name {
        "BOOLEAN" | "BOOL" => Column::Bool,
        "TINYINT" | "SMALLINT" | "INT" | "INTEGER" | "BIGINT" | "HUGEINT" | "UTINYINT"
        | "USMALLINT" | "UINTEGER" | "UBIGINT" | "UHUGEINT" | "INT1" | "INT2" | "INT4"
        | "INT8" | "INT16" | "INT32" | "INT64" | "LONG" | "SHORT" | "BYTE" | "SIGNED"
        | "SMALLSERIAL" | "SERIAL" | "BIGSERIAL" => Column::Int,
        "REAL" | "FLOAT" | "FLOAT4" | "FLOAT8" | "DOUBLE" | "DOUBLE PRECISION" => Column::Float,
        "DECIMAL" | "NUMERIC" | "DEC" => match numbers {
            [_, scale] => Column::Decimal {
                scale: i8::try_from(*scale).map_err(|_| format!("{name} of scale {scale}"))?,
            },
            [_] => Column::Decimal { scale: 0 },
            _ => {
                return Err(format!(
                    "{name} without a precision and scale: say them (`{name}(18,3)`), as the catalog prints them"
                ))
            }
        },
        "VARCHAR" | "TEXT" | "STRING" | "CHAR" | "CHARACTER" | "CHARACTER VARYING" | "BPCHAR"
        | "NVARCHAR" | "NCHAR" | "UUID" | "CITEXT" => Column::Text,
        "BLOB" | "BYTEA" | "BINARY" | "VARBINARY" | "BYTES" => Column::Binary,
        "DATE" => Column::Date,
        "TIMESTAMP" => timestamp(6, catalog == Catalog::Spark),
        "DATETIME" | "TIMESTAMP_NTZ" | "TIMESTAMP WITHOUT TIME ZONE" => timestamp(6, false),
        "TIMESTAMP_MS" => timestamp(3, false),
        "TIMESTAMP_S" => timestamp(0, false),
        "TIMESTAMP_NS" => timestamp(9, false),
        "TIMESTAMPTZ_NS" => timestamp(9, true),
        "TIMESTAMPTZ" | "TIMESTAMP_LTZ" | "TIMESTAMP WITH TIME ZONE"
        | "TIMESTAMP WITH LOCAL TIME ZONE" => timestamp(6, true),
        "TIME" | "TIME WITHOUT TIME ZONE" => Column::Time {
            digits: numbers.first().map_or(6, |&p| fraction(p)),
        },
        "JSON" | "JSONB" | "VARIANT" => {
            return Err(format!(
                "{name} is not typed: check its text as JSON lines (`--from` a table with a text column `line`)"
            ))
        }
        other => return Err(format!("{other} has no HQL value")),
    })
}

/// The fraction digits a precision keeps, as a unit's: 0, 3, 6 or 9.
fn fraction(precision: u32) -> u8 {
    match precision {
        0 => 0,
        1..=3 => 3,
        4..=6 => 6,
        _ => 9,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: Catalog = Catalog::DuckDb;

    #[test]
    fn catalogs_names_read_as_columns() {
        assert_eq!(column_of("bigint", Catalog::DuckDb), Ok(Column::Int));
        assert_eq!(column_of("DOUBLE PRECISION", D), Ok(Column::Float));
        assert_eq!(
            column_of("DECIMAL(9,2)", D),
            Ok(Column::Decimal { scale: 2 })
        );
        assert_eq!(
            column_of("timestamp(3) with time zone", D),
            Ok(Column::Timestamp {
                digits: 3,
                utc: true
            })
        );
        assert_eq!(
            column_of("TIMESTAMP WITH TIME ZONE", D),
            Ok(Column::Timestamp {
                digits: 6,
                utc: true
            })
        );
        let items = Column::List(Box::new(Column::Struct(vec![
            ("sku".into(), Column::Text),
            ("qty".into(), Column::Int),
        ])));
        assert_eq!(
            column_of("STRUCT(sku VARCHAR, qty BIGINT)[]", D),
            Ok(items.clone())
        );
        assert_eq!(
            column_of("array<struct<sku:string,qty:bigint>>", D),
            Ok(items.clone())
        );
        assert_eq!(
            column_of("MAP(VARCHAR, INTEGER)", D),
            Ok(Column::Map(Box::new(Column::Int)))
        );
        let columns = columns_of(
            "order_id VARCHAR, \"placed on\" DATE, items STRUCT(sku VARCHAR, qty BIGINT)[]",
            D,
        )
        .unwrap();
        assert_eq!(
            columns,
            vec![
                ("order_id".into(), Column::Text),
                ("placed on".into(), Column::Date),
                ("items".into(), items)
            ]
        );
        assert_eq!(
            columns_of("a: bigint, b: string", D).unwrap(),
            vec![("a".into(), Column::Int), ("b".into(), Column::Text)]
        );
    }

    #[test]
    fn spark_timestamps_are_instants() {
        let instant = Column::Timestamp {
            digits: 6,
            utc: true,
        };
        assert_eq!(column_of("timestamp", Catalog::Spark), Ok(instant));
        assert_eq!(
            column_of("timestamp", D),
            Ok(Column::Timestamp {
                digits: 6,
                utc: false
            })
        );
        assert_eq!(
            column_of("timestamp_ntz", Catalog::Spark),
            column_of("timestamp", Catalog::Postgres)
        );
    }

    #[test]
    fn what_has_no_value_is_named() {
        assert!(column_of("INTERVAL", D)
            .unwrap_err()
            .contains("INTERVAL has no HQL value"));
        assert!(column_of("JSON", D).unwrap_err().contains("not typed"));
        assert!(column_of("NUMERIC", D)
            .unwrap_err()
            .contains("precision and scale"));
        assert!(columns_of("a INT, a TEXT", D)
            .unwrap_err()
            .contains("named twice"));
        assert!(columns_of("a INT,", D).is_err());
        assert!(columns_of("a STRUCT(b INT", D).is_err());
        assert!(columns_of("a INT b", D).is_err());
        assert!(column_of("\"x", D).is_err());
        // Deep nesting is an error, not a crash.
        let deep = format!("{}INT{}", "ARRAY<".repeat(10_000), ">".repeat(10_000));
        assert!(column_of(&deep, D).is_err());
    }
}
