//! A record contract's validation plan: what each step of language.md
//! §4.8 decides for each declared field, compiled once per contract and
//! kept with it.
//!
//! A plan is a tree of steps that mirrors the contract: each field is
//! checked by its tokens (a scalar, [`Tokens`]: its union members in
//! order, a refinement's string tests compiled once), as a nested record
//! or list level by level, or — where only the value can tell (a map, a
//! refinement whose rules read more than the string, a `validate … with`
//! check, nesting past [`MAX_NESTING`]) — decoded and validated as a
//! value. Each step carries the identities its failures are named by, so
//! every walker that runs the plan names a failure the same way, and the
//! order of the fields in the plan is the order failures are named in.
//!
//! The plan holds no value and no state of a record being read: the
//! walkers (`scan`'s token reader and CSV cells, `validate`'s value
//! walker) keep their own. It holds no `Rc<Contract>` either — a nested
//! declared record is reached again through its field's type
//! ([`nested_shape`]) — so a plan kept inside its contract makes no cycle.

use std::rc::Rc;

use regex::Regex;

use crate::runtime::contract::{
    Contract, FieldSpec, Measure, MeasureSpec, RecordShape, RuleSpec, Shape, TypeSpec,
};
use crate::runtime::eval::{Function, Interp};
use crate::runtime::hir::Expr;
use crate::runtime::kernel::Reads;
use crate::runtime::stdlib_native::Native;
use crate::runtime::value::{Key, Value};
use crate::syntax::ast::Severity;

/// Nested records and lists deeper than this are checked as values (this
/// also bounds the compiling of a recursive type).
pub const MAX_NESTING: usize = 6;

/// The plan of a record contract, as `LineCheck` runs it over lines and
/// rows: its top record's steps, and what the whole contract allows.
pub struct LinePlan {
    pub top: RecordPlan,
    /// Is a record that fails certainly an `err` (see `cannot_raise`)?
    pub certain: bool,
    /// Does validating leave every record as it was read (no defaults to
    /// fill, at any depth)?
    pub keeps_records: bool,
    /// Is it a record of scalar fields whose validation cannot raise? A
    /// failure's identity and the field it is found at then fix all of it.
    pub flat: bool,
    /// Can the token walker name every failure (a record whose validation
    /// cannot raise, of scalars, records and lists checked on their
    /// tokens)?
    pub names: bool,
    /// How many string fields are read only for a unique key, their text
    /// kept in place of a built value (`FieldStep::key_text`).
    pub key_texts: usize,
}

impl LinePlan {
    /// The plan of `contract`, compiled on first use and kept with it;
    /// `None` for a type that is not a record, or whose rules read `self`
    /// whole (a frame of fields cannot hold the record itself).
    pub fn of(contract: &Contract, interp: &Interp) -> Option<Rc<LinePlan>> {
        Self::kept(contract, interp).clone()
    }

    /// The plan as `of` gives it, borrowed from the contract.
    pub fn kept<'c>(contract: &'c Contract, interp: &Interp) -> &'c Option<Rc<LinePlan>> {
        contract
            .plan
            .get_or_init(|| LinePlan::compile(contract, interp).map(Rc::new))
    }

    fn compile(contract: &Contract, interp: &Interp) -> Option<LinePlan> {
        let record = contract.record()?;
        let mut top = RecordPlan::new(record, contract.name.as_str().into(), true, 0, interp)?;
        let mut key_texts = 0;
        for field in &mut top.fields {
            if field.key_only && matches!(field.how, How::Tokens(_)) {
                field.key_text = Some(key_texts);
                key_texts += 1;
            }
        }
        let certain = cannot_raise(record, 0);
        let flat = certain && top.fields.iter().all(|f| matches!(f.how, How::Tokens(_)));
        let names = certain && top.names_failures();
        Some(LinePlan {
            certain,
            keeps_records: every_field(record, 0, &|f| f.default.is_none()),
            flat,
            names,
            key_texts,
            top,
        })
    }
}

/// One record shape's steps: each declared field in order, and the name
/// its undeclared fields are named after.
pub struct RecordPlan {
    /// The name undeclared fields are named after (`decide::extra_id`).
    pub owner: Rc<str>,
    pub fields: Vec<FieldStep>,
    /// Does `validate` judge the warnings here (a declared type's record,
    /// not an inline one)?
    pub warns: bool,
}

/// How one declared field is checked.
pub struct FieldStep {
    /// The field's name, as its key is compared with it.
    pub name: Key,
    pub how: How,
    /// Does a rule read the field (its value goes into the frame)? For the
    /// top record, a unique key's fields are read too.
    pub read: bool,
    /// Is the field read only for a unique key (top record)?
    pub key_only: bool,
    pub admits_null: bool,
    /// Can the name be compared with a key's bytes (`is_plain`)?
    pub plain_name: bool,
    /// The identity of the field's type failure (its own, or that of the
    /// refinement it is declared as).
    pub type_id: Rc<str>,
    /// Where its text is kept, for a string field read only for a unique
    /// key (`LinePlan::key_texts`).
    pub key_text: Option<usize>,
    /// Is it measured by presence or null only (`missing`, `nulls` of a
    /// top-level field no rule reads)? Then whether it was null is noted,
    /// rather than its value kept (`LineCheck::seen`).
    pub measured: bool,
}

/// How a value is checked.
pub enum How {
    /// By its token: scalars.
    Tokens(Tokens),
    /// As a record, field by field.
    Record(Box<RecordPlan>),
    /// As a list, element by element.
    List(Box<Elements>),
    /// Decoded, then checked as `validate` checks a value (a field only).
    Value,
}

/// The elements of a list type.
pub struct Elements {
    pub how: How,
    /// The identity of an element's type failure.
    pub type_id: Rc<str>,
    /// Does the element type admit null? (Elements have no null step of
    /// their own: null is checked against the type like any value.)
    pub admits_null: bool,
    /// Are the elements kept as rows for the rules' folds (`keep_rows`),
    /// so that the list is checked on its tokens and never built?
    pub rows: bool,
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
                RecordPlan::new(shape, owner, false, depth + 1, interp)
                    .map(|r| How::Record(Box::new(r)))
            }
            TypeSpec::List(elem) => {
                let how = How::of(elem, depth + 1, type_id, interp)?;
                Some(How::List(Box::new(Elements {
                    how,
                    type_id: type_id.clone(),
                    admits_null: crate::runtime::validate::type_matches(elem, &Value::Null),
                    rows: false,
                })))
            }
            TypeSpec::Named(cell) => match &cell.get()?.shape {
                Shape::Record { record, .. } => {
                    let owner = cell.get()?.name.as_str().into();
                    RecordPlan::new(record, owner, true, depth + 1, interp)
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

    /// Can the token walker name every failure of a value checked this way?
    pub fn names_failures(&self) -> bool {
        match self {
            How::Tokens(_) => true,
            How::Record(record) => record.names_failures(),
            How::List(elements) => elements.how.names_failures(),
            How::Value => false,
        }
    }
}

/// The record shape a nested value of type `spec` is checked against —
/// the one `How::of` compiled a `How::Record` from — through aliases.
pub fn nested_shape(spec: &TypeSpec) -> Option<&RecordShape> {
    match unaliased(spec) {
        TypeSpec::Record(shape) => Some(shape),
        TypeSpec::Named(cell) => cell.get()?.record(),
        _ => None,
    }
}

/// The element type of a list type `spec`, through aliases.
pub fn element_type(spec: &TypeSpec) -> Option<&TypeSpec> {
    match unaliased(spec) {
        TypeSpec::List(elem) => Some(elem),
        _ => None,
    }
}

/// How a type failure's message names the type `spec`: a refinement by
/// its name and its base (`Email (String)`), any other type as written.
pub fn type_text(spec: &TypeSpec) -> String {
    if let TypeSpec::Named(cell) = unaliased(spec) {
        if let Some(c) = cell.get() {
            if let Shape::Refined { base, rules, .. } = &c.shape {
                if !rules.is_empty() {
                    return format!("{} ({})", c.name, base.describe());
                }
            }
        }
    }
    unaliased(spec).describe()
}

/// `spec`, or what the aliases (refinements with no rules) it names stand
/// for.
fn unaliased(mut spec: &TypeSpec) -> &TypeSpec {
    while let TypeSpec::Named(cell) = spec {
        match cell.get().map(|c| &c.shape) {
            Some(Shape::Refined { base, rules, .. }) if rules.is_empty() => spec = base,
            _ => break,
        }
    }
    spec
}

impl RecordPlan {
    /// `None` when a rule reads `self` whole: the frame would need the
    /// record itself.
    fn new(
        shape: &RecordShape,
        owner: Rc<str>,
        warns: bool,
        depth: usize,
        interp: &Interp,
    ) -> Option<RecordPlan> {
        let rules = || shape.rules.iter().chain(&shape.warns);
        if rules().any(|r| r.reads_self) {
            return None;
        }
        let mut read = vec![false; shape.fields.len()];
        for &slot in rules().flat_map(|r| &r.slots) {
            read[slot as usize] = true;
        }
        // The top record's unique keys are claimed from the frame, or
        // from the text of a string field no rule reads (`key_text`).
        let mut key_only = vec![false; shape.fields.len()];
        let mut measured = vec![false; shape.fields.len()];
        if depth == 0 {
            for &slot in shape.uniques.iter().flat_map(|u| &u.slots) {
                key_only[slot as usize] = !read[slot as usize];
                read[slot as usize] = true;
            }
            // The fields the expectations measure are read into the frame
            // too, where the counting path measures a valid record
            // (`Measures::observe_valid`): a string that only key measures
            // read keeps its text, as a unique key's does; one whose
            // presence or null is all that is measured is only marked as
            // seen or null.
            let measures = || shape.expects.iter().flat_map(|e| &e.measures);
            let top = |m: &MeasureSpec| {
                let paths = m.measure.paths();
                let slots: Vec<usize> = (paths.iter())
                    .filter_map(|p| match p.slots[..] {
                        [slot] => Some(slot as usize),
                        _ => None,
                    })
                    .collect();
                (slots.len() == paths.len()).then_some(slots)
            };
            for m in measures() {
                let keyed = m.measure.holds_keys();
                let seen_only = matches!(m.measure, Measure::Missing(_) | Measure::Nulls(_));
                match top(m) {
                    Some(_) if keyed || seen_only => {}
                    _ => (m.measure.paths().iter())
                        .filter_map(|p| p.slots.first())
                        .for_each(|&slot| read[slot as usize] = true),
                }
            }
            for m in measures() {
                for slot in top(m).unwrap_or_default() {
                    if m.measure.holds_keys() && !read[slot] {
                        key_only[slot] = true;
                        read[slot] = true;
                    } else if !m.measure.holds_keys() {
                        measured[slot] = true;
                    }
                }
            }
        }
        let mut fields: Vec<FieldStep> = shape
            .fields
            .iter()
            .zip(read.into_iter().zip(key_only).zip(measured))
            .map(|(f, ((read, key_only), measured))| {
                // A record or list a rule reads is checked, then decoded:
                // unless nested defaults would change it on the way.
                let type_id = f.ids.type_.clone();
                let how = match How::of(&f.ty, depth, &type_id, interp) {
                    _ if !f.checks.is_empty() => How::Value,
                    Some(How::Tokens(t)) => How::Tokens(t),
                    Some(how) if !read || type_cannot_raise(&f.ty, depth) => how,
                    _ => How::Value,
                };
                FieldStep {
                    name: f.name.clone(),
                    how,
                    read,
                    key_only,
                    admits_null: f.ty.admits_null(),
                    plain_name: is_plain(&f.name),
                    type_id,
                    key_text: None,
                    measured: measured && !read,
                }
            })
            .collect();
        keep_rows(shape, depth, &mut fields);
        Some(RecordPlan {
            owner,
            fields,
            warns,
        })
    }

    /// Can the token walker name every failure of this record's values?
    fn names_failures(&self) -> bool {
        self.fields.iter().all(|f| f.how.names_failures())
    }
}

/// Keep as rows each list of records the rules read only by folding over
/// it, reading only scalar fields of its elements: the list is then
/// checked on its tokens and never built.
fn keep_rows(shape: &RecordShape, depth: usize, fields: &mut [FieldStep]) {
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
        elements.rows = true;
    }
}

/// The JSON tokens a scalar type admits (null is `FieldStep::admits_null`):
/// its union members in order, since a value is checked against the first
/// member whose type it has (language.md §4.8).
pub struct Tokens {
    members: Vec<Member>,
    /// What the members admit, decided once (the tests below run per
    /// token): every string as it is (the first member that takes strings
    /// is `String` or `Any`), an integer, any number, a Bool, anything.
    plain_strings: bool,
    ints: bool,
    numbers: bool,
    bools: bool,
    any: bool,
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
    Matching(Vec<StringRule>),
}

/// A refinement's rule decided on the string: its test, its identity, and
/// the message of its failure.
struct StringRule {
    test: Test,
    id: Rc<str>,
    message: Rc<str>,
}

/// What the plan makes of a scalar value (not null) of a field or element
/// checked by its tokens.
pub enum Judgement<'p> {
    Admitted,
    /// No member of the type has its type.
    WrongType,
    /// A string of a refined type that breaks these of its rules.
    Breaks(Vec<(&'p Rc<str>, &'p Rc<str>)>),
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
        if !flatten(spec, &mut members, interp) {
            return None;
        }
        let has = |test: fn(&Member) -> bool| members.iter().any(test);
        let first_of_strings = members
            .iter()
            .find(|m| matches!(m, Member::Any | Member::String | Member::Matching(_)));
        Some(Tokens {
            plain_strings: matches!(first_of_strings, Some(Member::Any | Member::String)),
            ints: has(|m| matches!(m, Member::Any | Member::Number | Member::Int)),
            numbers: has(|m| matches!(m, Member::Any | Member::Number)),
            bools: has(|m| matches!(m, Member::Any | Member::Bool)),
            any: has(|m| matches!(m, Member::Any)),
            members,
        })
    }

    #[inline]
    pub fn admits_string(&self, s: &str) -> bool {
        if self.plain_strings {
            return true;
        }
        self.members.iter().find_map(|m| match m {
            Member::Any | Member::String => Some(true),
            Member::Literal(l) if **l == *s => Some(true),
            Member::Matching(rules) => Some(rules.iter().all(|r| r.test.holds(s))),
            _ => None,
        }) == Some(true)
    }

    /// The rules a string breaks (none when it passes); `None` when no
    /// member has its type.
    #[inline]
    pub fn string_breaks(&self, s: &str) -> Option<Vec<Rc<str>>> {
        if self.plain_strings {
            return Some(Vec::new());
        }
        self.members.iter().find_map(|m| match m {
            Member::Any | Member::String => Some(Vec::new()),
            Member::Literal(l) if **l == *s => Some(Vec::new()),
            Member::Matching(rules) => Some(
                rules
                    .iter()
                    .filter(|r| !r.test.holds(s))
                    .map(|r| r.id.clone())
                    .collect(),
            ),
            _ => None,
        })
    }

    /// What `validate` makes of a value that is not null: the same
    /// decision the token walker takes on its token, for a built value.
    pub fn judge(&self, v: &Value) -> Judgement<'_> {
        let admitted = match v {
            Value::Str(s) => {
                let member = self.members.iter().find(|m| match m {
                    Member::Any | Member::String | Member::Matching(_) => true,
                    Member::Literal(l) => **l == **s,
                    _ => false,
                });
                match member {
                    Some(Member::Matching(rules)) => {
                        let broken: Vec<_> = (rules.iter())
                            .filter(|r| !r.test.holds(s))
                            .map(|r| (&r.id, &r.message))
                            .collect();
                        if broken.is_empty() {
                            return Judgement::Admitted;
                        }
                        return Judgement::Breaks(broken);
                    }
                    member => member.is_some(),
                }
            }
            Value::Bool(_) => self.admits_bool(),
            v if v.is_int() => self.admits_numeric(true),
            v if v.is_number() => self.admits_numeric(false),
            _ => self.admits_any(),
        };
        match admitted {
            true => Judgement::Admitted,
            false => Judgement::WrongType,
        }
    }

    #[inline]
    pub fn admits_number(&self, text: &str) -> bool {
        self.admits_numeric(!text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')))
    }

    /// Does a member admit a number, an integer (`int`) or not?
    #[inline]
    pub fn admits_numeric(&self, int: bool) -> bool {
        if int {
            self.ints
        } else {
            self.numbers
        }
    }

    #[inline]
    pub fn admits_bool(&self) -> bool {
        self.bools
    }

    #[inline]
    pub fn admits_any(&self) -> bool {
        self.any
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
fn string_test(rule: &RuleSpec, interp: &Interp) -> Option<StringRule> {
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
    let message = match &rule.message {
        Some(message) => message.as_str().into(),
        None => format!("rule {} does not hold", rule.id).into(),
    };
    Some(StringRule {
        test,
        id: rule.id.clone(),
        message,
    })
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

/// Is `name` written in JSON as itself between quotes (no character in
/// it needs an escape)? Only then can its bytes be compared with a key's.
pub fn is_plain(name: &str) -> bool {
    !name.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20)
}
