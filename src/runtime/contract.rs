//! Compiled types and contracts: what `validate` applies per record.
//!
//! Everything a record's validation needs is settled here once — field
//! order, identities, rule expressions with names resolved to frame slots,
//! regexes — so that validating a record does no parsing, no compiling and
//! no lookups by rule name.

use std::cell::OnceCell;
use std::rc::Rc;

use rustc_hash::FxHashMap;

use crate::runtime::hir;
use crate::runtime::value::{Key, Value};
use crate::syntax::ast::{BinOp, Severity};

/// The four kinds of record type (language.md §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Data,
    Type,
    DataContract,
    TypeContract,
}

impl Kind {
    pub fn lookup(name: &str) -> Option<Kind> {
        match name {
            "Data" => Some(Kind::Data),
            "Type" => Some(Kind::Type),
            "DataContract" => Some(Kind::DataContract),
            "TypeContract" => Some(Kind::TypeContract),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Data => "Data",
            Kind::Type => "Type",
            Kind::DataContract => "DataContract",
            Kind::TypeContract => "TypeContract",
        }
    }

    /// Are undeclared fields admitted?
    pub fn is_open(self) -> bool {
        matches!(self, Kind::Data | Kind::DataContract)
    }

    /// May it declare rules, defaults, checks and unique keys?
    pub fn is_contract(self) -> bool {
        matches!(self, Kind::DataContract | Kind::TypeContract)
    }

    /// The contract kind with the same openness.
    pub fn as_contract(self) -> Kind {
        if self.is_open() {
            Kind::DataContract
        } else {
            Kind::TypeContract
        }
    }
}

/// A declared type.
#[derive(Debug)]
pub struct Contract {
    pub name: String,
    pub version: Option<String>,
    pub owner: Option<String>,
    pub doc: Option<String>,
    pub shape: Shape,
    /// The validation plan of a record type (`plan::LinePlan`), compiled
    /// on first use.
    pub plan: Compiled,
}

#[derive(Debug)]
pub enum Shape {
    Record {
        kind: Kind,
        record: RecordShape,
    },
    /// `type Email = String require …` (an alias when `rules` is empty).
    Refined {
        base: TypeSpec,
        rules: Vec<RuleSpec>,
        /// `Email.type` and the like, built once.
        ids: FieldIds,
    },
}

impl Contract {
    /// A type that is another name for `base`, with no rules.
    pub fn alias(name: &str, base: TypeSpec) -> Contract {
        Contract {
            name: name.to_string(),
            version: None,
            owner: None,
            doc: None,
            plan: Compiled::default(),
            shape: Shape::Refined {
                base,
                rules: vec![],
                ids: FieldIds::new(name),
            },
        }
    }

    /// A summary for people: kind, version, owner, fields with their
    /// types, defaults and the rules that read them, and every rule's
    /// identity (`:contract`, `hql contract`).
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let mut line = |s: String| {
            out.push_str(&s);
            out.push('\n');
        };
        let kind = match &self.shape {
            Shape::Record { kind, .. } => format!(
                "{} ({})",
                kind.name(),
                if kind.is_open() { "open" } else { "closed" }
            ),
            Shape::Refined { base, .. } => format!("refinement of {}", base.describe()),
        };
        line(format!("type {}: {kind}", self.name));
        for (label, value) in [
            ("version", &self.version),
            ("owner", &self.owner),
            ("about", &self.doc),
        ] {
            if let Some(v) = value {
                line(format!("  {label}: {v}"));
            }
        }
        match &self.shape {
            Shape::Record { record, .. } => record.summary(&mut line),
            Shape::Refined { rules, .. } => rule_lines(rules, &mut line),
        }
        out
    }

    pub fn record(&self) -> Option<&RecordShape> {
        match &self.shape {
            Shape::Record { record, .. } => Some(record),
            Shape::Refined { .. } => None,
        }
    }
}

/// The fields and rules of a record type, inherited ones first.
#[derive(Debug, Default)]
pub struct RecordShape {
    pub fields: Vec<FieldSpec>,
    pub open: bool,
    pub rules: Vec<RuleSpec>,
    pub warns: Vec<RuleSpec>,
    pub uniques: Vec<UniqueSpec>,
    /// Expectations over the whole stream (§4.11), inherited ones first.
    pub expects: Vec<ExpectSpec>,
    /// Field name → position in `fields`, for spotting undeclared fields.
    pub index: FxHashMap<Key, u32>,
}

fn rule_lines(rules: &[RuleSpec], line: &mut impl FnMut(String)) {
    for r in rules {
        let severity = match r.severity {
            Severity::Require => "require",
            Severity::Warn => "warn",
        };
        line(format!("  {severity} {}: {}", r.id, r.text));
    }
}

impl RecordShape {
    fn summary(&self, line: &mut impl FnMut(String)) {
        line("  fields:".into());
        self.field_lines("    ", line);
        if !(self.rules.is_empty() && self.warns.is_empty() && self.uniques.is_empty()) {
            line("  rules:".into());
        }
        self.rule_lines("  ", line);
        if !self.expects.is_empty() {
            line("  expectations:".into());
        }
        for e in &self.expects {
            let severity = if e.warn { "expect warn" } else { "expect" };
            line(format!("    {severity} {}: {}", e.id, e.text));
        }
    }

    /// The rules and unique keys, each line after `indent`.
    fn rule_lines(&self, indent: &str, line: &mut dyn FnMut(String)) {
        rule_lines(&self.rules, &mut |s| line(format!("{indent}{s}")));
        rule_lines(&self.warns, &mut |s| line(format!("{indent}{s}")));
        for u in &self.uniques {
            line(format!("{indent}  unique {}", u.id));
        }
    }

    /// A line a field, after `indent`, with its named checks under it, and
    /// under a field holding an inline record that record's own fields and
    /// rules, indented one step further.
    fn field_lines(&self, indent: &str, line: &mut dyn FnMut(String)) {
        for f in &self.fields {
            let mark = if f.optional { "?" } else { "" };
            let default = f
                .default_text
                .as_ref()
                .map(|d| format!(" = {d}"))
                .unwrap_or_default();
            let expects = self.expects.iter().filter(|e| e.fields.contains(&f.name));
            let readers: Vec<&str> = self
                .rules
                .iter()
                .chain(&self.warns)
                .filter(|r| r.fields.contains(&f.name))
                .map(|r| &*r.id)
                .chain(expects.map(|e| &*e.id))
                .collect();
            let read_by = if readers.is_empty() {
                String::new()
            } else {
                format!("  (read by {})", readers.join(", "))
            };
            line(format!(
                "{indent}{}{mark}: {}{default}{read_by}",
                f.name,
                f.ty.describe()
            ));
            for c in &f.checks {
                line(format!("{indent}  check {}", c.id));
            }
            if let Some(inner) = f.ty.inline_record() {
                let deeper = format!("{indent}  ");
                inner.field_lines(&deeper, line);
                inner.rule_lines(indent, line);
            }
        }
    }

    pub fn field(&self, name: &str) -> Option<&FieldSpec> {
        self.index.get(name).map(|&i| &self.fields[i as usize])
    }
}

#[derive(Debug)]
pub struct FieldSpec {
    pub name: Key,
    pub optional: bool,
    pub ty: TypeSpec,
    pub default: Option<hir::Expr>,
    /// The default as written, in canonical form.
    pub default_text: Option<String>,
    pub checks: Vec<CheckSpec>,
    pub doc: Option<String>,
    /// Identities of the structural failures: `T.f.missing`, `.null`,
    /// `.type`, `.extra` is built from the type's name.
    pub ids: FieldIds,
}

#[derive(Debug, Clone)]
pub struct FieldIds {
    pub missing: Rc<str>,
    pub null: Rc<str>,
    pub type_: Rc<str>,
}

impl FieldIds {
    pub fn new(owner: &str) -> FieldIds {
        FieldIds {
            missing: format!("{owner}.missing").into(),
            null: format!("{owner}.null").into(),
            type_: format!("{owner}.type").into(),
        }
    }
}

/// `validate field with f`.
#[derive(Debug)]
pub struct CheckSpec {
    pub id: Rc<str>,
    pub func: hir::Expr,
    pub func_name: String,
}

/// A `require` or `warn` rule.
#[derive(Debug)]
pub struct RuleSpec {
    pub id: Rc<str>,
    pub severity: Severity,
    /// Evaluated in a frame holding the fields' values, then `self`.
    pub cond: hir::Expr,
    /// Fields the rule reads, in order of first mention (for the failure).
    pub fields: Vec<Key>,
    /// Their positions in the record's fields (to skip rules over failed ones).
    pub slots: Vec<u32>,
    /// Does the rule read `self` as a whole (frame slot 0)?
    pub reads_self: bool,
    pub message: Option<String>,
    /// The condition in canonical form.
    pub text: String,
    pub doc: Option<String>,
    /// The condition compiled by validation (`kernel::Kernel`), on first
    /// use.
    pub compiled: Compiled,
}

/// What a layer above compiles of a declaration, kept with it on first use
/// without the declaration naming its type (a rule's kernel): the arrow
/// points from validation down to contracts, never back.
#[derive(Default)]
pub struct Compiled(OnceCell<Box<dyn std::any::Any>>);

impl Compiled {
    /// What was compiled, compiling it with `compile` the first time.
    pub fn get_or_init<T: 'static>(&self, compile: impl FnOnce() -> T) -> &T {
        let compiled = self.0.get_or_init(|| Box::new(compile()));
        compiled
            .downcast_ref()
            .expect("a declaration is compiled into one type")
    }
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "Compiled"
        } else {
            "Compiled(not yet)"
        })
    }
}

/// `expect [warn] [name:] condition` (language.md §4.11), compiled so that
/// one pass over a stream can measure every expectation of a contract —
/// counters for counts, key sets for `duplicates`, `distinct` and
/// `orphans`, the latest value for `age` — and the end of the stream judge
/// each condition over those measures alone.
#[derive(Debug)]
pub struct ExpectSpec {
    /// `Order.fresh`, or `Order.` and the condition's canonical text.
    pub id: Rc<str>,
    /// `expect warn`: a warning when it fails, not a failed run.
    pub warn: bool,
    /// The condition in canonical form.
    pub text: String,
    pub doc: Option<String>,
    /// The top-level fields the measures read, in order of first mention.
    pub fields: Vec<Key>,
    /// Every measure the condition reads, each once, in order of first
    /// mention: `ExpectCond::Measure` and `ExpectCond::Age` point here.
    pub measures: Vec<MeasureSpec>,
    pub cond: ExpectCond,
}

impl ExpectSpec {
    /// The failure kind of §4.7: `expect` or `expect_warn`.
    pub fn kind(&self) -> &'static str {
        expect_kind(self.warn)
    }
}

/// The failure kind of §4.7 of an expectation that only warns, or not.
pub fn expect_kind(warn: bool) -> &'static str {
    if warn {
        "expect_warn"
    } else {
        "expect"
    }
}

/// A measure as written (`missing(email)`) and what it measures.
#[derive(Debug)]
pub struct MeasureSpec {
    pub text: String,
    pub measure: Measure,
}

/// What one pass over the records a `validate(T)` read measures (§4.11).
#[derive(Debug)]
pub enum Measure {
    /// Records read.
    Rows,
    /// Records that became `err` (before expectations).
    Failures,
    /// Records where the field is absent.
    Missing(FieldPath),
    /// Records where the field is present and null.
    Nulls(FieldPath),
    /// Records with at least one failure at the field's path.
    Invalid(FieldPath),
    /// Records whose value of the field (a tuple of them) equals an
    /// earlier record's; absent or null values skipped.
    Duplicates(Vec<FieldPath>),
    /// Distinct present, non-null values of the field.
    Distinct(FieldPath),
    /// Records whose present, non-null field is not among the keys.
    Orphans {
        field: FieldPath,
        keys: OrphanKeys,
    },
    /// Over present values of a numeric field that passed its own checks;
    /// absent on none.
    Min(FieldPath),
    Max(FieldPath),
    Sum(FieldPath),
    Avg(FieldPath),
    /// Time from the latest value of a `Date` (`date`: taken as 00:00 UTC)
    /// or `Timestamp` field to the run's start; absent on none.
    Age {
        field: FieldPath,
        date: bool,
    },
}

impl Measure {
    /// Is it a count of records or values (what a share is a share of)?
    pub fn is_count(&self) -> bool {
        !matches!(
            self,
            Measure::Min(_)
                | Measure::Max(_)
                | Measure::Sum(_)
                | Measure::Avg(_)
                | Measure::Age { .. }
        )
    }

    /// The fields it reads.
    pub fn paths(&self) -> &[FieldPath] {
        match self {
            Measure::Rows | Measure::Failures => &[],
            Measure::Duplicates(fields) => fields,
            Measure::Missing(f)
            | Measure::Nulls(f)
            | Measure::Invalid(f)
            | Measure::Distinct(f)
            | Measure::Orphans { field: f, .. }
            | Measure::Min(f)
            | Measure::Max(f)
            | Measure::Sum(f)
            | Measure::Avg(f)
            | Measure::Age { field: f, .. } => std::slice::from_ref(f),
        }
    }

    /// Does a stream's one pass need a key set for it?
    pub fn holds_keys(&self) -> bool {
        matches!(
            self,
            Measure::Duplicates(_) | Measure::Distinct(_) | Measure::Orphans { .. }
        )
    }
}

/// A declared field, or a dotted path into nested records (`address.city`).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldPath {
    /// The field's position in the record's fields, then the next step's
    /// in that field's record, and so on.
    pub slots: Vec<u32>,
    /// The names along the path.
    pub names: Vec<Key>,
}

impl FieldPath {
    /// The path as a failure record writes it: `address.city`.
    pub fn text(&self) -> String {
        let names: Vec<&str> = self.names.iter().map(|n| &**n).collect();
        names.join(".")
    }
}

/// The keys of `orphans(f, keys)`: evaluated once, before the first
/// record, and held as a set.
#[derive(Debug)]
pub enum OrphanKeys {
    /// `["a", "b"]`.
    List(Vec<Value>),
    /// `source(…) | map(r => r.g)`: the source (a call of `source`, lowered)
    /// and the path read of each of its records.
    Source {
        source: hir::Expr,
        path: Vec<Key>,
        /// `source("customers")` as written, in canonical form.
        text: String,
    },
}

/// An expectation's condition over its measures (§4.11): literals,
/// arithmetic, comparisons and `and`/`or`/`not`. Shares and durations are
/// compared exactly, in the forms the checker allows: a share with a count,
/// a duration with an age.
#[derive(Debug)]
pub enum ExpectCond {
    /// The value of `measures[i]`.
    Measure(u32),
    /// An Int or Float literal.
    Number(Value),
    Bool(bool),
    Neg(Box<ExpectCond>),
    /// `+`, `-`, `*`, `/`.
    Arith(BinOp, Box<ExpectCond>, Box<ExpectCond>),
    /// `==`, `!=`, `<`, `<=`, `>`, `>=` of two numbers or two Bools.
    Compare(BinOp, Box<ExpectCond>, Box<ExpectCond>),
    /// `count op share`, turned so that the count is on the left
    /// (`5% >= failures` is `failures <= 5%`).
    Share {
        op: BinOp,
        count: Box<ExpectCond>,
        share: Share,
    },
    /// `age(f) op duration`, the age (`measures[measure]`) on the left.
    Age {
        op: BinOp,
        measure: u32,
        seconds: i64,
    },
    Not(Box<ExpectCond>),
    And(Box<ExpectCond>, Box<ExpectCond>),
    Or(Box<ExpectCond>, Box<ExpectCond>),
}

/// A share of `rows` as an exact fraction: `5%` is 5/100, `0.5%` is
/// 5/1000 (never a Float).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    pub numer: i128,
    pub denom: i128,
}

impl Share {
    /// The share `text%`, from the number as written (`5`, `0.5`, `1_000`,
    /// `2.5e-1`); `None` when it does not fit an exact fraction of 128 bits.
    pub fn parse(text: &str) -> Option<Share> {
        let text = text.replace('_', "");
        let (mantissa, exp) = match text.find(['e', 'E']) {
            Some(i) => (&text[..i], text[i + 1..].parse::<i32>().ok()?),
            None => (&text[..], 0),
        };
        let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits: i128 = format!("{whole}{frac}").parse().ok()?;
        // The value is digits × 10^(exp − frac digits), over 100.
        let scale = exp - frac.len() as i32 - 2;
        let power = 10i128.checked_pow(scale.unsigned_abs())?;
        let (numer, denom) = if scale >= 0 {
            (digits.checked_mul(power)?, 1)
        } else {
            (digits, power)
        };
        let g = gcd(numer, denom);
        Some(Share {
            numer: numer / g,
            denom: denom / g,
        })
    }

    /// How `count` compares with this share of `rows`, exactly:
    /// `missing(e) <= 5%` holds when `missing(e) * 100 <= 5 * rows`.
    pub fn compare(self, count: i128, rows: i128) -> Option<std::cmp::Ordering> {
        let left = count.checked_mul(self.denom)?;
        let right = rows.checked_mul(self.numer)?;
        Some(left.cmp(&right))
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

#[derive(Debug)]
pub struct UniqueSpec {
    pub id: Rc<str>,
    pub slots: Vec<u32>,
}

/// A type expression, compiled (language.md §4.1).
#[derive(Debug)]
pub enum TypeSpec {
    Any,
    Null,
    Bool,
    Int,
    Float,
    String,
    List(Box<TypeSpec>),
    Map(Box<TypeSpec>),
    /// An inline record, with the openness of its declaration.
    Record(Rc<RecordShape>),
    Union(Vec<TypeSpec>),
    Literal(Value),
    /// A declared type, filled in once every declaration is compiled.
    Named(Rc<OnceCell<Rc<Contract>>>),
}

impl TypeSpec {
    pub fn admits_null(&self) -> bool {
        match self {
            TypeSpec::Any | TypeSpec::Null => true,
            TypeSpec::Union(members) => members.iter().any(TypeSpec::admits_null),
            TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
                Some(Shape::Refined { base, .. }) => base.admits_null(),
                _ => false,
            },
            _ => false,
        }
    }

    pub fn is_bool(&self) -> bool {
        matches!(self, TypeSpec::Bool)
    }

    /// How the type reads in messages and union failures.
    /// The inline record this type holds — itself, a list's or map's
    /// items, a union's record member — for `hql contract` to list its
    /// fields. A named type is described by its name, not listed.
    pub fn inline_record(&self) -> Option<&RecordShape> {
        match self {
            TypeSpec::Record(record) => Some(record),
            TypeSpec::List(t) | TypeSpec::Map(t) => t.inline_record(),
            TypeSpec::Union(members) => members.iter().find_map(TypeSpec::inline_record),
            _ => None,
        }
    }

    /// The type in a message: an inline record is `a record`.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        self.write_text(&mut out, Records::Described);
        out
    }

    /// The type as HQL writes it: `List[Item]`, `"G" | "PG"`,
    /// `{ a: Int, b?: String }`.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.write_text(&mut out, Records::Fields);
        out
    }

    /// The one printer of types, which `hql contract`, the exports, `hql
    /// diff` and messages use; `records` says how inline records read.
    pub fn write_text(&self, out: &mut String, records: Records) {
        let name = match self {
            TypeSpec::Any => "Any",
            TypeSpec::Null => "Null",
            TypeSpec::Bool => "Bool",
            TypeSpec::Int => "Int",
            TypeSpec::Float => "Float",
            TypeSpec::String => "String",
            TypeSpec::List(item) | TypeSpec::Map(item) => {
                out.push_str(if matches!(self, TypeSpec::List(_)) {
                    "List["
                } else {
                    "Map["
                });
                item.write_text(out, records);
                out.push(']');
                return;
            }
            TypeSpec::Record(shape) => return shape.write_text(out, records),
            TypeSpec::Union(members) => {
                for (i, m) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" | ");
                    }
                    m.write_text(out, records);
                }
                return;
            }
            TypeSpec::Literal(v) => return crate::runtime::print::write_hql(out, v),
            TypeSpec::Named(cell) => cell.get().map_or("", |c| &c.name),
        };
        out.push_str(name);
    }
}

/// How `TypeSpec::write_text` writes an inline record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Records {
    /// In full: `{ a: Int, b?: String }`.
    Fields,
    /// In full, each field's default after it (`{ a: Int = 0 }`): what
    /// `hql diff` compares.
    WithDefaults,
    /// `Record`, its fields listed beside it (OpenLineage's nested fields).
    Word,
    /// `a record`, in a message.
    Described,
}

impl RecordShape {
    fn write_text(&self, out: &mut String, records: Records) {
        match records {
            Records::Word => return out.push_str("Record"),
            Records::Described => return out.push_str("a record"),
            Records::Fields | Records::WithDefaults => {}
        }
        out.push_str("{ ");
        for (i, f) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            crate::syntax::canonical::write_key(out, &f.name);
            if f.optional {
                out.push('?');
            }
            out.push_str(": ");
            f.ty.write_text(out, records);
            if let (Records::WithDefaults, Some(d)) = (records, &f.default_text) {
                out.push_str(" = ");
                out.push_str(d);
            }
        }
        out.push_str(" }");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    #[test]
    fn shares_are_exact_fractions() {
        let share = |t: &str| Share::parse(t).map(|s| (s.numer, s.denom));
        assert_eq!(share("5"), Some((1, 20)));
        assert_eq!(share("0.5"), Some((1, 200)));
        assert_eq!(share("100"), Some((1, 1)));
        assert_eq!(share("1_000"), Some((10, 1)));
        assert_eq!(share("2.5e-1"), Some((1, 400)));
        assert_eq!(share("0.1"), Some((1, 1000)));
        assert_eq!(share("1e99"), None);
    }

    #[test]
    fn a_share_compares_at_its_boundary_exactly() {
        // Exactly 5% of 20 rows is one row.
        let five = Share::parse("5").unwrap();
        assert_eq!(five.compare(1, 20), Some(Ordering::Equal));
        assert_eq!(five.compare(2, 20), Some(Ordering::Greater));
        assert_eq!(five.compare(0, 20), Some(Ordering::Less));
        // 0.1% is not the Float 0.001: a thousandth of 1000 rows is 1.
        let tenth = Share::parse("0.1").unwrap();
        assert_eq!(tenth.compare(1, 1000), Some(Ordering::Equal));
        assert_eq!(tenth.compare(3, 3000), Some(Ordering::Equal));
    }
}
