//! `:describe EXPR`: a profile of the records of a stream or list, one row
//! a field — how often it is present, how often null, the kinds of value it
//! holds, how many distinct values (counted up to [`MAX_DISTINCT`]), the
//! least and greatest number or text, and a few examples.
//!
//! Records are folded one at a time; a field keeps counters, at most
//! [`MAX_DISTINCT`] hashes, its extremes and [`EXAMPLES`] examples, so
//! memory grows with the number of fields, never with the number of
//! records. A nested record's fields are profiled under dotted paths
//! (`address.city`). A CSV source's cells are read as numbers or booleans
//! where they parse as one (as `:infer` reads them).

use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use crate::formats::{convert_csv_cell, CsvCell};
use crate::runtime::contract::TypeSpec;
use crate::runtime::eval::{Plan, RuntimeError};
use crate::runtime::exec::stages::items;
use crate::runtime::json::Decoder;
use crate::runtime::print::to_hql;
use crate::runtime::value::{Record, Value};
use crate::tooling::infer::is_decode_failure;
use crate::tooling::infer::text_cells;

/// Distinct values are counted up to this many, then shown as `≥ 1000`.
pub const MAX_DISTINCT: usize = 1000;
/// Examples kept a field.
const EXAMPLES: usize = 3;
/// The longest an example or an extreme is shown.
const SHOWN: usize = 16;
/// Numbers a field keeps for its median and 90th percentile: a sample of
/// this many, the same for the same data, when there are more.
const SAMPLE: usize = 4096;

/// The profile of the records folded so far.
#[derive(Default)]
pub struct Profile {
    pub records: u64,
    /// Items left out: lines that did not decode, failure records of a
    /// validated stream, values that are not records.
    undecodable: u64,
    failures: u64,
    not_records: u64,
    fields: Vec<Field>,
    index: HashMap<String, usize>,
}

#[derive(Default)]
struct Field {
    path: String,
    present: u64,
    nulls: u64,
    /// Kind names in first-seen order.
    kinds: Vec<&'static str>,
    distinct: HashSet<u64>,
    /// More distinct values than [`MAX_DISTINCT`] were seen.
    many: bool,
    /// The least and greatest number, and text (shown when there is no
    /// number).
    numbers: Option<(Extreme, Extreme)>,
    texts: Option<(Extreme, Extreme)>,
    examples: Vec<String>,
    /// Its numbers (as floats), or an even sample of them (`SAMPLE`).
    sample: Sample,
}

/// A sample of at most [`SAMPLE`] numbers, each number seen as likely to
/// be kept as any other (reservoir sampling, with a fixed seed so that the
/// same data gives the same sample).
#[derive(Default)]
struct Sample {
    kept: Vec<f64>,
    seen: u64,
    random: u64,
}

impl Sample {
    fn add(&mut self, x: f64) {
        self.seen += 1;
        if self.kept.len() < SAMPLE {
            return self.kept.push(x);
        }
        // xorshift64*, seeded once.
        if self.random == 0 {
            self.random = 0x9E37_79B9_7F4A_7C15;
        }
        self.random ^= self.random >> 12;
        self.random ^= self.random << 25;
        self.random ^= self.random >> 27;
        let r = self.random.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let at = r % self.seen;
        if let Some(slot) = self.kept.get_mut(at as usize) {
            *slot = x;
        }
    }

    /// The median and the 90th percentile of the sample (nearest rank),
    /// marked `≈`: `≈ 35 / 120`; empty without numbers.
    fn median_and_p90(&self) -> String {
        if self.kept.is_empty() {
            return String::new();
        }
        let mut sorted = self.kept.clone();
        sorted.sort_by(f64::total_cmp);
        let quantile = |p: f64| {
            let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
            let x = sorted[rank - 1];
            if x.fract() == 0.0 && x.abs() < 1e15 {
                to_hql(&Value::Int(x as i64))
            } else {
                to_hql(&Value::Float(x))
            }
        };
        format!("≈ {} / {}", quantile(0.5), quantile(0.9))
    }
}

/// A number or a text: what min and max compare.
#[derive(Clone)]
enum Extreme {
    Number(f64, Value),
    Text(String),
}

impl Extreme {
    fn of(v: &Value) -> Option<Extreme> {
        match v {
            Value::Str(s) => Some(Extreme::Text(s.to_string())),
            v => number(v).map(|n| Extreme::Number(n, v.clone())),
        }
    }

    fn cmp(&self, other: &Extreme) -> Ordering {
        match (self, other) {
            (Extreme::Number(a, _), Extreme::Number(b, _)) => a.total_cmp(b),
            (Extreme::Text(a), Extreme::Text(b)) => a.cmp(b),
            (Extreme::Number(..), Extreme::Text(_)) => Ordering::Less,
            (Extreme::Text(_), Extreme::Number(..)) => Ordering::Greater,
        }
    }

    fn shown(&self) -> String {
        match self {
            Extreme::Number(_, v) => to_hql(v),
            Extreme::Text(s) => to_hql(&Value::str(s.as_str())),
        }
    }
}

pub use crate::runtime::eval::to_f64 as number;

impl Field {
    fn add(&mut self, v: &Value) {
        self.present += 1;
        let kind = v.kind_name();
        if !self.kinds.contains(&kind) {
            self.kinds.push(kind);
        }
        if matches!(v, Value::Null) {
            self.nulls += 1;
            return;
        }
        let text = to_hql(v);
        if !self.many {
            let mut hasher = DefaultHasher::new();
            text.hash(&mut hasher);
            if self.distinct.insert(hasher.finish()) {
                if self.distinct.len() > MAX_DISTINCT {
                    self.many = true;
                    self.distinct = HashSet::new();
                } else if self.examples.len() < EXAMPLES {
                    self.examples.push(clip(&text));
                }
            }
        }
        if let Some(x) = number(v).filter(|x| x.is_finite()) {
            self.sample.add(x);
        }
        if let Some(e) = Extreme::of(v) {
            let range = match e {
                Extreme::Number(..) => &mut self.numbers,
                Extreme::Text(_) => &mut self.texts,
            };
            match range {
                None => *range = Some((e.clone(), e)),
                Some((least, most)) => {
                    if e.cmp(least).is_lt() {
                        *least = e;
                    } else if e.cmp(most).is_gt() {
                        *most = e;
                    }
                }
            }
        }
    }
}

fn clip(text: &str) -> String {
    if text.chars().count() <= SHOWN {
        return text.to_string();
    }
    let cut: String = text.chars().take(SHOWN - 1).collect();
    format!("{cut}…")
}

impl Profile {
    /// Fold one item: a record (or `ok(record)`); anything else is counted
    /// as skipped.
    pub fn add(&mut self, v: &Value, csv: Option<&mut Decoder>) {
        match v {
            Value::Record(r) => {
                self.records += 1;
                self.add_record("", r, csv);
            }
            Value::Ok(okay) => self.add(&okay.value, csv),
            Value::Err(failure) if is_decode_failure(failure) => self.undecodable += 1,
            Value::Err(_) => self.failures += 1,
            _ => self.not_records += 1,
        }
    }

    fn add_record(&mut self, prefix: &str, r: &Record, mut csv: Option<&mut Decoder>) {
        for (key, value) in r.iter() {
            let path = format!("{prefix}{key}");
            let i = match self.index.get(&path) {
                Some(&i) => i,
                None => {
                    self.index.insert(path.clone(), self.fields.len());
                    self.fields.push(Field {
                        path: path.clone(),
                        ..Field::default()
                    });
                    self.fields.len() - 1
                }
            };
            match (value, csv.as_deref_mut()) {
                (Value::Str(s), Some(decoder)) => self.fields[i].add(&cell(s, decoder)),
                (v, _) => self.fields[i].add(v),
            }
            if let Value::Record(inner) = value {
                self.add_record(&format!("{path}."), inner, csv.as_deref_mut());
            }
        }
    }

    /// One record a field: the table `:describe` prints.
    pub fn rows(&self) -> Vec<Record> {
        self.fields
            .iter()
            .map(|f| {
                let distinct = match f.many {
                    true => format!("≥ {MAX_DISTINCT}"),
                    false => f.distinct.len().to_string(),
                };
                let (min, max) = match f.numbers.as_ref().or(f.texts.as_ref()) {
                    Some((least, most)) => (least.shown(), most.shown()),
                    None => (String::new(), String::new()),
                };
                let cells = [
                    ("field", f.path.clone()),
                    (
                        "present",
                        format!("{} ({})", f.present, percent_text(f.present, self.records)),
                    ),
                    ("absent", (self.records - f.present).to_string()),
                    ("nulls", f.nulls.to_string()),
                    ("types", f.kinds.join("|")),
                    ("distinct", distinct),
                    ("min", min),
                    ("max", max),
                    ("median / p90", f.sample.median_and_p90()),
                    ("examples", f.examples.join(", ")),
                ];
                let mut r = Record::with_capacity(cells.len());
                for (k, v) in cells {
                    r.insert(k.into(), Value::str(v));
                }
                r
            })
            .collect()
    }

    /// The line above the table: how many records, and what was skipped.
    pub fn summary(&self) -> String {
        let mut text = format!(
            "{} record{}, {} field{}",
            self.records,
            if self.records == 1 { "" } else { "s" },
            self.fields.len(),
            if self.fields.len() == 1 { "" } else { "s" },
        );
        let counts = [
            (
                self.undecodable,
                "line that does not decode",
                "lines that do not decode",
            ),
            (self.failures, "failure record", "failure records"),
            (
                self.not_records,
                "value that is not a record",
                "values that are not records",
            ),
        ];
        let skipped: Vec<String> = counts
            .iter()
            .filter(|(n, _, _)| *n > 0)
            .map(|&(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
            .collect();
        if !skipped.is_empty() {
            text.push_str(&format!("; skipped {}", skipped.join(", ")));
        }
        text
    }
}

/// `100%`, `62.5%`, `0.1%`: one decimal where it is not whole.
/// `part` of `whole` as a share: `100%`, `62.5%`; a share that is not
/// whole never rounds to `0%` or `100%`.
fn percent_text(part: u64, whole: u64) -> String {
    if whole == 0 || (part * 100).is_multiple_of(whole) {
        return format!("{}%", (part * 100).checked_div(whole).unwrap_or(0));
    }
    let p = (part as f64 * 100.0 / whole as f64).clamp(0.1, 99.9);
    format!("{p:.1}%")
}

/// A CSV cell as decoding would read it under a number or Bool type.
fn cell(text: &str, decoder: &mut Decoder) -> Value {
    for ty in [TypeSpec::Int, TypeSpec::Float, TypeSpec::Bool] {
        match convert_csv_cell(text, &ty, decoder) {
            Some(CsvCell::Int(i)) => return Value::Int(i),
            Some(CsvCell::Float(f)) => return Value::Float(f),
            Some(CsvCell::Bool(b)) => return Value::Bool(b),
            Some(CsvCell::Big(_)) => return Value::from_number_text(text),
            _ => {}
        }
    }
    Value::str(text)
}

/// Profile every item of a stream or list.
pub fn describe(value: &Value) -> Result<Profile, RuntimeError> {
    let csv = match value {
        Value::Stream(s) => {
            matches!(s.plan(), Some(Plan::Source(spec)) if text_cells(spec))
        }
        _ => false,
    };
    let mut decoder = csv.then(Decoder::default);
    let mut profile = Profile::default();
    for item in items(value)? {
        profile.add(&item?.value, decoder.as_mut());
    }
    Ok(profile)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cli::repl::rec;

    fn cells(p: &Profile, row: usize) -> Vec<String> {
        p.rows()[row]
            .values()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn fields_are_counted_and_bounded() {
        let mut p = Profile::default();
        for i in 0..1500 {
            let mut fields = vec![("id", Value::Int(i))];
            if i % 2 == 0 {
                fields.push(("note", Value::Null));
            } else {
                fields.push(("note", Value::str("b")));
            }
            p.add(&rec(&fields), None);
        }
        p.add(&Value::Int(3), None);
        assert_eq!(
            cells(&p, 0),
            [
                "id",
                "1500 (100%)",
                "0",
                "0",
                "Int",
                "≥ 1000",
                "0",
                "1499",
                "≈ 749 / 1349",
                "0, 1, 2"
            ]
        );
        assert_eq!(
            cells(&p, 1),
            [
                "note",
                "1500 (100%)",
                "0",
                "750",
                "Null|String",
                "1",
                "\"b\"",
                "\"b\"",
                "",
                "\"b\""
            ]
        );
        assert_eq!(
            p.summary(),
            "1500 records, 2 fields; skipped 1 value that is not a record"
        );
    }

    /// Absent and null counts a field; the median and 90th percentile of
    /// its numbers, exact for a few and from a bounded sample for many.
    #[test]
    fn describe_counts_absent_and_null_and_estimates_median_and_p90() {
        let mut p = Profile::default();
        for i in 1..=10 {
            let mut fields = vec![("id", Value::Int(i))];
            match i % 5 {
                0 => {}
                1 => fields.push(("score", Value::Null)),
                _ => fields.push(("score", Value::Float(i as f64 / 2.0))),
            }
            p.add(&rec(&fields), None);
        }
        let row = cells(&p, 1);
        assert_eq!(row[..4], ["score", "8 (80%)", "2", "2"]);
        // Scores 1, 1.5, 2, 3.5, 4, 4.5: the median is the third.
        assert_eq!(row[8], "≈ 2 / 4.5");

        let mut many = Profile::default();
        for i in 0..100_000 {
            many.add(&rec(&[("n", Value::Int((i * 7919) % 100_000))]), None);
        }
        assert!(many.fields[0].sample.kept.len() <= SAMPLE);
        let row = cells(&many, 0);
        let (median, p90) = row[8].trim_start_matches("≈ ").split_once(" / ").unwrap();
        let near = |shown: &str, want: f64| {
            let x: f64 = shown.parse().unwrap();
            assert!((x - want).abs() < 3_000.0, "{shown} is not near {want}");
        };
        near(median, 50_000.0);
        near(p90, 90_000.0);
    }

    #[test]
    fn nested_records_have_dotted_paths() {
        let mut p = Profile::default();
        p.add(&rec(&[("at", rec(&[("city", Value::str("Bern"))]))]), None);
        p.add(&rec(&[("n", Value::Float(2.5))]), None);
        assert_eq!(cells(&p, 1)[..2], ["at.city", "1 (50%)"]);
        assert_eq!(cells(&p, 2)[..2], ["n", "1 (50%)"]);
        assert_eq!(percent_text(1, 3), "33.3%");
        assert_eq!(percent_text(9999, 10000), "99.9%");
        assert_eq!(percent_text(1, 10000), "0.1%");
        assert_eq!(percent_text(0, 0), "0%");
    }
}
