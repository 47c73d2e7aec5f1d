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

use regex::Regex;

use crate::runtime::contract::{Contract, FieldSpec, RecordShape, RuleSpec, Shape, TypeSpec};
use crate::runtime::decide::{self, FailureKind};
use crate::runtime::eval::io::Cell;
use crate::runtime::eval::{push_frame, Env, Frame, Function, Interp, Slots};
use crate::runtime::hir::Expr;
use crate::runtime::json::{write_compact, Decoder, Mark, Parsed, Parser};
use crate::runtime::kernel::{Lists, Reads, Rows};
use crate::runtime::stdlib_native::Native;
use crate::runtime::validate::{check_field, type_matches, Checked, Findings, KeyPart};
use crate::runtime::value::{Key, Okay, Record, Value};
use crate::syntax::ast::Severity;

/// Nested records and lists deeper than this are checked the ordinary way
/// (this also bounds the compiling of a recursive type).
const MAX_NESTING: usize = 6;

/// A record contract compiled for checking lines.
pub struct LineCheck {
    top: RecordCheck,
    /// Is a line that fails certainly an `err` (see `cannot_raise`)?
    pub(crate) certain: bool,
    /// Does validating leave every record as it was read (no defaults to
    /// fill, at any depth)?
    keeps_records: bool,
    /// The fields of the record `validated` builds, reused.
    built: Vec<(Key, Value)>,
    /// Is it a record of scalar fields whose validation cannot raise? A
    /// failure's identity and the field it is found at then fix all of it
    /// (see `found_at`).
    pub(crate) flat: bool,
    /// Can `findings` name every failure (a record whose validation cannot
    /// raise, of scalars, records and lists checked on their tokens)?
    pub(crate) names: bool,
    decoder: Decoder,
}

/// One record shape, compiled: its fields, and the state of the record
/// being read.
struct RecordCheck {
    shape: Held,
    /// The name undeclared fields are named after (`decide::extra_id`).
    owner: Rc<str>,
    fields: Vec<FieldCheck>,
    /// Does `validate` evaluate the warnings here (a declared type's
    /// record, not an inline one)?
    warns: bool,
    /// Per field, the visit it was last seen on (to spot repeated keys).
    seen: Vec<u32>,
    visit: u32,
    /// Undeclared keys seen so far (see `key`), each with the visit it
    /// was last seen on.
    extras: Vec<(Key, u32)>,
    /// Per field, whether it failed in the record being read (`findings`).
    failed: Vec<bool>,
    /// Per failure `findings` found, the field it was found at (its
    /// position + 1), or `AFTER_FIELDS` for an undeclared field (whose
    /// identity names it) and `AFTER_EXTRAS` for a rule.
    found_at: Vec<u32>,
    /// The rules' frame: slot 0 is `self` (never read: see `new`), then
    /// each field. Reused from record to record while nothing else holds it.
    env: Env,
    /// The top-level string fields read only for a unique key, whose text
    /// is kept in place of a built value (`LineCheck::key_part`).
    key_texts: Vec<KeyText>,
}

/// A string field's text kept for a unique key, and the visit it was kept
/// on.
struct KeyText {
    text: String,
    visit: u32,
}

/// How one declared field is checked.
struct FieldCheck {
    how: How,
    /// Does a rule read the field (its value goes into the frame)?
    read: bool,
    admits_null: bool,
    /// Can the name be compared with a key's bytes (`is_plain`)?
    plain_name: bool,
    /// The identity of the field's type failure (its own, or that of the
    /// refinement it is declared as).
    type_id: Rc<str>,
    /// Where its text is kept, for a string field read only for a unique
    /// key (`RecordCheck::key_texts`).
    key_text: Option<usize>,
}

/// How a value is checked.
enum How {
    /// By its token: scalars.
    Tokens(Tokens),
    /// As a record, field by field.
    Record(Box<RecordCheck>),
    /// As a list, element by element.
    List(Box<Elements>),
    /// Decoded, then checked as `validate` checks it (a field only).
    Value,
}

/// The elements of a list type.
struct Elements {
    how: How,
    /// The identity of an element's type failure.
    type_id: Rc<str>,
    /// Does the element type admit null? (Elements have no null step of
    /// their own: null is checked against the type like any value.)
    admits_null: bool,
    /// The elements' frames, kept for the rules when they only fold over
    /// the list (`keep_rows`): the frame then holds `rows_mark`, not a
    /// built list.
    rows: Option<RowBuf>,
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

impl Elements {
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
        if let (Some(rows), How::Record(record)) = (&mut self.rows, &self.how) {
            rows.cells.extend_from_slice(record.field_slots());
            rows.len += 1;
        }
    }
}

impl How {
    /// For a list kept as rows for the rules, what the frame holds in its
    /// place (the rows' mark): the list is not built.
    fn rows_mark(&self) -> Option<Value> {
        match self {
            How::List(elements) => elements.rows.as_ref().map(|r| Value::List(r.mark.clone())),
            _ => None,
        }
    }
}

/// A record shape, held through what owns it.
enum Held {
    Declared(Rc<Contract>),
    Inline(Rc<RecordShape>),
}

impl Held {
    fn get(&self) -> Option<&RecordShape> {
        match self {
            Held::Declared(c) => c.record(),
            Held::Inline(shape) => Some(shape),
        }
    }
}

impl How {
    /// How values of `spec` are checked without decoding them, if they can
    /// be. `type_id` is the identity of a type failure of the field they
    /// are held in (an inline record is named after it too).
    fn of(spec: &TypeSpec, depth: usize, type_id: &Rc<str>, interp: &Interp) -> Option<How> {
        if let Some(tokens) = Tokens::of(spec, interp) {
            return Some(How::Tokens(tokens));
        }
        if depth >= MAX_NESTING {
            return None;
        }
        match spec {
            TypeSpec::Record(shape) => {
                let owner = type_id.strip_suffix(".type").unwrap_or(type_id).into();
                RecordCheck::new(Held::Inline(shape.clone()), owner, false, depth + 1, interp)
                    .map(|r| How::Record(Box::new(r)))
            }
            TypeSpec::List(elem) => {
                let how = How::of(elem, depth + 1, type_id, interp)?;
                Some(How::List(Box::new(Elements {
                    how,
                    type_id: type_id.clone(),
                    admits_null: type_matches(elem, &Value::Null),
                    rows: None,
                })))
            }
            TypeSpec::Named(cell) => match &cell.get()?.shape {
                Shape::Record { .. } => {
                    let contract = cell.get()?.clone();
                    let owner = contract.name.as_str().into();
                    RecordCheck::new(Held::Declared(contract), owner, true, depth + 1, interp)
                        .map(|r| How::Record(Box::new(r)))
                }
                Shape::Refined { base, rules, .. } if rules.is_empty() => {
                    How::of(base, depth, type_id, interp)
                }
                Shape::Refined { .. } => None,
            },
            _ => None,
        }
    }
}

/// The JSON tokens a scalar type admits (null is `FieldCheck::admits_null`):
/// its union members in order, since a value is checked against the first
/// member whose type it has (language.md §4.8).
struct Tokens {
    members: Vec<Member>,
}

enum Member {
    Any,
    Bool,
    Int,
    Number,
    String,
    /// A string literal type: `"open"`.
    Literal(Box<str>),
    /// A `String` refined by rules that test it alone — `require
    /// matches(self, r"…")`, or a call of a standard-library function with
    /// a native twin such as `require is_timestamp(self)` — with their
    /// identities.
    Matching(Vec<(Test, Rc<str>)>),
}

/// A refinement's rule over a string, decided on the string.
enum Test {
    Pattern(Rc<Regex>),
    /// The native twin of the function the rule calls
    /// (`runtime::stdlib_native`), which gives what its body gives.
    Native(Native),
}

impl Test {
    fn holds(&self, s: &str) -> bool {
        match self {
            Test::Pattern(regex) => regex.is_match(s),
            Test::Native(native) => native.test_text(s) == Some(true),
        }
    }
}

impl Tokens {
    /// The tokens of `spec`, when checking the token is all its validation
    /// does: no rules but tests of the string, no nested records or lists.
    fn of(spec: &TypeSpec, interp: &Interp) -> Option<Tokens> {
        let mut members = Vec::new();
        flatten(spec, &mut members, interp).then_some(Tokens { members })
    }

    fn admits_string(&self, s: &str) -> bool {
        self.members.iter().find_map(|m| match m {
            Member::Any | Member::String => Some(true),
            Member::Literal(l) if **l == *s => Some(true),
            Member::Matching(tests) => Some(tests.iter().all(|(t, _)| t.holds(s))),
            _ => None,
        }) == Some(true)
    }

    /// The rules a string breaks (none when it passes); `None` when no
    /// member has its type.
    fn string_breaks(&self, s: &str) -> Option<Vec<Rc<str>>> {
        self.members.iter().find_map(|m| match m {
            Member::Any | Member::String => Some(Vec::new()),
            Member::Literal(l) if **l == *s => Some(Vec::new()),
            Member::Matching(tests) => Some(
                tests
                    .iter()
                    .filter(|(t, _)| !t.holds(s))
                    .map(|(_, id)| id.clone())
                    .collect(),
            ),
            _ => None,
        })
    }

    fn admits_number(&self, text: &str) -> bool {
        self.admits_numeric(!text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')))
    }

    /// Does a member admit a number, an integer (`int`) or not?
    fn admits_numeric(&self, int: bool) -> bool {
        self.members
            .iter()
            .any(|m| matches!(m, Member::Any | Member::Number) || matches!(m, Member::Int if int))
    }

    fn admits_bool(&self) -> bool {
        self.members
            .iter()
            .any(|m| matches!(m, Member::Any | Member::Bool))
    }

    fn admits_any(&self) -> bool {
        self.members.iter().any(|m| matches!(m, Member::Any))
    }
}

/// Appends the members of `spec` in order; false when one is not decided
/// by its token.
fn flatten(spec: &TypeSpec, members: &mut Vec<Member>, interp: &Interp) -> bool {
    let member = match spec {
        TypeSpec::Null => return true,
        TypeSpec::Any => Member::Any,
        TypeSpec::Bool => Member::Bool,
        TypeSpec::Int => Member::Int,
        TypeSpec::Float => Member::Number,
        TypeSpec::String => Member::String,
        TypeSpec::Literal(Value::Str(s)) => Member::Literal(s.as_str().into()),
        TypeSpec::Union(ms) => return ms.iter().all(|m| flatten(m, members, interp)),
        TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
            Some(Shape::Refined { base, rules, .. }) if rules.is_empty() => {
                return flatten(base, members, interp)
            }
            Some(Shape::Refined {
                base: TypeSpec::String,
                rules,
                ..
            }) => match rules.iter().map(|r| string_test(r, interp)).collect() {
                Some(tests) => Member::Matching(tests),
                None => return false,
            },
            _ => return false,
        },
        TypeSpec::Literal(_) | TypeSpec::List(_) | TypeSpec::Map(_) | TypeSpec::Record(_) => {
            return false
        }
    };
    members.push(member);
    true
}

/// The test of a `require` rule that tests a string alone, with its
/// identity: `matches(self, r"…")`, or a call `f(self)` of a function with
/// a native twin for a string.
fn string_test(rule: &RuleSpec, interp: &Interp) -> Option<(Test, Rc<str>)> {
    if rule.severity != Severity::Require {
        return None;
    }
    let is_self = |e: &Expr| matches!(e, Expr::Local { depth: 0, slot: 0 });
    let test = match &rule.cond {
        Expr::Matches { subject, regex, .. } if is_self(subject) => Test::Pattern(regex.clone()),
        Expr::Call { func, args, .. } if matches!(&args[..], [arg] if is_self(arg)) => {
            let Expr::Global(slot, _) = **func else {
                return None;
            };
            let Some(Value::Func(f)) = interp.global_value(slot) else {
                return None;
            };
            match &*f {
                Function::Decl(def) => match def.native {
                    Some(native) if native.test_text("").is_some() => Test::Native(native),
                    _ => return None,
                },
                _ => return None,
            }
        }
        _ => return None,
    };
    Some((test, rule.id.clone()))
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
        let record = contract.record()?;
        Some(LineCheck {
            certain: cannot_raise(record, 0),
            keeps_records: every_field(record, 0, &|f| f.default.is_none()),
            built: Vec::new(),
            flat: false,
            names: false,
            top: RecordCheck::new(
                Held::Declared(contract.clone()),
                contract.name.as_str().into(),
                true,
                0,
                interp,
            )?,
            decoder: Decoder::new(),
        })
        .map(|mut check| {
            check.flat = check.certain
                && check
                    .top
                    .fields
                    .iter()
                    .all(|f| matches!(f.how, How::Tokens(_)));
            check.names = check.certain && check.top.names_failures();
            check
        })
    }

    /// The rule and kind of every failure and warning `validate` would find
    /// in `line`, as [`crate::runtime::validate::findings`] gives them, when they can
    /// be told without building the record; `None` when the ordinary path
    /// must tell (the line does not decode or repeats a key, or the
    /// contract has defaults or checks, or a field whose value is decoded
    /// to be checked).
    pub fn findings(&mut self, interp: &Rc<Interp>, line: &[u8]) -> Option<Findings> {
        if !self.names {
            return None;
        }
        let mut p = object(line, &mut self.decoder)?;
        let mut found = Findings {
            failures: Vec::new(),
            warnings: Vec::new(),
        };
        self.top.find(interp, &mut p, &mut found).ok()?;
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
        if !self.keeps_records {
            return None;
        }
        let mut p = object(line, &mut self.decoder)?;
        let mut fields = std::mem::take(&mut self.built);
        fields.clear();
        let read = self.top.read::<false>(interp, &mut p, Some(&mut fields));
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
        match top.fields[position].key_text.map(|k| &top.key_texts[k]) {
            Some(kept) if kept.visit == top.visit => KeyPart::Text(&kept.text),
            _ => KeyPart::Value(&self.top_slots()[position + 1]),
        }
    }

    /// Does validating leave every record as it was read, so that
    /// `validated` can build it?
    pub fn keeps_records(&self) -> bool {
        self.keeps_records
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
        if !self.keeps_records {
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
        let mut p = Parser::new(line, &mut self.decoder);
        let outcome = match p.peek_token() {
            Ok(b'{') => match self.top.read_top(interp, &mut p) {
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
        let outcome = self.top.read_cells(interp, cells, undeclared);
        self.verdict_of(outcome)
    }

    fn verdict_of(&self, outcome: Checking) -> Verdict {
        match outcome {
            Ok(()) => Verdict::Valid,
            Err(Miss::Invalid) if self.certain => Verdict::Invalid,
            Err(_) => Verdict::Unsure,
        }
    }
}

impl RecordCheck {
    /// `None` when a rule reads `self` whole: the frame would need the
    /// record itself.
    fn new(
        held: Held,
        owner: Rc<str>,
        warns: bool,
        depth: usize,
        interp: &Interp,
    ) -> Option<RecordCheck> {
        let shape = held.get()?;
        let rules = || shape.rules.iter().chain(&shape.warns);
        if rules().any(|r| r.reads_self) {
            return None;
        }
        let mut read = vec![false; shape.fields.len()];
        for &slot in rules().flat_map(|r| &r.slots) {
            read[slot as usize] = true;
        }
        // The top record's unique keys are claimed from the frame, or
        // from the text of a string field no rule reads (`key_part`).
        let mut key_only = vec![false; shape.fields.len()];
        if depth == 0 {
            for &slot in shape.uniques.iter().flat_map(|u| &u.slots) {
                key_only[slot as usize] = !read[slot as usize];
                read[slot as usize] = true;
            }
        }
        let mut fields: Vec<FieldCheck> = shape
            .fields
            .iter()
            .zip(read)
            .map(|(f, read)| {
                // A record or list a rule reads is checked, then decoded:
                // unless nested defaults would change it on the way.
                let type_id = f.ids.type_.clone();
                let how = match How::of(&f.ty, depth, &type_id, interp) {
                    _ if !f.checks.is_empty() => How::Value,
                    Some(How::Tokens(t)) => How::Tokens(t),
                    Some(how) if !read || type_cannot_raise(&f.ty, depth) => how,
                    _ => How::Value,
                };
                FieldCheck {
                    how,
                    read,
                    admits_null: f.ty.admits_null(),
                    plain_name: is_plain(&f.name),
                    type_id,
                    key_text: None,
                }
            })
            .collect();
        keep_rows(shape, depth, &mut fields);
        let mut key_texts = Vec::new();
        for (field, key_only) in fields.iter_mut().zip(key_only) {
            if key_only && matches!(field.how, How::Tokens(_)) {
                field.key_text = Some(key_texts.len());
                key_texts.push(KeyText {
                    text: String::new(),
                    visit: 0,
                });
            }
        }
        let n = shape.fields.len();
        let slots: Slots = std::iter::repeat_n(Value::Absent, n + 1).collect();
        Some(RecordCheck {
            shape: held,
            owner,
            fields,
            warns,
            seen: vec![0; n],
            visit: 0,
            extras: Vec::new(),
            failed: vec![false; n],
            found_at: Vec::new(),
            env: push_frame(&None, slots),
            key_texts,
        })
    }

    /// `read` of the top record: its unique keys' texts kept, if any.
    fn read_top(&mut self, interp: &Rc<Interp>, p: &mut Parser) -> Checking {
        match self.key_texts.is_empty() {
            true => self.read::<false>(interp, p, None),
            false => self.read::<true>(interp, p, None),
        }
    }

    /// The frame's field slots (from 1) after `read`.
    fn field_slots(&self) -> &[Value] {
        self.env.as_ref().map(|f| &f.slots[1..]).unwrap_or(&[])
    }

    /// Steps 2–5 (and 7 for a declared type) of §4.8 for the object at the
    /// parser: every field present is checked and those the rules read are
    /// put in the frame, then the rules run. With `out`, the record's
    /// fields are built into it as they are read.
    fn read<const KEYS: bool>(
        &mut self,
        interp: &Rc<Interp>,
        p: &mut Parser,
        mut out: Option<&mut Vec<(Key, Value)>>,
    ) -> Checking {
        let RecordCheck {
            shape: held,
            fields,
            warns,
            seen,
            visit,
            extras,
            env,
            key_texts,
            ..
        } = self;
        let Some(shape) = held.get() else {
            return Err(Miss::Unsure);
        };
        let Some(frame) = env.as_mut() else {
            return Err(Miss::Unsure);
        };
        let slots = start_record(fields, seen, visit, frame);
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
                        if seen[i] == *visit {
                            // A repeated key: the last value counts.
                            return Err(Miss::Unsure);
                        }
                        seen[i] = *visit;
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
                            None => fields[i].check(interp, spec, p, out.is_some()),
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
        left_out(interp, shape, fields, seen, *visit, slots)?;
        run_rules(interp, shape, *warns, env, fields)
    }

    /// Steps 2–5 (and 7) for a record whose fields a format has read and
    /// converted (`LineCheck::verdict_cells`).
    fn read_cells(
        &mut self,
        interp: &Rc<Interp>,
        cells: &[Option<Cell>],
        undeclared: bool,
    ) -> Checking {
        let RecordCheck {
            shape: held,
            fields,
            warns,
            seen,
            visit,
            env,
            ..
        } = self;
        let (Some(shape), Some(frame)) = (held.get(), env.as_mut()) else {
            return Err(Miss::Unsure);
        };
        if undeclared && !shape.open {
            return Err(Miss::Invalid);
        }
        let slots = start_record(fields, seen, visit, frame);
        for (i, cell) in cells.iter().enumerate() {
            let (Some(cell), Some(field)) = (cell, fields.get(i)) else {
                continue;
            };
            seen[i] = *visit;
            if let Some(v) = field.check_cell(cell)? {
                slots[i + 1] = v;
            }
        }
        left_out(interp, shape, fields, seen, *visit, slots)?;
        run_rules(interp, shape, *warns, env, fields)
    }
}

/// Step 4 for the fields a record left out: optional ones stay absent,
/// defaults are filled and checked as `validate` does, and a required
/// field's absence fails.
fn left_out(
    interp: &Rc<Interp>,
    shape: &RecordShape,
    fields: &[FieldCheck],
    seen: &[u32],
    visit: u32,
    slots: &mut Slots,
) -> Checking {
    for (i, spec) in shape.fields.iter().enumerate() {
        if seen[i] == visit {
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

impl RecordCheck {
    /// Steps 2–7 of §4.8 for the object at the parser, appending every
    /// failure to `found` in the order `validate` names them (and, for a
    /// declared type while there is no failure, its warnings). A
    /// malformed object or a repeated key is `Err`: the ordinary path
    /// decides those.
    fn find(&mut self, interp: &Rc<Interp>, p: &mut Parser, found: &mut Findings) -> Parsed<()> {
        let RecordCheck {
            shape: held,
            owner,
            fields,
            warns,
            seen,
            visit,
            extras,
            env,
            failed,
            found_at,
            ..
        } = self;
        let (Some(shape), Some(frame)) = (held.get(), env.as_mut()) else {
            return Err(p.give_up());
        };
        let slots = start_record(fields, seen, visit, frame);
        let start = found.failures.len();
        found_at.clear();
        failed.fill(false);
        p.open()?;
        let mut next = 0;
        if p.peek_token()? != b'}' {
            loop {
                let mut name = None;
                let i = key(p, shape, fields, (extras, *visit), next, Some(&mut name))
                    .map_err(|_| p.give_up())?;
                match i {
                    Some(i) => {
                        if seen[i] == *visit {
                            return Err(p.give_up());
                        }
                        seen[i] = *visit;
                        let before = found.failures.len();
                        let null_id = &shape.fields[i].ids.null;
                        if let Some(v) = fields[i].find(interp, null_id, p, found)? {
                            if fields[i].read {
                                slots[i + 1] = v;
                            }
                        }
                        failed[i] = found.failures.len() > before;
                        found_at.resize(found.failures.len() - start, i as u32 + 1);
                        next = i + 1;
                    }
                    None if shape.open => p.skip_value()?,
                    None => {
                        let name = name.map(|n| n.to_string()).unwrap_or_default();
                        let rule = decide::extra_id(owner, &name);
                        if found.failures[start..].iter().any(|(r, _)| *r == rule) {
                            // A repeated key is one field to `validate`.
                            return Err(p.give_up());
                        }
                        found.failures.push((rule, FailureKind::Extra));
                        found_at.push(AFTER_FIELDS);
                        p.skip_value()?;
                    }
                }
                match p.peek_token()? {
                    b',' => p.bump(),
                    b'}' => break,
                    _ => return Err(p.give_up()),
                }
            }
        }
        p.close();
        for (i, spec) in shape.fields.iter().enumerate() {
            if seen[i] != *visit && !spec.optional {
                failed[i] = true;
                found
                    .failures
                    .push((spec.ids.missing.clone(), FailureKind::Missing));
                found_at.push(i as u32 + 1);
            }
        }
        let lists = FieldLists { fields, env };
        let outcome = |r: &RuleSpec| {
            let kind = decide::kind_of(r, r.kernel(Some(shape)).run(interp, env, &lists))?;
            Some((r.id.clone(), kind))
        };
        for rule in &shape.rules {
            if !decide::skipped(rule, failed) {
                found.failures.extend(outcome(rule));
            }
        }
        found_at.resize(found.failures.len() - start, AFTER_EXTRAS);
        in_validate_order(&mut found.failures[start..], found_at);
        if *warns && decide::warns(found.failures.len()) {
            let warned = shape.warns.iter().filter_map(outcome);
            found.warnings.extend(warned);
        }
        Ok(())
    }

    /// Can `find` name every failure of this record's values?
    fn names_failures(&self) -> bool {
        self.fields.iter().all(|f| f.how.names_failures())
    }
}

impl Elements {
    /// Step 3 for each element of the list at the parser, naming what
    /// fails into `found`.
    fn find(&mut self, interp: &Rc<Interp>, p: &mut Parser, found: &mut Findings) -> Parsed<()> {
        self.clear_rows();
        p.open()?;
        if p.peek_token()? != b']' {
            loop {
                if self.rows.is_some() && self.admits_null && p.peek_token()? == b'n' {
                    // A null element that passes is no row: the ordinary
                    // path runs the rules over it. (One that fails fails
                    // the list, and no rule reads a failed field.)
                    return Err(p.give_up());
                }
                match &mut self.how {
                    How::Tokens(tokens) => {
                        match judge(tokens, self.admits_null, false, &self.type_id, p)? {
                            Judged::Passed(_) => {}
                            Judged::Broke(ids) => found.failures.extend(ids),
                            // An element has no null step: null is a value
                            // of the wrong type.
                            Judged::Null => found
                                .failures
                                .push((self.type_id.clone(), FailureKind::Type)),
                        }
                    }
                    _ if p.peek_token()? == b'n' => {
                        p.literal("null", ())?;
                        if !self.admits_null {
                            found
                                .failures
                                .push((self.type_id.clone(), FailureKind::Type));
                        }
                    }
                    how => how.find(interp, &self.type_id, p, found)?,
                }
                self.keep_row();
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
}

/// Where `findings` puts the failure of an undeclared field, and of a
/// rule: after every declared field's.
const AFTER_FIELDS: u32 = u32::MAX - 1;
const AFTER_EXTRAS: u32 = u32::MAX;

/// Put a record's failures, found in the order of its keys, in the order
/// `validate` names them: field by field as declared, then undeclared
/// fields (in the order of the keys), then rules. `at` is each failure's
/// place in that order (`found_at`), sorted with it.
fn in_validate_order(failures: &mut [(Rc<str>, FailureKind)], at: &mut [u32]) {
    if at.is_sorted() {
        return;
    }
    let mut paired: Vec<_> = at.iter().copied().zip(failures.iter().cloned()).collect();
    paired.sort_by_key(|(place, _)| *place);
    for ((place, failure), (at, slot)) in paired.into_iter().zip(at.iter_mut().zip(failures)) {
        *at = place;
        *slot = failure;
    }
}

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

impl FieldCheck {
    /// Step 3 for one field's value (not missing), naming what fails into
    /// `found`: a scalar on its token, a record or list level by level.
    /// Returns the value when a rule reads it and it passed.
    fn find(
        &mut self,
        interp: &Rc<Interp>,
        null_id: &Rc<str>,
        p: &mut Parser,
        found: &mut Findings,
    ) -> Parsed<Option<Value>> {
        let start = p.mark();
        let before = found.failures.len();
        match &mut self.how {
            How::Tokens(tokens) => {
                match judge(tokens, self.admits_null, self.read, &self.type_id, p)? {
                    Judged::Passed(v) => return Ok(Some(v)),
                    Judged::Broke(ids) => found.failures.extend(ids),
                    Judged::Null => found.failures.push((null_id.clone(), FailureKind::Null)),
                }
                return Ok(None);
            }
            How::Value => return Err(p.give_up()),
            _ if p.peek_token()? == b'n' => {
                p.literal("null", ())?;
                if self.admits_null {
                    return Ok(Some(Value::Null));
                }
                found.failures.push((null_id.clone(), FailureKind::Null));
            }
            how => how.find(interp, &self.type_id, p, found)?,
        }
        if self.read && found.failures.len() == before {
            if let Some(mark) = self.how.rows_mark() {
                return Ok(Some(mark));
            }
            // Checked in place; now read again for the rules.
            p.rewind(start);
            return Ok(Some(p.value()?));
        }
        Ok(None)
    }
}

impl How {
    /// Step 3 for a record or list value (null aside), naming what fails
    /// into `found`; a value of another kind is a type failure `type_id`.
    fn find(
        &mut self,
        interp: &Rc<Interp>,
        type_id: &Rc<str>,
        p: &mut Parser,
        found: &mut Findings,
    ) -> Parsed<()> {
        let byte = p.peek_token()?;
        match self {
            How::Record(record) if byte == b'{' => record.find(interp, p, found),
            How::List(elements) if byte == b'[' => elements.find(interp, p, found),
            How::Record(_) | How::List(_) => {
                p.skip_value()?;
                found.failures.push((type_id.clone(), FailureKind::Type));
                Ok(())
            }
            How::Tokens(_) | How::Value => Err(p.give_up()),
        }
    }

    /// Can `find` name every failure of a value checked this way?
    fn names_failures(&self) -> bool {
        match self {
            How::Tokens(_) => true,
            How::Record(record) => record.names_failures(),
            How::List(elements) => elements.how.names_failures(),
            How::Value => false,
        }
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
    fields: &[FieldCheck],
    seen: &mut [u32],
    visit: &mut u32,
    frame: &'f mut Rc<Frame>,
) -> &'f mut Slots {
    *visit = visit.wrapping_add(1);
    if *visit == 0 {
        seen.fill(0);
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
/// kept as rows in `fields`. A rule whose kernel bails raised an error, so
/// it fails (`eval`). A warning is left to the ordinary path, which names it.
fn run_rules(
    interp: &Rc<Interp>,
    shape: &RecordShape,
    warns: bool,
    env: &Env,
    fields: &[FieldCheck],
) -> Checking {
    let lists = FieldLists { fields, env };
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
    fields: &'a [FieldCheck],
    env: &'a Env,
}

impl Lists for FieldLists<'_> {
    fn rows(&self, slot: u32) -> Option<Rows<'_>> {
        let i = (slot as usize).checked_sub(1)?;
        let How::List(elements) = &self.fields.get(i)?.how else {
            return None;
        };
        let buf = elements.rows.as_ref()?;
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

/// Keep as rows each list of records the rules read only by folding over
/// it, reading only scalar fields of its elements: the list is then
/// checked on its tokens and never built.
fn keep_rows(shape: &RecordShape, depth: usize, fields: &mut [FieldCheck]) {
    let mut reads = Reads::default();
    for r in shape.rules.iter().chain(&shape.warns) {
        r.kernel(Some(shape)).reads(&mut reads);
    }
    for (i, field) in fields.iter_mut().enumerate() {
        let slot = i as u32 + 1;
        let folds: Vec<&Vec<u32>> = reads
            .folded
            .iter()
            .filter(|(list, _)| *list == slot)
            .map(|(_, positions)| positions)
            .collect();
        // The top record's unique keys are claimed from the frame.
        let unique = depth == 0 && shape.uniques.iter().any(|u| u.slots.contains(&(i as u32)));
        if folds.is_empty() || unique || reads.whole.contains(&slot) || reads.opaque.contains(&slot)
        {
            continue;
        }
        let How::List(elements) = &mut field.how else {
            continue;
        };
        let How::Record(record) = &mut elements.how else {
            continue;
        };
        let positions = || folds.iter().flat_map(|p| p.iter()).map(|&j| j as usize);
        let scalar = |j: usize| {
            record
                .fields
                .get(j)
                .is_some_and(|f| matches!(f.how, How::Tokens(_)))
        };
        if !positions().all(scalar) {
            continue;
        }
        for j in positions() {
            record.fields[j].read = true;
        }
        elements.rows = Some(RowBuf {
            cells: Vec::new(),
            len: 0,
            width: record.fields.len(),
            mark: Rc::new(Vec::new()),
        });
    }
}

impl FieldCheck {
    /// Step 3 for one field's value: null and type, then its checks.
    /// Returns the value when a rule reads it or `build` asks for it.
    #[inline(always)]
    fn check(
        &mut self,
        interp: &Rc<Interp>,
        spec: &FieldSpec,
        p: &mut Parser,
        build: bool,
    ) -> Result<Option<Value>, Miss> {
        let wanted = build;
        let build = build || self.read;
        if p.peek_token()? == b'n' {
            p.literal("null", ())?;
            if !self.admits_null {
                return Err(Miss::Invalid);
            }
            return Ok(build.then_some(Value::Null));
        }
        if let How::Value = self.how {
            // Rules, `validate … with`, values a rule reads: decode the
            // value, check it as `validate` does.
            return checked(interp, spec, p.value()?).map(Some);
        }
        let start = p.mark();
        let value = self.how.check(interp, p, build)?;
        if build && matches!(self.how, How::Record(_) | How::List(_)) {
            if let (false, Some(mark)) = (wanted, self.how.rows_mark()) {
                return Ok(Some(mark));
            }
            // Checked in place; now read again to be built.
            p.rewind(start);
            return Ok(Some(p.value()?));
        }
        Ok(value)
    }
}

impl FieldCheck {
    /// Step 3 for one field's value as a format converted it; returns the
    /// value when a rule reads it. Only scalars are checked here.
    fn check_cell(&self, cell: &Cell) -> Result<Option<Value>, Miss> {
        let How::Tokens(tokens) = &self.how else {
            return Err(Miss::Unsure);
        };
        let admitted = match cell {
            Cell::Null => self.admits_null,
            Cell::Text(s) => tokens.admits_string(s),
            Cell::Int(_) | Cell::Big(_) => tokens.admits_numeric(true),
            Cell::Float(_) | Cell::Decimal(_) => tokens.admits_numeric(false),
            Cell::Bool(_) => tokens.admits_bool(),
            Cell::Nested(_) => return Err(Miss::Unsure),
        };
        if !admitted {
            return Err(Miss::Invalid);
        }
        Ok(self.read.then(|| cell.to_value()))
    }
}

impl How {
    /// Check the value at the parser (not null); with `build`, return it.
    fn check(
        &mut self,
        interp: &Rc<Interp>,
        p: &mut Parser,
        build: bool,
    ) -> Result<Option<Value>, Miss> {
        let byte = p.peek_token()?;
        let tokens = match self {
            How::Tokens(tokens) => tokens,
            How::Record(record) if byte == b'{' => {
                // A nested record's warning leaves the line undecided
                // before the rest of it is read.
                return record
                    .read::<false>(interp, p, None)
                    .map(|()| None)
                    .map_err(|miss| match miss {
                        Miss::Warned => Miss::Unsure,
                        miss => miss,
                    });
            }
            How::List(elements) if byte == b'[' => return elements.read(interp, p).map(|()| None),
            _ => return Err(Miss::Invalid),
        };
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
}

impl Elements {
    /// The list at the parser, element by element.
    fn read(&mut self, interp: &Rc<Interp>, p: &mut Parser) -> Checking {
        self.clear_rows();
        p.open()?;
        if p.peek_token()? != b']' {
            loop {
                if p.peek_token()? == b'n' {
                    p.literal("null", ())?;
                    if !self.admits_null {
                        return Err(Miss::Invalid);
                    }
                    if self.rows.is_some() {
                        // A null element is no row: the ordinary path
                        // runs the rules over it.
                        return Err(Miss::Unsure);
                    }
                } else {
                    self.how.check(interp, p, false)?;
                    self.keep_row();
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

/// Can validating against `record` only ever give `ok` or `err`? Defaults
/// and `validate … with` checks evaluate code that may raise a runtime
/// error, which stops the program instead.
fn cannot_raise(record: &RecordShape, depth: usize) -> bool {
    every_field(record, depth, &|f| {
        f.default.is_none() && f.checks.is_empty()
    })
}

fn type_cannot_raise(spec: &TypeSpec, depth: usize) -> bool {
    every_field_of(spec, depth, &|f| f.default.is_none() && f.checks.is_empty())
}

/// Does every field of `record`, and of the records its fields hold at any
/// depth, satisfy `test`? A type nested deeper than a few levels (or
/// recursive) counts as failing it.
fn every_field(record: &RecordShape, depth: usize, test: &dyn Fn(&FieldSpec) -> bool) -> bool {
    depth < 8
        && record
            .fields
            .iter()
            .all(|f| test(f) && every_field_of(&f.ty, depth + 1, test))
}

fn every_field_of(spec: &TypeSpec, depth: usize, test: &dyn Fn(&FieldSpec) -> bool) -> bool {
    match spec {
        TypeSpec::List(t) | TypeSpec::Map(t) => every_field_of(t, depth, test),
        TypeSpec::Record(shape) => every_field(shape, depth, test),
        TypeSpec::Union(ms) => ms.iter().all(|m| every_field_of(m, depth, test)),
        TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
            Some(Shape::Record { record, .. }) => every_field(record, depth, test),
            Some(Shape::Refined { base, .. }) => depth < 8 && every_field_of(base, depth + 1, test),
            None => false,
        },
        _ => true,
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
    checks: &[FieldCheck],
    (extras, visit): (&mut Vec<(Key, u32)>, u32),
    next: usize,
    name: Option<&mut Option<Key>>,
) -> Result<Option<usize>, Miss> {
    if p.peek_token()? != b'"' {
        return Err(Miss::Invalid);
    }
    let plain = |p: &mut Parser, i: usize| match (record.fields.get(i), checks.get(i)) {
        (Some(f), Some(c)) => c.plain_name && p.eat_plain_string(f.name.as_bytes()),
        _ => false,
    };
    let few = record.fields.len() <= FEW_FIELDS;
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
    } else if let Some(i) = (0..record.fields.len()).find(|&i| few && plain(p, i)) {
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

/// Is `name` written in JSON as itself between quotes (no character in
/// it needs an escape)? Only then can its bytes be compared with a key's.
fn is_plain(name: &str) -> bool {
    !name.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20)
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
