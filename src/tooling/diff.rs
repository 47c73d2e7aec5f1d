//! `hql diff`'s comparison: `diff(old, new) -> Vec<TypeDiff>`.
//!
//! Input: the types two files declare themselves, compiled, in declaration
//! order. Output: one `TypeDiff` for each type that changed — every change
//! with its class from tooling.md's list ("Contract tooling", `diff`), then
//! the verdict on its `@version`.
//!
//! Types are matched by name, fields by name, rules, named checks and
//! unique keys by identity, so a rename is a removal plus an addition. A
//! field whose type is a named type is compared by that name only: a change
//! inside the named type is reported once, under that type.
//!
//! Where the list is silent:
//! - an unnamed rule's identity is its canonical text, so editing it removes
//!   one identity and adds another; when exactly one rule of a severity
//!   reading a given set of fields is removed and one is added, the pair is
//!   reported as one rule changed (a named rule renamed pairs the same way);
//! - a named check (`validate f with g`) counts as a `require` rule;
//! - a rule's message is cosmetic, like descriptions; a `require` rule made a
//!   `warn` is additive (a rule removed, a warning added), the reverse breaking;
//! - a default added to a field, or a field added with a default, is
//!   additive: data lacking the field still passes, and still carries it;
//!   a default changed or removed is breaking;
//! - a required field made optional is a widening (additive);
//! - the kind renamed with its openness kept (`Data` → `DataContract`) is
//!   cosmetic, as is the order of fields;
//! - a removed type always fails the verdict: nothing in the new file can
//!   carry a version bump for it.

use std::rc::Rc;

use crate::runtime::contract::{
    Contract, FieldSpec, Kind, RecordShape, Records, RuleSpec, Shape, TypeSpec,
};
use crate::runtime::value::Value;
use crate::syntax::ast::Severity;
use crate::syntax::canonical::write_key;

mod expects;

/// How a change weighs on those who rely on the type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Breaking,
    Additive,
    Cosmetic,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Breaking => "breaking",
            Class::Additive => "additive",
            Class::Cosmetic => "cosmetic",
        }
    }
}

/// What changed: one row of the classification, which fixes the class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    TypeRemoved,
    TypeAdded,
    /// A record type became a refinement, or the reverse.
    ShapeChanged,
    FieldRemoved,
    RequiredFieldAdded,
    OptionalFieldAdded,
    DefaultedFieldAdded,
    MadeRequired,
    MadeOptional,
    MadeNonNull,
    MadeNullable,
    TypeChanged,
    TypeWidened,
    LiteralsShrunk,
    LiteralsGrown,
    KindClosed,
    KindOpened,
    KindRenamed,
    RuleAdded,
    RuleChanged,
    RuleRemoved,
    RuleMadeWarn,
    WarnMadeRule,
    WarnAdded,
    WarnChanged,
    WarnRemoved,
    CheckAdded,
    CheckRemoved,
    UniqueAdded,
    UniqueChanged,
    UniqueRemoved,
    ExpectAdded,
    ExpectChanged,
    ExpectLoosened,
    ExpectRewritten,
    ExpectRemoved,
    ExpectMadeWarn,
    WarnMadeExpect,
    ExpectWarnAdded,
    ExpectWarnChanged,
    ExpectWarnRemoved,
    DefaultAdded,
    DefaultChanged,
    DefaultRemoved,
    Version,
    Owner,
    Description,
    Message,
    FieldOrder,
}

impl What {
    /// Its name in JSON, how a report says it, and its class.
    fn row(self) -> (&'static str, &'static str, Class) {
        use Class::*;
        match self {
            What::TypeRemoved => ("type_removed", "type removed", Breaking),
            What::TypeAdded => ("type_added", "type added", Additive),
            What::ShapeChanged => ("shape_changed", "record made refinement or back", Breaking),
            What::FieldRemoved => ("field_removed", "field removed", Breaking),
            What::RequiredFieldAdded => ("required_field_added", "required field added", Breaking),
            What::OptionalFieldAdded => ("optional_field_added", "optional field added", Additive),
            What::DefaultedFieldAdded => (
                "defaulted_field_added",
                "field with a default added",
                Additive,
            ),
            What::MadeRequired => ("made_required", "optional field made required", Breaking),
            What::MadeOptional => ("made_optional", "required field made optional", Additive),
            What::MadeNonNull => ("made_non_null", "nullable field made non-null", Breaking),
            What::MadeNullable => ("made_nullable", "field made nullable", Additive),
            What::TypeChanged => ("type_changed", "type changed", Breaking),
            What::TypeWidened => ("type_widened", "type widened", Additive),
            What::LiteralsShrunk => ("literal_union_shrunk", "literal union shrunk", Breaking),
            What::LiteralsGrown => ("literal_union_grown", "literal union grown", Additive),
            What::KindClosed => ("kind_closed", "open kind made closed", Breaking),
            What::KindOpened => ("kind_opened", "closed kind made open", Additive),
            What::KindRenamed => ("kind_renamed", "kind renamed, openness kept", Cosmetic),
            What::RuleAdded => ("rule_added", "require rule added", Breaking),
            What::RuleChanged => ("rule_changed", "require rule changed", Breaking),
            What::RuleRemoved => ("rule_removed", "require rule removed", Additive),
            What::RuleMadeWarn => ("rule_made_warn", "require rule made a warning", Additive),
            What::WarnMadeRule => ("warn_made_rule", "warning made a require rule", Breaking),
            What::WarnAdded => ("warn_added", "warn rule added", Additive),
            What::WarnChanged => ("warn_changed", "warn rule changed", Additive),
            What::WarnRemoved => ("warn_removed", "warn rule removed", Additive),
            What::CheckAdded => ("check_added", "named check added", Breaking),
            What::CheckRemoved => ("check_removed", "named check removed", Additive),
            What::UniqueAdded => ("unique_added", "unique key added", Breaking),
            What::UniqueChanged => ("unique_changed", "unique key changed", Breaking),
            What::UniqueRemoved => ("unique_removed", "unique key removed", Additive),
            What::ExpectAdded => ("expect_added", "expect added", Breaking),
            What::ExpectChanged => ("expect_changed", "expect changed", Breaking),
            What::ExpectLoosened => ("expect_loosened", "expect bound loosened", Additive),
            What::ExpectRewritten => (
                "expect_rewritten",
                "expect rewritten, same bounds",
                Cosmetic,
            ),
            What::ExpectRemoved => ("expect_removed", "expect removed", Additive),
            What::ExpectMadeWarn => ("expect_made_warn", "expect made an expect warn", Additive),
            What::WarnMadeExpect => ("warn_made_expect", "expect warn made an expect", Breaking),
            What::ExpectWarnAdded => ("expect_warn_added", "expect warn added", Additive),
            What::ExpectWarnChanged => ("expect_warn_changed", "expect warn changed", Additive),
            What::ExpectWarnRemoved => ("expect_warn_removed", "expect warn removed", Additive),
            What::DefaultAdded => ("default_added", "default added", Additive),
            What::DefaultChanged => ("default_changed", "default changed", Breaking),
            What::DefaultRemoved => ("default_removed", "default removed", Breaking),
            What::Version => ("version", "version", Cosmetic),
            What::Owner => ("owner", "owner", Cosmetic),
            What::Description => ("description", "description changed", Cosmetic),
            What::Message => ("message", "rule message changed", Cosmetic),
            What::FieldOrder => ("field_order", "field order changed", Cosmetic),
        }
    }

    pub fn name(self) -> &'static str {
        self.row().0
    }

    pub fn label(self) -> &'static str {
        self.row().1
    }

    pub fn class(self) -> Class {
        self.row().2
    }
}

/// One change under a type: what changed, where (a field's dotted path, a
/// rule's identity; empty for the type itself), and its old and new forms
/// where they help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub what: What,
    pub subject: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

impl Change {
    pub fn class(&self) -> Class {
        self.what.class()
    }

    /// One line for people: `type changed: qty: Int → String`.
    pub fn text(&self) -> String {
        let mut s = self.what.label().to_string();
        if !self.subject.is_empty() {
            s = format!("{s}: {}", self.subject);
        }
        match (&self.old, &self.new) {
            (Some(o), Some(n)) => format!("{s}: {o} → {n}"),
            (Some(x), None) | (None, Some(x)) if self.subject.is_empty() => format!("{s}: {x}"),
            (Some(x), None) | (None, Some(x)) => format!("{s} ({x})"),
            (None, None) => s,
        }
    }
}

/// Is the type in both files, or in one?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    Both,
    Added,
    Removed,
}

/// The bump breaking changes need: major, or minor under `0.x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bump {
    Major,
    Minor,
}

/// What the versions say about a type's breaking changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No breaking change: no bump is needed.
    NoBreaking,
    /// A new type.
    Added,
    /// Breaking changes with the bump they need.
    Bumped(Bump),
    /// Breaking changes to a type that had no version and now has one.
    VersionAdded,
    /// Breaking changes without the bump: the least version that would do.
    NeedsBump { bump: Bump, least: String },
    /// Breaking changes to a type with no `@version` in either file.
    NeedsVersion,
    /// Breaking changes, and a version that is not `MAJOR.MINOR.PATCH`.
    Unreadable(String),
    /// The type is gone, which no version in the new file can mark.
    Removed,
}

impl Verdict {
    /// Does the version bump match the changes?
    pub fn ok(&self) -> bool {
        matches!(
            self,
            Verdict::NoBreaking | Verdict::Added | Verdict::Bumped(_) | Verdict::VersionAdded
        )
    }

    /// The least version that would carry the bump, when one is missing.
    pub fn least(&self) -> Option<&str> {
        match self {
            Verdict::NeedsBump { least, .. } => Some(least),
            _ => None,
        }
    }

    /// What is missing, by name: `major`, `minor` or `version`.
    pub fn needed(&self) -> Option<&'static str> {
        match self {
            Verdict::NeedsBump {
                bump: Bump::Major, ..
            } => Some("major"),
            Verdict::NeedsBump {
                bump: Bump::Minor, ..
            } => Some("minor"),
            Verdict::NeedsVersion => Some("version"),
            _ => None,
        }
    }
}

/// Everything that changed in one type, and the verdict on its version.
#[derive(Debug, Clone)]
pub struct TypeDiff {
    pub name: String,
    pub presence: Presence,
    pub old_version: Option<String>,
    pub new_version: Option<String>,
    /// Breaking first, then additive, then cosmetic; found order within.
    pub changes: Vec<Change>,
    pub verdict: Verdict,
}

impl TypeDiff {
    pub fn breaking(&self) -> bool {
        self.changes.iter().any(|c| c.class() == Class::Breaking)
    }

    /// The verdict for people, naming the versions and the bump needed.
    pub fn verdict_text(&self) -> String {
        let old = self.old_version.as_deref().unwrap_or("none");
        let new = self.new_version.as_deref().unwrap_or("none");
        match &self.verdict {
            Verdict::NoBreaking => "ok: no breaking change".into(),
            Verdict::Added => "ok: a new type".into(),
            Verdict::Bumped(Bump::Major) => {
                format!("ok: breaking changes, major bump {old} → {new}")
            }
            Verdict::Bumped(Bump::Minor) => {
                format!("ok: breaking changes, minor bump under 0.x {old} → {new}")
            }
            Verdict::VersionAdded => format!("ok: breaking changes, version {new} added"),
            Verdict::NeedsBump { bump, least } => format!(
                "needs a {} bump: breaking changes since {old} need {least} or later (found {new})",
                match bump {
                    Bump::Major => "major",
                    Bump::Minor => "minor (0.x)",
                }
            ),
            Verdict::NeedsVersion => {
                "needs a version: breaking changes to a type with no @version (add a version)"
                    .into()
            }
            Verdict::Unreadable(text) => format!(
                "cannot check the bump: `{text}` is not a version MAJOR.MINOR.PATCH, \
                 and breaking changes need one"
            ),
            Verdict::Removed => "fails: the type is removed, which no version bump can mark".into(),
        }
    }
}

/// Compare two files' types: the types that changed, those of `old` first
/// in its order (removed or changed), then those only `new` declares.
pub fn diff(old: &[Rc<Contract>], new: &[Rc<Contract>]) -> Vec<TypeDiff> {
    let mut diffs = Vec::new();
    for o in old {
        let d = match new.iter().find(|n| n.name == o.name) {
            Some(n) => compare_types(o, n),
            None => alone(o, Presence::Removed),
        };
        if !d.changes.is_empty() {
            diffs.push(d);
        }
    }
    for n in new.iter().filter(|n| old.iter().all(|o| o.name != n.name)) {
        diffs.push(alone(n, Presence::Added));
    }
    diffs
}

/// How many changes of each class: breaking, additive, cosmetic.
pub fn counts(diffs: &[TypeDiff]) -> [usize; 3] {
    let mut counts = [0; 3];
    for c in diffs.iter().flat_map(|d| &d.changes) {
        counts[c.class() as usize] += 1;
    }
    counts
}

fn alone(c: &Contract, presence: Presence) -> TypeDiff {
    let shape = Some(shape_text(c));
    let (what, verdict, old, new) = match presence {
        Presence::Removed => (What::TypeRemoved, Verdict::Removed, shape, None),
        _ => (What::TypeAdded, Verdict::Added, None, shape),
    };
    let removed = presence == Presence::Removed;
    TypeDiff {
        name: c.name.clone(),
        presence,
        old_version: c.version.clone().filter(|_| removed),
        new_version: c.version.clone().filter(|_| !removed),
        changes: vec![Change {
            what,
            subject: String::new(),
            old,
            new,
        }],
        verdict,
    }
}

fn compare_types(old: &Contract, new: &Contract) -> TypeDiff {
    let mut out = Changes::default();
    out.differ(What::Version, "", &old.version, &new.version);
    out.differ(What::Owner, "", &old.owner, &new.owner);
    out.differ_quietly(What::Description, "", &old.doc, &new.doc);
    match (&old.shape, &new.shape) {
        (
            Shape::Record {
                kind: k1,
                record: r1,
            },
            Shape::Record {
                kind: k2,
                record: r2,
            },
        ) => {
            compare_kinds(&mut out, *k1, *k2);
            compare_records(&mut out, "", r1, r2);
        }
        (
            Shape::Refined {
                base: b1, rules: a, ..
            },
            Shape::Refined {
                base: b2, rules: b, ..
            },
        ) => {
            compare_type_specs(&mut out, "", b1, b2);
            compare_rules(&mut out, a.iter().collect(), b.iter().collect());
        }
        _ => out.push(
            What::ShapeChanged,
            "",
            Some(shape_text(old)),
            Some(shape_text(new)),
        ),
    }
    let mut changes = out.0;
    changes.sort_by_key(Change::class);
    let breaking = changes.iter().any(|c| c.class() == Class::Breaking);
    TypeDiff {
        name: old.name.clone(),
        presence: Presence::Both,
        old_version: old.version.clone(),
        new_version: new.version.clone(),
        changes,
        verdict: version_verdict(old.version.as_deref(), new.version.as_deref(), breaking),
    }
}

/// The changes found so far under one type.
#[derive(Default)]
struct Changes(Vec<Change>);

impl Changes {
    fn push(&mut self, what: What, subject: &str, old: Option<String>, new: Option<String>) {
        self.0.push(Change {
            what,
            subject: subject.to_string(),
            old,
            new,
        });
    }

    /// A change of a piece of metadata, shown with both forms.
    fn differ(&mut self, what: What, subject: &str, old: &Option<String>, new: &Option<String>) {
        if old != new {
            let shown = |v: &Option<String>| Some(v.clone().unwrap_or_else(|| "none".into()));
            self.push(what, subject, shown(old), shown(new));
        }
    }

    /// A change of a description: noted, not shown (they run long).
    fn differ_quietly(
        &mut self,
        what: What,
        subject: &str,
        old: &Option<String>,
        new: &Option<String>,
    ) {
        if old != new {
            self.push(what, subject, None, None);
        }
    }
}

fn shape_text(c: &Contract) -> String {
    match &c.shape {
        Shape::Record { kind, .. } => format!("{} record", kind.name()),
        Shape::Refined { base, .. } => format!("refinement of {}", type_text(base)),
    }
}

fn compare_kinds(out: &mut Changes, old: Kind, new: Kind) {
    let what = match (old.is_open(), new.is_open()) {
        (true, false) => What::KindClosed,
        (false, true) => What::KindOpened,
        _ if old != new => What::KindRenamed,
        _ => return,
    };
    out.push(what, "", Some(old.name().into()), Some(new.name().into()));
}

fn path_of(prefix: &str, name: &str) -> String {
    let mut path = String::from(prefix);
    if !path.is_empty() {
        path.push('.');
    }
    write_key(&mut path, name);
    path
}

fn find_field<'a>(record: &'a RecordShape, name: &str) -> Option<&'a FieldSpec> {
    record.fields.iter().find(|f| &*f.name == name)
}

/// Fields (at `prefix`, a dotted path inside an inline record), then the
/// record's rules and unique keys.
fn compare_records(out: &mut Changes, prefix: &str, old: &RecordShape, new: &RecordShape) {
    for f in &old.fields {
        let path = path_of(prefix, &f.name);
        match find_field(new, &f.name) {
            Some(g) => compare_fields(out, &path, f, g),
            None => out.push(What::FieldRemoved, &path, Some(field_text(f)), None),
        }
    }
    for g in new
        .fields
        .iter()
        .filter(|g| find_field(old, &g.name).is_none())
    {
        let what = if g.optional {
            What::OptionalFieldAdded
        } else if g.default_text.is_some() {
            What::DefaultedFieldAdded
        } else {
            What::RequiredFieldAdded
        };
        out.push(what, &path_of(prefix, &g.name), None, Some(field_text(g)));
    }
    let order = |a: &RecordShape, b: &RecordShape| -> Vec<String> {
        let names = a.fields.iter().filter(|f| find_field(b, &f.name).is_some());
        names.map(|f| path_of("", &f.name)).collect()
    };
    let (before, after) = (order(old, new), order(new, old));
    if before != after {
        out.push(
            What::FieldOrder,
            prefix,
            Some(before.join(", ")),
            Some(after.join(", ")),
        );
    }
    compare_rules(out, all_rules(old), all_rules(new));
    let keys = |r: &RecordShape| r.uniques.iter().map(|u| u.id.to_string()).collect();
    compare_keys(out, keys(old), keys(new));
    expects::compare(out, &old.expects, &new.expects);
}

fn all_rules(r: &RecordShape) -> Vec<&RuleSpec> {
    r.rules.iter().chain(&r.warns).collect()
}

fn field_text(f: &FieldSpec) -> String {
    let mut s = type_text(&f.ty);
    if let Some(d) = &f.default_text {
        s = format!("{s} = {d}");
    }
    s
}

fn compare_fields(out: &mut Changes, path: &str, old: &FieldSpec, new: &FieldSpec) {
    match (old.optional, new.optional) {
        (true, false) if new.default_text.is_none() => {
            out.push(What::MadeRequired, path, None, None)
        }
        (false, true) => out.push(What::MadeOptional, path, None, None),
        _ => {}
    }
    compare_type_specs(out, path, &old.ty, &new.ty);
    match (&old.default_text, &new.default_text) {
        (None, Some(d)) => out.push(What::DefaultAdded, path, None, Some(d.clone())),
        (Some(d), None) => out.push(What::DefaultRemoved, path, Some(d.clone()), None),
        (Some(a), Some(b)) if a != b => {
            out.push(What::DefaultChanged, path, Some(a.clone()), Some(b.clone()))
        }
        _ => {}
    }
    let ids = |f: &FieldSpec| {
        f.checks
            .iter()
            .map(|c| c.id.to_string())
            .collect::<Vec<_>>()
    };
    let (before, after) = (ids(old), ids(new));
    for id in before.iter().filter(|id| !after.contains(id)) {
        out.push(What::CheckRemoved, id, None, None);
    }
    for id in after.iter().filter(|id| !before.contains(id)) {
        out.push(What::CheckAdded, id, None, None);
    }
    out.differ_quietly(What::Description, path, &old.doc, &new.doc);
}

/// A field's type (or a refinement's base, at the empty path).
fn compare_type_specs(out: &mut Changes, path: &str, old: &TypeSpec, new: &TypeSpec) {
    let (before, after) = (type_text(old), type_text(new));
    if before == after {
        return;
    }
    if let Some((a, b)) = inline_records(old, new) {
        return compare_records(out, path, a, b);
    }
    let what = literal_change(old, new)
        .or_else(|| null_change(old, new))
        .unwrap_or(if accepts(new, old) {
            What::TypeWidened
        } else {
            What::TypeChanged
        });
    out.push(what, path, Some(before), Some(after));
}

/// Inline records at the same place in both types (directly, or as the
/// items of lists or maps): compared field by field.
fn inline_records<'a>(
    old: &'a TypeSpec,
    new: &'a TypeSpec,
) -> Option<(&'a RecordShape, &'a RecordShape)> {
    match (old, new) {
        (TypeSpec::Record(a), TypeSpec::Record(b)) => Some((a, b)),
        (TypeSpec::List(a), TypeSpec::List(b)) | (TypeSpec::Map(a), TypeSpec::Map(b)) => {
            inline_records(a, b)
        }
        _ => None,
    }
}

/// A union's members, nested unions flattened.
fn members(t: &TypeSpec) -> Vec<&TypeSpec> {
    match t {
        TypeSpec::Union(ms) => ms.iter().flat_map(members).collect(),
        _ => vec![t],
    }
}

fn joined(ms: &[&TypeSpec]) -> String {
    ms.iter()
        .map(|m| type_text(m))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Literal members added or dropped, the other members kept.
fn literal_change(old: &TypeSpec, new: &TypeSpec) -> Option<What> {
    let split = |t| {
        let (lits, rest): (Vec<&TypeSpec>, Vec<&TypeSpec>) = members(t)
            .into_iter()
            .partition(|m| matches!(m, TypeSpec::Literal(_)));
        (
            lits.iter().map(|l| type_text(l)).collect::<Vec<_>>(),
            joined(&rest),
        )
    };
    let ((a, rest_a), (b, rest_b)) = (split(old), split(new));
    if a.is_empty() || b.is_empty() || rest_a != rest_b {
        return None;
    }
    Some(if a.iter().all(|l| b.contains(l)) {
        What::LiteralsGrown
    } else {
        What::LiteralsShrunk
    })
}

/// `Null` added to the members or taken out, the others kept.
fn null_change(old: &TypeSpec, new: &TypeSpec) -> Option<What> {
    let split = |t| {
        let (nulls, rest): (Vec<&TypeSpec>, Vec<&TypeSpec>) = members(t)
            .into_iter()
            .partition(|m| matches!(m, TypeSpec::Null));
        (!nulls.is_empty(), joined(&rest))
    };
    let ((null_a, rest_a), (null_b, rest_b)) = (split(old), split(new));
    if rest_a != rest_b || rest_a.is_empty() {
        return None;
    }
    match (null_a, null_b) {
        (true, false) => Some(What::MadeNonNull),
        (false, true) => Some(What::MadeNullable),
        _ => None,
    }
}

/// A named refinement's base, and whether it is a plain alias (no rules).
fn refined(t: &TypeSpec) -> Option<(&TypeSpec, bool)> {
    let TypeSpec::Named(cell) = t else {
        return None;
    };
    match &cell.get()?.shape {
        Shape::Refined { base, rules, .. } => Some((base, rules.is_empty())),
        Shape::Record { .. } => None,
    }
}

/// Does every value `narrow` admits pass `wide` too? Types are compared by
/// what they are made of; a named refinement stands for its base when its
/// rules are dropped (`Email` → `String` widens) and an alias for its base
/// always; a named record type only for itself.
fn accepts(wide: &TypeSpec, narrow: &TypeSpec) -> bool {
    if type_text(wide) == type_text(narrow) {
        return true;
    }
    if let TypeSpec::Union(ms) = narrow {
        return ms.iter().all(|m| accepts(wide, m));
    }
    if let Some((base, _)) = refined(narrow) {
        return accepts(wide, base);
    }
    if let Some((base, true)) = refined(wide) {
        return accepts(base, narrow);
    }
    match (wide, narrow) {
        (TypeSpec::Any, _) | (TypeSpec::Float, TypeSpec::Int) => true,
        (TypeSpec::Union(ms), _) => ms.iter().any(|m| accepts(m, narrow)),
        (TypeSpec::List(a), TypeSpec::List(b)) | (TypeSpec::Map(a), TypeSpec::Map(b)) => {
            accepts(a, b)
        }
        (TypeSpec::Record(a), TypeSpec::Record(b)) => {
            let mut found = Changes::default();
            compare_records(&mut found, "", b, a);
            found.0.iter().all(|c| c.class() != Class::Breaking)
        }
        (_, TypeSpec::Literal(v)) => literal_fits(wide, v),
        _ => false,
    }
}

fn literal_fits(wide: &TypeSpec, v: &Value) -> bool {
    matches!(
        (wide, v),
        (TypeSpec::String, Value::Str(_))
            | (TypeSpec::Int | TypeSpec::Float, Value::Int(_))
            | (TypeSpec::Float, Value::Float(_))
            | (TypeSpec::Bool, Value::Bool(_))
            | (TypeSpec::Null, Value::Null)
    )
}

/// A type as written: inline records in full, their fields' defaults
/// too, named types by name.
fn type_text(t: &TypeSpec) -> String {
    let mut out = String::new();
    t.write_text(&mut out, Records::WithDefaults);
    out
}

/// What pairs a removed rule with an added one: severity and fields read.
fn key(r: &RuleSpec) -> (bool, Vec<&str>) {
    let mut fields: Vec<&str> = r.fields.iter().map(|f| &**f).collect();
    fields.sort_unstable();
    (is_require(r), fields)
}

fn is_require(r: &RuleSpec) -> bool {
    r.severity == Severity::Require
}

/// Rules matched by identity. A rule removed and one added with the same
/// severity over the same fields, alone of their kind, are one rule changed.
fn compare_rules(out: &mut Changes, old: Vec<&RuleSpec>, new: Vec<&RuleSpec>) {
    let find = |rules: &[&RuleSpec], id: &str| rules.iter().position(|r| &*r.id == id);
    for r in &old {
        if let Some(i) = find(&new, &r.id) {
            compare_rule(out, r, new[i]);
        }
    }
    let removed: Vec<&RuleSpec> = old
        .iter()
        .copied()
        .filter(|r| find(&new, &r.id).is_none())
        .collect();
    let added: Vec<&RuleSpec> = new
        .iter()
        .copied()
        .filter(|r| find(&old, &r.id).is_none())
        .collect();
    let alone =
        |rules: &[&RuleSpec], r: &RuleSpec| rules.iter().filter(|s| key(s) == key(r)).count() == 1;
    // Each removed rule's partner among the added ones, if it has one.
    let partners: Vec<Option<&RuleSpec>> = (removed.iter())
        .map(|r| {
            let s = added.iter().copied().find(|s| key(s) == key(r))?;
            (alone(&removed, r) && alone(&added, s)).then_some(s)
        })
        .collect();
    for (r, partner) in removed.iter().zip(&partners) {
        let require = is_require(r);
        match partner {
            Some(s) => {
                let what = if require {
                    What::RuleChanged
                } else {
                    What::WarnChanged
                };
                out.push(what, "", Some(r.id.to_string()), Some(s.id.to_string()));
            }
            None => {
                let what = if require {
                    What::RuleRemoved
                } else {
                    What::WarnRemoved
                };
                out.push(what, &r.id, rule_text(r), None);
            }
        }
    }
    let paired = |s: &RuleSpec| partners.iter().flatten().any(|p| std::ptr::eq(*p, s));
    for s in added.iter().filter(|s| !paired(s)) {
        let what = if is_require(s) {
            What::RuleAdded
        } else {
            What::WarnAdded
        };
        out.push(what, &s.id, None, rule_text(s));
    }
}

/// A named rule's condition (an unnamed rule's identity already shows it).
fn rule_text(r: &RuleSpec) -> Option<String> {
    (!r.id.ends_with(&format!(".{}", r.text))).then(|| r.text.clone())
}

fn compare_rule(out: &mut Changes, old: &RuleSpec, new: &RuleSpec) {
    match (is_require(old), is_require(new)) {
        (true, false) => out.push(What::RuleMadeWarn, &old.id, None, None),
        (false, true) => out.push(What::WarnMadeRule, &old.id, None, None),
        (require, _) if old.text != new.text => {
            let what = if require {
                What::RuleChanged
            } else {
                What::WarnChanged
            };
            out.push(
                what,
                &old.id,
                Some(old.text.clone()),
                Some(new.text.clone()),
            );
        }
        _ => {}
    }
    out.differ(What::Message, &old.id, &old.message, &new.message);
    out.differ_quietly(What::Description, &old.id, &old.doc, &new.doc);
}

/// Unique keys by identity; one removed and one added are one key changed.
fn compare_keys(out: &mut Changes, old: Vec<String>, new: Vec<String>) {
    let removed: Vec<&String> = old.iter().filter(|k| !new.contains(k)).collect();
    let added: Vec<&String> = new.iter().filter(|k| !old.contains(k)).collect();
    if let ([r], [a]) = (&removed[..], &added[..]) {
        return out.push(
            What::UniqueChanged,
            "",
            Some(r.to_string()),
            Some(a.to_string()),
        );
    }
    for r in removed {
        out.push(What::UniqueRemoved, r, None, None);
    }
    for a in added {
        out.push(What::UniqueAdded, a, None, None);
    }
}

/// A version `MAJOR.MINOR.PATCH`, with any pre-release or build suffix
/// set aside (`2.0.0-rc.1` is a major bump from `1.4.2`).
fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let core = text.split(['-', '+']).next()?;
    let parts: Vec<&str> = core.split('.').collect();
    let number = |s: &str| -> Option<u64> {
        let digits = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let leading_zero = s.len() > 1 && s.starts_with('0');
        (digits && !leading_zero).then(|| s.parse().ok()).flatten()
    };
    match parts[..] {
        [a, b, c] => Some((number(a)?, number(b)?, number(c)?)),
        _ => None,
    }
}

/// Breaking changes need a major bump, or a minor one under `0.x`.
fn version_verdict(old: Option<&str>, new: Option<&str>, breaking: bool) -> Verdict {
    if !breaking {
        return Verdict::NoBreaking;
    }
    let Some(old) = old else {
        return match new {
            Some(_) => Verdict::VersionAdded,
            None => Verdict::NeedsVersion,
        };
    };
    let Some((major, minor, _)) = parse_version(old) else {
        return Verdict::Unreadable(old.to_string());
    };
    let (bump, least) = match major {
        0 => (Bump::Minor, (0, minor + 1, 0)),
        _ => (Bump::Major, (major + 1, 0, 0)),
    };
    let found = match new.map(|n| (n, parse_version(n))) {
        Some((_, Some(v))) => Some(v),
        Some((n, None)) => return Verdict::Unreadable(n.to_string()),
        None => None,
    };
    match found {
        Some(v) if v >= least => Verdict::Bumped(bump),
        _ => Verdict::NeedsBump {
            bump,
            least: format!("{}.{}.{}", least.0, least.1, least.2),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_semver() {
        assert_eq!(parse_version("1.2.3"), Some((1, 2, 3)));
        assert_eq!(parse_version("2.0.0-rc.1+build.5"), Some((2, 0, 0)));
        for bad in ["1.2", "v1.2.3", "01.2.3", "1.2.3.4", "", "1..2"] {
            assert_eq!(parse_version(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_bump_breaking_changes_need() {
        let v = |o, n| version_verdict(o, n, true);
        assert_eq!(
            v(Some("1.2.0"), Some("2.0.0")),
            Verdict::Bumped(Bump::Major)
        );
        assert_eq!(
            v(Some("1.2.0"), Some("1.9.0")),
            Verdict::NeedsBump {
                bump: Bump::Major,
                least: "2.0.0".into()
            }
        );
        assert_eq!(
            v(Some("0.3.1"), Some("0.4.0")),
            Verdict::Bumped(Bump::Minor)
        );
        assert_eq!(
            v(Some("0.3.1"), Some("1.0.0")),
            Verdict::Bumped(Bump::Minor)
        );
        assert_eq!(
            v(Some("0.3.1"), Some("0.3.2")),
            Verdict::NeedsBump {
                bump: Bump::Minor,
                least: "0.4.0".into()
            }
        );
        assert_eq!(v(None, None), Verdict::NeedsVersion);
        assert_eq!(v(None, Some("1.0.0")), Verdict::VersionAdded);
        assert_eq!(
            v(Some("1.0.0"), Some("two")),
            Verdict::Unreadable("two".into())
        );
        assert_eq!(
            v(Some("1.0.0"), None),
            Verdict::NeedsBump {
                bump: Bump::Major,
                least: "2.0.0".into()
            }
        );
        assert_eq!(version_verdict(None, None, false), Verdict::NoBreaking);
    }
}
