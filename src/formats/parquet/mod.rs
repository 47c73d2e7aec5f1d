//! Parquet sources and targets (tooling.md, "Sources, targets and the
//! schema boundary"), through the `parquet` crate's Arrow reader and
//! writer.
//!
//! A Parquet file is read from its end (its footer holds the schema and
//! where each row group lies), so the host hands the format the file
//! itself (`Input::File`), never a stream: standard input cannot be read
//! as Parquet. The schema is known before any row: a column whose type has
//! no HQL value (binary data the contract does not read as `String`, a
//! duration) is refused by name before anything is read. Rows are read one
//! row group at a time, in batches, and each row is one record, its
//! `origin.line` its 1-based row number in the file; cells convert by
//! their logical types as `cells.rs` says, and a null cell is absent, or
//! `null` where the field's type admits `Null` (or the boundary declares
//! the column nullable), as a SQL `NULL` is.
//!
//! `count()` and `report()` read the rows as cells (`RowCells`), and for an
//! open contract only the columns it declares: the others cannot change a
//! verdict. Every other reader (printing, `errs()`, `route`) reads every
//! column, since a failure record's `input` holds the whole record.
//!
//! A target (`target.rs`) takes its schema from the contract of the
//! records, is written in row groups to the host's temporary and
//! committed with the run.

mod cells;
mod target;

use std::io::Read;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use parquet::file::reader::{ChunkReader, Length};

use crate::formats::catalog::Column as CatalogColumn;
use crate::runtime::builtins::{Format, FormatDef};
use crate::runtime::contract::{Contract, TypeSpec};
use crate::runtime::eval::io::{
    Cell, Codec, Decoded, DecodedRecords, Input, Part, Plain, RecordWriter, Registered, RowCells,
    RowForCheck, Seekable, SourceSpec, TargetSpec,
};
use crate::runtime::eval::{check_interrupt, Origin, Result, RuntimeError};
use crate::runtime::json::write_json;
use crate::runtime::validate::undecodable_input;
use crate::runtime::value::{Key, NumKind, Record, Value};

/// The Parquet format.
pub struct Parquet;

pub static PARQUET: Parquet = Parquet;

/// Parquet as the registry knows it.
pub const FORMAT: Registered = Registered {
    format: Format::new(&FormatDef {
        name: "Parquet",
        in_programs: true,
        extensions: &["parquet"],
        more_extensions: &[],
        whole_extensions: &[],
        synonyms: &["pq"],
        options: &[],
    }),
    codec: &PARQUET,
};

/// Rows a batch holds: a row group is read in batches of this many.
const BATCH_ROWS: usize = 8192;

impl Codec for Parquet {
    fn read(
        &self,
        input: Input,
        spec: &SourceSpec,
        shape: Option<&Rc<Contract>>,
    ) -> Result<DecodedRecords> {
        Ok(Box::new(Plain(Rows::open(
            input, spec, shape, false, None,
        )?)))
    }

    fn reads_by_shape(&self) -> bool {
        true
    }

    fn reads_files(&self) -> bool {
        true
    }

    fn cells(&self) -> Option<&dyn RowCells> {
        Some(self)
    }

    fn columns_read(&self, shape: Option<&Rc<Contract>>, projected: bool) -> Option<String> {
        match shape.and_then(|c| c.record()) {
            Some(record) if projected && record.open => {
                let names: Vec<&str> = record.fields.iter().map(|f| &*f.name).collect();
                Some(format!("the contract's fields only ({})", names.join(", ")))
            }
            _ => Some("every column".into()),
        }
    }

    fn check_target(&self, spec: &TargetSpec, shape: Option<&Rc<Contract>>) -> Result<()> {
        target::check(spec, shape)
    }

    fn writer(
        &self,
        spec: &TargetSpec,
        shape: Option<&Rc<Contract>>,
    ) -> Option<Box<dyn RecordWriter>> {
        Some(target::writer(spec, shape))
    }
}

impl RowCells for Parquet {
    fn each_row_for_check(
        &self,
        input: Input,
        spec: &SourceSpec,
        shape: &Rc<Contract>,
        part: Option<&Part>,
        each: &mut dyn FnMut(RowForCheck) -> Result<bool>,
    ) -> Result<()> {
        let rows = Rows::open(input, spec, Some(shape), true, part)?;
        check_rows(rows, shape, each)
    }

    fn parts(&self, input: Input, spec: &SourceSpec) -> Result<Option<Vec<u64>>> {
        let builder = Rows::builder(input, spec)?;
        let groups = builder.metadata().row_groups();
        Ok((groups.len() > 1).then(|| {
            (groups.iter())
                .map(|g| u64::try_from(g.num_rows()).unwrap_or(0))
                .collect()
        }))
    }

    fn cells_are_text(&self) -> bool {
        false
    }
}

/// Hand each of `rows` to `each` for the line check: a row as its
/// converted cells, as the JSON text of its record where `each` cannot
/// judge those, or as the `decode` failure of a cell with no HQL value.
fn check_rows(
    mut rows: Rows,
    shape: &Rc<Contract>,
    each: &mut dyn FnMut(RowForCheck) -> Result<bool>,
) -> Result<()> {
    let Some(record) = shape.record() else {
        return Ok(());
    };
    // Where each declared field's column is among those read.
    let slots: Vec<Option<usize>> = (record.fields.iter())
        .map(|f| rows.columns.iter().position(|c| c.field == f.name))
        .collect();
    let mut values: Vec<Option<Value>> = Vec::new();
    let mut text = String::new();
    while let Some(row) = rows.advance() {
        check_interrupt()?;
        let (line, i) = row?;
        let bad = rows.row_values(i, &mut values);
        if let Some(bad) = bad {
            let fields = rows.columns.iter().map(|c| c.field.clone());
            let record = fields
                .zip(values.drain(..))
                .filter_map(|(f, v)| Some((f, v?)));
            let failure = rows.no_value(line, record.collect(), bad);
            each(RowForCheck::Failed(failure))?;
            continue;
        }
        let undeclared =
            (rows.columns.iter().zip(&values)).any(|(c, v)| !c.declared && v.is_some());
        let cells: Vec<Option<Cell>> = (slots.iter())
            .map(|slot| values[(*slot)?].as_ref().map(cell_of))
            .collect();
        let fields = &cells;
        if each(RowForCheck::Cells { fields, undeclared })? {
            continue;
        }
        text.clear();
        let fields = rows.columns.iter().map(|c| c.field.clone());
        let record: Record = fields
            .zip(values.drain(..))
            .filter_map(|(f, v)| Some((f, v?)))
            .collect();
        write_json(&mut text, &Value::record(record));
        each(RowForCheck::Text(&text))?;
    }
    Ok(())
}

/// A value as the line check takes a cell.
fn cell_of(v: &Value) -> Cell<'_> {
    match v {
        Value::Null => Cell::Null,
        Value::Bool(b) => Cell::Bool(*b),
        Value::Int(n) => Cell::Int(*n),
        Value::Float(f) => Cell::Float(*f),
        Value::Num(n) => match n.kind {
            NumKind::Int(i) => Cell::Int(i),
            NumKind::BigInt => Cell::Big(n.text.to_string()),
            NumKind::Float(_) => Cell::Decimal(n.text.to_string()),
        },
        Value::Str(s) => Cell::Text(s),
        other => Cell::Nested(other.clone()),
    }
}

// ------------------------------------------------------------------ reading

/// A file the reader reads at any offset.
enum Chunks {
    File(std::fs::File),
    Bytes(bytes::Bytes),
}

impl Length for Chunks {
    fn len(&self) -> u64 {
        match self {
            Chunks::File(f) => Length::len(f),
            Chunks::Bytes(b) => b.len() as u64,
        }
    }
}

impl ChunkReader for Chunks {
    type T = Box<dyn Read + Send>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        Ok(match self {
            Chunks::File(f) => Box::new(f.get_read(start)?),
            Chunks::Bytes(b) => Box::new(b.get_read(start)?),
        })
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        match self {
            Chunks::File(f) => f.get_bytes(start, length),
            Chunks::Bytes(b) => b.get_bytes(start, length),
        }
    }
}

/// One column as read: the field it fills and how its nulls read.
struct Column {
    field: Key,
    /// Its position among the contract's fields, where it declares it.
    position: Option<usize>,
    /// Does the contract declare it?
    declared: bool,
    /// A null cell is `null`, not absent.
    null: bool,
}

/// The rows of a Parquet source.
struct Rows {
    batches: ParquetRecordBatchReader,
    batch: Option<RecordBatch>,
    /// The next row of `batch`.
    next: usize,
    columns: Vec<Column>,
    shape: Option<Rc<Contract>>,
    name: Rc<str>,
    line: u64,
    failed: bool,
}

impl Rows {
    /// Open `input` as Parquet; with `projected`, an open contract's own
    /// columns only.
    fn open(
        input: Input,
        spec: &SourceSpec,
        shape: Option<&Rc<Contract>>,
        projected: bool,
        part: Option<&Part>,
    ) -> Result<Rows> {
        let unreadable = |why: String| unreadable(&spec.name, why);
        let mut builder = Rows::builder(input, spec)?;
        if let Some(part) = part {
            builder = builder.with_row_groups(part.parts.clone().collect());
        }
        let record = shape.and_then(|c| c.record());
        let boundary = &spec.boundary;
        let schema = builder.schema().clone();
        let mut wanted = Vec::new();
        let mut columns = Vec::new();
        for (index, f) in schema.fields().iter().enumerate() {
            let (field, column) = boundary.field_of(f.name());
            let position = record.and_then(|r| r.index.get(field)).map(|&i| i as usize);
            let declared = position.is_some();
            if projected && !declared && record.is_some_and(|r| r.open) {
                continue;
            }
            let ty = position.and_then(|i| record.map(|r| &r.fields[i].ty));
            if let Some(why) = cells::refusal(f.data_type(), ty, f.name()) {
                return Err(RuntimeError::new(
                    "hql::io",
                    format!("cannot read source `{}`: {why}", spec.name),
                )
                .with_help(
                    "leave the column out of the file, or declare a binary column `String` to read it as base64",
                ));
            }
            wanted.push(index);
            columns.push(Column {
                field: field.into(),
                position,
                declared,
                null: ty.is_some_and(TypeSpec::admits_null) || column.is_some_and(|c| c.nullable),
            });
        }
        let mask = ProjectionMask::roots(builder.parquet_schema(), wanted);
        let batches = guarded(|| {
            builder
                .with_projection(mask)
                .with_batch_size(BATCH_ROWS)
                .build()
        })
        .ok_or_else(|| unreadable("its row groups could not be read".into()))?
        .map_err(|e| unreadable(e.to_string()))?;
        Ok(Rows {
            batches,
            batch: None,
            next: 0,
            columns,
            shape: shape.cloned(),
            name: spec.name.clone(),
            line: part.map_or(0, |p| p.first_line - 1),
            failed: false,
        })
    }

    /// Open `input`, and read its footer.
    fn builder(input: Input, spec: &SourceSpec) -> Result<ParquetRecordBatchReaderBuilder<Chunks>> {
        let chunks = match input {
            Input::File(Seekable::File(f)) => Chunks::File(f),
            Input::File(Seekable::Bytes(b)) => Chunks::Bytes(b.into()),
            Input::Bytes(_) | Input::Database(_) => {
                return Err(RuntimeError::new(
                    "hql::format",
                    format!("source `{}` is not a file, which Parquet reads", spec.name),
                ))
            }
        };
        let unreadable = |why: String| unreadable(&spec.name, why);
        guarded(|| ParquetRecordBatchReaderBuilder::try_new(chunks))
            .ok_or_else(|| unreadable("its footer could not be read".into()))?
            .map_err(|e| unreadable(e.to_string()))
    }

    /// The next row: its line and its index in `batch`.
    fn advance(&mut self) -> Option<Result<(u64, usize)>> {
        loop {
            if self.failed {
                return None;
            }
            if let Some(batch) = &self.batch {
                if self.next < batch.num_rows() {
                    self.next += 1;
                    self.line += 1;
                    return Some(Ok((self.line, self.next - 1)));
                }
            }
            let batches = &mut self.batches;
            let read = guarded(|| batches.next());
            match read {
                Some(Some(Ok(batch))) => {
                    self.batch = Some(batch);
                    self.next = 0;
                }
                Some(None) => return None,
                Some(Some(Err(e))) => {
                    self.failed = true;
                    return Some(Err(unreadable(&self.name, e.to_string())));
                }
                None => {
                    self.failed = true;
                    let why = format!("its data after row {} could not be read", self.line);
                    return Some(Err(unreadable(&self.name, why)));
                }
            }
        }
    }

    /// Row `i` of the batch as one value a column (`None`: absent), and
    /// the first cell with no HQL value.
    fn row_values(&self, i: usize, values: &mut Vec<Option<Value>>) -> cells::NoValue {
        values.clear();
        let Some(batch) = &self.batch else {
            return None;
        };
        let record = self.shape.as_ref().and_then(|c| c.record());
        let mut bad = None;
        for (column, array) in self.columns.iter().zip(batch.columns()) {
            if array.is_null(i) {
                values.push(column.null.then_some(Value::Null));
                continue;
            }
            let ty = column
                .position
                .and_then(|p| record.map(|r| &r.fields[p].ty));
            values.push(Some(cells::value_at(
                &**array,
                i,
                ty,
                &column.field,
                &mut bad,
            )));
        }
        bad
    }

    /// The `decode` failure of a row with a cell that has no HQL value.
    fn no_value(&self, line: u64, record: Record, (column, what): (String, &str)) -> Decoded {
        let origin = Origin {
            source: self.name.clone(),
            line,
        };
        let message = format!(
            "row {line} of source `{}`: column `{column}` holds {what}, which has no HQL value",
            self.name
        );
        let value = undecodable_input(&origin, Value::record(record), message);
        Decoded { value, origin }
    }
}

impl Iterator for Rows {
    type Item = Result<Decoded>;

    fn next(&mut self) -> Option<Result<Decoded>> {
        if let Err(e) = check_interrupt() {
            return Some(Err(e));
        }
        let (line, i) = match self.advance()? {
            Ok(row) => row,
            Err(e) => return Some(Err(e)),
        };
        let mut values = Vec::with_capacity(self.columns.len());
        let bad = self.row_values(i, &mut values);
        let fields = self.columns.iter().map(|c| c.field.clone());
        let record: Record = fields
            .zip(values)
            .filter_map(|(f, v)| Some((f, v?)))
            .collect();
        if let Some(bad) = bad {
            return Some(Ok(self.no_value(line, record, bad)));
        }
        let origin = Origin {
            source: self.name.clone(),
            line,
        };
        Some(Ok(Decoded {
            value: Value::record(record),
            origin,
        }))
    }
}

/// The columns of the Parquet file at `path`, from its footer, as the
/// catalog names their types (`hql export --format sql --from x.parquet`
/// checks them where they lie); why not, when the file cannot be read or a
/// column has no HQL value.
pub fn schema_of(
    path: &std::path::Path,
) -> std::result::Result<Vec<(String, CatalogColumn)>, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let builder = guarded(|| ParquetRecordBatchReaderBuilder::try_new(file))
        .ok_or_else(|| format!("{}: its footer could not be read", path.display()))?
        .map_err(|e| {
            format!(
                "{} is not a Parquet file that can be read: {e}",
                path.display()
            )
        })?;
    builder
        .schema()
        .fields()
        .iter()
        .map(|f| {
            let column = CatalogColumn::of_arrow(f.data_type())
                .map_err(|why| format!("column `{}` is {why}", f.name()))?;
            Ok((f.name().clone(), column))
        })
        .collect()
}

/// The error of a file that is not Parquet, or is damaged.
fn unreadable(name: &str, why: String) -> RuntimeError {
    RuntimeError::new("hql::io", format!("cannot read {name} as Parquet: {why}"))
        .with_help("a Parquet file is written whole by its writer; check that the file is complete")
}

thread_local! {
    /// Is this thread inside `guarded`, where a panic is an error of the
    /// file being read?
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `f`, or `None` if it panicked: the Parquet reader can panic on a
/// damaged file, which is then an `hql::io` error, never a crash. The
/// panic's own message is kept quiet (the panic hook is wrapped once so
/// that panics elsewhere print as they always did).
fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(|g| g.get()) {
                previous(info);
            }
        }));
    });
    let was = GUARDED.with(|g| g.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(was));
    result.ok()
}
