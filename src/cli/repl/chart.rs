//! Charts of values: `:hist` (a histogram of numbers) and `:bar` (a bar a
//! key, as `count_by` gives), drawn in Unicode blocks for a terminal or as
//! SVG for a notebook.
//!
//! A histogram reads its numbers twice — once for their range, once to
//! count them into bins — so a stream of any length takes constant memory.
//! Bins are "nice": their width is 1, 2, 2.5 or 5 times a power of ten
//! (whole numbers when every value is one), about ⌈log₂ n⌉ + 1 of them
//! (Sturges), from 5 to 20. Each bin holds the values from its lower edge
//! up to, not including, its upper one; the last holds its upper edge too.

use crate::formats::{convert_csv_cell, CsvCell};
use crate::runtime::contract::TypeSpec;
use crate::runtime::eval::RuntimeError;
use crate::runtime::exec::stages::items;
use crate::runtime::print::to_hql;
use crate::runtime::value::Value;

use super::describe::number;

/// Bars shown by `:bar` before the rest are counted in a note.
pub const MAX_BARS: usize = 40;
/// The longest bar, in cells.
const MAX_BAR: usize = 60;
/// The longest label a bar gets.
const LABEL: usize = 24;

/// A histogram: `edges` has one more element than `counts`.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    pub edges: Vec<f64>,
    pub counts: Vec<u64>,
    /// Digits after the point in the edges' text.
    decimals: usize,
    pub values: u64,
    pub min: f64,
    pub max: f64,
    /// Items that are not numbers (nulls included).
    pub skipped: u64,
}

/// The histogram of the numbers a stream or list gives; `None` when it
/// gives none.
pub fn histogram(value: &Value) -> Result<Option<Histogram>, RuntimeError> {
    let (mut n, mut skipped, mut whole) = (0u64, 0u64, true);
    let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
    for item in items(value)? {
        match numeric(&item?.value) {
            Some(x) => {
                n += 1;
                min = min.min(x);
                max = max.max(x);
                whole &= x.fract() == 0.0;
            }
            None => skipped += 1,
        }
    }
    if n == 0 {
        return Ok(None);
    }
    let (edges, decimals) = edges(n, min, max, whole);
    let mut h = Histogram {
        counts: vec![0; edges.len() - 1],
        edges,
        decimals,
        values: n,
        min,
        max,
        skipped,
    };
    for item in items(value)? {
        if let Some(x) = numeric(&item?.value) {
            let i = h.bin(x);
            h.counts[i] += 1;
        }
    }
    Ok(Some(h))
}

/// The number a histogram draws for `v`: a finite number, or a text that
/// reads as one the way a CSV cell does (a field of a CSV source that
/// also holds `NA`, say); `None` for anything else.
fn numeric(v: &Value) -> Option<f64> {
    let x = match v {
        Value::Str(text) => {
            let mut decoder = crate::runtime::json::Decoder::default();
            [TypeSpec::Int, TypeSpec::Float].iter().find_map(|ty| {
                match convert_csv_cell(text, ty, &mut decoder)? {
                    CsvCell::Int(i) => Some(i as f64),
                    CsvCell::Float(f) => Some(f),
                    _ => None,
                }
            })?
        }
        v => number(v)?,
    };
    x.is_finite().then_some(x)
}

/// Nice bin edges over `[min, max]`, and the decimals to print them with.
fn edges(n: u64, min: f64, max: f64, whole: bool) -> (Vec<f64>, usize) {
    let target = ((n as f64).log2().ceil() as usize + 1).clamp(5, 20);
    if max == min {
        return (vec![min, max], decimals_of(min, whole));
    }
    let raw = (max - min) / target as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let mut step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= raw * (1.0 - 1e-9) && !(whole && s.fract() != 0.0))
        .unwrap_or(10.0 * magnitude);
    if whole {
        step = step.max(1.0);
    }
    let start = (min / step).floor() * step;
    let bins = (((max - start) / step).ceil() as usize).max(1);
    let edges = (0..=bins).map(|i| start + i as f64 * step).collect();
    let decimals = if whole || step.fract() == 0.0 {
        0
    } else {
        (-(step.log10().floor()) as usize) + usize::from((step / magnitude).fract() != 0.0)
    };
    (edges, decimals)
}

fn decimals_of(x: f64, whole: bool) -> usize {
    if whole {
        return 0;
    }
    let text = format!("{x}");
    text.split_once('.').map(|(_, f)| f.len()).unwrap_or(0)
}

impl Histogram {
    fn bin(&self, x: f64) -> usize {
        let bins = self.counts.len();
        let step = (self.edges[bins] - self.edges[0]) / bins as f64;
        if step <= 0.0 {
            return 0;
        }
        (((x - self.edges[0]) / step).floor().max(0.0) as usize).min(bins - 1)
    }

    fn edge(&self, x: f64) -> String {
        format!("{x:.*}", self.decimals)
    }

    /// `[40, 60)`; the last bin `[180, 200]`.
    fn label(&self, i: usize) -> String {
        let close = if i + 1 == self.counts.len() { ']' } else { ')' };
        format!(
            "[{}, {}{close}",
            self.edge(self.edges[i]),
            self.edge(self.edges[i + 1])
        )
    }

    /// The histogram in `width` columns: a bar a bin, then a summary line.
    pub fn text(&self, width: usize) -> String {
        let rows: Vec<(String, f64)> = (0..self.counts.len())
            .map(|i| (self.label(i), self.counts[i] as f64))
            .collect();
        let mut out = bars(&rows, width);
        out.push_str(&format!(
            "{} value{}, min {}, max {}, {} bin{}",
            self.values,
            plural(self.values as usize),
            to_hql(&number_value(self.min)),
            to_hql(&number_value(self.max)),
            self.counts.len(),
            plural(self.counts.len()),
        ));
        if self.skipped > 0 {
            out.push_str(&format!(
                "; {} item{} that {} not a number left out",
                self.skipped,
                plural(self.skipped as usize),
                if self.skipped == 1 { "is" } else { "are" },
            ));
        }
        out.push('\n');
        out
    }

    /// The histogram as an SVG: vertical bars, the edges under them.
    pub fn svg(&self) -> String {
        let (w, h, left, bottom, top) = (480.0, 240.0, 40.0, 24.0, 12.0);
        let bins = self.counts.len();
        let most = self.counts.iter().copied().max().unwrap_or(0).max(1) as f64;
        let slot = (w - left - 8.0) / bins as f64;
        let plot = h - bottom - top;
        let mut svg = svg_open(w, h);
        for (i, &count) in self.counts.iter().enumerate() {
            let bar = plot * count as f64 / most;
            svg.push_str(&format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bar:.1}\" fill=\"#4c78a8\"><title>{} {count}</title></rect>\n",
                left + i as f64 * slot + 0.5,
                top + plot - bar,
                (slot - 1.0).max(1.0),
                escape(&self.label(i)),
            ));
        }
        // Every edge when there are few bins, else every other one.
        let every = if bins <= 10 { 1 } else { 2 };
        for i in (0..=bins).step_by(every) {
            svg.push_str(&format!(
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
                left + i as f64 * slot,
                h - 8.0,
                self.edge(self.edges[i])
            ));
        }
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            left - 4.0,
            top + 4.0,
            most as u64
        ));
        svg.push_str("</svg>");
        svg
    }
}

/// A whole number as an Int, so that it prints without `.0`.
fn number_value(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9e15 {
        Value::Int(x as i64)
    } else {
        Value::Float(x)
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The bars to draw (a label and a number each), and how many were left
/// out past [`MAX_BARS`].
pub type Keyed = (Vec<(String, f64)>, usize);

/// The bars of a `count_by` result: each item a record with a `key` and a
/// numeric `count`, or of two fields, a label and a number. `None` when
/// the items are not so; the second value counts the bars left out.
pub fn keyed(value: &Value) -> Result<Option<Keyed>, RuntimeError> {
    let mut rows = Vec::new();
    let mut more = 0;
    for item in items(value)? {
        let item = item?.value;
        let Some(row) = key_and_count(&item) else {
            return Ok(None);
        };
        if rows.len() < MAX_BARS {
            rows.push(row);
        } else {
            more += 1;
        }
    }
    Ok((!rows.is_empty()).then_some((rows, more)))
}

/// Is every item a record of exactly `key` and a numeric `count` (what
/// `count_by` gives), and is there one?
pub fn is_count_by(items: &[Value]) -> bool {
    !items.is_empty()
        && items.iter().all(|i| match i {
            Value::Record(r) => {
                r.len() == 2
                    && r.contains_key("key")
                    && r.get("count").is_some_and(Value::is_number)
            }
            _ => false,
        })
}

fn key_and_count(item: &Value) -> Option<(String, f64)> {
    let Value::Record(r) = item else { return None };
    let (key, count) = match (r.get("key"), r.get("count")) {
        (Some(k), Some(c)) if r.len() == 2 => (k, c),
        _ if r.len() == 2 => {
            let mut values = r.values();
            (values.next()?, values.next()?)
        }
        _ => return None,
    };
    let label = match key {
        Value::Str(s) => s.to_string(),
        other => to_hql(other),
    };
    Some((clip(&label), number(count)?))
}

/// A bar chart in `width` columns: the label, `│`, the bar, the number.
pub fn bars(rows: &[(String, f64)], width: usize) -> String {
    let label_width = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    let numbers: Vec<String> = rows
        .iter()
        .map(|(_, n)| to_hql(&number_value(*n)))
        .collect();
    let number_width = numbers.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let room = width
        .saturating_sub(label_width + number_width + 4)
        .clamp(10, MAX_BAR);
    let most = rows.iter().map(|(_, n)| *n).fold(0.0, f64::max);
    let mut out = String::new();
    for ((label, n), shown) in rows.iter().zip(&numbers) {
        let pad = label_width - label.chars().count();
        out.push_str(&format!(
            "{}{label} │{} {shown}\n",
            " ".repeat(pad),
            blocks(*n, most, room)
        ));
    }
    out
}

/// `n` of `most` as a bar of at most `room` cells, in eighths of a cell;
/// a bar for a number above zero is never empty.
fn blocks(n: f64, most: f64, room: usize) -> String {
    const PARTS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    if most <= 0.0 || n <= 0.0 {
        return String::new();
    }
    let eighths = ((n / most) * (room * 8) as f64).round().max(1.0) as usize;
    format!("{}{}", "█".repeat(eighths / 8), PARTS[eighths % 8])
}

/// A bar chart as an SVG: a row a key, the label left, the number right.
pub fn bars_svg(rows: &[(String, f64)]) -> String {
    let (w, row, left) = (480.0, 20.0, 160.0);
    let h = row * rows.len() as f64 + 8.0;
    let most = rows.iter().map(|(_, n)| *n).fold(0.0, f64::max).max(1.0);
    let room = w - left - 56.0;
    let mut svg = svg_open(w, h);
    for (i, (label, n)) in rows.iter().enumerate() {
        let y = 4.0 + i as f64 * row;
        let bar = room * n.max(0.0) / most;
        let shown = to_hql(&number_value(*n));
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n<rect x=\"{left:.1}\" y=\"{:.1}\" width=\"{bar:.1}\" height=\"{:.1}\" fill=\"#4c78a8\"><title>{} {shown}</title></rect>\n<text x=\"{:.1}\" y=\"{:.1}\">{shown}</text>\n",
            left - 6.0,
            y + 14.0,
            escape(label),
            y + 2.0,
            row - 4.0,
            escape(label),
            left + bar + 4.0,
            y + 14.0,
        ));
    }
    svg.push_str("</svg>");
    svg
}

fn svg_open(w: f64, h: f64) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"11\">\n"
    )
}

fn clip(text: &str) -> String {
    let text = text.replace('\n', "\\n");
    if text.chars().count() <= LABEL {
        return text;
    }
    let cut: String = text.chars().take(LABEL - 1).collect();
    format!("{cut}…")
}

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(xs: impl IntoIterator<Item = i64>) -> Value {
        Value::list(xs.into_iter().map(Value::Int).collect())
    }

    /// The numbers of a field that also holds texts, nulls and numbers
    /// written as text (a CSV column with `NA`): drawn, and the rest
    /// counted and said.
    #[test]
    fn hist_draws_the_numbers_of_a_mixed_field_and_counts_the_rest() {
        let mixed = Value::list(vec![
            Value::Int(1),
            Value::str("2.5"),
            Value::str("NA"),
            Value::Null,
            Value::Float(4.0),
            Value::Bool(true),
        ]);
        let h = histogram(&mixed).unwrap().unwrap();
        assert_eq!((h.values, h.skipped, h.min, h.max), (3, 3, 1.0, 4.0));
        assert_eq!(h.counts.iter().sum::<u64>(), 3);
        let text = h.text(80);
        assert!(text.contains("\n3 values, min 1, max 4"), "{text}");
        assert!(
            text.ends_with("; 3 items that are not a number left out\n"),
            "{text}"
        );
    }

    #[test]
    fn bins_are_nice_and_hold_every_value() {
        let h = histogram(&ints(0..100)).unwrap().unwrap();
        // 100 values: 8 bins wanted, a width of 12.375 rounds up to 20.
        assert_eq!(h.edges, [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(h.counts, [20, 20, 20, 20, 20]);
        assert_eq!(h.label(4), "[80, 100]");
        let h = histogram(&ints([3, 3, 3])).unwrap().unwrap();
        assert_eq!(
            (h.edges.clone(), h.counts.clone()),
            (vec![3.0, 3.0], vec![3])
        );
        let floats = Value::list(vec![Value::Float(0.1), Value::Float(0.35), Value::Null]);
        let h = histogram(&floats).unwrap().unwrap();
        assert_eq!(h.label(0), "[0.10, 0.15)");
        assert_eq!(h.counts.iter().sum::<u64>(), 2);
        assert_eq!(h.skipped, 1);
        assert!(histogram(&Value::list(vec![])).unwrap().is_none());
    }

    #[test]
    fn bars_scale_to_the_widest_in_eighths() {
        let rows = vec![("wren".to_string(), 8.0), ("owl".to_string(), 1.0)];
        // 11 cells of room: 88 eighths for 8, 11 for 1.
        assert_eq!(bars(&rows, 20), "wren │███████████ 8\n owl │█▍ 1\n");
    }
}
