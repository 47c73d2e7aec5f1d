//! Validating one value against a compiled contract (language.md §4.8) and
//! building failure records exactly as §4.9 fixes them.
//!
//! Input: a `Contract`, a value and its origin. Output: `ok(value)` carrying
//! its warnings, or `err(failure record)` with every failure collected.

use std::ops::Range;
use std::rc::Rc;

use smallvec::{smallvec, SmallVec};

use crate::runtime::contract::*;
use crate::runtime::decide::{self, FailureKind, Outcome};
use crate::runtime::eval::{
    push_frame, write_key, write_key_text, Env, Interp, Origin, Result, Slots,
};
use crate::runtime::json::write_json;
use crate::runtime::keyset::{Ascending, KeySet};
use crate::runtime::plan::{self, FieldStep, How, Judgement, LinePlan, RecordPlan};
use crate::runtime::value::{Key, Okay, Record, Value};
use crate::syntax::canonical::write_json_string;

/// One broken check, before it becomes a record.
struct Failure {
    rule: Rc<str>,
    kind: FailureKind,
    path: Option<String>,
    fields: Vec<Key>,
    message: String,
}

/// Keys claimed so far in one pass of a stream, one set per `unique` of
/// the contract, in its order. A key is its fields' values written by
/// `write_key`, whose bytes are equal exactly when the values are `==`
/// (§4.3): compact, and holding nothing of the records but the line of
/// the one that claimed it.
#[derive(Default)]
pub struct Uniques {
    seen: Vec<KeySet>,
    /// The keys of the record being checked, reused from record to record.
    current: Written,
    /// The line of the record being checked; 0 when it has none (a value
    /// made in the program) or no message will name it (`findings`).
    by: u64,
}

/// The keys of one record: their bytes back to back, and for each key
/// its set (its `unique`'s position) and bytes.
#[derive(Default)]
struct Written {
    bytes: Vec<u8>,
    keys: Vec<KeyEntry>,
}

/// One key of a record: its set (its `unique`'s position) and where its
/// bytes lie.
type KeyEntry = (usize, Range<usize>);

/// A declared field's value as a unique key reads it: a value, or the
/// text of a string the line check kept without building its value.
#[derive(Clone, Copy)]
pub enum KeyPart<'a> {
    Value(&'a Value),
    Text(&'a str),
}

/// Append to `bytes` the keys of a record whose declared fields are
/// `field(slot)`, each entered in `keys`; a key with an absent or null
/// field is left out (§4.4).
fn write_keys<'v>(
    bytes: &mut Vec<u8>,
    keys: &mut Vec<KeyEntry>,
    shape: &RecordShape,
    field: impl Fn(usize) -> KeyPart<'v>,
) {
    for (n, u) in shape.uniques.iter().enumerate() {
        let start = bytes.len();
        if write_key_of(bytes, &u.slots, &field) {
            keys.push((n, start..bytes.len()));
        }
    }
}

/// Append to `bytes` the key of one `unique` whose fields are at `slots`
/// of a record whose declared fields are `field(slot)`; `false`, nothing
/// appended, when a field is absent or null and the key is left out
/// (§4.4).
fn write_key_of<'v>(
    bytes: &mut Vec<u8>,
    slots: &[u32],
    field: &impl Fn(usize) -> KeyPart<'v>,
) -> bool {
    let start = bytes.len();
    for &s in slots {
        match field(s as usize) {
            KeyPart::Value(Value::Null | Value::Absent) => {
                bytes.truncate(start);
                return false;
            }
            KeyPart::Value(v) => write_key(v, bytes),
            KeyPart::Text(text) => write_key_text(text, bytes),
        }
    }
    true
}

/// The keys of one record, as step 6 of §4.8 settles them, and its line
/// (0 for none), which claims them.
#[derive(Clone, Copy)]
pub struct RecordKeys<'a> {
    bytes: &'a [u8],
    keys: &'a [KeyEntry],
    by: u64,
}

impl RecordKeys<'_> {
    /// Has the record no key (each left out for an absent or null field)?
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The positions of the keys `seen` holds already.
    fn taken(&self, seen: &[KeySet]) -> SmallVec<[usize; 2]> {
        self.keys
            .iter()
            .filter(|(n, key)| seen[*n].holds(&self.bytes[key.clone()]))
            .map(|&(n, ..)| n)
            .collect()
    }

    fn claim(&self, seen: &mut [KeySet]) {
        for (n, key) in self.keys {
            seen[*n].insert(&self.bytes[key.clone()], self.by);
        }
    }

    /// Start loading the slots where the keys' lookups begin.
    fn prefetch(&self, seen: &[KeySet]) {
        for (n, key) in self.keys {
            seen[*n].prefetch(&self.bytes[key.clone()]);
        }
    }

    /// Step 6 of §4.8: the positions of the keys already taken; when
    /// there is none, the keys are claimed. A single key is looked up and
    /// claimed in one probe.
    fn settle(&self, seen: &mut [KeySet]) -> SmallVec<[usize; 2]> {
        if let [(n, key)] = self.keys {
            if seen[*n].claim(&self.bytes[key.clone()], self.by) {
                return SmallVec::new();
            }
            return smallvec![*n];
        }
        let taken = self.taken(seen);
        if taken.is_empty() {
            self.claim(seen);
        }
        taken
    }
}

impl Written {
    /// Write the keys of a record whose declared fields are `field(slot)`.
    fn write<'v>(&mut self, shape: &RecordShape, field: impl Fn(usize) -> KeyPart<'v>) {
        self.bytes.clear();
        self.keys.clear();
        write_keys(&mut self.bytes, &mut self.keys, shape, field);
    }

    fn keys(&self, by: u64) -> RecordKeys<'_> {
        RecordKeys {
            bytes: &self.bytes,
            keys: &self.keys,
            by,
        }
    }
}

/// What a counter of a file's lines left for step 6 of §4.8 to settle, in
/// the order of the lines: the keys of each record the line check found
/// valid, and, from a worker counting a chunk, the text of each record
/// whose outcome its keys decide and the check could not judge (one that
/// warns, say). They are settled in the order of the file (`counting`).
///
/// Keys often come in order. While every record logged has at most one
/// key (its contract has one `unique`) and each key is greater than the
/// one before, the keys are kept as a batch the set takes whole
/// (`Ascending`) and no record is entered: settling them is then a copy
/// of their bytes when they lie above every key the set holds.
#[derive(Default)]
pub struct KeyLog {
    bytes: Vec<u8>,
    keys: Vec<KeyEntry>,
    texts: Vec<u8>,
    entries: Vec<Logged>,
    /// While `entries` is empty: the keys in order, and how many records
    /// had none (an absent or null field, §4.4).
    ascending: Ascending,
    keyless: usize,
}

/// One record of a `KeyLog`: its keys and line, or its text.
enum Logged {
    Keys(Range<usize>, u64),
    Line(Range<usize>),
}

/// A record of a `KeyLog`, as the calling thread settles it.
pub enum LoggedRecord<'a> {
    /// A record the line check found valid with no warnings: its keys.
    Keys(RecordKeys<'a>),
    /// A record to validate with the keys claimed so far: its line.
    Line(&'a [u8]),
}

impl KeyLog {
    /// Log the keys of a record of line `by` (0 where no message will
    /// name it) the line check found valid with no warnings, whose
    /// declared fields are `field(position)`. Has it a key? (A record
    /// with none is logged too, and settles to nothing.)
    pub fn keys<'v>(
        &mut self,
        shape: &RecordShape,
        field: impl Fn(usize) -> KeyPart<'v>,
        by: u64,
    ) -> bool {
        if let ([u], true) = (&shape.uniques[..], self.entries.is_empty()) {
            // Still in order: the key joins the batch, or the record has
            // none. (`bytes` holds nothing while the log is in order.)
            if !write_key_of(&mut self.bytes, &u.slots, &field) {
                self.keyless += 1;
                return false;
            }
            if self.ascending.push_above_taking(&mut self.bytes, by) {
                self.bytes.clear();
                return true;
            }
            // Out of order: the batch is entered first. The key's bytes
            // stay where they are: an entry finds them by their range.
            let key = 0..self.bytes.len();
            self.enter_ascending();
            self.keys.push((0, key));
            let at = self.keys.len() - 1;
            self.entries.push(Logged::Keys(at..at + 1, by));
            return true;
        }
        let first = self.keys.len();
        write_keys(&mut self.bytes, &mut self.keys, shape, field);
        self.entries.push(Logged::Keys(first..self.keys.len(), by));
        first < self.keys.len()
    }

    /// Log the keys of `ok`, a record of `shape` from line `by` found
    /// valid but for its keys (§4.8 step 6 not taken yet). Has it a key?
    pub fn keys_of(&mut self, shape: &RecordShape, ok: &Value, by: u64) -> bool {
        let Value::Record(r) = ok else {
            return false;
        };
        self.keys(shape, |s| KeyPart::Value(declared(r, shape, s)), by)
    }

    /// Log the line of a record whose keys decide its outcome.
    pub fn line(&mut self, text: &[u8]) {
        self.enter_ascending();
        let start = self.texts.len();
        self.texts.extend_from_slice(text);
        self.entries.push(Logged::Line(start..self.texts.len()));
    }

    /// Enter the records kept as a batch in order as records of their
    /// own, in their order, so that the next may be logged after them.
    fn enter_ascending(&mut self) {
        if !self.entries.is_empty() {
            return;
        }
        for _ in 0..std::mem::take(&mut self.keyless) {
            let at = self.keys.len();
            self.entries.push(Logged::Keys(at..at, 0));
        }
        let (bytes, keys, entries) = (&mut self.bytes, &mut self.keys, &mut self.entries);
        self.ascending.drain(|key, by| {
            let start = bytes.len();
            bytes.extend_from_slice(key);
            keys.push((0, start..bytes.len()));
            entries.push(Logged::Keys(keys.len() - 1..keys.len(), by));
        });
    }

    /// The records kept as a batch of keys in order, if the log holds
    /// nothing else: the keys, and how many records had none. Settling
    /// them claims those keys in their order.
    pub fn ascending(&mut self) -> Option<(&mut Ascending, usize)> {
        (self.entries.is_empty()).then_some((&mut self.ascending, self.keyless))
    }

    /// An empty log with room for as much as this one holds: a worker
    /// hands each chunk's log over whole, and its next chunk's log would
    /// otherwise grow, copied at each step, from nothing.
    pub fn with_room_of(&self) -> KeyLog {
        KeyLog {
            bytes: Vec::with_capacity(self.bytes.len()),
            keys: Vec::with_capacity(self.keys.len()),
            texts: Vec::with_capacity(self.texts.len()),
            entries: Vec::with_capacity(self.entries.len()),
            ascending: Ascending::default(),
            keyless: 0,
        }
    }

    /// The log emptied, its memory kept for the next records.
    pub fn cleared(mut self) -> KeyLog {
        self.bytes.clear();
        self.keys.clear();
        self.texts.clear();
        self.entries.clear();
        self.ascending.clear();
        self.keyless = 0;
        self
    }

    /// How many records are logged.
    pub fn len(&self) -> usize {
        self.entries.len() + self.ascending.len() + self.keyless
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`th record entered (none while the log holds a batch in
    /// order only, `ascending`).
    pub fn get(&self, i: usize) -> Option<LoggedRecord<'_>> {
        Some(match self.entries.get(i)? {
            Logged::Keys(keys, by) => LoggedRecord::Keys(RecordKeys {
                bytes: &self.bytes,
                keys: &self.keys[keys.clone()],
                by: *by,
            }),
            Logged::Line(text) => LoggedRecord::Line(&self.texts[text.clone()]),
        })
    }
}

/// Validate `value` against `c`: `ok` (with warnings) or `err` (§4.8).
/// `ok(v)` validates `v`; an `err` passes through unchanged.
pub fn validate_value(
    interp: &Rc<Interp>,
    c: &Rc<Contract>,
    value: Value,
    origin: Option<&Origin>,
    uniques: Option<&mut Uniques>,
) -> Result<Value> {
    let value = match value {
        Value::Ok(ok) => ok.value.clone(),
        err @ Value::Err(_) => return Ok(err),
        v => v,
    };
    let uniques = uniques.map(|u| u.at(origin));
    let (run, checked) = Run::contract(interp, c, &value, uniques, true)?;
    Ok(result(c, origin, value, run, checked))
}

/// `validate_value` with every scalar judged by the types the plan was
/// compiled from, not by the plan: the test that holds the two together.
#[cfg(test)]
pub fn validate_unplanned(interp: &Rc<Interp>, c: &Rc<Contract>, value: Value) -> Result<Value> {
    let (run, checked) = Run::contract(interp, c, &value, None, false)?;
    Ok(result(c, None, value, run, checked))
}

/// `ok` of the checked value with its warnings, or `err` of the failure
/// record.
fn result(c: &Contract, origin: Option<&Origin>, value: Value, run: Run, checked: Value) -> Value {
    if run.failures.is_empty() {
        let warnings = run
            .warnings
            .into_iter()
            .map(|w| failure_value(w, "warning"))
            .collect();
        return Value::Ok(Rc::new(Okay {
            value: checked,
            warnings,
        }));
    }
    Value::err(failure_record(c, origin, value, run.failures))
}

/// The rule and kind of each failure validating a value finds, in order,
/// and of each warning when there is no failure (`validate_value` without
/// building its result, for `report()`).
#[derive(Debug, Default)]
pub struct Findings {
    pub failures: Vec<(Rc<str>, FailureKind)>,
    pub warnings: Vec<(Rc<str>, FailureKind)>,
}

pub fn findings(interp: &Rc<Interp>, c: &Rc<Contract>, value: &Value) -> Result<Findings> {
    findings_keyed(interp, c, value, None)
}

/// `findings`, with the contract's unique keys claimed in `uniques`.
pub fn findings_keyed(
    interp: &Rc<Interp>,
    c: &Rc<Contract>,
    value: &Value,
    uniques: Option<&mut Uniques>,
) -> Result<Findings> {
    let (run, _) = Run::contract(interp, c, value, uniques, true)?;
    let pairs = |fs: &[Failure]| fs.iter().map(|f| (f.rule.clone(), f.kind)).collect();
    let warnings = match run.failures.is_empty() {
        true => pairs(&run.warnings),
        false => Vec::new(),
    };
    Ok(Findings {
        failures: pairs(&run.failures),
        warnings,
    })
}

/// What step 3 of §4.8 made of one field's value.
pub enum Checked {
    /// It passed, with nested defaults filled.
    Clean(Value),
    /// It passed with warnings.
    Warned,
    Failed,
}

/// Step 3 of §4.8 for the value of field `f` of a record, for callers that
/// check a record field by field (`crate::runtime::scan`).
pub fn check_field(interp: &Rc<Interp>, f: &FieldSpec, v: Value) -> Result<Checked> {
    let mut run = Run {
        interp,
        failures: Vec::new(),
        warnings: Vec::new(),
        planned: true,
    };
    let changed = run.field(f, None, Some(&v), None)?;
    Ok(if !run.failures.is_empty() {
        Checked::Failed
    } else if !run.warnings.is_empty() {
        Checked::Warned
    } else {
        Checked::Clean(changed.unwrap_or(v))
    })
}

/// The rule and kind of each failure step 3 of §4.8 finds in the value
/// `v` of field `f` (the checker puts a field's default through it).
pub fn field_findings(
    interp: &Rc<Interp>,
    f: &FieldSpec,
    v: Value,
) -> Result<Vec<(Rc<str>, FailureKind)>> {
    let mut run = Run {
        interp,
        failures: Vec::new(),
        warnings: Vec::new(),
        planned: true,
    };
    run.field(f, None, Some(&v), None)?;
    Ok(run
        .failures
        .iter()
        .map(|f| (f.rule.clone(), f.kind))
        .collect())
}

struct Run<'a> {
    interp: &'a Rc<Interp>,
    failures: Vec<Failure>,
    warnings: Vec<Failure>,
    /// Are scalars judged by the contract's plan (`plan::Tokens::judge`)?
    /// Always, but in the test that holds the plan to the types it was
    /// compiled from.
    planned: bool,
}

/// The path of a map's value: `m.key`, or `m["odd key"]` when the key is
/// not a name.
fn key_path(path: &str, key: &str) -> String {
    if crate::syntax::canonical::is_identifier(key) {
        join_path(Some(path), key)
    } else {
        let mut quoted = String::new();
        crate::syntax::canonical::write_json_string(&mut quoted, key);
        format!("{path}[{quoted}]")
    }
}

fn join_path(prefix: Option<&str>, field: &str) -> String {
    match prefix {
        Some(p) if !p.is_empty() => format!("{p}.{field}"),
        _ => field.to_string(),
    }
}

impl<'a> Run<'a> {
    /// Validate `value` against `c`: the run's findings and the value with
    /// defaults filled.
    fn contract(
        interp: &'a Rc<Interp>,
        c: &Contract,
        value: &Value,
        uniques: Option<&mut Uniques>,
        planned: bool,
    ) -> Result<(Run<'a>, Value)> {
        let mut run = Run {
            interp,
            failures: Vec::new(),
            warnings: Vec::new(),
            planned,
        };
        let checked = match &c.shape {
            Shape::Record { record, .. } => run.top_record(c, record, value, uniques)?,
            Shape::Refined { .. } => {
                run.named(c, None, value, None, &no_field(), None)?;
                value.clone()
            }
        };
        Ok((run, checked))
    }

    fn top_record(
        &mut self,
        c: &Contract,
        shape: &RecordShape,
        value: &Value,
        uniques: Option<&mut Uniques>,
    ) -> Result<Value> {
        let Value::Record(_) = value else {
            self.failures.push(Failure {
                rule: decide::not_record_id(&c.name),
                kind: FailureKind::NotRecord,
                path: None,
                fields: vec![],
                message: format!("{} expects a record, not {}", c.name, value.kind_article()),
            });
            return Ok(value.clone());
        };
        let plan = LinePlan::kept(c, self.interp).as_ref();
        let top = plan.filter(|_| self.planned).map(|p| &p.top);
        let (filled, env) = self.record(&c.name, shape, top, value, None)?;
        if self.failures.is_empty() {
            if let (Some(u), Some(frame)) = (uniques, &env) {
                self.uniques(&c.name, shape, &frame.slots, u);
            }
        }
        if decide::warns(self.failures.len()) {
            self.rules(&shape.warns, Some(shape), &env, &[], None, None);
        }
        Ok(filled)
    }

    /// Steps 2–5 for a record: defaults, fields, extras, require rules.
    /// Returns the record with defaults and the rules' frame: `self`, then
    /// each declared field's value (absent when missing).
    fn record(
        &mut self,
        owner: &str,
        shape: &RecordShape,
        plan: Option<&RecordPlan>,
        value: &Value,
        path: Option<&str>,
    ) -> Result<(Value, Env)> {
        let filled = self.fill_defaults(shape, value)?;
        let Value::Record(r) = &filled else {
            return Ok((filled, None));
        };
        // Which fields failed; allocated only when one does.
        let mut failed: Vec<bool> = Vec::new();
        let mut slots = Vec::with_capacity(shape.fields.len() + 1);
        slots.push(Value::Null);
        let mut changes: Vec<(Key, Value)> = Vec::new();
        for (i, field) in shape.fields.iter().enumerate() {
            let mark = self.failures.len();
            let v = lookup(r, i, &field.name);
            let step = plan.map(|p| &p.fields[i]);
            let changed = self.field(field, step, v, path)?;
            if self.failures.len() > mark {
                failed.resize(shape.fields.len(), false);
                failed[i] = true;
            }
            slots.push(
                changed
                    .clone()
                    .or_else(|| v.cloned())
                    .unwrap_or(Value::Absent),
            );
            if let Some(new) = changed {
                changes.push((field.name.clone(), new));
            }
        }
        if !shape.open {
            self.extras(owner, shape, r, path);
        }
        let filled = if changes.is_empty() {
            filled.clone()
        } else {
            let mut rebuilt = (**r).clone();
            rebuilt.extend(changes);
            Value::record(rebuilt)
        };
        slots[0] = filled.clone();
        // One frame serves every rule of the record.
        let env = push_frame(&None, Slots::from_vec(slots));
        self.rules(&shape.rules, Some(shape), &env, &failed, path, None);
        Ok((filled, env))
    }

    fn fill_defaults(&mut self, shape: &RecordShape, value: &Value) -> Result<Value> {
        let Value::Record(r) = value else {
            return Ok(value.clone());
        };
        let absent = |f: &&FieldSpec| f.default.is_some() && !r.contains_key(&f.name);
        if !shape.fields.iter().any(|f| absent(&f)) {
            return Ok(value.clone());
        }
        let mut filled = (**r).clone();
        for f in shape.fields.iter().filter(absent) {
            if let Some(d) = &f.default {
                filled.insert(f.name.clone(), self.interp.eval(d, &None)?.stored());
            }
        }
        Ok(Value::record(filled))
    }

    /// Step 3 for one field: missing, null, type, then its checks. Returns
    /// the field's value when nested defaults changed it.
    fn field(
        &mut self,
        f: &FieldSpec,
        step: Option<&FieldStep>,
        v: Option<&Value>,
        prefix: Option<&str>,
    ) -> Result<Option<Value>> {
        // The common case — a scalar of the right type, no checks — needs
        // no path; build it only when there is more to do.
        if let Some(v) = v {
            let admitted = match step.map(|s| &s.how) {
                Some(How::Tokens(tokens)) if !matches!(v, Value::Null) => {
                    matches!(tokens.judge(v), Judgement::Admitted)
                }
                _ => f.checks.is_empty() && is_plain(&f.ty) && type_matches(&f.ty, v),
            };
            if admitted {
                return Ok(None);
            }
        }
        let path = join_path(prefix, &f.name);
        match v {
            None if f.optional => {}
            None => self.fail(
                &f.ids.missing,
                FailureKind::Missing,
                &path,
                &f.name,
                format!("required field {path} ({}) is missing", f.ty.describe()),
            ),
            Some(Value::Null) if f.ty.admits_null() => {}
            Some(Value::Null) => self.fail(
                &f.ids.null,
                FailureKind::Null,
                &path,
                &f.name,
                format!("field {path} is null; expected {}", f.ty.describe()),
            ),
            Some(v) => {
                let mark = self.failures.len();
                let how = step.map(|s| &s.how);
                let changed = self.value(&f.ty, how, v, &path, &f.ids, &f.name)?;
                if self.failures.len() == mark {
                    self.checks(f, v, &path)?;
                }
                return Ok(changed);
            }
        }
        Ok(None)
    }

    fn fail(
        &mut self,
        rule: &Rc<str>,
        kind: FailureKind,
        path: &str,
        field: &Key,
        message: String,
    ) {
        self.failures.push(Failure {
            rule: rule.clone(),
            kind,
            path: failure_path(Some(path)),
            fields: field_list(field),
            message,
        });
    }

    /// Does `v` have type `spec`? Type failures name `ids.type_`. Returns
    /// the value with nested records' defaults filled, when that changed it.
    fn value(
        &mut self,
        spec: &TypeSpec,
        how: Option<&How>,
        v: &Value,
        path: &str,
        ids: &FieldIds,
        field: &Key,
    ) -> Result<Option<Value>> {
        let type_failure = |run: &mut Self| {
            run.fail(
                &ids.type_,
                FailureKind::Type,
                path,
                field,
                format!("{} must be {}", subject(path), spec.describe()),
            );
        };
        if let (Some(How::Tokens(tokens)), false) = (how, matches!(v, Value::Null)) {
            // A scalar: the plan's decision, as the token walker takes it.
            match tokens.judge(v) {
                Judgement::Admitted => {}
                Judgement::WrongType => self.fail(
                    &ids.type_,
                    FailureKind::Type,
                    path,
                    field,
                    format!("{} must be {}", subject(path), plan::type_text(spec)),
                ),
                Judgement::Breaks(rules) => {
                    for (rule, message) in rules {
                        self.fail(rule, FailureKind::Require, path, field, message.to_string());
                    }
                }
            }
            return Ok(None);
        }
        let nested = match how {
            Some(How::Record(plan)) => Some(&**plan),
            _ => None,
        };
        match spec {
            TypeSpec::List(elem) => match v {
                Value::List(items) => {
                    let elements = match how {
                        Some(How::List(elements)) => Some(&elements.how),
                        _ => None,
                    };
                    let mut changed: Vec<(usize, Value)> = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        if let Some(new) =
                            self.value(elem, elements, item, &format!("{path}[{i}]"), ids, field)?
                        {
                            changed.push((i, new));
                        }
                    }
                    if !changed.is_empty() {
                        let mut rebuilt = (**items).clone();
                        for (i, new) in changed {
                            rebuilt[i] = new;
                        }
                        return Ok(Some(Value::list(rebuilt)));
                    }
                }
                _ => type_failure(self),
            },
            TypeSpec::Map(elem) => match v {
                Value::Record(r) => {
                    let mut changed: Vec<(Key, Value)> = Vec::new();
                    for (k, item) in r.iter() {
                        let at = key_path(path, k);
                        if let Some(new) = self.value(elem, None, item, &at, ids, field)? {
                            changed.push((k.clone(), new));
                        }
                    }
                    if !changed.is_empty() {
                        let mut rebuilt = (**r).clone();
                        rebuilt.extend(changed);
                        return Ok(Some(Value::record(rebuilt)));
                    }
                }
                _ => type_failure(self),
            },
            TypeSpec::Record(shape) => match v {
                Value::Record(_) => {
                    let owner = ids
                        .type_
                        .strip_suffix(".type")
                        .unwrap_or(&ids.type_)
                        .to_string();
                    let (filled, _) = self.record(&owner, shape, nested, v, Some(path))?;
                    return Ok(replaced(v, filled));
                }
                _ => type_failure(self),
            },
            TypeSpec::Named(cell) => {
                if let Some(c) = cell.get() {
                    if let Shape::Refined { base, rules, .. } = &c.shape {
                        if rules.is_empty() {
                            // An alias is another name for its type: the
                            // field's own identities apply.
                            return self.value(base, how, v, path, ids, field);
                        }
                    }
                    if c.record().is_some() && !matches!(v, Value::Record(_)) {
                        type_failure(self);
                    } else {
                        return self.named(c, nested, v, Some(path), field, Some(ids));
                    }
                }
            }
            TypeSpec::Union(members) => match members.iter().find(|m| type_matches(m, v)) {
                Some(m) => return self.value(m, None, v, path, ids, field),
                None => type_failure(self),
            },
            _ if type_matches(spec, v) => {}
            _ => type_failure(self),
        }
        Ok(None)
    }

    /// A value of a declared type: its own fields and rules, or its
    /// refinement's base and rules. In a field (`field_ids`), a value
    /// whose base type is wrong fails as the field (`T.email.type`), on its
    /// own as the refinement (`Email.type`, language.md §4.7).
    fn named(
        &mut self,
        c: &Contract,
        plan: Option<&RecordPlan>,
        v: &Value,
        path: Option<&str>,
        field: &Key,
        field_ids: Option<&FieldIds>,
    ) -> Result<Option<Value>> {
        match &c.shape {
            Shape::Record { record, .. } => {
                let (filled, env) = self.record(&c.name, record, plan, v, path)?;
                if decide::warns(self.failures.len()) {
                    self.rules(&record.warns, Some(record), &env, &[], path, None);
                }
                Ok(replaced(v, filled))
            }
            Shape::Refined { base, rules, ids } => {
                let ids = field_ids.unwrap_or(ids);
                let mark = self.failures.len();
                let shown = path.unwrap_or("");
                let mut changed = None;
                if matches!(
                    base,
                    TypeSpec::Named(_)
                        | TypeSpec::Union(_)
                        | TypeSpec::List(_)
                        | TypeSpec::Map(_)
                        | TypeSpec::Record(_)
                ) {
                    changed = self.value(base, None, v, shown, ids, field)?;
                } else if !type_matches(base, v) {
                    self.failures.push(Failure {
                        rule: ids.type_.clone(),
                        kind: FailureKind::Type,
                        path: failure_path(path),
                        fields: field_list(field),
                        message: format!(
                            "{} must be {} ({})",
                            subject(shown),
                            c.name,
                            base.describe()
                        ),
                    });
                }
                if self.failures.len() == mark {
                    let value = changed.clone().unwrap_or_else(|| v.clone());
                    let env = push_frame(&None, smallvec![value]);
                    self.rules(rules, None, &env, &[], path, Some(field));
                }
                Ok(changed)
            }
        }
    }

    /// Evaluate a rule in a frame: None when it holds, else (kind, message).
    fn rule_outcome(
        &mut self,
        rule: &RuleSpec,
        record: Option<&RecordShape>,
        env: &Env,
    ) -> Option<(FailureKind, String)> {
        let outcome = decide::compiled_outcome(self.interp, rule, record, env);
        let kind = outcome.kind(rule)?;
        let message = match outcome {
            Outcome::Holds => return None,
            Outcome::Broken => rule
                .message
                .clone()
                .unwrap_or_else(|| format!("rule {} does not hold", rule.id)),
            Outcome::NotBool(value) => format!("rule {} gave {value}, not a Bool", rule.id),
            Outcome::Raised(e) => {
                format!("rule {} could not be evaluated: {}", rule.id, e.message)
            }
        };
        Some((kind, message))
    }

    /// Steps 5 and 7: rules over the whole record, skipping those that read
    /// a field which already failed. A refinement's rules name the field
    /// they were checked at (`field`) instead of the fields they read.
    fn rules(
        &mut self,
        rules: &[RuleSpec],
        record: Option<&RecordShape>,
        env: &Env,
        failed: &[bool],
        path: Option<&str>,
        field: Option<&Key>,
    ) {
        for rule in rules {
            if decide::skipped(rule, failed) {
                continue;
            }
            if let Some((kind, mut message)) = self.rule_outcome(rule, record, env) {
                // A refinement's rule that raised at a field says which
                // (a broken rule's message is only `rule … does not hold`,
                // §4.9: the field is the failure's path).
                let raised = kind == FailureKind::Eval;
                if let (true, Some(_), Some(p)) = (raised, field, path.filter(|p| !p.is_empty())) {
                    message = format!("{message} (field {p})");
                }
                let failure = Failure {
                    rule: rule.id.clone(),
                    kind,
                    path: failure_path(path),
                    fields: field.map(field_list).unwrap_or_else(|| rule.fields.clone()),
                    message,
                };
                if rule.severity == crate::syntax::ast::Severity::Warn {
                    self.warnings.push(failure);
                } else {
                    self.failures.push(failure);
                }
            }
        }
    }

    /// `validate field with f`: skipped when the field is absent or null.
    fn checks(&mut self, f: &FieldSpec, v: &Value, path: &str) -> Result<()> {
        if matches!(v, Value::Null) {
            return Ok(());
        }
        for check in &f.checks {
            let func = self.interp.eval(&check.func, &None)?;
            let (kind, message) = match self.interp.call(&func, smallvec![v.clone()]) {
                Ok(Value::Bool(true)) => continue,
                Ok(_) => (
                    FailureKind::Check,
                    format!("field {path} fails check {}", check.func_name),
                ),
                Err(e) => (
                    FailureKind::Eval,
                    format!(
                        "check {} on field {path} could not run: {}",
                        check.func_name, e.message
                    ),
                ),
            };
            self.failures.push(Failure {
                rule: check.id.clone(),
                kind,
                path: Some(path.to_string()),
                fields: vec![f.name.clone()],
                message,
            });
        }
        Ok(())
    }

    fn extras(&mut self, owner: &str, shape: &RecordShape, r: &Record, prefix: Option<&str>) {
        for key in r.keys().filter(|k| !shape.index.contains_key(*k)) {
            let path = join_path(prefix, key);
            self.failures.push(Failure {
                rule: decide::extra_id(owner, key),
                kind: FailureKind::Extra,
                path: Some(path.clone()),
                fields: vec![key.clone()],
                message: format!("field {path} is not declared in {owner}"),
            });
        }
    }

    /// Step 6: a record claims its keys only when every key is free, so
    /// a record rejected for one key claims none of the others.
    fn uniques(&mut self, owner: &str, shape: &RecordShape, slots: &[Value], state: &mut Uniques) {
        let taken = state.look_up(shape, |s| &slots[s + 1]);
        for n in taken {
            let u = &shape.uniques[n];
            let fields: Vec<Key> = u
                .slots
                .iter()
                .map(|&s| shape.fields[s as usize].name.clone())
                .collect();
            let names = fields.iter().map(|f| &**f).collect::<Vec<_>>().join(", ");
            let by = match state.claimer(n) {
                Some(line @ 1..) => format!("the record at line {line}"),
                _ => "an earlier record".to_string(),
            };
            self.failures.push(Failure {
                rule: u.id.clone(),
                kind: FailureKind::Unique,
                path: None,
                fields,
                message: format!("the key ({names}) of {owner} was already taken by {by}"),
            });
        }
        if self.failures.is_empty() {
            state.claim();
        }
    }
}

impl Uniques {
    /// Write the keys of a record whose declared fields are `field(slot)`
    /// and look each up: the positions in `shape.uniques` of the keys
    /// already taken. `claim` claims the others.
    fn look_up<'v>(
        &mut self,
        shape: &RecordShape,
        field: impl Fn(usize) -> &'v Value,
    ) -> SmallVec<[usize; 2]> {
        self.sets(shape);
        self.current.write(shape, |s| KeyPart::Value(field(s)));
        self.current.keys(self.by).taken(&self.seen)
    }

    /// Claim the keys of the record `look_up` looked up.
    fn claim(&mut self) {
        self.current.keys(self.by).claim(&mut self.seen);
    }

    /// The line of the record that claimed the key in set `n` of the
    /// record `look_up` looked up.
    fn claimer(&self, n: usize) -> Option<u64> {
        let keys = self.current.keys(self.by);
        let (_, key) = keys.keys.iter().find(|(set, _)| *set == n)?;
        self.seen[n].claimer(&keys.bytes[key.clone()])
    }

    /// The state for a record from `origin`, whose keys, if it claims
    /// them, a later record's message names by its line.
    fn at(&mut self, origin: Option<&Origin>) -> &mut Uniques {
        self.by = origin.map_or(0, |o| o.line);
        self
    }

    fn sets(&mut self, shape: &RecordShape) {
        if self.seen.len() < shape.uniques.len() {
            self.seen.resize_with(shape.uniques.len(), Default::default);
        }
    }

    /// Would fetching keys' places ahead (`prefetch`) do anything? Not
    /// while every key so far came above the keys before it.
    pub fn fetches_ahead(&self) -> bool {
        self.seen.iter().any(KeySet::fetches_ahead)
    }

    /// Start loading the slots where the lookups of `keys` (of a record
    /// of `shape`) begin.
    #[inline]
    pub fn prefetch(&mut self, shape: &RecordShape, keys: RecordKeys<'_>) {
        self.sets(shape);
        keys.prefetch(&self.seen);
    }

    /// Claim a batch of keys in order, of a contract with one `unique`,
    /// whole: when they all lie above every key claimed so far, every
    /// record of the batch is new and its key claimed. Were they? (The
    /// batch is then empty.)
    pub fn append(&mut self, shape: &RecordShape, keys: &mut Ascending) -> bool {
        self.sets(shape);
        self.seen[0].append(keys)
    }

    /// `settle_keys` for a record of line `by` of a contract with one
    /// `unique`, whose key is `key`.
    pub fn settle_key(&mut self, shape: &RecordShape, key: &[u8], by: u64) -> SmallVec<[usize; 2]> {
        let keys = [(0, 0..key.len())];
        let keys = RecordKeys {
            bytes: key,
            keys: &keys,
            by,
        };
        self.settle_keys(shape, keys)
    }

    /// Step 6 of §4.8 for a record of `shape` whose keys are `keys`: the
    /// positions in `shape.uniques` of its keys already taken (`unique`
    /// failures, in the contract's order); when there is none, its keys
    /// are claimed.
    #[inline]
    pub fn settle_keys(
        &mut self,
        shape: &RecordShape,
        keys: RecordKeys<'_>,
    ) -> SmallVec<[usize; 2]> {
        self.sets(shape);
        keys.settle(&mut self.seen)
    }
}

/// Step 6 of §4.8 for `ok` of a record the line check found valid with
/// no warnings: the same `ok` when its keys are free (they are claimed),
/// else what `validate_value` makes of it.
pub fn claim_keys(
    interp: &Rc<Interp>,
    c: &Rc<Contract>,
    checked: Value,
    origin: Option<&Origin>,
    uniques: &mut Uniques,
) -> Result<Value> {
    let (Value::Ok(ok), Some(shape)) = (&checked, c.record()) else {
        return validate_value(interp, c, checked, origin, Some(uniques));
    };
    let Value::Record(r) = &ok.value else {
        return validate_value(interp, c, checked, origin, Some(uniques));
    };
    let uniques = uniques.at(origin);
    let taken = uniques.look_up(shape, |s| declared(r, shape, s));
    if !taken.is_empty() {
        return validate_value(interp, c, checked, origin, Some(uniques));
    }
    uniques.claim();
    Ok(checked)
}

/// The value of `r`'s declared field `slot` of `shape` (absent if missing).
fn declared<'r>(r: &'r Record, shape: &RecordShape, slot: usize) -> &'r Value {
    lookup(r, slot, &shape.fields[slot].name).unwrap_or(&Value::Absent)
}

/// The value of field `name`, which usually stands at position `hint`
/// (records of one source tend to keep one order): no hashing then.
fn lookup<'r>(r: &'r Record, hint: usize, name: &Key) -> Option<&'r Value> {
    match r.get_index(hint) {
        Some((k, v)) if Rc::ptr_eq(k, name) || **k == **name => Some(v),
        _ => r.get(name),
    }
}

/// A type whose values are checked by their shape alone: no nested record,
/// no rules.
fn is_plain(spec: &TypeSpec) -> bool {
    match spec {
        TypeSpec::Any
        | TypeSpec::Null
        | TypeSpec::Bool
        | TypeSpec::Int
        | TypeSpec::Float
        | TypeSpec::String => true,
        TypeSpec::Literal(_) => true,
        TypeSpec::Union(ms) => ms.iter().all(is_plain),
        _ => false,
    }
}

/// A failure's `path`: `null` for the whole value (§4.9), which is where
/// a value validated on its own, or through a union or an alias, stands.
fn failure_path(path: Option<&str>) -> Option<String> {
    path.filter(|p| !p.is_empty()).map(str::to_string)
}

/// How a message names the value at `path`.
fn subject(path: &str) -> String {
    if path.is_empty() {
        "the value".to_string()
    } else {
        format!("field {path}")
    }
}

/// `Some(new)` when validating made a new value (defaults were filled).
fn replaced(old: &Value, new: Value) -> Option<Value> {
    match (old, &new) {
        (Value::Record(a), Value::Record(b)) if Rc::ptr_eq(a, b) => None,
        _ => Some(new),
    }
}

thread_local! {
    static NO_FIELD: Key = Key::from("");
}

/// The empty field name: a value validated on its own is in no field.
fn no_field() -> Key {
    NO_FIELD.with(Key::clone)
}

fn field_list(field: &Key) -> Vec<Key> {
    if field.is_empty() {
        vec![]
    } else {
        vec![field.clone()]
    }
}

/// Structural match only (no rules): for defaults and union members.
pub fn type_matches(spec: &TypeSpec, v: &Value) -> bool {
    match spec {
        TypeSpec::Any => true,
        TypeSpec::Null => matches!(v, Value::Null),
        TypeSpec::Bool => matches!(v, Value::Bool(_)),
        TypeSpec::Int => v.is_int(),
        TypeSpec::Float => v.is_number(),
        TypeSpec::String => matches!(v, Value::Str(_)),
        TypeSpec::List(t) => {
            matches!(v, Value::List(items) if items.iter().all(|i| type_matches(t, i)))
        }
        TypeSpec::Map(t) => matches!(v, Value::Record(r) if r.values().all(|i| type_matches(t, i))),
        TypeSpec::Record(shape) => record_matches(shape, v),
        TypeSpec::Union(ms) => ms.iter().any(|m| type_matches(m, v)),
        TypeSpec::Literal(l) => crate::runtime::eval::equal(l, v),
        TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
            Some(Shape::Record { record, .. }) => record_matches(record, v),
            Some(Shape::Refined { base, .. }) => type_matches(base, v),
            None => true,
        },
    }
}

fn record_matches(shape: &RecordShape, v: &Value) -> bool {
    let Value::Record(r) = v else { return false };
    let fields_ok = shape.fields.iter().all(|f| match r.get(&f.name) {
        None => f.optional || f.default.is_some(),
        Some(v) => type_matches(&f.ty, v),
    });
    fields_ok && (shape.open || r.keys().all(|k| shape.index.contains_key(k)))
}

// ---------------------------------------------------------- failure records

fn failure_value(f: Failure, severity: &str) -> Value {
    let fields = f.fields.iter().map(|k| Value::str(&**k)).collect();
    record_of(
        &FAILURE_KEYS,
        [
            Value::str(&*f.rule),
            Value::str(f.kind.name()),
            f.path.map(Value::str).unwrap_or(Value::Null),
            Value::list(fields),
            Value::str(severity),
            Value::str(f.message),
        ],
    )
}

fn envelope(
    ty: Value,
    version: Value,
    origin: Option<&Origin>,
    input: Value,
    failures: Vec<Value>,
) -> Value {
    let origin = origin.map(Origin::to_value).unwrap_or(Value::Null);
    record_of(
        &ENVELOPE_KEYS,
        [ty, version, origin, input, Value::list(failures)],
    )
}

thread_local! {
    /// The fields of a failure record and of each failure in it (§4.9),
    /// in their order: made once, shared by every failure record.
    static ENVELOPE_KEYS: [Key; 5] = ["type", "version", "origin", "input", "failures"].map(Key::from);
    static FAILURE_KEYS: [Key; 6] =
        ["rule", "kind", "path", "fields", "severity", "message"].map(Key::from);
}

/// A record of `keys` (distinct) and `values`, in order.
fn record_of<const N: usize>(
    keys: &'static std::thread::LocalKey<[Key; N]>,
    values: [Value; N],
) -> Value {
    keys.with(|keys| Value::record(Record::from_distinct(keys.iter().cloned().zip(values))))
}

/// The JSON text `write_json` writes for the failure record of `c` that
/// `failure_record` builds, from the JSON texts of its input and of each
/// of its failures: for a writer that has those texts already.
pub fn write_failure_record_json(
    out: &mut Vec<u8>,
    c: &Contract,
    origin: &Origin,
    input: &[u8],
    failures: &[u8],
) {
    let (ty, version) = type_and_version(c);
    let keys = ENVELOPE_KEYS.with(Clone::clone);
    let [.., input_key, failures_key] = &keys;
    let key = |text: &mut String, key: &str| {
        write_json_string(text, key);
        text.push(':');
    };
    let mut text = String::with_capacity(96);
    for (i, (k, value)) in keys
        .iter()
        .zip([ty, version, origin.to_value()])
        .enumerate()
    {
        text.push(if i == 0 { '{' } else { ',' });
        key(&mut text, k);
        write_json(&mut text, &value);
    }
    text.push(',');
    key(&mut text, input_key);
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(input);
    text.clear();
    text.push(',');
    key(&mut text, failures_key);
    text.push('[');
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(failures);
    out.extend_from_slice(b"]}");
}

/// The `type` and `version` of a failure record of `c`.
fn type_and_version(c: &Contract) -> (Value, Value) {
    let version = c.version.as_deref().map(Value::str).unwrap_or(Value::Null);
    (Value::str(&c.name), version)
}

fn failure_record(
    c: &Contract,
    origin: Option<&Origin>,
    input: Value,
    failures: Vec<Failure>,
) -> Value {
    let (ty, version) = type_and_version(c);
    let failures = failures
        .into_iter()
        .map(|f| failure_value(f, "error"))
        .collect();
    envelope(ty, version, origin, input, failures)
}

/// The rule and the kind of the failure of an input that does not decode.
pub const DECODE: &str = "decode";

/// The `err` a source yields for a line that does not decode (§4.9).
pub fn decode_failure(origin: &Origin, raw: String, message: String) -> Value {
    let message = format!("line {} is not valid JSON: {message}", origin.line);
    undecodable(origin, raw, message)
}

/// The `err` of a record that did not decode, with the whole message
/// (`decode_failure` words it for JSON).
pub fn undecodable(origin: &Origin, raw: String, message: String) -> Value {
    undecodable_input(origin, Value::str(raw), message)
}

/// The `err` of a record that did not decode, its `input` what was read
/// of it (a SQLite row's cells, one with no HQL value as text).
pub fn undecodable_input(origin: &Origin, input: Value, message: String) -> Value {
    let failure = Failure {
        rule: DECODE.into(),
        kind: FailureKind::Decode,
        path: None,
        fields: vec![],
        message,
    };
    Value::err(envelope(
        Value::Null,
        Value::Null,
        Some(origin),
        input,
        vec![failure_value(failure, "error")],
    ))
}

/// The `err` payload of a record a table target set aside because its
/// shape drifted from the table's (kind `schema_drift`): one failure per
/// drifting column, `(rule, column, message)`.
pub fn schema_drift_failure(
    contract: Option<&Contract>,
    origin: Option<&Origin>,
    input: Value,
    columns: Vec<(String, Key, String)>,
) -> Value {
    let failures = columns
        .into_iter()
        .map(|(rule, column, message)| {
            let failure = Failure {
                rule: rule.into(),
                kind: FailureKind::SchemaDrift,
                path: Some(column.to_string()),
                fields: vec![column],
                message,
            };
            failure_value(failure, "error")
        })
        .collect();
    let (ty, version) = match contract {
        Some(c) => (
            Value::str(&c.name),
            c.version.as_deref().map(Value::str).unwrap_or(Value::Null),
        ),
        None => (Value::Null, Value::Null),
    };
    envelope(ty, version, origin, input, failures)
}

/// A failure record whose `input` is `received` (a CSV row's text cells,
/// not their conversions).
pub fn with_input(failure: &Value, received: Value) -> Value {
    match failure {
        Value::Record(r) if r.contains_key("input") => {
            let mut r = (**r).clone();
            r.insert("input".into(), received);
            Value::record(r)
        }
        other => other.clone(),
    }
}

/// The `failures` list of a failure record.
pub fn failures_of(record: &Value) -> Vec<Value> {
    match record {
        Value::Record(r) => match r.get("failures") {
            Some(Value::List(items)) => items.to_vec(),
            _ => vec![],
        },
        _ => vec![],
    }
}

/// The rule identities of a failure record, in order.
pub fn failure_rules(record: &Value) -> Vec<String> {
    failures_of(record)
        .iter()
        .filter_map(|f| match f {
            Value::Record(r) => r.get("rule").and_then(Value::as_str).map(str::to_string),
            _ => None,
        })
        .collect()
}

pub fn first_rule(record: &Value) -> Option<String> {
    failure_rules(record).into_iter().next()
}
