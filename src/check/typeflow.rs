//! Type flow (language.md §7): `flow(&ast::Module, &Types) -> Vec<CheckError>`.
//!
//! Follows static types through pipelines, so that after `validate(T) |
//! oks()` a lambda's parameter is known to be a `T`. Where a type is known it
//! catches, before anything runs: a field that a closed type does not
//! declare (with a "did you mean"), operators given operands they cannot
//! take, and builtins given arguments of the wrong type. Where a type is not
//! known nothing is reported: the evaluator checks at run time.

use std::collections::BTreeMap;
use std::rc::Rc;

use rustc_hash::FxHashMap;

use crate::check::names::{Binding, Names};
use crate::check::suggest::one_edit_away;
use crate::check::{closest, CheckError, CheckWarning};
use crate::runtime::builtins::Builtin;
use crate::runtime::contract::{Contract, Shape, TypeSpec};
use crate::runtime::value::article;
use crate::syntax::ast::{self, BinOp, Expr, ExprKind, Lit, Member, Stmt, TypeBody, UnOp};

/// A static type, as far as it is known.
#[derive(Clone)]
pub enum Ty {
    Unknown,
    Null,
    Bool,
    Int,
    Float,
    Str,
    List(Box<Ty>),
    Stream(Box<Ty>),
    /// A value of a declared record type.
    Named(Rc<Contract>),
    /// `ok(T)` or `err(failure record)`, as `validate(T)` gives.
    Result(Box<Ty>),
    /// A record whose fields are all known: a literal, a failure record,
    /// a `report()`.
    Record(&'static str, Vec<(String, Ty)>),
    /// A declared type used as a value.
    Type(Rc<Contract>),
}

impl std::fmt::Debug for Ty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display())
    }
}

impl Ty {
    fn name(&self) -> String {
        match self {
            Ty::Unknown => "a value".into(),
            Ty::Null => "Null".into(),
            Ty::Bool => "Bool".into(),
            Ty::Int => "Int".into(),
            Ty::Float => "Float".into(),
            Ty::Str => "String".into(),
            Ty::List(_) => "List".into(),
            Ty::Stream(_) => "Stream".into(),
            Ty::Named(c) => c.name.clone(),
            Ty::Result(_) => "Result".into(),
            Ty::Record(..) => "Record".into(),
            Ty::Type(_) => "Type".into(),
        }
    }

    /// How `:type` shows it: `Stream[Sighting]`, `List[Int]`.
    pub fn display(&self) -> String {
        match self {
            Ty::Unknown => "Any".into(),
            Ty::List(t) => format!("List[{}]", t.display()),
            Ty::Stream(t) => format!("Stream[{}]", t.display()),
            Ty::Result(t) => format!("Result[{}]", t.display()),
            Ty::Record(_, fields) => {
                let fields: Vec<String> = fields
                    .iter()
                    .map(|(n, t)| format!("{n}: {}", t.display()))
                    .collect();
                format!("{{{}}}", fields.join(", "))
            }
            Ty::Type(c) => format!("Type[{}]", c.name),
            other => other.name(),
        }
    }

    /// The fields a value of this type is known to have (for completion).
    pub fn fields(&self) -> Vec<String> {
        match self {
            Ty::Named(c) => c
                .record()
                .map(|r| r.fields.iter().map(|f| f.name.to_string()).collect())
                .unwrap_or_default(),
            Ty::Record(_, fields) => fields.iter().map(|(n, _)| n.clone()).collect(),
            Ty::Result(t) => t.fields(),
            _ => vec![],
        }
    }

    fn is_scalar(&self) -> bool {
        matches!(self, Ty::Null | Ty::Bool | Ty::Int | Ty::Float | Ty::Str)
    }

    fn is_number(&self) -> bool {
        matches!(self, Ty::Int | Ty::Float)
    }

    /// The element type of a stream or list.
    fn element(&self) -> Ty {
        match self {
            Ty::Stream(t) | Ty::List(t) => (**t).clone(),
            _ => Ty::Unknown,
        }
    }
}

/// What a record literal's type is called.
const LITERAL: &str = "this record";

/// Declared types by name, compiled.
pub type Types = FxHashMap<String, Rc<Contract>>;

/// What type flow learnt of a program's declarations: the types of its
/// `let`s and functions, and the declared field each field read names. A
/// session keeps them to follow its next entry without following its
/// history again.
#[derive(Default)]
pub struct Facts {
    lets: BTreeMap<usize, Ty>,
    /// Each function's parameter types and return type, where annotated.
    fns: FxHashMap<usize, (Vec<Ty>, Ty)>,
    /// By where the field's name is written.
    field_reads: BTreeMap<usize, DeclaredField>,
}

impl Facts {
    /// Forget what was learnt of the text at or after offset `at`: an
    /// entry that did not check, and declared no function.
    pub(crate) fn forget_from(&mut self, at: usize) {
        self.lets.split_off(&at);
        self.field_reads.split_off(&at);
    }
}

/// Run type flow over `stmts`, adding to `facts` what it learns of them;
/// the statements before offset `from` (the standard library's) are
/// followed for their declarations only.
pub fn flow(
    stmts: &[Stmt],
    types: &Types,
    names: &Names,
    from: usize,
    facts: &mut Facts,
) -> Flowed {
    let mut f = Flow {
        last: None,
        types,
        names,
        locals: FxHashMap::default(),
        frame: Vec::new(),
        facts,
        errors: Vec::new(),
        warnings: Vec::new(),
        frame_owner: None,
        guards: Vec::new(),
    };
    for stmt in stmts {
        if let Stmt::Fn(d) = stmt {
            let ret = f.annotated(d.name.span.start);
            let params = d
                .params
                .iter()
                .map(|p| f.annotated(p.name.span.start))
                .collect();
            f.facts.fns.insert(d.name.span.start, (params, ret));
        }
    }
    for stmt in stmts {
        let own = crate::check::stmt_start(stmt) >= from;
        f.stmt(stmt, own);
    }
    Flowed {
        errors: f.errors,
        warnings: f.warnings,
        last: f.last,
    }
}

/// What type flow found: errors, and the type of the last expression
/// statement (the REPL's `:type`).
pub struct Flowed {
    pub errors: Vec<CheckError>,
    pub warnings: Vec<CheckWarning>,
    pub last: Option<Ty>,
}

/// What a builtin makes of its lambda argument's value.
#[derive(Clone, Copy)]
enum Predicate {
    /// A value (`map`).
    No,
    /// A truth, a bare `x?` body a presence test (`filter`).
    TestsPresence,
    /// A truth, a bare `x?` body the value (`all`, `any`).
    Value,
}

/// Declarations are keyed as `Names` keys them: by where their names are
/// written.
struct Flow<'a> {
    types: &'a Types,
    /// What each name refers to: the checker's resolution, never redone here.
    names: &'a Names,
    /// Parameters of lambdas and functions.
    locals: FxHashMap<usize, Ty>,
    /// The slots of the rule frame being followed: `self`, then the fields.
    frame: Vec<Ty>,
    facts: &'a mut Facts,
    errors: Vec<CheckError>,
    warnings: Vec<CheckWarning>,
    last: Option<Ty>,
    /// The record type whose rules `frame` follows.
    frame_owner: Option<Rc<Contract>>,
    /// What the conditions around the expression being followed say of
    /// fields (`delay != "NA" and …`).
    guards: Vec<Guard>,
}

/// A field of a declared record type: the type and the field's position.
#[derive(Clone)]
struct DeclaredField {
    owner: Rc<Contract>,
    index: usize,
}

/// What a condition that guards a part of an expression says: `field`
/// is not the literal `not` there (`delay != "NA" and delay > 0`).
struct Guard {
    field: (usize, usize),
    not: String,
}

/// A literal as its type's member prints it (`"NA"`, `3`).
fn lit_text(lit: &Lit) -> String {
    let mut out = String::new();
    crate::syntax::canonical::write_lit(&mut out, lit);
    out
}

impl DeclaredField {
    /// Which field it is: its type's address and its position.
    fn key(&self) -> (usize, usize) {
        (Rc::as_ptr(&self.owner) as usize, self.index)
    }

    fn spec(&self) -> Option<&crate::runtime::contract::FieldSpec> {
        self.owner.record()?.fields.get(self.index)
    }
}

impl Flow<'_> {
    fn stmt(&mut self, stmt: &Stmt, own: bool) {
        match stmt {
            Stmt::Let { name, value } => {
                let ty = if own { self.expr(value) } else { Ty::Unknown };
                self.facts.lets.insert(name.span.start, ty);
            }
            _ if !own => {}
            Stmt::Check { cond, .. } => self.condition(cond),
            Stmt::Expr(e) => self.last = Some(self.expr(e)),
            Stmt::Fn(d) => {
                for p in &d.params {
                    let ty = self.annotated(p.name.span.start);
                    self.locals.insert(p.name.span.start, ty);
                }
                self.expr(&d.body);
            }
            Stmt::Type(t) => self.type_decl(t),
            Stmt::Import { .. } => {}
        }
    }

    /// Rules see the record's fields by name and `self` as the record.
    fn type_decl(&mut self, t: &ast::TypeDecl) {
        let Some(c) = self.types.get(&t.name.text).cloned() else {
            return;
        };
        let (frame, rules): (Vec<Ty>, Vec<&ast::Rule>) = match (&c.shape, &t.body) {
            (Shape::Record { record, .. }, TypeBody::Record(members)) => {
                let frame = std::iter::once(Ty::Named(c.clone()))
                    .chain(record.fields.iter().map(|f| spec_ty(&f.ty)))
                    .collect();
                let rules = members
                    .iter()
                    .filter_map(|m| match m {
                        Member::Rule(r) => Some(r),
                        _ => None,
                    })
                    .collect();
                (frame, rules)
            }
            (Shape::Refined { base, .. }, TypeBody::Refine { rules, .. }) => {
                (vec![spec_ty(base)], rules.iter().collect())
            }
            _ => return,
        };
        self.frame = frame;
        self.frame_owner = Some(c.clone());
        for r in rules {
            self.condition(&r.cond);
        }
        self.frame.clear();
        self.frame_owner = None;
        if let (Shape::Record { record, .. }, TypeBody::Record(members)) = (&c.shape, &t.body) {
            for m in members {
                match m {
                    Member::Field(field) => {
                        let (Some(default), Some(spec)) =
                            (&field.default, record.field(&field.name.text))
                        else {
                            continue;
                        };
                        self.default(&field.name.text, default, &spec.ty);
                    }
                    Member::Check { field, func, .. } => {
                        if let Some(spec) = record.field(&field.text) {
                            self.named_check(&spec_ty(&spec.ty), func);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// `validate field with f`: `f` is called with the field's value and
    /// must give a Bool.
    fn named_check(&mut self, field: &Ty, func: &ast::Name) {
        let Some((params, ret)) = self.function(func.span.start) else {
            return;
        };
        if let Some(want) = params.first() {
            if field.is_scalar() && want.is_scalar() && !fits(field, want) {
                self.errors.push(CheckError::ArgumentType {
                    func: func.text.clone(),
                    expected: article(&want.name()),
                    found: field.name(),
                    span: func.span.clone(),
                });
            }
        }
        if !matches!(ret, Ty::Unknown | Ty::Bool) {
            self.errors.push(CheckError::ConditionType {
                found: ret.name(),
                span: func.span.clone(),
            });
        }
    }

    /// A condition (§4.4): a Bool, or `x?` standing as a presence test;
    /// null counts as false. Anything else known is a static error.
    fn condition(&mut self, e: &Expr) {
        let ty = self.expr(e);
        let presence = matches!(e.kind, ExprKind::Present(_));
        if !presence {
            self.condition_type(&ty, e);
        }
    }

    /// An `all`/`any` lambda's body: a condition, where a bare `x?` is
    /// the value, not a presence test (language.md §4.4).
    fn truth(&mut self, e: &Expr) {
        let ty = self.expr(e);
        self.condition_type(&ty, e);
    }

    /// A condition's type `ty` must be a Bool (or null, or unknown).
    fn condition_type(&mut self, ty: &Ty, e: &Expr) {
        if !matches!(ty, Ty::Unknown | Ty::Bool | Ty::Null) {
            self.errors.push(CheckError::ConditionType {
                found: ty.name(),
                span: e.span.clone(),
            });
        }
    }

    /// A default whose type is known must fit its field (§4.3).
    fn default(&mut self, field: &str, default: &Expr, spec: &TypeSpec) {
        let found = self.expr(default);
        let want = spec_ty(spec);
        if found.is_scalar() && want.is_scalar() && !fits(&found, &want) && !spec.admits_null() {
            self.errors.push(CheckError::DefaultType {
                field: field.to_string(),
                expected: spec.describe(),
                span: default.span.clone(),
            });
        }
    }

    /// A parameter's or a function's declared type, as the checker compiled it.
    fn annotated(&self, at: usize) -> Ty {
        self.names
            .annotation(at)
            .map(spec_ty)
            .unwrap_or(Ty::Unknown)
    }

    /// The parameter and return types of the function a name written at
    /// `at` refers to, when it refers to a declared function.
    fn function(&self, at: usize) -> Option<(Vec<Ty>, Ty)> {
        match self.names.binding(at)? {
            Binding::Fn(decl) => self.facts.fns.get(decl).cloned(),
            _ => None,
        }
    }

    /// The type of the value a name written at `at` refers to.
    fn lookup(&self, at: usize) -> Ty {
        let known = match self.names.binding(at) {
            Some(Binding::Param(decl)) => self.locals.get(decl).cloned(),
            Some(Binding::RuleSlot(slot)) => self.frame.get(*slot as usize).cloned(),
            Some(Binding::Let(decl)) => self.facts.lets.get(decl).cloned(),
            Some(Binding::Type(name)) => self.types.get(name).map(|c| Ty::Type(c.clone())),
            _ => None,
        };
        known.unwrap_or(Ty::Unknown)
    }

    fn expr(&mut self, e: &Expr) -> Ty {
        match &e.kind {
            ExprKind::Lit(lit) => lit_ty(lit),
            ExprKind::Name(_) | ExprKind::SelfRef => self.lookup(e.span.start),
            ExprKind::List(items) => {
                let tys: Vec<Ty> = items.iter().map(|i| self.expr(i)).collect();
                shallow(Ty::List(Box::new(join_all(tys))))
            }
            ExprKind::Record(fields) => shallow(Ty::Record(
                "this record",
                fields
                    .iter()
                    .map(|(k, v)| (k.text.clone(), self.expr(v)))
                    .collect(),
            )),
            ExprKind::Field(target, name) => {
                let t = self.expr(target);
                self.field(&t, name)
            }
            ExprKind::Present(inner) => match &inner.kind {
                ExprKind::Field(target, name) => {
                    let t = self.expr(target);
                    self.field(&t, name)
                }
                _ => self.expr(inner),
            },
            ExprKind::Index(target, index) => {
                let t = self.expr(target);
                self.expr(index);
                match (t, &index.kind) {
                    (Ty::List(elem), _) => *elem,
                    (t, ExprKind::Lit(Lit::Str { value, .. })) => {
                        let name = ast::Name {
                            text: value.clone(),
                            span: index.span.clone(),
                        };
                        self.field(&t, &name)
                    }
                    _ => Ty::Unknown,
                }
            }
            ExprKind::Call(func, args) => self.call(func, args, None),
            ExprKind::Pipe(lhs, rhs) => match &rhs.kind {
                ExprKind::Call(func, args) => {
                    let input = self.expr(lhs);
                    self.call(func, args, Some((input, lhs.span.clone())))
                }
                _ => Ty::Unknown,
            },
            ExprKind::Construct(ty, fields) => {
                for (_, v) in fields {
                    self.expr(v);
                }
                self.types
                    .get(&ty.text)
                    .map(named_ty)
                    .unwrap_or(Ty::Unknown)
            }
            ExprKind::Unary(UnOp::Not, x) => {
                self.condition(x);
                Ty::Bool
            }
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or | BinOp::Implies), a, b) => {
                self.condition(a);
                // The right side runs only where `a` is true (`and`, `=>`)
                // or false (`or`): what that says of a field guards it.
                let guards = self.guards_of(a, *op != BinOp::Or);
                self.guarded(guards, |f| f.condition(b));
                Ty::Bool
            }
            ExprKind::Unary(UnOp::Neg, x) => self.expr(x),
            ExprKind::Binary(op, a, b) => {
                let (ta, tb) = (self.expr(a), self.expr(b));
                self.binary(*op, ta, tb, e)
            }
            ExprKind::Lambda(p, body) => {
                self.locals.insert(p.span.start, Ty::Unknown);
                self.expr(body);
                Ty::Unknown
            }
            ExprKind::If(c, a, b) => {
                self.condition(c);
                let (then, other) = (self.guards_of(c, true), self.guards_of(c, false));
                let ta = self.guarded(then, |f| f.expr(a));
                let tb = self.guarded(other, |f| f.expr(b));
                join(&ta, &tb)
            }
        }
    }

    fn binary(&mut self, op: BinOp, a: Ty, b: Ty, e: &Expr) -> Ty {
        if let (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge, ExprKind::Binary(_, l, r)) =
            (op, &e.kind)
        {
            self.uncomparable_member(l, &b);
            self.uncomparable_member(r, &a);
        }
        let known = !matches!(a, Ty::Unknown) && !matches!(b, Ty::Unknown);
        let arithmetic = matches!(
            op,
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem
        );
        let ordering = matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge);
        let fits = match op {
            BinOp::Add => {
                (a.is_number() && b.is_number())
                    || matches!((&a, &b), (Ty::Str, Ty::Str) | (Ty::List(_), Ty::List(_)))
            }
            BinOp::Rem => matches!((&a, &b), (Ty::Int, Ty::Int)),
            _ if arithmetic || ordering => {
                (a.is_number() && b.is_number())
                    || (ordering && matches!((&a, &b), (Ty::Str, Ty::Str)))
            }
            _ => true,
        };
        let membership = matches!(op, BinOp::In | BinOp::NotIn);
        if membership && !can_hold(&b, &a) || known && !membership && !fits {
            self.errors.push(CheckError::OperandTypes {
                op: crate::syntax::canonical::binop_text(op).to_string(),
                left: a.name(),
                right: b.name(),
                span: e.span.clone(),
            });
        }
        match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul if matches!((&a, &b), (Ty::Int, Ty::Int)) => {
                Ty::Int
            }
            BinOp::Add if matches!((&a, &b), (Ty::Str, Ty::Str)) => Ty::Str,
            BinOp::Rem => Ty::Int,
            _ if arithmetic && a.is_number() && b.is_number() => Ty::Float,
            BinOp::Coalesce => join(&a, &b),
            _ if arithmetic => Ty::Unknown,
            _ => Ty::Bool,
        }
    }

    /// A declared field `e` reads (`f.delay`, `delay` in a rule), with
    /// or without `?`.
    fn declared_field(&self, e: &Expr) -> Option<DeclaredField> {
        match &e.kind {
            ExprKind::Present(inner) => self.declared_field(inner),
            ExprKind::Field(_, name) => self.facts.field_reads.get(&name.span.start).cloned(),
            ExprKind::Name(_) => match self.names.binding(e.span.start) {
                Some(Binding::RuleSlot(slot)) if *slot > 0 => Some(DeclaredField {
                    owner: self.frame_owner.clone()?,
                    index: *slot as usize - 1,
                }),
                _ => None,
            },
            _ => None,
        }
    }

    /// What a condition `e` says of fields when it is true (`holds`) or
    /// false: each `(field, value)` where the field is known not to be
    /// that literal (`delay != "NA"` true, `delay == "NA"` false).
    fn guards_of(&self, e: &Expr, holds: bool) -> Vec<Guard> {
        match &e.kind {
            ExprKind::Unary(UnOp::Not, x) => self.guards_of(x, !holds),
            ExprKind::Binary(BinOp::And, a, b) if holds => {
                let mut gs = self.guards_of(a, true);
                gs.extend(self.guards_of(b, true));
                gs
            }
            ExprKind::Binary(BinOp::Or, a, b) if !holds => {
                let mut gs = self.guards_of(a, false);
                gs.extend(self.guards_of(b, false));
                gs
            }
            ExprKind::Binary(op @ (BinOp::Ne | BinOp::Eq), l, r) if (*op == BinOp::Ne) == holds => {
                let sides = [(l, r), (r, l)];
                sides
                    .iter()
                    .find_map(|(f, v)| match (&v.kind, self.declared_field(f)) {
                        (ExprKind::Lit(lit), Some(field)) => Some(Guard {
                            field: field.key(),
                            not: lit_text(lit),
                        }),
                        _ => None,
                    })
                    .into_iter()
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// Run `walk` with `guards` known.
    fn guarded<R>(&mut self, guards: Vec<Guard>, walk: impl FnOnce(&mut Self) -> R) -> R {
        let depth = self.guards.len();
        self.guards.extend(guards);
        let result = walk(self);
        self.guards.truncate(depth);
        result
    }

    /// `e < other` where `e` reads a field whose union type has a member
    /// that cannot be ordered against `other` (`Int | "NA"` against a
    /// number): a warning naming the member, for the comparison raises
    /// an error on each value of it.
    fn uncomparable_member(&mut self, e: &Expr, other: &Ty) {
        let Some(field) = self.declared_field(e) else {
            return;
        };
        let Some(spec) = field.spec() else {
            return;
        };
        let mut members = Vec::new();
        union_members(&spec.ty, &mut members, MAX_TY_DEPTH);
        let orders = |m: &&TypeSpec| match member_kind(m) {
            Some(k) if other.is_number() => k == MemberKind::Number,
            Some(k) if matches!(other, Ty::Str) => k == MemberKind::Text,
            _ => true,
        };
        let some_order = members
            .iter()
            .any(|m| orders(m) && member_kind(m).is_some());
        let key = field.key();
        let guarded = |m: &&&TypeSpec| {
            let text = m.describe();
            self.guards.iter().any(|g| g.field == key && g.not == text)
        };
        let bad = members.iter().find(|m| !orders(m) && !guarded(m));
        if let (true, Some(bad)) = (some_order, bad) {
            self.warnings.push(CheckWarning::UncomparableMember {
                field: spec.name.to_string(),
                member: bad.describe(),
                other: if other.is_number() {
                    "a number"
                } else {
                    "a String"
                }
                .into(),
                span: e.span.clone(),
            });
        }
    }

    /// `t.name`: on a closed type, an undeclared field is an error; on an
    /// open one, a field one edit from a declared one is a warning.
    fn field(&mut self, t: &Ty, name: &ast::Name) -> Ty {
        if let Ty::Named(c) = t {
            if let Some(index) = c
                .record()
                .and_then(|r| r.fields.iter().position(|f| *f.name == *name.text))
            {
                let field = DeclaredField {
                    owner: c.clone(),
                    index,
                };
                self.facts.field_reads.insert(name.span.start, field);
            }
        }
        let (owner, fields, closed) = match t {
            Ty::Named(c) => match &c.shape {
                Shape::Record { kind, record } => {
                    let fields: Vec<(String, Ty)> = record
                        .fields
                        .iter()
                        .map(|f| (f.name.to_string(), spec_ty(&f.ty)))
                        .collect();
                    (c.name.clone(), fields, !kind.is_open())
                }
                Shape::Refined { .. } => return Ty::Unknown,
            },
            Ty::Result(inner) => return self.field(inner, name),
            // A record literal's fields are known, but records grow with
            // `merge`, so reading another one is left to run time.
            Ty::Record(what, fields) => (what.to_string(), fields.clone(), *what != LITERAL),
            _ => return Ty::Unknown,
        };
        if let Some((_, ty)) = fields.iter().find(|(n, _)| *n == name.text) {
            return ty.clone();
        }
        if closed {
            let candidates = closest(&name.text, fields.iter().map(|(n, _)| n.as_str()));
            self.errors.push(CheckError::UnknownField {
                field: name.text.clone(),
                ty: owner,
                span: name.span.clone(),
                candidates,
            });
        } else if let (Ty::Named(_), Some(meant)) = (
            t,
            one_edit_away(&name.text, fields.iter().map(|(n, _)| n.as_str())),
        ) {
            self.warnings.push(CheckWarning::UndeclaredNearField {
                field: name.text.clone(),
                ty: owner,
                meant,
                span: name.span.clone(),
            });
        }
        Ty::Unknown
    }

    fn call(&mut self, func: &Expr, args: &[ast::Arg], piped: Option<(Ty, ast::Span)>) -> Ty {
        let ExprKind::Name(name) = &func.kind else {
            self.expr(func);
            self.args(args, &Ty::Unknown, Predicate::No);
            return Ty::Unknown;
        };
        if let Some((params, ret)) = self.function(func.span.start) {
            self.user_call(name, &params, args, piped);
            return ret;
        }
        let builtin = match self.names.binding(func.span.start) {
            Some(Binding::Builtin(b)) => Some(*b),
            _ => None,
        };
        let Some(b) = builtin else {
            self.args(args, &Ty::Unknown, Predicate::No);
            return Ty::Unknown;
        };
        // The first argument is the pipe's left side, or the first in the list.
        let (input, input_span, rest) = match (piped, args.split_first()) {
            (Some((t, span)), _) => (t, Some(span), args),
            (None, Some((first, rest))) if !matches!(first.value.kind, ExprKind::Lambda(..)) => (
                self.expr(&first.value),
                Some(first.value.span.clone()),
                rest,
            ),
            (None, _) => (Ty::Unknown, None, args),
        };
        if let Some(span) = input_span {
            self.check_input(b, &input, span);
        }
        let elem = input.element();
        let predicate = match b.takes_predicate() {
            true if b.tests_presence() => Predicate::TestsPresence,
            true => Predicate::Value,
            false => Predicate::No,
        };
        let tys = self.args(rest, &elem, predicate);
        if b == Builtin::Validate {
            if let (Some(arg), Some(ty)) = (rest.last(), tys.last()) {
                self.check_type_arg(arg, ty);
            }
        }
        let lambda_ty = tys.last().cloned().unwrap_or(Ty::Unknown);
        builtin_result(b, &input, &elem, &lambda_ty, rest, self)
    }

    /// `validate(t)` where `t` is known to hold something other than a type.
    fn check_type_arg(&mut self, arg: &ast::Arg, ty: &Ty) {
        if !matches!(ty, Ty::Unknown | Ty::Type(_)) {
            self.errors.push(CheckError::NotAType {
                name: crate::syntax::canonical::expr_text(&arg.value),
                span: arg.value.span.clone(),
                found: Some(ty.name()),
            });
        }
    }

    /// A call of a declared function: arguments against annotated parameters.
    fn user_call(
        &mut self,
        name: &str,
        params: &[Ty],
        args: &[ast::Arg],
        piped: Option<(Ty, ast::Span)>,
    ) {
        let mut given: Vec<(Ty, ast::Span)> = piped.into_iter().collect();
        for a in args {
            given.push((self.expr(&a.value), a.value.span.clone()));
        }
        for ((found, span), want) in given.iter().zip(params) {
            if found.is_scalar() && want.is_scalar() && !fits(found, want) {
                self.errors.push(CheckError::ArgumentType {
                    func: name.to_string(),
                    expected: article(&want.name()),
                    found: found.name(),
                    span: span.clone(),
                });
            }
        }
    }

    /// Check the remaining arguments; a lambda's parameter gets `param`,
    /// and a predicate's body is a condition. Each argument's type (a
    /// lambda's: the type it gives back).
    fn args(&mut self, args: &[ast::Arg], param: &Ty, predicate: Predicate) -> Vec<Ty> {
        let mut tys = Vec::with_capacity(args.len());
        for a in args {
            tys.push(match &a.value.kind {
                ExprKind::Lambda(p, body) => {
                    self.locals.insert(p.span.start, param.clone());
                    match predicate {
                        Predicate::TestsPresence => {
                            self.condition(body);
                            Ty::Bool
                        }
                        Predicate::Value => {
                            self.truth(body);
                            Ty::Bool
                        }
                        Predicate::No => self.expr(body),
                    }
                }
                _ => self.expr(&a.value),
            });
        }
        tys
    }

    /// The first argument of a builtin, where its type is known.
    fn check_input(&mut self, b: Builtin, input: &Ty, span: ast::Span) {
        if b == Builtin::Write && matches!(input.element(), Ty::Result(_)) {
            self.errors
                .push(CheckError::WriteResults { span: span.clone() });
        }
        let expected = match b {
            Builtin::Lower
            | Builtin::Upper
            | Builtin::Trim
            | Builtin::StartsWith
            | Builtin::EndsWith
            | Builtin::Matches
            | Builtin::Replace
            | Builtin::Split
            | Builtin::Fmt => Some(("a String", matches!(input, Ty::Str))),
            Builtin::Len => Some((
                "a String, a list or a record",
                !matches!(input, Ty::Int | Ty::Float | Ty::Bool | Ty::Null),
            )),
            Builtin::Abs | Builtin::Round | Builtin::Floor | Builtin::Ceil => {
                Some(("a number", input.is_number()))
            }
            Builtin::Keys | Builtin::Values | Builtin::Has | Builtin::Merge => {
                Some(("a record", matches!(input, Ty::Named(_) | Ty::Record(..))))
            }
            b if is_stage(b) => Some((
                "a stream or a list",
                matches!(input, Ty::List(_) | Ty::Stream(_)),
            )),
            _ => None,
        };
        if let Some((what, ok)) = expected {
            if !ok && !matches!(input, Ty::Unknown) {
                self.errors.push(CheckError::ArgumentType {
                    func: b.name().to_string(),
                    expected: what.to_string(),
                    found: input.name(),
                    span,
                });
            }
        }
    }
}

/// What a union's member is, as `<` sees it.
#[derive(Clone, Copy, PartialEq)]
enum MemberKind {
    Number,
    Text,
    /// A Bool, a list, a record: ordered against nothing.
    Other,
}

/// How `<` treats a value of type `m`; `None` for null and `Any`, which
/// the comparison does not decide here.
fn member_kind(m: &TypeSpec) -> Option<MemberKind> {
    member_kind_within(m, MAX_TY_DEPTH)
}

fn member_kind_within(m: &TypeSpec, levels: usize) -> Option<MemberKind> {
    let deeper = levels.checked_sub(1)?;
    Some(match m {
        TypeSpec::Named(cell) => match &cell.get()?.shape {
            Shape::Refined { base, .. } => return member_kind_within(base, deeper),
            Shape::Record { .. } => MemberKind::Other,
        },
        TypeSpec::Int | TypeSpec::Float => MemberKind::Number,
        TypeSpec::String => MemberKind::Text,
        TypeSpec::Literal(v) if v.as_str().is_some() => MemberKind::Text,
        TypeSpec::Literal(v) if v.is_number() => MemberKind::Number,
        TypeSpec::Null | TypeSpec::Any | TypeSpec::Union(_) => return None,
        _ => MemberKind::Other,
    })
}

/// The members of a union type, declared names followed to their bases;
/// nothing for a type that is not a union.
fn union_members<'s>(spec: &'s TypeSpec, out: &mut Vec<&'s TypeSpec>, levels: usize) {
    let Some(deeper) = levels.checked_sub(1) else {
        return;
    };
    match spec {
        TypeSpec::Union(ms) => {
            for m in ms {
                match m {
                    TypeSpec::Union(_) | TypeSpec::Named(_) => {
                        let before = out.len();
                        union_members(m, out, deeper);
                        if out.len() == before {
                            out.push(m);
                        }
                    }
                    _ => out.push(m),
                }
            }
        }
        TypeSpec::Named(cell) => {
            if let Some(Shape::Refined { base, .. }) = cell.get().map(|c| &c.shape) {
                union_members(base, out, deeper);
            }
        }
        _ => {}
    }
}

/// Can `x in haystack` be asked? A list holds anything; a string holds
/// strings (substrings), a record strings (keys). Unknowns may.
fn can_hold(haystack: &Ty, x: &Ty) -> bool {
    let x_may_be_str = matches!(x, Ty::Str | Ty::Unknown);
    match haystack {
        Ty::Unknown | Ty::List(_) => true,
        Ty::Str | Ty::Named(_) | Ty::Record(..) => x_may_be_str,
        _ => false,
    }
}

/// Can a value of type `found` stand where `want` is declared?
pub fn fits(found: &Ty, want: &Ty) -> bool {
    match (found, want) {
        (Ty::Int, Ty::Float) => true,
        (Ty::Unknown, _) | (_, Ty::Unknown) => true,
        _ => std::mem::discriminant(found) == std::mem::discriminant(want),
    }
}

fn is_stage(b: Builtin) -> bool {
    use Builtin::*;
    matches!(
        b,
        Oks | Errs
            | Warnings
            | Unwrap
            | Report
            | Map
            | Filter
            | FlatMap
            | Take
            | Skip
            | Count
            | Sum
            | Min
            | Max
            | Avg
            | First
            | All
            | Any
            | Sort
            | SortBy
            | Distinct
            | CountBy
            | GroupBy
            | Collect
            | Join
            | Write
            | Route
    )
}

/// What a builtin gives, from its input's type.
fn builtin_result(
    b: Builtin,
    input: &Ty,
    elem: &Ty,
    lambda: &Ty,
    rest: &[ast::Arg],
    f: &Flow,
) -> Ty {
    use Builtin::*;
    let stream = |t: Ty| Ty::Stream(Box::new(t));
    match b {
        Source => stream(Ty::Unknown),
        Validate => {
            let ty = rest
                .last()
                .map(|a| match &a.value.kind {
                    ExprKind::Name(n) => f.types.get(n).map(named_ty).unwrap_or(Ty::Unknown),
                    _ => Ty::Unknown,
                })
                .unwrap_or(Ty::Unknown);
            let result = Ty::Result(Box::new(ty));
            match input {
                Ty::List(_) | Ty::Stream(_) => stream(result),
                Ty::Unknown => Ty::Unknown,
                _ => result,
            }
        }
        Oks | Unwrap => match elem {
            Ty::Result(t) => stream((**t).clone()),
            _ => stream(Ty::Unknown),
        },
        // `err(v)` built by the program holds any value, not a failure
        // record (`Result(Unknown)`).
        Errs => match elem {
            Ty::Result(t) if matches!(**t, Ty::Unknown) => stream(Ty::Unknown),
            _ => stream(failure_ty()),
        },
        Ok => Ty::Result(Box::new(input.clone())),
        Err => Ty::Result(Box::new(Ty::Unknown)),
        Warnings => stream(Ty::Unknown),
        Map => stream(lambda.clone()),
        FlatMap => stream(lambda.element()),
        Filter | Take | Skip | Distinct => stream(elem.clone()),
        Sort | SortBy | Collect => Ty::List(Box::new(elem.clone())),
        First | Min | Max => elem.clone(),
        Count | Len => Ty::Int,
        Avg => Ty::Float,
        All | Any | Contains | StartsWith | EndsWith | Matches | Has | IsOk | IsErr => Ty::Bool,
        Report => report_ty(),
        Fmt | Lower | Upper | Trim | Replace | Join | String => Ty::Str,
        Split => Ty::List(Box::new(Ty::Str)),
        Round | Floor | Ceil | Int => Ty::Int,
        Float => Ty::Float,
        _ => Ty::Unknown,
    }
}

fn record_ty(what: &'static str, fields: &[(&str, Ty)]) -> Ty {
    Ty::Record(
        what,
        fields
            .iter()
            .map(|(n, t)| (n.to_string(), t.clone()))
            .collect(),
    )
}

/// The failure record of language.md §4.9.
fn failure_ty() -> Ty {
    let failure = record_ty(
        "a failure",
        &[
            ("rule", Ty::Str),
            ("kind", Ty::Str),
            ("path", Ty::Unknown),
            ("fields", Ty::List(Box::new(Ty::Str))),
            ("severity", Ty::Str),
            ("message", Ty::Str),
        ],
    );
    let origin = record_ty("an origin", &[("source", Ty::Str), ("line", Ty::Int)]);
    record_ty(
        "a failure record",
        &[
            ("type", Ty::Unknown),
            ("version", Ty::Unknown),
            ("origin", origin),
            ("input", Ty::Unknown),
            ("failures", Ty::List(Box::new(failure))),
        ],
    )
}

fn report_ty() -> Ty {
    let row = record_ty(
        "a report row",
        &[("rule", Ty::Str), ("kind", Ty::Str), ("count", Ty::Int)],
    );
    record_ty(
        "a report",
        &[
            ("total", Ty::Int),
            ("ok", Ty::Int),
            ("err", Ty::Int),
            ("warned", Ty::Int),
            ("by_rule", Ty::List(Box::new(row))),
        ],
    )
}

fn named_ty(c: &Rc<Contract>) -> Ty {
    named_ty_within(c, MAX_TY_DEPTH)
}

fn spec_ty(spec: &TypeSpec) -> Ty {
    spec_ty_within(spec, MAX_TY_DEPTH)
}

/// A declared type's static type, following aliases and type arguments at
/// most `levels` deep (a chain of aliases can be as long as the program).
fn named_ty_within(c: &Rc<Contract>, levels: usize) -> Ty {
    match &c.shape {
        Shape::Record { .. } => Ty::Named(c.clone()),
        Shape::Refined { base, .. } => spec_ty_within(base, levels),
    }
}

fn spec_ty_within(spec: &TypeSpec, levels: usize) -> Ty {
    let Some(deeper) = levels.checked_sub(1) else {
        return Ty::Unknown;
    };
    match spec {
        TypeSpec::Null => Ty::Null,
        TypeSpec::Bool => Ty::Bool,
        TypeSpec::Int => Ty::Int,
        TypeSpec::Float => Ty::Float,
        TypeSpec::String => Ty::Str,
        TypeSpec::List(t) => Ty::List(Box::new(spec_ty_within(t, deeper))),
        TypeSpec::Literal(v) if v.as_str().is_some() => Ty::Str,
        TypeSpec::Literal(v) if v.is_int() => Ty::Int,
        TypeSpec::Union(ms) => join_all(ms.iter().map(|m| spec_ty_within(m, deeper)).collect()),
        TypeSpec::Named(cell) => (cell.get())
            .map(|c| named_ty_within(c, deeper))
            .unwrap_or(Ty::Unknown),
        _ => Ty::Unknown,
    }
}

fn lit_ty(lit: &Lit) -> Ty {
    match lit {
        Lit::Int(_) => Ty::Int,
        Lit::Float(_) => Ty::Float,
        Lit::Str { .. } => Ty::Str,
        Lit::Bool(_) => Ty::Bool,
        Lit::Null => Ty::Null,
        // Only an expectation holds these, and it checks them itself.
        Lit::Percent(_) | Lit::Duration(_) => Ty::Unknown,
    }
}

/// The type two branches share, or Unknown.
fn join(a: &Ty, b: &Ty) -> Ty {
    match (a, b) {
        (Ty::Int, Ty::Int) | (Ty::Float, Ty::Float) | (Ty::Str, Ty::Str) | (Ty::Bool, Ty::Bool) => {
            a.clone()
        }
        (Ty::Int, Ty::Float) | (Ty::Float, Ty::Int) => Ty::Float,
        (Ty::Named(x), Ty::Named(y)) if Rc::ptr_eq(x, y) => a.clone(),
        (Ty::Result(x), Ty::Result(y)) => Ty::Result(Box::new(join(x, y))),
        _ => Ty::Unknown,
    }
}

fn join_all(tys: Vec<Ty>) -> Ty {
    let mut iter = tys.into_iter();
    let Some(first) = iter.next() else {
        return Ty::Unknown;
    };
    iter.fold(first, |acc, t| join(&acc, &t))
}

/// Static types of values the program builds are followed this deep:
/// `let`s that each nest the one before would otherwise make a type as
/// deep as the value, copied at every use.
const MAX_TY_DEPTH: usize = 64;

/// A list or record type, its parts forgotten when they are very deep.
fn shallow(ty: Ty) -> Ty {
    if !deeper_than(&ty, MAX_TY_DEPTH) {
        return ty;
    }
    match ty {
        Ty::List(_) => Ty::List(Box::new(Ty::Unknown)),
        _ => Ty::Unknown,
    }
}

fn deeper_than(ty: &Ty, levels: usize) -> bool {
    match ty {
        Ty::List(t) | Ty::Stream(t) | Ty::Result(t) => levels == 0 || deeper_than(t, levels - 1),
        Ty::Record(_, fields) => {
            levels == 0 || fields.iter().any(|(_, t)| deeper_than(t, levels - 1))
        }
        _ => false,
    }
}
