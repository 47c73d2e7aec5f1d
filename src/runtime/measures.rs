//! The measures of one pass of a validated stream, and the expectations
//! judged on them when it ends (language.md §4.11).
//!
//! `Measures::of` compiles a contract's expectations once into counters, one
//! per measure each condition reads; `observe` takes each record as it was
//! received together with its result, and `end` judges every condition
//! when the stream has been read to its end. A failure budget — a count
//! bounded from above by an absolute number — is judged after each record
//! too, so that reading stops as soon as it is spent.

use std::rc::Rc;

use crate::runtime::contract::{
    Contract, ExpectCond, ExpectSpec, FieldPath, Measure, OrphanKeys, Share,
};
use crate::runtime::eval::equality::{compare_numbers, write_key, write_key_text};
use crate::runtime::eval::{ops, Interp, Result, RuntimeError, Unmet};
use crate::runtime::keyset::KeySet;
use crate::runtime::scan::{LineCheck, Seen};
use crate::runtime::stdlib_native::instant;
use crate::runtime::validate::KeyPart;
use crate::runtime::value::Value;
use crate::syntax::ast::BinOp;

/// The counters of one pass over a stream validated against a contract
/// with expectations.
pub struct Measures {
    contract: Rc<Contract>,
    rows: u64,
    failures: u64,
    /// Per expectation, a counter per measure it reads (`ExpectSpec::measures`).
    counters: Vec<Vec<Counter>>,
    /// The failure budgets, judged after every record.
    budgets: Vec<Budget>,
    /// Whether a spent budget stops the reading (not in `hql vet`).
    stops: bool,
    /// Reused for the key of each record.
    key: Vec<u8>,
}

/// What one measure has counted so far.
enum Counter {
    Rows,
    Failures,
    /// `missing`, `nulls`, `invalid`, `duplicates`, `orphans`: records.
    Records(u64),
    /// `distinct`: the values seen, each once.
    Distinct(KeySet),
    /// The keys seen by `duplicates`, and by `orphans` the keys given.
    Keys(KeySet, u64),
    /// `min`, `max`, `sum`, `avg` of the values that passed their
    /// field's checks, and how many there were.
    Numbers(Numbers<Value>),
    /// `age`: the latest instant seen, in nanoseconds.
    Latest(Option<i128>),
    /// On a worker: the keys `duplicates`, `distinct` or `orphans` read,
    /// in the order of the records, for the calling thread to claim or
    /// look up (`Measures::add`).
    Logged(KeyList),
}

/// Keys one after another: their bytes, and where each ends.
#[derive(Default)]
pub struct KeyList {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl KeyList {
    fn push(&mut self, key: &[u8]) {
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
    }

    fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(a, &b)| &self.bytes[a..b])
    }
}

/// What a worker measured of its chunks since it last handed them over,
/// in a form that can cross threads: the calling thread adds the parts in
/// the order of the file (`Measures::add`), so the measures are exactly
/// one thread's.
pub struct Part {
    rows: u64,
    failures: u64,
    counters: Vec<Vec<PartCounter>>,
}

enum PartCounter {
    Plain,
    Records(u64),
    Keys(KeyList),
    Numbers(Numbers<SentNumber>),
    Latest(Option<i128>),
}

/// The numbers `min`, `max`, `sum` and `avg` read: the least and the
/// greatest (the first of equals), their sum (exact while every one is an
/// Int and it fits), and how many there were. `N` is a number here, or
/// as it crosses threads.
struct Numbers<N> {
    min: Option<N>,
    max: Option<N>,
    sum: Sum,
    exact: Option<i64>,
    n: u64,
}

impl Numbers<Value> {
    fn new() -> Numbers<Value> {
        Numbers {
            min: None,
            max: None,
            sum: Sum::default(),
            exact: Some(0),
            n: 0,
        }
    }

    /// Count `v`, a number, whose double is `x`.
    fn add(&mut self, v: &Value, x: f64) {
        self.n += 1;
        self.sum.add(x);
        self.exact = match (self.exact, v) {
            (Some(total), Value::Int(i)) => total.checked_add(*i),
            (Some(total), Value::Num(d)) => match d.kind {
                crate::runtime::value::NumKind::Int(i) => total.checked_add(i),
                _ => None,
            },
            _ => None,
        };
        self.extremes(v);
    }

    /// Keep `v` as the least or the greatest when it passes them (so the
    /// first of equals stays).
    fn extremes(&mut self, v: &Value) {
        let less = |a: &Value, b: &Value| compare_numbers(a, b) == Some(std::cmp::Ordering::Less);
        if self.min.as_ref().is_none_or(|m| less(v, m)) {
            self.min = Some(v.clone());
        }
        if self.max.as_ref().is_none_or(|m| less(m, v)) {
            self.max = Some(v.clone());
        }
    }

    /// Add the numbers of records after those counted here.
    fn merge(&mut self, part: Numbers<SentNumber>) {
        self.n += part.n;
        self.sum.add_sum(&part.sum);
        self.exact = self
            .exact
            .zip(part.exact)
            .and_then(|(a, b)| a.checked_add(b));
        // The part's least may pass the greatest here, for its greatest,
        // which is no less, to pass in turn.
        for v in [part.min, part.max].into_iter().flatten() {
            self.extremes(&v.value());
        }
    }

    /// What has been counted, to cross threads; counting starts again.
    fn take(&mut self) -> Numbers<SentNumber> {
        let taken = std::mem::replace(self, Numbers::new());
        Numbers {
            min: taken.min.as_ref().map(SentNumber::of),
            max: taken.max.as_ref().map(SentNumber::of),
            sum: taken.sum,
            exact: taken.exact,
            n: taken.n,
        }
    }

    fn measured(&self, measure: &Measure) -> Measured {
        if self.n == 0 {
            return Measured::Absent;
        }
        Measured::Number(match measure {
            Measure::Min(_) => self.min.clone().unwrap_or(Value::Null),
            Measure::Max(_) => self.max.clone().unwrap_or(Value::Null),
            Measure::Sum(_) => (self.exact).map_or(Value::Float(self.sum.value()), Value::Int),
            _ => Value::Float(self.sum.value() / self.n as f64),
        })
    }
}

/// A sum of doubles kept exactly, as a few doubles that do not overlap
/// (the partials of Shewchuk's summation, as Python's `math.fsum` keeps
/// them), and rounded once when asked: so the sum of the same values is
/// the same double in any order, and the sums of a file's chunks added
/// on another thread give exactly the sum one thread gives.
#[derive(Clone, Default)]
pub struct Sum {
    partials: Vec<f64>,
    /// Infinities and NaNs, and sums past the largest double: added as
    /// they come.
    special: Option<f64>,
}

impl Sum {
    pub fn add(&mut self, mut x: f64) {
        if !x.is_finite() {
            self.special = Some(self.special.unwrap_or(0.0) + x);
            return;
        }
        let mut kept = 0;
        for j in 0..self.partials.len() {
            let mut y = self.partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            if !hi.is_finite() {
                self.special = Some(self.special.unwrap_or(0.0) + hi);
                self.partials.truncate(kept);
                return;
            }
            let lo = y - (hi - x);
            if lo != 0.0 {
                self.partials[kept] = lo;
                kept += 1;
            }
            x = hi;
        }
        self.partials.truncate(kept);
        self.partials.push(x);
    }

    /// Add every value `other` summed.
    pub fn add_sum(&mut self, other: &Sum) {
        other.partials.iter().for_each(|&x| self.add(x));
        if let Some(s) = other.special {
            self.special = Some(self.special.unwrap_or(0.0) + s);
        }
    }

    /// The sum, rounded to the nearest double.
    pub fn value(&self) -> f64 {
        if let Some(s) = self.special {
            return s;
        }
        let p = &self.partials;
        let Some(mut n) = p.len().checked_sub(1) else {
            return 0.0;
        };
        let (mut hi, mut lo) = (p[n], 0.0);
        while n > 0 {
            let x = hi;
            n -= 1;
            let y = p[n];
            hi = x + y;
            lo = y - (hi - x);
            if lo != 0.0 {
                break;
            }
        }
        // Round half to even across the partials left below.
        if n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0)) {
            let y = lo * 2.0;
            let x = hi + y;
            if y == x - hi {
                hi = x;
            }
        }
        hi
    }
}

/// A number of data, as it crosses threads: kept digit for digit.
enum SentNumber {
    Int(i64),
    Float(f64),
    Text(Box<str>),
}

impl SentNumber {
    fn of(v: &Value) -> SentNumber {
        match v {
            Value::Int(i) => SentNumber::Int(*i),
            Value::Num(d) => SentNumber::Text(d.text.clone()),
            v => SentNumber::Float(ops::to_f64(v).unwrap_or(f64::NAN)),
        }
    }

    fn value(self) -> Value {
        match self {
            SentNumber::Int(i) => Value::Int(i),
            SentNumber::Float(f) => Value::Float(f),
            SentNumber::Text(t) => Value::from_number_text(&t),
        }
    }
}

/// A failure budget: the expectation, which of its measures, and the
/// bound the count may not pass (`failures <= 100`: 100; `< 100`: 99).
struct Budget {
    expect: usize,
    measure: usize,
    most: u64,
}

/// A measure's value when the stream ends: a count, a number from data,
/// an age in nanoseconds, or none (`min` over no values).
#[derive(Clone)]
enum Measured {
    Count(u64),
    Number(Value),
    Age(i128),
    Absent,
}

impl Measures {
    /// The measures of one pass over a stream validated against `contract`;
    /// `None` when the contract has no expectations. Keys of `orphans` are
    /// read now, before the first record.
    pub fn of(interp: &Rc<Interp>, contract: &Rc<Contract>) -> Result<Option<Measures>> {
        let Some(shape) = contract.record() else {
            return Ok(None);
        };
        if shape.expects.is_empty() {
            return Ok(None);
        }
        let mut counters = Vec::with_capacity(shape.expects.len());
        for e in &shape.expects {
            let mut own = Vec::with_capacity(e.measures.len());
            for m in &e.measures {
                own.push(Counter::of(Some(interp), &m.measure, &e.id)?);
            }
            counters.push(own);
        }
        let budgets = shape
            .expects
            .iter()
            .enumerate()
            .filter(|(_, e)| !e.warn)
            .flat_map(|(i, e)| budgets_of(i, e))
            .collect();
        Ok(Some(Measures {
            contract: contract.clone(),
            rows: 0,
            failures: 0,
            counters,
            budgets,
            stops: interp.budgets_stop(),
            key: Vec::new(),
        }))
    }

    /// The measures a worker counts over its chunks of a stream validated
    /// against `contract`, handed over as `Part`s: the keys that
    /// `duplicates`, `distinct` and `orphans` read are logged rather than
    /// claimed, and no budget stops it (the calling thread judges them
    /// when it adds the parts). `None` without expectations.
    pub fn logging(contract: &Rc<Contract>) -> Option<Measures> {
        let shape = contract.record().filter(|r| !r.expects.is_empty())?;
        let counters = (shape.expects.iter())
            .map(|e| {
                (e.measures.iter())
                    .map(|m| Counter::of(None, &m.measure, &e.id).expect("nothing read"))
                    .collect()
            })
            .collect();
        Some(Measures {
            contract: contract.clone(),
            rows: 0,
            failures: 0,
            counters,
            budgets: Vec::new(),
            stops: false,
            key: Vec::new(),
        })
    }

    /// What this worker's measures have counted since they were last
    /// handed over; they start again from nothing.
    pub fn hand_over(&mut self) -> Part {
        let counters = (self.counters.iter_mut())
            .map(|own| own.iter_mut().map(Counter::take_part).collect())
            .collect();
        Part {
            rows: std::mem::take(&mut self.rows),
            failures: std::mem::take(&mut self.failures),
            counters,
        }
    }

    /// Add what a worker counted (`hand_over`) as if these records had
    /// been counted here, in their turn: its keys claimed or looked up
    /// now. An error when a failure budget is spent and reading stops.
    pub fn add(&mut self, part: Part) -> Result<()> {
        self.rows += part.rows;
        self.failures += part.failures;
        let shape = self.contract.record().expect("a record contract");
        for ((e, own), parts) in shape
            .expects
            .iter()
            .zip(&mut self.counters)
            .zip(part.counters)
        {
            for ((m, counter), part) in e.measures.iter().zip(own).zip(parts) {
                counter.add(&m.measure, part);
            }
        }
        if self.stops && !self.budgets.is_empty() {
            self.spend()?;
        }
        Ok(())
    }

    /// Count one record: `input` as it was received (before defaults),
    /// `result` what `validate` made of it. An error when a failure budget
    /// is spent and reading stops.
    pub fn observe(&mut self, input: &Value, result: &Value) -> Result<()> {
        self.rows += 1;
        let failures = match result {
            Value::Err(failure) => {
                self.failures += 1;
                Some(&**failure)
            }
            _ => None,
        };
        // A line that did not decode, or a value that is not a record,
        // counts in `rows` and `failures` only.
        let record = match input {
            Value::Ok(ok) => &ok.value,
            v => v,
        };
        if let Value::Record(_) = record {
            let paths = failures.map(failure_paths).unwrap_or_default();
            self.count(Fields::Record(record), &paths);
        }
        if self.stops && !self.budgets.is_empty() {
            self.spend()?;
        }
        Ok(())
    }

    /// Count one valid record that was not built, as `check` read it:
    /// a field a measure reads is in its frame, or, when only its
    /// presence or null is measured, noted as seen (`plan::RecordPlan::new`).
    pub fn observe_valid(&mut self, check: &LineCheck) -> Result<()> {
        self.rows += 1;
        self.count(Fields::Line(check, &Value::Bool(true)), &[]);
        if self.stops && !self.budgets.is_empty() {
            self.spend()?;
        }
        Ok(())
    }

    /// Does every measure read no more than rows, failures, and the
    /// presence or null of fields `check` notes as seen? A line that
    /// fails can then be measured from `findings` too (`observe_line`).
    pub fn seen_by(&self, check: &LineCheck) -> bool {
        let shape = self.contract.record().expect("a record contract");
        shape.expects.iter().flat_map(|e| &e.measures).all(|m| {
            matches!(
                m.measure,
                Measure::Rows | Measure::Failures | Measure::Missing(_) | Measure::Nulls(_)
            ) && m.measure.paths().iter().all(|p| match p.slots[..] {
                [slot] => check.seen(slot as usize).is_some(),
                _ => false,
            })
        })
    }

    /// Count one record that `check` read and found `failed` or not, when
    /// the measures are `seen_by` it.
    pub fn observe_line(&mut self, check: &LineCheck, failed: bool) -> Result<()> {
        self.rows += 1;
        self.failures += u64::from(failed);
        self.count(Fields::Line(check, &Value::Bool(true)), &[]);
        if self.stops && !self.budgets.is_empty() {
            self.spend()?;
        }
        Ok(())
    }

    /// Count an input that did not decode: a row and a failure.
    pub fn observe_undecodable(&mut self) -> Result<()> {
        self.rows += 1;
        self.failures += 1;
        if self.stops && !self.budgets.is_empty() {
            self.spend()?;
        }
        Ok(())
    }

    fn count(&mut self, fields: Fields, paths: &[Rc<str>]) {
        let shape = self.contract.record().expect("a record contract");
        for (e, counters) in shape.expects.iter().zip(&mut self.counters) {
            for (m, counter) in e.measures.iter().zip(counters) {
                counter.count(&m.measure, fields, paths, &mut self.key);
            }
        }
    }

    /// A budget spent stops the run, saying only that the count passed
    /// its bound (on several threads the count at the stop varies).
    fn spend(&self) -> Result<()> {
        for b in &self.budgets {
            let count = self.count_of(&self.counters[b.expect][b.measure]);
            if count > b.most {
                let e = &self.contract.record().expect("a record contract").expects[b.expect];
                let measure = &e.measures[b.measure].text;
                return Err(RuntimeError::new(
                    "hql::expectation",
                    format!(
                        "expectation {} failed: {measure} is more than {} ({}); reading stopped",
                        e.id, b.most, e.text
                    ),
                )
                .with_help("nothing is written: every target of the run is left as it was"));
            }
        }
        Ok(())
    }

    fn count_of(&self, counter: &Counter) -> u64 {
        match counter {
            Counter::Rows => self.rows,
            Counter::Failures => self.failures,
            Counter::Records(n) | Counter::Keys(_, n) => *n,
            Counter::Distinct(set) => set.len() as u64,
            Counter::Numbers(_) | Counter::Latest(_) | Counter::Logged(_) => 0,
        }
    }

    /// The stream was read to its end: judge every expectation, and hand
    /// each that does not hold to the interpreter (`Interp::unmet`).
    pub fn end(self, interp: &Interp) {
        let shape = self.contract.record().expect("a record contract");
        let now = interp.now();
        for (e, counters) in shape.expects.iter().zip(&self.counters) {
            let measured: Vec<Measured> = (e.measures.iter().zip(counters))
                .map(|(m, c)| self.measured(&m.measure, c, now))
                .collect();
            let judge = Judge {
                measured: &measured,
                rows: self.rows,
            };
            if judge.holds(&e.cond) {
                continue;
            }
            interp.unmet(Unmet {
                id: e.id.clone(),
                warn: e.warn,
                message: format!("expectation {} failed: {}{}", e.id, e.text, judge.values(e)),
            });
        }
    }

    fn measured(&self, measure: &Measure, counter: &Counter, now: i128) -> Measured {
        match counter {
            Counter::Numbers(numbers) => numbers.measured(measure),
            Counter::Latest(latest) => latest.map_or(Measured::Absent, |t| Measured::Age(now - t)),
            c => Measured::Count(self.count_of(c)),
        }
    }
}

impl Counter {
    /// The counter of `measure`; without an interpreter, a worker's, which
    /// logs the keys it reads (`Measures::logging`).
    fn of(interp: Option<&Rc<Interp>>, measure: &Measure, id: &str) -> Result<Counter> {
        Ok(match (measure, interp) {
            (Measure::Duplicates(_) | Measure::Distinct(_) | Measure::Orphans { .. }, None) => {
                Counter::Logged(KeyList::default())
            }
            (Measure::Rows, _) => Counter::Rows,
            (Measure::Failures, _) => Counter::Failures,
            (Measure::Missing(_) | Measure::Nulls(_) | Measure::Invalid(_), _) => {
                Counter::Records(0)
            }
            (Measure::Duplicates(_), _) => Counter::Keys(KeySet::default(), 0),
            (Measure::Distinct(_), _) => Counter::Distinct(KeySet::default()),
            (Measure::Orphans { keys, .. }, Some(interp)) => {
                Counter::Keys(orphan_keys(interp, keys, id)?, 0)
            }
            (measure, _) => return Counter::of_value(measure),
        })
    }

    /// The counter of a measure of values or instants.
    fn of_value(measure: &Measure) -> Result<Counter> {
        Ok(match measure {
            Measure::Min(_) | Measure::Max(_) | Measure::Sum(_) | Measure::Avg(_) => {
                Counter::Numbers(Numbers::new())
            }
            Measure::Age { .. } => Counter::Latest(None),
            _ => unreachable!("a measure of counts is counted by `Counter::of`"),
        })
    }

    /// What this counter has counted, as it crosses threads; it starts
    /// again from nothing.
    fn take_part(&mut self) -> PartCounter {
        match self {
            Counter::Rows | Counter::Failures => PartCounter::Plain,
            Counter::Records(n) => PartCounter::Records(std::mem::take(n)),
            Counter::Logged(keys) => PartCounter::Keys(std::mem::take(keys)),
            Counter::Numbers(numbers) => PartCounter::Numbers(numbers.take()),
            Counter::Latest(latest) => PartCounter::Latest(latest.take()),
            Counter::Distinct(_) | Counter::Keys(..) => {
                debug_assert!(false, "a worker logs its keys");
                PartCounter::Plain
            }
        }
    }

    /// Add a worker's part, counted over records that come after those
    /// counted here.
    fn add(&mut self, measure: &Measure, part: PartCounter) {
        match (self, part) {
            (Counter::Records(n), PartCounter::Records(m)) => *n += m,
            (Counter::Keys(seen, n), PartCounter::Keys(keys)) => {
                let orphans = matches!(measure, Measure::Orphans { .. });
                for key in keys.iter() {
                    *n += u64::from(match orphans {
                        true => !seen.holds(key),
                        false => !seen.claim(key, 0),
                    });
                }
            }
            (Counter::Distinct(seen), PartCounter::Keys(keys)) => {
                keys.iter().for_each(|key| {
                    seen.claim(key, 0);
                });
            }
            (Counter::Numbers(numbers), PartCounter::Numbers(part)) => numbers.merge(part),
            (Counter::Latest(latest), PartCounter::Latest(t)) => {
                if let Some(t) = t.filter(|t| latest.is_none_or(|l| l < *t)) {
                    *latest = Some(t);
                }
            }
            (Counter::Rows | Counter::Failures, PartCounter::Plain) => {}
            _ => debug_assert!(false, "a part of another measure"),
        }
    }

    /// Count one record (a record as received), whose failures lie at
    /// `paths`.
    fn count(&mut self, measure: &Measure, record: Fields, paths: &[Rc<str>], key: &mut Vec<u8>) {
        match (self, measure) {
            (Counter::Rows | Counter::Failures, _) => {}
            (Counter::Records(n), Measure::Missing(f)) => {
                *n += u64::from(record.field(f).is_none());
            }
            (Counter::Records(n), Measure::Nulls(f)) => {
                *n += u64::from(matches!(record.field(f), Some(Value::Null)));
            }
            (Counter::Records(n), Measure::Invalid(f)) => {
                *n += u64::from(failed_at(paths, f));
            }
            (Counter::Keys(seen, n), Measure::Duplicates(fields)) => {
                key.clear();
                if fields.iter().all(|f| record.write_key(f, key)) {
                    *n += u64::from(!seen.claim(key, 0));
                }
            }
            (Counter::Distinct(seen), Measure::Distinct(f)) => {
                key.clear();
                if record.write_key(f, key) {
                    seen.claim(key, 0);
                }
            }
            (Counter::Logged(keys), Measure::Duplicates(fields)) => {
                key.clear();
                if fields.iter().all(|f| record.write_key(f, key)) {
                    keys.push(key);
                }
            }
            (Counter::Logged(keys), Measure::Distinct(f) | Measure::Orphans { field: f, .. }) => {
                key.clear();
                if record.write_key(f, key) {
                    keys.push(key);
                }
            }
            (Counter::Keys(given, n), Measure::Orphans { field: f, .. }) => {
                key.clear();
                if record.write_key(f, key) {
                    *n += u64::from(!given.holds(key));
                }
            }
            (
                Counter::Numbers(numbers),
                Measure::Min(f) | Measure::Max(f) | Measure::Sum(f) | Measure::Avg(f),
            ) => {
                let Some(v) = record.present(f).filter(|v| v.is_number()) else {
                    return;
                };
                if failed_at(paths, f) {
                    return;
                }
                let Some(x) = ops::to_f64(v) else {
                    return;
                };
                numbers.add(v, x);
            }
            (Counter::Latest(latest), Measure::Age { field: f, date }) => {
                if failed_at(paths, f) {
                    return;
                }
                let Some(t) = record
                    .present(f)
                    .and_then(Value::as_str)
                    .and_then(|s| instant(s, *date))
                else {
                    return;
                };
                if latest.is_none_or(|l| l < t) {
                    *latest = Some(t);
                }
            }
            _ => debug_assert!(false, "a counter made for another measure"),
        }
    }
}

/// Where a record's fields are read from: the record as received, or the
/// line check that found a record valid (with a value that stands for
/// any present one, for a field whose presence alone is measured).
#[derive(Clone, Copy)]
enum Fields<'v> {
    Record(&'v Value),
    Line(&'v LineCheck, &'v Value),
}

impl<'v> Fields<'v> {
    /// The value at `path`; `None` when absent.
    fn field(self, path: &FieldPath) -> Option<&'v Value> {
        let (mut at, rest) = match self {
            Fields::Record(record) => (record, &path.names[..]),
            Fields::Line(check, present) => {
                let slot = *path.slots.first()? as usize;
                let top = match check.seen(slot) {
                    Some(Seen::Absent) => return None,
                    Some(Seen::Null) => &Value::Null,
                    Some(Seen::Present) => present,
                    None => match check.key_part(slot) {
                        // A string only key measures read keeps its text.
                        KeyPart::Text(_) => present,
                        KeyPart::Value(v) => v,
                    },
                };
                (top, path.names.get(1..).unwrap_or_default())
            }
        };
        for name in rest {
            let Value::Record(r) = at else {
                return None;
            };
            at = r.get(name)?;
        }
        (!matches!(at, Value::Absent)).then_some(at)
    }

    /// The value at `path` when it is present and not null.
    fn present(self, path: &FieldPath) -> Option<&'v Value> {
        self.field(path).filter(|v| !matches!(v, Value::Null))
    }

    /// Append the key of the value at `path` to `key`, as `unique` keys
    /// it; `false` when it is absent or null.
    fn write_key(self, path: &FieldPath, key: &mut Vec<u8>) -> bool {
        if let (Fields::Line(check, _), [slot]) = (self, &path.slots[..]) {
            if let KeyPart::Text(text) = check.key_part(*slot as usize) {
                write_key_text(text, key);
                return true;
            }
        }
        match self.present(path) {
            Some(v) => {
                write_key(v, key);
                true
            }
            None => false,
        }
    }
}

/// The paths of a failure record's failures (`items[1].qty`), field-level
/// ones only.
fn failure_paths(failure: &Value) -> Vec<Rc<str>> {
    let Value::Record(r) = failure else {
        return Vec::new();
    };
    let Some(Value::List(failures)) = r.get("failures") else {
        return Vec::new();
    };
    failures
        .iter()
        .filter_map(|f| match f {
            Value::Record(f) => match f.get("path") {
                Some(Value::Str(p)) => Some(Rc::from(p.as_str())),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Has a failure at `path`, or inside it, been found?
fn failed_at(paths: &[Rc<str>], path: &FieldPath) -> bool {
    if paths.is_empty() {
        return false;
    }
    let text = path.text();
    paths.iter().any(|p| {
        p.strip_prefix(text.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    })
}

/// The keys `orphans` compares with, read once: each present, non-null
/// value of a list literal, or of the path in each record of a source.
fn orphan_keys(interp: &Rc<Interp>, keys: &OrphanKeys, id: &str) -> Result<KeySet> {
    let mut set = KeySet::default();
    let mut key = Vec::new();
    let mut add = |v: &Value, set: &mut KeySet| {
        if !matches!(v, Value::Null | Value::Absent) {
            key.clear();
            write_key(v, &mut key);
            set.claim(&key, 0);
        }
    };
    match keys {
        OrphanKeys::List(values) => values.iter().for_each(|v| add(v, &mut set)),
        OrphanKeys::Source { source, path, text } => {
            let cannot = |why: String| {
                RuntimeError::new(
                    "hql::expectation",
                    format!("the keys of expectation {id} cannot be read from {text}: {why}"),
                )
            };
            let stream = match interp.eval(source, &None)? {
                Value::Stream(s) => s,
                v => return Err(cannot(format!("it is {}", v.kind_article()))),
            };
            for item in stream.open()? {
                let item = item?;
                let record = match &item.value {
                    Value::Err(_) => {
                        let line = item.origin.as_ref().map_or(0, |o| o.line);
                        return Err(cannot(format!("line {line} does not decode")));
                    }
                    v => v,
                };
                let mut at = Some(record);
                for name in path {
                    at = match at {
                        Some(Value::Record(r)) => r.get(name),
                        _ => None,
                    };
                }
                if let Some(v) = at {
                    add(v, &mut set);
                }
            }
        }
    }
    Ok(set)
}

/// The budgets among an expectation's conditions: the conjuncts at its
/// top that bound a count by an absolute whole number from above.
fn budgets_of(expect: usize, e: &ExpectSpec) -> Vec<Budget> {
    let mut out = Vec::new();
    let mut conjuncts = vec![&e.cond];
    while let Some(c) = conjuncts.pop() {
        match c {
            ExpectCond::And(a, b) => conjuncts.extend([&**a, &**b]),
            ExpectCond::Compare(op, a, b) => {
                let (op, measure, bound) = match (&**a, &**b) {
                    (ExpectCond::Measure(m), ExpectCond::Number(n)) => (*op, *m, n),
                    (ExpectCond::Number(n), ExpectCond::Measure(m)) => (op.flipped(), *m, n),
                    _ => continue,
                };
                let (Value::Int(bound), true) =
                    (bound, e.measures[measure as usize].measure.is_count())
                else {
                    continue;
                };
                let most = match op {
                    BinOp::Le | BinOp::Eq => *bound,
                    BinOp::Lt => bound - 1,
                    _ => continue,
                };
                if let Ok(most) = u64::try_from(most) {
                    out.push(Budget {
                        expect,
                        measure: measure as usize,
                        most,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// A condition judged on the measures of one pass.
struct Judge<'m> {
    measured: &'m [Measured],
    rows: u64,
}

/// A condition's value: a number, a Bool, or absent.
enum Judged {
    Number(Value),
    Bool(bool),
    Absent,
}

impl Judge<'_> {
    /// Does the condition hold? An absent one does.
    fn holds(&self, cond: &ExpectCond) -> bool {
        !matches!(self.eval(cond), Judged::Bool(false))
    }

    fn eval(&self, cond: &ExpectCond) -> Judged {
        match cond {
            ExpectCond::Measure(m) => match &self.measured[*m as usize] {
                Measured::Count(n) => Judged::Number(Value::Int(*n as i64)),
                Measured::Number(v) => Judged::Number(v.clone()),
                // An age is compared with a duration only (`ExpectCond::Age`).
                Measured::Age(_) | Measured::Absent => Judged::Absent,
            },
            ExpectCond::Number(v) => Judged::Number(v.clone()),
            ExpectCond::Bool(b) => Judged::Bool(*b),
            ExpectCond::Neg(a) => match self.eval(a) {
                Judged::Number(v) => ops::negate(v).map_or(Judged::Absent, Judged::Number),
                _ => Judged::Absent,
            },
            ExpectCond::Arith(op, a, b) => match (self.eval(a), self.eval(b)) {
                (Judged::Number(a), Judged::Number(b)) => {
                    ops::binary(*op, &a, &b).map_or(Judged::Absent, Judged::Number)
                }
                _ => Judged::Absent,
            },
            ExpectCond::Compare(op, a, b) => match (self.eval(a), self.eval(b)) {
                (Judged::Number(a), Judged::Number(b)) => match ops::binary(*op, &a, &b) {
                    Ok(Value::Bool(b)) => Judged::Bool(b),
                    _ => Judged::Absent,
                },
                (Judged::Bool(a), Judged::Bool(b)) => match op {
                    BinOp::Eq => Judged::Bool(a == b),
                    BinOp::Ne => Judged::Bool(a != b),
                    _ => Judged::Absent,
                },
                _ => Judged::Absent,
            },
            ExpectCond::Share { op, count, share } => match self.eval(count) {
                Judged::Number(Value::Int(n)) => {
                    Judged::Bool(share_holds(*op, n, *share, self.rows))
                }
                _ => Judged::Absent,
            },
            ExpectCond::Age {
                op,
                measure,
                seconds,
            } => match self.measured[*measure as usize] {
                Measured::Age(age) => {
                    let bound = i128::from(*seconds) * 1_000_000_000;
                    Judged::Bool(ordered(*op, age.cmp(&bound)))
                }
                _ => Judged::Absent,
            },
            ExpectCond::Not(a) => match self.eval(a) {
                Judged::Bool(b) => Judged::Bool(!b),
                _ => Judged::Absent,
            },
            ExpectCond::And(a, b) => self.logic(a, b, false),
            ExpectCond::Or(a, b) => self.logic(a, b, true),
        }
    }

    /// `and` (`or` with `any`), three-valued: a side that decides wins
    /// over an absent one.
    fn logic(&self, a: &ExpectCond, b: &ExpectCond, any: bool) -> Judged {
        let truth = |j: Judged| match j {
            Judged::Bool(b) => Some(b),
            _ => None,
        };
        match (truth(self.eval(a)), truth(self.eval(b))) {
            (Some(x), _) | (_, Some(x)) if x == any => Judged::Bool(any),
            (Some(_), Some(_)) => Judged::Bool(!any),
            _ => Judged::Absent,
        }
    }

    /// What was measured, for the message: counts (with their share of
    /// the rows when the condition bounds a share) and ages, never a
    /// value from the data (`min`, `max`, `sum`, `avg`).
    fn values(&self, e: &ExpectSpec) -> String {
        let shares = has_share(&e.cond);
        let parts: Vec<String> = (e.measures.iter().zip(self.measured))
            .filter_map(|(m, v)| match v {
                Measured::Count(n) if shares && !matches!(m.measure, Measure::Rows) => {
                    Some(format!(
                        "{} is {n} of {} rows ({})",
                        m.text,
                        self.rows,
                        percent(*n, self.rows)
                    ))
                }
                Measured::Count(n) => Some(format!("{} is {n}", m.text)),
                Measured::Age(age) => Some(format!("{} is {}", m.text, duration_text(*age))),
                _ => None,
            })
            .collect();
        match parts.is_empty() {
            true => String::new(),
            false => format!(" ({})", parts.join(", ")),
        }
    }
}

/// `count op share` of `rows`, exactly: `count * denom op numer * rows`.
fn share_holds(op: BinOp, count: i64, share: Share, rows: u64) -> bool {
    let left = i128::from(count) * share.denom;
    let right = share.numer * i128::from(rows);
    ordered(op, left.cmp(&right))
}

fn ordered(op: BinOp, o: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        BinOp::Lt => o == Less,
        BinOp::Le => o != Greater,
        BinOp::Gt => o == Greater,
        BinOp::Ge => o != Less,
        BinOp::Eq => o == Equal,
        BinOp::Ne => o != Equal,
        _ => false,
    }
}

fn has_share(c: &ExpectCond) -> bool {
    match c {
        ExpectCond::Share { .. } => true,
        ExpectCond::Not(a) | ExpectCond::Neg(a) => has_share(a),
        ExpectCond::And(a, b) | ExpectCond::Or(a, b) => has_share(a) || has_share(b),
        _ => false,
    }
}

/// `n` of `rows` as a percentage with at most two decimals (`12.5%`).
fn percent(n: u64, rows: u64) -> String {
    if rows == 0 {
        return "no rows".into();
    }
    let hundredths = (u128::from(n) * 10_000 + u128::from(rows) / 2) / u128::from(rows);
    let (whole, part) = (hundredths / 100, hundredths % 100);
    match part {
        0 => format!("{whole}%"),
        p if p % 10 == 0 => format!("{whole}.{}%", p / 10),
        p => format!("{whole}.{p:02}%"),
    }
}

/// An age as days, hours, minutes and seconds (`3d 4h 0m 12s` shortened
/// to the units from the largest that is not zero: `4h 0m 12s`).
fn duration_text(nanos: i128) -> String {
    let sign = if nanos < 0 { "-" } else { "" };
    let mut s = nanos.unsigned_abs() / 1_000_000_000;
    let mut parts = Vec::new();
    for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)] {
        let n = s / size;
        s %= size;
        if n > 0 || !parts.is_empty() || unit == "s" {
            parts.push(format!("{n}{unit}"));
        }
    }
    format!("{sign}{}", parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_to_two_decimals() {
        assert_eq!(percent(1, 20), "5%");
        assert_eq!(percent(1, 8), "12.5%");
        assert_eq!(percent(1, 3), "33.33%");
        assert_eq!(percent(0, 0), "no rows");
    }

    #[test]
    fn ages_read_in_days_hours_minutes_seconds() {
        let s = 1_000_000_000i128;
        assert_eq!(duration_text(0), "0s");
        assert_eq!(duration_text(59 * s), "59s");
        assert_eq!(duration_text((3 * 86_400 + 12) * s), "3d 0h 0m 12s");
        assert_eq!(duration_text(-3_600 * s), "-1h 0m 0s");
    }

    #[test]
    fn shares_compare_exactly() {
        let five = Share {
            numer: 5,
            denom: 100,
        };
        assert!(share_holds(BinOp::Le, 1, five, 20));
        assert!(!share_holds(BinOp::Lt, 1, five, 20));
        assert!(!share_holds(BinOp::Le, 2, five, 20));
    }

    /// A sum is exact until rounded once: the same values give the same
    /// double in any order, and sums of parts added together give what
    /// one pass gives.
    #[test]
    fn a_sum_is_the_same_in_any_order_and_in_parts() {
        let sum = |xs: &[f64]| {
            let mut s = super::Sum::default();
            xs.iter().for_each(|&x| s.add(x));
            s
        };
        assert_eq!(sum(&[1e16, 1.0, -1e16]).value(), 1.0);
        assert_eq!(sum(&[0.1, 0.2, 0.3]).value(), 0.6);
        assert_eq!(sum(&[]).value(), 0.0);
        // A generator of awkward doubles: wide exponents, both signs.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut values = Vec::new();
        for _ in 0..5000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mantissa = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            values.push(mantissa * 10f64.powi((state % 40) as i32 - 20));
        }
        let whole = sum(&values).value();
        let mut reversed = values.clone();
        reversed.reverse();
        assert_eq!(sum(&reversed).value(), whole);
        for cut in [1, 77, 2500, 4999] {
            let mut first = sum(&values[..cut]);
            first.add_sum(&sum(&values[cut..]));
            assert_eq!(first.value(), whole, "cut at {cut}");
        }
        let naive: f64 = values.iter().sum();
        assert!((naive - whole).abs() <= 1e-6 * whole.abs().max(1.0));
        let mut special = sum(&[1.0, f64::INFINITY]);
        assert_eq!(special.value(), f64::INFINITY);
        special.add(f64::NEG_INFINITY);
        assert!(special.value().is_nan());
    }
}
