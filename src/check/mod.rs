//! Static checking: `check(&ast::Module) -> Result<Checked, Diagnostics>`.
//!
//! Resolves every name (with "did you mean" hints), checks the kinds and
//! members of §4, the `?` discipline of §4.4, defaults against their fields,
//! builtin arities and named arguments, regex literals; compiles contracts.
//! All errors are collected; nothing runs when there is one.

mod cycles;
mod defaults;
mod expect;
mod identity;
pub mod names;
mod suggest;
pub mod typeflow;

pub use defaults::{reads_or_writes, NeededLet};
pub use expect::MEASURES;
pub use suggest::closest;

use std::cell::OnceCell;
use std::rc::Rc;

use regex::Regex;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::check::names::Binding;
use crate::runtime::builtins::Builtin;
use crate::runtime::contract::*;
use crate::runtime::eval::io::OptionError;
use crate::runtime::eval::{Formats, Function};
use crate::runtime::hir::{self, CheckStmt, Expr, FnDef, Logic, Program};
use crate::runtime::stdlib_native::Native;
use crate::runtime::value::{Key, Value};
use crate::syntax::ast::{
    self, BinOp, Expr as AExpr, ExprKind, Lit, Member, Severity, Span, Stmt as AStmt, TypeBody,
    UnOp,
};
use crate::syntax::canonical::expr_text;

/// A static error. Each variant's doc shows a program that triggers it.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckError {
    /// `count_x([1])` — a name that is not declared.
    UnknownName {
        name: String,
        span: Span,
        candidates: Vec<String>,
    },
    /// `type T : Data = { a: Int\n require a > 0 }` — a member only contracts have.
    MemberNotAllowed {
        member: &'static str,
        kind: Kind,
        span: Span,
    },
    /// `require age > 3` with `age?: Int` — an optional field read without `?`.
    OptionalWithoutMark { field: String, span: Span },
    /// `n: Int = "x"` — a default of the wrong type.
    DefaultType {
        field: String,
        expected: String,
        span: Span,
    },
    /// `e: Email = "nope"` — a default that breaks a rule of its field's
    /// type, or one of the field's named checks.
    DefaultBreaks {
        field: String,
        rule: String,
        span: Span,
    },
    /// `count([1], 2)` — a builtin or function given the wrong number of arguments.
    Arity {
        name: String,
        min: usize,
        max: usize,
        found: usize,
        span: Span,
    },
    /// `count(xs, by: 1)` — a named argument the function does not take.
    UnknownNamedArg {
        name: String,
        func: String,
        span: Span,
        candidates: Vec<String>,
    },
    /// `f(a: 1, a: 2)` — the same named argument twice.
    RepeatedNamedArg { name: String, span: Span },
    /// `source(file("p.csv"), Csv, at: "/data")` — a format option the
    /// format does not take, or a value it cannot be (`delimiter: ";;"`).
    FormatOption {
        message: String,
        help: String,
        span: Span,
    },
    /// `route(ok: file("a.jsonl"))` — a named argument the function needs.
    MissingNamedArg {
        name: String,
        func: String,
        span: Span,
    },
    /// `validate(T) | write(file("x.jsonl"))` — results written as values.
    WriteResults { span: Span },
    /// `9223372036854775808` — an integer literal beyond i64.
    IntOutOfRange { span: Span },
    /// `matches(s, "(")` — a regex literal that does not compile.
    InvalidRegex { message: String, span: Span },
    /// Two declarations of one name: `type A : Data = {}` twice.
    Duplicate {
        what: &'static str,
        name: String,
        span: Span,
        first: Span,
    },
    /// `validate(count)`, or `let t = 5` then `validate(t)` — a place that
    /// takes a type name got something else (`found`: what it is, when known).
    NotAType {
        name: String,
        span: Span,
        found: Option<String>,
    },
    /// `type O : Sighting = {…}` where Sighting inherits from O.
    InheritanceCycle { name: String, span: Span },
    /// A field the parent already declares.
    RedeclaredField {
        field: String,
        parent: String,
        span: Span,
    },
    /// `unique nme` — a member naming a field that is not declared.
    UnknownField {
        field: String,
        ty: String,
        span: Span,
        candidates: Vec<String>,
    },
    /// `type A : List[Int] = {…}` — a record body under something that is not a record type.
    NotARecordParent { name: String, span: Span },
    /// `1 < "a"` — an operator given operands it cannot take.
    OperandTypes {
        op: String,
        left: String,
        right: String,
        span: Span,
    },
    /// `upper(3)` — an argument of a type the function does not take.
    ArgumentType {
        func: String,
        expected: String,
        found: String,
        span: Span,
    },
    /// `let y = x` before `let x = …`.
    UsedBeforeLet {
        name: String,
        span: Span,
        declared: Span,
    },
    /// `type A = B` and `type B = A`, `type A = List[A]` — a type defined in
    /// terms of itself with no record field in between.
    TypeCycle { cycle: Vec<String>, span: Span },
    /// `require r: a > 0` and `require r: a > 1` in one type — two checks
    /// with one identity (§4.7), so a failure could not say which broke.
    DuplicateIdentity {
        id: String,
        first: String,
        second: String,
        span: Span,
    },
    /// `1e999` — a float literal beyond f64.
    FloatOutOfRange { span: Span },
    /// `@foo("x")` on a type — an annotation HQL does not know.
    UnknownAnnotation {
        name: String,
        span: Span,
        candidates: Vec<String>,
    },
    /// `@version("1")` and `@version("2")` on one type.
    RepeatedAnnotation { name: String, span: Span },
    /// `[1, 2] | T()` — a declared type called as a function.
    CallOfType { name: String, span: Span },
    /// `check "x": 5`, `require a` with `a: Int` — a condition that is not a Bool.
    ConditionType { found: String, span: Span },
    /// `expect amount > 0`, `expect rows in [1, 2]` — a part an expectation
    /// cannot hold: a field (`field`), a call of anything but a measure, a
    /// string, an operator other than arithmetic, comparisons and logic.
    NotInExpectation {
        what: String,
        field: Option<String>,
        span: Span,
    },
    /// `expect rwos > 10`, `expect count(x) > 1` — a name or call in an
    /// expectation that is not a measure.
    UnknownMeasure {
        name: String,
        span: Span,
        candidates: Vec<String>,
    },
    /// `expect missing(a, b) == 0`, `expect rows() > 0`, `expect missing
    /// == 0` — a measure given arguments it does not take.
    MeasureArguments {
        measure: String,
        takes: &'static str,
        span: Span,
    },
    /// `expect age(amount) <= 3d` with `amount: Float`, `expect sum(name) >
    /// 0` with `name: String` — a measure of a field it cannot measure.
    MeasureFieldType {
        measure: String,
        field: String,
        found: String,
        expected: &'static str,
        span: Span,
    },
    /// `expect missing(name.first) == 0` with `name: String` — a measure's
    /// path through a field that holds no record.
    MeasurePath {
        path: String,
        found: String,
        span: Span,
    },
    /// `expect sum(amount) <= 5%` — a share (`5%`) anywhere but one side
    /// of a comparison with a count; `found` is the other side's sort.
    ShareOfNonCount { found: Option<String>, span: Span },
    /// `expect rows > 3d`, `let d = 3d` — a duration anywhere but compared
    /// with `age(…)` in an expectation.
    DurationOutsideAge { span: Span },
    /// `expect age(placed) <= 3` — an age compared with something other
    /// than a duration.
    AgeWithoutDuration { span: Span },
    /// `expect rows % 2 == 0` — inside `expect`, `%` makes shares only.
    ModuloInExpectation { span: Span },
    /// `expect orphans(c, ids) == 0` — `orphans` keys other than a list
    /// literal or `source(…) | map(r => r.g)`.
    OrphanKeys { span: Span },
    /// `expect rows and failures`, `expect (rows > 1) + 1` — parts of an
    /// expectation an operator cannot combine.
    ExpectOperands {
        op: String,
        left: String,
        right: String,
        span: Span,
    },
}

/// A static warning: printed, the exit status unchanged.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckWarning {
    /// `a?` on a field that is required and not nullable.
    NeedlessMark { field: String, span: Span },
    /// `require flag?` on a Bool field tests presence, not the value.
    PresenceOfBool { field: String, span: Span },
    /// `delay > 60` with `delay: Int | "NA"` — a member of the field's type
    /// that cannot be ordered against the other side (an error at run
    /// time for each such value).
    UncomparableMember {
        field: String,
        member: String,
        other: String,
        span: Span,
    },
    /// `c.Orgin` where `c` is a `Car : Data` that declares `Origin` — an
    /// undeclared field of an open type one edit from a declared one.
    UndeclaredNearField {
        field: String,
        ty: String,
        meant: String,
        span: Span,
    },
    /// `unique sku` in a type used as a field's type of another — a key
    /// checked over a stream's records only, never inside a field.
    NestedUnique { ty: String, span: Span },
    /// `expect rows > 0` in a type used as a field's type of another —
    /// judged over a stream validated against the type only.
    NestedExpect { ty: String, span: Span },
}

impl CheckWarning {
    pub fn span(&self) -> Span {
        match self {
            CheckWarning::NeedlessMark { span, .. }
            | CheckWarning::PresenceOfBool { span, .. }
            | CheckWarning::UncomparableMember { span, .. }
            | CheckWarning::UndeclaredNearField { span, .. }
            | CheckWarning::NestedUnique { span, .. }
            | CheckWarning::NestedExpect { span, .. } => span.clone(),
        }
    }
}

#[derive(Debug, Default)]
pub struct Diagnostics {
    pub errors: Vec<CheckError>,
    pub warnings: Vec<CheckWarning>,
}

#[derive(Debug)]
pub struct Checked {
    pub program: Program,
    pub warnings: Vec<CheckWarning>,
    /// Every declared type, compiled.
    pub types: Vec<Rc<Contract>>,
    /// The static type of the last expression statement, where known.
    pub last_type: Option<crate::check::typeflow::Ty>,
}

/// The `let`s of `program` that the declarations of `types` need, each
/// with what it reads or writes of the world outside, if anything
/// (tooling.md, "What a program can touch").
pub fn needed_lets(program: &Program, types: &[Rc<Contract>]) -> Vec<NeededLet> {
    let globals = defaults::Globals {
        functions: &program.functions,
        lets: program
            .stmts
            .iter()
            .filter_map(|s| match s {
                hir::Stmt::Let { slot, value } => Some((*slot, value)),
                _ => None,
            })
            .collect(),
        count: program.globals,
    };
    defaults::needed_lets(types, &globals)
}

/// The value of an expression lowered to constants only (a literal, a
/// list of literals).
fn constant(e: &Expr) -> Option<Value> {
    match e {
        Expr::Const(v) => Some(v.clone()),
        Expr::List(items) => items
            .iter()
            .map(constant)
            .collect::<Option<_>>()
            .map(Value::list),
        _ => None,
    }
}

/// Check a parsed module and lower it to a `hir::Program`; `formats` are
/// the formats a program can name (`crate::formats::FORMATS`).
pub fn check(module: &ast::Module, formats: Formats) -> Result<Checked, Diagnostics> {
    check_program(module, 0, &Unparsed::default(), formats)
}

/// What the checker cannot see of a program: the names that statements
/// which failed to parse would declare. A use of one is not an unknown
/// name — the syntax error already reported is the cause — so one mistake
/// gives one diagnostic, while every statement that parsed is still checked.
#[derive(Debug, Default, Clone)]
pub struct Unparsed {
    pub names: FxHashSet<String>,
    /// A whole file was lost (a lexical error, an import that could not be
    /// read): any name may have been declared there.
    pub any: bool,
}

impl Unparsed {
    fn covers(&self, name: &str) -> bool {
        self.any || self.names.contains(name)
    }
}

/// Check a module whose statements before offset `prelude_end` are the
/// standard library: a program's own declaration of a name the library
/// declares shadows it instead of clashing.
pub fn check_program(
    module: &ast::Module,
    prelude_end: usize,
    unparsed: &Unparsed,
    formats: Formats,
) -> Result<Checked, Diagnostics> {
    check_resumable(module, prelude_end, unparsed, formats).map(|(checked, _)| checked)
}

/// `check_program`, keeping what the checker learnt so that a session can
/// check its next entry against it (`Resumable::extend`).
pub fn check_resumable(
    module: &ast::Module,
    prelude_end: usize,
    unparsed: &Unparsed,
    formats: Formats,
) -> Result<(Checked, Resumable), Diagnostics> {
    let mut checker = Checker {
        prelude_end,
        unparsed: unparsed.clone(),
        formats,
        ..Checker::default()
    };
    let program = checker.check_module(module);
    if !checker.diags.errors.is_empty() {
        return Err(checker.diags);
    }
    let mut types: Vec<(usize, Rc<Contract>)> = checker
        .types
        .values()
        .filter_map(|e| Some((e.decl.span.start, e.cell.get()?.clone())))
        .collect();
    types.sort_by_key(|(at, _)| *at);
    let types: Vec<Rc<Contract>> = types.into_iter().map(|(_, c)| c).collect();
    let checked = Checked {
        program,
        warnings: std::mem::take(&mut checker.diags.warnings),
        types: types.clone(),
        last_type: checker.last_type.take(),
    };
    let resumable = Resumable {
        checker,
        types,
        next: module.stmts.len(),
        end: 0,
        extended: 0,
    };
    Ok((checked, resumable))
}

/// A program checked so far, kept to check what a session adds to it
/// without checking it again: an entry of `let`s, `check`s and
/// expressions is checked on its own against what is kept, so that each
/// entry costs the same whatever the session's length. An entry that
/// declares a type or a function, imports, or redefines a name that a
/// function body, a rule or a default reads (which would change what that
/// body sees) is for `check_resumable` over the whole program instead.
pub struct Resumable {
    checker: Checker,
    /// Every declared type, compiled, in the order of the text.
    types: Vec<Rc<Contract>>,
    /// The next statement's index.
    next: usize,
    /// Every offset checked so far is below this.
    end: usize,
    /// Entries checked on their own since the whole program was.
    extended: usize,
}

/// What `Resumable::extend` changed, to take it back.
pub struct Mark {
    extended: usize,
    from: usize,
    next: usize,
    end: usize,
    n_globals: u32,
    nested_reads: usize,
    declared: Vec<String>,
}

impl Resumable {
    /// How many entries were checked on their own since the whole program
    /// was (each undone one taken back).
    pub fn extended(&self) -> usize {
        self.extended
    }

    /// Every offset checked so far, and every one to come, is at or above
    /// `end` (the session's source map ends there).
    pub fn set_end(&mut self, end: usize) {
        self.end = self.end.max(end);
    }

    /// Check `stmts` (written at or after `set_end`'s offset) against the
    /// program so far, keeping them: the checked statements (the
    /// `Program` holds only theirs, and the names they declare), and a
    /// mark to take them back. `None` when they are not for this path
    /// (see `Resumable`). When they do not check they are taken back
    /// already.
    pub fn extend(&mut self, stmts: &[AStmt]) -> Option<(Result<Checked, Diagnostics>, Mark)> {
        let c = &mut self.checker;
        let simple = stmts.iter().all(|s| match s {
            AStmt::Let { name, .. } => !c.hoisted.contains(&name.text),
            AStmt::Check { .. } | AStmt::Expr(_) => true,
            AStmt::Type(_) | AStmt::Fn(_) | AStmt::Import { .. } => false,
        });
        let from = stmts.iter().map(stmt_start).min().unwrap_or(self.end);
        if !simple || from < self.end {
            return None;
        }
        let declared: Vec<String> = stmts
            .iter()
            .filter_map(|s| match s {
                AStmt::Let { name, .. } => Some(name.text.clone()),
                _ => None,
            })
            .collect();
        let mark = Mark {
            extended: self.extended,
            from,
            next: self.next,
            end: self.end,
            n_globals: c.n_globals,
            nested_reads: c.nested_reads.len(),
            declared,
        };
        for (i, stmt) in stmts.iter().enumerate() {
            if let AStmt::Let { name, .. } = stmt {
                c.declare_global(name, self.next + i, None);
            }
        }
        let mut lowered = Vec::new();
        for (i, stmt) in stmts.iter().enumerate() {
            c.stmt_index = Some(self.next + i);
            lowered.extend(c.check_stmt(stmt));
        }
        c.stmt_index = None;
        let flowed = typeflow::flow(
            stmts,
            &c.flow_types,
            &c.resolved,
            c.prelude_end,
            &mut c.facts,
        );
        c.absorb_flow_errors(flowed.errors);
        self.next += stmts.len();
        let mut warnings = std::mem::take(&mut c.diags.warnings);
        warnings.extend(flowed.warnings);
        if !c.diags.errors.is_empty() {
            let errors = std::mem::take(&mut c.diags.errors);
            self.undo(&mark);
            return Some((Err(Diagnostics { errors, warnings }), mark));
        }
        let ends = stmts.iter().map(|s| match s {
            AStmt::Let { value, .. } => value.span.end,
            AStmt::Check { span, .. } => span.end,
            AStmt::Expr(e) => e.span.end,
            _ => 0,
        });
        self.end = ends.fold(self.end, usize::max);
        self.extended += 1;
        let names = (mark.declared.iter())
            .filter_map(|n| Some((n.clone(), c.globals.get(n)?.last()?.slot)))
            .collect();
        let checked = Checked {
            program: Program {
                stmts: lowered,
                globals: c.n_globals as usize,
                functions: Vec::new(),
                names,
            },
            warnings,
            types: self.types.clone(),
            last_type: flowed.last,
        };
        Some((Ok(checked), mark))
    }

    /// Take back what `extend` kept.
    pub fn undo(&mut self, mark: &Mark) {
        let c = &mut self.checker;
        for name in mark.declared.iter().rev() {
            if let Some(decls) = c.globals.get_mut(name) {
                decls.pop();
                if decls.is_empty() {
                    c.globals.remove(name);
                }
            }
        }
        c.n_globals = mark.n_globals;
        c.slot_params.truncate(mark.n_globals as usize);
        c.diags = Diagnostics::default();
        c.nested_reads.truncate(mark.nested_reads);
        c.resolved.forget_from(mark.from);
        c.facts.forget_from(mark.from);
        self.next = mark.next;
        self.end = mark.end;
        self.extended = mark.extended;
    }
}

type Cell = Rc<OnceCell<Rc<Contract>>>;

struct TypeEntry {
    cell: Cell,
    decl: ast::TypeDecl,
    compiling: bool,
}

#[derive(Clone)]
struct Global {
    slot: u32,
    /// Statement index of the declaration (lets are visible after it).
    at: usize,
    span: Span,
    /// Parameter count for `fn`s.
    params: Option<usize>,
}

/// What a rule frame knows about a field, for the `?` discipline.
#[derive(Clone)]
struct FieldMeta {
    may_be_absent: bool,
    is_bool: bool,
    /// The record its value is, when its type says so: reads of its own
    /// fields follow the same discipline.
    record: Option<Known>,
}

/// A record type a value in a rule is known to have.
#[derive(Clone)]
enum Known {
    Inline(Rc<RecordShape>),
    Declared(Cell),
}

/// A read of a nested record's field in a rule (`addr.city`), checked
/// once every type is compiled: the field's record may be declared later.
struct NestedRead {
    /// The record the chain starts from, and the fields leading to the one read.
    root: Known,
    steps: Vec<String>,
    field: String,
    soft: bool,
    /// The read as written, without its `?`.
    text: String,
    span: Span,
}

struct Frame {
    names: Vec<String>,
    /// Where each name is bound (a lambda's or a function's parameters);
    /// empty in a rule frame, whose slots are the record's.
    binders: Vec<usize>,
    /// `Some` in a rule frame: slot 0 is `self`, then one slot per field.
    fields: Option<Vec<FieldMeta>>,
}

/// Where an expression stands: a bare `x?` as a condition is a presence test.
#[derive(Clone, Copy, PartialEq)]
enum Pos {
    Value,
    Condition,
}

#[derive(Default)]
struct Checker {
    diags: Diagnostics,
    types: FxHashMap<String, TypeEntry>,
    globals: FxHashMap<String, Vec<Global>>,
    /// The names of `globals` that some `fn` declares.
    fn_names: rustc_hash::FxHashSet<String>,
    /// Each global slot's parameter count, for a `fn`'s.
    slot_params: Vec<Option<usize>>,
    n_globals: u32,
    frames: Vec<Frame>,
    /// The statement being checked (None inside hoisted bodies).
    stmt_index: Option<usize>,
    /// Fields read by the rule being lowered, in order of first mention.
    reads: Option<Vec<u32>>,
    /// Declarations before this offset come from the standard library.
    prelude_end: usize,
    /// The static type of the last expression statement.
    last_type: Option<crate::check::typeflow::Ty>,
    /// Is the code being lowered the standard library's?
    in_prelude: bool,
    /// Names declared by statements that did not parse.
    unparsed: Unparsed,
    /// The formats a program can name, handed in from the registry.
    formats: Formats,
    /// Types defined in terms of themselves (compiled as `Any`, after their error).
    cyclic: FxHashSet<String>,
    /// Reads of nested records' fields in rules, to check once types are compiled.
    nested_reads: Vec<NestedRead>,
    /// What each name resolved to: the table type flow reads.
    resolved: names::Names,
    /// The globals the program's function bodies, rules and defaults read:
    /// a later `let` of one of these names changes what they see.
    hoisted: FxHashSet<String>,
    /// What type flow learnt of the declarations, and the types it saw.
    facts: typeflow::Facts,
    flow_types: typeflow::Types,
}

impl Checker {
    fn error(&mut self, e: CheckError) {
        self.diags.errors.push(e);
    }

    /// Type flow's errors, but for those the checker found itself.
    fn absorb_flow_errors(&mut self, mut errors: Vec<CheckError>) {
        errors.retain(|e| !self.diags.errors.contains(e));
        self.diags.errors.extend(errors);
    }

    fn check_module(&mut self, module: &ast::Module) -> Program {
        self.declare_all(module);
        let functions = self.check_functions(module);
        self.find_type_cycles();
        self.compile_types();
        self.check_nested_uniques();
        self.check_nested_reads();
        let mut stmts = Vec::new();
        for (i, stmt) in module.stmts.iter().enumerate() {
            self.stmt_index = Some(i);
            if let Some(s) = self.check_stmt(stmt) {
                stmts.push(s);
            }
        }
        self.check_defaults(&functions, &stmts);
        // Type flow runs whatever the checks above found: §7 asks for
        // every diagnostic, and an unresolved name or an uncompiled type is
        // an unknown type there, never an error of its own.
        self.flow_types = self
            .types
            .iter()
            .filter_map(|(n, e)| Some((n.clone(), e.cell.get()?.clone())))
            .collect();
        let flowed = typeflow::flow(
            &module.stmts,
            &self.flow_types,
            &self.resolved,
            self.prelude_end,
            &mut self.facts,
        );
        self.absorb_flow_errors(flowed.errors);
        self.diags.warnings.extend(flowed.warnings);
        self.last_type = flowed.last;
        let names = self
            .globals
            .iter()
            .filter_map(|(n, decls)| Some((n.clone(), decls.last()?.slot)))
            .collect();
        Program {
            stmts,
            globals: self.n_globals as usize,
            functions,
            names,
        }
    }

    // ------------------------------------------------------------ declarations

    fn declare_all(&mut self, module: &ast::Module) {
        for (i, stmt) in module.stmts.iter().enumerate() {
            match stmt {
                AStmt::Type(t) => self.declare_type(t),
                AStmt::Fn(f) => self.declare_global(&f.name, i, Some(f.params.len())),
                AStmt::Let { name, .. } => self.declare_global(name, i, None),
                _ => {}
            }
        }
    }

    fn declare_type(&mut self, t: &ast::TypeDecl) {
        if let Some(first) = self.types.get(&t.name.text) {
            let first = first.decl.name.span.clone();
            if first.start < self.prelude_end {
                self.types.remove(&t.name.text);
                return self.declare_type(t);
            }
            return self.error(CheckError::Duplicate {
                what: "type",
                name: t.name.text.clone(),
                span: t.name.span.clone(),
                first,
            });
        }
        let entry = TypeEntry {
            cell: Rc::default(),
            decl: t.clone(),
            compiling: false,
        };
        self.types.insert(t.name.text.clone(), entry);
    }

    fn declare_global(&mut self, name: &ast::Name, at: usize, params: Option<usize>) {
        let prelude_end = self.prelude_end;
        let in_prelude = |span: &Span| span.start < prelude_end;
        let entries = self.globals.entry(name.text.clone()).or_default();
        // The library's and the program's functions live side by side: each
        // side's code sees its own (see `visible_global`).
        let clash = params.and_then(|_| {
            entries
                .iter()
                .find(|g| g.params.is_some() && in_prelude(&g.span) == in_prelude(&name.span))
        });
        if let (Some(_), Some(first)) = (params, clash) {
            let first = first.span.clone();
            return self.error(CheckError::Duplicate {
                what: "function",
                name: name.text.clone(),
                span: name.span.clone(),
                first,
            });
        }
        if params.is_some() {
            self.fn_names.insert(name.text.clone());
        }
        entries.push(Global {
            slot: self.n_globals,
            at,
            span: name.span.clone(),
            params,
        });
        self.slot_params.push(params);
        self.n_globals += 1;
    }

    fn check_functions(&mut self, module: &ast::Module) -> Vec<(u32, Rc<FnDef>)> {
        let mut out = Vec::new();
        self.stmt_index = None;
        for stmt in &module.stmts {
            let AStmt::Fn(f) = stmt else { continue };
            let Some(slot) = self.globals.get(&f.name.text).and_then(|g| {
                g.iter()
                    .find(|g| g.params.is_some() && g.span == f.name.span)
            }) else {
                continue;
            };
            self.in_prelude = f.span.start < self.prelude_end;
            let slot = slot.slot;
            self.annotate(f);
            let names = f.params.iter().map(|p| p.name.text.clone()).collect();
            self.frames.push(Frame {
                names,
                binders: f.params.iter().map(|p| p.name.span.start).collect(),
                fields: None,
            });
            let body = self.expr(&f.body, Pos::Value);
            self.frames.pop();
            let native = self
                .in_prelude
                .then(|| Native::for_library_fn(&f.name.text))
                .flatten();
            let def = FnDef {
                name: f.name.text.clone(),
                params: f.params.len(),
                body,
                native,
            };
            out.push((slot, Rc::new(def)));
        }
        out
    }

    fn check_stmt(&mut self, stmt: &AStmt) -> Option<hir::Stmt> {
        self.in_prelude = stmt_start(stmt) < self.prelude_end;
        match stmt {
            AStmt::Let { name, value } => {
                let value = self.expr(value, Pos::Value);
                let slot = self.let_slot(name)?;
                Some(hir::Stmt::Let { slot, value })
            }
            AStmt::Check { label, cond, span } => Some(hir::Stmt::Check(CheckStmt {
                label: label.text.clone(),
                cond: self.expr(cond, Pos::Condition),
                span: span.clone(),
                cond_span: cond.span.clone(),
            })),
            AStmt::Expr(e) => Some(hir::Stmt::Expr(self.expr(e, Pos::Value))),
            AStmt::Type(_) | AStmt::Fn(_) | AStmt::Import { .. } => None,
        }
    }

    fn let_slot(&self, name: &ast::Name) -> Option<u32> {
        let at = self.stmt_index?;
        // A name's declarations are in statement order.
        let decls = self.globals.get(&name.text)?;
        let i = decls.partition_point(|g| g.at < at);
        decls.get(i).filter(|g| g.at == at).map(|g| g.slot)
    }

    // ------------------------------------------------------------------- types

    /// Report each cycle of types defined in terms of themselves, and
    /// remember its members so that compiling them cannot recurse forever.
    fn find_type_cycles(&mut self) {
        let mut decls: Vec<&TypeEntry> = self.types.values().collect();
        decls.sort_by_key(|e| e.decl.span.start);
        let decls: Vec<&ast::TypeDecl> = decls.into_iter().map(|e| &e.decl).collect();
        let mut errors = Vec::new();
        for cycle in cycles::type_cycles(&decls) {
            let names: Vec<String> = cycle.iter().map(|&i| decls[i].name.text.clone()).collect();
            let first = &decls[cycle[0]];
            if first.span.start >= self.prelude_end {
                errors.push(CheckError::TypeCycle {
                    cycle: names.clone(),
                    span: first.name.span.clone(),
                });
            }
            self.cyclic.extend(names);
        }
        self.diags.errors.extend(errors);
    }

    /// Check the defaults of every compiled record type against their fields.
    fn check_defaults(&mut self, functions: &[(u32, Rc<FnDef>)], stmts: &[hir::Stmt]) {
        let mut decls: Vec<(&ast::TypeDecl, Rc<Contract>)> = self
            .types
            .values()
            .filter(|e| e.decl.span.start >= self.prelude_end)
            .filter_map(|e| Some((&e.decl, e.cell.get()?.clone())))
            .collect();
        decls.sort_by_key(|(d, _)| d.span.start);
        let globals = defaults::Globals {
            functions,
            lets: stmts
                .iter()
                .filter_map(|s| match s {
                    hir::Stmt::Let { slot, value } => Some((*slot, value)),
                    _ => None,
                })
                .collect(),
            count: self.n_globals as usize,
        };
        let errors = defaults::check_defaults(&decls, &globals);
        for e in errors {
            if !self.diags.errors.contains(&e) {
                self.diags.errors.push(e);
            }
        }
    }

    fn compile_types(&mut self) {
        let mut names: Vec<(usize, String)> = self
            .types
            .iter()
            .map(|(n, e)| (e.decl.span.start, n.clone()))
            .collect();
        names.sort();
        for (_, name) in names {
            self.compile_type(&name);
        }
    }

    /// A `unique` or an `expect` in a record type that another type uses
    /// for a field (`items: List[Item]`) is checked over a stream's records
    /// only: a warning at each such member of the program's own types.
    fn check_nested_uniques(&mut self) {
        let mut nested: FxHashSet<String> = FxHashSet::default();
        for entry in self.types.values() {
            let Some(record) = entry.cell.get().and_then(|c| c.record()) else {
                continue;
            };
            for f in record.fields.iter() {
                record_types_in(&f.ty, &mut nested, MAX_NESTED_WALK);
            }
        }
        let mut warnings: Vec<CheckWarning> = nested
            .iter()
            .filter_map(|name| self.types.get(name))
            .filter(|entry| entry.decl.span.start >= self.prelude_end)
            .flat_map(|entry| match &entry.decl.body {
                TypeBody::Record(members) => members
                    .iter()
                    .filter_map(|m| match m {
                        Member::Unique { span, .. } => Some(CheckWarning::NestedUnique {
                            ty: entry.decl.name.text.clone(),
                            span: span.clone(),
                        }),
                        Member::Expect(e) => Some(CheckWarning::NestedExpect {
                            ty: entry.decl.name.text.clone(),
                            span: e.span.clone(),
                        }),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            })
            .collect();
        warnings.sort_by_key(|w| w.span().start);
        self.diags.warnings.extend(warnings);
    }

    /// Compile a declared type (and its parents first). Returns its cell.
    fn compile_type(&mut self, name: &str) -> Option<Cell> {
        let entry = self.types.get_mut(name)?;
        let cell = entry.cell.clone();
        if cell.get().is_some() {
            return Some(cell);
        }
        if entry.compiling {
            let span = entry.decl.name.span.clone();
            self.error(CheckError::InheritanceCycle {
                name: name.to_string(),
                span,
            });
            return None;
        }
        entry.compiling = true;
        if self.cyclic.contains(name) {
            // Its error is reported; `Any` keeps every later walk finite.
            let _ = cell.set(Rc::new(Contract::alias(name, TypeSpec::Any)));
            return Some(cell);
        }
        let decl = entry.decl.clone();
        let outer = std::mem::replace(&mut self.in_prelude, decl.span.start < self.prelude_end);
        let contract = self.compile_decl(&decl);
        self.in_prelude = outer;
        let contract = contract?;
        let _ = cell.set(Rc::new(contract));
        Some(cell)
    }

    fn compile_decl(&mut self, decl: &ast::TypeDecl) -> Option<Contract> {
        self.check_annotations(decl);
        let duplicates = identity::duplicate_identities(&decl.name.text, &decl.body);
        self.diags.errors.extend(duplicates);
        let attr = |key: &str| {
            decl.attrs
                .iter()
                .find(|a| a.name.text == key)
                .map(|a| a.value.clone())
        };
        let shape = match &decl.body {
            TypeBody::Refine { base, rules } => self.compile_refinement(decl, base, rules),
            TypeBody::Record(_) => self.compile_record_decl(decl)?,
        };
        Some(Contract {
            name: decl.name.text.clone(),
            version: attr("version"),
            owner: attr("owner"),
            doc: decl.doc.clone(),
            shape,
            plan: Default::default(),
        })
    }

    /// `@version` and `@owner`, each at most once.
    fn check_annotations(&mut self, decl: &ast::TypeDecl) {
        for (i, a) in decl.attrs.iter().enumerate() {
            let name = a.name.text.as_str();
            if !ANNOTATIONS.contains(&name) {
                self.error(CheckError::UnknownAnnotation {
                    name: name.to_string(),
                    span: a.span.clone(),
                    candidates: closest(name, ANNOTATIONS.into_iter()),
                });
            } else if decl.attrs[..i].iter().any(|b| b.name.text == name) {
                self.error(CheckError::RepeatedAnnotation {
                    name: name.to_string(),
                    span: a.span.clone(),
                });
            }
        }
    }

    fn compile_refinement(
        &mut self,
        decl: &ast::TypeDecl,
        base: &ast::TypeExpr,
        rules: &[ast::Rule],
    ) -> Shape {
        let base = self.type_expr(base, &decl.name.text, true);
        let this = FieldMeta {
            may_be_absent: false,
            is_bool: false,
            record: known(&base),
        };
        self.frames.push(Frame {
            names: vec!["self".into()],
            binders: Vec::new(),
            fields: Some(vec![this]),
        });
        let rules = rules
            .iter()
            .map(|r| self.rule(r, &decl.name.text))
            .collect();
        self.frames.pop();
        Shape::Refined {
            base,
            rules,
            ids: FieldIds::new(&decl.name.text),
        }
    }

    /// The chain of declarations from the root kind down to `decl`.
    fn ancestry(&mut self, decl: &ast::TypeDecl) -> Option<(Kind, Vec<ast::TypeDecl>)> {
        let Some(parent) = &decl.parent else {
            return Some((Kind::Data, vec![decl.clone()]));
        };
        if let Some(kind) = Kind::lookup(&parent.text) {
            return Some((kind, vec![decl.clone()]));
        }
        if SCALARS.contains(&parent.text.as_str()) || matches!(parent.text.as_str(), "List" | "Map")
        {
            self.error(CheckError::NotARecordParent {
                name: parent.text.clone(),
                span: parent.span.clone(),
            });
            return None;
        }
        if self.types.contains_key(&parent.text) {
            let cell = self.compile_type(&parent.text)?;
            if cell.get().is_some_and(|c| c.record().is_none()) {
                self.error(CheckError::NotARecordParent {
                    name: parent.text.clone(),
                    span: parent.span.clone(),
                });
                return None;
            }
            let parent_decl = self.types[&parent.text].decl.clone();
            let (kind, mut chain) = self.ancestry(&parent_decl)?;
            chain.push(decl.clone());
            return Some((kind, chain));
        }
        if self.unparsed.covers(&parent.text) {
            return None;
        }
        let mut candidates: Vec<&str> = vec!["Data", "Type", "DataContract", "TypeContract"];
        candidates.extend(self.types.keys().map(String::as_str));
        let candidates = closest(&parent.text, candidates.into_iter());
        self.error(CheckError::UnknownName {
            name: parent.text.clone(),
            span: parent.span.clone(),
            candidates,
        });
        None
    }

    fn compile_record_decl(&mut self, decl: &ast::TypeDecl) -> Option<Shape> {
        let (kind, chain) = self.ancestry(decl)?;
        let mut record = RecordShape {
            open: kind.is_open(),
            ..RecordShape::default()
        };
        let owners: Vec<(String, Vec<Member>)> = chain
            .iter()
            .filter_map(|d| match &d.body {
                TypeBody::Record(ms) => Some((d.name.text.clone(), ms.clone())),
                TypeBody::Refine { .. } => None,
            })
            .collect();
        // An ancestor's members are reported when the ancestor itself is
        // compiled, not again for each type that inherits them.
        let own = owners.len().saturating_sub(1);
        for (depth, (owner, members)) in owners.iter().enumerate() {
            let parent = depth.checked_sub(1).map(|d| owners[d].0.as_str());
            self.muted(depth < own, |c| {
                c.add_fields(&mut record, owner, members, parent)
            });
        }
        let metas = field_metas(&record);
        // Once a type, not once an ancestor: a deep chain would pay for its
        // fields again at every level.
        let names: Vec<String> = record.fields.iter().map(|f| f.name.to_string()).collect();
        for (depth, (owner, members)) in owners.iter().enumerate() {
            self.muted(depth < own, |c| {
                let names = (names.as_slice(), metas.as_slice());
                c.add_members(&mut record, (kind, &decl.name.text), owner, members, names)
            });
        }
        Some(Shape::Record { kind, record })
    }

    /// Run `f`, dropping what it reports when `mute` is set.
    fn muted<R>(&mut self, mute: bool, f: impl FnOnce(&mut Self) -> R) -> R {
        let errors = self.diags.errors.len();
        let warnings = self.diags.warnings.len();
        let reads = self.nested_reads.len();
        let out = f(self);
        if mute {
            self.diags.errors.truncate(errors);
            self.diags.warnings.truncate(warnings);
            self.nested_reads.truncate(reads);
        }
        out
    }

    fn add_fields(
        &mut self,
        record: &mut RecordShape,
        owner: &str,
        members: &[Member],
        parent: Option<&str>,
    ) {
        for m in members {
            let Member::Field(f) = m else { continue };
            if record.index.contains_key(f.name.text.as_str()) {
                let e = match parent {
                    Some(parent) if !owner_declares(members, &f.name.text, &f.name.span) => {
                        CheckError::RedeclaredField {
                            field: f.name.text.clone(),
                            parent: parent.to_string(),
                            span: f.name.span.clone(),
                        }
                    }
                    _ => CheckError::Duplicate {
                        what: "field",
                        name: f.name.text.clone(),
                        span: f.name.span.clone(),
                        first: f.name.span.clone(),
                    },
                };
                self.error(e);
                continue;
            }
            let spec = self.field(f, owner, record.open);
            record
                .index
                .insert(spec.name.clone(), record.fields.len() as u32);
            record.fields.push(spec);
        }
    }

    fn field(&mut self, f: &ast::FieldDecl, owner: &str, open: bool) -> FieldSpec {
        let path = format!("{owner}.{}", f.name.text);
        let ty = self.type_expr(&f.ty, &path, open);
        // Checked against the field once every type is compiled (`check_defaults`).
        let default = f.default.as_ref().map(|d| self.expr(d, Pos::Value));
        FieldSpec {
            name: f.name.text.as_str().into(),
            optional: f.optional,
            ty,
            default,
            default_text: f.default.as_ref().map(expr_text),
            checks: Vec::new(),
            doc: f.doc.clone(),
            ids: FieldIds::new(&path),
        }
    }

    /// The members but fields of `owner`, one of the declarations of the
    /// type `this` (its ancestors first), of kind `kind`.
    fn add_members(
        &mut self,
        record: &mut RecordShape,
        (kind, this): (Kind, &str),
        owner: &str,
        members: &[Member],
        (names, metas): (&[String], &[FieldMeta]),
    ) {
        for m in members {
            if let Some((what, span)) = contract_only(m) {
                if !kind.is_contract() {
                    self.error(CheckError::MemberNotAllowed {
                        member: what,
                        kind,
                        span,
                    });
                    continue;
                }
            }
            match m {
                Member::Field(_) => {}
                Member::Rule(r) => {
                    self.frames.push(rule_frame(names, metas));
                    let spec = self.rule(r, owner);
                    self.frames.pop();
                    match r.severity {
                        Severity::Require => record.rules.push(spec),
                        Severity::Warn => record.warns.push(spec),
                    }
                }
                Member::Check { field, func, .. } => self.add_check(record, owner, field, func),
                Member::Unique { fields, .. } => self.add_unique(record, owner, fields),
                Member::Expect(e) => {
                    let spec = self.expectation(record, owner, this, e);
                    record.expects.push(spec);
                }
            }
        }
    }

    fn field_slot(&mut self, record: &RecordShape, owner: &str, field: &ast::Name) -> Option<u32> {
        let slot = record.index.get(field.text.as_str()).copied();
        if slot.is_none() {
            let candidates = closest(&field.text, record.fields.iter().map(|f| &*f.name));
            self.error(CheckError::UnknownField {
                field: field.text.clone(),
                ty: owner.to_string(),
                span: field.span.clone(),
                candidates,
            });
        }
        slot
    }

    fn add_check(
        &mut self,
        record: &mut RecordShape,
        owner: &str,
        field: &ast::Name,
        func: &ast::Name,
    ) {
        let Some(slot) = self.field_slot(record, owner, field) else {
            return;
        };
        let target = AExpr::new(ExprKind::Name(func.text.clone()), func.span.clone());
        let lowered = self.expr(&target, Pos::Value);
        self.check_takes_one(&lowered, func);
        let spec = CheckSpec {
            id: identity::check_id(owner, field, func).into(),
            func: lowered,
            func_name: func.text.clone(),
        };
        record.fields[slot as usize].checks.push(spec);
    }

    /// The function of `validate field with f` is called with the field's
    /// value alone.
    fn check_takes_one(&mut self, f: &Expr, name: &ast::Name) {
        let (min, max) = match f {
            Expr::Global(slot, _) => match self.fn_params(*slot) {
                Some(n) => (n, n),
                None => return,
            },
            Expr::Const(Value::Func(b)) => match &**b {
                Function::Builtin(b) => b.arity(),
                _ => return,
            },
            Expr::Type(_) => {
                self.error(CheckError::CallOfType {
                    name: name.text.clone(),
                    span: name.span.clone(),
                });
                return;
            }
            _ => return,
        };
        self.check_arity(&name.text, min, max, 1, &name.span);
    }

    fn add_unique(&mut self, record: &mut RecordShape, owner: &str, fields: &[ast::Name]) {
        let slots: Vec<u32> = fields
            .iter()
            .filter_map(|f| self.field_slot(record, owner, f))
            .collect();
        if slots.len() != fields.len() {
            return;
        }
        record.uniques.push(UniqueSpec {
            id: identity::unique_id(owner, fields).into(),
            slots,
        });
    }

    fn rule(&mut self, r: &ast::Rule, owner: &str) -> RuleSpec {
        let id = identity::rule_id(owner, r);
        let outer_reads = self.reads.replace(Vec::new());
        let cond = self.expr(&r.cond, Pos::Condition);
        let slots = std::mem::replace(&mut self.reads, outer_reads).unwrap_or_default();
        let names = self
            .frames
            .last()
            .map(|f| f.names.clone())
            .unwrap_or_default();
        let fields = slots
            .iter()
            .filter(|&&s| s > 0)
            .filter_map(|&s| names.get(s as usize))
            .map(|n| Key::from(n.as_str()))
            .collect();
        RuleSpec {
            id: id.into(),
            severity: r.severity,
            cond,
            fields,
            // Frame slot 0 is `self`; field slots start at 1.
            slots: slots.iter().filter(|&&s| s > 0).map(|s| s - 1).collect(),
            reads_self: slots.contains(&0),
            message: r.message.clone(),
            text: expr_text(&r.cond),
            doc: r.doc.clone(),
            compiled: Default::default(),
        }
    }

    fn type_expr(&mut self, t: &ast::TypeExpr, path: &str, open: bool) -> TypeSpec {
        match t {
            ast::TypeExpr::Name(n) => self.type_name(n),
            ast::TypeExpr::Generic { name, args, span } => {
                let arg = match args.as_slice() {
                    [one] => self.type_expr(one, path, open),
                    _ => {
                        self.error(CheckError::Arity {
                            name: name.text.clone(),
                            min: 1,
                            max: 1,
                            found: args.len(),
                            span: span.clone(),
                        });
                        TypeSpec::Any
                    }
                };
                match name.text.as_str() {
                    "List" => TypeSpec::List(Box::new(arg)),
                    "Map" => TypeSpec::Map(Box::new(arg)),
                    _ => {
                        let generic = ["List", "Map"];
                        let candidates = with_synonym(
                            suggest::synonym(&name.text),
                            closest(&name.text, generic.into_iter()),
                            |m| generic.contains(&m),
                        );
                        self.error(CheckError::UnknownName {
                            name: name.text.clone(),
                            span: name.span.clone(),
                            candidates,
                        });
                        TypeSpec::Any
                    }
                }
            }
            ast::TypeExpr::Record { fields, .. } => {
                let mut record = RecordShape {
                    open,
                    ..RecordShape::default()
                };
                for f in fields {
                    let spec = self.field(f, path, open);
                    record
                        .index
                        .insert(spec.name.clone(), record.fields.len() as u32);
                    record.fields.push(spec);
                }
                TypeSpec::Record(Rc::new(record))
            }
            ast::TypeExpr::Union(members) => TypeSpec::Union(
                members
                    .iter()
                    .map(|m| self.type_expr(m, path, open))
                    .collect(),
            ),
            ast::TypeExpr::Literal(lit, span) => match self.literal(lit, span) {
                Value::Absent => TypeSpec::Any,
                v => TypeSpec::Literal(v),
            },
        }
    }

    fn type_name(&mut self, n: &ast::Name) -> TypeSpec {
        match n.text.as_str() {
            "Any" => TypeSpec::Any,
            "Null" => TypeSpec::Null,
            "Bool" => TypeSpec::Bool,
            "Int" => TypeSpec::Int,
            "Float" => TypeSpec::Float,
            "String" => TypeSpec::String,
            name => match self.types.get(name) {
                Some(entry) => TypeSpec::Named(entry.cell.clone()),
                None => {
                    self.unknown_type(name, &n.span);
                    // A type that is never filled in: unlike `Any` it does
                    // not admit null, so no later error (a read without `?`)
                    // follows from the name that was not found.
                    TypeSpec::Named(Rc::default())
                }
            },
        }
    }

    // ------------------------------------------------------------- expressions

    fn literal(&mut self, lit: &Lit, span: &Span) -> Value {
        match lit {
            Lit::Int(text) => match text.replace('_', "").parse::<i64>() {
                Ok(n) => Value::Int(n),
                Err(_) => {
                    self.error(CheckError::IntOutOfRange { span: span.clone() });
                    Value::Absent
                }
            },
            Lit::Float(text) => match text.replace('_', "").parse::<f64>() {
                Ok(f) if f.is_finite() => Value::Float(f),
                _ => {
                    self.error(CheckError::FloatOutOfRange { span: span.clone() });
                    Value::Absent
                }
            },
            Lit::Str { value, .. } => Value::str(value.as_str()),
            Lit::Bool(b) => Value::Bool(*b),
            Lit::Null => Value::Null,
            // An expectation reads these itself (`check/expect.rs`):
            // anywhere else they are misplaced.
            Lit::Percent(_) => {
                let span = span.clone();
                self.error(CheckError::ShareOfNonCount { found: None, span });
                Value::Absent
            }
            Lit::Duration(_) => {
                self.error(CheckError::DurationOutsideAge { span: span.clone() });
                Value::Absent
            }
        }
    }

    fn exprs(&mut self, es: &[AExpr]) -> Vec<Expr> {
        es.iter().map(|e| self.expr(e, Pos::Value)).collect()
    }

    fn expr(&mut self, e: &AExpr, pos: Pos) -> Expr {
        let span = e.span.clone();
        match &e.kind {
            ExprKind::Lit(lit) => Expr::Const(self.literal(lit, &span)),
            ExprKind::Name(n) => self.name(n, &span, false),
            ExprKind::SelfRef => self.self_ref(&span),
            ExprKind::List(items) => fold_list(self.exprs(items)),
            ExprKind::Record(fields) => fold_record(self.record_fields(fields)),
            ExprKind::Field(target, name) => self.field_read(target, name, false, &span),
            ExprKind::Index(target, index) => self.index_read(target, index, false, &span),
            ExprKind::Present(inner) => self.present(inner, pos, &span),
            ExprKind::Call(func, args) => self.call(func, args, None, &span),
            ExprKind::Pipe(lhs, rhs) => match &rhs.kind {
                ExprKind::Call(func, args) => self.call(func, args, Some(lhs), &span),
                // The parser has already rejected any other right side.
                _ => self.expr(rhs, Pos::Value),
            },
            ExprKind::Construct(ty, fields) => {
                let fields = self.record_fields(fields);
                match self.types.get(&ty.text) {
                    Some(entry) => Expr::Construct {
                        cell: entry.cell.clone(),
                        fields,
                        span,
                    },
                    None => self.unknown_type(&ty.text, &ty.span),
                }
            }
            ExprKind::Unary(UnOp::Not, x) => {
                Expr::Not(Box::new(self.expr(x, Pos::Condition)), span)
            }
            ExprKind::Unary(UnOp::Neg, x) => match (&x.kind, self.expr(x, Pos::Value)) {
                (ExprKind::Lit(_), Expr::Const(Value::Int(n))) => Expr::Const(Value::Int(-n)),
                (ExprKind::Lit(_), Expr::Const(Value::Float(f))) => Expr::Const(Value::Float(-f)),
                (_, x) => Expr::Neg(Box::new(x), span),
            },
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, span),
            ExprKind::Lambda(param, body) => self.lambda(param, body, false, Pos::Value),
            ExprKind::If(c, a, b) => Expr::If(
                Box::new(self.expr(c, Pos::Condition)),
                Box::new(self.expr(a, Pos::Value)),
                Box::new(self.expr(b, Pos::Value)),
                span,
            ),
        }
    }

    fn binary(&mut self, op: BinOp, a: &AExpr, b: &AExpr, span: Span) -> Expr {
        let logic = match op {
            BinOp::And => Some(Logic::And),
            BinOp::Or => Some(Logic::Or),
            BinOp::Implies => Some(Logic::Implies),
            _ => None,
        };
        match logic {
            Some(l) => {
                let a = self.expr(a, Pos::Condition);
                let b = self.expr(b, Pos::Condition);
                Expr::Logic(l, Box::new(a), Box::new(b), span)
            }
            None => {
                let a = self.expr(a, Pos::Value);
                let b = self.expr(b, Pos::Value);
                Expr::Binary(op, Box::new(a), Box::new(b), span)
            }
        }
    }

    /// A lambda; a `predicate`'s value is a truth (absent and null are
    /// false), and its body stands at `pos` (a presence test in `filter`).
    fn lambda(&mut self, param: &ast::Name, body: &AExpr, predicate: bool, pos: Pos) -> Expr {
        self.frames.push(Frame {
            names: vec![param.text.clone()],
            binders: vec![param.span.start],
            fields: None,
        });
        let body = self.expr(body, pos);
        self.frames.pop();
        Expr::Lambda(Rc::new(hir::Lambda { body, predicate }))
    }

    fn record_fields(&mut self, fields: &[(ast::Name, AExpr)]) -> Vec<(Key, Expr)> {
        fields
            .iter()
            .map(|(k, v)| (Key::from(k.text.as_str()), self.expr(v, Pos::Value)))
            .collect()
    }

    /// `x?`: a presence test as a condition, else the value or absent.
    fn present(&mut self, inner: &AExpr, pos: Pos, span: &Span) -> Expr {
        let soft = match &inner.kind {
            ExprKind::Name(n) => self.name(n, &inner.span, true),
            ExprKind::Field(t, name) => self.field_read(t, name, true, &inner.span),
            ExprKind::Index(t, i) => self.index_read(t, i, true, &inner.span),
            _ => Expr::Soft(Box::new(self.expr(inner, Pos::Value))),
        };
        if pos == Pos::Condition {
            self.warn_presence_of_bool(inner, span);
            Expr::Presence(Box::new(soft))
        } else {
            soft
        }
    }

    fn warn_presence_of_bool(&mut self, inner: &AExpr, span: &Span) {
        let ExprKind::Name(n) = &inner.kind else {
            return;
        };
        if let Some((_, _, Some(meta))) = self.lookup_local(n) {
            if meta.is_bool {
                self.diags.warnings.push(CheckWarning::PresenceOfBool {
                    field: n.clone(),
                    span: span.clone(),
                });
            }
        }
    }

    fn field_read(&mut self, target: &AExpr, name: &ast::Name, soft: bool, span: &Span) -> Expr {
        if matches!(target.kind, ExprKind::SelfRef) && self.in_rule_frame() {
            if let Some(local) = self.rule_field(&name.text, span, soft) {
                return local;
            }
        }
        let text = format!("{}.{}", expr_text(target), name.text);
        self.note_nested_read(target, &name.text, soft, text, span);
        Expr::Field {
            target: Box::new(self.expr(target, Pos::Value)),
            name: name.text.as_str().into(),
            soft,
            span: span.clone(),
        }
    }

    fn index_read(&mut self, target: &AExpr, index: &AExpr, soft: bool, span: &Span) -> Expr {
        if let (ExprKind::SelfRef, ExprKind::Lit(Lit::Str { value, .. })) =
            (&target.kind, &index.kind)
        {
            if let Some(local) = self.rule_field(value, span, soft) {
                return local;
            }
        }
        if let ExprKind::Lit(Lit::Str { value, text }) = &index.kind {
            let read = format!("{}[{text}]", expr_text(target));
            self.note_nested_read(target, value, soft, read, span);
        }
        Expr::Index {
            target: Box::new(self.expr(target, Pos::Value)),
            index: Box::new(self.expr(index, Pos::Value)),
            soft,
            span: span.clone(),
        }
    }

    /// In a rule, a read of field `field` of `target` where `target` is a
    /// record the rule knows (a field of a nested record type): checked
    /// for its `?` once every type is compiled.
    fn note_nested_read(
        &mut self,
        target: &AExpr,
        field: &str,
        soft: bool,
        text: String,
        span: &Span,
    ) {
        if let Some((root, steps)) = self.rule_path(target) {
            self.nested_reads.push(NestedRead {
                root,
                steps,
                field: field.to_string(),
                soft,
                text,
                span: span.clone(),
            });
        }
    }

    /// The record a rule's expression reads from, as a known record and
    /// the fields leading from it: `addr.city` → (addr's record, [city]).
    fn rule_path(&self, e: &AExpr) -> Option<(Known, Vec<String>)> {
        let field_of_self = |name: &str| {
            let (_, slot, meta) = self.lookup_local(name)?;
            meta.filter(|_| slot > 0)?.record
        };
        let (target, step) = match &e.kind {
            ExprKind::Name(n) => return field_of_self(n).map(|k| (k, vec![])),
            ExprKind::SelfRef => {
                let (_, _, meta) = self.lookup_local("self")?;
                return meta?.record.map(|k| (k, vec![]));
            }
            ExprKind::Present(inner) => return self.rule_path(inner),
            ExprKind::Field(target, name) => (target, name.text.as_str()),
            ExprKind::Index(target, index) => match &index.kind {
                ExprKind::Lit(Lit::Str { value, .. }) => (target, value.as_str()),
                _ => return None,
            },
            _ => return None,
        };
        if matches!(target.kind, ExprKind::SelfRef) {
            if let Some(k) = field_of_self(step) {
                return Some((k, vec![]));
            }
        }
        let (root, mut steps) = self.rule_path(target)?;
        steps.push(step.to_string());
        Some((root, steps))
    }

    /// The `?` discipline of §4.4 for the nested reads noted in rules.
    fn check_nested_reads(&mut self) {
        for read in std::mem::take(&mut self.nested_reads) {
            let mut record = Some(read.root.clone());
            for step in &read.steps {
                record = record.and_then(|k| with_field(&k, step, |f| known(&f.ty)).flatten());
            }
            let may_be_absent = record
                .and_then(|k| with_field(&k, &read.field, |f| f.optional || f.ty.admits_null()));
            match may_be_absent {
                Some(true) if !read.soft => self.error(CheckError::OptionalWithoutMark {
                    field: read.text,
                    span: read.span,
                }),
                Some(false) if read.soft => self.diags.warnings.push(CheckWarning::NeedlessMark {
                    field: read.text,
                    span: read.span,
                }),
                _ => {}
            }
        }
    }

    fn in_rule_frame(&self) -> bool {
        self.frames.iter().any(|f| f.fields.is_some())
    }

    /// A field of the record a rule is checking, read as `self["f"]` or by name.
    fn rule_field(&mut self, name: &str, span: &Span, soft: bool) -> Option<Expr> {
        let (depth, slot, meta) = self.lookup_local(name)?;
        let meta = meta?;
        self.note_read(slot);
        self.check_mark(name, &meta, soft, span);
        let local = Expr::Local { depth, slot };
        Some(if soft {
            Expr::Soft(Box::new(local))
        } else {
            local
        })
    }

    fn check_mark(&mut self, field: &str, meta: &FieldMeta, soft: bool, span: &Span) {
        if meta.may_be_absent && !soft {
            self.error(CheckError::OptionalWithoutMark {
                field: field.to_string(),
                span: span.clone(),
            });
        } else if soft && !meta.may_be_absent {
            self.diags.warnings.push(CheckWarning::NeedlessMark {
                field: field.to_string(),
                span: span.clone(),
            });
        }
    }

    fn note_read(&mut self, slot: u32) {
        if let Some(reads) = &mut self.reads {
            if !reads.contains(&slot) {
                reads.push(slot);
            }
        }
    }

    fn self_ref(&mut self, span: &Span) -> Expr {
        match self.lookup_local("self") {
            Some((depth, slot, _)) => {
                let binding = self.local_binding(depth, slot);
                self.resolved.resolve(span.start, binding);
                // Any use of `self` but `self["x"]` reads every field.
                let n = self.frames[self.frames.len() - 1 - depth as usize]
                    .names
                    .len() as u32;
                for s in 0..n {
                    self.note_read(s);
                }
                Expr::Local { depth, slot }
            }
            None => self.unknown("self", span),
        }
    }

    /// What the local at (`depth`, `slot`) is bound by.
    fn local_binding(&self, depth: u32, slot: u32) -> Binding {
        let frame = &self.frames[self.frames.len() - 1 - depth as usize];
        match frame.binders.get(slot as usize) {
            Some(&at) => Binding::Param(at),
            None => Binding::RuleSlot(slot),
        }
    }

    /// A function's parameter and return annotations, compiled as field
    /// types are, for type flow to read.
    fn annotate(&mut self, f: &ast::FnDecl) {
        for p in &f.params {
            if let Some(t) = &p.ty {
                let path = format!("{}.{}", f.name.text, p.name.text);
                let spec = self.type_expr(t, &path, true);
                self.resolved.annotate(p.name.span.start, spec);
            }
        }
        if let Some(t) = &f.ret {
            let spec = self.type_expr(t, &f.name.text, true);
            self.resolved.annotate(f.name.span.start, spec);
        }
    }

    /// Find a local: (depth, slot, field metadata when it is a rule's field).
    fn lookup_local(&self, name: &str) -> Option<(u32, u32, Option<FieldMeta>)> {
        for (depth, frame) in self.frames.iter().rev().enumerate() {
            if let Some(slot) = frame.names.iter().rposition(|n| n == name) {
                let meta = frame.fields.as_ref().and_then(|m| m.get(slot)).cloned();
                return Some((depth as u32, slot as u32, meta));
            }
        }
        None
    }

    fn name(&mut self, n: &str, span: &Span, soft: bool) -> Expr {
        if let Some((depth, slot, meta)) = self.lookup_local(n) {
            let binding = self.local_binding(depth, slot);
            self.resolved.resolve(span.start, binding);
            if meta.is_some() && slot > 0 {
                return self
                    .rule_field(n, span, soft)
                    .unwrap_or(Expr::Const(Value::Null));
            }
            let local = Expr::Local { depth, slot };
            return if soft {
                Expr::Soft(Box::new(local))
            } else {
                local
            };
        }
        let plain = self.global_or_builtin(n, span);
        if soft {
            Expr::Soft(Box::new(plain))
        } else {
            plain
        }
    }

    fn global_or_builtin(&mut self, n: &str, span: &Span) -> Expr {
        if let Some(g) = self.visible_global(n, span) {
            let binding = match g.params {
                Some(_) => Binding::Fn(g.span.start),
                None => Binding::Let(g.span.start),
            };
            self.resolved.resolve(span.start, binding);
            return Expr::Global(g.slot, span.clone());
        }
        if let Some(b) = Builtin::lookup(n) {
            self.resolved.resolve(span.start, Binding::Builtin(b));
            return Expr::Const(Value::Func(Rc::new(Function::Builtin(b))));
        }
        if let Some(entry) = self.types.get(n) {
            self.resolved
                .resolve(span.start, Binding::Type(n.to_string()));
            return Expr::Type(entry.cell.clone());
        }
        if let Some(f) = self.formats.named(n) {
            self.resolved.resolve(span.start, Binding::Format(f));
            return Expr::Const(Value::Format(f));
        }
        self.unknown(n, span)
    }

    /// The declaration of global `n` that a use at the current point sees.
    fn visible_global(&mut self, n: &str, span: &Span) -> Option<Global> {
        // A name's declarations are in statement order, the library's
        // first. The library's code binds to the library's declarations;
        // the program's code prefers its own, which shadow the library's.
        let all = self.globals.get(n)?;
        let split = all.partition_point(|g| g.span.start < self.prelude_end);
        let own = if self.in_prelude {
            &all[..split]
        } else {
            &all[split..]
        };
        let decls = if own.is_empty() { &all[..] } else { own };
        let Some(here) = self.stmt_index else {
            if !self.in_prelude {
                self.hoisted.insert(n.to_string());
            }
            return decls.last().cloned();
        };
        // A function is seen from anywhere, a `let` after it.
        let seen = if self.fn_names.contains(n) {
            decls
                .iter()
                .rev()
                .find(|g| g.at < here || g.params.is_some())
        } else {
            decls[..decls.partition_point(|g| g.at < here)].last()
        };
        if let Some(g) = seen {
            return Some(g.clone());
        }
        let first = decls[0].clone();
        self.error(CheckError::UsedBeforeLet {
            name: n.to_string(),
            span: span.clone(),
            declared: first.span.clone(),
        });
        Some(first)
    }

    fn unknown(&mut self, n: &str, span: &Span) -> Expr {
        if self.unparsed.covers(n) {
            return Expr::Const(Value::Null);
        }
        let mut names: Vec<String> = self
            .frames
            .iter()
            .flat_map(|f| f.names.iter().cloned())
            .collect();
        names.extend(self.globals.keys().cloned());
        names.extend(Builtin::ALL.iter().map(|b| b.name().to_string()));
        names.extend(self.types.keys().cloned());
        names.extend(self.formats.in_programs().map(|f| f.name().to_string()));
        let meant = suggest::synonym(n).or_else(|| self.formats.synonym(n));
        let close = closest(n, names.iter().map(String::as_str));
        let candidates = with_synonym(meant, close, |m| names.iter().any(|k| k == m));
        self.error(CheckError::UnknownName {
            name: n.to_string(),
            span: span.clone(),
            candidates,
        });
        Expr::Const(Value::Null)
    }

    fn not_a_type(&mut self, n: &str, span: &Span) -> Expr {
        self.error(CheckError::NotAType {
            name: n.to_string(),
            span: span.clone(),
            found: None,
        });
        Expr::Const(Value::Null)
    }

    /// A type name that is not declared, with the declared types closest to it.
    fn unknown_type(&mut self, n: &str, span: &Span) -> Expr {
        if !self.unparsed.covers(n) {
            let mut all: Vec<&str> = SCALARS.to_vec();
            all.extend(self.types.keys().map(String::as_str));
            let candidates =
                with_synonym(suggest::synonym(n), closest(n, all.iter().copied()), |m| {
                    all.contains(&m) || matches!(m, "List" | "Map")
                });
            self.error(CheckError::UnknownName {
                name: n.to_string(),
                span: span.clone(),
                candidates,
            });
        }
        Expr::Const(Value::Null)
    }

    // ------------------------------------------------------------------- calls

    fn call(
        &mut self,
        func: &AExpr,
        args: &[ast::Arg],
        piped: Option<&AExpr>,
        span: &Span,
    ) -> Expr {
        let ExprKind::Name(name) = &func.kind else {
            let f = self.expr(func, Pos::Value);
            let args = self.call_args(piped, args, None, &name_of(func), span);
            return Expr::Call {
                func: Box::new(f),
                args,
                span: span.clone(),
            };
        };
        if self.lookup_local(name).is_none() && !self.globals.contains_key(name) {
            if let Some(b) = Builtin::lookup(name) {
                self.resolved.resolve(func.span.start, Binding::Builtin(b));
                return self.call_builtin(b, args, piped, span);
            }
            if self.types.contains_key(name) {
                self.error(CheckError::CallOfType {
                    name: name.clone(),
                    span: func.span.clone(),
                });
            }
        }
        let f = self.name(name, &func.span, false);
        let params = match &f {
            Expr::Global(slot, _) => self.fn_params(*slot),
            _ => None,
        };
        let lowered = self.call_args(piped, args, None, name, span);
        if let Some(p) = params {
            self.check_arity(name, p, p, lowered.len(), span);
        }
        Expr::Call {
            func: Box::new(f),
            args: lowered,
            span: span.clone(),
        }
    }

    fn fn_params(&self, slot: u32) -> Option<usize> {
        self.slot_params.get(slot as usize).copied().flatten()
    }

    fn check_arity(&mut self, name: &str, min: usize, max: usize, found: usize, span: &Span) {
        if found < min || found > max {
            self.error(CheckError::Arity {
                name: name.to_string(),
                min,
                max,
                found,
                span: span.clone(),
            });
        }
    }

    /// Lower a call's arguments, the pipe's left side first. Named arguments
    /// are checked against `named` (None: the callee takes none).
    fn call_args(
        &mut self,
        piped: Option<&AExpr>,
        args: &[ast::Arg],
        builtin: Option<Builtin>,
        func: &str,
        span: &Span,
    ) -> Vec<Expr> {
        let mut out = Vec::new();
        if let Some(lhs) = piped {
            out.push(self.expr(lhs, Pos::Value));
        }
        let mut seen: Vec<&str> = Vec::new();
        let mut named: Vec<(&str, Expr)> = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            if let Some(n) = &arg.name {
                self.check_named_arg(n, builtin, func, &seen);
                seen.push(&n.text);
            }
            let predicate = builtin.is_some_and(|b| b.takes_predicate())
                && i + usize::from(piped.is_some()) == 1;
            let pos = match builtin {
                Some(b) if predicate && b.tests_presence() => Pos::Condition,
                _ => Pos::Value,
            };
            let lowered = match &arg.value.kind {
                ExprKind::Lambda(p, body) => self.lambda(p, body, predicate, pos),
                _ => self.expr(&arg.value, Pos::Value),
            };
            match (&arg.name, builtin) {
                (Some(n), Some(_)) => named.push((&n.text, lowered)),
                _ => out.push(lowered),
            }
        }
        // A builtin's named arguments follow its positional ones in the
        // order it declares them, whatever order they are written in; a
        // source's or target's format options, one record after all.
        if let Some(b) = builtin.filter(|b| b.takes_format_options()) {
            if !named.is_empty() {
                self.check_format_options(b, piped, args, &named);
                out.resize_with(out.len().max(b.format_options_at()), || {
                    Expr::Const(Value::Null)
                });
                let record = named.drain(..).map(|(n, e)| (Key::from(n), e)).collect();
                out.push(Expr::Record(record));
            }
        }
        let params = builtin.map(|b| b.named_params()).unwrap_or(&[]);
        for param in params {
            match named.iter().position(|(n, _)| n == param) {
                Some(i) => out.push(named.swap_remove(i).1),
                None => {
                    self.error(CheckError::MissingNamedArg {
                        name: param.to_string(),
                        func: func.to_string(),
                        span: span.clone(),
                    });
                    out.push(Expr::Const(Value::Null));
                }
            }
        }
        out
    }

    fn check_named_arg(
        &mut self,
        n: &ast::Name,
        builtin: Option<Builtin>,
        func: &str,
        seen: &[&str],
    ) {
        let allowed = builtin.map(|b| b.named_params()).unwrap_or(&[]);
        let option = builtin.is_some_and(|b| b.takes_format_options());
        if seen.contains(&n.text.as_str()) {
            self.error(CheckError::RepeatedNamedArg {
                name: n.text.clone(),
                span: n.span.clone(),
            });
        } else if !allowed.contains(&n.text.as_str()) && !option {
            self.error(CheckError::UnknownNamedArg {
                name: n.text.clone(),
                func: func.to_string(),
                span: n.span.clone(),
                candidates: closest(&n.text, allowed.iter().copied()),
            });
        }
    }

    /// A source's or target's format options, where its format is known
    /// before the program runs: each one the format takes, each value
    /// written as a literal one it can be. What is known only when the
    /// program runs is checked then.
    fn check_format_options(
        &mut self,
        b: Builtin,
        piped: Option<&AExpr>,
        args: &[ast::Arg],
        named: &[(&str, Expr)],
    ) {
        let Some(format) = self.static_format(b, piped, args) else {
            return;
        };
        let reading = b == Builtin::Source;
        let mut boundary = crate::runtime::eval::io::Boundary::default();
        let mut all_known = true;
        for arg in args {
            let Some(n) = &arg.name else {
                continue;
            };
            let Some(option) = format.option(&n.text, reading) else {
                let mut e = OptionError::unknown(format, &n.text, reading);
                let names = format.options(reading).map(|o| o.name());
                if let [near, ..] = closest(&n.text, names).as_slice() {
                    e.help = format!("did you mean `{near}`? {}", e.help);
                }
                self.option_error(e, &n.span);
                continue;
            };
            let value = named.iter().find(|(m, _)| *m == n.text).map(|(_, e)| e);
            match value.and_then(constant) {
                Some(v) => match boundary.set_option(option, &v) {
                    Ok(()) => {}
                    Err(e) => self.option_error(e, &arg.value.span),
                },
                None => all_known = false,
            }
        }
        if let (true, Err(e)) = (all_known, boundary.check_options()) {
            let span = args
                .iter()
                .find_map(|a| a.name.as_ref().filter(|n| n.text == "quote"));
            if let Some(n) = span {
                self.option_error(e, &n.span);
            }
        }
    }

    fn option_error(&mut self, e: OptionError, span: &Span) {
        self.error(CheckError::FormatOption {
            message: e.message,
            help: e.help,
            span: span.clone(),
        });
    }

    /// The format a `source` or `write` call reads or writes, where the
    /// program names it or (for `write`) the extension of a literal
    /// `file(…)` tells it.
    fn static_format(
        &self,
        b: Builtin,
        piped: Option<&AExpr>,
        args: &[ast::Arg],
    ) -> Option<crate::runtime::builtins::Format> {
        let positional: Vec<&AExpr> = (piped.into_iter())
            .chain(args.iter().filter(|a| a.name.is_none()).map(|a| &a.value))
            .collect();
        let at = b.format_options_at() - 1;
        match positional.get(at).map(|e| &e.kind) {
            Some(ExprKind::Name(n)) if self.lookup_local(n).is_none() => self.formats.named(n),
            Some(_) => None,
            None if b == Builtin::Write => {
                let ExprKind::Call(f, file_args) = &positional.get(at - 1)?.kind else {
                    return None;
                };
                let is_file = matches!(&f.kind, ExprKind::Name(n) if n == "file");
                match file_args.first().map(|a| &a.value.kind) {
                    Some(ExprKind::Lit(Lit::Str { value, .. })) if is_file => {
                        self.formats.of_path(value)
                    }
                    _ => None,
                }
            }
            None => None,
        }
    }

    fn call_builtin(
        &mut self,
        b: Builtin,
        args: &[ast::Arg],
        piped: Option<&AExpr>,
        span: &Span,
    ) -> Expr {
        let positional =
            args.iter().filter(|a| a.name.is_none()).count() + usize::from(piped.is_some());
        let (min, max) = b.arity();
        self.check_arity(b.name(), min, max, positional, span);
        if b == Builtin::Validate {
            if let Some(ty_arg) = args.last() {
                self.check_type_arg(ty_arg);
            }
        }
        if b == Builtin::Matches {
            if let Some(m) = self.matches_literal(args, piped, span) {
                return m;
            }
        }
        let args = self.call_args(piped, args, Some(b), b.name(), span);
        Expr::Builtin {
            builtin: b,
            args,
            span: span.clone(),
        }
    }

    fn check_type_arg(&mut self, arg: &ast::Arg) {
        let ExprKind::Name(n) = &arg.value.kind else {
            return;
        };
        let declared = self.types.contains_key(n)
            || self.lookup_local(n).is_some()
            || self.globals.contains_key(n);
        let other = Builtin::lookup(n).is_some()
            || self.formats.named(n).is_some()
            || SCALARS.contains(&n.as_str());
        if !declared && other {
            self.not_a_type(n, &arg.value.span);
        }
    }

    /// `matches(s, "literal")`: compile the regex now, once.
    fn matches_literal(
        &mut self,
        args: &[ast::Arg],
        piped: Option<&AExpr>,
        span: &Span,
    ) -> Option<Expr> {
        let (subject, pattern) = match (piped, args) {
            (Some(s), [p]) => (s, &p.value),
            (None, [s, p]) => (&s.value, &p.value),
            _ => return None,
        };
        let ExprKind::Lit(Lit::Str { value, .. }) = &pattern.kind else {
            return None;
        };
        match Regex::new(value) {
            Ok(regex) => Some(Expr::Matches {
                subject: Box::new(self.expr(subject, Pos::Value)),
                regex: Rc::new(regex),
                span: span.clone(),
            }),
            Err(e) => {
                self.error(CheckError::InvalidRegex {
                    message: e.to_string(),
                    span: pattern.span.clone(),
                });
                None
            }
        }
    }
}

/// How deep `record_types_in` follows a field's type.
const MAX_NESTED_WALK: usize = 64;

/// The names of the record types a field's type `spec` holds values of:
/// itself, its lists', maps', unions' and inline records' members, and the
/// bases of the refinements it names.
fn record_types_in(spec: &TypeSpec, out: &mut FxHashSet<String>, levels: usize) {
    let Some(deeper) = levels.checked_sub(1) else {
        return;
    };
    match spec {
        TypeSpec::List(t) | TypeSpec::Map(t) => record_types_in(t, out, deeper),
        TypeSpec::Union(ms) => ms.iter().for_each(|m| record_types_in(m, out, deeper)),
        TypeSpec::Record(shape) => {
            for f in shape.fields.iter() {
                record_types_in(&f.ty, out, deeper);
            }
        }
        TypeSpec::Named(cell) => match cell.get().map(|c| (c, &c.shape)) {
            Some((c, Shape::Record { .. })) => {
                out.insert(c.name.clone());
            }
            Some((_, Shape::Refined { base, .. })) => record_types_in(base, out, deeper),
            None => {}
        },
        _ => {}
    }
}

/// Where a statement starts (which file, and whether it is the library's).
/// `candidates` with HQL's name that `meant` (`suggest::synonym`) gives
/// first, when there is one and `known` says it names something here.
fn with_synonym(
    meant: Option<&str>,
    mut candidates: Vec<String>,
    known: impl Fn(&str) -> bool,
) -> Vec<String> {
    if let Some(meant) = meant.filter(|m| known(m)) {
        candidates.retain(|c| c != meant);
        candidates.insert(0, meant.to_string());
    }
    candidates
}

pub fn stmt_start(stmt: &AStmt) -> usize {
    match stmt {
        AStmt::Type(t) => t.span.start,
        AStmt::Fn(f) => f.span.start,
        AStmt::Let { name, .. } => name.span.start,
        AStmt::Check { span, .. } | AStmt::Import { span, .. } => span.start,
        AStmt::Expr(e) => e.span.start,
    }
}

const SCALARS: [&str; 6] = ["String", "Int", "Float", "Bool", "Null", "Any"];

/// The annotations a type declaration may carry (§4.3).
const ANNOTATIONS: [&str; 2] = ["version", "owner"];

fn name_of(e: &AExpr) -> String {
    match &e.kind {
        ExprKind::Name(n) => n.clone(),
        _ => "function".into(),
    }
}

/// Which contract-only member this is, if any, and where.
fn contract_only(m: &Member) -> Option<(&'static str, Span)> {
    match m {
        Member::Rule(r) if r.severity == Severity::Require => Some(("require", r.span.clone())),
        Member::Rule(r) => Some(("warn", r.span.clone())),
        Member::Field(f) => f.default.as_ref().map(|d| ("a default", d.span.clone())),
        Member::Check { span, .. } => Some(("validate … with", span.clone())),
        Member::Unique { span, .. } => Some(("unique", span.clone())),
        Member::Expect(e) => Some(("expect", e.span.clone())),
    }
}

fn owner_declares(members: &[Member], name: &str, span: &Span) -> bool {
    members
        .iter()
        .filter(|m| matches!(m, Member::Field(f) if f.name.text == name && f.name.span != *span))
        .count()
        > 0
}

fn field_metas(record: &RecordShape) -> Vec<FieldMeta> {
    let this = FieldMeta {
        may_be_absent: false,
        is_bool: false,
        record: None,
    };
    std::iter::once(this)
        .chain(record.fields.iter().map(|f| FieldMeta {
            may_be_absent: f.optional || f.ty.admits_null(),
            is_bool: f.ty.is_bool(),
            record: known(&f.ty),
        }))
        .collect()
}

/// The record a value of type `spec` is, if it is one (`{…} | Null` is one
/// once its presence is settled).
fn known(spec: &TypeSpec) -> Option<Known> {
    match spec {
        TypeSpec::Record(r) => Some(Known::Inline(r.clone())),
        TypeSpec::Named(cell) => Some(Known::Declared(cell.clone())),
        TypeSpec::Union(members) => {
            let mut values = members.iter().filter(|m| !matches!(m, TypeSpec::Null));
            match (values.next(), values.next()) {
                (Some(one), None) => known(one),
                _ => None,
            }
        }
        _ => None,
    }
}

/// What `f` gives for field `name` of the record `k`, when it declares one
/// (following aliases in a loop: a chain of them may be long).
fn with_field<R>(k: &Known, name: &str, f: impl FnOnce(&FieldSpec) -> R) -> Option<R> {
    let mut k = k.clone();
    loop {
        let base = match &k {
            Known::Inline(record) => return record.field(name).map(f),
            Known::Declared(cell) => match &cell.get()?.shape {
                Shape::Record { record, .. } => return record.field(name).map(f),
                Shape::Refined { base, .. } => known(base)?,
            },
        };
        k = base;
    }
}

fn rule_frame(names: &[String], metas: &[FieldMeta]) -> Frame {
    let names = std::iter::once("self".to_string())
        .chain(names.iter().cloned())
        .collect();
    Frame {
        names,
        binders: Vec::new(),
        fields: Some(metas.to_vec()),
    }
}

fn fold_list(items: Vec<Expr>) -> Expr {
    if items.iter().all(|e| matches!(e, Expr::Const(_))) {
        let values = items
            .into_iter()
            .filter_map(|e| match e {
                Expr::Const(v) => Some(v),
                _ => None,
            })
            .collect();
        return Expr::Const(Value::list(values));
    }
    Expr::List(items)
}

fn fold_record(fields: Vec<(Key, Expr)>) -> Expr {
    if fields.iter().all(|(_, e)| matches!(e, Expr::Const(_))) {
        let record = fields
            .into_iter()
            .filter_map(|(k, e)| match e {
                Expr::Const(v) => Some((k, v)),
                _ => None,
            })
            .collect();
        return Expr::Const(Value::record(record));
    }
    Expr::Record(fields)
}
