//! CSV sources and targets (language.md §6.1; tooling.md, "Sources,
//! targets and the schema boundary").
//!
//! Reading: a header row names the columns (or, with `header = false`, the
//! contract's fields in order); each later row is one record of text cells,
//! an empty cell absent and a quoted empty one (`""`) the empty string.
//! Rows end at `\n`, `\r\n` or a lone `\r`. Read for `validate(T)`, a cell
//! converts to its field's declared scalar type when its text parses as
//! that type, and the record as received keeps the text. A ragged row, one
//! that is not UTF-8 or one whose quote never closes is an `err` of kind
//! `decode` with its line, and reading goes on (after an unclosed quote,
//! from the line after the one it opened on).
//!
//! Writing: the header is the contract's fields when they are known, then
//! the first record's other fields; nested values are JSON text in a cell,
//! an empty string is written quoted, and with `escape_formulas` a cell a
//! spreadsheet would run as a formula starts with `'`.

use std::io::{BufRead, Write};
use std::rc::Rc;

use super::write_error;
use crate::runtime::builtins::{Format, FormatDef, FormatOption};
use crate::runtime::contract::{Contract, FieldSpec, Shape, TypeSpec};
use crate::runtime::eval::io::{
    line_too_long, max_line, unreadable, Boundary, Cell, Codec, Column, CsvOptions, Decoded,
    DecodedRecords, Hint, Input, Part, Physical, RecordSource, RecordWriter, Registered, RowCells,
    RowForCheck, SourceSpec, TargetSpec,
};
use crate::runtime::eval::{check_interrupt, compare_numbers, equal, Origin, Result, RuntimeError};
use crate::runtime::json::{
    is_json_number, write_float, write_int, write_json, Decoder, HUGE_LINE,
};
use crate::runtime::print::write_hql;
use crate::runtime::validate::undecodable;
use crate::runtime::value::{DataNum, Key, NumKind, Record, Value};
use crate::syntax::canonical::write_json_string;

pub struct Csv;

pub static CSV: Csv = Csv;

/// CSV as the registry knows it: a header row, then one record a row.
pub const FORMAT: Registered = Registered {
    format: Format::new(&FormatDef {
        name: "Csv",
        in_programs: true,
        extensions: &["csv"],
        // A `.tsv` file is CSV whose delimiter is a tab by default.
        more_extensions: &["tsv"],
        whole_extensions: &[],
        synonyms: &[],
        options: &[
            FormatOption::Delimiter,
            FormatOption::Quote,
            FormatOption::Nulls,
            FormatOption::Encoding,
            FormatOption::Header,
            FormatOption::EscapeFormulas,
        ],
    }),
    codec: &CSV,
};

const BOM: &str = "\u{feff}";

impl Codec for Csv {
    fn sniff(&self, spec: &SourceSpec, first: &[u8], complete: bool) -> Option<Hint> {
        super::sniff::csv(spec, first, complete)
    }

    fn read(
        &self,
        input: Input,
        spec: &SourceSpec,
        shape: Option<&Rc<Contract>>,
    ) -> Result<DecodedRecords> {
        Ok(Box::new(rows(input.bytes(spec)?, spec, shape)?))
    }

    fn reads_by_shape(&self) -> bool {
        true
    }

    fn keeps_nesting(&self) -> bool {
        false
    }

    fn cells(&self) -> Option<&dyn RowCells> {
        Some(self)
    }

    fn writer(
        &self,
        spec: &TargetSpec,
        shape: Option<&Rc<Contract>>,
    ) -> Option<Box<dyn RecordWriter>> {
        let declared = shape
            .and_then(|c| c.record())
            .map(|r| r.fields.iter().map(|f| f.name.clone()).collect())
            .unwrap_or_default();
        Some(Box::new(CsvWriter {
            target: spec.name.clone(),
            delimiter: spec.boundary.csv.delimiter_for(Some(&spec.path)),
            boundary: spec.boundary.clone(),
            declared,
            header: None,
            line: Vec::new(),
        }))
    }
}

impl RowCells for Csv {
    /// A CSV file has no parts (a quoted cell may hold a newline), so
    /// `_part` is always `None`.
    fn each_row_for_check(
        &self,
        input: Input,
        spec: &SourceSpec,
        shape: &Rc<Contract>,
        _part: Option<&Part>,
        each: &mut dyn FnMut(RowForCheck) -> Result<bool>,
    ) -> Result<()> {
        rows(input.bytes(spec)?, spec, Some(shape))?.each_row_for_check(each)
    }
}

// ------------------------------------------------------------------ reading

/// The rows of a CSV source, read by its options.
fn rows(input: Box<dyn BufRead>, spec: &SourceSpec, shape: Option<&Rc<Contract>>) -> Result<Rows> {
    let options = &spec.boundary.csv;
    let input = super::encoding::utf8(input, options.encoding)
        .map_err(|e| RuntimeError::new("hql::io", format!("cannot read {}: {e}", spec.name)))?;
    let delimiter = options.delimiter_for(spec.path());
    Ok(Rows {
        split: Splitter::new(input, delimiter, options.quote),
        row: Row::default(),
        columns: None,
        spec: spec.clone(),
        shape: shape.cloned(),
        decoder: Decoder::new(),
        finished: false,
        converted: false,
        distinct: false,
        skip_undeclared: admits_undeclared(shape.map(|c| &**c)),
        taken: None,
    })
}

/// The rows of a CSV source, as records.
struct Rows {
    split: Splitter,
    row: Row,
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
    /// The huge text cell of the row last yielded, which took the row's
    /// buffer (`take_huge_cell`): its column and its text.
    taken: Option<(usize, Rc<String>)>,
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
        self.taken = None;
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
            match self.split.next(&mut self.row) {
                Ok(Split::Row) => {}
                Ok(Split::End) => {
                    self.finished = true;
                    return Ok(Step::End);
                }
                Ok(Split::TooLong) => {
                    self.finished = true;
                    return Err(line_too_long(&self.spec.name, self.row.line));
                }
                Ok(Split::Unterminated) => {
                    let line = self.row.line;
                    let message = format!("line {line} opens a quote that is never closed");
                    return Ok(Step::Failed(self.failure(line, message)));
                }
                Err(e) => {
                    self.finished = true;
                    if let Some(error) = unreadable(&self.spec.name, &e) {
                        return Err(error);
                    }
                    let line = self.split.line();
                    return Ok(Step::Failed(
                        self.failure(line, format!("cannot read: {e}")),
                    ));
                }
            }
            if self.row.is_blank() {
                continue;
            }
            let line = self.row.line;
            if self.columns.is_none() {
                if let Some(failure) = self.read_header(line)? {
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
        for ((cell, quoted), column) in self.row.cells().zip(columns) {
            let cell = self.text_of(cell, column, line)?;
            let ty = column.declared.map(|i| &fields[i].ty);
            let cell = cell_of(
                cell,
                quoted,
                column,
                ty,
                &self.spec.boundary.csv,
                &mut self.decoder,
            );
            match column.declared {
                Some(i) => cells[i] = cell,
                None => undeclared |= cell.is_some(),
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
        for ((cell, quoted), column) in self.row.cells().zip(columns) {
            // Every cell must be UTF-8, as for `read`, even one left out.
            let cell = self.text_of(cell, column, line)?;
            if self.skip_undeclared && column.declared.is_none() {
                continue;
            }
            let ty = column
                .declared
                .map(|i| &fields_of(self.shape.as_deref())[i].ty);
            if let Some(v) = cell_of(
                cell,
                quoted,
                column,
                ty,
                &self.spec.boundary.csv,
                &mut self.decoder,
            ) {
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

    /// Name the columns from the header row (or, without one, from the
    /// contract's fields); a header that is not UTF-8 is a failure.
    fn read_header(&mut self, line: u64) -> Result<Option<Decoded>> {
        let options = &self.spec.boundary.csv;
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
                if text.contains('\0') {
                    self.finished = true;
                    return Err(RuntimeError::new(
                        "hql::io",
                        format!(
                            "cannot read {}: column `{}` of the header (line {line}) has a NUL character in its name",
                            self.spec.name,
                            text.escape_debug()
                        ),
                    )
                    .with_help("a column name is text without NUL characters: fix the file's header"));
                }
                names.push(text);
            }
        } else {
            names = self.fields().iter().map(|f| f.name.to_string()).collect();
            let (declared, cells) = (names.len(), self.row.len());
            names.extend((declared + 1..=cells).map(|i| format!("column_{i}")));
        }
        if let Err(e) = self.check_repeated(&names, line) {
            self.finished = true;
            return Err(e);
        }
        let columns: Vec<ColumnPlan> = (names.iter().enumerate())
            .map(|(i, n)| self.plan_column(i + 1, n))
            .collect();
        self.distinct = columns
            .iter()
            .enumerate()
            .all(|(i, c)| columns[..i].iter().all(|d| d.field != c.field));
        self.columns = Some(columns);
        Ok(failure)
    }

    /// A header that names one column twice reads nothing, unless the
    /// boundary renames one of the two by its position.
    fn check_repeated(&self, names: &[String], line: u64) -> Result<()> {
        let boundary = &self.spec.boundary;
        let named = |i: usize| boundary.at_position(i + 1).is_none();
        for (i, name) in names.iter().enumerate().filter(|(i, _)| named(*i)) {
            let Some(first) = (0..i).find(|&j| named(j) && names[j] == *name) else {
                continue;
            };
            let (a, b) = (first + 1, i + 1);
            return Err(RuntimeError::new(
                "hql::io",
                format!(
                    "cannot read {}: its header (line {line}) names column `{}` twice, as columns {a} and {b}",
                    self.spec.name,
                    name.escape_debug()
                ),
            )
            .with_help(format!(
                "rename one of them by its position in hql.toml's source: `columns = {{ {}_{b} = {{ index = {b} }} }}`",
                name.escape_debug()
            )));
        }
        Ok(())
    }

    fn plan_column(&self, position: usize, external: &str) -> ColumnPlan {
        let (field, column) = match self.spec.boundary.at_position(position) {
            Some(c) => (c.field.as_str(), Some(c)),
            None => self.spec.boundary.field_of(external),
        };
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
        let huge = self.row.huge_cell();
        // Where the huge cell's text goes, if it stays text.
        let mut deferred = None;
        for (i, ((cell, quoted), column)) in self.row.cells().zip(columns).enumerate() {
            let cell = match self.text_of(cell, column, line) {
                Ok(cell) => cell,
                Err(failure) => return failure,
            };
            let ty = column
                .declared
                .map(|i| &fields_of(self.shape.as_deref())[i].ty);
            match cell_of(
                cell,
                quoted,
                column,
                ty,
                &self.spec.boundary.csv,
                &mut self.decoder,
            ) {
                Some(Cell::Text(t)) if huge == Some(i) && t.len() == cell.len() => {
                    deferred = Some((i, typed.len()));
                    typed.push((column.field.clone(), Value::Null));
                }
                Some(v) => typed.push((column.field.clone(), v.into_value())),
                None => {}
            }
        }
        if let Some((i, at)) = deferred {
            let text = self.row.take_cell(i);
            typed[at].1 = Value::Str(text.clone());
            self.taken = Some((i, text));
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

    /// The text cells of the current row under their field names, cells
    /// read as null left out (a quoted empty cell is the empty string).
    fn text_record(&self) -> Value {
        let columns = self.columns.as_deref().unwrap_or_default();
        let mut text = Record::with_capacity(columns.len());
        for (i, ((cell, quoted), column)) in self.row.cells().zip(columns).enumerate() {
            if let Some((_, taken)) = self.taken.as_ref().filter(|(at, _)| *at == i) {
                text.insert(column.field.clone(), Value::Str(taken.clone()));
            } else if quoted || !self.spec.boundary.csv.is_null(cell) {
                let cell = String::from_utf8_lossy(cell).into_owned();
                text.insert(column.field.clone(), Value::str(cell));
            }
        }
        Value::record(text)
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
        let lexer = &self.split.lexer;
        let raw = self.row.text(lexer.delimiter, lexer.quote);
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
            Cell::Big(digits) | Cell::Decimal(digits) => out.push_str(digits),
            Cell::Float(f) => write_float(out, *f),
            Cell::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Cell::Nested(v) => write_json(out, v),
        }
    }
}

/// A cell's value: absent when unquoted and one of the texts read as
/// null (`nulls`; by default the empty cell) — null where the column is
/// nullable or the field admits `Null` — else its text converted by the
/// boundary's physical type, then by the field's declared type where it
/// parses (an empty cell that is not null, quoted or not, is the empty
/// string).
fn cell_of<'a>(
    cell: &'a str,
    quoted: bool,
    column: &ColumnPlan,
    ty: Option<&TypeSpec>,
    options: &CsvOptions,
    decoder: &mut Decoder,
) -> Option<Cell<'a>> {
    let nullable = column.boundary.as_ref().is_some_and(|c| c.nullable);
    if !quoted && options.is_null(cell.as_bytes()) {
        let null = nullable || ty.is_some_and(TypeSpec::admits_null);
        return null.then_some(Cell::Null);
    }
    if cell.is_empty() {
        return Some(Cell::Text(cell));
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
        TypeSpec::Union(members) => members.iter().find_map(|m| admitted(cell, m, decoder)),
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

/// The value of a text cell as union member `ty`, when its conversion
/// succeeds and `ty` admits what it gives (for `"x" | Int`, the cell `1` is
/// the Int 1 and the cell `x` the string): a text member takes the cell as
/// it is, a literal only its own value, a nested type only its own kind.
fn admitted<'a>(cell: &'a str, ty: &TypeSpec, decoder: &mut Decoder) -> Option<Cell<'a>> {
    match ty {
        TypeSpec::String | TypeSpec::Any => Some(Cell::Text(cell)),
        TypeSpec::Null => None,
        TypeSpec::Literal(Value::Str(s)) => (**s == cell).then_some(Cell::Text(cell)),
        TypeSpec::Literal(literal) => {
            let converted = convert(cell, ty, decoder)?;
            equal(&converted.to_value(), literal).then_some(converted)
        }
        TypeSpec::Named(c) => match c.get().map(|c| &c.shape) {
            Some(Shape::Refined { base, .. }) => admitted(cell, base, decoder),
            Some(Shape::Record { .. }) => nested(cell, decoder, |v| matches!(v, Value::Record(_))),
            None => None,
        },
        TypeSpec::Record(_) | TypeSpec::Map(_) => {
            nested(cell, decoder, |v| matches!(v, Value::Record(_)))
        }
        TypeSpec::List(_) => nested(cell, decoder, |v| matches!(v, Value::List(_))),
        TypeSpec::Union(members) => members.iter().find_map(|m| admitted(cell, m, decoder)),
        TypeSpec::Int | TypeSpec::Float | TypeSpec::Bool => convert(cell, ty, decoder),
    }
}

/// A cell decoded from JSON text, when the value is of the kind `kind`
/// tells.
fn nested<'a>(cell: &str, decoder: &mut Decoder, kind: fn(&Value) -> bool) -> Option<Cell<'a>> {
    let value = decoder.decode(cell.as_bytes()).ok()?;
    kind(&value).then_some(Cell::Nested(value))
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
    if !f.is_finite() {
        return None;
    }
    // A decimal of up to 15 significant digits in the range of normal
    // doubles is its double's shortest form; any other may hold a value
    // no double does (`1e-400`, 20 digits), kept digit for digit, as a
    // number from JSON data with its text is.
    let significant = whole.trim_start_matches('0').len()
        + match whole.trim_start_matches('0') {
            "" => fraction.trim_start_matches('0').len(),
            _ => fraction.len(),
        };
    let zero = f == 0.0 && !mantissa.bytes().any(|b| matches!(b, b'1'..=b'9'));
    // (A whole double past 2^53 holds every digit of its binary value.)
    let short = f.is_normal() && f.abs() < 9_007_199_254_740_992.0 && significant <= 15;
    if zero || short {
        return Some(Cell::Float(f));
    }
    // The text's own value against the double's, as a number from JSON
    // data with this text compares.
    let text = json_float_text(cell.starts_with('-'), whole, fraction, exponent);
    let own = Value::Num(Rc::new(DataNum {
        text: text.as_str().into(),
        kind: NumKind::Float(f),
    }));
    match compare_numbers(&Value::Float(f), &own) {
        Some(std::cmp::Ordering::Equal) => Some(Cell::Float(f)),
        _ => Some(Cell::Decimal(text)),
    }
}

/// A decimal number's text as JSON writes it, with a fraction or an
/// exponent so that it reads as a Float: no leading `+` or zeros, a digit
/// on each side of a point (`+.5E-400` is `0.5e-400`, `7` is `7.0`).
fn json_float_text(minus: bool, whole: &str, fraction: &str, exponent: Option<&str>) -> String {
    let mut text = String::from(if minus { "-" } else { "" });
    match whole.trim_start_matches('0') {
        "" => text.push('0'),
        digits => text.push_str(digits),
    }
    if !fraction.is_empty() || exponent.is_none() {
        text.push('.');
        text.push_str(if fraction.is_empty() { "0" } else { fraction });
    }
    if let Some(e) = exponent {
        text.push('e');
        text.push_str(e);
    }
    text
}

fn boolean(cell: &str) -> Option<Cell<'_>> {
    match cell {
        "true" => Some(Cell::Bool(true)),
        "false" => Some(Cell::Bool(false)),
        _ => None,
    }
}

// ------------------------------------------------------------------ splitting

/// One row as split from the input: its cells, whether each was quoted,
/// and the line it starts on. Its bytes as they came (without the line
/// end), for a failure's `input`, are written again from the cells
/// (`text`); only a row they cannot be written again from (text after a
/// closing quote) keeps them as they came, so that a huge cell is held
/// once.
#[derive(Default)]
struct Row {
    bytes: Vec<u8>,
    /// Where each cell ends in `bytes`.
    ends: Vec<usize>,
    quoted: Vec<bool>,
    /// Is the cell being read quoted?
    quoting: bool,
    line: u64,
    /// The bytes as they came, once `keeps_raw`.
    raw: Vec<u8>,
    keeps_raw: bool,
    /// How many bytes came.
    raw_len: usize,
}

impl Row {
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The cells' bytes.
    fn iter(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len()).map(|i| self.cell(i))
    }

    /// The cells' bytes, each with whether it was quoted.
    fn cells(&self) -> impl Iterator<Item = (&[u8], bool)> {
        (0..self.len()).map(|i| (self.cell(i), self.quoted[i]))
    }

    fn cell(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    /// The cell, if any, that is huge (`HUGE_LINE` bytes or more) and most
    /// of the row: its text takes the row's buffer instead of a copy.
    fn huge_cell(&self) -> Option<usize> {
        if self.bytes.len() < HUGE_LINE {
            return None;
        }
        (0..self.len()).find(|&i| self.cell(i).len() * 2 >= self.bytes.len())
    }

    /// Take cell `i`'s bytes, which are UTF-8, as a string: the row's
    /// buffer moves to it, the other cells' bytes copied to a new one
    /// (cell `i` left empty there).
    fn take_cell(&mut self, i: usize) -> Rc<String> {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let end = self.ends[i];
        let mut rest = Vec::with_capacity(self.bytes.len() - (end - start));
        rest.extend_from_slice(&self.bytes[..start]);
        rest.extend_from_slice(&self.bytes[end..]);
        let mut text = std::mem::replace(&mut self.bytes, rest);
        for cell_end in &mut self.ends[i..] {
            *cell_end -= end - start;
        }
        text.copy_within(start..end, 0);
        text.truncate(end - start);
        text.shrink_to_fit();
        let text = String::from_utf8(text)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Rc::new(text)
    }

    /// A line with nothing on it (not even a quoted empty cell).
    fn is_blank(&self) -> bool {
        self.len() == 1 && self.ends[0] == 0 && !self.quoted[0]
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.quoted.clear();
        self.quoting = false;
        self.raw.clear();
        self.keeps_raw = false;
        self.raw_len = 0;
    }

    /// Bytes of the row as they came.
    fn came(&mut self, bytes: &[u8]) {
        self.raw_len += bytes.len();
        if self.keeps_raw {
            self.raw.extend_from_slice(bytes);
        }
    }

    /// Keep the bytes as they came from here on, writing those so far
    /// again from the cells: the ended ones, and the quoted cell being
    /// read (`closed`: its closing quote came).
    fn keep_raw(&mut self, delimiter: u8, quote: u8, closed: bool) {
        if self.keeps_raw {
            return;
        }
        let mut raw = self.written_again(delimiter, quote);
        if !self.ends.is_empty() {
            raw.push(delimiter);
        }
        raw.push(quote);
        let start = self.ends.last().copied().unwrap_or(0);
        double_quotes(&self.bytes[start..], quote, &mut raw);
        if closed {
            raw.push(quote);
        }
        self.raw = raw;
        self.keeps_raw = true;
    }

    /// The ended cells as they came: each quoted one between quotes, its
    /// quotes doubled.
    fn written_again(&self, delimiter: u8, quote: u8) -> Vec<u8> {
        let mut raw = Vec::new();
        for (i, (cell, quoted)) in self.cells().enumerate() {
            if i > 0 {
                raw.push(delimiter);
            }
            if quoted {
                raw.push(quote);
                double_quotes(cell, quote, &mut raw);
                raw.push(quote);
            } else {
                raw.extend_from_slice(cell);
            }
        }
        raw
    }

    fn end_cell(&mut self) {
        self.ends.push(self.bytes.len());
        self.quoted.push(std::mem::take(&mut self.quoting));
    }

    /// The row's text as it came, for a failure's `input`.
    fn text(&self, delimiter: u8, quote: u8) -> String {
        if self.keeps_raw {
            return String::from_utf8_lossy(&self.raw).into_owned();
        }
        String::from_utf8_lossy(&self.written_again(delimiter, quote)).into_owned()
    }
}

/// `cell` with each quote doubled, onto `out`.
fn double_quotes(cell: &[u8], quote: u8, out: &mut Vec<u8>) {
    let mut rest = cell;
    while let Some(i) = memchr::memchr(quote, rest) {
        out.extend_from_slice(&rest[..=i]);
        out.push(quote);
        rest = &rest[i + 1..];
    }
    out.extend_from_slice(rest);
}

/// Where the splitter stands in a row.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    CellStart,
    Unquoted,
    Quoted,
    /// After a quote inside a quoted cell: it closes the cell, or, doubled,
    /// stands for one quote.
    QuoteInQuoted,
}

/// What splitting on gave.
enum Split {
    Row,
    /// A row whose quote never closed before the end of the input: `raw`
    /// holds its first line; the lines after it are read again as rows.
    Unterminated,
    /// A row longer than the longest line allowed (`--max-line`): reading
    /// stops rather than grow it on.
    TooLong,
    End,
}

/// Splits the input into rows of cells. A row ends at `\n`, `\r\n` or a
/// lone `\r` (old Mac files) outside quotes; a cell that starts with the
/// quote is quoted, a doubled quote in it standing for one; a quote that
/// never closes spoils only the line it opens on (`Split::Unterminated`).
struct Splitter {
    input: Box<dyn BufRead>,
    /// Bytes to read before the rest of the input: what followed the first
    /// line of a row whose quote never closed.
    again: Vec<u8>,
    again_at: usize,
    lexer: Lexer,
    /// Is the input's first byte still to come (a UTF-8 BOM is skipped)?
    first: bool,
}

/// Where splitting stands.
struct Lexer {
    delimiter: u8,
    quote: u8,
    at: At,
    /// Has the row being read taken a byte?
    in_row: bool,
    /// The line the next byte is on.
    line: u64,
    /// Was the last byte taken a `\r`? A `\n` right after it ends the same
    /// line.
    after_cr: bool,
}

impl Splitter {
    fn new(input: Box<dyn BufRead>, delimiter: u8, quote: u8) -> Splitter {
        Splitter {
            input,
            again: Vec::new(),
            again_at: 0,
            lexer: Lexer {
                delimiter,
                quote,
                at: At::CellStart,
                in_row: false,
                line: 1,
                after_cr: false,
            },
            first: true,
        }
    }

    /// The line the next byte is on.
    fn line(&self) -> u64 {
        self.lexer.line
    }

    /// The next row into `row`.
    fn next(&mut self, row: &mut Row) -> std::io::Result<Split> {
        row.clear();
        loop {
            let again = self.again_at < self.again.len();
            let buf: &[u8] = if again {
                &self.again[self.again_at..]
            } else {
                self.input.fill_buf()?
            };
            if buf.is_empty() {
                return Ok(self.end(row));
            }
            let mut skip = 0;
            if std::mem::take(&mut self.first) && buf.starts_with(BOM.as_bytes()) {
                skip = BOM.len();
            }
            let (taken, ended) = self.lexer.step(&buf[skip..], row);
            let used = skip + taken;
            if again {
                self.again_at += used;
            } else {
                self.input.consume(used);
            }
            // A row past the longest line allowed stops reading, whether
            // it ended in this buffer or grows on.
            if row.raw_len > max_line() {
                return Ok(Split::TooLong);
            }
            if ended {
                return Ok(Split::Row);
            }
        }
    }

    /// The end of the input: the row being read, if any, ends.
    fn end(&mut self, row: &mut Row) -> Split {
        let lexer = &mut self.lexer;
        if !std::mem::take(&mut lexer.in_row) {
            return Split::End;
        }
        if std::mem::replace(&mut lexer.at, At::CellStart) != At::Quoted {
            row.end_cell();
            return Split::Row;
        }
        // Read again what follows the row's first line, from its line end.
        row.keep_raw(lexer.delimiter, lexer.quote, false);
        let first = memchr::memchr2(b'\n', b'\r', &row.raw).unwrap_or(row.raw.len());
        self.again = row.raw.split_off(first);
        self.again_at = 0;
        lexer.line = row.line;
        lexer.after_cr = false;
        Split::Unterminated
    }
}

impl Lexer {
    /// Take bytes of `buf` into `row`: how many were taken, and whether
    /// the row ended.
    fn step(&mut self, buf: &[u8], row: &mut Row) -> (usize, bool) {
        let (delimiter, quote) = (self.delimiter, self.quote);
        let mut i = 0;
        if !self.in_row {
            // The `\n` of a `\r\n` that ended the last row belongs to it.
            if self.after_cr && buf.first() == Some(&b'\n') {
                i = 1;
            }
            self.after_cr = false;
            if i == buf.len() {
                return (i, false);
            }
            self.in_row = true;
            row.line = self.line;
        }
        while i < buf.len() {
            if self.at == At::Quoted {
                let Some(n) = memchr::memchr3(quote, b'\n', b'\r', &buf[i..]) else {
                    row.bytes.extend_from_slice(&buf[i..]);
                    row.came(&buf[i..]);
                    i = buf.len();
                    break;
                };
                let j = i + n;
                row.bytes.extend_from_slice(&buf[i..j]);
                let b = buf[j];
                row.came(&buf[i..=j]);
                if b == quote {
                    self.at = At::QuoteInQuoted;
                } else {
                    row.bytes.push(b);
                    // A `\n` after a `\r` ends the line the `\r` did.
                    let after_cr = if j == 0 {
                        self.after_cr
                    } else {
                        buf[j - 1] == b'\r'
                    };
                    if b == b'\r' || !after_cr {
                        self.line += 1;
                    }
                }
                i = j + 1;
                continue;
            }
            let b = buf[i];
            if b == delimiter {
                row.end_cell();
                row.came(&[b]);
                self.at = At::CellStart;
                i += 1;
            } else if b == b'\n' || b == b'\r' {
                row.end_cell();
                self.line += 1;
                self.after_cr = b == b'\r';
                self.at = At::CellStart;
                self.in_row = false;
                return (i + 1, true);
            } else if b == quote && self.at == At::CellStart {
                row.quoting = true;
                row.came(&[b]);
                self.at = At::Quoted;
                i += 1;
            } else if b == quote && self.at == At::QuoteInQuoted {
                row.bytes.push(b);
                row.came(&[b]);
                self.at = At::Quoted;
                i += 1;
            } else {
                // Text up to the next delimiter or line end (after a
                // closing quote, kept as it is: the row's text is then
                // kept as it came).
                if self.at == At::QuoteInQuoted {
                    row.keep_raw(delimiter, quote, true);
                }
                let run = memchr::memchr3(delimiter, b'\n', b'\r', &buf[i..])
                    .map_or(buf.len(), |n| i + n);
                row.bytes.extend_from_slice(&buf[i..run]);
                row.came(&buf[i..run]);
                self.at = At::Unquoted;
                i = run;
            }
        }
        self.after_cr = buf.last() == Some(&b'\r');
        (i, false)
    }
}

// ------------------------------------------------------------------ writing

struct CsvWriter {
    target: String,
    delimiter: u8,
    boundary: Boundary,
    /// The contract's fields, when the records' contract is known.
    declared: Vec<Key>,
    /// The columns, fixed by the first record.
    header: Option<Vec<Key>>,
    /// The row being written, reused from row to row.
    line: Vec<u8>,
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
            self.emit_header(out, &header)?;
            self.header = Some(header);
        }
        let header = self.header.as_deref().unwrap_or_default();
        if let Some(extra) = r.keys().find(|k| !header.contains(k)) {
            return Err(self.outside_header(extra, header));
        }
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        let mut text = String::new();
        for (i, column) in header.iter().enumerate() {
            text.clear();
            let empty_string = cell_text(r.get(column), &mut text);
            // A lone empty cell is quoted too: an empty line is no row.
            let quote = empty_string || (header.len() == 1 && text.is_empty());
            self.push_cell(&mut line, i, &text, quote);
        }
        line.push(b'\n');
        let written = out.write_all(&line).map_err(write_error);
        self.line = line;
        written
    }

    fn finish(&mut self, out: &mut dyn Write) -> Result<()> {
        if self.header.is_none() && !self.declared.is_empty() {
            let header = self.declared.clone();
            self.emit_header(out, &header)?;
        }
        Ok(())
    }
}

impl CsvWriter {
    /// The header row, unless the target is configured without one
    /// (`csv = { header = false }`): its columns are fixed all the same.
    fn emit_header(&mut self, out: &mut dyn Write, header: &[Key]) -> Result<()> {
        if !self.boundary.csv.header {
            return Ok(());
        }
        let mut line = Vec::new();
        for (i, field) in header.iter().enumerate() {
            let name = self.boundary.external_of(field);
            self.push_cell(&mut line, i, name, header.len() == 1 && name.is_empty());
        }
        line.push(b'\n');
        out.write_all(&line).map_err(write_error)
    }

    /// Cell `i` of a row onto `line`: quoted when `quote` says so or its
    /// text holds the delimiter, the quote or a line break, a quote in it
    /// doubled; with `escape_formulas`, a `'` before a text a spreadsheet
    /// would run as a formula.
    fn push_cell(&self, line: &mut Vec<u8>, i: usize, text: &str, quote: bool) {
        let options = &self.boundary.csv;
        let delimiter = self.delimiter;
        if i > 0 {
            line.push(delimiter);
        }
        let escape = options.escape_formulas && text.starts_with(['=', '+', '-', '@', '\t']);
        let special =
            |b: &u8| matches!(*b, b'\n' | b'\r') || *b == delimiter || *b == options.quote;
        if !quote && !text.as_bytes().iter().any(special) {
            if escape {
                line.push(b'\'');
            }
            line.extend_from_slice(text.as_bytes());
            return;
        }
        line.push(options.quote);
        if escape {
            line.push(b'\'');
        }
        for &b in text.as_bytes() {
            if b == options.quote {
                line.push(b);
            }
            line.push(b);
        }
        line.push(options.quote);
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

/// A value as the text of a cell, onto `text`: nested values as JSON.
/// Whether it is the empty string, which is written quoted (an empty cell
/// unquoted is no value).
fn cell_text(v: Option<&Value>, text: &mut String) -> bool {
    match v {
        None | Some(Value::Null | Value::Absent) => {}
        Some(Value::Str(s)) => {
            text.push_str(s);
            return s.is_empty();
        }
        Some(v @ (Value::List(_) | Value::Record(_) | Value::Ok(_) | Value::Err(_))) => {
            write_json(text, v)
        }
        Some(v) => write_hql(text, v),
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows of `input`, each as its text for a failure record.
    fn row_texts(input: &str, delimiter: u8, quote: u8) -> Vec<String> {
        let reader: Box<dyn BufRead> = Box::new(std::io::Cursor::new(input.as_bytes().to_vec()));
        let mut split = Splitter::new(reader, delimiter, quote);
        let mut row = Row::default();
        let mut texts = Vec::new();
        loop {
            match split.next(&mut row).expect("read from memory") {
                Split::Row | Split::Unterminated => texts.push(row.text(delimiter, quote)),
                Split::TooLong => panic!("no row is that long"),
                Split::End => return texts,
            }
        }
    }

    /// A row's text is written again from its cells exactly as it came:
    /// quotes doubled, empty quoted cells, quotes inside unquoted text,
    /// line ends inside quotes, text after a closing quote (kept as it
    /// came), and the first line of a quote that never closes.
    #[test]
    fn a_rows_text_is_what_came() {
        let rows = [
            "a,b,c",
            "\"a\",b,\"c\"\"d\"",
            "\"ab\"cd,e",
            "x,\"y\"z\"w\",v",
            "\"multi\nline\",z",
            "\"crlf\r\nline\",\"\"\"\"",
            "q\"uote,r\"",
            "\"\",,\"\"",
            ",",
        ];
        let input = rows.join("\n") + "\n";
        assert_eq!(row_texts(&input, b',', b'"'), rows);
        let semicolons: Vec<String> = rows
            .iter()
            .map(|r| r.replace(',', ";").replace('"', "'"))
            .collect();
        let input = semicolons.join("\n") + "\n";
        assert_eq!(row_texts(&input, b';', b'\''), semicolons);
        // A quote that never closes spoils its first line; what follows
        // it, from its line end, is read again (a blank row, passed over
        // by the reader, then the rows).
        let texts = row_texts("1,\"ab\"\"c\n2,b\n", b',', b'"');
        assert_eq!(texts, ["1,\"ab\"\"c", "", "2,b"]);
    }
}
