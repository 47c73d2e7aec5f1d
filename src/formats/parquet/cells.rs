//! A Parquet file's cells as HQL values, by the columns' logical types
//! (tooling.md, "Sources, targets and the schema boundary"), through the
//! Arrow arrays the reader decodes them into, as the catalog's table
//! (`formats::catalog`) says.
//!
//! Anything else (durations, intervals, unions) has no HQL value: the
//! column is refused by name when the file is opened.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Decimal256Type, Decimal32Type, Decimal64Type,
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    Time32MillisecondType, Time32SecondType, Time64MicrosecondType, Time64NanosecondType,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrowPrimitiveType, OffsetSizeTrait};
use arrow_schema::{DataType, TimeUnit};

use crate::formats::base64;
use crate::formats::catalog::{element_of, map_value_of, reads_string, record_of, Column};
use crate::runtime::contract::TypeSpec;
use crate::runtime::value::{Key, Record, Value};

/// The first cell of a row that has no HQL value (a NaN), for the row's
/// `decode` failure: the column and what it holds.
pub(super) type NoValue = Option<(String, &'static str)>;

/// The value of `array` at `i` (not null there); `ty` is the declared
/// type it is read for, where known, which says whether a null inside it
/// is `null` or absent; `column` names the top-level column for `bad`.
pub(super) fn value_at(
    array: &dyn Array,
    i: usize,
    ty: Option<&TypeSpec>,
    column: &str,
    bad: &mut NoValue,
) -> Value {
    match array.data_type() {
        DataType::Null => Value::Null,
        DataType::Boolean => Value::Bool(array.as_boolean().value(i)),
        DataType::Int8 => int::<Int8Type>(array, i),
        DataType::Int16 => int::<Int16Type>(array, i),
        DataType::Int32 => int::<Int32Type>(array, i),
        DataType::Int64 => int::<Int64Type>(array, i),
        DataType::UInt8 => int::<UInt8Type>(array, i),
        DataType::UInt16 => int::<UInt16Type>(array, i),
        DataType::UInt32 => int::<UInt32Type>(array, i),
        DataType::UInt64 => {
            let n = array.as_primitive::<UInt64Type>().value(i);
            match i64::try_from(n) {
                Ok(n) => Value::Int(n),
                Err(_) => Value::from_number_text(&n.to_string()),
            }
        }
        DataType::Float16 => {
            let f = array.as_primitive::<Float16Type>().value(i).to_f32();
            float(short_float(f), column, bad)
        }
        DataType::Float32 => {
            let f = array.as_primitive::<Float32Type>().value(i);
            float(short_float(f), column, bad)
        }
        DataType::Float64 => float(array.as_primitive::<Float64Type>().value(i), column, bad),
        DataType::Decimal32(_, scale) => {
            decimal(array.as_primitive::<Decimal32Type>().value(i), *scale)
        }
        DataType::Decimal64(_, scale) => {
            decimal(array.as_primitive::<Decimal64Type>().value(i), *scale)
        }
        DataType::Decimal128(_, scale) => {
            decimal(array.as_primitive::<Decimal128Type>().value(i), *scale)
        }
        DataType::Decimal256(_, scale) => {
            decimal(array.as_primitive::<Decimal256Type>().value(i), *scale)
        }
        DataType::Utf8 => Value::str(array.as_string::<i32>().value(i)),
        DataType::LargeUtf8 => Value::str(array.as_string::<i64>().value(i)),
        DataType::Utf8View => Value::str(array.as_string_view().value(i)),
        DataType::Binary => Value::str(base64(array.as_binary::<i32>().value(i))),
        DataType::LargeBinary => Value::str(base64(array.as_binary::<i64>().value(i))),
        DataType::BinaryView => Value::str(base64(array.as_binary_view().value(i))),
        DataType::FixedSizeBinary(_) => Value::str(base64(array.as_fixed_size_binary().value(i))),
        DataType::Date32 => Value::str(date_text(i64::from(
            array.as_primitive::<Date32Type>().value(i),
        ))),
        DataType::Date64 => {
            let ms = array.as_primitive::<Date64Type>().value(i);
            Value::str(date_text(ms.div_euclid(MS_A_DAY)))
        }
        DataType::Timestamp(unit, tz) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(i),
                TimeUnit::Millisecond => array.as_primitive::<TimestampMillisecondType>().value(i),
                TimeUnit::Microsecond => array.as_primitive::<TimestampMicrosecondType>().value(i),
                TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(i),
            };
            Value::str(timestamp_text(v, *unit, tz.is_some()))
        }
        DataType::Time32(unit) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<Time32SecondType>().value(i),
                _ => array.as_primitive::<Time32MillisecondType>().value(i),
            };
            Value::str(time_text(i64::from(v), *unit))
        }
        DataType::Time64(unit) => {
            let v = match unit {
                TimeUnit::Nanosecond => array.as_primitive::<Time64NanosecondType>().value(i),
                _ => array.as_primitive::<Time64MicrosecondType>().value(i),
            };
            Value::str(time_text(v, *unit))
        }
        DataType::List(_) => list::<i32>(array, i, ty, column, bad),
        DataType::LargeList(_) => list::<i64>(array, i, ty, column, bad),
        DataType::FixedSizeList(_, _) => {
            let values = array.as_fixed_size_list().value(i);
            elements(&*values, 0..values.len(), element_of(ty), column, bad)
        }
        DataType::Struct(_) => {
            let s = array.as_struct();
            let shape = record_of(ty);
            let mut record = Record::with_capacity(s.num_columns());
            for (f, child) in s.fields().iter().zip(s.columns()) {
                let ty = shape.and_then(|r| r.field(f.name())).map(|f| &f.ty);
                if child.is_null(i) {
                    if ty.is_some_and(TypeSpec::admits_null) {
                        record.insert(Key::from(f.name().as_str()), Value::Null);
                    }
                    continue;
                }
                let v = value_at(&**child, i, ty, column, bad);
                record.insert(Key::from(f.name().as_str()), v);
            }
            Value::record(record)
        }
        DataType::Map(_, _) => {
            let map = array.as_map();
            let range = map.value_offsets()[i] as usize..map.value_offsets()[i + 1] as usize;
            let (keys, values) = (map.keys(), map.values());
            let ty = map_value_of(ty);
            let mut record = Record::with_capacity(range.len());
            for j in range {
                let key = match value_at(&**keys, j, None, column, bad) {
                    Value::Str(s) => Key::from(s.as_str()),
                    other => {
                        let mut text = String::new();
                        crate::runtime::json::write_json(&mut text, &other);
                        Key::from(text.as_str())
                    }
                };
                let v = match values.is_null(j) {
                    true => Value::Null,
                    false => value_at(&**values, j, ty, column, bad),
                };
                record.insert(key, v);
            }
            Value::record(record)
        }
        DataType::Dictionary(_, _) => {
            let dict = array.as_any_dictionary();
            let key = dictionary_key(dict.keys(), i);
            let values = dict.values();
            match values.is_null(key) {
                true => Value::Null,
                false => value_at(&**values, key, ty, column, bad),
            }
        }
        // Refused when the file was opened (`refusal`).
        _ => Value::Null,
    }
}

fn int<T: ArrowPrimitiveType>(array: &dyn Array, i: usize) -> Value
where
    T::Native: Into<i64>,
{
    Value::Int(array.as_primitive::<T>().value(i).into())
}

/// A float of 32 bits or fewer as the double its shortest decimal text
/// reads as (`0.1`, not `0.10000000149011612`): what was written.
fn short_float(f: f32) -> f64 {
    match f.is_finite() {
        true => f.to_string().parse().unwrap_or(f64::from(f)),
        false => f64::from(f),
    }
}

fn float(f: f64, column: &str, bad: &mut NoValue) -> Value {
    if !f.is_finite() {
        let what = match f {
            f if f.is_nan() => "NaN",
            f if f > 0.0 => "Infinity",
            _ => "-Infinity",
        };
        bad.get_or_insert((column.to_string(), what));
        return Value::str(what);
    }
    Value::Float(f)
}

/// A decimal's unscaled integer at `scale` as a number with exactly those
/// fraction digits (`1230` at scale 2: `12.30`).
fn decimal(unscaled: impl std::fmt::Display, scale: i8) -> Value {
    Value::from_number_text(&decimal_text(&unscaled.to_string(), scale))
}

pub(super) fn decimal_text(unscaled: &str, scale: i8) -> String {
    let (sign, digits) = match unscaled.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", unscaled),
    };
    if scale <= 0 {
        let zeros = "0".repeat(usize::from(scale.unsigned_abs()));
        return match digits {
            "0" => "0".to_string(),
            _ => format!("{sign}{digits}{zeros}"),
        };
    }
    let scale = scale as usize;
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (whole, fraction) = padded.split_at(padded.len() - scale);
    format!("{sign}{whole}.{fraction}")
}

fn list<O: OffsetSizeTrait>(
    array: &dyn Array,
    i: usize,
    ty: Option<&TypeSpec>,
    column: &str,
    bad: &mut NoValue,
) -> Value {
    let list = array.as_list::<O>();
    let offsets = list.value_offsets();
    let range = offsets[i].as_usize()..offsets[i + 1].as_usize();
    elements(&**list.values(), range, element_of(ty), column, bad)
}

fn elements(
    values: &dyn Array,
    range: std::ops::Range<usize>,
    ty: Option<&TypeSpec>,
    column: &str,
    bad: &mut NoValue,
) -> Value {
    let items = range
        .map(|j| match values.is_null(j) {
            true => Value::Null,
            false => value_at(values, j, ty, column, bad),
        })
        .collect();
    Value::list(items)
}

/// The position in its values of a dictionary array's `i`th key.
fn dictionary_key(keys: &dyn Array, i: usize) -> usize {
    let key = match keys.data_type() {
        DataType::Int8 => keys.as_primitive::<Int8Type>().value(i) as i64,
        DataType::Int16 => keys.as_primitive::<Int16Type>().value(i) as i64,
        DataType::Int32 => keys.as_primitive::<Int32Type>().value(i) as i64,
        DataType::Int64 => keys.as_primitive::<Int64Type>().value(i),
        DataType::UInt8 => keys.as_primitive::<UInt8Type>().value(i) as i64,
        DataType::UInt16 => keys.as_primitive::<UInt16Type>().value(i) as i64,
        DataType::UInt32 => keys.as_primitive::<UInt32Type>().value(i) as i64,
        _ => keys.as_primitive::<UInt64Type>().value(i) as i64,
    };
    usize::try_from(key).unwrap_or(0)
}

/// Why the column `path` of type `data` cannot be read for `ty`, if it
/// cannot: a type with no HQL value, or binary data the contract does not
/// read as `String`.
pub(super) fn refusal(data: &DataType, ty: Option<&TypeSpec>, path: &str) -> Option<String> {
    match data {
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => match ty.is_some_and(reads_string) {
            true => None,
            false => Some(format!(
                "column `{path}` holds binary data, which has no HQL value unless the contract reads it as a `String` (base64)"
            )),
        },
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            refusal(f.data_type(), element_of(ty), &format!("{path}[]"))
        }
        DataType::Struct(fields) => {
            let shape = record_of(ty);
            fields.iter().find_map(|f| {
                let ty = shape.and_then(|r| r.field(f.name())).map(|f| &f.ty);
                refusal(f.data_type(), ty, &format!("{path}.{}", f.name()))
            })
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Some(format!("column `{path}` is a map of an unknown layout"));
            };
            let key = kv.first().and_then(|k| refusal(k.data_type(), None, path));
            let value = kv
                .get(1)
                .and_then(|v| refusal(v.data_type(), map_value_of(ty), &format!("{path}[]")));
            key.or(value)
        }
        DataType::Dictionary(_, values) => refusal(values, ty, path),
        other => Column::of_arrow(other)
            .err()
            .map(|why| format!("column `{path}` is {why}")),
    }
}

// ---------------------------------------------------------------- dates

const MS_A_DAY: i64 = 86_400_000;

/// The civil date of a day counted from 1970-01-01 (proleptic Gregorian).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `YYYY-MM-DD` of a day counted from 1970-01-01.
pub(super) fn date_text(days: i64) -> String {
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// How many of `unit` make a second, and the fraction digits it writes.
fn per_second(unit: TimeUnit) -> (i64, usize) {
    match unit {
        TimeUnit::Second => (1, 0),
        TimeUnit::Millisecond => (1_000, 3),
        TimeUnit::Microsecond => (1_000_000, 6),
        TimeUnit::Nanosecond => (1_000_000_000, 9),
    }
}

/// `HH:MM:SS` and the fraction at `unit`'s precision, of `v` units into a
/// day.
fn clock(v: i64, unit: TimeUnit) -> String {
    let (per, digits) = per_second(unit);
    let (secs, fraction) = (v.div_euclid(per), v.rem_euclid(per));
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    match digits {
        0 => format!("{h:02}:{m:02}:{s:02}"),
        _ => format!("{h:02}:{m:02}:{s:02}.{fraction:0digits$}"),
    }
}

/// RFC 3339 text of a timestamp of `v` units since 1970, fraction digits
/// at the unit's precision; `Z` when it is adjusted to UTC.
pub(super) fn timestamp_text(v: i64, unit: TimeUnit, utc: bool) -> String {
    let (per, _) = per_second(unit);
    let day = per * 86_400;
    let date = date_text(v.div_euclid(day));
    let time = clock(v.rem_euclid(day), unit);
    format!("{date}T{time}{}", if utc { "Z" } else { "" })
}

fn time_text(v: i64, unit: TimeUnit) -> String {
    clock(v, unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_keep_their_scale() {
        assert_eq!(decimal_text("1230", 2), "12.30");
        assert_eq!(decimal_text("-5", 3), "-0.005");
        assert_eq!(decimal_text("0", 2), "0.00");
        assert_eq!(decimal_text("42", 0), "42");
        assert_eq!(decimal_text("42", -2), "4200");
        assert_eq!(decimal_text("0", -2), "0");
    }

    #[test]
    fn dates_and_timestamps_read_as_rfc_3339() {
        assert_eq!(date_text(0), "1970-01-01");
        assert_eq!(date_text(19_782), "2024-02-29");
        assert_eq!(date_text(-1), "1969-12-31");
        let t = 1_709_214_300_120_000; // 2024-02-29T13:45:00.12 in µs
        assert_eq!(
            timestamp_text(t, TimeUnit::Microsecond, true),
            "2024-02-29T13:45:00.120000Z"
        );
        assert_eq!(
            timestamp_text(t / 1_000, TimeUnit::Millisecond, false),
            "2024-02-29T13:45:00.120"
        );
        assert_eq!(
            timestamp_text(-1, TimeUnit::Second, true),
            "1969-12-31T23:59:59Z"
        );
        assert_eq!(time_text(45_296_007, TimeUnit::Millisecond), "12:34:56.007");
    }
}
