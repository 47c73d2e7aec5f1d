//! Rules compiled below the evaluator (language.md §4.8, steps 5 and 7).
//!
//! A rule's condition is compiled once per contract into a `Kernel`: a tree
//! whose leaves read the record's frame slots directly, and whose folds
//! over a list field (`items | map(i => i.qty * i.price) | sum()`,
//! `len(items)`, `all(items, i => …)`) run over the list's elements without
//! building a stream. The token path (`scan`) goes further: a list of
//! records that rules read only through folds is never built as a value;
//! its elements' checked fields are kept as rows (`Rows`) and folded there.
//!
//! A kernel decides nothing on its own. Every operator goes through the
//! evaluator's own functions (`ops`, `call_builtin`); a construct it does
//! not compile is evaluated by the evaluator in the record's frame. A
//! kernel `Bail`s exactly where the evaluator raises an error, so a rule
//! whose kernel bails fails with `eval`; the value path then asks the
//! evaluator for the error itself. (A lambda that reads its item whole,
//! or a field its element does not declare, makes its list be built —
//! `Reads::opaque` — so a row never meets code it cannot run.) The
//! differential tests in `session/kernel_agreement.rs` and
//! `session/scan_agreement.rs` hold kernels to the evaluator.

use std::borrow::Cow;
use std::rc::Rc;

use regex::Regex;
use smallvec::SmallVec;

use crate::runtime::builtins::Builtin;
use crate::runtime::contract::{RecordShape, RuleSpec, TypeSpec};
use crate::runtime::eval::{ops, Env, Interp};
use crate::runtime::hir::{Expr, Logic};
use crate::runtime::value::{Key, Value};
use crate::syntax::ast::BinOp;

/// The evaluator would raise an error here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bail;

type Out = Result<Value, Bail>;

/// One rule's condition, compiled.
pub struct Kernel {
    code: Code,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Kernel")
    }
}

enum Code {
    Const(Value),
    /// A field of the record, by frame slot (0 is `self`).
    Slot(u32),
    /// The item a fold's lambda is called with, read whole.
    Item,
    /// `item.name`: by its slot in the element's frame when the item is a
    /// row of a list of records, by its name otherwise.
    ItemField {
        name: Key,
        slot: Option<u32>,
        soft: bool,
    },
    Field {
        target: Box<Code>,
        name: Key,
        soft: bool,
    },
    Soft(Box<Code>),
    Presence(Box<Code>),
    Not(Box<Code>),
    Neg(Box<Code>),
    Logic(Logic, Box<Code>, Box<Code>),
    Binary(BinOp, Box<Code>, Box<Code>),
    If(Box<Code>, Box<Code>, Box<Code>),
    Matches(Box<Code>, Rc<Regex>),
    /// A builtin over single values (`len` of a text, `lower`, …).
    Builtin(Builtin, Vec<Code>),
    Fold(Box<Fold>),
    /// Anything else, evaluated in the record's frame (never inside a
    /// fold's lambda, whose frame a kernel does not build).
    Eval(Box<Expr>),
}

/// `list | filter(…) | map(…) | end` over a field of the record.
struct Fold {
    /// The frame slot of the list field.
    list: u32,
    steps: Vec<Step>,
    end: End,
}

enum Step {
    Map(Lambda),
    Filter(Lambda),
}

struct Lambda {
    body: Code,
    /// Called as a predicate (`filter`, `all`, `any`): a Bool, absent and
    /// null are false.
    predicate: bool,
}

enum End {
    Sum,
    Count,
    Len,
    All(Lambda),
    Any(Lambda),
}

/// The elements of a list of records that the token path did not build:
/// each element's frame slots 1.., `width` to a row.
#[derive(Clone, Copy)]
pub struct Rows<'a> {
    /// How many elements.
    pub len: usize,
    /// Each element's frame slots from 1 (slot 0, `self`, is never read),
    /// `width` to an element.
    pub width: usize,
    pub cells: &'a [Value],
}

/// Where a kernel finds the rows of a list field the token path kept as
/// rows; `None` means the field's value is in the frame.
pub trait Lists {
    fn rows(&self, slot: u32) -> Option<Rows<'_>>;
}

/// No list kept as rows: every value is in the frame.
pub struct InFrame;

impl Lists for InFrame {
    fn rows(&self, _: u32) -> Option<Rows<'_>> {
        None
    }
}

/// What a kernel reads of its record, for the token path to decide which
/// list fields need not be built.
#[derive(Default)]
pub struct Reads {
    /// Frame slots read as whole values.
    pub whole: Vec<u32>,
    /// Per list field folded over (by frame slot), the element fields its
    /// rows must hold (by the element's field position).
    pub folded: Vec<(u32, Vec<u32>)>,
    /// List fields folded over whose items some lambda reads other than
    /// by a field the element declares: they must be built.
    pub opaque: Vec<u32>,
}

impl Kernel {
    /// Compile `cond`. `element_field(list_slot, name)` is the position of
    /// field `name` in the records of the list field at frame slot
    /// `list_slot`, when it is a list of declared records.
    pub fn compile(cond: &Expr, element_field: &dyn Fn(u32, &str) -> Option<u32>) -> Kernel {
        Kernel {
            code: top(cond, element_field),
        }
    }

    /// The condition's value in the record's frame `env`, with the lists
    /// kept as rows in `lists`.
    pub fn run(&self, interp: &Rc<Interp>, env: &Env, lists: &dyn Lists) -> Out {
        let slots = env.as_ref().map(|f| &f.slots[..]).unwrap_or(&[]);
        let cx = Cx {
            interp,
            env,
            slots,
            lists,
        };
        cx.run(&self.code, None)
    }

    /// Add what this kernel reads to `reads`.
    pub fn reads(&self, reads: &mut Reads) {
        self.code.reads(reads);
    }
}

// ---------------------------------------------------------------- compiling

/// The position of field `name` in the records of the list field at frame
/// slot `list`, when its elements are records of a known shape.
pub fn element_field(shape: &RecordShape, list: u32, name: &str) -> Option<u32> {
    let field = shape.fields.get((list as usize).checked_sub(1)?)?;
    let TypeSpec::List(elem) = &field.ty else {
        return None;
    };
    let index = match &**elem {
        TypeSpec::Record(inner) => inner.index.get(name).copied(),
        TypeSpec::Named(cell) => cell.get()?.record()?.index.get(name).copied(),
        _ => None,
    };
    index
}

/// Compile at a rule's top level: what is not known is evaluated.
fn top(e: &Expr, element_field: &dyn Fn(u32, &str) -> Option<u32>) -> Code {
    compile(e, Place::Rule(element_field)).unwrap_or_else(|| Code::Eval(Box::new(e.clone())))
}

/// Where an expression is compiled.
#[derive(Clone, Copy)]
enum Place<'a> {
    /// In a rule's frame, where what a kernel does not compile is
    /// evaluated; `element_field` as `Kernel::compile` takes it.
    Rule(&'a dyn Fn(u32, &str) -> Option<u32>),
    /// In a fold's lambda: its parameter is the item, whose fields are at
    /// `field(name)` in a row, and the frame above it the record's.
    /// Nothing can be evaluated there: a kernel builds no lambda frame.
    Lambda(&'a dyn Fn(&str) -> Option<u32>),
}

/// Compile `e` at `place`; `None` for what a kernel cannot run there.
fn compile(e: &Expr, place: Place) -> Option<Code> {
    // An operand: in a rule's frame, evaluated if it does not compile.
    let sub = |x: &Expr| -> Option<Box<Code>> {
        let code = match (compile(x, place), place) {
            (Some(code), _) => code,
            (None, Place::Rule(_)) => Code::Eval(Box::new(x.clone())),
            (None, Place::Lambda(_)) => return None,
        };
        Some(Box::new(code))
    };
    Some(match (e, place) {
        (Expr::Const(v), _) => Code::Const(v.clone()),
        (Expr::Local { depth: 0, slot }, Place::Rule(_)) => Code::Slot(*slot),
        (Expr::Local { depth: 0, slot: 0 }, Place::Lambda(_)) => Code::Item,
        (Expr::Local { depth: 1, slot }, Place::Lambda(_)) => Code::Slot(*slot),
        (
            Expr::Field {
                target, name, soft, ..
            },
            _,
        ) => match (&**target, place) {
            (Expr::Local { depth: 0, slot: 0 }, Place::Lambda(field)) => Code::ItemField {
                name: name.clone(),
                slot: field(name),
                soft: *soft,
            },
            _ => Code::Field {
                target: sub(target)?,
                name: name.clone(),
                soft: *soft,
            },
        },
        (Expr::Soft(x), _) => Code::Soft(sub(x)?),
        (Expr::Presence(x), _) => Code::Presence(sub(x)?),
        (Expr::Not(x, _), _) => Code::Not(sub(x)?),
        (Expr::Neg(x, _), _) => Code::Neg(sub(x)?),
        (Expr::Logic(op, a, b, _), _) => Code::Logic(*op, sub(a)?, sub(b)?),
        (Expr::Binary(op, a, b, _), _) => Code::Binary(*op, sub(a)?, sub(b)?),
        (Expr::If(c, a, b, _), _) => Code::If(sub(c)?, sub(a)?, sub(b)?),
        (Expr::Matches { subject, regex, .. }, _) => Code::Matches(sub(subject)?, regex.clone()),
        (Expr::Builtin { builtin, args, .. }, _) => {
            if let Place::Rule(element_field) = place {
                if let Some(f) = fold(*builtin, args, element_field) {
                    return Some(Code::Fold(Box::new(f)));
                }
            }
            if !is_scalar(*builtin) || args.iter().any(is_lambda) {
                return None;
            }
            let args = args.iter().map(|a| sub(a).map(|code| *code));
            Code::Builtin(*builtin, args.collect::<Option<_>>()?)
        }
        _ => return None,
    })
}

fn is_lambda(e: &Expr) -> bool {
    matches!(e, Expr::Lambda(_))
}

/// Builtins over single values, which `call_builtin` hands to `funcs`.
fn is_scalar(b: Builtin) -> bool {
    use Builtin::*;
    matches!(
        b,
        Fmt | Len
            | Lower
            | Upper
            | Trim
            | Contains
            | StartsWith
            | EndsWith
            | Matches
            | Replace
            | Split
            | Join
            | Abs
            | Round
            | Floor
            | Ceil
            | Int
            | Float
            | String
            | Keys
            | Values
            | Has
            | Get
            | IsOk
            | IsErr
    )
}

/// A fold over a list field: its end, the stages before it, down to the
/// field.
fn fold(
    b: Builtin,
    args: &[Expr],
    element_field: &dyn Fn(u32, &str) -> Option<u32>,
) -> Option<Fold> {
    let (input, end) = match (b, args) {
        (Builtin::Sum, [input]) => (input, Ending::Sum),
        (Builtin::Count, [input]) => (input, Ending::Count),
        (Builtin::Len, [input]) => (input, Ending::Len),
        (Builtin::All, [input, Expr::Lambda(l)]) => (input, Ending::All(l)),
        (Builtin::Any, [input, Expr::Lambda(l)]) => (input, Ending::Any(l)),
        _ => return None,
    };
    // The stages, from the end back to the list.
    let mut stages = Vec::new();
    let mut at = input;
    let list = loop {
        match at {
            Expr::Local { depth: 0, slot } => break *slot,
            Expr::Builtin {
                builtin: b @ (Builtin::Map | Builtin::Filter),
                args,
                ..
            } if !matches!(end, Ending::Len) => match args.as_slice() {
                [input, Expr::Lambda(l)] => {
                    stages.push((*b, l));
                    at = input;
                }
                _ => return None,
            },
            _ => return None,
        }
    };
    stages.reverse();
    // Items are the list's records until the first `map`.
    let mut rows = true;
    let lambda = |l: &crate::runtime::hir::Lambda, rows: bool| {
        let field = |name: &str| rows.then(|| element_field(list, name)).flatten();
        Some(Lambda {
            body: compile(&l.body, Place::Lambda(&field))?,
            predicate: l.predicate,
        })
    };
    let mut steps = Vec::new();
    for (b, l) in stages {
        let step = lambda(l, rows)?;
        steps.push(if b == Builtin::Map {
            rows = false;
            Step::Map(step)
        } else {
            Step::Filter(step)
        });
    }
    let end = match end {
        Ending::Sum => End::Sum,
        Ending::Count => End::Count,
        Ending::Len => End::Len,
        Ending::All(l) => End::All(lambda(l, rows)?),
        Ending::Any(l) => End::Any(lambda(l, rows)?),
    };
    Some(Fold { list, steps, end })
}

enum Ending<'e> {
    Sum,
    Count,
    Len,
    All(&'e crate::runtime::hir::Lambda),
    Any(&'e crate::runtime::hir::Lambda),
}

impl Code {
    fn reads(&self, reads: &mut Reads) {
        match self {
            Code::Slot(s) => reads.whole.push(*s),
            Code::Fold(f) => {
                let mut fields = Vec::new();
                let mut opaque = false;
                // The lambdas up to the first `map`'s see the list's
                // records (rows, when kept); after it, values.
                let mut rows = true;
                let steps = f.steps.iter().map(|s| match s {
                    Step::Map(l) => (l, true),
                    Step::Filter(l) => (l, false),
                });
                let end = match &f.end {
                    End::All(l) | End::Any(l) => Some((l, false)),
                    _ => None,
                };
                for (l, maps) in steps.chain(end) {
                    l.body.walk(&mut |c| match c {
                        Code::ItemField { slot: Some(s), .. } if rows => fields.push(*s),
                        Code::ItemField { slot: None, .. } | Code::Item if rows => opaque = true,
                        Code::Slot(s) => reads.whole.push(*s),
                        _ => {}
                    });
                    rows &= !maps;
                }
                if opaque {
                    reads.opaque.push(f.list);
                }
                reads.folded.push((f.list, fields));
            }
            Code::Eval(e) => e.walk(&mut |x| {
                if let Expr::Local { slot, .. } = x {
                    reads.whole.push(*slot);
                }
            }),
            other => other.each_child(&mut |c| c.reads(reads)),
        }
    }

    /// Visit this code and every code inside it (not into folds).
    fn walk(&self, visit: &mut dyn FnMut(&Code)) {
        visit(self);
        self.each_child(&mut |c| c.walk(visit));
    }

    /// Visit the codes directly inside this one (not a fold's lambdas).
    fn each_child(&self, visit: &mut dyn FnMut(&Code)) {
        match self {
            Code::Field { target: x, .. }
            | Code::Soft(x)
            | Code::Presence(x)
            | Code::Not(x)
            | Code::Neg(x)
            | Code::Matches(x, _) => visit(x),
            Code::Logic(_, a, b) | Code::Binary(_, a, b) => {
                visit(a);
                visit(b);
            }
            Code::If(c, a, b) => {
                visit(c);
                visit(a);
                visit(b);
            }
            Code::Builtin(_, args) => args.iter().for_each(visit),
            Code::Const(_)
            | Code::Slot(_)
            | Code::Item
            | Code::ItemField { .. }
            | Code::Fold(_)
            | Code::Eval(_) => {}
        }
    }
}

// ------------------------------------------------------------------ running

struct Cx<'a> {
    interp: &'a Rc<Interp>,
    env: &'a Env,
    slots: &'a [Value],
    lists: &'a dyn Lists,
}

/// The item a fold's lambda is called with.
#[derive(Clone, Copy)]
enum ItemRef<'a> {
    /// A row of a list kept as rows.
    Row(&'a [Value]),
    Value(&'a Value),
}

impl Cx<'_> {
    fn run(&self, code: &Code, item: Option<ItemRef>) -> Out {
        match code {
            Code::Const(v) => Ok(v.clone()),
            Code::Slot(s) => Ok(self.slots.get(*s as usize).cloned().unwrap_or(Value::Null)),
            Code::Item => match item {
                Some(ItemRef::Value(v)) => Ok(v.clone()),
                _ => Err(Bail),
            },
            Code::ItemField { name, slot, soft } => match (item, slot) {
                (Some(ItemRef::Row(row)), Some(s)) => {
                    ops::field_value(row.get(*s as usize), *soft).ok_or(Bail)
                }
                (Some(ItemRef::Value(v)), _) => ops::read_field(v, name, *soft).map_err(|_| Bail),
                _ => Err(Bail),
            },
            Code::Field { target, name, soft } => {
                let t = self.run(target, item)?;
                ops::read_field(&t, name, *soft).map_err(|_| Bail)
            }
            Code::Soft(x) => Ok(ops::soft(self.run(x, item)?)),
            Code::Presence(x) => Ok(ops::presence(&self.run(x, item)?)),
            Code::Not(x) => ops::not(self.run(x, item)?).map_err(|_| Bail),
            Code::Neg(x) => ops::negate(self.run(x, item)?).map_err(|_| Bail),
            Code::Logic(op, a, b) => {
                let a = ops::tri(self.run(a, item)?).map_err(|_| Bail)?;
                if let Some(d) = ops::decided(*op, a) {
                    return Ok(Value::Bool(d));
                }
                let b = ops::tri(self.run(b, item)?).map_err(|_| Bail)?;
                Ok(ops::logic(*op, a, b))
            }
            Code::Binary(op, a, b) => {
                let a = self.operand(a, item)?;
                let b = self.operand(b, item)?;
                ops::binary(*op, &a, &b).map_err(|_| Bail)
            }
            Code::If(c, a, b) => match ops::truth(self.run(c, item)?) {
                Ok(true) => self.run(a, item),
                Ok(false) => self.run(b, item),
                Err(_) => Err(Bail),
            },
            Code::Matches(subject, regex) => {
                ops::matches(regex, &*self.operand(subject, item)?).map_err(|_| Bail)
            }
            Code::Builtin(b, args) => {
                let mut values = SmallVec::new();
                for (i, a) in args.iter().enumerate() {
                    match self.run(a, item)? {
                        Value::Absent if b.runs_with_absent(i) => values.push(Value::Null),
                        // A call with an absent argument is absent (§4.4).
                        Value::Absent => return Ok(Value::Absent),
                        v => values.push(v),
                    }
                }
                self.interp.call_builtin(*b, values, None).map_err(|_| Bail)
            }
            Code::Fold(f) => self.fold(f),
            Code::Eval(e) => match item {
                None => self.interp.eval(e, self.env).map_err(|_| Bail),
                Some(_) => Err(Bail),
            },
        }
    }

    /// An operand's value, borrowed where it is held already (a constant,
    /// a field in the frame or in a row), so that reading it costs no
    /// reference count.
    fn operand<'v>(
        &'v self,
        code: &'v Code,
        item: Option<ItemRef<'v>>,
    ) -> Result<Cow<'v, Value>, Bail> {
        Ok(match (code, item) {
            (Code::Const(v), _) => Cow::Borrowed(v),
            (Code::Slot(s), _) => match self.slots.get(*s as usize) {
                Some(v) => Cow::Borrowed(v),
                None => Cow::Owned(Value::Null),
            },
            (
                Code::ItemField {
                    slot: Some(s),
                    soft: false,
                    ..
                },
                Some(ItemRef::Row(row)),
            ) => match row.get(*s as usize) {
                // Missing: reading it fails.
                None | Some(Value::Absent) => return Err(Bail),
                Some(v) => Cow::Borrowed(v),
            },
            _ => Cow::Owned(self.run(code, item)?),
        })
    }

    fn lambda(&self, l: &Lambda, item: ItemRef) -> Out {
        let v = self.run(&l.body, Some(item))?;
        if l.predicate {
            return ops::truth(v).map(Value::Bool).map_err(|_| Bail);
        }
        Ok(v.stored())
    }

    /// A lambda's value as `filter`, `all` and `any` take it.
    fn test(&self, l: &Lambda, item: ItemRef) -> Result<bool, Bail> {
        match self.lambda(l, item)? {
            Value::Bool(b) => Ok(b),
            Value::Absent | Value::Null => Ok(false),
            _ => Err(Bail),
        }
    }

    fn fold(&self, f: &Fold) -> Out {
        if let Some(rows) = self.lists.rows(f.list) {
            let width = rows.width;
            let items =
                (0..rows.len).map(|i| ItemRef::Row(&rows.cells[i * width..(i + 1) * width]));
            return self.fold_items(f, items, rows.len);
        }
        match self.slots.get(f.list as usize) {
            // An absent argument makes the call absent (§4.4).
            Some(Value::Absent) => Ok(Value::Absent),
            Some(Value::List(list)) => {
                self.fold_items(f, list.iter().map(ItemRef::Value), list.len())
            }
            // `len` of a text or a record.
            Some(v) if matches!(f.end, End::Len) => self
                .interp
                .call_builtin(Builtin::Len, SmallVec::from_elem(v.clone(), 1), None)
                .map_err(|_| Bail),
            _ => Err(Bail),
        }
    }

    fn fold_items<'i>(
        &self,
        f: &Fold,
        items: impl Iterator<Item = ItemRef<'i>>,
        len: usize,
    ) -> Out {
        if let End::Len = f.end {
            return Ok(Value::Int(len as i64));
        }
        let mut acc = Value::Int(0);
        let mut count = 0i64;
        'items: for item in items {
            let mut mapped: Option<Value> = None;
            for step in &f.steps {
                let at = match &mapped {
                    Some(v) => ItemRef::Value(v),
                    None => item,
                };
                match step {
                    Step::Map(l) => mapped = Some(self.lambda(l, at)?),
                    Step::Filter(l) => {
                        if !self.test(l, at)? {
                            continue 'items;
                        }
                    }
                }
            }
            let at = match &mapped {
                Some(v) => ItemRef::Value(v),
                None => item,
            };
            match &f.end {
                End::Sum => {
                    let v = match at {
                        ItemRef::Value(v) => v,
                        ItemRef::Row(_) => return Err(Bail),
                    };
                    if !v.is_number() {
                        return Err(Bail);
                    }
                    acc = ops::binary(BinOp::Add, &acc, v).map_err(|_| Bail)?;
                }
                End::Count => count += 1,
                End::All(l) => {
                    if !self.test(l, at)? {
                        return Ok(Value::Bool(false));
                    }
                }
                End::Any(l) => {
                    if self.test(l, at)? {
                        return Ok(Value::Bool(true));
                    }
                }
                End::Len => unreachable!("answered before the loop"),
            }
        }
        Ok(match &f.end {
            End::Sum => acc,
            End::Count => Value::Int(count),
            End::All(_) => Value::Bool(true),
            End::Any(_) => Value::Bool(false),
            End::Len => unreachable!("answered before the loop"),
        })
    }
}

impl RuleSpec {
    /// The condition compiled, for a rule of `record` (`None` for a
    /// refinement's rule, whose frame holds the value alone), on first use
    /// and kept with the rule. Both ways of validating run this one kernel.
    pub fn kernel(&self, record: Option<&RecordShape>) -> &Kernel {
        self.compiled.get_or_init(|| {
            let element_field =
                |list: u32, name: &str| record.and_then(|r| element_field(r, list, name));
            Kernel::compile(&self.cond, &element_field)
        })
    }
}
