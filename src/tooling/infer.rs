//! `hql infer` and the REPL's `:infer`: a contract that every sampled
//! record satisfies (tooling.md, "Commands").
//!
//! Records are folded one at a time into an [`Inference`], which keeps per
//! field only what the contract needs — how often it was present, the kinds
//! of value it held in first-seen order, whether it was null, and up to
//! [`MAX_LITERALS`] distinct texts — so memory grows with the number of
//! fields, never with the number of records. [`Inference::contract`]
//! renders the declaration in canonical layout. A field of texts only,
//! every one of which is a `Date`, a `Timestamp` or an `Email` of the
//! standard library (by the native twins of their rules), gets that type.
//!
//! CSV cells are text until a declared type converts them (language.md
//! §6.1), so a CSV source's top-level texts are read as the cell decoding
//! would read them under the inferred type: a cell that parses as an Int,
//! a Float or a Bool counts as one, a cell holding a JSON list or object
//! as that value, and everything else — including numbers written with a
//! leading zero or `+`, whose text a number type would not keep — as text.

use std::collections::HashMap;

use crate::formats::{convert_csv_cell as convert, CsvCell as Cell};
use crate::runtime::contract::TypeSpec;
use crate::runtime::eval::io::Physical;
use crate::runtime::eval::{Plan, RuntimeError, SourceSpec};
use crate::runtime::exec::stages::items;
use crate::runtime::json::Decoder;
use crate::runtime::stdlib_native::Native;
use crate::runtime::value::{Key, NumKind, Record, Value};
use crate::syntax::canonical::{is_identifier, write_json_string, write_key};

/// A text field becomes a union of its literals when it holds at most this
/// many distinct texts…
pub const MAX_LITERALS: usize = 8;
/// …over at least this many records where it is present.
pub const MIN_LITERAL_RECORDS: u64 = 20;

/// The standard library's text types `infer` proposes, each with the
/// native twin of its rule, in the order tried.
const STANDARD_TEXTS: [(&str, Native); 3] = [
    ("Date", Native::IsDate),
    ("Timestamp", Native::IsTimestamp),
    ("Email", Native::IsEmail),
];

/// How a source's top-level texts are to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Texts {
    /// As the values they are (JSON, SQLite, values a program built).
    Typed,
    /// As CSV cells, which decoding converts to a field's declared type.
    Csv,
}

/// What is folded so far: the records' summary and what was left out.
pub struct Inference {
    root: Fields,
    texts: Texts,
    /// Fields whose CSV cells stay text whatever they hold (a boundary's
    /// `type = "string"`).
    verbatim: Vec<String>,
    decoder: Decoder,
    /// Items left out: lines that did not decode, values that are not
    /// records, failure records of a validated stream.
    pub undecodable: u64,
    pub not_records: u64,
    pub failures: u64,
}

/// The kinds a value may have, in the order a union lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Number,
    Text,
    List,
    Record,
    /// A value that is not data (a function, a type): only `Any` holds it.
    Any,
}

/// The fields of the records folded at one place, in first-seen order.
#[derive(Default)]
struct Fields {
    /// How many records were folded here.
    records: u64,
    fields: Vec<Field>,
    index: HashMap<Key, usize>,
}

struct Field {
    name: Key,
    /// Records where the field was present (null included).
    present: u64,
    ty: Summary,
}

/// The values seen at one place.
#[derive(Default)]
struct Summary {
    kinds: Vec<Kind>,
    null: bool,
    /// Was any number not an Int (so the numbers are `Float`)?
    float: bool,
    /// The distinct texts, while there are at most `MAX_LITERALS`.
    literals: Vec<std::rc::Rc<str>>,
    too_many_literals: bool,
    /// Was a CSV cell a number written with a leading zero or `+`? Its
    /// text is kept only if the field is `String`, so its numbers are too.
    padded: bool,
    /// Was a CSV cell the text `null`? Cell decoding reads it as null for a
    /// list or record type.
    null_text: bool,
    /// Has a text failed to be a `Date`, a `Timestamp`, an `Email` of the
    /// standard library (in that order)? A field of texts only, every one
    /// of which is one of them, gets that type.
    not_standard: [bool; 3],
    /// A list's elements, when a list was seen; its `records` count the
    /// lists folded.
    elements: Option<Box<Summary>>,
    /// Whether any list had an element.
    elements_seen: bool,
    record: Option<Box<Fields>>,
}

impl Inference {
    pub fn new(texts: Texts) -> Inference {
        Inference {
            root: Fields::default(),
            texts,
            verbatim: Vec::new(),
            decoder: Decoder::new(),
            undecodable: 0,
            not_records: 0,
            failures: 0,
        }
    }

    /// Fields whose CSV cells are kept as text.
    pub fn with_verbatim(mut self, fields: Vec<String>) -> Inference {
        self.verbatim = fields;
        self
    }

    /// How many records were folded.
    pub fn records(&self) -> u64 {
        self.root.records
    }

    /// Fold one top-level value: a record (or the record of an `ok`) is
    /// summarised; a failure record and anything else is counted.
    pub fn add(&mut self, value: &Value) {
        let record = match value {
            Value::Record(record) => record,
            Value::Ok(okay) => return self.add(&okay.value),
            Value::Err(failure) if is_decode_failure(failure) => {
                self.undecodable += 1;
                return;
            }
            Value::Err(_) => {
                self.failures += 1;
                return;
            }
            _ => {
                self.not_records += 1;
                return;
            }
        };
        match self.texts {
            Texts::Typed => self.root.add(record),
            Texts::Csv => {
                let (root, decoder, verbatim) = (&mut self.root, &mut self.decoder, &self.verbatim);
                root.add_with(record, &mut |field, v| match v {
                    Value::Str(s) if !verbatim.iter().any(|f| **f == *field.name) => {
                        field.ty.add_cell(s, decoder)
                    }
                    v => field.ty.add(v),
                });
            }
        }
    }

    /// What was left out, as a sentence for standard error; `None` when
    /// every item was folded.
    pub fn skipped(&self) -> Option<String> {
        let counts = [
            (
                self.undecodable,
                "line that does not decode",
                "lines that do not decode",
            ),
            (
                self.not_records,
                "value that is not a record",
                "values that are not records",
            ),
            (self.failures, "failure record", "failure records"),
        ];
        let parts: Vec<String> = counts
            .iter()
            .filter(|(n, _, _)| *n > 0)
            .map(|&(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
            .collect();
        (!parts.is_empty()).then(|| format!("skipped {}", parts.join(", ")))
    }

    /// The contract: `type NAME : DataContract = { … }` (`TypeContract`
    /// when closed), in canonical layout (the formatter's, so that `hql fmt
    /// --check` passes on it), ending in a newline.
    pub fn contract(&self, name: &str, closed: bool) -> String {
        let text = self.contract_text(name, closed);
        // The text is built from names checked to be identifiers and types
        // HQL writes itself: it parses; the fallback is for safety only.
        crate::syntax::format::format_source(&text).unwrap_or(text)
    }

    /// The contract, one field a line, before the formatter lays it out.
    fn contract_text(&self, name: &str, closed: bool) -> String {
        let kind = if closed {
            "TypeContract"
        } else {
            "DataContract"
        };
        let mut out = format!("type {name} : {kind} = {{");
        if self.root.fields.is_empty() {
            out.push_str("}\n");
            return out;
        }
        out.push('\n');
        for field in &self.root.fields {
            out.push_str("    ");
            write_field(&mut out, field, &self.root);
            out.push('\n');
        }
        out.push_str("}\n");
        out
    }
}

impl Fields {
    fn add(&mut self, record: &Record) {
        self.add_with(record, &mut |field, v| field.ty.add(v));
    }

    /// Fold a record, each present field's value through `each`.
    fn add_with(&mut self, record: &Record, each: &mut dyn FnMut(&mut Field, &Value)) {
        self.records += 1;
        for (i, (key, value)) in record.iter().enumerate() {
            // Records of one source mostly list their keys in one order.
            let at = match self.fields.get(i) {
                Some(f) if f.name == *key => i,
                _ => self.position(record, i),
            };
            let field = &mut self.fields[at];
            field.present += 1;
            each(field, value);
        }
    }

    /// The place of the record's field `i`. A field not seen before goes
    /// before the first field known already that follows it in the record
    /// (else last), so that fields keep the order records give them
    /// (a CSV header's, though a row's cell is empty).
    fn position(&mut self, record: &Record, i: usize) -> usize {
        let Some((key, _)) = record.get_index(i) else {
            return 0;
        };
        if let Some(&at) = self.index.get(key) {
            return at;
        }
        let at = record
            .iter()
            .skip(i + 1)
            .find_map(|(later, _)| self.index.get(later).copied())
            .unwrap_or(self.fields.len());
        self.fields.insert(
            at,
            Field {
                name: key.clone(),
                present: 0,
                ty: Summary::default(),
            },
        );
        for slot in self.index.values_mut().filter(|slot| **slot >= at) {
            *slot += 1;
        }
        self.index.insert(key.clone(), at);
        at
    }
}

impl Summary {
    fn kind(&mut self, kind: Kind) {
        if !self.kinds.contains(&kind) {
            self.kinds.push(kind);
        }
    }

    fn add(&mut self, value: &Value) {
        match value {
            Value::Null | Value::Absent => self.null = true,
            Value::Bool(_) => self.kind(Kind::Bool),
            Value::Int(_) => self.kind(Kind::Number),
            Value::Float(_) => self.number(true),
            Value::Num(n) => self.number(matches!(n.kind, NumKind::Float(_))),
            Value::Str(s) => self.text(s),
            Value::List(items) => {
                self.kind(Kind::List);
                let elements = self.elements.get_or_insert_with(Box::default);
                self.elements_seen |= !items.is_empty();
                for item in items.iter() {
                    elements.add(item);
                }
            }
            Value::Record(r) => {
                self.kind(Kind::Record);
                self.record.get_or_insert_with(Box::default).add(r);
            }
            // Results, functions, types and streams are not data: a
            // contract cannot name them.
            _ => self.kind(Kind::Any),
        }
    }

    fn number(&mut self, float: bool) {
        self.kind(Kind::Number);
        self.float |= float;
    }

    fn text(&mut self, s: &str) {
        self.kind(Kind::Text);
        for (not, (_, test)) in self.not_standard.iter_mut().zip(STANDARD_TEXTS) {
            *not = *not || test.test_text(s) != Some(true);
        }
        if self.too_many_literals || self.literals.iter().any(|l| **l == *s) {
            return;
        }
        if self.literals.len() == MAX_LITERALS {
            self.too_many_literals = true;
            self.literals = Vec::new();
        } else {
            self.literals.push(s.into());
        }
    }

    /// The standard library's text type every text here belongs to, for a
    /// summary of texts only (nulls aside).
    fn standard_text(&self) -> Option<&'static str> {
        if self.kinds != [Kind::Text] {
            return None;
        }
        let passed = self.not_standard.iter().zip(STANDARD_TEXTS);
        passed
            .filter(|(not, _)| !**not)
            .map(|(_, (name, _))| name)
            .next()
    }

    /// A CSV cell: what decoding would make of it under the inferred type.
    fn add_cell(&mut self, cell: &str, decoder: &mut Decoder) {
        if cell.starts_with(['[', '{']) {
            if let Ok(v @ (Value::List(_) | Value::Record(_))) = decoder.decode(cell.as_bytes()) {
                return self.add(&v);
            }
        }
        if keeps_text(cell) {
            self.padded = true;
            return self.text(cell);
        }
        match convert(cell, &TypeSpec::Int, decoder) {
            Some(_) => self.kind(Kind::Number),
            None => match convert(cell, &TypeSpec::Float, decoder) {
                Some(_) => self.number(true),
                None => match convert(cell, &TypeSpec::Bool, decoder) {
                    Some(Cell::Bool(_)) => self.kind(Kind::Bool),
                    _ => {
                        self.null_text |= cell == "null";
                        self.text(cell)
                    }
                },
            },
        }
    }
}

/// Does `spec`'s format read cells as text (CSV), which inference reads
/// as typed cells the way decoding by a contract would?
pub fn text_cells(spec: &SourceSpec) -> bool {
    crate::formats::codec(spec.format)
        .cells()
        .is_some_and(|c| c.cells_are_text())
}

/// Infer from a stream or a list: each item folded, at most `limit`
/// records. A CSV source's texts are read as cells, except in the columns
/// its boundary keeps as text.
pub fn infer_items(value: &Value, limit: Option<u64>) -> Result<Inference, RuntimeError> {
    let mut inference = match value {
        Value::Stream(s) => match s.plan() {
            Some(Plan::Source(spec)) if text_cells(spec) => {
                let verbatim = spec
                    .boundary
                    .columns
                    .iter()
                    .filter(|c| c.physical == Some(Physical::String))
                    .map(|c| c.field.clone())
                    .collect();
                Inference::new(Texts::Csv).with_verbatim(verbatim)
            }
            _ => Inference::new(Texts::Typed),
        },
        _ => Inference::new(Texts::Typed),
    };
    for item in items(value)? {
        if limit.is_some_and(|n| inference.records() >= n) {
            break;
        }
        inference.add(&item?.value);
    }
    Ok(inference)
}

/// The default type name for what `value` holds: from the file of the
/// source a stream reads (`default_name`), else `Record`.
pub fn default_name_of(value: &Value) -> String {
    match value {
        Value::Stream(s) => match s.plan() {
            Some(Plan::Source(spec) | Plan::Validated { source: spec, .. }) => {
                default_name(spec.path().unwrap_or(""))
            }
            _ => default_name(""),
        },
        _ => default_name(""),
    }
}

/// Is this failure record a `decode` failure (a line that did not decode)?
pub fn is_decode_failure(failure: &Value) -> bool {
    let Value::Record(envelope) = failure else {
        return false;
    };
    match envelope.get("failures") {
        Some(Value::List(list)) => list.iter().any(|f| match f {
            Value::Record(f) => f.get("kind").and_then(Value::as_str) == Some("decode"),
            _ => false,
        }),
        _ => false,
    }
}

/// Does a number's text carry more than its value — a `+`, or a leading
/// zero before another digit — so that the field must stay `String` to
/// keep it?
fn keeps_text(cell: &str) -> bool {
    if cell.starts_with('+') {
        return true;
    }
    let digits = cell.strip_prefix('-').unwrap_or(cell).as_bytes();
    digits.len() > 1 && digits[0] == b'0' && digits[1].is_ascii_digit()
}

fn write_field(out: &mut String, field: &Field, parent: &Fields) {
    write_key(out, &field.name);
    if field.present < parent.records {
        out.push('?');
    }
    out.push_str(": ");
    let literals = field.present >= MIN_LITERAL_RECORDS;
    write_type(out, &field.ty, literals);
}

/// A summary's type: its kinds as a union in first-seen order, `Null` last.
/// With `literals`, a field of texts only with few distinct ones is a union
/// of those texts.
fn write_type(out: &mut String, ty: &Summary, literals: bool) {
    let start = out.len();
    let member = |out: &mut String| {
        if out.len() > start {
            out.push_str(" | ");
        }
    };
    for kind in &ty.kinds {
        member(out);
        match kind {
            Kind::Bool => out.push_str("Bool"),
            // Its numbers' cells are read as text, as the padded ones are.
            Kind::Number if ty.padded => {
                if out.ends_with(" | ") {
                    out.truncate(out.len() - 3);
                }
            }
            Kind::Number if ty.float => out.push_str("Float"),
            Kind::Number => out.push_str("Int"),
            Kind::Text if ty.standard_text().is_some() => {
                out.push_str(ty.standard_text().unwrap_or("String"))
            }
            Kind::Text if literals && ty.kinds == [Kind::Text] && !ty.too_many_literals => {
                for (i, l) in ty.literals.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" | ");
                    }
                    write_json_string(out, l);
                }
            }
            Kind::Text => out.push_str("String"),
            Kind::List => {
                out.push_str("List[");
                match ty.elements.as_deref() {
                    Some(elements) if ty.elements_seen => write_type(out, elements, false),
                    _ => out.push_str("Any"),
                }
                out.push(']');
            }
            Kind::Record => write_inline(out, ty.record.as_deref().unwrap_or(&Fields::default())),
            Kind::Any => out.push_str("Any"),
        }
    }
    // Decoding a CSV cell `null` for a list or record type gives null.
    let null_text = ty.null_text
        && ty
            .kinds
            .iter()
            .any(|k| matches!(k, Kind::List | Kind::Record));
    if ty.null || null_text {
        member(out);
        out.push_str("Null");
    }
    if out.len() == start {
        out.push_str("Any");
    }
}

/// An inline record type: `{ a: Int, b?: String }`, or `{}`.
fn write_inline(out: &mut String, fields: &Fields) {
    if fields.fields.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push_str("{ ");
    for (i, field) in fields.fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_field(out, field, fields);
    }
    out.push_str(" }");
}

/// The type name for data read from `path`: its file stem, capitalised,
/// its words capitalised and joined (`orders-march.csv` → `OrdersMarch`,
/// `named_checks.jsonl` → `NamedChecks`), `T` before a leading digit; `Record` when
/// nothing is left, and a name that is a built-in type's gets `Record`
/// after it.
pub fn default_name(path: &str) -> String {
    let stem = std::path::Path::new(path)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("");
    let mut name = String::new();
    for word in stem.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            name.push(first.to_ascii_uppercase());
            name.extend(chars);
        }
    }
    if name.is_empty() {
        return "Record".into();
    }
    if !is_identifier(&name) {
        name.insert(0, 'T');
    }
    const BUILT_IN: &[&str] = &[
        "String",
        "Int",
        "Float",
        "Bool",
        "Null",
        "Any",
        "List",
        "Map",
        "Data",
        "Type",
        "DataContract",
        "TypeContract",
    ];
    if BUILT_IN.contains(&name.as_str()) {
        name.push_str("Record");
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::json::Decoder;

    fn infer(texts: Texts, lines: &[&str]) -> String {
        let mut decoder = Decoder::new();
        let mut inference = Inference::new(texts);
        for line in lines {
            inference.add(&decoder.decode(line.as_bytes()).unwrap());
        }
        inference.contract("T", false)
    }

    #[test]
    fn names_come_from_the_stem() {
        assert_eq!(default_name("data/orders.jsonl"), "Orders");
        assert_eq!(default_name("orders-march.csv"), "OrdersMarch");
        assert_eq!(default_name("2024 sales.json"), "T2024Sales");
        assert_eq!(default_name("string.json"), "StringRecord");
        assert_eq!(default_name("-"), "Record");
        assert_eq!(default_name("named_checks.jsonl"), "NamedChecks");
        assert_eq!(default_name("_x.json"), "X");
    }

    #[test]
    fn csv_texts_read_as_their_cells() {
        let lines = [
            r#"{"a": "7", "b": "007", "c": "true", "d": "[1]", "e": "1.5", "f": "+3"}"#,
            r#"{"a": "8", "b": "x", "c": "yes", "d": "null", "e": "2", "f": "4"}"#,
        ];
        assert_eq!(
            infer(Texts::Csv, &lines),
            "type T : DataContract = {\n    a: Int\n    b: String\n    c: Bool | String\n    \
             d: List[Int] | String | Null\n    e: Float\n    f: String\n}\n"
        );
    }

    #[test]
    fn typed_texts_stay_texts() {
        let lines = [
            r#"{"a": "7", "b": [], "c": null}"#,
            r#"{"a": "8", "b": []}"#,
        ];
        assert_eq!(
            infer(Texts::Typed, &lines),
            "type T : DataContract = {\n    a: String\n    b: List[Any]\n    c?: Null\n}\n"
        );
    }
}
