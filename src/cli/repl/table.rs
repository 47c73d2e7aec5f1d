//! Showing values on a terminal of a given width.
//!
//! A list or stream of records is an aligned table with a row index
//! (columns in first-seen order). A table wider than the terminal first
//! shortens its widest cells (ending them with `…`), then leaves out the
//! columns on the right with a note naming them: a row is never wrapped.
//! A list shows its first rows and how many are left out; a stream shows
//! its first rows as soon as they are read and says when more follow — it
//! is not read to the end to count them. Any other value prints on one
//! line when it fits, else over several indented lines, with a list of
//! records inside it (a `report()`'s `by_rule`) as a table.

use std::io::Write;

use crate::runtime::eval::RuntimeError;

use crate::runtime::exec::stages::force;
use crate::runtime::print::{to_hql, write_field_name};
use crate::runtime::value::{Record, Value};

/// Rows shown before the rest are left out.
pub const ROW_LIMIT: usize = 20;

/// The narrowest a shortened column gets (wider ones keep their width).
const MIN_COLUMN: usize = 8;

/// What follows the rows shown.
#[derive(Debug, PartialEq)]
enum More {
    Nothing,
    /// A list: exactly this many rows left out.
    Counted(usize),
    /// A stream: at least one more row, not counted.
    Follows,
}

pub fn show(v: Value, width: usize, out: &mut dyn Write) -> Result<(), RuntimeError> {
    let mut text = String::new();
    match &v {
        Value::Stream(_) | Value::List(_) => {
            let (shown, more) = first_rows(&v)?;
            rows(&shown, width, 0, &mut text);
            match more {
                More::Nothing => {}
                More::Counted(n) => text.push_str(&format!(
                    "… {n} more row{}\n",
                    if n == 1 { "" } else { "s" }
                )),
                More::Follows => text.push_str("… more rows follow\n"),
            }
        }
        _ => {
            block(&force(v)?, width, 0, &mut text);
            text.push('\n');
        }
    }
    let _ = out.write_all(text.as_bytes());
    Ok(())
}

/// The first `ROW_LIMIT` elements, forced, and what follows them. A
/// stream is read one element past the rows shown, no further.
fn first_rows(v: &Value) -> Result<(Vec<Value>, More), RuntimeError> {
    if let Value::List(items) = v {
        let shown = items.iter().take(ROW_LIMIT).cloned().map(force);
        let more = match items.len().saturating_sub(ROW_LIMIT) {
            0 => More::Nothing,
            n => More::Counted(n),
        };
        return Ok((shown.collect::<Result<_, _>>()?, more));
    }
    let mut items = crate::runtime::exec::stages::items(v)?;
    let mut shown = Vec::new();
    for item in items.by_ref().take(ROW_LIMIT) {
        shown.push(force(item?.value)?);
    }
    let more = match items.next() {
        Some(_) => More::Follows,
        None => More::Nothing,
    };
    Ok((shown, more))
}

/// Elements as a table when they are all records, else as a list.
fn rows(shown: &[Value], width: usize, indent: usize, out: &mut String) {
    match records(shown) {
        Some(records) => table(&records, width.saturating_sub(indent), indent, out),
        None => {
            block(&Value::list(shown.to_vec()), width, indent, out);
            out.push('\n');
        }
    }
}

/// The records, when every element is one and there is at least one.
fn records(values: &[Value]) -> Option<Vec<&Record>> {
    if values.is_empty() {
        return None;
    }
    values
        .iter()
        .map(|r| match r {
            Value::Record(r) => Some(&**r),
            _ => None,
        })
        .collect()
}

/// `v` starting at column `indent`: on one line when it fits in `width`,
/// else a record one field a line, a list one element a line, `ok(…)` and
/// `err(…)` around their value so laid out. No newline after the last line.
fn block(v: &Value, width: usize, indent: usize, out: &mut String) {
    let one = to_hql(v);
    if indent + one.chars().count() <= width {
        out.push_str(&one);
        return;
    }
    let pad = " ".repeat(indent + 2);
    match v {
        Value::Record(record) if !record.is_empty() => {
            out.push_str("{\n");
            let n = record.len();
            for (i, (key, value)) in record.iter().enumerate() {
                out.push_str(&pad);
                let start = out.len();
                write_field_name(out, key);
                out.push(':');
                let key_width = out[start..].chars().count() + 1;
                let last = i + 1 == n;
                match value {
                    Value::List(items) if records(items).is_some() => {
                        out.push('\n');
                        let shown = &items[..items.len().min(ROW_LIMIT)];
                        rows(shown, width, indent + 4, out);
                        if items.len() > shown.len() {
                            out.push_str(&" ".repeat(indent + 4));
                            out.push_str(&format!("… {} more rows\n", items.len() - shown.len()));
                        }
                        continue;
                    }
                    _ => {
                        out.push(' ');
                        block(value, width, indent + 2 + key_width, out);
                    }
                }
                out.push_str(if last { "\n" } else { ",\n" });
            }
            out.push_str(&" ".repeat(indent));
            out.push('}');
        }
        Value::List(items) if !items.is_empty() => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&pad);
                block(item, width, indent + 2, out);
                out.push_str(if i + 1 == items.len() { "\n" } else { ",\n" });
            }
            out.push_str(&" ".repeat(indent));
            out.push(']');
        }
        Value::Ok(okay) => wrapped("ok", &okay.value, width, indent, out),
        Value::Err(error) => wrapped("err", error, width, indent, out),
        _ => out.push_str(&one),
    }
}

fn wrapped(name: &str, inner: &Value, width: usize, indent: usize, out: &mut String) {
    out.push_str(name);
    out.push('(');
    block(inner, width, indent + name.len() + 1, out);
    out.push(')');
}

/// Cell text: strings without quotes, everything else as printed.
fn cell(v: Option<&Value>) -> String {
    match v {
        None => String::new(),
        Some(Value::Str(s)) => s.replace('\n', "\\n"),
        Some(other) => to_hql(other),
    }
}

/// `text` cut to `width` characters, ending in `…` when cut.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let cut: String = text.chars().take(width.saturating_sub(1)).collect();
    let mut cut = cut.trim_end().to_string();
    cut.push('…');
    cut
}

/// The columns' widths within `width` columns: the widest shortened first
/// (the last column before all others when `last_first`), then columns
/// left out from the right. The widths of the columns kept.
fn fit_columns(
    natural: &[usize],
    index_width: usize,
    width: usize,
    last_first: bool,
) -> Vec<usize> {
    let total = |ws: &[usize]| index_width + ws.iter().map(|w| w + 3).sum::<usize>();
    let least: Vec<usize> = natural.iter().map(|&w| w.min(MIN_COLUMN)).collect();
    // As many columns as fit at their narrowest (always the first).
    let mut kept = natural.len();
    while kept > 1 && total(&least[..kept]) > width {
        kept -= 1;
    }
    let mut widths = natural[..kept].to_vec();
    if last_first && kept == natural.len() {
        let last = kept - 1;
        let over = total(&widths).saturating_sub(width);
        widths[last] -= over.min(widths[last] - least[last]);
    }
    while total(&widths) > width {
        let widest = (0..kept)
            .filter(|&i| widths[i] > least[i])
            .max_by_key(|&i| (widths[i], i));
        match widest {
            Some(i) => widths[i] -= 1,
            // One column, still too wide: shorten it to what is left.
            None => {
                widths[0] = width.saturating_sub(index_width + 3).max(1);
                break;
            }
        }
    }
    widths
}

/// The table of `rows`, in `width` columns, each line indented by `indent`.
fn table(rows: &[&Record], width: usize, indent: usize, out: &mut String) {
    table_with(rows, width, indent, false, out)
}

/// [`table`], where the last column, when `last_first`, is the first to
/// be shortened (it holds what matters least, as `:describe`'s examples).
pub fn table_with(
    rows: &[&Record],
    width: usize,
    indent: usize,
    last_first: bool,
    out: &mut String,
) {
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
    let natural: Vec<usize> = columns
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
    let widths = fit_columns(&natural, index_width, width, last_first);
    let pad = " ".repeat(indent);
    let mut push_row = |index: &str, values: &[String]| {
        let start = out.len();
        out.push_str(&pad);
        out.push_str(&format!("{index:>index_width$}"));
        for (v, &w) in values.iter().zip(&widths) {
            let v = fit(v, w);
            out.push_str(" │ ");
            out.push_str(&v);
            out.push_str(&" ".repeat(w - v.chars().count()));
        }
        let trimmed = start + out[start..].trim_end().len();
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
    let left_out = &columns[widths.len()..];
    if !left_out.is_empty() {
        let note = format!(
            "… {} more column{} not shown: {}",
            left_out.len(),
            if left_out.len() == 1 { "" } else { "s" },
            left_out.join(", ")
        );
        out.push_str(&pad);
        out.push_str(&fit(&note, width));
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cli::repl::rec;

    fn shown(v: Value, width: usize) -> String {
        let mut out = Vec::new();
        show(v, width, &mut out).unwrap();
        String::from_utf8(out).unwrap()
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
        assert_eq!(
            shown(rows, 80),
            "# │ species  │ n │ site\n─ │ ──────── │ ─ │ ─────\n0 │ barn owl │ 2 │\n1 │ wren     │   │ hedge\n"
        );
    }

    #[test]
    fn a_table_too_wide_shortens_its_widest_cells() {
        let rows = Value::list(vec![rec(&[
            ("id", Value::Int(1)),
            ("note", Value::str("x".repeat(50))),
        ])]);
        let text = shown(rows, 30);
        assert_eq!(
            text,
            "# │ id │ note\n─ │ ── │ ─────────────────────\n0 │ 1  │ xxxxxxxxxxxxxxxxxxxx…\n"
        );
        assert!(text.lines().all(|l| l.chars().count() <= 30), "{text}");
    }

    #[test]
    fn a_table_still_too_wide_leaves_out_columns_with_a_note() {
        let fields: Vec<(String, Value)> = (0..12)
            .map(|i| (format!("column{i}"), Value::str("a value here")))
            .collect();
        let fields: Vec<(&str, Value)> = fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        let text = shown(Value::list(vec![rec(&fields)]), 60);
        assert!(text.lines().all(|l| l.chars().count() <= 60), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "header, rule, one row, the note: {text}");
        assert!(lines[0].starts_with("# │ column0   │ column1 "), "{text}");
        assert!(lines[2].starts_with("0 │ a value… "), "{text}");
        assert!(
            lines[3].starts_with("… 7 more columns not shown: column5, column6"),
            "{text}"
        );
    }

    #[test]
    fn long_lists_are_cut_with_a_count() {
        let rows = Value::list((0..25).map(Value::Int).collect());
        let text = shown(rows, 80);
        assert!(text.ends_with("… 5 more rows\n"), "{text}");
    }

    #[test]
    fn a_record_too_wide_goes_over_several_lines_with_tables_inside() {
        let by_rule = Value::list(vec![
            rec(&[
                ("rule", Value::str("Order.qty.type")),
                ("kind", Value::str("type")),
                ("count", Value::Int(12)),
            ]),
            rec(&[
                ("rule", Value::str("Order.low_high")),
                ("kind", Value::str("rule")),
                ("count", Value::Int(3)),
            ]),
        ]);
        let report = rec(&[
            ("total", Value::Int(100)),
            ("ok", Value::Int(85)),
            ("by_rule", by_rule),
            ("where", rec(&[("file", Value::str("orders.jsonl"))])),
        ]);
        assert_eq!(
            shown(report, 40),
            "{\n  total: 100,\n  ok: 85,\n  by_rule:\n    # │ rule           │ kind │ count\n    ─ │ ────────────── │ ──── │ ─────\n    0 │ Order.qty.type │ type │ 12\n    1 │ Order.low_high │ rule │ 3\n  where: {file: \"orders.jsonl\"}\n}\n"
        );
        assert_eq!(shown(rec(&[("a", Value::Int(1))]), 40), "{a: 1}\n");
    }
}
