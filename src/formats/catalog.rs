//! The types of typed columns — a Parquet file's schema, a database
//! table's catalog — as HQL reads them: one table, read by the formats
//! that convert cells into values and by the SQL compiler that checks
//! typed columns where they lie (`hql export --format sql --from
//! x.parquet`), so both say alike what a column's cells become.
//!
//! | column | a cell becomes |
//! | --- | --- |
//! | integers (8 to 64 bits, signed or not) | `Int` |
//! | floats, doubles | `Float` (NaN and the infinities have no value) |
//! | decimals | a number with its digits at the column's scale: an `Int` at scale 0 |
//! | strings | `String` |
//! | booleans | `Bool` |
//! | dates | `"YYYY-MM-DD"` |
//! | timestamps | RFC 3339 text at the column's precision, `Z` when adjusted to UTC |
//! | times of day | `"HH:MM:SS"` at the column's precision |
//! | lists | `List` (a null element is `null`) |
//! | structs | records (a null field absent, or `null` where its type admits it) |
//! | maps | `Map` |
//! | binary | base64 text, only where the contract reads it as `String` |

mod names;

pub use names::{column_of, columns_of, Catalog};

use arrow_schema::{DataType, TimeUnit};

use crate::runtime::contract::{RecordShape, Shape, TypeSpec};

/// A column's type, as HQL reads its cells.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    Bool,
    Int,
    Float,
    /// Digits at a fixed scale (fraction digits; 0 or less: an integer).
    Decimal {
        scale: i8,
    },
    Text,
    /// Read as base64 text.
    Binary,
    Date,
    /// Fraction digits (0, 3, 6 or 9), and whether it is adjusted to UTC.
    Timestamp {
        digits: u8,
        utc: bool,
    },
    Time {
        digits: u8,
    },
    List(Box<Column>),
    Struct(Vec<(String, Column)>),
    Map(Box<Column>),
    /// Every cell null.
    Null,
}

/// What a cell that is not null becomes: the kinds of HQL value a type
/// test tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    Bool,
    Int,
    Float,
    Text,
    List,
    Record,
    Null,
}

impl Column {
    /// The column of an Arrow type, or why it has no HQL value.
    pub fn of_arrow(data: &DataType) -> Result<Column, String> {
        Ok(match data {
            DataType::Null => Column::Null,
            DataType::Boolean => Column::Bool,
            DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64 => Column::Int,
            DataType::Float16 | DataType::Float32 | DataType::Float64 => Column::Float,
            DataType::Decimal32(_, scale)
            | DataType::Decimal64(_, scale)
            | DataType::Decimal128(_, scale)
            | DataType::Decimal256(_, scale) => Column::Decimal { scale: *scale },
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Column::Text,
            DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::FixedSizeBinary(_) => Column::Binary,
            DataType::Date32 | DataType::Date64 => Column::Date,
            DataType::Timestamp(unit, tz) => Column::Timestamp {
                digits: digits(*unit),
                utc: tz.is_some(),
            },
            DataType::Time32(unit) | DataType::Time64(unit) => Column::Time {
                digits: digits(*unit),
            },
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                Column::List(Box::new(Column::of_arrow(f.data_type())?))
            }
            DataType::Struct(fields) => Column::Struct(
                fields
                    .iter()
                    .map(|f| Ok((f.name().clone(), Column::of_arrow(f.data_type())?)))
                    .collect::<Result<_, String>>()?,
            ),
            DataType::Map(entries, _) => match entries.data_type() {
                DataType::Struct(kv) if kv.len() == 2 => {
                    Column::of_arrow(kv[0].data_type())?;
                    Column::Map(Box::new(Column::of_arrow(kv[1].data_type())?))
                }
                _ => return Err("a map of an unknown layout".into()),
            },
            DataType::Dictionary(_, values) => Column::of_arrow(values)?,
            other => return Err(format!("of type {other}, which has no HQL value")),
        })
    }

    /// What a cell of it that is not null becomes.
    pub fn kind(&self) -> ValueKind {
        match self {
            Column::Bool => ValueKind::Bool,
            Column::Int => ValueKind::Int,
            Column::Decimal { scale } if *scale <= 0 => ValueKind::Int,
            Column::Float | Column::Decimal { .. } => ValueKind::Float,
            Column::Text
            | Column::Binary
            | Column::Date
            | Column::Timestamp { .. }
            | Column::Time { .. } => ValueKind::Text,
            Column::List(_) => ValueKind::List,
            Column::Struct(_) | Column::Map(_) => ValueKind::Record,
            Column::Null => ValueKind::Null,
        }
    }

    /// The columns of a struct, by name.
    pub fn field(&self, name: &str) -> Option<&Column> {
        match self {
            Column::Struct(fields) => fields.iter().find(|(n, _)| n == name).map(|(_, c)| c),
            _ => None,
        }
    }
}

// ------------------------------------------------------------ declared types
//
// Which declared type reads what a column holds: inside a struct, a
// list or a map, the contract's type picks the type of each part.

/// What `pick` finds in `ty`: in itself, else through a refinement's base
/// or in a union's members, the first that has it.
fn find<'a, T>(ty: Option<&'a TypeSpec>, pick: fn(&'a TypeSpec) -> Option<T>) -> Option<T> {
    let ty = ty?;
    if let Some(found) = pick(ty) {
        return Some(found);
    }
    match ty {
        TypeSpec::Named(cell) => match &cell.get()?.shape {
            Shape::Refined { base, .. } => find(Some(base), pick),
            Shape::Record { .. } => None,
        },
        TypeSpec::Union(members) => members.iter().find_map(|m| find(Some(m), pick)),
        _ => None,
    }
}

/// The record type `ty` reads a struct as: itself, a declared record, or
/// a union's first record member.
pub fn record_of(ty: Option<&TypeSpec>) -> Option<&RecordShape> {
    find(ty, |t| match t {
        TypeSpec::Record(r) => Some(&**r),
        TypeSpec::Named(cell) => cell.get()?.record(),
        _ => None,
    })
}

/// The element type `ty` reads a list's elements as.
pub fn element_of(ty: Option<&TypeSpec>) -> Option<&TypeSpec> {
    find(ty, |t| match t {
        TypeSpec::List(e) => Some(&**e),
        _ => None,
    })
}

/// The value type `ty` reads a map's values as.
pub fn map_value_of(ty: Option<&TypeSpec>) -> Option<&TypeSpec> {
    find(ty, |t| match t {
        TypeSpec::Map(v) => Some(&**v),
        _ => None,
    })
}

/// Does `ty` read a value as text (`String`, a refinement of it, a union
/// with it)?
pub fn reads_string(ty: &TypeSpec) -> bool {
    find(Some(ty), |t| matches!(t, TypeSpec::String).then_some(())).is_some()
}

/// The fraction digits of a time unit.
fn digits(unit: TimeUnit) -> u8 {
    match unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond => 6,
        TimeUnit::Nanosecond => 9,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::Field;
    use std::sync::Arc;

    #[test]
    fn columns_read_as_the_table_says() {
        assert_eq!(Column::of_arrow(&DataType::UInt64), Ok(Column::Int));
        let price = Column::of_arrow(&DataType::Decimal128(9, 2)).unwrap();
        assert_eq!(price.kind(), ValueKind::Float);
        let whole = Column::of_arrow(&DataType::Decimal128(9, 0)).unwrap();
        assert_eq!(whole.kind(), ValueKind::Int);
        let at = DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()));
        assert_eq!(
            Column::of_arrow(&at),
            Ok(Column::Timestamp {
                digits: 3,
                utc: true
            })
        );
        let items = DataType::List(Arc::new(Field::new(
            "item",
            DataType::Struct(vec![Field::new("sku", DataType::Utf8, true)].into()),
            true,
        )));
        let items = Column::of_arrow(&items).unwrap();
        assert_eq!(items.kind(), ValueKind::List);
        let Column::List(item) = items else {
            panic!("a list")
        };
        assert_eq!(item.field("sku"), Some(&Column::Text));
        assert_eq!(item.field("qty"), None);
        let duration = Column::of_arrow(&DataType::Duration(TimeUnit::Second));
        assert!(duration.unwrap_err().contains("no HQL value"));
    }
}
