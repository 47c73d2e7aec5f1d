//! JSON sources (JSON Lines or one array, language.md §6) and targets
//! (JSON Lines, or one array for a `.json` file).
//!
//! Reading is [`framing::JsonSource`]'s; this module gives its records
//! their origins and the schema boundary's names, gives the execution
//! paths its lines through [`JsonText`], and writes records back as
//! compact JSON.

use std::io::Write;
use std::rc::Rc;

use super::write_error;
use crate::runtime::builtins::{Format, FormatDef, FormatOption};
use crate::runtime::contract::Contract;
use crate::runtime::eval::io::{
    line_too_long, Boundary, Codec, Decoded, DecodedRecords, Hint, Input, JsonInput, JsonText,
    LineReader, Plain, RecordWriter, Registered, SourceSpec, TargetSpec,
};
use crate::runtime::eval::{check_interrupt, Item, Items, Origin, Result, RuntimeError};
use crate::runtime::json::write_json;
use crate::runtime::validate::decode_failure;
use crate::runtime::value::{Record, Value};

mod framing;
mod pointer;

use framing::{Ending, JsonSource};

pub struct Json;

pub static JSON: Json = Json;

/// JSON as the registry knows it: JSON Lines or one array; a `.json`
/// target is written as one array.
pub const FORMAT: Registered = Registered {
    format: Format::new(&FormatDef {
        name: "Json",
        in_programs: true,
        extensions: &["jsonl", "json"],
        more_extensions: &["ndjson"],
        whole_extensions: &["json"],
        synonyms: &["jsonl", "ndjson", "jsonlines"],
        options: &[FormatOption::At],
    }),
    codec: &JSON,
};

impl Codec for Json {
    fn json_text(&self) -> Option<&dyn JsonText> {
        Some(self)
    }

    fn sniff(&self, spec: &SourceSpec, first: &[u8], complete: bool) -> Option<Hint> {
        super::sniff::json(spec, first, complete)
    }

    fn read(
        &self,
        input: Input,
        spec: &SourceSpec,
        _shape: Option<&Rc<Contract>>,
    ) -> Result<DecodedRecords> {
        let input = input.bytes(spec)?;
        let name = spec.name.clone();
        let boundary = spec.boundary.clone();
        let source = match &spec.boundary.json.at {
            Some(pointer) => JsonSource::at(input, pointer),
            None => JsonSource::new(input),
        };
        Ok(Box::new(Plain(source.map(move |d| {
            let (value, origin) = record(d, &name, 0)?;
            let value = renamed(value, &boundary);
            Ok(Decoded { value, origin })
        }))))
    }

    fn writer(
        &self,
        spec: &TargetSpec,
        _shape: Option<&Rc<Contract>>,
    ) -> Option<Box<dyn RecordWriter>> {
        Some(Box::new(JsonWriter {
            array: spec.whole,
            written: 0,
            line: String::new(),
        }))
    }
}

impl JsonText for Json {
    fn items(
        &self,
        input: JsonInput,
        name: Rc<str>,
        lines_before: u64,
        line_reader: Option<LineReader>,
    ) -> Items {
        let source = match input {
            JsonInput::Whole(reader) => JsonSource::new(reader),
            JsonInput::Lines { first: None, rest } => JsonSource::lines(rest),
            JsonInput::Lines {
                first: Some(line),
                rest,
            } => JsonSource::lines(rest).with_first_line(line),
        };
        let source = match line_reader {
            Some(reader) => source.with_line_reader(reader),
            None => source,
        };
        Box::new(source.map(move |d| {
            let (value, origin) = record(d, &name, lines_before)?;
            Ok(Item {
                value,
                origin: Some(origin),
            })
        }))
    }
}

/// The error of the pointer `at` naming no array in the source `name`,
/// where the walk met `why`.
fn pointer_missing(name: &str, pointer: &str, why: &str) -> RuntimeError {
    RuntimeError::new(
        "hql::io",
        format!("cannot read {name}: the pointer `at: {pointer:?}` {why}"),
    )
    .with_help("`at` names the array that holds the records, from the document's root: `\"/data\"` for `{\"data\": [...]}`")
}

/// A record of the source `name` as read (or its `decode` failure), with
/// its origin; a line too long ends the reading with an error.
fn record(d: framing::Decoded, name: &Rc<str>, lines_before: u64) -> Result<(Value, Origin)> {
    check_interrupt()?;
    let origin = Origin {
        source: name.clone(),
        line: lines_before + d.line,
    };
    let value = match d.result {
        Ok(v) => v,
        Err(f) => match f.ending {
            Some(Ending::TooLong) => return Err(line_too_long(name, origin.line)),
            Some(Ending::Unreadable(u)) => return Err(u.error(name)),
            Some(Ending::Pointer(pointer)) => {
                return Err(pointer_missing(name, &pointer, &f.message))
            }
            None => decode_failure(&origin, f.raw, f.message),
        },
    };
    Ok((value, origin))
}

/// A record's keys under the program's names, where the boundary renames
/// columns.
fn renamed(v: Value, boundary: &Boundary) -> Value {
    match v {
        Value::Record(r) if !boundary.columns.is_empty() => Value::record(
            r.iter()
                .map(|(k, v)| (boundary.field_of(k).0.into(), v.clone()))
                .collect::<Record>(),
        ),
        v => v,
    }
}

struct JsonWriter {
    array: bool,
    written: u64,
    line: String,
}

/// The longest buffer a writer keeps from one record for the next.
const KEPT_BUFFER: usize = 1 << 20;

impl RecordWriter for JsonWriter {
    fn write(&mut self, out: &mut dyn Write, record: &Value) -> Result<()> {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        write_json(&mut line, record);
        let written = self.write_json_text(out, line.as_bytes()).map(|_| ());
        // The buffer of a huge record is let go rather than kept.
        if line.capacity() <= KEPT_BUFFER {
            self.line = line;
        }
        written
    }

    fn write_json_text(&mut self, out: &mut dyn Write, text: &[u8]) -> Result<bool> {
        let before: &[u8] = match (self.array, self.written) {
            (false, _) => b"",
            (true, 0) => b"[\n",
            (true, _) => b",\n",
        };
        let after: &[u8] = if self.array { b"" } else { b"\n" };
        self.written += 1;
        out.write_all(before)
            .and_then(|()| out.write_all(text))
            .and_then(|()| out.write_all(after))
            .map_err(write_error)?;
        Ok(true)
    }

    fn write_json_lines(&mut self, out: &mut dyn Write, text: &[u8], n: u64) -> Result<bool> {
        if self.array {
            return Ok(false);
        }
        self.written += n;
        out.write_all(text).map_err(write_error)?;
        Ok(true)
    }

    fn finish(&mut self, out: &mut dyn Write) -> Result<()> {
        out.write_all(&self.tail()).map_err(write_error)
    }

    fn tail(&self) -> Vec<u8> {
        let end: &[u8] = match (self.array, self.written) {
            (false, _) => b"",
            (true, 0) => b"[]\n",
            (true, _) => b"\n]\n",
        };
        end.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, Cursor};

    use super::*;
    use crate::runtime::json::to_json;

    fn read(input: JsonInput, lines_before: u64, hook: Option<LineReader>) -> Vec<(u64, String)> {
        JSON.items(input, "in.jsonl".into(), lines_before, hook)
            .map(|item| {
                let item = item.expect("no error");
                (item.origin.expect("an origin").line, to_json(&item.value))
            })
            .collect()
    }

    fn bytes(text: &str) -> Box<dyn BufRead> {
        Box::new(Cursor::new(text.as_bytes().to_vec()))
    }

    /// A whole source is framed by its first significant byte, after a
    /// byte-order mark: an array's elements carry their lines.
    #[test]
    fn a_whole_source_is_json_lines_or_one_array() {
        let lines = read(
            JsonInput::Whole(bytes("\u{feff}{\"a\":1}\n\n[2]\n")),
            0,
            None,
        );
        assert_eq!(lines, [(1, r#"{"a":1}"#.into()), (3, "[2]".into())]);
        let array = read(JsonInput::Whole(bytes("[\n{\"a\":1},\n2]")), 0, None);
        assert_eq!(array, [(2, r#"{"a":1}"#.into()), (3, "2".into())]);
    }

    /// A chunk's lines are numbered after the lines before it, its first
    /// line held apart is read first, and a line opening with `[` is a
    /// record of its own.
    #[test]
    fn a_chunk_reads_its_first_line_then_the_rest() {
        let input = JsonInput::Lines {
            first: Some(b"{\"a\":1}\n".to_vec()),
            rest: bytes("[2]\n{\"a\":3}\n"),
        };
        let read = read(input, 10, None);
        let lines: Vec<u64> = read.iter().map(|(line, _)| *line).collect();
        assert_eq!(lines, [11, 12, 13]);
        assert_eq!(read[1].1, "[2]");
    }

    /// The line reader's value stands for its line; a line it declines is
    /// decoded, and a line that does not decode is a `decode` failure.
    #[test]
    fn the_line_reader_is_offered_each_line_first() {
        let hook: LineReader = Box::new(|line| (line == b"{\"a\":1}").then(|| Value::Int(7)));
        let read = read(
            JsonInput::Whole(bytes("{\"a\":1}\n{\"a\":2}\n{\n")),
            0,
            Some(hook),
        );
        assert_eq!(read[0], (1, "7".into()));
        assert_eq!(read[1], (2, r#"{"a":2}"#.into()));
        assert!(read[2].1.contains("decode"), "{}", read[2].1);
    }
}
