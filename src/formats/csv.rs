//! CSV sources and targets (language.md §6.1; tooling.md, "Sources,
//! targets and the schema boundary").
//!
//! Reading: a header row names the columns (or, with `header = false`, the
//! contract's fields in order); each later row is one record of text cells,
//! an empty cell absent. Read for `validate(T)`, a cell converts to its
//! field's declared scalar type when its text parses as that type, and the
//! record as received keeps the text. A ragged row or one that is not UTF-8
//! is an `err` of kind `decode` with its line, and reading goes on.
//!
//! Writing: the header is the contract's fields when they are known, then
//! the first record's other fields; nested values are JSON text in a cell.

use std::io::{BufRead, Write};
use std::rc::Rc;

use super::write_error;
use crate::runtime::contract::{Contract, FieldSpec, Shape, TypeSpec};
use crate::runtime::eval::io::{
    line_too_long, max_line, Boundary, Cell, Codec, Column, CsvOptions, Decoded, DecodedRecords,
    Physical, RecordSource, RecordWriter, RowForCheck, SourceSpec, TargetSpec,
};
use crate::runtime::eval::{check_interrupt, Origin, Result, RuntimeError};
use crate::runtime::json::{write_float, write_int, write_json, Decoder};
use crate::runtime::print::write_hql;
use crate::runtime::validate::undecodable;
use crate::runtime::value::{Key, Record, Value};
use crate::syntax::canonical::write_json_string;

pub struct Csv;

pub static CSV: Csv = Csv;

const BOM: &str = "\u{feff}";

impl Codec for Csv {
    fn read(
        &self,
        input: Box<dyn BufRead>,
        spec: &SourceSpec,
        shape: Option<&Rc<Contract>>,
    ) -> DecodedRecords {
        Box::new(rows(input, spec, shape))
    }

    fn reads_by_shape(&self) -> bool {
        true
    }

    fn keeps_nesting(&self) -> bool {
        false
    }

    fn each_row_for_check(
        &self,
        input: Box<dyn BufRead>,
        spec: &SourceSpec,
        shape: &Rc<Contract>,
        each: &mut dyn FnMut(RowForCheck) -> Result<bool>,
    ) -> Option<Result<()>> {
        let mut rows = rows(input, spec, Some(shape));
        Some(rows.each_row_for_check(each))
    }

    fn writer(&self, spec: &TargetSpec, shape: Option<&Rc<Contract>>) -> Box<dyn RecordWriter> {
        let encoded = Encoded::default();
        let declared = shape
            .and_then(|c| c.record())
            .map(|r| r.fields.iter().map(|f| f.name.clone()).collect())
            .unwrap_or_default();
        Box::new(CsvWriter {
            target: spec.name.clone(),
            boundary: spec.boundary.clone(),
            declared,
            header: None,
            row: Vec::new(),
            bytes: csv::WriterBuilder::new()
                .delimiter(spec.boundary.csv.delimiter)
                .quote(spec.boundary.csv.quote)
                .from_writer(encoded.clone()),
            encoded,
        })
    }
}

// ------------------------------------------------------------------ reading

/// The rows of a CSV source, read by its options.
fn rows(input: Box<dyn BufRead>, spec: &SourceSpec, shape: Option<&Rc<Contract>>) -> Rows {
    let options = spec.boundary.csv;

    let tracked = Tracked::new(input);
    let track = tracked.state.clone();
    // Rows end at `\n` only, so that the reader's position tells where
    // each one starts; a `\r` before it is taken off the last cell.
    let reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(options.delimiter)
        .quote(options.quote)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_reader(tracked);
    Rows {
        reader,
        track,
        row: csv::ByteRecord::new(),
        columns: None,
        spec: spec.clone(),
        shape: shape.cloned(),
        decoder: Decoder::new(),
        finished: false,
        converted: false,
        distinct: false,
        skip_undeclared: admits_undeclared(shape.map(|c| &**c)),
    }
}

/// The rows of a CSV source, as records.
struct Rows {
    reader: csv::Reader<Tracked>,
    track: Rc<Track>,
    row: csv::ByteRecord,
    /// What each column holds, once the header is read.
    columns: Option<Vec<ColumnPlan>>,
    spec: SourceSpec,
    shape: Option<Rc<Contract>>,
    decoder: Decoder,
    finished: bool,
    /// Was the row last yielded converted by a contract (not a failure)?
    converted: bool,
    /// Do the columns name distinct fields (so a row needs no lookups)?
    distinct: bool,
    /// May `json_row` leave undeclared columns out (`admits_undeclared`)?
    skip_undeclared: bool,
}

impl RecordSource for Rows {
    fn received(&self) -> Option<Value> {
        self.converted.then(|| self.text_record())
    }
}

/// One column: the field it fills, and how its cells convert.
struct ColumnPlan {
    field: Key,
    /// The field's name as a JSON key and its colon, for `json_row`.
    json_key: String,
    boundary: Option<Column>,
    /// The field's position in the contract, when it declares the field.
    declared: Option<usize>,
}

impl Iterator for Rows {
    type Item = Result<Decoded>;

    fn next(&mut self) -> Option<Result<Decoded>> {
        self.converted = false;
        if self.finished {
            return None;
        }
        match self.advance() {
            Ok(Step::Row(line)) => Some(Ok(self.record(line))),
            Ok(Step::Failed(failure)) => Some(Ok(failure)),
            Ok(Step::End) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// What reading on gave: a data row (its line), a row that did not
/// decode, or the end.
enum Step {
    Row(u64),
    Failed(Decoded),
    End,
}

impl Rows {
    /// Read up to the next data row, past blank lines and the header.
    fn advance(&mut self) -> Result<Step> {
        loop {
            check_interrupt()?;
            let start = self.reader.position().clone();
            self.track.record_start.set(start.byte());
            let read = self.reader.read_byte_record(&mut self.row);
            if self.track.too_long.get() || self.row.as_slice().len() > max_line() {
                self.finished = true;
                return Err(line_too_long(&self.spec.name, start.line()));
            }
            match read {
                Ok(true) => {}
                Ok(false) => {
                    self.finished = true;
                    return Ok(Step::End);
                }
                Err(e) => {
                    self.finished = true;
                    let line = e.position().map_or(0, |p| p.line());
                    return Ok(Step::Failed(
                        self.failure(line, format!("cannot read: {e}")),
                    ));
                }
            }
            self.trim_line_end();
            if self.row.len() == 1 && self.row[0].is_empty() {
                continue;
            }
            let line = self.start_line();
            if self.columns.is_none() {
                if let Some(failure) = self.read_header(line) {
                    return Ok(Step::Failed(failure));
                }
                if self.spec.boundary.csv.header {
                    continue;
                }
            }
            return Ok(Step::Row(line));
        }
    }

    /// Each row for the line check: its converted cells, where the
    /// columns name distinct fields, then, if the check asks for it, the
    /// JSON text of its converted record; a row that does not decode as
    /// its failure.
    fn each_row_for_check(
        &mut self,
        each: &mut dyn FnMut(RowForCheck) -> Result<bool>,
    ) -> Result<()> {
        let mut text = String::new();
        // Reused from row to row: emptied, it holds no cell of the last.
        let mut spare: Vec<Option<Cell<'static>>> = Vec::new();
        while !self.finished {
            match self.advance()? {
                Step::Row(line) => {
                    let columns = self.columns.take().unwrap_or_default();
                    let mut judged = false;
                    if self.distinct {
                        let mut cells = spare.into_iter().map(|_| None).collect();
                        match self.cells(&columns, line, &mut cells) {
                            Ok(undeclared) => {
                                let row = RowForCheck::Cells {
                                    fields: &cells,
                                    undeclared,
                                };
                                judged = each(row)?;
                            }
                            Err(failure) => {
                                each(RowForCheck::Failed(failure))?;
                                judged = true;
                            }
                        }
                        cells.clear();
                        spare = cells.into_iter().map(|_| None).collect();
                    }
                    if !judged {
                        match self.json_row(&columns, line, &mut text) {
                            Ok(()) => each(RowForCheck::Text(&text))?,
                            Err(failure) => each(RowForCheck::Failed(failure))?,
                        };
                    }
                    self.columns = Some(columns);
                }
                Step::Failed(failure) => {
                    each(RowForCheck::Failed(failure))?;
                }
                Step::End => {}
            }
        }
        Ok(())
    }

    /// The current row's cells, converted, into `cells` by declared field
    /// (its length that of the contract's fields); whether a column the
    /// contract does not declare has a value.
    fn cells<'r>(
        &'r mut self,
        columns: &[ColumnPlan],
        line: u64,
        cells: &mut Vec<Option<Cell<'r>>>,
    ) -> Result<bool, Decoded> {
        self.check_width(columns, line)?;
        let fields = fields_of(self.shape.as_deref());
        cells.resize_with(fields.len(), || None);
        let mut undeclared = false;
        for (cell, column) in self.row.iter().zip(columns) {
            let cell = self.text_of(cell, column, line)?;
            match column.declared {
                Some(i) => cells[i] = cell_of(cell, column, Some(&fields[i].ty), &mut self.decoder),
                None => undeclared |= cell_of(cell, column, None, &mut self.decoder).is_some(),
            }
        }
        Ok(undeclared)
    }

    /// The current row as the JSON text of the record `convert_row` builds.
    fn json_row(
        &mut self,
        columns: &[ColumnPlan],
        line: u64,
        out: &mut String,
    ) -> Result<(), Decoded> {
        out.clear();
        self.check_width(columns, line)?;
        out.push('{');
        let mut first = true;
        for (cell, column) in self.row.iter().zip(columns) {
            // Every cell must be UTF-8, as for `read`, even one left out.
            let cell = self.text_of(cell, column, line)?;
            if self.skip_undeclared && column.declared.is_none() {
                continue;
            }
            let ty = column
                .declared
                .map(|i| &fields_of(self.shape.as_deref())[i].ty);
            if let Some(v) = cell_of(cell, column, ty, &mut self.decoder) {
                if !std::mem::take(&mut first) {
                    out.push(',');
                }
                out.push_str(&column.json_key);
                v.write_json(cell, out);
            }
        }
        out.push('}');
        Ok(())
    }

    /// A row has as many cells as the header names.
    fn check_width(&self, columns: &[ColumnPlan], line: u64) -> Result<(), Decoded> {
        if self.row.len() == columns.len() {
            return Ok(());
        }
        let message = format!(
            "line {line} has {} cells where the header has {}",
            self.row.len(),
            columns.len()
        );
        Err(self.failure(line, message))
    }

    /// A cell's text, which must be UTF-8.
    fn text_of<'c>(
        &self,
        cell: &'c [u8],
        column: &ColumnPlan,
        line: u64,
    ) -> Result<&'c str, Decoded> {
        std::str::from_utf8(cell).map_err(|_| {
            let message = format!("line {line} is not valid UTF-8 (column {})", column.field);
            self.failure(line, message)
        })
    }
}

/// The input of a CSV source, watched so that a row's start line can be
/// told: how many bytes it has given, its last byte, and whether it ended.
struct Tracked {
    input: Box<dyn BufRead>,
    state: Rc<Track>,
}

#[derive(Default)]
struct Track {
    given: std::cell::Cell<u64>,
    last: std::cell::Cell<u8>,
    ended: std::cell::Cell<bool>,
    /// Where the record being read starts.
    record_start: std::cell::Cell<u64>,
    /// Reading stopped: the record being read is longer than the longest
    /// line allowed (`max_line`), and would otherwise grow on.
    too_long: std::cell::Cell<bool>,
}

/// How far past the record being read the CSV reader may have read ahead
/// (its buffer is smaller).
const READ_AHEAD: u64 = 1 << 16;

impl Track {
    /// Is byte offset `at` the end of an input whose last line has no `\n`?
    fn at_end(&self, at: u64) -> bool {
        self.ended.get() && at == self.given.get() && self.last.get() != b'\n'
    }
}

impl Tracked {
    fn new(input: Box<dyn BufRead>) -> Tracked {
        Tracked {
            input,
            state: Rc::default(),
        }
    }
}

impl std::io::Read for Tracked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let state = &self.state;
        let record = state.given.get() - state.record_start.get();
        if record > max_line() as u64 + READ_AHEAD {
            state.too_long.set(true);
            return Err(std::io::Error::other("the record is too long"));
        }
        let n = self.input.read(buf)?;
        match buf[..n].last() {
            Some(&last) => {
                self.state.given.set(self.state.given.get() + n as u64);
                self.state.last.set(last);
            }
            None => self.state.ended.set(true),
        }
        Ok(n)
    }
}

/// Can a record's undeclared fields change its verdict? Not for an open
/// record type whose rules never read `self` whole: the line check may be
/// given the declared fields only.
fn admits_undeclared(shape: Option<&Contract>) -> bool {
    shape
        .and_then(Contract::record)
        .is_some_and(|r| r.open && !r.rules.iter().chain(&r.warns).any(|rule| rule.reads_self))
}

/// The fields a contract declares (none for a refinement or no contract).
fn fields_of(shape: Option<&Contract>) -> &[FieldSpec] {
    match shape.map(|c| &c.shape) {
        Some(Shape::Record { record, .. }) => &record.fields,
        _ => &[],
    }
}

impl Rows {
    fn fields(&self) -> &[FieldSpec] {
        fields_of(self.shape.as_deref())
    }

    /// Take the `\r` of a CRLF line end off the row's last cell.
    fn trim_line_end(&mut self) {
        let Some(last) = self.row.iter().next_back() else {
            return;
        };
        if let Some(kept) = last.strip_suffix(b"\r") {
            let kept = kept.to_vec();
            self.row.truncate(self.row.len() - 1);
            self.row.push_field(&kept);
        }
    }

    /// The line the row just read starts on: the reader stands after its
    /// `\n` (or at the end of an input whose last line has none), and the
    /// row's own newlines are inside quoted cells.
    fn start_line(&self) -> u64 {
        let after = self.reader.position();
        let unterminated = self.track.at_end(after.byte());
        let inside = memchr::memchr_iter(b'\n', self.row.as_slice()).count();
        after.line() - u64::from(!unterminated) - inside as u64
    }

    /// Name the columns from the header row (or, without one, from the
    /// contract's fields); a header that is not UTF-8 is a failure.
    fn read_header(&mut self, line: u64) -> Option<Decoded> {
        let options: CsvOptions = self.spec.boundary.csv;
        let mut names: Vec<String> = Vec::new();
        let mut failure = None;
        if options.header {
            for (i, cell) in self.row.iter().enumerate() {
                let text = match std::str::from_utf8(cell) {
                    Ok(t) => t.to_string(),
                    Err(_) => {
                        failure = Some(self.failure(line, "the header is not valid UTF-8".into()));
                        String::from_utf8_lossy(cell).into_owned()
                    }
                };
                let text = if i == 0 {
                    text.strip_prefix(BOM).unwrap_or(&text).to_string()
                } else {
                    text
                };
                names.push(text);
            }
        } else {
            names = self.fields().iter().map(|f| f.name.to_string()).collect();
            let (declared, cells) = (names.len(), self.row.len());
            names.extend((declared + 1..=cells).map(|i| format!("column_{i}")));
        }
        if let Some(twice) = names
            .iter()
            .enumerate()
            .find_map(|(i, n)| names[..i].contains(n).then_some(n))
        {
            let message = format!("the header names column `{twice}` twice");
            failure.get_or_insert(self.failure(line, message));
        }
        let columns: Vec<ColumnPlan> = names.iter().map(|n| self.plan_column(n)).collect();
        self.distinct = columns
            .iter()
            .enumerate()
            .all(|(i, c)| columns[..i].iter().all(|d| d.field != c.field));
        self.columns = Some(columns);
        failure
    }

    fn plan_column(&self, external: &str) -> ColumnPlan {
        let (field, column) = self.spec.boundary.field_of(external);
        let mut json_key = String::new();
        write_json_string(&mut json_key, field);
        json_key.push(':');
        ColumnPlan {
            json_key,
            field: field.into(),
            boundary: column.cloned(),
            declared: self.fields().iter().position(|f| &*f.name == field),
        }
    }

    /// The record of the current row; with a contract, its cells
    /// converted and the text kept as received.
    fn record(&mut self, line: u64) -> Decoded {
        let columns = self.columns.take().unwrap_or_default();
        let decoded = self.convert_row(&columns, line);
        self.columns = Some(columns);
        decoded
    }

    fn convert_row(&mut self, columns: &[ColumnPlan], line: u64) -> Decoded {
        if let Err(failure) = self.check_width(columns, line) {
            return failure;
        }
        let mut typed = Vec::with_capacity(columns.len());
        for (cell, column) in self.row.iter().zip(columns) {
            let cell = match self.text_of(cell, column, line) {
                Ok(cell) => cell,
                Err(failure) => return failure,
            };
            let ty = column
                .declared
                .map(|i| &fields_of(self.shape.as_deref())[i].ty);
            if let Some(v) = cell_of(cell, column, ty, &mut self.decoder) {
                typed.push((column.field.clone(), v.into_value()));
            }
        }
        self.converted = self.shape.is_some();
        let typed = match self.distinct {
            true => Record::from_distinct(typed),
            false => typed.into_iter().collect(),
        };
        Decoded {
            value: Value::record(typed),
            origin: self.origin(line),
        }
    }

    /// The text cells of the current row under their field names, empty
    /// cells left out.
    fn text_record(&self) -> Value {
        let columns = self.columns.as_deref().unwrap_or_default();
        let mut text = Record::with_capacity(columns.len());
        for (cell, column) in self.row.iter().zip(columns) {
            if !cell.is_empty() {
                let cell = String::from_utf8_lossy(cell).into_owned();
                text.insert(column.field.clone(), Value::str(cell));
            }
        }
        Value::record(text)
    }

    /// The current row written back as a CSV line.
    fn row_text(&self) -> String {
        let options = self.spec.boundary.csv;
        let mut writer = csv::WriterBuilder::new()
            .delimiter(options.delimiter)
            .quote(options.quote)
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        let _ = writer.write_byte_record(&self.row);
        let bytes = writer.into_inner().unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        text.strip_suffix('\n').unwrap_or(&text).to_string()
    }

    fn origin(&self, line: u64) -> Origin {
        Origin {
            source: self.spec.name.clone(),
            line,
        }
    }

    /// The `decode` failure of the current row, the row as CSV text as the
    /// input.
    fn failure(&self, line: u64, message: String) -> Decoded {
        let raw = self.row_text();
        let origin = self.origin(line);
        Decoded {
            value: undecodable(&origin, raw, message),
            origin,
        }
    }
}

impl Cell<'_> {
    /// JSON text that decodes to `into_value`'s value, or for a number to
    /// one equal to it (`7` for the Float `7.0`): what the line check
    /// judges is the same. `cell` is the text the cell held.
    fn write_json(&self, cell: &str, out: &mut String) {
        match self {
            Cell::Null => out.push_str("null"),
            Cell::Text(t) => write_json_string(out, t),
            Cell::Int(_) | Cell::Float(_) if is_json_number(cell) => out.push_str(cell),
            Cell::Int(n) => write_int(out, *n),
            Cell::Big(digits) => out.push_str(digits),
            Cell::Float(f) => write_float(out, *f),
            Cell::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Cell::Nested(v) => write_json(out, v),
        }
    }
}

/// Is `text` a number as JSON writes one (no `+`, no leading zero, digits
/// on both sides of a point)?
fn is_json_number(text: &str) -> bool {
    let body = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (mantissa, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    digits(whole)
        && (whole == "0" || !whole.starts_with('0'))
        && fraction.is_none_or(digits)
        && exponent_ok
}

/// A cell's value: absent when empty (null where the column is nullable
/// or the field admits `Null`), else its text converted by the boundary's
/// physical type, then by the field's declared type where it parses.
fn cell_of<'a>(
    cell: &'a str,
    column: &ColumnPlan,
    ty: Option<&TypeSpec>,
    decoder: &mut Decoder,
) -> Option<Cell<'a>> {
    let nullable = column.boundary.as_ref().is_some_and(|c| c.nullable);
    if cell.is_empty() {
        let null = nullable || ty.is_some_and(TypeSpec::admits_null);
        return null.then_some(Cell::Null);
    }
    if let Some(physical) = column.boundary.as_ref().and_then(|c| c.physical) {
        if let Some(v) = physical_value(cell, physical) {
            return Some(v);
        }
    }
    Some(
        ty.and_then(|t| convert(cell, t, decoder))
            .unwrap_or(Cell::Text(cell)),
    )
}

fn physical_value(cell: &str, physical: Physical) -> Option<Cell<'_>> {
    match physical {
        Physical::String => Some(Cell::Text(cell)),
        Physical::Int => int(cell),
        Physical::Float => float(cell),
        Physical::Bool => boolean(cell),
    }
}

/// The value of a text cell as type `ty`, when the text parses as it
/// (language.md §6.1); `None` leaves the text, for `validate` to judge.
pub fn convert<'a>(cell: &'a str, ty: &TypeSpec, decoder: &mut Decoder) -> Option<Cell<'a>> {
    match ty {
        TypeSpec::Any | TypeSpec::String | TypeSpec::Null => None,
        TypeSpec::Int => int(cell),
        TypeSpec::Float => float(cell),
        TypeSpec::Bool => boolean(cell),
        TypeSpec::Literal(v) => match v {
            Value::Int(_) => int(cell),
            Value::Float(_) => float(cell),
            Value::Bool(_) => boolean(cell),
            _ => None,
        },
        TypeSpec::Union(members) => members.iter().find_map(|m| {
            // A text member takes the cell as it is.
            if matches!(m, TypeSpec::String | TypeSpec::Any)
                || matches!(m, TypeSpec::Literal(Value::Str(_)))
            {
                return Some(Cell::Text(cell));
            }
            convert(cell, m, decoder)
        }),
        TypeSpec::Named(c) => match c.get().map(|c| &c.shape) {
            Some(Shape::Refined { base, .. }) => convert(cell, base, decoder),
            Some(Shape::Record { .. }) => decoder.decode(cell.as_bytes()).ok().map(Cell::Nested),
            None => None,
        },
        TypeSpec::List(_) | TypeSpec::Map(_) | TypeSpec::Record(_) => {
            decoder.decode(cell.as_bytes()).ok().map(Cell::Nested)
        }
    }
}

/// An optional sign and digits: an Int (beyond i64, kept digit for digit).
fn int(cell: &str) -> Option<Cell<'_>> {
    let (minus, digits) = match cell.as_bytes().first() {
        Some(b'-') => (true, &cell[1..]),
        Some(b'+') => (false, &cell[1..]),
        _ => (false, cell),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match cell.parse::<i64>() {
        Ok(n) => Some(Cell::Int(n)),
        Err(_) => {
            let digits = digits.trim_start_matches('0');
            Some(Cell::Big(format!(
                "{}{digits}",
                if minus { "-" } else { "" }
            )))
        }
    }
}

/// A decimal or exponent number: a Float (`"7"` is `7.0`). Words Rust's
/// parser would take (`inf`, `NaN`) are not numbers here.
fn float(cell: &str) -> Option<Cell<'_>> {
    let body = cell.strip_prefix(['-', '+']).unwrap_or(cell);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    let ok = !(whole.is_empty() && fraction.is_empty())
        && digits(whole)
        && digits(fraction)
        && exponent_ok;
    let f: f64 = cell.parse().ok().filter(|_| ok)?;
    f.is_finite().then_some(Cell::Float(f))
}

fn boolean(cell: &str) -> Option<Cell<'_>> {
    match cell {
        "true" => Some(Cell::Bool(true)),
        "false" => Some(Cell::Bool(false)),
        _ => None,
    }
}

// ------------------------------------------------------------------ writing

struct CsvWriter {
    target: String,
    boundary: Boundary,
    /// The contract's fields, when the records' contract is known.
    declared: Vec<Key>,
    /// The columns, fixed by the first record.
    header: Option<Vec<Key>>,
    row: Vec<String>,
    /// Rows are encoded into `encoded`, then moved to the output.
    bytes: csv::Writer<Encoded>,
    encoded: Encoded,
}

/// The bytes the CSV writer encodes, shared with the writer that moves
/// them to the target.
#[derive(Clone, Default)]
struct Encoded(Rc<std::cell::RefCell<Vec<u8>>>);

impl Write for Encoded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl RecordWriter for CsvWriter {
    fn write(&mut self, out: &mut dyn Write, record: &Value) -> Result<()> {
        let Value::Record(r) = record else {
            return Err(RuntimeError::new(
                "hql::type",
                format!(
                    "a CSV target takes records, found {}",
                    record.kind_article()
                ),
            )
            .with_help("`map` each value to a record first"));
        };
        if self.header.is_none() {
            let mut header = self.declared.clone();
            let extra: Vec<Key> = r.keys().filter(|k| !header.contains(k)).cloned().collect();
            header.extend(extra);
            self.emit_header(&header)?;
            self.header = Some(header);
        }
        let header = self.header.as_deref().unwrap_or_default();
        if let Some(extra) = r.keys().find(|k| !header.contains(k)) {
            return Err(self.outside_header(extra, header));
        }
        self.row.clear();
        for column in header {
            self.row.push(cell_text(r.get(column)));
        }
        let row = std::mem::take(&mut self.row);
        let written = self.emit(out, &row);
        self.row = row;
        written
    }

    fn finish(&mut self, out: &mut dyn Write) -> Result<()> {
        if self.header.is_none() && !self.declared.is_empty() {
            let header = self.declared.clone();
            self.emit_header(&header)?;
        }
        self.flush(out)
    }
}

impl CsvWriter {
    /// The header row, unless the target is configured without one
    /// (`csv = { header = false }`): its columns are fixed all the same.
    fn emit_header(&mut self, header: &[Key]) -> Result<()> {
        if !self.boundary.csv.header {
            return Ok(());
        }
        let names: Vec<String> = header
            .iter()
            .map(|f| self.boundary.external_of(f).to_string())
            .collect();
        self.bytes.write_record(&names).map_err(csv_error)
    }

    fn emit(&mut self, out: &mut dyn Write, row: &[String]) -> Result<()> {
        self.bytes.write_record(row).map_err(csv_error)?;
        self.flush(out)
    }

    fn flush(&mut self, out: &mut dyn Write) -> Result<()> {
        self.bytes.flush().map_err(write_error)?;
        let mut buffer = self.encoded.0.borrow_mut();
        out.write_all(&buffer).map_err(write_error)?;
        buffer.clear();
        Ok(())
    }

    fn outside_header(&self, field: &str, header: &[Key]) -> RuntimeError {
        let columns: Vec<&str> = header.iter().map(|k| &**k).collect();
        RuntimeError::new(
            "hql::csv_header",
            format!(
                "field `{field}` is not a column of {}: its header is {}",
                self.target,
                columns.join(", ")
            ),
        )
        .with_help(
            "a CSV header is fixed by the contract and the first record; declare the field, or `map` the records to one shape",
        )
    }
}

/// A value as the text of a cell: nested values as JSON.
fn cell_text(v: Option<&Value>) -> String {
    let mut text = String::new();
    match v {
        None | Some(Value::Null | Value::Absent) => {}
        Some(Value::Str(s)) => text.push_str(s),
        Some(v @ (Value::List(_) | Value::Record(_) | Value::Ok(_) | Value::Err(_))) => {
            write_json(&mut text, v)
        }
        Some(v) => write_hql(&mut text, v),
    }
    text
}

fn csv_error(e: csv::Error) -> RuntimeError {
    write_error(e)
}
