//! Evaluation: `Interp::run_stmt(&hir::Stmt) -> Result<Outcome, RuntimeError>`.
//!
//! Takes a checked program; touches no file, terminal or clock itself — the
//! `Host` it is given opens sources — and runs no stage of a stream and no
//! validation itself: the `Engine` it is given does (`exec::stages::ENGINE`).
//! Streams are lazy: a pipeline is a chain of iterators pulled one record at
//! a time.

pub(crate) mod equality;
pub(crate) mod funcs;
pub mod io;
pub mod meter;
pub(crate) mod ops;
pub mod policy;

use std::cell::{Cell, RefCell};
use std::io::BufRead;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::runtime::builtins::{Builtin, Compression, Format};
use crate::runtime::contract::Contract;
use crate::runtime::hir::{self, Expr, Logic, Program, Stmt};
use crate::runtime::value::{Record, Value};
use crate::syntax::ast::Span;

pub use equality::{
    compare, compare_numbers, equal, hash_value, sort_order, write_key, write_key_text, ValueKey,
};
pub use io::{
    abandon_all, commit_in_order, Codec, CommitError, CommitStep, Formats, Pending, PendingFile,
    Place, RecordWriter, Registered, SourceSpec, TableSink, TargetSpec,
};
pub use ops::to_f64;

/// What the interpreter hands on to the layers above it, as it is handed
/// `Host`: the call of a stream stage (execution) and the check of a
/// `T { … }` (validation). It names neither; `exec::stages::ENGINE` is both.
pub trait Engine: Sync {
    /// Call builtin `b` if it is a stage of streams; `None` for a builtin
    /// over single values, which the interpreter calls itself.
    fn stage(
        &self,
        interp: &Rc<Interp>,
        b: Builtin,
        args: &[Value],
        span: Option<&Span>,
    ) -> Result<Option<Value>>;

    /// `v` with its streams (also inside lists and records) read into
    /// lists: a builtin over single values sees a stream as the list it
    /// yields.
    fn force(&self, v: Value) -> Result<Value>;

    /// `T { … }`: `value` checked against `contract`; a broken rule here is
    /// a program bug, so a runtime error.
    fn construct(
        &self,
        interp: &Rc<Interp>,
        contract: &Rc<Contract>,
        value: Value,
    ) -> Result<Value>;
}

/// What the evaluator may ask of the world outside.
pub trait Host {
    /// Open a file for reading, relative to the current directory.
    fn open_file(&self, path: &str) -> std::io::Result<Box<dyn BufRead>>;
    /// Standard input (asked for at most once per run).
    fn stdin(&self) -> Option<Box<dyn BufRead>>;

    /// Why `stdin` gave nothing, where the host knows more (standard input
    /// held the program, say).
    fn stdin_unavailable(&self) -> RuntimeError {
        RuntimeError::new("hql::stdin", "standard input is not available")
    }
    /// A file read from byte `offset` on, and the file's length: where
    /// both are available, `count()` and `report()` over a validated JSON
    /// Lines file can split the file across threads.
    fn open_file_at(&self, _path: &str, _offset: u64) -> std::io::Result<Box<dyn BufRead>> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    /// The length of the bytes a file's source reads, where they are the
    /// file's own: `None` for a compressed file (whose bytes are read
    /// decompressed, front to back) as for one that is not a regular file.
    fn file_len(&self, _path: &str) -> Option<u64> {
        None
    }

    /// Open a file to be read at any offset (`Input::File`), for a format
    /// that reads whole files (`Codec::reads_files`). A host that opens
    /// files only as streams reads the whole file into memory.
    fn open_seekable(&self, path: &str) -> std::io::Result<io::Seekable> {
        let mut bytes = Vec::new();
        self.open_file(path)?.read_to_end(&mut bytes)?;
        Ok(io::Seekable::Bytes(bytes))
    }

    /// The compression of a file's bytes, told by its first bytes: such a
    /// file is read decompressed, front to back, and cannot be split at
    /// byte offsets.
    fn compression(&self, _path: &str) -> Option<Compression> {
        None
    }

    /// Create a target file: what is written goes to a temporary beside
    /// `path` until it is committed.
    fn create_file(&self, _path: &str) -> std::io::Result<Box<dyn PendingFile>> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "this host writes no files",
        ))
    }

    /// What names a target file, the same for every spelling of the same
    /// file (relative or absolute, `..`, symbolic links): two targets of a
    /// run with one key are one target. An error where the path cannot be
    /// a target (a folder).
    fn target_key(&self, path: &str) -> std::io::Result<String> {
        Ok(path.strip_prefix("./").unwrap_or(path).to_string())
    }

    /// Commit the run's targets, all or none (tooling.md, "Targets").
    fn commit(&self, pending: Vec<Box<dyn Pending>>) -> std::result::Result<(), CommitError> {
        let run = std::process::id().to_string();
        commit_in_order(pending, &run)
    }

    /// The run ended (committed or abandoned): forget what it published.
    fn run_ended(&self) {}

    /// The database file `path` of the source or target `name` (a
    /// `Place::Database`, a `TargetSpec::table`) is about to be opened by
    /// its format: a host that can open databases readies its folder
    /// (finishes the commit a crashed run left there); others refuse.
    fn ready_database(&self, name: &str, _path: &std::path::Path) -> Result<()> {
        Err(no_database(name))
    }

    /// A warning of a target (a table's drift under `on_drift = "warn"`),
    /// one line where the run's warnings go.
    fn warn(&self, _line: &str) {}

    /// The run's start, in nanoseconds since 1970-01-01T00:00:00Z: what
    /// `age(f)` measures to (`--now`/`HQL_NOW` set it, so that a run does
    /// not age).
    fn now(&self) -> i128 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128)
    }

    /// `param("name")`: a value given on the command line (`--set name=value`).
    fn param(&self, _name: &str) -> Option<String> {
        None
    }

    /// `env("VAR")`: a variable of the environment, `None` when it is
    /// not set; a value that is not UTF-8 is an error saying so.
    fn env(&self, _name: &str) -> Result<Option<String>> {
        Ok(None)
    }

    /// `source("id")`: a source configured in `hql.toml`.
    fn configured_source(&self, id: &str) -> Result<SourceSpec> {
        Err(no_configuration("source", id))
    }

    /// `write("id")`: a target configured in `hql.toml`.
    fn configured_target(&self, id: &str) -> Result<TargetSpec> {
        Err(no_configuration("target", id))
    }

    /// Can the configured target `id` be written as a program asks —
    /// under `route` (`routed`), or by `write`? Checked before anything
    /// runs.
    fn check_target(&self, id: &str, _routed: bool) -> Result<()> {
        self.configured_target(id).map(|_| ())
    }

    /// The database a configured target writes, if it is a table (a run
    /// writes at most one database).
    fn target_database(&self, _id: &str) -> Option<String> {
        None
    }

    /// The text of a program file (for `import`).
    fn read_source(&self, path: &str) -> std::io::Result<String> {
        let mut text = String::new();
        self.open_file(path)?.read_to_string(&mut text)?;
        Ok(text)
    }
}

/// A configured source or target asked of a host without a configuration.
pub fn no_configuration(what: &str, id: &str) -> RuntimeError {
    RuntimeError::new(
        "hql::config",
        format!("no {what} `{id}` is configured: no hql.toml was found"),
    )
    .with_help(format!(
        "add `[{what}s.{id}]` with a `file = \"…\"` to an hql.toml in the program's folder or above"
    ))
}

/// A database asked of a host that opens none.
fn no_database(id: &str) -> RuntimeError {
    RuntimeError::new(
        "hql::config",
        format!("`{id}` is a database, which this host cannot open"),
    )
}

#[cfg(test)]
pub use crate::runtime::stream::test_fn;
pub use crate::runtime::stream::{
    push_frame, Env, Frame, Function, Item, Items, Result, RuntimeError, SentError, Slots, Stream,
};
pub use crate::runtime::value::Origin;

impl Stream {
    /// The stream, with what the stages after it can use of it.
    pub fn with_plan(self, plan: Option<Plan>) -> Stream {
        self.with_plan_of(plan)
    }

    pub fn plan(&self) -> Option<&Plan> {
        self.plan_of()
    }
}

/// What a stream is, where the stages after it can use that: a source, a
/// source validated against a contract, or that followed by stages. `count()` and `report()` may
/// split a validated JSON Lines file across threads, and `validate` reads
/// a source together with it.
#[derive(Clone)]
pub enum Plan {
    /// `source(…)`
    Source(Rc<SourceSpec>),
    /// `… | validate(T)`, and with `oks` `… | validate(T) | oks()`; `at`
    /// is `validate`'s call, `interp` the interpreter that runs it.
    Validated {
        source: Rc<SourceSpec>,
        contract: Rc<Contract>,
        oks: bool,
        at: Option<Span>,
        interp: std::rc::Weak<Interp>,
    },
    /// `… | validate(T)` followed by `oks()`, `errs()`, `map(f)` and
    /// `filter(f)` stages: what may be run on several threads.
    Staged(Rc<Staged>),
}

impl Plan {
    /// A validated source, and the stages after it, if this is one.
    pub fn staged(&self) -> Option<Staged> {
        match self {
            Plan::Staged(staged) => Some((**staged).clone()),
            Plan::Validated {
                source,
                contract,
                oks,
                at,
                interp,
            } => Some(Staged {
                interp: interp.clone(),
                source: source.clone(),
                contract: contract.clone(),
                at: at.clone(),
                steps: match oks {
                    true => vec![Step {
                        stage: Builtin::Oks,
                        func: None,
                        at: None,
                    }],
                    false => Vec::new(),
                },
            }),
            Plan::Source(_) => None,
        }
    }
}

/// A source validated and passed through stages that keep no state from
/// one record to the next.
#[derive(Clone)]
pub struct Staged {
    pub interp: std::rc::Weak<Interp>,
    pub source: Rc<SourceSpec>,
    pub contract: Rc<Contract>,
    /// `validate`'s call.
    pub at: Option<Span>,
    pub steps: Vec<Step>,
}

/// A stage after `validate`: `oks`, `errs`, `map` or `filter`, its
/// function, and its call.
#[derive(Clone)]
pub struct Step {
    pub stage: Builtin,
    pub func: Option<Value>,
    pub at: Option<Span>,
}

/// A function of a pipeline as a worker thread finds it in its own copy of
/// the program: a declared function by name, or the `n`th lambda written
/// in the entry's statement `stmt` (counting those that run; lambdas in
/// the order `hir::Expr::walk` meets them).
#[derive(Debug, Clone, PartialEq)]
pub enum FnRef {
    Declared(String),
    Written { stmt: usize, n: usize },
}

/// Set by the interactive REPL's Ctrl-C handler; evaluation stops at the
/// next record read or function call.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The signal that asked to stop, as a `Signal` number (0: Ctrl-C).
static SIGNAL: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// What asked the evaluation to stop, for its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Ctrl-C (SIGINT).
    Int = 0,
    /// SIGTERM, a request to end (`kill`, a service manager, a CI timeout).
    Term = 1,
}

/// Ask the running evaluation to stop (`hql::interrupted`), as Ctrl-C does.
pub fn interrupt() {
    interrupt_by(Signal::Int);
}

/// Ask the running evaluation to stop because of `signal`. Only atomics:
/// a signal handler may call it.
pub fn interrupt_by(signal: Signal) {
    SIGNAL.store(signal as u8, Ordering::Relaxed);
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// Is an interrupt pending?
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Forget an earlier interrupt (before each REPL entry).
pub fn clear_interrupt() {
    INTERRUPTED.store(false, Ordering::Relaxed);
}

/// An error if an interrupt is pending.
pub fn check_interrupt() -> Result<()> {
    if INTERRUPTED.load(Ordering::Relaxed) {
        let by = if SIGNAL.load(Ordering::Relaxed) == Signal::Term as u8 {
            "SIGTERM"
        } else {
            "Ctrl-C (SIGINT)"
        };
        return Err(
            RuntimeError::new("hql::interrupted", "interrupted").with_help(format!(
                "{by} stopped the evaluation; what ran before it is kept"
            )),
        );
    }
    Ok(())
}

/// What running a statement produced.
pub enum Outcome {
    /// Nothing to print (`let`, a declaration, a check that held).
    Quiet,
    /// An expression statement's value (streams still lazy: print forces them).
    Value(Value),
    /// A check whose condition was false or absent.
    CheckFailed {
        label: String,
        span: Span,
        operands: Option<(Value, Value)>,
    },
}

/// The interpreter: global slots and the host.
pub struct Interp {
    globals: RefCell<Vec<Option<Value>>>,
    pub(crate) host: Rc<dyn Host>,
    stdin_taken: Cell<bool>,
    /// How deep declared functions are nested in calls right now.
    depth: Cell<usize>,
    /// How to run a pipeline on other threads, when it may.
    parallel: RefCell<Option<Parallel>>,
    /// The formats the run knows, each with its codec.
    formats: Formats,
    /// The layers above the interpreter: stream stages and validation.
    engine: &'static dyn Engine,
    /// The files this run writes, each kept open until the run ends, so
    /// that every `write` and `route` to one target adds to one output.
    held: RefCell<Vec<Held>>,
    /// The run's database transaction, committed when it ends.
    pending: RefCell<Vec<Box<dyn Pending>>>,
    /// What the run has read so far, once a progress line asks (`watch`):
    /// nothing is counted for a run no one watches.
    meter: std::cell::OnceCell<std::sync::Arc<meter::Meter>>,
    /// The expectations found not to hold while the statement runs
    /// (language.md §4.11), for `report()`, and for the statement's end.
    unmet: RefCell<Vec<Unmet>>,
    /// The `expect warn`s that have warned in this run: each warns once.
    warned: RefCell<rustc_hash::FxHashSet<Rc<str>>>,
    /// The sources looked at for a sniffing hint: each once a run,
    /// however often its stream is made (`first_look`).
    looked_at: RefCell<rustc_hash::FxHashSet<Rc<str>>>,
    /// Sources are named by a command's flags (`name_sources_by_flags`).
    flags: Cell<bool>,
    /// Failed expectations to tell on stderr, one line each, as the
    /// session drains them (`take_notes`).
    notes: RefCell<Vec<Unmet>>,
    /// `hql vet`: expectations are reported, not a stop — budgets do not
    /// stop reading, and what failed waits in `judged` for `take_judged`.
    reporting: std::cell::Cell<bool>,
    judged: RefCell<Vec<Unmet>>,
    /// The run's start, once asked (`Host::now`).
    now: std::cell::OnceCell<i128>,
}

/// An expectation that did not hold when a stream ended: its identity,
/// whether it only warns, and what its diagnostic says.
#[derive(Debug, Clone)]
pub struct Unmet {
    pub id: Rc<str>,
    pub warn: bool,
    pub message: String,
}

impl Unmet {
    /// Its kind in a report's `by_rule` (language.md §4.7).
    pub fn kind(&self) -> &'static str {
        crate::runtime::contract::expect_kind(self.warn)
    }
}

/// A target file the run writes: its key (`Host::target_key`), the path as
/// the program gave it, its format and writer, and the temporary.
pub struct Held {
    pub key: String,
    pub path: String,
    pub format: Format,
    pub writer: Box<dyn RecordWriter>,
    pub file: Box<dyn PendingFile>,
}

/// How to run a pipeline on other threads: how many, and how each rebuilds
/// the session's declarations and `let`s so far.
#[derive(Clone)]
pub struct Parallel {
    pub threads: usize,
    pub rebuild: std::sync::Arc<dyn Rebuild>,
    /// The lambdas written in each of the entry's statements that run, in
    /// the order `hir::Expr::walk` meets them (`FnRef::Written`).
    pub lambdas: Rc<[Vec<Rc<hir::Lambda>>]>,
}

/// The program so far, rebuilt on a worker thread. The session, a higher
/// floor, implements it (checking and running the declarations there); the
/// counting path, `route` and the stages after `validate` call it on each
/// worker thread.
pub trait Rebuild: Send + Sync {
    /// A fresh interpreter, with its own host, that has run the
    /// declarations and `let`s, and the contract named `ty` in it; or why
    /// not.
    fn rebuild(&self, ty: &str) -> std::result::Result<(Rc<Interp>, Rc<Contract>), &'static str>;

    /// As `rebuild`, and the functions `funcs` name, as values of the
    /// fresh interpreter.
    fn rebuild_with(&self, ty: &str, funcs: &[FnRef])
        -> std::result::Result<Rebuilt, &'static str>;
}

/// A worker's interpreter, the contract, and the functions asked for.
pub type Rebuilt = (Rc<Interp>, Rc<Contract>, Vec<Value>);

/// Calls of declared functions may nest this deep; deeper is a runtime
/// error, never a stack overflow.
const MAX_CALL_DEPTH: usize = 800;

impl Interp {
    pub fn new(host: Rc<dyn Host>, formats: Formats, engine: &'static dyn Engine) -> Rc<Interp> {
        Rc::new(Interp {
            globals: RefCell::new(Vec::new()),
            host,
            stdin_taken: Cell::new(false),
            depth: Cell::new(0),
            parallel: RefCell::new(None),
            formats,
            engine,
            held: RefCell::new(Vec::new()),
            pending: RefCell::new(Vec::new()),
            meter: Default::default(),
            unmet: RefCell::new(Vec::new()),
            warned: RefCell::default(),
            looked_at: RefCell::default(),
            flags: Cell::new(false),
            notes: RefCell::default(),
            reporting: Default::default(),
            judged: RefCell::default(),
            now: Default::default(),
        })
    }

    /// The run's start (`Host::now`), the same for every `age` of a run.
    pub fn now(&self) -> i128 {
        *self.now.get_or_init(|| self.host.now())
    }

    /// An expectation did not hold: an `expect warn` warns (once a run),
    /// and every one is kept for `report()` and the statement's end.
    pub fn unmet(&self, unmet: Unmet) {
        if unmet.warn && self.warned.borrow_mut().insert(unmet.id.clone()) {
            self.notes.borrow_mut().push(unmet.clone());
        }
        self.unmet.borrow_mut().push(unmet);
    }

    /// How many expectations have not held so far in the statement: a
    /// consumer notes it before reading, for `unmet_since`.
    pub fn unmet_count(&self) -> usize {
        self.unmet.borrow().len()
    }

    /// The expectations that did not hold since `unmet_count` was `mark`.
    pub fn unmet_since(&self, mark: usize) -> Vec<Unmet> {
        self.unmet.borrow().get(mark..).unwrap_or_default().to_vec()
    }

    /// The statement ended: an error expectation that did not hold in it
    /// stops the run (`hql::expectation`), after its value was printed.
    pub fn judge_statement(&self) -> Result<()> {
        let unmet = std::mem::take(&mut *self.unmet.borrow_mut());
        if self.reporting.get() {
            self.judged.borrow_mut().extend(unmet);
            return Ok(());
        }
        let failed: Vec<&Unmet> = unmet.iter().filter(|u| !u.warn).collect();
        let Some(first) = failed.first() else {
            return Ok(());
        };
        let mut e = RuntimeError::new("hql::expectation", first.message.clone());
        // The others in full on lines of their own, since a help line is
        // kept short; the help names them.
        self.notes
            .borrow_mut()
            .extend(failed[1..].iter().map(|u| (*u).clone()));
        e.help = Some(match &failed[1..] {
            [] => "nothing is written: every target of the run is left as it was".into(),
            more => format!(
                "also failed (above): {}; nothing is written: every target of the run is left as it was",
                more.iter().map(|u| &*u.id).collect::<Vec<_>>().join(", ")
            ),
        });
        Err(e)
    }

    /// Report expectations instead of stopping on them (`hql vet`, which
    /// reads and reports each whole file).
    pub fn report_expectations(&self) {
        self.reporting.set(true);
    }

    /// The sources are named by a command's arguments and flags (`hql
    /// vet`, `hql infer`), so a hint's fix is written in flags.
    pub fn name_sources_by_flags(&self) {
        self.flags.set(true);
    }

    /// Is this the first time in the run that source `name` is looked at
    /// for a sniffing hint?
    pub fn first_look(&self, name: &Rc<str>) -> bool {
        self.looked_at.borrow_mut().insert(name.clone())
    }

    /// Are the sources named by a command's flags?
    pub fn sources_by_flags(&self) -> bool {
        self.flags.get()
    }

    /// Does a spent failure budget stop the reading?
    pub fn budgets_stop(&self) -> bool {
        !self.reporting.get()
    }

    /// The expectations that did not hold in the statements judged since
    /// the last call, when they are reported (`report_expectations`).
    pub fn take_judged(&self) -> Vec<Unmet> {
        std::mem::take(&mut *self.judged.borrow_mut())
    }

    /// The statement failed otherwise: what its streams' expectations
    /// found is not judged.
    pub fn forget_unmet(&self) {
        self.unmet.borrow_mut().clear();
    }

    /// The failed expectations to tell since the last call: each `expect
    /// warn` once a run, and the error ones beside the first.
    pub fn take_notes(&self) -> Vec<Unmet> {
        std::mem::take(&mut *self.notes.borrow_mut())
    }

    /// The meter, when the run is watched.
    pub fn meter(&self) -> Option<&std::sync::Arc<meter::Meter>> {
        self.meter.get()
    }

    /// Count what the run reads from now on, for a progress line.
    pub fn watch(&self) -> std::sync::Arc<meter::Meter> {
        self.meter.get_or_init(Default::default).clone()
    }

    pub fn codec(&self, format: Format) -> &'static dyn Codec {
        self.formats.codec(format)
    }

    /// The formats the run knows.
    pub fn formats(&self) -> Formats {
        self.formats
    }

    /// Keep a target file open until the run ends: a later `write` or
    /// `route` to it in this run takes it up again (`take_held`).
    pub fn hold(&self, held: Held) {
        self.held.borrow_mut().push(held);
    }

    /// The target file of `key` this run has written, if any.
    pub fn take_held(&self, key: &str) -> Option<Held> {
        let mut held = self.held.borrow_mut();
        let at = held.iter().position(|h| h.key == key)?;
        Some(held.remove(at))
    }

    /// Keep a database's transaction until the run ends.
    pub fn hold_pending(&self, pending: Box<dyn Pending>) {
        self.pending.borrow_mut().push(pending);
    }

    /// A statement ended: what it wrote becomes what later sources of the
    /// run read from those targets.
    pub fn end_statement(&self) -> Result<()> {
        for held in self.held.borrow_mut().iter_mut() {
            let tail = held.writer.tail();
            held.file.publish(&tail).map_err(|e| {
                RuntimeError::new("hql::io", format!("cannot write {}: {e}", held.path))
            })?;
        }
        Ok(())
    }

    /// The run ended: every target commits, all or none — the database
    /// first, then the files (tooling.md, "Targets").
    pub fn commit_targets(&self) -> Result<()> {
        use std::io::Write;
        let mut pending = std::mem::take(&mut *self.pending.borrow_mut());
        let held = std::mem::take(&mut *self.held.borrow_mut());
        let mut finished = Ok(());
        for Held {
            mut writer,
            mut file,
            path,
            ..
        } in held
        {
            if finished.is_ok() {
                finished = writer
                    .finish(&mut file)
                    .and_then(|()| {
                        file.flush()
                            .map_err(|e| RuntimeError::new("hql::io", e.to_string()))
                    })
                    .map_err(|e| format!("cannot write {path}: {}", e.message));
            }
            pending.push(file);
        }
        let committed = match finished {
            Ok(()) => self.host.commit(pending),
            Err(message) => Err(abandon_all(pending, message)),
        };
        self.host.run_ended();
        committed.map_err(|mut e| {
            let mut seen = std::collections::HashSet::new();
            e.unchanged.retain(|t| seen.insert(t.clone()));
            let unchanged = match e.unchanged.as_slice() {
                [] => String::new(),
                [one] => format!("; {one} left unchanged"),
                many => format!("; left unchanged: {}", many.join(", ")),
            };
            let error = RuntimeError::new(
                "hql::commit",
                format!(
                    "the run's targets were not committed: {}{unchanged}",
                    e.message
                ),
            );
            match e.help {
                Some(help) => error.with_help(help),
                None => error.with_help(
                    "nothing this run wrote replaced what was there: fix the cause and run again",
                ),
            }
        })
    }

    /// The run stopped: no target changes, and no temporary is left.
    pub fn abandon_targets(&self) {
        for held in std::mem::take(&mut *self.held.borrow_mut()) {
            held.file.abandon();
        }
        for pending in std::mem::take(&mut *self.pending.borrow_mut()) {
            pending.abandon();
        }
        self.host.run_ended();
    }

    /// Make room for a program's globals and store its functions.
    pub fn load(&self, program: &Program) {
        let mut globals = self.globals.borrow_mut();
        if globals.len() < program.globals {
            globals.resize(program.globals, None);
        }
        for (slot, def) in &program.functions {
            globals[*slot as usize] = Some(Value::Func(Rc::new(Function::Decl(def.clone()))));
        }
    }

    pub fn set_parallel(&self, parallel: Option<Parallel>) {
        *self.parallel.borrow_mut() = parallel;
    }

    pub fn parallel(&self) -> Option<Parallel> {
        self.parallel.borrow().clone()
    }

    pub fn host(&self) -> &Rc<dyn Host> {
        &self.host
    }

    pub fn set_global(&self, slot: u32, value: Value) {
        if let Some(g) = self.globals.borrow_mut().get_mut(slot as usize) {
            *g = Some(value);
        }
    }

    pub fn global_value(&self, slot: u32) -> Option<Value> {
        self.globals.borrow().get(slot as usize).cloned().flatten()
    }

    pub fn run_stmt(self: &Rc<Self>, stmt: &Stmt) -> Result<Outcome> {
        match stmt {
            Stmt::Let { slot, value } => {
                let v = self.eval(value, &None)?.stored();
                self.globals.borrow_mut()[*slot as usize] = Some(v);
                Ok(Outcome::Quiet)
            }
            Stmt::Expr(e) => Ok(Outcome::Value(self.eval(e, &None)?.stored())),
            Stmt::Check(c) => self.run_check(c),
        }
    }

    fn run_check(self: &Rc<Self>, c: &hir::CheckStmt) -> Result<Outcome> {
        if self
            .truthy(&c.cond, &None)
            .map_err(|e| e.at(&c.cond_span))?
        {
            return Ok(Outcome::Quiet);
        }
        let operands = match &c.cond {
            Expr::Binary(op, a, b, _) if crate::syntax::canonical::is_comparison(*op) => {
                Some((self.eval(a, &None)?.stored(), self.eval(b, &None)?.stored()))
            }
            _ => None,
        };
        Ok(Outcome::CheckFailed {
            label: c.label.clone(),
            span: c.span.clone(),
            operands,
        })
    }

    /// A condition for `if`, `filter`, `check`: absent counts as false.
    pub fn truthy(self: &Rc<Self>, e: &Expr, env: &Env) -> Result<bool> {
        ops::truth(self.eval(e, env)?)
    }

    pub fn eval(self: &Rc<Self>, e: &Expr, env: &Env) -> Result<Value> {
        match e {
            Expr::Const(v) => Ok(v.clone()),
            Expr::Local { depth, slot } => Ok(local(env, *depth, *slot)),
            Expr::Global(slot, span) => self.global(*slot, span),
            Expr::List(items) => {
                let values = items
                    .iter()
                    .map(|i| Ok(self.eval(i, env)?.stored()))
                    .collect::<Result<_>>()?;
                Ok(Value::list(values))
            }
            Expr::Record(fields) => Ok(Value::record(self.eval_fields(fields, env)?)),
            Expr::Field {
                target,
                name,
                soft,
                span,
            } => {
                let t = self.eval(target, env)?;
                ops::read_field(&t, name, *soft).map_err(|e| e.at(span))
            }
            Expr::Index {
                target,
                index,
                soft,
                span,
            } => {
                let t = self.eval(target, env)?;
                let i = self.eval(index, env)?;
                ops::read_index(&t, &i, *soft, matches!(**index, Expr::Const(_)))
                    .map_err(|e| e.at(span))
            }
            Expr::Soft(x) => Ok(ops::soft(self.eval(x, env)?)),
            Expr::Presence(x) => Ok(ops::presence(&self.eval(x, env)?)),
            Expr::Call { func, args, span } => {
                let f = self.eval(func, env)?;
                let Some(args) = self.eval_args(args, env)? else {
                    return Ok(Value::Absent);
                };
                self.call(&f, args).map_err(|e| e.at(span))
            }
            Expr::Builtin {
                builtin,
                args,
                span,
            } => {
                let Some(args) = self.eval_builtin_args(*builtin, args, env)? else {
                    return Ok(Value::Absent);
                };
                self.call_builtin(*builtin, args, Some(span))
                    .map_err(|e| e.at(span))
            }
            Expr::Matches {
                subject,
                regex,
                span,
            } => ops::matches(regex, &self.eval(subject, env)?).map_err(|e| e.at(span)),
            Expr::Not(x, span) => ops::not(self.eval(x, env)?).map_err(|e| e.at(span)),
            Expr::Neg(x, span) => ops::negate(self.eval(x, env)?).map_err(|e| e.at(span)),
            Expr::Logic(op, a, b, span) => self.logic(*op, a, b, env).map_err(|e| e.at(span)),
            Expr::Binary(op, a, b, span) => {
                let a = self.eval(a, env)?;
                let b = self.eval(b, env)?;
                ops::binary(*op, &a, &b).map_err(|e| e.at(span))
            }
            Expr::Lambda(lambda) => Ok(Value::Func(Rc::new(Function::Lambda {
                lambda: lambda.clone(),
                env: env.clone(),
            }))),
            Expr::If(c, a, b, span) => {
                if self.truthy(c, env).map_err(|e| e.at(span))? {
                    self.eval(a, env)
                } else {
                    self.eval(b, env)
                }
            }
            Expr::Type(cell) => Ok(Value::Type(contract(cell))),
            Expr::Construct { cell, fields, span } => {
                let value = Value::record(self.eval_fields(fields, env)?);
                self.engine
                    .construct(self, &contract(cell), value)
                    .map_err(|e| e.at(span))
            }
        }
    }

    fn global(&self, slot: u32, span: &Span) -> Result<Value> {
        match self.globals.borrow().get(slot as usize) {
            Some(Some(v)) => Ok(v.clone()),
            _ => Err(RuntimeError::new(
                "hql::used_before_let",
                "this name is used before its `let` has run",
            )
            .at(span)),
        }
    }

    fn eval_fields(
        self: &Rc<Self>,
        fields: &[(crate::runtime::value::Key, Expr)],
        env: &Env,
    ) -> Result<Record> {
        // Collected rather than inserted one by one, so that a literal of
        // many fields costs its size (`Record`'s `Extend`).
        fields
            .iter()
            .map(|(k, e)| Ok((k.clone(), self.eval(e, env)?.stored())))
            .collect()
    }

    /// Arguments to a call; `None` when one is absent, for a call with an
    /// absent argument is absent without running (§4.4).
    fn eval_args<C: FromIterator<Value>>(
        self: &Rc<Self>,
        args: &[Expr],
        env: &Env,
    ) -> Result<Option<C>> {
        let mut absent = false;
        let values = args
            .iter()
            .map_while(|a| match self.eval(a, env) {
                Ok(Value::Absent) => {
                    absent = true;
                    None
                }
                v => Some(v),
            })
            .collect::<Result<C>>()?;
        Ok((!absent).then_some(values))
    }

    /// A builtin's arguments: `eval_args`, but an absent argument the
    /// builtin runs with is null (`get`'s first).
    fn eval_builtin_args(
        self: &Rc<Self>,
        b: Builtin,
        args: &[Expr],
        env: &Env,
    ) -> Result<Option<Slots>> {
        if !(0..args.len()).any(|i| b.runs_with_absent(i)) {
            return self.eval_args(args, env);
        }
        let mut values = Slots::new();
        for (i, a) in args.iter().enumerate() {
            match self.eval(a, env)? {
                Value::Absent if b.runs_with_absent(i) => values.push(Value::Null),
                Value::Absent => return Ok(None),
                v => values.push(v),
            }
        }
        Ok(Some(values))
    }

    /// Three-valued `and`, `or`, `=>` (Kleene), short-circuiting.
    fn logic(self: &Rc<Self>, op: Logic, a: &Expr, b: &Expr, env: &Env) -> Result<Value> {
        let a = ops::tri(self.eval(a, env)?)?;
        if let Some(d) = ops::decided(op, a) {
            return Ok(Value::Bool(d));
        }
        let b = ops::tri(self.eval(b, env)?)?;
        Ok(ops::logic(op, a, b))
    }

    /// Call a function value with evaluated arguments.
    pub fn call(self: &Rc<Self>, f: &Value, args: Slots) -> Result<Value> {
        let Value::Func(f) = f else {
            return Err(RuntimeError::new(
                "hql::not_callable",
                format!("{} is not a function", f.kind_article()),
            ));
        };
        match &**f {
            Function::Builtin(b) => self.call_builtin(*b, args, None),
            Function::Decl(def) => {
                check_arg_count(&def.name, def.params, args.len())?;
                if let Some(v) = def.native.and_then(|n| n.call(&args)) {
                    return Ok(v);
                }
                check_interrupt()?;
                // A call from deep inside a body can fill the stack before
                // the count does.
                let depth = self.depth.get();
                if depth >= MAX_CALL_DEPTH || crate::syntax::limits::stack_nearly_full() {
                    return Err(RuntimeError::new(
                        "hql::recursion",
                        format!("`{}` calls itself more than {depth} deep", def.name),
                    )
                    .with_help("make sure the recursion reaches its base case"));
                }
                self.depth.set(self.depth.get() + 1);
                let result = self.eval(&def.body, &push_frame(&None, args));
                self.depth.set(self.depth.get() - 1);
                result
            }
            Function::Lambda { lambda, env } => {
                check_arg_count("lambda", 1, args.len())?;
                let env = push_frame(env, args);
                if lambda.predicate {
                    return Ok(Value::Bool(self.truthy(&lambda.body, &env)?));
                }
                Ok(self.eval(&lambda.body, &env)?.stored())
            }
        }
    }

    /// Call a builtin; a stream stage's errors met later, as its items are
    /// read, point at `span`, its call.
    pub(crate) fn call_builtin(
        self: &Rc<Self>,
        b: Builtin,
        args: Slots,
        span: Option<&Span>,
    ) -> Result<Value> {
        let (min, max) = b.arity();
        let max = max + b.named_params().len() + usize::from(b.takes_format_options());
        if args.len() < min || args.len() > max {
            let expected = if min == max {
                format!("{min}")
            } else {
                format!("{min} to {max}")
            };
            return Err(RuntimeError::new(
                "hql::arity",
                format!(
                    "`{}` takes {expected} arguments, got {}",
                    b.name(),
                    args.len()
                ),
            ));
        }
        match self.engine.stage(self, b, &args, span)? {
            Some(v) => Ok(v),
            // Builtins over single values see a stream as the list it yields.
            None => {
                let args = args.into_iter().map(|a| self.engine.force(a));
                funcs::call(b, &args.collect::<Result<Vec<_>>>()?)
            }
        }
    }

    pub(crate) fn take_stdin(&self) -> Result<Box<dyn BufRead>> {
        if self.stdin_taken.replace(true) {
            return Err(RuntimeError::new(
                "hql::stdin_twice",
                "standard input can be read only once",
            )
            .with_help("bind the records with `let` and `collect()` them to read them twice"));
        }
        self.host
            .stdin()
            .ok_or_else(|| self.host.stdin_unavailable())
    }
}

fn contract(cell: &hir::TypeCell) -> Rc<Contract> {
    // The checker fills every cell before the program can run; a missing one
    // is a checker bug, reported as a type without rules rather than a panic.
    cell.get().cloned().unwrap_or_else(|| {
        Rc::new(Contract::alias(
            "?",
            crate::runtime::contract::TypeSpec::Any,
        ))
    })
}

fn local(env: &Env, depth: u32, slot: u32) -> Value {
    let mut frame = env.as_ref();
    for _ in 0..depth {
        frame = frame.and_then(|f| f.parent.as_ref());
    }
    frame
        .and_then(|f| f.slots.get(slot as usize))
        .cloned()
        .unwrap_or(Value::Null)
}

fn check_arg_count(name: &str, params: usize, given: usize) -> Result<()> {
    if params == given {
        return Ok(());
    }
    Err(RuntimeError::new(
        "hql::arity",
        format!("`{name}` takes {params} arguments, got {given}"),
    ))
}
