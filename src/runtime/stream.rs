//! The values that run: functions (`Function`, with the frames their
//! parameters live in) and lazy streams (`Stream` of `Item`s), and the
//! error that stops a run (`RuntimeError`, and `SentError` between
//! threads). They sit beside `value` so that values name nothing of the
//! interpreter that runs them; `eval` re-exports them.

use std::any::Any;
use std::rc::Rc;

use crate::runtime::builtins::Builtin;
use crate::runtime::contract::Contract;
#[cfg(test)]
use crate::runtime::hir::Expr;
use crate::runtime::hir::{self, FnDef};
use crate::runtime::value::{Origin, Value};
use crate::syntax::ast::Span;

/// One element of a stream, with the origin of the record it came from.
#[derive(Clone)]
pub struct Item {
    pub value: Value,
    pub origin: Option<Origin>,
}

pub type Items = Box<dyn Iterator<Item = Result<Item, RuntimeError>>>;

/// A lazy sequence: a recipe that opens a fresh iterator on each use, so a
/// stream bound by `let` can feed several pipelines.
pub struct Stream {
    recipe: Box<dyn Fn() -> Result<Items, RuntimeError>>,
    /// What the stream is, when a later stage can use it (the execution
    /// layer's `eval::Plan`, which it alone reads: `Stream::plan`).
    plan: Option<Rc<dyn Any>>,
    /// The contract its records were validated against (for `validate`'s
    /// results, the contract of their `ok` values), kept by the stages that
    /// pass records through: a CSV target's header follows its fields.
    contract: Option<Rc<Contract>>,
}

impl Stream {
    pub fn new(recipe: impl Fn() -> Result<Items, RuntimeError> + 'static) -> Stream {
        Stream {
            recipe: Box::new(recipe),
            plan: None,
            contract: None,
        }
    }

    pub fn with_contract(mut self, contract: Option<Rc<Contract>>) -> Stream {
        self.contract = contract;
        self
    }

    pub fn contract(&self) -> Option<&Rc<Contract>> {
        self.contract.as_ref()
    }

    /// The stream, carrying what a later stage can use of it.
    pub fn with_plan_of<T: 'static>(mut self, plan: Option<T>) -> Stream {
        self.plan = plan.map(|p| Rc::new(p) as Rc<dyn Any>);
        self
    }

    /// What the stream carries for later stages, if it is a `T`.
    pub fn plan_of<T: 'static>(&self) -> Option<&T> {
        self.plan.as_ref()?.downcast_ref()
    }

    pub fn open(&self) -> Result<Items, RuntimeError> {
        (self.recipe)()
    }
}

/// A callable value.
pub enum Function {
    Builtin(Builtin),
    Decl(Rc<FnDef>),
    Lambda { lambda: Rc<hir::Lambda>, env: Env },
}

impl Function {
    pub fn display_name(&self) -> String {
        match self {
            Function::Builtin(b) => format!("<fn {}>", b.name()),
            Function::Decl(d) => format!("<fn {}>", d.name),
            Function::Lambda { .. } => "<fn>".into(),
        }
    }
}

/// A declared function with an empty body (a lambda when `name` is empty),
/// for tests of printing.
#[cfg(test)]
pub fn test_fn(name: &str) -> Function {
    if name.is_empty() {
        let lambda = hir::Lambda {
            body: Expr::Const(Value::Null),
            predicate: false,
        };
        return Function::Lambda {
            lambda: Rc::new(lambda),
            env: None,
        };
    }
    Function::Decl(Rc::new(FnDef {
        name: name.to_string(),
        params: 0,
        body: Expr::Const(Value::Null),
        native: None,
    }))
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display_name())
    }
}

/// A chain of frames: a function's parameters, a lambda's parameter, or a
/// rule's `self` and fields.
pub type Env = Option<Rc<Frame>>;

#[derive(Clone)]
pub struct Frame {
    pub slots: Slots,
    pub parent: Env,
}

/// A frame's values: a lambda's or a small function's fit inline, so a
/// call allocates its frame only.
pub type Slots = smallvec::SmallVec<[Value; 2]>;

pub fn push_frame(parent: &Env, slots: Slots) -> Env {
    Some(Rc::new(Frame {
        slots,
        parent: parent.clone(),
    }))
}

/// A runtime error: it stops the program (exit 1).
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeError {
    pub code: &'static str,
    pub message: String,
    pub span: Option<Span>,
    pub help: Option<String>,
    /// The record being processed, for errors over data.
    pub origin: Option<Origin>,
}

impl RuntimeError {
    pub fn new(code: &'static str, message: impl Into<String>) -> RuntimeError {
        RuntimeError {
            code,
            message: message.into(),
            span: None,
            help: None,
            origin: None,
        }
    }

    pub fn at(mut self, span: &Span) -> RuntimeError {
        if self.span.is_none() {
            self.span = Some(span.clone());
        }
        self
    }

    /// `at`, where the place may be unknown.
    pub fn at_some(self, span: Option<&Span>) -> RuntimeError {
        match span {
            Some(span) => self.at(span),
            None => self,
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> RuntimeError {
        self.help = Some(help.into());
        self
    }

    pub fn from_record(mut self, origin: &Option<Origin>) -> RuntimeError {
        if self.origin.is_none() {
            self.origin = origin.clone();
        }
        self
    }
}

pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;

/// A runtime error in a form that crosses threads: a worker's, given back
/// to the thread that runs the program.
pub struct SentError {
    code: &'static str,
    message: String,
    span: Option<Span>,
    help: Option<String>,
    origin: Option<(String, u64)>,
}

impl SentError {
    /// A worker that stopped without saying why (it panicked).
    pub fn worker_stopped() -> SentError {
        RuntimeError::new("hql::parallel", "a worker thread stopped unexpectedly").into()
    }
}

impl From<RuntimeError> for SentError {
    fn from(e: RuntimeError) -> SentError {
        SentError {
            code: e.code,
            message: e.message,
            span: e.span,
            help: e.help,
            origin: e.origin.map(|o| (o.source.to_string(), o.line)),
        }
    }
}

impl From<SentError> for RuntimeError {
    fn from(e: SentError) -> RuntimeError {
        RuntimeError {
            code: e.code,
            message: e.message,
            span: e.span,
            help: e.help,
            origin: e.origin.map(|(source, line)| Origin {
                source: source.into(),
                line,
            }),
        }
    }
}
