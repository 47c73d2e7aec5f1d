//! Expectations (language.md §4.11): `expect [warn] [name:] condition`
//! checked and compiled into a `contract::ExpectSpec`.
//!
//! A condition combines measures (`rows`, `missing(f)`, `age(f)`, …) with
//! literals, arithmetic, comparisons and `and`/`or`/`not`, and nothing
//! else. Each part gets a sort — a count, a number, a share, a duration,
//! an age, a Bool — and the sorts decide what may meet: a share (`5%`) is
//! compared with a count only, a duration (`3d`) with an age only. A
//! measure's field is a declared field or a dotted path into nested
//! records, resolved here to slots.

use std::rc::Rc;

use crate::check::{closest, known, CheckError, Checker, Known, Pos};
use crate::runtime::contract::{
    ExpectCond, ExpectSpec, FieldPath, FieldSpec, Measure, MeasureSpec, OrphanKeys, RecordShape,
    Shape, Share, TypeSpec,
};
use crate::runtime::value::{Key, Value};
use crate::syntax::ast::{self, BinOp, Expr as AExpr, ExprKind, Lit, UnOp};
use crate::syntax::canonical::{binop_text, expr_text};

/// The measures of §4.11: names, not keywords.
pub const MEASURES: [&str; 13] = [
    "rows",
    "failures",
    "missing",
    "nulls",
    "invalid",
    "duplicates",
    "distinct",
    "orphans",
    "min",
    "max",
    "sum",
    "avg",
    "age",
];

/// What a part of a condition is, for what it may meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    Count,
    Number,
    Age,
    Bool,
    /// A part already reported: it meets anything without a second error.
    Unknown,
}

impl Sort {
    fn text(self) -> &'static str {
        match self {
            Sort::Count => "a count",
            Sort::Number => "a number",
            Sort::Age => "an age",
            Sort::Bool => "a Bool",
            Sort::Unknown => "a value",
        }
    }

    fn is_numeric(self) -> bool {
        matches!(self, Sort::Count | Sort::Number | Sort::Unknown)
    }
}

/// A condition being lowered: the measures met so far.
struct Lowering<'r> {
    record: &'r RecordShape,
    owner: &'r str,
    /// The type being compiled, whose record a path may come back to.
    this: &'r str,
    measures: Vec<MeasureSpec>,
    fields: Vec<Key>,
}

impl Checker {
    /// `expect …` of `owner` (the type, or the ancestor that declares it),
    /// over `record`, the fields of the type `this` being compiled.
    pub(super) fn expectation(
        &mut self,
        record: &RecordShape,
        owner: &str,
        this: &str,
        e: &ast::Expectation,
    ) -> ExpectSpec {
        let mut low = Lowering {
            record,
            owner,
            this,
            measures: Vec::new(),
            fields: Vec::new(),
        };
        let cond = self.expect_bool(&mut low, &e.cond);
        ExpectSpec {
            id: super::identity::expect_id(owner, e).into(),
            warn: e.warn,
            text: expr_text(&e.cond),
            doc: e.doc.clone(),
            fields: low.fields,
            measures: low.measures,
            cond,
        }
    }

    fn expect_part(&mut self, low: &mut Lowering, e: &AExpr) -> (ExpectCond, Sort) {
        let span = e.span.clone();
        match &e.kind {
            ExprKind::Lit(Lit::Int(_) | Lit::Float(_)) => match self.literal_of(e) {
                Some(v) => (ExpectCond::Number(v), Sort::Number),
                None => unknown(),
            },
            ExprKind::Lit(Lit::Bool(b)) => (ExpectCond::Bool(*b), Sort::Bool),
            ExprKind::Lit(Lit::Percent(_)) => {
                self.error(CheckError::ShareOfNonCount { found: None, span });
                unknown()
            }
            ExprKind::Lit(Lit::Duration(_)) => {
                self.error(CheckError::DurationOutsideAge { span });
                unknown()
            }
            ExprKind::Name(n) => self.bare_measure(low, n, &span),
            ExprKind::Call(f, args) => match &f.kind {
                ExprKind::Name(n) => self.measure_call(low, n, args, &span),
                _ => self.not_in_expectation(low, e),
            },
            ExprKind::Unary(UnOp::Not, x) => {
                let x = self.expect_bool(low, x);
                (ExpectCond::Not(Box::new(x)), Sort::Bool)
            }
            ExprKind::Unary(UnOp::Neg, x) => {
                let (x, sort) = self.expect_part(low, x);
                if !sort.is_numeric() {
                    self.operands("-", sort, sort, span);
                }
                (ExpectCond::Neg(Box::new(x)), Sort::Number)
            }
            ExprKind::Binary(op, a, b) => self.expect_binary(low, *op, a, b, span),
            _ => self.not_in_expectation(low, e),
        }
    }

    fn expect_bool(&mut self, low: &mut Lowering, e: &AExpr) -> ExpectCond {
        let (cond, sort) = self.expect_part(low, e);
        if !matches!(sort, Sort::Bool | Sort::Unknown) {
            self.error(CheckError::ConditionType {
                found: sort.text().trim_start_matches("a ").to_string(),
                span: e.span.clone(),
            });
        }
        cond
    }

    fn expect_binary(
        &mut self,
        low: &mut Lowering,
        op: BinOp,
        a: &AExpr,
        b: &AExpr,
        span: ast::Span,
    ) -> (ExpectCond, Sort) {
        match op {
            BinOp::And | BinOp::Or => {
                let (a, b) = (self.expect_bool(low, a), self.expect_bool(low, b));
                let (a, b) = (Box::new(a), Box::new(b));
                let cond = if op == BinOp::And {
                    ExpectCond::And(a, b)
                } else {
                    ExpectCond::Or(a, b)
                };
                (cond, Sort::Bool)
            }
            BinOp::Rem => {
                self.error(CheckError::ModuloInExpectation { span });
                unknown()
            }
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => {
                let (x, left) = self.expect_part(low, a);
                let (y, right) = self.expect_part(low, b);
                if !(left.is_numeric() && right.is_numeric()) {
                    self.operands(binop_text(op), left, right, span);
                }
                let counts = left == Sort::Count && right == Sort::Count;
                let sort = if counts && matches!(op, BinOp::Add | BinOp::Sub) {
                    Sort::Count
                } else {
                    Sort::Number
                };
                (ExpectCond::Arith(op, Box::new(x), Box::new(y)), sort)
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                self.expect_compare(low, op, (a, b), span)
            }
            BinOp::Implies | BinOp::In | BinOp::NotIn | BinOp::Coalesce => {
                self.error(CheckError::NotInExpectation {
                    what: format!("`{}`", binop_text(op)),
                    field: None,
                    span,
                });
                unknown()
            }
        }
    }

    /// A comparison: a share with a count, a duration with an age, else
    /// two numbers or two Bools.
    fn expect_compare(
        &mut self,
        low: &mut Lowering,
        op: BinOp,
        (a, b): (&AExpr, &AExpr),
        span: ast::Span,
    ) -> (ExpectCond, Sort) {
        // The literal on the right, the operator turned to match.
        let (a, op, b) = match (&a.kind, &b.kind) {
            (ExprKind::Lit(Lit::Percent(_) | Lit::Duration(_)), _) => (b, op.flipped(), a),
            _ => (a, op, b),
        };
        match &b.kind {
            ExprKind::Lit(Lit::Percent(text)) => {
                let (count, sort) = self.expect_part(low, a);
                if !matches!(sort, Sort::Count | Sort::Unknown) {
                    self.error(CheckError::ShareOfNonCount {
                        found: Some(sort.text().into()),
                        span: b.span.clone(),
                    });
                }
                let Some(share) = Share::parse(text) else {
                    self.error(CheckError::IntOutOfRange {
                        span: b.span.clone(),
                    });
                    return unknown();
                };
                let count = Box::new(count);
                (ExpectCond::Share { op, count, share }, Sort::Bool)
            }
            ExprKind::Lit(Lit::Duration(text)) => {
                let (age, sort) = self.expect_part(low, a);
                let seconds = duration_seconds(text);
                match (age, seconds) {
                    (ExpectCond::Measure(measure), Some(seconds)) if sort == Sort::Age => (
                        ExpectCond::Age {
                            op,
                            measure,
                            seconds,
                        },
                        Sort::Bool,
                    ),
                    (_, None) => {
                        self.error(CheckError::IntOutOfRange {
                            span: b.span.clone(),
                        });
                        unknown()
                    }
                    _ => {
                        if sort != Sort::Unknown {
                            self.error(CheckError::DurationOutsideAge {
                                span: b.span.clone(),
                            });
                        }
                        unknown()
                    }
                }
            }
            _ => {
                let (x, left) = self.expect_part(low, a);
                let (y, right) = self.expect_part(low, b);
                for (sort, side) in [(left, a), (right, b)] {
                    if sort == Sort::Age {
                        self.error(CheckError::AgeWithoutDuration {
                            span: side.span.clone(),
                        });
                        return unknown();
                    }
                }
                let same = (left.is_numeric() && right.is_numeric())
                    || (left == Sort::Bool && right == Sort::Bool && is_equality(op))
                    || left == Sort::Unknown
                    || right == Sort::Unknown;
                if !same {
                    self.operands(binop_text(op), left, right, span);
                }
                (
                    ExpectCond::Compare(op, Box::new(x), Box::new(y)),
                    Sort::Bool,
                )
            }
        }
    }

    /// A part an expectation cannot hold: a field, a call of anything but
    /// a measure, a string, a list, a pipeline …
    fn not_in_expectation(&mut self, low: &Lowering, e: &AExpr) -> (ExpectCond, Sort) {
        let field = path_steps(e)
            .and_then(|steps| steps.into_iter().next())
            .map(|(name, _)| name)
            .filter(|name| low.record.index.contains_key(name.as_str()));
        let what = match (&e.kind, &field) {
            (_, Some(_)) => format!("`{}`, a field,", expr_text(e)),
            (ExprKind::Call(..), _) => "a call of anything but a measure".into(),
            (ExprKind::Lit(_), _) => format!("the literal `{}`", expr_text(e)),
            (ExprKind::Pipe(..), _) => "a pipeline".into(),
            _ => format!("`{}`", expr_text(e)),
        };
        self.error(CheckError::NotInExpectation {
            what,
            field,
            span: e.span.clone(),
        });
        unknown()
    }

    fn operands(&mut self, op: &str, left: Sort, right: Sort, span: ast::Span) {
        if left == Sort::Unknown || right == Sort::Unknown {
            return;
        }
        self.error(CheckError::ExpectOperands {
            op: op.to_string(),
            left: left.text().into(),
            right: right.text().into(),
            span,
        });
    }

    /// An Int or Float literal's value; its error reported when it has one.
    fn literal_of(&mut self, e: &AExpr) -> Option<Value> {
        let ExprKind::Lit(lit) = &e.kind else {
            return None;
        };
        match self.literal(lit, &e.span) {
            Value::Absent => None,
            v => Some(v),
        }
    }

    /// `rows`, `failures`; any other name is a misuse.
    fn bare_measure(
        &mut self,
        low: &mut Lowering,
        n: &str,
        span: &ast::Span,
    ) -> (ExpectCond, Sort) {
        match n {
            "rows" => (low.measure(n, Measure::Rows), Sort::Count),
            "failures" => (low.measure(n, Measure::Failures), Sort::Count),
            _ if MEASURES.contains(&n) => {
                self.error(CheckError::MeasureArguments {
                    measure: n.to_string(),
                    takes: takes(n),
                    span: span.clone(),
                });
                unknown()
            }
            _ if low.record.index.contains_key(n) => {
                self.error(CheckError::NotInExpectation {
                    what: format!("`{n}`, a field,"),
                    field: Some(n.to_string()),
                    span: span.clone(),
                });
                unknown()
            }
            _ => {
                self.error(CheckError::UnknownMeasure {
                    name: n.to_string(),
                    span: span.clone(),
                    candidates: closest(n, MEASURES.into_iter()),
                });
                unknown()
            }
        }
    }

    fn measure_call(
        &mut self,
        low: &mut Lowering,
        n: &str,
        args: &[ast::Arg],
        span: &ast::Span,
    ) -> (ExpectCond, Sort) {
        // `rows` and `failures` are written without parentheses: no call
        // of them is right.
        let arity = match n {
            "rows" | "failures" => Some(None),
            "duplicates" => Some(Some(1..=usize::MAX)),
            "orphans" => Some(Some(2..=2)),
            _ if MEASURES.contains(&n) => Some(Some(1..=1)),
            _ => None,
        };
        let Some(arity) = arity else {
            self.error(CheckError::UnknownMeasure {
                name: n.to_string(),
                span: span.clone(),
                candidates: closest(n, MEASURES.into_iter()),
            });
            return unknown();
        };
        let fits = arity.is_some_and(|a| a.contains(&args.len()));
        if !fits || args.iter().any(|a| a.name.is_some()) {
            self.error(CheckError::MeasureArguments {
                measure: n.to_string(),
                takes: takes(n),
                span: span.clone(),
            });
            return unknown();
        }
        let text = measure_text(n, args);
        let measure = match n {
            "duplicates" => {
                let paths: Option<Vec<FieldPath>> = args
                    .iter()
                    .map(|a| self.measure_path(low, n, &a.value).map(|(p, _)| p))
                    .collect();
                paths.map(Measure::Duplicates)
            }
            "orphans" => {
                let field = self.measure_path(low, n, &args[0].value).map(|(p, _)| p);
                let keys = self.orphan_keys(&args[1].value);
                field
                    .zip(keys)
                    .map(|(field, keys)| Measure::Orphans { field, keys })
            }
            _ => self.one_field_measure(low, n, &args[0].value),
        };
        let Some(measure) = measure else {
            return unknown();
        };
        let sort = match &measure {
            Measure::Age { .. } => Sort::Age,
            m if m.is_count() => Sort::Count,
            _ => Sort::Number,
        };
        (low.measure(&text, measure), sort)
    }

    /// `missing(f)`, `min(f)`, `age(f)` and the other measures of one field.
    fn one_field_measure(&mut self, low: &mut Lowering, n: &str, arg: &AExpr) -> Option<Measure> {
        let (path, step) = self.measure_path(low, n, arg)?;
        let wrong = |expected: &'static str| CheckError::MeasureFieldType {
            measure: n.to_string(),
            field: path.text(),
            found: step.describe.clone(),
            expected,
            span: arg.span.clone(),
        };
        Some(match n {
            "missing" => Measure::Missing(path),
            "nulls" => Measure::Nulls(path),
            "invalid" => Measure::Invalid(path),
            "distinct" => Measure::Distinct(path),
            "age" => match step.time {
                Some(date) => Measure::Age { field: path, date },
                None => {
                    self.error(wrong("a Date or a Timestamp"));
                    return None;
                }
            },
            _ if !step.numeric => {
                self.error(wrong("a number (Int or Float)"));
                return None;
            }
            "min" => Measure::Min(path),
            "max" => Measure::Max(path),
            "sum" => Measure::Sum(path),
            _ => Measure::Avg(path),
        })
    }

    /// A measure's field: a name, a dotted path into nested records, or
    /// `self["US Gross"]`; its slots and what its declared type allows.
    fn measure_path(
        &mut self,
        low: &mut Lowering,
        n: &str,
        e: &AExpr,
    ) -> Option<(FieldPath, Step)> {
        let Some(steps) = path_steps(e) else {
            self.error(CheckError::MeasureArguments {
                measure: n.to_string(),
                takes: "a declared field or a dotted path into nested records (`address.city`)",
                span: e.span.clone(),
            });
            return None;
        };
        let mut path = FieldPath {
            slots: Vec::new(),
            names: Vec::new(),
        };
        let mut last: Option<Step> = None;
        for (name, span) in steps {
            let step = match &last {
                None => self.step(low.record, low.owner, &name, &span),
                Some(prev) => {
                    let owner = format!("field `{}`", path.text());
                    let Some(next) = prev.record.clone() else {
                        self.error(CheckError::MeasurePath {
                            path: path.text(),
                            found: prev.describe.clone(),
                            span: span.clone(),
                        });
                        return None;
                    };
                    let shaped = self.shape_of(next, low)?;
                    let shape = shaped.get(low.record)?;
                    let step = step_in(shape, &name);
                    if step.is_none() {
                        let candidates = closest(&name, shape.fields.iter().map(|f| &*f.name));
                        self.error(CheckError::UnknownField {
                            field: name.clone(),
                            ty: owner,
                            span: span.clone(),
                            candidates,
                        });
                    }
                    step
                }
            }?;
            if path.names.is_empty() && !low.fields.iter().any(|f| **f == *name) {
                low.fields.push(name.as_str().into());
            }
            path.slots.push(step.slot);
            path.names.push(name.as_str().into());
            last = Some(step);
        }
        last.map(|step| (path, step))
    }

    /// The field `name` of the record being compiled; an unknown one is
    /// an error with the nearest names.
    fn step(
        &mut self,
        shape: &RecordShape,
        owner: &str,
        name: &str,
        span: &ast::Span,
    ) -> Option<Step> {
        let step = step_in(shape, name);
        if step.is_none() {
            let candidates = closest(name, shape.fields.iter().map(|f| &*f.name));
            self.error(CheckError::UnknownField {
                field: name.to_string(),
                ty: owner.to_string(),
                span: span.clone(),
                candidates,
            });
        }
        step
    }

    /// The record a path steps into, compiling a declared type on first
    /// need (a type may be declared after the one whose expectation reads
    /// it).
    fn shape_of(&mut self, mut k: Known, low: &Lowering) -> Option<Shaped> {
        loop {
            let cell = match k {
                Known::Inline(record) => return Some(Shaped::Inline(record)),
                Known::Declared(cell) => cell,
            };
            if cell.get().is_none() {
                let name = self
                    .types
                    .iter()
                    .find(|(_, e)| Rc::ptr_eq(&e.cell, &cell))
                    .map(|(n, e)| (n.clone(), e.compiling))?;
                if name.0 == low.this {
                    return Some(Shaped::This);
                }
                if name.1 {
                    return None;
                }
                self.compile_type(&name.0)?;
            }
            let contract = cell.get()?.clone();
            k = match &contract.shape {
                Shape::Record { .. } => return Some(Shaped::Declared(contract)),
                Shape::Refined { base, .. } => known(base)?,
            };
        }
    }

    /// `orphans`' keys: a list of literals, or `source(…) | map(r => r.g)`.
    fn orphan_keys(&mut self, e: &AExpr) -> Option<OrphanKeys> {
        if let ExprKind::List(items) = &e.kind {
            let mut keys = Vec::new();
            for item in items {
                match &item.kind {
                    ExprKind::Lit(Lit::Percent(_) | Lit::Duration(_))
                    | ExprKind::Lit(Lit::Null) => {}
                    ExprKind::Lit(lit) => {
                        let v = self.literal(lit, &item.span);
                        keys.push(v);
                        continue;
                    }
                    _ => {}
                }
                self.error(CheckError::OrphanKeys {
                    span: item.span.clone(),
                });
                return None;
            }
            return Some(OrphanKeys::List(keys));
        }
        let Some((source, path)) = source_map(e) else {
            self.error(CheckError::OrphanKeys {
                span: e.span.clone(),
            });
            return None;
        };
        let text = expr_text(source);
        let source = self.expr(source, Pos::Value);
        Some(OrphanKeys::Source { source, path, text })
    }
}

/// What a measure's path found at one step: the field's slot, its type
/// described, whether `age` and `min`… may measure it, and the record it
/// holds, if it holds one.
struct Step {
    slot: u32,
    describe: String,
    /// `Some(true)` for a `Date`, `Some(false)` for a `Timestamp`.
    time: Option<bool>,
    numeric: bool,
    record: Option<Known>,
}

fn step_in(shape: &RecordShape, name: &str) -> Option<Step> {
    let slot = *shape.index.get(name)?;
    let f: &FieldSpec = &shape.fields[slot as usize];
    Some(Step {
        slot,
        describe: f.ty.describe(),
        time: time_kind(&f.ty),
        numeric: is_numeric(&f.ty),
        record: known(&f.ty),
    })
}

/// A record a path steps into, held while it is read.
enum Shaped {
    Inline(Rc<RecordShape>),
    Declared(Rc<crate::runtime::contract::Contract>),
    /// The type being compiled (`next?: Node` in `Node`).
    This,
}

impl Shaped {
    fn get<'a>(&'a self, this: &'a RecordShape) -> Option<&'a RecordShape> {
        match self {
            Shaped::Inline(r) => Some(r),
            Shaped::Declared(c) => c.record(),
            Shaped::This => Some(this),
        }
    }
}

/// The names a path reads, each with where it is written: `a.b` is
/// `[a, b]`, `self["US Gross"]` is `["US Gross"]`.
fn path_steps(e: &AExpr) -> Option<Vec<(String, ast::Span)>> {
    let (target, name, span) = match &e.kind {
        ExprKind::Name(n) => return Some(vec![(n.clone(), e.span.clone())]),
        ExprKind::Field(target, name) => (target, name.text.clone(), name.span.clone()),
        ExprKind::Index(target, index) => match &index.kind {
            ExprKind::Lit(Lit::Str { value, .. }) => (target, value.clone(), index.span.clone()),
            _ => return None,
        },
        _ => return None,
    };
    let mut steps = match target.kind {
        ExprKind::SelfRef => Vec::new(),
        _ => path_steps(target)?,
    };
    steps.push((name, span));
    Some(steps)
}

/// `source(…) | map(r => r.g)`: the source and the path `g`.
fn source_map(e: &AExpr) -> Option<(&AExpr, Vec<Key>)> {
    let ExprKind::Pipe(source, map) = &e.kind else {
        return None;
    };
    let ExprKind::Call(f, _) = &source.kind else {
        return None;
    };
    if !matches!(&f.kind, ExprKind::Name(n) if n == "source") {
        return None;
    }
    let ExprKind::Call(m, margs) = &map.kind else {
        return None;
    };
    let [arg] = margs.as_slice() else {
        return None;
    };
    let (ExprKind::Name(m), None) = (&m.kind, &arg.name) else {
        return None;
    };
    let ExprKind::Lambda(param, body) = &arg.value.kind else {
        return None;
    };
    if m != "map" {
        return None;
    }
    let mut path = Vec::new();
    let mut at = &**body;
    while let ExprKind::Field(target, name) = &at.kind {
        path.push(Key::from(name.text.as_str()));
        at = target;
    }
    let reads_param = matches!(&at.kind, ExprKind::Name(n) if *n == param.text);
    if path.is_empty() || !reads_param {
        return None;
    }
    path.reverse();
    Some((&**source, path))
}

/// Is a field of type `ty` a `Date` (`Some(true)`) or a `Timestamp`
/// (`Some(false)`), possibly nullable or refined further?
fn time_kind(ty: &TypeSpec) -> Option<bool> {
    match ty {
        TypeSpec::Named(cell) => {
            let c = cell.get()?;
            match (c.name.as_str(), &c.shape) {
                ("Date", _) => Some(true),
                ("Timestamp", _) => Some(false),
                (_, Shape::Refined { base, .. }) => time_kind(base),
                _ => None,
            }
        }
        TypeSpec::Union(members) => single_non_null(members).and_then(time_kind),
        _ => None,
    }
}

/// Is every value of type `ty` but null a number?
fn is_numeric(ty: &TypeSpec) -> bool {
    match ty {
        TypeSpec::Int | TypeSpec::Float => true,
        TypeSpec::Literal(v) => matches!(v, Value::Int(_) | Value::Float(_)),
        TypeSpec::Union(members) => {
            let mut values = members.iter().filter(|m| !matches!(m, TypeSpec::Null));
            values.clone().next().is_some() && values.all(is_numeric)
        }
        TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
            Some(Shape::Refined { base, .. }) => is_numeric(base),
            _ => false,
        },
        _ => false,
    }
}

fn single_non_null(members: &[TypeSpec]) -> Option<&TypeSpec> {
    let mut values = members.iter().filter(|m| !matches!(m, TypeSpec::Null));
    match (values.next(), values.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

fn is_equality(op: BinOp) -> bool {
    matches!(op, BinOp::Eq | BinOp::Ne)
}

/// A duration literal in seconds: `30s`, `15m`, `12h`, `3d`.
fn duration_seconds(text: &str) -> Option<i64> {
    let (number, unit) = text.split_at(text.len() - 1);
    let n: i64 = number.replace('_', "").parse().ok()?;
    let unit = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => 86_400,
    };
    n.checked_mul(unit)
}

/// What measure `n` takes, for its error's help.
fn takes(n: &str) -> &'static str {
    match n {
        "rows" | "failures" => "no arguments: it is written without parentheses",
        "duplicates" => "one or more fields: `duplicates(customer_id, placed)`",
        "orphans" => "a field and its keys: `orphans(f, [\"a\", \"b\"])` or `orphans(f, source(\"customers\") | map(c => c.id))`",
        _ => "one field: a declared field or a dotted path into nested records",
    }
}

/// A measure call in canonical form, the key that makes it one measure.
fn measure_text(n: &str, args: &[ast::Arg]) -> String {
    let args: Vec<String> = args.iter().map(|a| expr_text(&a.value)).collect();
    format!("{n}({})", args.join(", "))
}

/// `(cond, sort)` of a part already reported.
fn unknown() -> (ExpectCond, Sort) {
    (ExpectCond::Bool(true), Sort::Unknown)
}

impl Lowering<'_> {
    /// The measure written `text`, once however often the condition reads it.
    fn measure(&mut self, text: &str, measure: Measure) -> ExpectCond {
        let at = match self.measures.iter().position(|m| m.text == text) {
            Some(at) => at,
            None => {
                self.measures.push(MeasureSpec {
                    text: text.to_string(),
                    measure,
                });
                self.measures.len() - 1
            }
        };
        ExpectCond::Measure(at as u32)
    }
}
