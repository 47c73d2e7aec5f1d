//! JSON sources (JSON Lines or one array, language.md §6) and targets
//! (JSON Lines, or one array for a `.json` file).
//!
//! Reading is `crate::runtime::json::JsonSource`'s; this module gives its records
//! their origins and the schema boundary's names, and writes records back
//! as compact JSON.

use std::io::{BufRead, Write};
use std::rc::Rc;

use super::write_error;
use crate::runtime::contract::Contract;
use crate::runtime::eval::io::{
    line_too_long, Boundary, Codec, Decoded, DecodedRecords, Plain, RecordWriter, SourceSpec,
    TargetSpec,
};
use crate::runtime::eval::{check_interrupt, Origin, Result};
use crate::runtime::json::{write_json, JsonSource};
use crate::runtime::validate::decode_failure;
use crate::runtime::value::{Record, Value};

pub struct Json;

pub static JSON: Json = Json;

impl Codec for Json {
    fn is_json_text(&self) -> bool {
        true
    }

    fn read(
        &self,
        input: Box<dyn BufRead>,
        spec: &SourceSpec,
        _shape: Option<&Rc<Contract>>,
    ) -> DecodedRecords {
        let name = spec.name.clone();
        let boundary = spec.boundary.clone();
        Box::new(Plain(JsonSource::new(input).map(move |d| {
            check_interrupt()?;
            let origin = Origin {
                source: name.clone(),
                line: d.line,
            };
            let value = match d.result {
                Ok(v) => renamed(v, &boundary),
                Err(f) if f.too_long => return Err(line_too_long(&name, d.line)),
                Err(f) => decode_failure(&origin, f.raw, f.message),
            };
            Ok(Decoded { value, origin })
        })))
    }

    fn writer(&self, spec: &TargetSpec, _shape: Option<&Rc<Contract>>) -> Box<dyn RecordWriter> {
        Box::new(JsonWriter {
            array: spec.array,
            written: 0,
            line: String::new(),
        })
    }
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
