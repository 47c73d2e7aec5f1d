//! Parquet targets: the schema comes from the contract of the records
//! (declared fields in declared order), and records are written in row
//! groups into the host's temporary, which the run commits.
//!
//! | HQL type | column |
//! | --- | --- |
//! | `Int` (and literal Ints) | `INT64` |
//! | `Float` | `DOUBLE` |
//! | `String` (literal strings, refinements of it) | `STRING` |
//! | `Bool` | `BOOLEAN` |
//! | `Date` | `DATE` |
//! | `Timestamp` | `TIMESTAMP(us, UTC)` |
//! | `List[T]` | `LIST` of T |
//! | `Map[T]` | `MAP` of `STRING` to T |
//! | a record | a struct of its fields |
//!
//! A field that is optional or admits `Null` is a nullable column. `Any`,
//! a union of different kinds, and a type that is only `Null` have no
//! lossless column: the target is refused naming the field before
//! anything is read or written. An Int past 64 bits, a timestamp finer
//! than a microsecond, and a field the contract does not declare (an open
//! contract's extra) are runtime errors naming the field, and the target
//! is left as it was.

use std::io::Write;
use std::rc::Rc;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Date32Builder, Float64Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::{ArrayRef, ListArray, MapArray, RecordBatch, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::runtime::contract::{Contract, RecordShape, Shape, TypeSpec};
use crate::runtime::eval::io::{RecordWriter, TargetSpec, WRITE_FAILED};
use crate::runtime::eval::{Result, RuntimeError};
use crate::runtime::stdlib_native::instant;
use crate::runtime::value::{NumKind, Value};

/// Records a row group holds.
const ROW_GROUP: usize = 65_536;

/// A column's type as the target writes it.
#[derive(Debug, Clone)]
enum Column {
    Int,
    Float,
    String,
    Bool,
    Date,
    Timestamp,
    List(Box<Slot>),
    Map(Box<Slot>),
    Record(Vec<Slot>),
}

/// A field of a record, an element of a list or a value of a map: its
/// name, its column, and whether it may be null.
#[derive(Debug, Clone)]
struct Slot {
    name: String,
    column: Column,
    nullable: bool,
}

/// Why a field has no lossless column.
type Refused = String;

/// The columns of a target for records of `shape`, or why it has none.
fn columns_of(shape: Option<&Rc<Contract>>) -> std::result::Result<Vec<Slot>, Refused> {
    let Some(contract) = shape else {
        return Err(
            "its records have no contract, and a Parquet file's columns come from one".into(),
        );
    };
    let Some(record) = contract.record() else {
        return Err(format!(
            "its records are `{}`, not records, and a Parquet file's rows are records",
            contract.name
        ));
    };
    slots_of(record, "")
}

fn slots_of(record: &RecordShape, path: &str) -> std::result::Result<Vec<Slot>, Refused> {
    (record.fields.iter())
        .map(|f| {
            let path = format!("{path}{}", f.name);
            let (column, null) = column_of(&f.ty, &path)?;
            Ok(Slot {
                name: f.name.to_string(),
                column,
                nullable: null || f.optional,
            })
        })
        .collect()
}

/// The column of type `ty`, and whether it admits `Null`.
fn column_of(ty: &TypeSpec, path: &str) -> std::result::Result<(Column, bool), Refused> {
    let none = |what: &str| {
        Err(format!(
            "field `{path}` is {what}, which has no lossless Parquet column"
        ))
    };
    Ok(match ty {
        TypeSpec::Int => (Column::Int, false),
        TypeSpec::Float => (Column::Float, false),
        TypeSpec::String => (Column::String, false),
        TypeSpec::Bool => (Column::Bool, false),
        TypeSpec::Any => return none("`Any`"),
        TypeSpec::Null => return none("only `Null`"),
        TypeSpec::Literal(v) => match v {
            Value::Int(_) => (Column::Int, false),
            Value::Str(_) => (Column::String, false),
            Value::Bool(_) => (Column::Bool, false),
            Value::Float(_) => (Column::Float, false),
            _ => return none("a literal number"),
        },
        TypeSpec::List(e) => (
            Column::List(Box::new(element(e, &format!("{path}[]"))?)),
            false,
        ),
        TypeSpec::Map(v) => (
            Column::Map(Box::new(element(v, &format!("{path}[]"))?)),
            false,
        ),
        TypeSpec::Record(r) => (Column::Record(slots_of(r, &format!("{path}."))?), false),
        TypeSpec::Named(cell) => {
            let Some(contract) = cell.get() else {
                return none("an undefined type");
            };
            match (&contract.shape, contract.name.as_str()) {
                (Shape::Refined { .. }, "Date") => (Column::Date, false),
                (Shape::Refined { .. }, "Timestamp") => (Column::Timestamp, false),
                (Shape::Refined { base, .. }, _) => column_of(base, path)?,
                (Shape::Record { record, .. }, _) => (
                    Column::Record(slots_of(record, &format!("{path}."))?),
                    false,
                ),
            }
        }
        TypeSpec::Union(members) => {
            let null = members.iter().any(TypeSpec::admits_null);
            let mut kinds = members.iter().filter(|m| !matches!(m, TypeSpec::Null));
            let Some(first) = kinds.next() else {
                return none("only `Null`");
            };
            let (column, _) = column_of(first, path)?;
            for m in kinds {
                let (other, _) = column_of(m, path)?;
                if !same_column(&column, &other) {
                    return none("a union of different kinds");
                }
            }
            (column, null)
        }
    })
}

fn element(ty: &TypeSpec, path: &str) -> std::result::Result<Slot, Refused> {
    let (column, nullable) = column_of(ty, path)?;
    Ok(Slot {
        name: "element".into(),
        column,
        nullable,
    })
}

/// Do two members of a union write to one column? Literal strings of a
/// union (`"a" | "b"`) do; a record and a string do not.
fn same_column(a: &Column, b: &Column) -> bool {
    match (a, b) {
        (Column::List(x), Column::List(y)) | (Column::Map(x), Column::Map(y)) => {
            x.nullable == y.nullable && same_column(&x.column, &y.column)
        }
        (Column::Record(x), Column::Record(y)) => {
            x.len() == y.len()
                && x.iter().zip(y).all(|(x, y)| {
                    x.name == y.name
                        && x.nullable == y.nullable
                        && same_column(&x.column, &y.column)
                })
        }
        _ => std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

fn data_type(column: &Column) -> DataType {
    match column {
        Column::Int => DataType::Int64,
        Column::Float => DataType::Float64,
        Column::String => DataType::Utf8,
        Column::Bool => DataType::Boolean,
        Column::Date => DataType::Date32,
        Column::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        Column::List(e) => DataType::List(Arc::new(field(e))),
        Column::Map(v) => DataType::Map(Arc::new(map_entries(v)), false),
        Column::Record(slots) => DataType::Struct(fields(slots)),
    }
}

fn field(slot: &Slot) -> Field {
    Field::new(&slot.name, data_type(&slot.column), slot.nullable)
}

fn fields(slots: &[Slot]) -> Fields {
    slots.iter().map(field).collect()
}

fn map_entries(value: &Slot) -> Field {
    let kv = Fields::from(vec![
        Field::new("key", DataType::Utf8, false),
        Field::new("value", data_type(&value.column), value.nullable),
    ]);
    Field::new("key_value", DataType::Struct(kv), false)
}

/// Can records of `shape` be written as Parquet? An error naming the
/// field that cannot, before anything is read or written.
pub(super) fn check(spec: &TargetSpec, shape: Option<&Rc<Contract>>) -> Result<()> {
    columns_of(shape).map(|_| ()).map_err(|why| {
        RuntimeError::new("hql::io", format!("cannot write {} as Parquet: {why}", spec.path))
            .with_help(
                "a Parquet target's columns are the declared fields of the records' contract: validate them first (`validate(T) | oks()`), with fields of one kind each",
            )
    })
}

/// The writer of a Parquet target.
pub(super) fn writer(spec: &TargetSpec, shape: Option<&Rc<Contract>>) -> Box<dyn RecordWriter> {
    let columns = columns_of(shape);
    Box::new(ParquetWriter {
        target: spec.path.clone(),
        columns,
        rows: Vec::new(),
        writer: None,
    })
}

struct ParquetWriter {
    target: String,
    columns: std::result::Result<Vec<Slot>, Refused>,
    /// The records gathered since the last batch was encoded.
    rows: Vec<Value>,
    /// The file's writer, into a buffer emptied into the target as it
    /// fills; it closes a row group at `ROW_GROUP` records.
    writer: Option<ArrowWriter<Vec<u8>>>,
}

fn failed(e: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::new(WRITE_FAILED, e.to_string())
}

impl ParquetWriter {
    fn slots(&self) -> Result<&[Slot]> {
        self.columns.as_deref().map_err(|why| {
            RuntimeError::new(
                "hql::io",
                format!("cannot write {} as Parquet: {why}", self.target),
            )
        })
    }

    /// Encode the gathered records as one batch of the row group being
    /// written, and write out what the writer made of it.
    fn encode(&mut self, out: &mut dyn Write) -> Result<()> {
        let slots = self.slots()?.to_vec();
        let schema: SchemaRef = Arc::new(Schema::new(fields(&slots)));
        if self.writer.is_none() {
            let props = WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .set_max_row_group_row_count(Some(ROW_GROUP))
                .set_created_by(format!("hql version {}", env!("CARGO_PKG_VERSION")))
                .build();
            let writer =
                ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props)).map_err(failed)?;
            self.writer = Some(writer);
        }
        if !self.rows.is_empty() {
            let rows = std::mem::take(&mut self.rows);
            let values: Vec<Option<&Value>> = rows.iter().map(Some).collect();
            let columns = record_columns(&slots, &values, &self.target)?;
            let batch = RecordBatch::try_new(schema, columns).map_err(failed)?;
            let writer = self.writer.as_mut().expect("made above");
            writer.write(&batch).map_err(failed)?;
        }
        self.drain(out)
    }

    fn drain(&mut self, out: &mut dyn Write) -> Result<()> {
        if let Some(writer) = self.writer.as_mut() {
            let bytes = std::mem::take(writer.inner_mut());
            out.write_all(&bytes).map_err(failed)?;
        }
        Ok(())
    }
}

/// Records encoded at a time.
const BATCH: usize = 4096;

impl RecordWriter for ParquetWriter {
    fn write(&mut self, out: &mut dyn Write, record: &Value) -> Result<()> {
        self.slots()?;
        self.rows.push(record.clone());
        if self.rows.len() >= BATCH {
            self.encode(out)?;
        }
        Ok(())
    }

    fn settle(&mut self, out: &mut dyn Write) -> Result<()> {
        self.encode(out)
    }

    fn finish(&mut self, out: &mut dyn Write) -> Result<()> {
        self.encode(out)?;
        if let Some(writer) = self.writer.as_mut() {
            writer.finish().map_err(failed)?;
        }
        self.drain(out)
    }
}

/// The columns of `slots` over `values` (records; `None` or `null` where
/// the row or struct is null).
fn record_columns(
    slots: &[Slot],
    values: &[Option<&Value>],
    target: &str,
) -> Result<Vec<ArrayRef>> {
    for v in values.iter().flatten() {
        if let Value::Record(r) = v {
            if let Some((name, _)) = r
                .iter()
                .find(|(k, _)| !slots.iter().any(|s| *s.name == ***k))
            {
                return Err(RuntimeError::new(
                    "hql::io",
                    format!("cannot write {target} as Parquet: a record has the field `{name}`, which the contract does not declare, so it has no column"),
                )
                .with_help("declare the field in the contract, or leave it out with `map`"));
            }
        }
    }
    slots
        .iter()
        .map(|slot| {
            // Under a null struct a column that cannot be null holds a
            // placeholder, which the struct's null hides.
            let placeholder = (!slot.nullable).then(|| placeholder(&slot.column));
            let mut cells: Vec<Option<&Value>> = Vec::with_capacity(values.len());
            for v in values {
                let cell = match v {
                    Some(Value::Record(r)) => r.get(&slot.name).filter(|v| !matches!(v, Value::Null)),
                    _ => placeholder.as_ref(),
                };
                if cell.is_none() && !slot.nullable {
                    return Err(RuntimeError::new(
                        "hql::io",
                        format!(
                            "cannot write {target} as Parquet: a record has no value for the required field `{}`",
                            slot.name
                        ),
                    ));
                }
                cells.push(cell);
            }
            array(slot, &cells, target)
        })
        .collect()
}

/// A value of `column`'s kind, for a place no reader sees.
fn placeholder(column: &Column) -> Value {
    match column {
        Column::Int => Value::Int(0),
        Column::Float => Value::Float(0.0),
        Column::String => Value::str(""),
        Column::Bool => Value::Bool(false),
        Column::Date => Value::str("1970-01-01"),
        Column::Timestamp => Value::str("1970-01-01T00:00:00Z"),
        Column::List(_) => Value::list(Vec::new()),
        Column::Map(_) => Value::record(Default::default()),
        Column::Record(slots) => Value::record(
            (slots.iter())
                .filter(|s| !s.nullable)
                .map(|s| (s.name.as_str().into(), placeholder(&s.column)))
                .collect(),
        ),
    }
}

/// The array of `slot`'s column over `cells` (`None`: null or absent).
fn array(slot: &Slot, cells: &[Option<&Value>], target: &str) -> Result<ArrayRef> {
    let wrong = |v: &Value| {
        RuntimeError::new(
            "hql::io",
            format!(
                "cannot write {target} as Parquet: field `{}` holds {}, which its column cannot hold",
                slot.name,
                v.kind_article()
            ),
        )
    };
    Ok(match &slot.column {
        Column::Int => {
            let mut b = Int64Builder::with_capacity(cells.len());
            for c in cells {
                b.append_option(c.map(|v| int(v, &slot.name, target)).transpose()?);
            }
            Arc::new(b.finish())
        }
        Column::Float => {
            let mut b = Float64Builder::with_capacity(cells.len());
            for c in cells {
                let f = match c {
                    None => None,
                    Some(Value::Float(f)) => Some(*f),
                    Some(Value::Int(n)) => Some(*n as f64),
                    Some(Value::Num(n)) => match n.kind {
                        NumKind::Float(f) => Some(f),
                        NumKind::Int(i) => Some(i as f64),
                        NumKind::BigInt => Some(n.text.parse().unwrap_or(f64::NAN)),
                    },
                    Some(v) => return Err(wrong(v)),
                };
                b.append_option(f);
            }
            Arc::new(b.finish())
        }
        Column::String => {
            let mut b = StringBuilder::with_capacity(cells.len(), cells.len() * 8);
            for c in cells {
                match c {
                    None => b.append_null(),
                    Some(Value::Str(s)) => b.append_value(s.as_str()),
                    Some(v) => return Err(wrong(v)),
                }
            }
            Arc::new(b.finish())
        }
        Column::Bool => {
            let mut b = BooleanBuilder::with_capacity(cells.len());
            for c in cells {
                match c {
                    None => b.append_null(),
                    Some(Value::Bool(x)) => b.append_value(*x),
                    Some(v) => return Err(wrong(v)),
                }
            }
            Arc::new(b.finish())
        }
        Column::Date => {
            let mut b = Date32Builder::with_capacity(cells.len());
            for c in cells {
                let day = match c {
                    None => None,
                    Some(v) => {
                        let nanos = v
                            .as_str()
                            .and_then(|s| instant(s, true))
                            .ok_or_else(|| wrong(v))?;
                        let day = nanos.div_euclid(86_400 * 1_000_000_000);
                        Some(i32::try_from(day).map_err(|_| wrong(v))?)
                    }
                };
                b.append_option(day);
            }
            Arc::new(b.finish())
        }
        Column::Timestamp => {
            let mut b =
                TimestampMicrosecondBuilder::with_capacity(cells.len()).with_timezone("UTC");
            for c in cells {
                let micros = match c {
                    None => None,
                    Some(v) => {
                        let nanos = v
                            .as_str()
                            .and_then(|s| instant(s, false))
                            .ok_or_else(|| wrong(v))?;
                        if nanos % 1000 != 0 {
                            return Err(RuntimeError::new(
                                "hql::io",
                                format!(
                                    "cannot write {target} as Parquet: field `{}` holds {}, finer than the microseconds of its column",
                                    slot.name,
                                    v.as_str().unwrap_or_default()
                                ),
                            ));
                        }
                        Some(i64::try_from(nanos / 1000).map_err(|_| wrong(v))?)
                    }
                };
                b.append_option(micros);
            }
            Arc::new(b.finish())
        }
        Column::List(element) => {
            let mut lengths = Vec::with_capacity(cells.len());
            let mut items: Vec<Option<&Value>> = Vec::new();
            for c in cells {
                match c {
                    None => lengths.push(0),
                    Some(Value::List(l)) => {
                        lengths.push(l.len());
                        items.extend(
                            l.iter()
                                .map(|v| Some(v).filter(|v| !matches!(v, Value::Null))),
                        );
                    }
                    Some(v) => return Err(wrong(v)),
                }
            }
            let values = array(element, &items, target)?;
            Arc::new(
                ListArray::try_new(
                    Arc::new(field(element)),
                    OffsetBuffer::from_lengths(lengths),
                    values,
                    nulls(cells),
                )
                .map_err(failed)?,
            )
        }
        Column::Map(value) => {
            let mut lengths = Vec::with_capacity(cells.len());
            let mut keys = StringBuilder::new();
            let mut items: Vec<Option<&Value>> = Vec::new();
            for c in cells {
                match c {
                    None => lengths.push(0),
                    Some(Value::Record(r)) => {
                        lengths.push(r.len());
                        for (k, v) in r.iter() {
                            keys.append_value(&**k);
                            items.push(Some(v).filter(|v| !matches!(v, Value::Null)));
                        }
                    }
                    Some(v) => return Err(wrong(v)),
                }
            }
            let values = array(value, &items, target)?;
            let entries = map_entries(value);
            let DataType::Struct(kv) = entries.data_type().clone() else {
                unreachable!("map entries are a struct");
            };
            let keys: ArrayRef = Arc::new(keys.finish());
            let entries_array =
                StructArray::try_new(kv, vec![keys, values], None).map_err(failed)?;
            Arc::new(
                MapArray::try_new(
                    Arc::new(entries),
                    OffsetBuffer::from_lengths(lengths),
                    entries_array,
                    nulls(cells),
                    false,
                )
                .map_err(failed)?,
            )
        }
        Column::Record(slots) => {
            for v in cells.iter().flatten() {
                if !matches!(v, Value::Record(_)) {
                    return Err(wrong(v));
                }
            }
            let children = record_columns(slots, cells, target)?;
            Arc::new(StructArray::try_new(fields(slots), children, nulls(cells)).map_err(failed)?)
        }
    })
}

/// The validity of `cells`, where any is null.
fn nulls(cells: &[Option<&Value>]) -> Option<NullBuffer> {
    cells
        .iter()
        .any(Option::is_none)
        .then(|| NullBuffer::from(cells.iter().map(Option::is_some).collect::<Vec<bool>>()))
}

fn int(v: &Value, field: &str, target: &str) -> Result<i64> {
    match v {
        Value::Int(n) => Ok(*n),
        Value::Num(n) => match n.kind {
            NumKind::Int(i) => Ok(i),
            NumKind::BigInt => Err(RuntimeError::new(
                "hql::io",
                format!(
                    "cannot write {target} as Parquet: field `{field}` holds {}, an Int past 64 bits, which an INT64 column cannot hold",
                    n.text
                ),
            )),
            NumKind::Float(_) => Err(RuntimeError::new(
                "hql::io",
                format!("cannot write {target} as Parquet: field `{field}` holds a Float where its column is INT64"),
            )),
        },
        other => Err(RuntimeError::new(
            "hql::io",
            format!(
                "cannot write {target} as Parquet: field `{field}` holds {}, where its column is INT64",
                other.kind_article()
            ),
        )),
    }
}
