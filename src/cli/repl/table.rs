//! Showing values on a terminal: a list of records as an aligned table with
//! a row index (columns in first-seen order), long lists and streams cut
//! after the first rows with a count of the rest.

use std::io::Write;

use crate::runtime::eval::{force, RuntimeError};
use crate::runtime::print::{to_hql, write_hql};
use crate::runtime::value::{Record, Value};

/// Rows shown before the rest are only counted.
pub const ROW_LIMIT: usize = 20;

pub fn show(v: Value, width: usize, out: &mut dyn Write) -> Result<(), RuntimeError> {
    let (shown, more) = match &v {
        Value::Stream(_) | Value::List(_) => first_rows(&v)?,
        _ => return line(out, &force(v)?),
    };
    let records: Option<Vec<&Record>> = shown
        .iter()
        .map(|r| match r {
            Value::Record(r) => Some(&**r),
            _ => None,
        })
        .collect();
    let text = match records {
        Some(rows) if !rows.is_empty() => table(&rows, width),
        _ => None,
    };
    match text {
        Some(t) => {
            let _ = out.write_all(t.as_bytes());
        }
        None => line(out, &Value::list(shown))?,
    }
    if more > 0 {
        let _ = writeln!(out, "… {more} more row{}", if more == 1 { "" } else { "s" });
    }
    Ok(())
}

fn line(out: &mut dyn Write, v: &Value) -> Result<(), RuntimeError> {
    let mut s = String::new();
    write_hql(&mut s, v);
    s.push('\n');
    let _ = out.write_all(s.as_bytes());
    Ok(())
}

/// The first `ROW_LIMIT` elements, forced, and how many more there are.
fn first_rows(v: &Value) -> Result<(Vec<Value>, usize), RuntimeError> {
    let mut items = crate::runtime::eval::items(v)?;
    let mut shown = Vec::new();
    for item in items.by_ref().take(ROW_LIMIT) {
        shown.push(force(item?.value)?);
    }
    let mut more = 0;
    for item in items {
        item?;
        more += 1;
    }
    Ok((shown, more))
}

/// Cell text: strings without quotes, everything else as printed.
fn cell(v: Option<&Value>) -> String {
    match v {
        None => String::new(),
        Some(Value::Str(s)) => s.replace('\n', "\\n"),
        Some(other) => to_hql(other),
    }
}

/// The table, or `None` when it would not fit in `width` columns.
fn table(rows: &[&Record], width: usize) -> Option<String> {
    let mut columns: Vec<&str> = Vec::new();
    for r in rows {
        for k in r.keys() {
            if !columns.contains(&&**k) {
                columns.push(k);
            }
        }
    }
    let index_width = (rows.len() - 1).to_string().len().max(1);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| columns.iter().map(|c| cell(r.get(c))).collect())
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cells
                .iter()
                .map(|row| row[i].chars().count())
                .max()
                .unwrap_or(0)
                .max(c.chars().count())
        })
        .collect();
    let total = index_width + widths.iter().map(|w| w + 3).sum::<usize>();
    if total > width {
        return None;
    }
    let mut out = String::new();
    let mut push_row = |index: &str, values: &[String]| {
        out.push_str(&format!("{index:>index_width$}"));
        for (v, w) in values.iter().zip(&widths) {
            out.push_str(" │ ");
            out.push_str(v);
            out.push_str(&" ".repeat(w - v.chars().count()));
        }
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
        out.push('\n');
    };
    let header: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
    push_row("#", &header);
    let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
    push_row(&"─".repeat(index_width), &rule);
    for (i, row) in cells.iter().enumerate() {
        push_row(&i.to_string(), row);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(fields: &[(&str, Value)]) -> Value {
        let mut r = Record::default();
        for (k, v) in fields {
            r.insert((*k).into(), v.clone());
        }
        Value::record(r)
    }

    #[test]
    fn records_make_an_aligned_table() {
        let rows = Value::list(vec![
            rec(&[("species", Value::str("barn owl")), ("n", Value::Int(2))]),
            rec(&[
                ("species", Value::str("wren")),
                ("site", Value::str("hedge")),
            ]),
        ]);
        let mut out = Vec::new();
        show(rows, 80, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "# │ species  │ n │ site\n─ │ ──────── │ ─ │ ─────\n0 │ barn owl │ 2 │\n1 │ wren     │   │ hedge\n"
        );
    }

    #[test]
    fn a_table_too_wide_prints_as_a_list() {
        let rows = Value::list(vec![rec(&[("note", Value::str("x".repeat(50)))])]);
        let mut out = Vec::new();
        show(rows, 20, &mut out).unwrap();
        assert!(String::from_utf8(out).unwrap().starts_with("[{note: "));
    }

    #[test]
    fn long_lists_are_cut_with_a_count() {
        let rows = Value::list((0..25).map(Value::Int).collect());
        let mut out = Vec::new();
        show(rows, 80, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.ends_with("… 5 more rows\n"), "{text}");
    }
}
