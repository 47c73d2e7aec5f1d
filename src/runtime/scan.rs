//! Checking one line of JSON against a compiled record contract as it is
//! read, without building the record.
//!
//! Where a pipeline drops the records it validates — `count()` of
//! `validate(T) | oks()`, `report()` of `validate(T)` — all it needs per
//! line is what `validate` would make of it. [`LineCheck::verdict`] tells
//! that in one pass over the bytes: each key is matched to its field by
//! position, scalars are checked on the token (no string is copied, no
//! number parsed unless a rule reads it), nested records and lists are
//! checked the same way, level by level, fields nobody declared are
//! skipped, and each record's rules run in one reused frame holding only
//! the fields they read.
//!
//! The verdict is one-sided: `Valid` and `Invalid` are what `validate`
//! would say; `Unsure` sends the line down the ordinary path (decode, then
//! validate), which also names every failure when they are wanted.
//!
//! Where the records are wanted — any other pipeline after
//! `source(file(…), Json) | validate(T)` — [`LineCheck::validated`] builds
//! the record of a valid line in the same pass, and the line is decoded
//! only when it is not valid. The differential tests at the end hold both
//! to what the ordinary path gives (`session/scan_agreement.rs`: they
//! need contracts a session has checked).

use std::rc::Rc;

use crate::runtime::contract::{Contract, FieldSpec, RecordShape, RuleSpec, TypeSpec};
use crate::runtime::decide::{self, FailureKind};
use crate::runtime::eval::io::Cell;
use crate::runtime::eval::{push_frame, Env, Frame, Interp, Slots};
use crate::runtime::json::{write_compact, Decoder, Mark, Parsed, Parser};
use crate::runtime::kernel::{Lists, Rows};
use crate::runtime::plan::{
    element_type, is_plain, nested_shape, Elements, FieldStep, How, LinePlan, RecordPlan, Tokens,
};
use crate::runtime::validate::{check_field, Checked, Findings, KeyPart};
use crate::runtime::value::{Key, Okay, Record, Value};

/// A record contract's plan (`crate::runtime::plan`), run over lines: the
/// plan, and the state of the record being read.
pub struct LineCheck {
    plan: Rc<LinePlan>,
    contract: Rc<Contract>,
    top: RecordState,
    /// The fields of the record `validated` builds, reused.
    built: Vec<(Key, Value)>,
    decoder: Decoder,
}

/// The state of one record being read, beside its `RecordPlan`.
struct RecordState {
    /// Per field, its state in the record being read.
    fields: Vec<FieldState>,
    visit: u32,
    /// Undeclared keys seen so far (see `key`), each with the visit it
    /// was last seen on.
    extras: Vec<(Key, u32)>,
    /// Per field, whether it failed in the record being read (`findings`).
    failed: Vec<bool>,
    /// Per failure `findings` found, the field it was found at (its
    /// position + 1), or `AFTER_FIELDS` for an undeclared field (whose
    /// identity names it) and `AFTER_RULES` for a rule.
    found_at: Vec<u32>,
    /// Per field, where its value lies in the object being read
    /// (`find`'s first pass).
    marks: Vec<Option<Mark>>,
    /// The identities of the undeclared fields of the object being read
    /// (`find`), in the order of their keys.
    undeclared: Vec<Rc<str>>,
    /// The rules' frame: slot 0 is `self` (never read: see
    /// `RecordPlan::new`), then each field. Reused from record to record
    /// while nothing else holds it.
    env: Env,
    /// The top-level string fields read only for a unique key, whose text
    /// is kept in place of a built value (`LineCheck::key_part`).
    key_texts: Vec<KeyText>,
}

/// One field's state in the record being read.
struct FieldState {
    /// The visit it was last seen on (to spot repeated keys).
    seen: u32,
    /// The visit it was last null on, for a field measured by presence
    /// or null (`FieldStep::measured`).
    null: u32,
    /// The state of the record or list it holds.
    nested: Nested,
}

/// The state of a nested value being read.
enum Nested {
    None,
    Record(Box<RecordState>),
    List(Box<ListState>),
}

struct ListState {
    elements: Nested,
    /// The elements' frames, kept for the rules when they only fold over
    /// the list (`Elements::rows`): the frame then holds `rows_mark`, not
    /// a built list.
    rows: Option<RowBuf>,
}

/// A string field's text kept for a unique key, and the visit it was kept
/// on.
struct KeyText {
    text: String,
    visit: u32,
}

/// The rows of a list kept for the rules' folds (`kernel::Rows`).
struct RowBuf {
    /// Each element's frame slots from 1, `width` to an element.
    cells: Vec<Value>,
    len: usize,
    width: usize,
    /// What the frame holds for the list (an empty list of its own, told
    /// apart from any other by its address).
    mark: Rc<Vec<Value>>,
}

impl Nested {
    /// The state `how` needs.
    fn of(how: &How) -> Nested {
        match how {
            How::Record(plan) => Nested::Record(Box::new(RecordState::new(plan, 0))),
            How::List(elements) => Nested::List(Box::new(ListState {
                elements: Nested::of(&elements.how),
                rows: elements.rows.then(|| RowBuf {
                    cells: Vec::new(),
                    len: 0,
                    width: match &elements.how {
                        How::Record(record) => record.fields.len(),
                        _ => 0,
                    },
                    mark: Rc::new(Vec::new()),
                }),
            })),
            How::Tokens(_) | How::Value => Nested::None,
        }
    }

    /// For a list kept as rows for the rules, what the frame holds in its
    /// place (the rows' mark): the list is not built.
    fn rows_mark(&self) -> Option<Value> {
        match self {
            Nested::List(list) => list.rows.as_ref().map(|r| Value::List(r.mark.clone())),
            _ => None,
        }
    }
}

impl ListState {
    /// Start a list kept as rows anew.
    fn clear_rows(&mut self) {
        if let Some(rows) = &mut self.rows {
            rows.cells.clear();
            rows.len = 0;
        }
    }

    /// Keep the element record just read as a row, when the list is kept
    /// as rows.
    fn keep_row(&mut self) {
        if let (Some(rows), Nested::Record(record)) = (&mut self.rows, &self.elements) {
            rows.cells.extend_from_slice(record.field_slots());
            rows.len += 1;
        }
    }
}

impl RecordState {
    fn new(plan: &RecordPlan, key_texts: usize) -> RecordState {
        let n = plan.fields.len();
        let slots: Slots = std::iter::repeat_n(Value::Absent, n + 1).collect();
        RecordState {
            fields: (plan.fields.iter())
                .map(|f| FieldState {
                    seen: 0,
                    null: 0,
                    nested: Nested::of(&f.how),
                })
                .collect(),
            visit: 0,
            extras: Vec::new(),
            failed: vec![false; n],
            found_at: Vec::new(),
            marks: vec![None; n],
            undeclared: Vec::new(),
            env: push_frame(&None, slots),
            key_texts: (0..key_texts)
                .map(|_| KeyText {
                    text: String::new(),
                    visit: 0,
                })
                .collect(),
        }
    }

    /// The frame's field slots (from 1) after `read`.
    fn field_slots(&self) -> &[Value] {
        self.env.as_ref().map(|f| &f.slots[1..]).unwrap_or(&[])
    }
}

impl LineCheck {
    /// The check for `contract`, when it is a record type whose rules do
    /// not read `self` whole and which claims no unique keys (those depend
    /// on the records before).
    pub fn new(contract: &Rc<Contract>, interp: &Interp) -> Option<LineCheck> {
        if !contract.record()?.uniques.is_empty() {
            return None;
        }
        Self::keyed(contract, interp)
    }

    /// The check for `contract` that builds the records it finds valid
    /// (`validated`), when it can: their unique keys are left to the
    /// caller to claim.
    pub fn building(contract: &Rc<Contract>, interp: &Interp) -> Option<LineCheck> {
        Self::keyed(contract, interp).filter(LineCheck::keeps_records)
    }

    /// The check for `contract`, unique keys or not: a caller that takes
    /// a `Valid` verdict of a contract with keys claims them from
    /// `top_slots`, line by line in order.
    pub fn keyed(contract: &Rc<Contract>, interp: &Interp) -> Option<LineCheck> {
        let plan = LinePlan::of(contract, interp)?;
        Some(LineCheck {
            top: RecordState::new(&plan.top, plan.key_texts),
            plan,
            contract: contract.clone(),
            built: Vec::new(),
            decoder: Decoder::new(),
        })
    }

    /// The top record's shape and plan, and the state of the record read.
    fn parts(&mut self) -> (&RecordShape, &RecordPlan, &mut RecordState, &mut Decoder) {
        let shape = self.contract.record().expect("a line plan is a record's");
        (shape, &self.plan.top, &mut self.top, &mut self.decoder)
    }

    /// The rule and kind of every failure and warning `validate` would find
    /// in `line`, as [`crate::runtime::validate::findings`] gives them, when they can
    /// be told without building the record; `None` when the ordinary path
    /// must tell (the line does not decode or repeats a key, or the
    /// contract has defaults or checks, or a field whose value is decoded
    /// to be checked).
    pub fn findings(&mut self, interp: &Rc<Interp>, line: &[u8]) -> Option<Findings> {
        if !self.plan.names {
            return None;
        }
        let (shape, plan, state, decoder) = self.parts();
        let mut p = object(line, decoder)?;
        let mut found = Findings {
            failures: Vec::new(),
            warnings: Vec::new(),
        };
        find(plan, shape, state, interp, &mut p, &mut found).ok()?;
        if !found.failures.is_empty() {
            found.warnings.clear();
        }
        p.at_end().then_some(found)
    }

    /// After `findings`, where each failure was found: the field's
    /// position + 1, or a place after every field for an undeclared field
    /// (whose identity names it) and after those for a rule. A failure's identity and this
    /// tell its whole failure record apart in a record of scalar fields.
    pub fn found_at(&self) -> &[u32] {
        &self.top.found_at
    }

    /// `validate`'s result for `line` — `ok` of the record, built as the
    /// line is read — when the record is valid with no warnings; `None`
    /// when the ordinary path must decide. Only for a contract that fills
    /// no defaults (which would change the record).
    pub fn validated(&mut self, interp: &Rc<Interp>, line: &[u8]) -> Option<Value> {
        if !self.keeps_records() {
            return None;
        }
        let mut fields = std::mem::take(&mut self.built);
        fields.clear();
        let (shape, plan, state, decoder) = self.parts();
        let mut p = object(line, decoder)?;
        let read = read::<false>(plan, shape, state, interp, &mut p, Some(&mut fields));
        let value = (read.is_ok() && p.at_end()).then(|| {
            Value::Ok(Rc::new(Okay {
                value: Value::record(Record::from_distinct(fields.drain(..))),
                warnings: Vec::new(),
            }))
        });
        self.built = fields;
        value
    }

    /// The top record's frame after a `Valid` verdict: slot 0 unused,
    /// then each declared field, holding the value of each field a rule
    /// reads or a unique key is made of.
    pub fn top_slots(&self) -> &[Value] {
        self.top.env.as_ref().map_or(&[], |frame| &frame.slots)
    }

    /// The value of the top record's field at `position` for its unique
    /// keys, after a `Valid` verdict: the text kept for it, or its slot.
    pub fn key_part(&self, position: usize) -> KeyPart<'_> {
        let top = &self.top;
        match self.plan.top.fields[position]
            .key_text
            .map(|k| &top.key_texts[k])
        {
            Some(kept) if kept.visit == top.visit => KeyPart::Text(&kept.text),
            _ => KeyPart::Value(&self.top_slots()[position + 1]),
        }
    }

    /// Whether the top record's field at `position` was absent, null or
    /// present in the line last read, after a `Valid` verdict or
    /// `findings`; `None`
    /// unless it is measured by presence or null only
    /// (`FieldStep::measured`), for its value is in `top_slots` then.
    pub fn seen(&self, position: usize) -> Option<Seen> {
        if !self.plan.top.fields.get(position)?.measured {
            return None;
        }
        let state = &self.top.fields[position];
        Some(match self.top.visit {
            v if state.seen != v => Seen::Absent,
            v if state.null == v => Seen::Null,
            _ => Seen::Present,
        })
    }

    /// Is a line that fails certainly an `err` (`LinePlan::certain`)?
    pub fn certain(&self) -> bool {
        self.plan.certain
    }

    /// Is it a record of scalar fields whose validation cannot raise
    /// (`LinePlan::flat`)? A failure's identity and the field it is found
    /// at then fix all of it (see `found_at`).
    pub fn flat(&self) -> bool {
        self.plan.flat
    }

    /// Can `findings` name every failure (`LinePlan::names`)?
    pub fn names(&self) -> bool {
        self.plan.names
    }

    /// Does validating leave every record as it was read, so that
    /// `validated` can build it?
    pub fn keeps_records(&self) -> bool {
        self.plan.keeps_records
    }

    /// What `validate` would make of `line`, when that can be told without
    /// building the record.
    pub fn verdict(&mut self, interp: &Rc<Interp>, line: &[u8]) -> Verdict {
        self.judge(interp, line).0
    }

    /// The verdict on `line`, and for a `Valid` one the record's compact
    /// JSON text — what `write_json` writes for it — appended to `out`. A
    /// line with no whitespace and no escape, whose keys were all told
    /// apart, is that text already. `Unsure` (with `out` perhaps partly
    /// written) for a valid line whose text cannot be copied, and for any
    /// line of a contract whose validation changes records
    /// (`keeps_records`).
    pub fn compact(&mut self, interp: &Rc<Interp>, line: &[u8], out: &mut Vec<u8>) -> Verdict {
        if !self.keeps_records() {
            return Verdict::Unsure;
        }
        match self.judge(interp, line) {
            (Verdict::Valid, true) if !has_space_or_escape(line) => {
                out.extend_from_slice(line);
                Verdict::Valid
            }
            (Verdict::Valid, _) if write_compact(line, out) => Verdict::Valid,
            (Verdict::Valid, _) => Verdict::Unsure,
            (verdict, _) => verdict,
        }
    }

    /// The verdict on `line`, and whether every key of every object in it
    /// was told apart from the others.
    fn judge(&mut self, interp: &Rc<Interp>, line: &[u8]) -> (Verdict, bool) {
        let (shape, plan, state, decoder) = self.parts();
        let mut p = Parser::new(line, decoder);
        let outcome = match p.peek_token() {
            Ok(b'{') => match read_top(plan, shape, state, interp, &mut p) {
                Ok(()) | Err(Miss::Warned) if !p.at_end() => Err(Miss::Invalid),
                read => read,
            },
            // Not an object: `validate` fails it, or it does not decode.
            _ => Err(Miss::Invalid),
        };
        let keys_told_apart = !p.keys_unchecked;
        (self.verdict_of(outcome), keys_told_apart)
    }

    /// What `validate` would make of a record whose fields a format has
    /// read and converted already (CSV): `cells` holds each declared
    /// field's value in order (`None` where the record has none), and
    /// `undeclared` says whether the record has other fields. Checked as a
    /// line is, with the same decisions; no record is built.
    pub fn verdict_cells(
        &mut self,
        interp: &Rc<Interp>,
        cells: &[Option<Cell>],
        undeclared: bool,
    ) -> Verdict {
        let (shape, plan, state, _) = self.parts();
        let outcome = read_cells(plan, shape, state, interp, cells, undeclared);
        self.verdict_of(outcome)
    }

    fn verdict_of(&self, outcome: Checking) -> Verdict {
        match outcome {
            Ok(()) => Verdict::Valid,
            Err(Miss::Invalid) if self.plan.certain => Verdict::Invalid,
            Err(_) => Verdict::Unsure,
        }
    }
}

/// What a line held for a field (`LineCheck::seen`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    Absent,
    Null,
    Present,
}

/// `read` of the top record: its unique keys' texts kept, if any.
fn read_top(
    plan: &RecordPlan,
    shape: &RecordShape,
    state: &mut RecordState,
    interp: &Rc<Interp>,
    p: &mut Parser,
) -> Checking {
    match state.key_texts.is_empty() {
        true => read::<false>(plan, shape, state, interp, p, None),
        false => read::<true>(plan, shape, state, interp, p, None),
    }
}

/// Steps 2–5 (and 7 for a declared type) of §4.8 for the object at the
/// parser: every field present is checked and those the rules read are
/// put in the frame, then the rules run. With `out`, the record's
/// fields are built into it as they are read.
fn read<const KEYS: bool>(
    plan: &RecordPlan,
    shape: &RecordShape,
    state: &mut RecordState,
    interp: &Rc<Interp>,
    p: &mut Parser,
    mut out: Option<&mut Vec<(Key, Value)>>,
) -> Checking {
    let RecordState {
        fields: states,
        visit,
        extras,
        env,
        key_texts,
        ..
    } = state;
    let Some(frame) = env.as_mut() else {
        return Err(Miss::Unsure);
    };
    let fields = &plan.fields;
    let slots = start_record(fields, states, visit, frame);
    if KEYS && *visit == 1 {
        // The visits counted from the start again: no text kept
        // before is this record's.
        key_texts.iter_mut().for_each(|k| k.visit = 0);
    }
    p.open()?;
    let mut next = 0;
    if p.peek_token()? != b'}' {
        loop {
            let mut name = None;
            let wanted = out.is_some().then_some(&mut name);
            match key(p, shape, fields, (extras, *visit), next, wanted)? {
                Some(i) => {
                    if states[i].seen == *visit {
                        // A repeated key: the last value counts.
                        return Err(Miss::Unsure);
                    }
                    states[i].seen = *visit;
                    if fields[i].measured && p.peek_token()? == b'n' {
                        states[i].null = *visit;
                    }
                    let spec = &shape.fields[i];
                    let start = p.mark();
                    let kept = match (KEYS && out.is_none(), fields[i].key_text) {
                        (true, Some(k)) => {
                            keep_key_text(&fields[i].how, &mut key_texts[k], *visit, p)
                        }
                        _ => None,
                    };
                    let value = match kept {
                        Some(kept) => kept,
                        None => check(
                            &fields[i],
                            spec,
                            &mut states[i].nested,
                            interp,
                            p,
                            out.is_some(),
                        ),
                    }
                    .map_err(|miss| settle(miss, p, start, &spec.name))?;
                    match (value, out.as_deref_mut()) {
                        (Some(v), Some(out)) => {
                            if fields[i].read {
                                slots[i + 1] = v.clone();
                            }
                            out.push((spec.name.clone(), v));
                        }
                        // Not building: a value comes back only for a rule.
                        (Some(v), None) => slots[i + 1] = v,
                        (None, _) => {}
                    }
                    next = i + 1;
                }
                None if shape.open => match (name, out.as_deref_mut()) {
                    (Some(name), Some(out)) => {
                        if out.iter().any(|(k, _)| *k == name) {
                            // A repeated key: the last value counts.
                            return Err(Miss::Unsure);
                        }
                        out.push((name, p.value()?));
                    }
                    _ => p.skip_value()?,
                },
                None => return Err(Miss::Invalid),
            }
            match p.peek_token()? {
                b',' => p.bump(),
                b'}' => break,
                _ => return Err(Miss::Invalid),
            }
        }
    }
    p.close();
    left_out(interp, shape, fields, states, *visit, slots)?;
    run_rules(interp, shape, plan.warns, env, states)
}

/// Steps 2–5 (and 7) for a record whose fields a format has read and
/// converted (`LineCheck::verdict_cells`).
fn read_cells(
    plan: &RecordPlan,
    shape: &RecordShape,
    state: &mut RecordState,
    interp: &Rc<Interp>,
    cells: &[Option<Cell>],
    undeclared: bool,
) -> Checking {
    let RecordState {
        fields: states,
        visit,
        env,
        ..
    } = state;
    let Some(frame) = env.as_mut() else {
        return Err(Miss::Unsure);
    };
    if undeclared && !shape.open {
        return Err(Miss::Invalid);
    }
    let fields = &plan.fields;
    let slots = start_record(fields, states, visit, frame);
    for (i, cell) in cells.iter().enumerate() {
        let (Some(cell), Some(field)) = (cell, fields.get(i)) else {
            continue;
        };
        states[i].seen = *visit;
        if let Some(v) = check_cell(field, cell)? {
            slots[i + 1] = v;
        }
    }
    left_out(interp, shape, fields, states, *visit, slots)?;
    run_rules(interp, shape, plan.warns, env, states)
}

/// Step 4 for the fields a record left out: optional ones stay absent,
/// defaults are filled and checked as `validate` does, and a required
/// field's absence fails.
fn left_out(
    interp: &Rc<Interp>,
    shape: &RecordShape,
    fields: &[FieldStep],
    states: &[FieldState],
    visit: u32,
    slots: &mut Slots,
) -> Checking {
    for (i, spec) in shape.fields.iter().enumerate() {
        if states[i].seen == visit {
            continue;
        }
        match &spec.default {
            Some(d) => {
                let v = interp.eval(d, &None).map_err(|_| Miss::Unsure)?;
                let v = checked(interp, spec, v.stored())?;
                if fields[i].read {
                    slots[i + 1] = v;
                }
            }
            None if spec.optional => {}
            None => return Err(Miss::Invalid),
        }
    }
    Ok(())
}

/// Steps 2–7 of §4.8 for the object at the parser, appending every
/// failure to `found` in the plan's order, which is the order `validate`
/// names them in (and, for a declared type while there is no failure, its
/// warnings). A malformed object or a repeated key is `Err`: the ordinary
/// path decides those.
///
/// Keys come in the line's order, failures in the plan's: a first pass
/// over the object finds where each declared field's value lies and which
/// keys nobody declared, then the fields are checked in their declared
/// order, each where it lies.
fn find(
    plan: &RecordPlan,
    shape: &RecordShape,
    state: &mut RecordState,
    interp: &Rc<Interp>,
    p: &mut Parser,
    found: &mut Findings,
) -> Parsed<()> {
    let RecordState {
        fields: states,
        visit,
        extras,
        env,
        failed,
        found_at,
        marks,
        undeclared,
        ..
    } = state;
    let Some(frame) = env.as_mut() else {
        return Err(p.give_up());
    };
    let fields = &plan.fields;
    let slots = start_record(fields, states, visit, frame);
    let start = found.failures.len();
    found_at.clear();
    failed.fill(false);
    undeclared.clear();
    p.open()?;
    let mut next = 0;
    if p.peek_token()? != b'}' {
        loop {
            let mut name = None;
            let i = key(p, shape, fields, (extras, *visit), next, Some(&mut name))
                .map_err(|_| p.give_up())?;
            match i {
                Some(i) => {
                    if states[i].seen == *visit {
                        return Err(p.give_up());
                    }
                    states[i].seen = *visit;
                    if fields[i].measured && p.peek_token()? == b'n' {
                        states[i].null = *visit;
                    }
                    marks[i] = Some(p.mark());
                    next = i + 1;
                }
                None if shape.open => {}
                None => {
                    let name = name.map(|n| n.to_string()).unwrap_or_default();
                    let rule = decide::extra_id(&plan.owner, &name);
                    if undeclared.contains(&rule) {
                        // A repeated key is one field to `validate`.
                        return Err(p.give_up());
                    }
                    undeclared.push(rule);
                }
            }
            p.skip_value()?;
            match p.peek_token()? {
                b',' => p.bump(),
                b'}' => break,
                _ => return Err(p.give_up()),
            }
        }
    }
    p.close();
    let end = p.mark();
    // Step 3, field by field as the plan orders them.
    for (i, spec) in shape.fields.iter().enumerate() {
        let before = found.failures.len();
        match marks[i] {
            Some(at) if states[i].seen == *visit => {
                p.rewind(at);
                let state = &mut states[i].nested;
                let value = find_field(&fields[i], spec, state, interp, p, found)?;
                if let (Some(v), true) = (value, fields[i].read) {
                    slots[i + 1] = v;
                }
            }
            _ if spec.optional => {}
            _ => found
                .failures
                .push((spec.ids.missing.clone(), FailureKind::Missing)),
        }
        failed[i] = found.failures.len() > before;
        found_at.resize(found.failures.len() - start, i as u32 + 1);
    }
    p.rewind(end);
    // Step 4: the fields nobody declared, in the order of their keys.
    let extra = |rule: &Rc<str>| (rule.clone(), FailureKind::Extra);
    found.failures.extend(undeclared.iter().map(extra));
    found_at.resize(found.failures.len() - start, AFTER_FIELDS);
    let lists = FieldLists { states, env };
    let outcome = |r: &RuleSpec| {
        let kind = decide::kind_of(r, r.kernel(Some(shape)).run(interp, env, &lists))?;
        Some((r.id.clone(), kind))
    };
    for rule in &shape.rules {
        if !decide::skipped(rule, failed) {
            found.failures.extend(outcome(rule));
        }
    }
    found_at.resize(found.failures.len() - start, AFTER_RULES);
    if plan.warns && decide::warns(found.failures.len()) {
        let warned = shape.warns.iter().filter_map(outcome);
        found.warnings.extend(warned);
    }
    Ok(())
}

/// Step 3 for each element of the list at the parser, naming what
/// fails into `found`.
fn find_elements(
    elements: &Elements,
    elem: &TypeSpec,
    state: &mut ListState,
    interp: &Rc<Interp>,
    p: &mut Parser,
    found: &mut Findings,
) -> Parsed<()> {
    state.clear_rows();
    p.open()?;
    if p.peek_token()? != b']' {
        loop {
            if state.rows.is_some() && elements.admits_null && p.peek_token()? == b'n' {
                // A null element that passes is no row: the ordinary
                // path runs the rules over it. (One that fails fails
                // the list, and no rule reads a failed field.)
                return Err(p.give_up());
            }
            match &elements.how {
                How::Tokens(tokens) => {
                    match judge(tokens, elements.admits_null, false, &elements.type_id, p)? {
                        Judged::Passed(_) => {}
                        Judged::Broke(ids) => found.failures.extend(ids),
                        // An element has no null step: null is a value
                        // of the wrong type.
                        Judged::Null => found
                            .failures
                            .push((elements.type_id.clone(), FailureKind::Type)),
                    }
                }
                _ if p.peek_token()? == b'n' => {
                    p.literal("null", ())?;
                    if !elements.admits_null {
                        found
                            .failures
                            .push((elements.type_id.clone(), FailureKind::Type));
                    }
                }
                how => find_nested(
                    how,
                    elem,
                    &mut state.elements,
                    interp,
                    &elements.type_id,
                    p,
                    found,
                )?,
            }
            state.keep_row();
            match p.peek_token()? {
                b',' => p.bump(),
                b']' => break,
                _ => return Err(p.give_up()),
            }
        }
    }
    p.close();
    Ok(())
}

/// Where `findings` says the failure of an undeclared field was found,
/// and of a rule: after every declared field's.
const AFTER_FIELDS: u32 = u32::MAX - 1;
const AFTER_RULES: u32 = u32::MAX;

/// What one scalar field's value came to.
enum Judged {
    /// It passed (the value, when a rule reads it; else null).
    Passed(Value),
    /// It broke these rules: a type failure, or a refinement's rules.
    Broke(Vec<(Rc<str>, FailureKind)>),
    /// Null where the type does not admit it.
    Null,
}

/// Step 3 for a scalar value, naming what fails: checked against
/// `tokens`, null by `admits_null`, a type failure named `type_id`; with
/// `read`, the value is returned when it passes.
fn judge(
    tokens: &Tokens,
    admits_null: bool,
    read: bool,
    type_id: &Rc<str>,
    p: &mut Parser,
) -> Parsed<Judged> {
    let byte = p.peek_token()?;
    let type_failure = || Judged::Broke(vec![(type_id.clone(), FailureKind::Type)]);
    Ok(match byte {
        b'n' => {
            p.literal("null", ())?;
            if admits_null {
                Judged::Passed(Value::Null)
            } else {
                Judged::Null
            }
        }
        b'"' => {
            let s = p.string()?;
            match tokens.string_breaks(&s) {
                None => type_failure(),
                Some(broken) if broken.is_empty() => {
                    Judged::Passed(if read { Value::str(s) } else { Value::Null })
                }
                Some(broken) => Judged::Broke(
                    broken
                        .into_iter()
                        .map(|id| (id, FailureKind::Require))
                        .collect(),
                ),
            }
        }
        b'-' | b'0'..=b'9' => {
            let text = p.number_text()?;
            if !tokens.admits_number(text) {
                type_failure()
            } else if read {
                Judged::Passed(Value::from_number_text(text))
            } else {
                Judged::Passed(Value::Null)
            }
        }
        b't' | b'f' => {
            let truth = byte == b't';
            p.literal(if truth { "true" } else { "false" }, ())?;
            if tokens.admits_bool() {
                Judged::Passed(Value::Bool(truth))
            } else {
                type_failure()
            }
        }
        _ if tokens.admits_any() && read => Judged::Passed(p.value()?),
        _ => {
            p.skip_value()?;
            if tokens.admits_any() {
                Judged::Passed(Value::Null)
            } else {
                type_failure()
            }
        }
    })
}

/// Step 3 for one field's value (not missing), naming what fails into
/// `found`: a scalar on its token, a record or list level by level.
/// Returns the value when a rule reads it and it passed.
fn find_field(
    field: &FieldStep,
    spec: &FieldSpec,
    state: &mut Nested,
    interp: &Rc<Interp>,
    p: &mut Parser,
    found: &mut Findings,
) -> Parsed<Option<Value>> {
    let start = p.mark();
    let before = found.failures.len();
    match &field.how {
        How::Tokens(tokens) => {
            match judge(tokens, field.admits_null, field.read, &field.type_id, p)? {
                Judged::Passed(v) => return Ok(Some(v)),
                Judged::Broke(ids) => found.failures.extend(ids),
                Judged::Null => found
                    .failures
                    .push((spec.ids.null.clone(), FailureKind::Null)),
            }
            return Ok(None);
        }
        How::Value => return Err(p.give_up()),
        _ if p.peek_token()? == b'n' => {
            p.literal("null", ())?;
            if field.admits_null {
                return Ok(Some(Value::Null));
            }
            found
                .failures
                .push((spec.ids.null.clone(), FailureKind::Null));
        }
        how => find_nested(how, &spec.ty, state, interp, &field.type_id, p, found)?,
    }
    if field.read && found.failures.len() == before {
        if let Some(mark) = state.rows_mark() {
            return Ok(Some(mark));
        }
        // Checked in place; now read again for the rules.
        p.rewind(start);
        return Ok(Some(p.value()?));
    }
    Ok(None)
}

/// Step 3 for a record or list value of type `spec` (null aside), naming
/// what fails into `found`; a value of another kind is a type failure
/// `type_id`.
fn find_nested(
    how: &How,
    spec: &TypeSpec,
    state: &mut Nested,
    interp: &Rc<Interp>,
    type_id: &Rc<str>,
    p: &mut Parser,
    found: &mut Findings,
) -> Parsed<()> {
    let byte = p.peek_token()?;
    match (how, state) {
        (How::Record(plan), Nested::Record(state)) if byte == b'{' => {
            let shape = nested_shape(spec).ok_or_else(|| p.give_up())?;
            find(plan, shape, state, interp, p, found)
        }
        (How::List(elements), Nested::List(state)) if byte == b'[' => {
            let elem = element_type(spec).ok_or_else(|| p.give_up())?;
            find_elements(elements, elem, state, interp, p, found)
        }
        (How::Record(_) | How::List(_), _) => {
            p.skip_value()?;
            found.failures.push((type_id.clone(), FailureKind::Type));
            Ok(())
        }
        (How::Tokens(_) | How::Value, _) => Err(p.give_up()),
    }
}

/// Step 3 for a string field kept as text for a unique key: checked on
/// its token, its text kept in `kept` with the record's visit
/// (`key_part`). `None` for a value of another kind, checked and built
/// the usual way.
#[inline(never)]
fn keep_key_text(
    how: &How,
    kept: &mut KeyText,
    visit: u32,
    p: &mut Parser,
) -> Option<Result<Option<Value>, Miss>> {
    let How::Tokens(tokens) = how else {
        return None;
    };
    if p.peek_token().ok()? != b'"' {
        return None;
    }
    Some((|| {
        let s = p.string()?;
        if !tokens.admits_string(&s) {
            return Err(Miss::Invalid);
        }
        kept.text.clear();
        kept.text.push_str(&s);
        kept.visit = visit;
        Ok(None)
    })())
}

/// A new record visit: counts it (for spotting repeated keys), and clears
/// the frame slots the rules read, which the record then fills.
fn start_record<'f>(
    fields: &[FieldStep],
    states: &mut [FieldState],
    visit: &mut u32,
    frame: &'f mut Rc<Frame>,
) -> &'f mut Slots {
    *visit = visit.wrapping_add(1);
    if *visit == 0 {
        states.iter_mut().for_each(|s| (s.seen, s.null) = (0, 0));
        *visit = 1;
    }
    let slots = &mut Rc::make_mut(frame).slots;
    for (i, f) in fields.iter().enumerate() {
        if f.read {
            slots[i + 1] = Value::Absent;
        }
    }
    slots
}

/// A parser over `line` standing on its opening `{`; `None` when the line
/// holds something else (left to the ordinary path).
fn object<'a, 'k>(line: &'a [u8], decoder: &'k mut Decoder) -> Option<Parser<'a, 'k>> {
    let mut p = Parser::new(line, decoder);
    (p.peek_token().ok()? == b'{').then_some(p)
}

/// Steps 5 and 7: the rules, in the frame `read` filled, with the lists
/// kept as rows in `states`. A rule whose kernel bails raised an error, so
/// it fails (`eval`). A warning is left to the ordinary path, which names it.
fn run_rules(
    interp: &Rc<Interp>,
    shape: &RecordShape,
    warns: bool,
    env: &Env,
    states: &[FieldState],
) -> Checking {
    let lists = FieldLists { states, env };
    let holds = |r: &RuleSpec| {
        let value = r.kernel(Some(shape)).run(interp, env, &lists);
        decide::holds_in(value).unwrap_or(false)
    };
    if !shape.rules.iter().all(holds) {
        return Err(Miss::Invalid);
    }
    if warns && !shape.warns.iter().all(holds) {
        return Err(Miss::Warned);
    }
    Ok(())
}

/// A record's lists kept as rows, for its rules' kernels.
struct FieldLists<'a> {
    states: &'a [FieldState],
    env: &'a Env,
}

impl Lists for FieldLists<'_> {
    fn rows(&self, slot: u32) -> Option<Rows<'_>> {
        let i = (slot as usize).checked_sub(1)?;
        let Nested::List(list) = &self.states.get(i)?.nested else {
            return None;
        };
        let buf = list.rows.as_ref()?;
        // The frame holds the mark only when the list was kept as rows
        // (not when it was built, or absent, or null).
        match self.env.as_ref()?.slots.get(slot as usize)? {
            Value::List(l) if Rc::ptr_eq(l, &buf.mark) => Some(Rows {
                len: buf.len,
                width: buf.width,
                cells: &buf.cells,
            }),
            _ => None,
        }
    }
}

/// Step 3 for one field's value: null and type, then its checks.
/// Returns the value when a rule reads it or `build` asks for it.
#[inline(always)]
fn check(
    field: &FieldStep,
    spec: &FieldSpec,
    state: &mut Nested,
    interp: &Rc<Interp>,
    p: &mut Parser,
    build: bool,
) -> Result<Option<Value>, Miss> {
    let wanted = build;
    let build = build || field.read;
    if p.peek_token()? == b'n' {
        p.literal("null", ())?;
        if !field.admits_null {
            return Err(Miss::Invalid);
        }
        return Ok(build.then_some(Value::Null));
    }
    if let How::Value = field.how {
        // Rules, `validate … with`, values a rule reads: decode the
        // value, check it as `validate` does.
        return checked(interp, spec, p.value()?).map(Some);
    }
    let start = p.mark();
    let value = check_value(&field.how, &spec.ty, state, interp, p, build)?;
    if build && matches!(field.how, How::Record(_) | How::List(_)) {
        if let (false, Some(mark)) = (wanted, state.rows_mark()) {
            return Ok(Some(mark));
        }
        // Checked in place; now read again to be built.
        p.rewind(start);
        return Ok(Some(p.value()?));
    }
    Ok(value)
}

/// Step 3 for one field's value as a format converted it; returns the
/// value when a rule reads it. Only scalars are checked here.
fn check_cell(field: &FieldStep, cell: &Cell) -> Result<Option<Value>, Miss> {
    let How::Tokens(tokens) = &field.how else {
        return Err(Miss::Unsure);
    };
    let admitted = match cell {
        Cell::Null => field.admits_null,
        Cell::Text(s) => tokens.admits_string(s),
        Cell::Int(_) | Cell::Big(_) => tokens.admits_numeric(true),
        Cell::Float(_) | Cell::Decimal(_) => tokens.admits_numeric(false),
        Cell::Bool(_) => tokens.admits_bool(),
        Cell::Nested(_) => return Err(Miss::Unsure),
    };
    if !admitted {
        return Err(Miss::Invalid);
    }
    Ok(field.read.then(|| cell.to_value()))
}

/// Check the value of type `spec` at the parser (not null) as `how` says;
/// with `build`, return it.
fn check_value(
    how: &How,
    spec: &TypeSpec,
    state: &mut Nested,
    interp: &Rc<Interp>,
    p: &mut Parser,
    build: bool,
) -> Result<Option<Value>, Miss> {
    let byte = p.peek_token()?;
    let tokens = match (how, state) {
        (How::Tokens(tokens), _) => tokens,
        (How::Record(plan), Nested::Record(state)) if byte == b'{' => {
            let shape = nested_shape(spec).ok_or(Miss::Unsure)?;
            // A nested record's warning leaves the line undecided
            // before the rest of it is read.
            return read::<false>(plan, shape, state, interp, p, None)
                .map(|()| None)
                .map_err(|miss| match miss {
                    Miss::Warned => Miss::Unsure,
                    miss => miss,
                });
        }
        (How::List(elements), Nested::List(state)) if byte == b'[' => {
            let elem = element_type(spec).ok_or(Miss::Unsure)?;
            return read_elements(elements, elem, state, interp, p).map(|()| None);
        }
        _ => return Err(Miss::Invalid),
    };
    check_token(tokens, p, byte, build)
}

/// A scalar at the parser, on its token.
#[inline(always)]
fn check_token(
    tokens: &Tokens,
    p: &mut Parser,
    byte: u8,
    build: bool,
) -> Result<Option<Value>, Miss> {
    Ok(match byte {
        b'"' => {
            let s = p.string()?;
            if !tokens.admits_string(&s) {
                return Err(Miss::Invalid);
            }
            build.then(|| Value::str(s))
        }
        b'-' | b'0'..=b'9' => {
            let text = p.number_text()?;
            if !tokens.admits_number(text) {
                return Err(Miss::Invalid);
            }
            build.then(|| Value::from_number_text(text))
        }
        b't' | b'f' if tokens.admits_bool() => {
            let truth = byte == b't';
            p.literal(if truth { "true" } else { "false" }, ())?;
            Some(Value::Bool(truth))
        }
        _ if tokens.admits_any() && build => Some(p.value()?),
        _ if tokens.admits_any() => {
            p.skip_value()?;
            None
        }
        _ => return Err(Miss::Invalid),
    })
}

/// The list at the parser, element by element.
fn read_elements(
    elements: &Elements,
    elem: &TypeSpec,
    state: &mut ListState,
    interp: &Rc<Interp>,
    p: &mut Parser,
) -> Checking {
    state.clear_rows();
    p.open()?;
    if p.peek_token()? != b']' {
        loop {
            if p.peek_token()? == b'n' {
                p.literal("null", ())?;
                if !elements.admits_null {
                    return Err(Miss::Invalid);
                }
                if state.rows.is_some() {
                    // A null element is no row: the ordinary path
                    // runs the rules over it.
                    return Err(Miss::Unsure);
                }
            } else {
                check_value(&elements.how, elem, &mut state.elements, interp, p, false)?;
                state.keep_row();
            }
            match p.peek_token()? {
                b',' => p.bump(),
                b']' => break,
                _ => return Err(Miss::Invalid),
            }
        }
    }
    p.close();
    Ok(())
}

/// What `validate` would make of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// `ok`, with no warnings.
    Valid,
    /// `err`.
    Invalid,
    /// Only the ordinary path can tell (a warning, a repeated key, a
    /// default or check that may raise an error).
    Unsure,
}

/// Why a line is not (yet) known to be valid.
enum Miss {
    /// `validate` fails it: it breaks a rule, has a field of the wrong
    /// type, or is not JSON. Certain when nothing in the contract can
    /// raise a runtime error instead (see `cannot_raise`).
    Invalid,
    Unsure,
    /// The record is valid but a warning fired: the ordinary path names
    /// it. Unsure, except that a line whose object is followed by more
    /// than whitespace does not decode (see `LineCheck::judge`).
    Warned,
}

type Checking = Result<(), Miss>;

/// A field whose value starts at `start` failed. That fails the record
/// unless the key comes again later in the same object, whose value would
/// count instead: read on to the object's end to tell.
fn settle(miss: Miss, p: &mut Parser, start: Mark, name: &str) -> Miss {
    if let Miss::Unsure | Miss::Warned = miss {
        return Miss::Unsure;
    }
    p.rewind(start);
    let named_again = |p: &mut Parser| -> Parsed<bool> {
        p.skip_value()?;
        while p.peek_token()? == b',' {
            p.bump();
            if p.peek_token()? != b'"' {
                return Ok(false);
            }
            if p.string()? == name {
                return Ok(true);
            }
            p.colon()?;
            p.skip_value()?;
        }
        Ok(false)
    };
    match named_again(p) {
        Ok(true) => Miss::Unsure,
        // Malformed further on: the line does not decode, which fails too.
        _ => Miss::Invalid,
    }
}

/// JSON that does not decode fails validation.
impl From<crate::runtime::json::Fault> for Miss {
    fn from(_: crate::runtime::json::Fault) -> Miss {
        Miss::Invalid
    }
}

/// The key at the parser and its `:`, as the position of its declared
/// field (`None` for an undeclared one, whose name goes to `name` when that
/// is given). Written with no escapes, a key is found by its bytes: first
/// the field after the one before (`next`), then the undeclared keys seen
/// before, then any field of a small record; lines of one file tend to keep
/// one order and one set of extra fields, and comparing bytes is cheaper
/// than hashing them. Inlined into each reader: it runs once a key, and a
/// call here costs the count path several percent.
#[inline(always)]
fn key(
    p: &mut Parser,
    record: &RecordShape,
    checks: &[FieldStep],
    (extras, visit): (&mut Vec<(Key, u32)>, u32),
    next: usize,
    name: Option<&mut Option<Key>>,
) -> Result<Option<usize>, Miss> {
    if p.peek_token()? != b'"' {
        return Err(Miss::Invalid);
    }
    let plain = |p: &mut Parser, i: usize| match checks.get(i) {
        Some(c) => c.plain_name && p.eat_plain_string(c.name.as_bytes()),
        None => false,
    };
    let few = checks.len() <= FEW_FIELDS;
    let found = if plain(p, next) {
        Some(next)
    } else if let Some((e, seen)) = extras
        .iter_mut()
        .find(|(e, _)| p.eat_plain_string(e.as_bytes()))
    {
        // The same undeclared key twice in one object.
        p.keys_unchecked |= *seen == visit;
        *seen = visit;
        if let Some(name) = name {
            *name = Some(e.clone());
        }
        None
    } else if let Some(i) = (0..checks.len()).find(|&i| few && plain(p, i)) {
        Some(i)
    } else {
        let text = p.string()?;
        let i = record.index.get(&*text).map(|&i| i as usize);
        if i.is_none() {
            let key = Key::from(&*text);
            if extras.len() < MAX_EXTRAS && is_plain(&text) {
                extras.push((key.clone(), visit));
            } else {
                // Not remembered, so a repeat of it would go unseen.
                p.keys_unchecked = true;
            }
            if let Some(name) = name {
                *name = Some(key);
            }
        }
        i
    };
    p.colon()?;
    Ok(found)
}

/// Does JSON text hold a byte that compact text may spell otherwise:
/// whitespace (between tokens, or in a string: either way it is not
/// simply copied) or a backslash?
fn has_space_or_escape(text: &[u8]) -> bool {
    memchr::memchr3(b' ', b'\\', b'\t', text).is_some()
        || memchr::memchr2(b'\r', b'\n', text).is_some()
}

/// Up to how many fields a key is looked for by its bytes in every
/// field before it is hashed.
const FEW_FIELDS: usize = 16;

/// How many undeclared keys a check remembers.
const MAX_EXTRAS: usize = 32;

/// The value of a field after `check_field`, when it is clean.
fn checked(interp: &Rc<Interp>, spec: &FieldSpec, v: Value) -> Result<Value, Miss> {
    match check_field(interp, spec, v) {
        Ok(Checked::Clean(v)) => Ok(v),
        Ok(Checked::Failed) => Err(Miss::Invalid),
        Ok(Checked::Warned) | Err(_) => Err(Miss::Unsure),
    }
}
