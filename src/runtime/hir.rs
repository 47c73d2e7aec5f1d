//! The checker's output: a program with every name resolved.
//!
//! Locals are (depth, slot) pairs into the evaluator's frame chain, globals
//! are slots, builtins are enum values, contracts are compiled (`Contract`).
//! Only this type reaches the evaluator.

use std::rc::Rc;

use regex::Regex;

use crate::runtime::builtins::Builtin;
use crate::runtime::contract::Contract;
use crate::runtime::stdlib_native::Native;
use crate::runtime::value::{Key, Value};
use crate::syntax::ast::{BinOp, Span};

/// A declared type, filled in once every declaration is compiled.
pub type TypeCell = Rc<std::cell::OnceCell<Rc<Contract>>>;

#[derive(Debug)]
pub struct Program {
    pub stmts: Vec<Stmt>,
    /// How many global slots (`let`s and `fn`s) the program uses.
    pub globals: usize,
    /// Functions, stored into their global slots before the first statement.
    pub functions: Vec<(u32, Rc<FnDef>)>,
    /// Each global name and the slot its last declaration holds.
    pub names: Vec<(String, u32)>,
}

#[derive(Debug)]
pub enum Stmt {
    Let { slot: u32, value: Expr },
    Check(CheckStmt),
    Expr(Expr),
}

#[derive(Debug)]
pub struct CheckStmt {
    pub label: String,
    pub cond: Expr,
    pub span: Span,
    /// Where the condition is written (shown when the check fails).
    pub cond_span: Span,
}

#[derive(Debug)]
pub struct FnDef {
    pub name: String,
    pub params: usize,
    pub body: Expr,
    /// The native twin that runs in place of `body` (standard-library
    /// functions only; see `runtime::stdlib_native`).
    pub native: Option<Native>,
}

#[derive(Debug)]
pub struct Lambda {
    pub body: Expr,
    /// A `filter`/`all`/`any` predicate: a bare `x?` body tests presence.
    pub predicate: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logic {
    And,
    Or,
    Implies,
}

#[derive(Debug, Clone)]
pub enum Expr {
    Const(Value),
    /// A frame `depth` levels up the chain, slot `slot` in it.
    Local {
        depth: u32,
        slot: u32,
    },
    Global(u32, Span),
    List(Vec<Expr>),
    Record(Vec<(Key, Expr)>),
    /// `e.name`; `soft` (written `e.name?`) yields absent instead of failing.
    Field {
        target: Box<Expr>,
        name: Key,
        soft: bool,
        span: Span,
    },
    Index {
        target: Box<Expr>,
        index: Box<Expr>,
        soft: bool,
        span: Span,
    },
    /// `e?` on anything but a field read: absent when `e` is null.
    Soft(Box<Expr>),
    /// `e?` standing as a condition: is `e` present and not null?
    Presence(Box<Expr>),
    Call {
        func: Box<Expr>,
        args: Vec<Expr>,
        span: Span,
    },
    Builtin {
        builtin: Builtin,
        args: Vec<Expr>,
        span: Span,
    },
    /// `matches(s, r"…")` with the pattern compiled when checked.
    Matches {
        subject: Box<Expr>,
        regex: Rc<Regex>,
        span: Span,
    },
    Not(Box<Expr>, Span),
    Neg(Box<Expr>, Span),
    Logic(Logic, Box<Expr>, Box<Expr>, Span),
    Binary(BinOp, Box<Expr>, Box<Expr>, Span),
    Lambda(Rc<Lambda>),
    If(Box<Expr>, Box<Expr>, Box<Expr>, Span),
    /// A declared type used as a value (`validate(T)`).
    Type(TypeCell),
    /// `T { … }`: build and check at once.
    Construct {
        cell: TypeCell,
        fields: Vec<(Key, Expr)>,
        span: Span,
    },
}

impl Expr {
    /// Visit this expression and every expression inside it, lambda bodies
    /// included.
    pub fn walk(&self, visit: &mut dyn FnMut(&Expr)) {
        visit(self);
        match self {
            Expr::Const(_) | Expr::Local { .. } | Expr::Global(..) | Expr::Type(_) => {}
            Expr::List(items) => items.iter().for_each(|e| e.walk(visit)),
            Expr::Record(fields) | Expr::Construct { fields, .. } => {
                fields.iter().for_each(|(_, e)| e.walk(visit))
            }
            Expr::Field { target, .. } => target.walk(visit),
            Expr::Index { target, index, .. } => {
                target.walk(visit);
                index.walk(visit);
            }
            Expr::Soft(x) | Expr::Presence(x) | Expr::Not(x, _) | Expr::Neg(x, _) => x.walk(visit),
            Expr::Matches { subject, .. } => subject.walk(visit),
            Expr::Call { func, args, .. } => {
                func.walk(visit);
                args.iter().for_each(|e| e.walk(visit));
            }
            Expr::Builtin { args, .. } => args.iter().for_each(|e| e.walk(visit)),
            Expr::Logic(_, a, b, _) | Expr::Binary(_, a, b, _) => {
                a.walk(visit);
                b.walk(visit);
            }
            Expr::Lambda(lambda) => lambda.body.walk(visit),
            Expr::If(c, a, b, _) => {
                c.walk(visit);
                a.walk(visit);
                b.walk(visit);
            }
        }
    }
}
