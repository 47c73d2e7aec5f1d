//! Values in typed columns (`hql export --format sql --from x.parquet`):
//! the columns are checked where they lie, not read as JSON text. What a
//! cell becomes is the catalog's table (`formats::catalog`), the one the
//! Parquet reader follows, so a type test is known from the column's type
//! before any row — only whether the cell is NULL is asked per row — and
//! rules read the typed values as HQL would have them (a date as
//! `YYYY-MM-DD` text, a timestamp as RFC 3339 text at its precision).
//!
//! An SQL NULL is an absent field, or `null` where the field's declared
//! type admits `Null`, and always `null` as a list's element, as the
//! reader has it: the declared types are read into the tree here
//! (`Typed::of`) once, beside the catalog's.
//!
//! Each `Dialect` method over a `Loc` asks here first when the `Loc` is
//! typed; the JSON path stays as it is.

use std::rc::Rc;

use super::dialect::{Dialect, Kind, Loc, Ty};
use super::TypedFrom;
use crate::formats::catalog::{element_of, reads_string, record_of, Column, ValueKind};
use crate::runtime::contract::{RecordShape, TypeSpec};

/// A value in typed columns: the column's type and the declared types
/// inside it.
#[derive(Debug)]
pub struct Typed {
    /// `None`: no column is there (a field the file does not have).
    pub column: Option<Column>,
    /// Is an SQL NULL here `null` (else absent)?
    pub nulls: bool,
    /// The row itself (its fields are columns).
    pub top: bool,
    /// A struct's fields.
    pub fields: Vec<(String, Rc<Typed>)>,
    /// A list's elements.
    pub element: Option<Rc<Typed>>,
}

impl Typed {
    /// The row of a file with `columns`, read for `record`.
    pub fn row(columns: &[(String, Column)], record: &RecordShape) -> Rc<Typed> {
        let fields = columns
            .iter()
            .map(|(name, column)| {
                let ty = record.field(name).map(|f| &f.ty);
                (name.clone(), Typed::of(column, ty, admits_null(ty)))
            })
            .collect();
        Rc::new(Typed {
            column: Some(Column::Struct(columns.to_vec())),
            nulls: false,
            top: true,
            fields,
            element: None,
        })
    }

    /// `column` read as `ty` (where declared).
    fn of(column: &Column, ty: Option<&TypeSpec>, nulls: bool) -> Rc<Typed> {
        let fields = match column {
            Column::Struct(fields) => {
                let shape = record_of(ty);
                fields
                    .iter()
                    .map(|(name, c)| {
                        let ty = shape.and_then(|r| r.field(name)).map(|f| &f.ty);
                        (name.clone(), Typed::of(c, ty, admits_null(ty)))
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        let element = match column {
            Column::List(e) => Some(Typed::of(e, element_of(ty), true)),
            _ => None,
        };
        Rc::new(Typed {
            column: Some(column.clone()),
            nulls,
            top: false,
            fields,
            element,
        })
    }

    fn absent() -> Rc<Typed> {
        Rc::new(Typed {
            column: None,
            nulls: false,
            top: false,
            fields: Vec::new(),
            element: None,
        })
    }

    fn kind(&self) -> Option<ValueKind> {
        self.column.as_ref().map(Column::kind)
    }
}

fn admits_null(ty: Option<&TypeSpec>) -> bool {
    ty.is_some_and(TypeSpec::admits_null)
}

/// The loc of a row of typed columns.
pub fn row(typed: Rc<Typed>) -> Loc {
    Loc {
        json: String::new(),
        path: "'$'".into(),
        kind: None,
        scalar: None,
        typed: Some(typed),
    }
}

/// Why the columns cannot be checked as `record` reads them, if they
/// cannot: what `hql run` refuses to read (binary data not read as
/// `String`), and what the compiler does not read yet.
pub fn refusal(
    d: Dialect,
    columns: &[(String, Column)],
    record: &RecordShape,
) -> Option<(String, String)> {
    columns.iter().find_map(|(name, column)| {
        let ty = record.field(name).map(|f| &f.ty);
        refused(d, column, ty, name).map(|why| (format!("column `{name}`"), why))
    })
}

fn refused(d: Dialect, column: &Column, ty: Option<&TypeSpec>, path: &str) -> Option<String> {
    match column {
        Column::Binary if !ty.is_some_and(reads_string) => Some(format!(
            "`{path}` holds binary data, which has no HQL value unless the contract reads it as a `String` (base64)"
        )),
        Column::Time { .. } if ty.is_some() => Some(format!(
            "`{path}` holds times of day, which the SQL export does not read yet (check the file with hql run)"
        )),
        Column::Timestamp { digits: 9, .. } if d == Dialect::Spark => Some(format!(
            "`{path}` holds nanosecond timestamps, which Spark does not read"
        )),
        Column::Map(_) if ty.is_some() => Some(format!(
            "`{path}` is a map, which the SQL export does not read yet (check the file with hql run)"
        )),
        Column::List(e) if d == Dialect::Postgres && matches!(**e, Column::List(_)) => Some(format!(
            "`{path}` is a list of lists, which PostgreSQL's arrays do not hold (theirs are of many dimensions)"
        )),
        Column::List(e) => refused(d, e, element_of(ty), &format!("{path}[]")),
        Column::Struct(fields) => {
            let shape = record_of(ty);
            fields.iter().find_map(|(name, c)| {
                let ty = shape.and_then(|r| r.field(name)).map(|f| &f.ty);
                refused(d, c, ty, &format!("{path}.{name}"))
            })
        }
        _ => None,
    }
}

/// The input: each row of the Parquet files or the table `from` with its
/// file (none for a table) and its position, every column beside them.
pub fn input(d: Dialect, from: &str, typed: TypedFrom) -> Result<String, String> {
    Ok(match (d, typed) {
        (Dialect::DuckDb, TypedFrom::Parquet(_)) => format!(
            "  SELECT filename AS hql_source, file_row_number + 1 AS hql_line, * EXCLUDE (filename, file_row_number)\n  \
             FROM read_parquet({}, filename = true, file_row_number = true)",
            d.string(from)
        ),
        (Dialect::Spark, TypedFrom::Parquet(_)) => format!(
            "  SELECT _metadata.file_path AS hql_source, _metadata.row_index + 1 AS hql_line, *\n  FROM parquet.`{}`",
            from.replace('`', "``")
        ),
        (Dialect::Trino | Dialect::Postgres, TypedFrom::Parquet(_)) => {
            return Err(format!(
                "{} reads tables: name a table or view with a text column `line`, or --from-table",
                match d {
                    Dialect::Trino => "Trino",
                    _ => "PostgreSQL",
                }
            ))
        }
        // A table's rows in its storage order (DuckDB's `rowid`).
        (Dialect::DuckDb, TypedFrom::Table(_)) => format!(
            "  SELECT NULL::VARCHAR AS hql_source, rowid + 1 AS hql_line, *\n  FROM {from}"
        ),
        (Dialect::Spark, TypedFrom::Table(_)) => format!(
            "  SELECT CAST(NULL AS STRING) AS hql_source,\n    \
             row_number() OVER (ORDER BY monotonically_increasing_id()) AS hql_line, *\n  FROM {from}"
        ),
        (Dialect::Trino, TypedFrom::Table(_)) => format!(
            "  SELECT CAST(NULL AS VARCHAR) AS hql_source, row_number() OVER () AS hql_line, *\n  FROM {from}"
        ),
        (Dialect::Postgres, TypedFrom::Table(_)) => format!(
            "  SELECT CAST(NULL AS text) AS hql_source, row_number() OVER () AS hql_line, *\n  FROM {from} AS hql_table"
        ),
    })
}

/// Does a row hold a number with no HQL value (NaN, an infinity), which
/// `hql run` makes the row's `decode` failure? `None` when no column can.
pub fn no_value(d: Dialect, typed: &Typed) -> Option<String> {
    let tests: Vec<String> = typed
        .fields
        .iter()
        .filter_map(|(name, t)| not_finite(d, &column_name(d, name), t))
        .collect();
    (!tests.is_empty()).then(|| format!("({})", tests.join(" OR ")))
}

fn not_finite(d: Dialect, x: &str, t: &Typed) -> Option<String> {
    match t.column.as_ref()? {
        Column::Float => Some(match d {
            Dialect::DuckDb => format!("coalesce(NOT isfinite({x}), false)"),
            Dialect::Spark => {
                format!("coalesce(isnan({x}) OR abs({x}) = double('Infinity'), false)")
            }
            Dialect::Trino => format!("coalesce(is_nan({x}) OR is_infinite({x}), false)"),
            Dialect::Postgres => format!(
                "coalesce({x} IN (CAST('NaN' AS double precision), CAST('Infinity' AS double precision), \
                 CAST('-Infinity' AS double precision)), false)"
            ),
        }),
        Column::Struct(_) => {
            let tests: Vec<String> = t
                .fields
                .iter()
                .filter_map(|(name, c)| not_finite(d, &struct_field(d, x, name), c))
                .collect();
            (!tests.is_empty()).then(|| format!("({})", tests.join(" OR ")))
        }
        Column::List(_) if d == Dialect::Postgres => {
            let test = not_finite(d, &format!("({x})[hql_nf]"), t.element.as_ref()?)?;
            Some(format!(
                "coalesce((SELECT bool_or({test}) FROM generate_subscripts({x}, 1) AS hql_nfu(hql_nf)), false)"
            ))
        }
        Column::List(_) => {
            let test = not_finite(d, "hql_nf", t.element.as_ref()?)?;
            Some(match d {
                Dialect::DuckDb => format!(
                    "coalesce(list_bool_or(list_transform({x}, lambda hql_nf: {test})), false)"
                ),
                Dialect::Spark => format!("coalesce(exists({x}, hql_nf -> {test}), false)"),
                _ => format!("coalesce(any_match({x}, hql_nf -> {test}), false)"),
            })
        }
        _ => None,
    }
}

/// A top-level column by name.
fn column_name(d: Dialect, name: &str) -> String {
    match d {
        Dialect::Spark => format!("`{}`", name.replace('`', "``")),
        _ => format!("\"{}\"", name.replace('"', "\"\"")),
    }
}

fn struct_field(d: Dialect, x: &str, name: &str) -> String {
    match d {
        Dialect::DuckDb => format!("struct_extract({x}, {})", d.string(name)),
        Dialect::Postgres => format!("({x}).{}", column_name(d, name)),
        _ => format!("{x}.{}", column_name(d, name)),
    }
}

fn loc(json: String, path: String, typed: Rc<Typed>) -> Loc {
    Loc {
        json,
        path,
        kind: None,
        scalar: None,
        typed: Some(typed),
    }
}

/// Field `name` of a typed record.
pub fn field(d: Dialect, at: &Loc, t: &Typed, name: &str) -> Loc {
    let path = format!("{} || {}", at.path, d.string(&format!(".{name}")));
    match t.fields.iter().find(|(n, _)| n == name) {
        Some((_, child)) if t.top => loc(column_name(d, name), path, child.clone()),
        Some((_, child)) => loc(struct_field(d, &at.json, name), path, child.clone()),
        None => loc("NULL".into(), path, Typed::absent()),
    }
}

/// The value's kind as a word `is` tests, NULL when it is absent.
pub fn kind_of(d: Dialect, at: &Loc, t: &Typed) -> String {
    if t.top {
        return "'object'".into();
    }
    let Some(kind) = t.kind() else {
        return d.cast("NULL", Ty::Text);
    };
    let null = if t.nulls {
        "'null'".to_string()
    } else {
        d.cast("NULL", Ty::Text)
    };
    format!(
        "CASE WHEN {} IS NULL THEN {null} ELSE '{}' END",
        at.json,
        word(kind)
    )
}

fn word(kind: ValueKind) -> &'static str {
    match kind {
        ValueKind::Bool => "bool",
        ValueKind::Int => "int",
        ValueKind::Float => "float",
        ValueKind::Text => "text",
        ValueKind::List => "array",
        ValueKind::Record => "object",
        ValueKind::Null => "null",
    }
}

/// Is a value of kind `t` (`kind_of`) of `kind`?
pub fn is(kind: Kind, t: &str) -> String {
    match kind {
        Kind::Null => format!("{t} = 'null'"),
        Kind::Bool => format!("{t} = 'bool'"),
        Kind::Int => format!("{t} = 'int'"),
        Kind::Number => format!("{t} IN ('int', 'float')"),
        Kind::Text => format!("{t} = 'text'"),
        Kind::Array => format!("{t} = 'array'"),
        Kind::Object => format!("{t} = 'object'"),
    }
}

/// The value read as `ty`, as HQL has it; NULL when it is not one.
pub fn read(d: Dialect, at: &Loc, t: &Typed, ty: Ty) -> String {
    let x = &at.json;
    let none = d.cast("NULL", ty);
    let Some(column) = &t.column else {
        return none;
    };
    let try_cast = |x: &str| d.try_cast(x, ty);
    match (column.kind(), ty) {
        (ValueKind::Bool, Ty::Bool) => x.clone(),
        // A `real` as the PostgreSQL reader has it: its shortest text.
        (ValueKind::Float, Ty::Float) if d == Dialect::Postgres && *column == Column::Float => {
            try_cast(&d.cast(x, Ty::Text))
        }
        (ValueKind::Int, Ty::Int) | (ValueKind::Int | ValueKind::Float, Ty::Float) => try_cast(x),
        (ValueKind::Text, Ty::Text) => match column {
            Column::Date if d == Dialect::Postgres => format!("to_char({x}, 'YYYY-MM-DD')"),
            Column::Date => d.cast(x, Ty::Text),
            Column::Timestamp { digits, utc } => timestamp_text(d, x, *digits, *utc),
            Column::Binary => match d {
                Dialect::Spark => format!("base64({x})"),
                // Its base64 breaks lines every 76 characters.
                Dialect::Postgres => format!("replace(encode({x}, 'base64'), chr(10), '')"),
                _ => format!("to_base64({x})"),
            },
            Column::Time { .. } => none,
            // `uuid`, `varchar` and the like compare as text.
            _ if d == Dialect::Postgres => d.cast(x, Ty::Text),
            _ => x.clone(),
        },
        _ => none,
    }
}

/// A timestamp as RFC 3339 text at its precision, `Z` when adjusted to
/// UTC (read in UTC, whatever the session's time zone). PostgreSQL's as
/// its reader has it: the fraction as the server prints it, without
/// trailing zeros.
fn timestamp_text(d: Dialect, x: &str, digits: u8, utc: bool) -> String {
    let zone = if utc { "Z" } else { "" };
    match d {
        Dialect::Postgres => {
            let x = match utc {
                true => format!("({x} AT TIME ZONE 'UTC')"),
                false => x.to_string(),
            };
            format!(
                "to_char({x}, 'YYYY-MM-DD\"T\"HH24:MI:SS') || rtrim(rtrim(to_char({x}, '.US'), '0'), '.') || '{zone}'"
            )
        }
        Dialect::DuckDb => {
            let fraction = match digits {
                0 => "",
                3 => ".%g",
                6 => ".%f",
                _ => ".%n",
            };
            let x = match utc {
                true => format!("timezone('UTC', {x})"),
                false => x.to_string(),
            };
            format!("strftime({x}, '%Y-%m-%dT%H:%M:%S{fraction}{zone}')")
        }
        // Both write Java's patterns.
        Dialect::Spark | Dialect::Trino => {
            let fraction = match digits {
                0 => String::new(),
                n => format!(".{}", "S".repeat(usize::from(n))),
            };
            let x = match (utc, d) {
                (true, Dialect::Spark) => format!("to_utc_timestamp({x}, current_timezone())"),
                (true, _) => format!("({x} AT TIME ZONE 'UTC')"),
                (false, _) => x.to_string(),
            };
            let zone = if utc { "'Z'" } else { "" };
            let pattern = format!("yyyy-MM-dd'T'HH:mm:ss{fraction}{zone}");
            match d {
                Dialect::Spark => format!("date_format({x}, {})", d.string(&pattern)),
                _ => format!("format_datetime({x}, {})", d.string(&pattern)),
            }
        }
    }
}

/// The length of a typed list.
pub fn array_length(d: Dialect, at: &Loc, t: &Typed) -> String {
    match (&t.column, d) {
        (Some(Column::List(_)), Dialect::DuckDb) => format!("CAST(len({}) AS BIGINT)", at.json),
        (Some(Column::List(_)), Dialect::Spark) => format!("size({})", at.json),
        (Some(Column::List(_)), Dialect::Trino | Dialect::Postgres) => {
            format!("CAST(cardinality({}) AS bigint)", at.json)
        }
        _ => d.cast("NULL", Ty::Int),
    }
}

/// Each element of a typed list through `body` (given the element and
/// the SQL of its index, from 0); a value that is no list has none.
pub fn each(
    d: Dialect,
    at: &Loc,
    t: &Typed,
    n: &str,
    body: impl FnOnce(&Loc, &str) -> String,
) -> String {
    let e = format!("{n}_e");
    let (list, element) = match &t.element {
        Some(element) => (at.json.clone(), element.clone()),
        None => (String::new(), Typed::absent()),
    };
    let path = |index: &str| format!("{} || '[' || {index} || ']'", at.path);
    let json = if element.column.is_some() {
        e.clone()
    } else {
        "NULL".into()
    };
    match d {
        Dialect::DuckDb => {
            let index = format!("({n} - 1)");
            let text = body(&loc(json, path(&index), element), &index);
            let list = if list.is_empty() { "[]".into() } else { list };
            format!("list_transform({list}, lambda {e}, {n}: {text})")
        }
        // Walked by index: `unnest` would spread a composite element into
        // its fields.
        Dialect::Postgres => {
            let index = format!("({n} - 1)");
            let json = match element.column.is_some() {
                true => format!("({list})[{n}]"),
                false => "NULL".into(),
            };
            let text = body(&loc(json, path(&index), element), &index);
            // No list: no index (and an array of the body's type).
            let indexes = match list.is_empty() {
                true => "generate_series(1, 0)".to_string(),
                false => format!("generate_subscripts({list}, 1)"),
            };
            format!("ARRAY(SELECT {text} FROM {indexes} AS {n}_u({n}) ORDER BY {n})")
        }
        Dialect::Spark => {
            let text = body(&loc(json, path(n), element), n);
            let list = if list.is_empty() {
                "array()".into()
            } else {
                list
            };
            format!("transform({list}, ({e}, {n}) -> {text})")
        }
        // Trino's `transform` gives no index: the indexes are walked.
        Dialect::Trino => {
            let json = match element.column.is_some() {
                true => format!("element_at({list}, {n} + 1)"),
                false => "NULL".into(),
            };
            let text = body(&loc(json, path(n), element), n);
            match list.is_empty() {
                true => format!("transform(CAST(ARRAY[] AS ARRAY(BIGINT)), {n} -> {text})"),
                false => {
                    let len = format!("cardinality({list})");
                    d.transform(&format!("slice(sequence(0, {len}), 1, {len})"), n, &text)
                }
            }
        }
    }
}

/// The fields a typed record has (not NULL, or NULL where that is
/// `null`), in the columns' order.
pub fn keys(d: Dialect, at: &Loc, t: &Typed) -> String {
    let keys: Vec<String> = t
        .fields
        .iter()
        .map(|(name, child)| {
            let value = field(d, at, t, name);
            match child.nulls {
                true => d.string(name),
                false => format!(
                    "CASE WHEN {} IS NOT NULL THEN {} END",
                    value.json,
                    d.string(name)
                ),
            }
        })
        .collect();
    match (keys.is_empty(), d) {
        (true, Dialect::DuckDb) => "[]::VARCHAR[]".into(),
        (true, Dialect::Spark) => "CAST(array() AS ARRAY<STRING>)".into(),
        (true, Dialect::Trino) => "CAST(ARRAY[] AS ARRAY(VARCHAR))".into(),
        (true, Dialect::Postgres) => "CAST(ARRAY[] AS text[])".into(),
        (false, _) => d.list(&keys),
    }
}
