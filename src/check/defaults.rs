//! Defaults against their fields' types, before anything runs (§4.3: "a
//! default must match its field's type"): `check_defaults(types, functions)
//! -> Vec<CheckError>`.
//!
//! A default that can be computed at check time — one that reaches no
//! file, parameter or environment variable, directly or through the
//! functions, `let`s and types it uses — is computed and put through
//! step 3 of §4.8 for its field, as it will be each time it is filled: the
//! base type, the refinement rules (`e: Email = "nope"` breaks
//! `Email.well_formed`) and the field's named checks. A default that
//! cannot be decided so is left to run time.

use std::io::BufRead;
use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::check::CheckError;
use crate::runtime::builtins::Builtin;
use crate::runtime::contract::{Contract, FieldSpec, RecordShape, Shape, TypeSpec};
use crate::runtime::decide::FailureKind;
use crate::runtime::eval::{Formats, Function, Host, Interp};
use crate::runtime::hir::{Expr, FnDef, Program};
use crate::runtime::validate::field_findings;
use crate::runtime::value::Value;
use crate::syntax::ast::{FieldDecl, Member, TypeBody, TypeDecl, TypeExpr};

/// The program's globals as the checker lowered them.
pub struct Globals<'a> {
    pub functions: &'a [(u32, Rc<FnDef>)],
    /// Each `let`'s slot and value.
    pub lets: FxHashMap<u32, &'a Expr>,
    pub count: usize,
}

/// Check the defaults `decls` declare, each against its compiled field.
pub fn check_defaults(decls: &[(&TypeDecl, Rc<Contract>)], globals: &Globals) -> Vec<CheckError> {
    let mut pairs = Vec::new();
    for (decl, contract) in decls {
        if let (TypeBody::Record(members), Some(record)) = (&decl.body, contract.record()) {
            let own = members.iter().filter_map(|m| match m {
                Member::Field(f) => Some(f),
                _ => None,
            });
            pair_fields(own, record, &mut pairs);
        }
    }
    if pairs.is_empty() {
        return Vec::new();
    }
    let fns: FxHashMap<u32, Rc<FnDef>> = globals.functions.iter().cloned().collect();
    let interp = Interp::new(
        Rc::new(NoHost),
        // No default that reads or writes runs (`Reach`): no format is
        // asked for.
        Formats::default(),
        &crate::runtime::exec::stages::ENGINE,
    );
    interp.load(&Program {
        stmts: Vec::new(),
        globals: globals.count,
        functions: globals.functions.to_vec(),
        names: Vec::new(),
    });
    pairs
        .into_iter()
        .filter(|(_, spec)| {
            let reach = Reach::new(&fns, &globals.lets);
            match reach.field(spec) {
                Some(lets) => run_lets(&interp, &globals.lets, lets),
                None => false,
            }
        })
        .filter_map(|(decl, spec)| {
            let (rule, kind) = first_failure(&interp, spec)?;
            let field = decl.name.text.clone();
            let span = decl.default.as_ref()?.span.clone();
            Some(match kind {
                FailureKind::Require | FailureKind::Check | FailureKind::Eval => {
                    CheckError::DefaultBreaks {
                        field,
                        rule: rule.to_string(),
                        span,
                    }
                }
                _ => CheckError::DefaultType {
                    field,
                    expected: spec.ty.describe(),
                    span,
                },
            })
        })
        .collect()
}

/// Does `b` read or write the world outside the program: a source, a
/// target, the environment, a parameter, standard input? (`file(…)` alone
/// only names a path.)
pub fn reads_or_writes(b: Builtin) -> bool {
    use Builtin::*;
    matches!(b, Source | Stdin | Param | Env | Write | Route)
}

/// A `let` that a declared type needs — through a default, a rule or a
/// named check, directly or through the functions, types and `let`s those
/// reach — and what it is needed by.
#[derive(Debug, Clone, PartialEq)]
pub struct NeededLet {
    pub slot: u32,
    /// The first type (of `types`' order) that needs it.
    pub by: String,
    /// The first builtin its value reaches that reads or writes the world
    /// outside (`source`, `write`, `route`, `env`, `param`, `stdin`); `None`
    /// when it is pure.
    pub world: Option<Builtin>,
}

/// The `let`s the declarations of `types` need, in slot order: what the
/// commands that read declarations only (`hql diff`, `export`, `vet`, …)
/// may evaluate — those that are pure — and must refuse.
pub fn needed_lets(types: &[Rc<Contract>], globals: &Globals) -> Vec<NeededLet> {
    let fns: FxHashMap<u32, Rc<FnDef>> = globals.functions.iter().cloned().collect();
    let mut needed: Vec<NeededLet> = Vec::new();
    for ty in types {
        let mut reach = Reach::new(&fns, &globals.lets);
        reach.reach_type(ty);
        for slot in reach.follow(false) {
            if needed.iter().any(|n| n.slot == slot) {
                continue;
            }
            let Some(value) = globals.lets.get(&slot) else {
                continue;
            };
            let mut own = Reach::new(&fns, &globals.lets);
            own.expr(value);
            own.follow(false);
            needed.push(NeededLet {
                slot,
                by: ty.name.clone(),
                world: own.world,
            });
        }
    }
    needed.sort_by_key(|n| n.slot);
    needed
}

/// Give the `let`s a default reaches their values, earliest first (a `let`
/// reads only those before it); whether they all have one.
fn run_lets(interp: &Rc<Interp>, lets: &FxHashMap<u32, &Expr>, mut needed: Vec<u32>) -> bool {
    needed.sort_unstable();
    needed.into_iter().all(|slot| {
        if interp.global_value(slot).is_some() {
            return true;
        }
        let Some(value) = lets.get(&slot) else {
            return false;
        };
        match interp.eval(value, &None) {
            Ok(v) => {
                interp.set_global(slot, v.stored());
                true
            }
            Err(_) => false,
        }
    })
}

/// The first failure (rule and kind) of the field's default, computed
/// now, against the field's own type and checks.
fn first_failure(interp: &Rc<Interp>, spec: &FieldSpec) -> Option<(Rc<str>, FailureKind)> {
    // An evaluation error is left for run time to report where it happens.
    let value = interp.eval(spec.default.as_ref()?, &None).ok()?;
    field_findings(interp, spec, value.stored())
        .ok()?
        .into_iter()
        .next()
}

/// Each field with a default as declared, with its compiled spec; nested
/// inline records included.
fn pair_fields<'a>(
    fields: impl Iterator<Item = &'a FieldDecl>,
    record: &'a RecordShape,
    out: &mut Vec<(&'a FieldDecl, &'a FieldSpec)>,
) {
    for f in fields {
        let Some(spec) = record.field(&f.name.text) else {
            continue;
        };
        if f.default.is_some() && spec.default.is_some() {
            out.push((f, spec));
        }
        pair_type(&f.ty, &spec.ty, out);
    }
}

fn pair_type<'a>(
    t: &'a TypeExpr,
    spec: &'a TypeSpec,
    out: &mut Vec<(&'a FieldDecl, &'a FieldSpec)>,
) {
    match (t, spec) {
        (TypeExpr::Record { fields, .. }, TypeSpec::Record(record)) => {
            pair_fields(fields.iter(), record, out)
        }
        (TypeExpr::Generic { args, .. }, TypeSpec::List(inner) | TypeSpec::Map(inner)) => {
            if let [arg] = args.as_slice() {
                pair_type(arg, inner, out);
            }
        }
        (TypeExpr::Union(members), TypeSpec::Union(specs)) => {
            for (m, s) in members.iter().zip(specs) {
                pair_type(m, s, out);
            }
        }
        _ => {}
    }
}

/// What a default reaches: the functions it calls, the `let`s it reads,
/// the types it validates against, and theirs in turn. It is decidable
/// when nothing it reaches reads the world outside.
struct Reach<'a> {
    fns: &'a FxHashMap<u32, Rc<FnDef>>,
    lets: &'a FxHashMap<u32, &'a Expr>,
    /// Globals reached so far (functions and `let`s).
    seen_globals: FxHashSet<u32>,
    seen_types: FxHashSet<*const Contract>,
    global_queue: Vec<u32>,
    type_queue: Vec<Rc<Contract>>,
    undecidable: bool,
    /// The first builtin met that reads or writes the world outside.
    world: Option<Builtin>,
}

impl<'a> Reach<'a> {
    fn new(fns: &'a FxHashMap<u32, Rc<FnDef>>, lets: &'a FxHashMap<u32, &'a Expr>) -> Reach<'a> {
        Reach {
            fns,
            lets,
            seen_globals: FxHashSet::default(),
            seen_types: FxHashSet::default(),
            global_queue: Vec::new(),
            type_queue: Vec::new(),
            undecidable: false,
            world: None,
        }
    }

    /// Everything the field's default and its checks reach, followed to
    /// the end (iteratively: recursive functions and types end the walk):
    /// the `let`s to compute first, or None when it is not decidable.
    fn field(mut self, spec: &FieldSpec) -> Option<Vec<u32>> {
        self.field_spec(spec);
        let lets = self.follow(true);
        (!self.undecidable).then_some(lets)
    }

    /// Follow what is queued to the end — or, with `stop`, until something
    /// undecidable is met: the `let`s reached, in the order met.
    fn follow(&mut self, stop: bool) -> Vec<u32> {
        let mut lets = Vec::new();
        while !(stop && self.undecidable) {
            let (fns, values) = (self.fns, self.lets);
            if let Some(slot) = self.global_queue.pop() {
                if let Some(def) = fns.get(&slot) {
                    self.expr(&def.body);
                } else if let Some(value) = values.get(&slot) {
                    lets.push(slot);
                    self.expr(value);
                } else {
                    self.undecidable = true;
                }
            } else if let Some(c) = self.type_queue.pop() {
                self.contract(&c);
            } else {
                break;
            }
        }
        lets
    }

    fn expr(&mut self, e: &Expr) {
        e.walk(&mut |x| match x {
            Expr::Global(slot, _) => self.reach_global(*slot),
            Expr::Builtin { builtin, .. } => self.builtin(*builtin),
            Expr::Const(Value::Func(f)) => {
                if let Function::Builtin(b) = &**f {
                    self.builtin(*b);
                }
            }
            Expr::Type(cell) | Expr::Construct { cell, .. } => match cell.get() {
                Some(c) => self.reach_type(c),
                None => self.undecidable = true,
            },
            _ => {}
        });
    }

    fn reach_global(&mut self, slot: u32) {
        if self.seen_globals.insert(slot) {
            self.global_queue.push(slot);
        }
    }

    fn builtin(&mut self, b: Builtin) {
        use Builtin::*;
        if matches!(b, Source | File | Stdin | Param | Env | Write | Route) {
            self.undecidable = true;
        }
        if self.world.is_none() && reads_or_writes(b) {
            self.world = Some(b);
        }
    }

    fn reach_type(&mut self, c: &Rc<Contract>) {
        if self.seen_types.insert(Rc::as_ptr(c)) {
            self.type_queue.push(c.clone());
        }
    }

    fn contract(&mut self, c: &Contract) {
        match &c.shape {
            Shape::Record { record, .. } => self.record(record),
            Shape::Refined { base, rules, .. } => {
                self.spec(base);
                rules.iter().for_each(|r| self.expr(&r.cond));
            }
        }
    }

    fn record(&mut self, record: &RecordShape) {
        record.fields.iter().for_each(|f| self.field_spec(f));
        let rules = record.rules.iter().chain(&record.warns);
        rules.for_each(|r| self.expr(&r.cond));
    }

    fn field_spec(&mut self, f: &FieldSpec) {
        self.spec(&f.ty);
        if let Some(d) = &f.default {
            self.expr(d);
        }
        f.checks.iter().for_each(|c| self.expr(&c.func));
    }

    fn spec(&mut self, spec: &TypeSpec) {
        match spec {
            TypeSpec::List(t) | TypeSpec::Map(t) => self.spec(t),
            TypeSpec::Record(record) => self.record(record),
            TypeSpec::Union(members) => members.iter().for_each(|m| self.spec(m)),
            TypeSpec::Named(cell) => match cell.get() {
                Some(c) => self.reach_type(c),
                None => self.undecidable = true,
            },
            _ => {}
        }
    }
}

/// The world as check time sees it: nothing to read. Only decidable
/// defaults are computed, and they reach no source, so none of it is asked.
struct NoHost;

impl Host for NoHost {
    fn open_file(&self, _path: &str) -> std::io::Result<Box<dyn BufRead>> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    fn stdin(&self) -> Option<Box<dyn BufRead>> {
        None
    }
}
