//! A session: `Session::submit(entry text) -> exit status`.
//!
//! The standard library first, then entries checked and run one after
//! another against everything declared before them. `hql run` is a session
//! of one entry; the REPL and notebooks keep one open. Each entry is its own
//! named source, so a diagnostic points into the entry it concerns — or back
//! into the earlier entry that declared a type.

pub mod commit;
pub mod compressed;
pub mod config;
pub mod diagnostic;
pub mod host;
#[cfg(test)]
mod kernel_agreement;
pub mod memory;
pub mod prelude;
#[cfg(test)]
mod resume_agreement;
#[cfg(test)]
mod scan_agreement;

use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use rustc_hash::FxHashMap;

use crate::check::{check_resumable, Checked, Mark, Resumable, Unparsed};
use crate::runtime::builtins::Builtin;
use crate::runtime::contract::Contract;
use crate::runtime::eval::{FnRef, Function, Host, Interp, Outcome, RuntimeError};
use crate::runtime::print::to_hql;
use crate::runtime::value::Value;
use crate::session::diagnostic::{emit, render, Diag};
use crate::syntax::ast::{Expr, ExprKind, Lit, Module, Span, Stmt};
use crate::syntax::parser::parse_recovering;
use crate::syntax::source::SourceMap;

/// Exit statuses (tooling.md, normative).
pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_STATIC: i32 = 2;

/// Where output goes.
pub struct Sinks<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
    pub color: bool,
    /// Diagnostics as JSON Lines instead of reports for people.
    pub json: bool,
}

impl<'a> Sinks<'a> {
    /// Sinks without colour whose diagnostics are reports for people: what
    /// tests, notebooks and quiet checks use.
    pub fn plain(out: &'a mut dyn Write, err: &'a mut dyn Write) -> Sinks<'a> {
        Sinks {
            out,
            err,
            color: false,
            json: false,
        }
    }

    /// Report a bad `hql.toml` (tooling.md, "Diagnostics"); the exit
    /// status, 2.
    pub fn config_error(&mut self, e: &config::ConfigError) -> i32 {
        let mut map = SourceMap::default();
        let d = Diag::config(e, &mut map);
        self.diag(&map, &d);
        EXIT_STATIC
    }

    pub fn diag(&mut self, map: &SourceMap, d: &Diag) {
        let _ = self.out.flush();
        let text = if self.json {
            crate::session::diagnostic::json_line(d, map)
        } else {
            render(d, map, self.color)
        };
        let _ = write!(self.err, "{text}");
    }
}

/// Shows an expression statement's value (`hql run` prints it on a line;
/// the REPL may draw a table).
pub type Display<'a> = dyn FnMut(Value, &mut Sinks) -> Result<(), RuntimeError> + 'a;

pub struct Session {
    host: Rc<dyn Host>,
    map: SourceMap,
    /// The standard library, then every declaration and `let` accepted so
    /// far; shared with the worker threads of the entry being run.
    history: std::sync::Arc<Vec<Stmt>>,
    /// Does a declaration or `let` of the history read standard input?
    history_reads_stdin: bool,
    /// The history as checked, kept so that an entry of `let`s and
    /// expressions is checked against it alone (`Resumable`); `None` after
    /// an entry that did not run to its end, until a check of the whole
    /// program makes it again.
    resumable: Option<Resumable>,
    prelude_end: usize,
    interp: Rc<Interp>,
    /// Global slots by name, as of the last successful check.
    names: FxHashMap<String, u32>,
    /// Declared types, as of the last successful check.
    types: Vec<Rc<Contract>>,
    /// Every `check` run so far, in order (`hql test` reads them).
    pub checks: Vec<CheckResult>,
    /// Threads the pipelines over a validated JSON Lines file may use, and
    /// how each gets a host.
    threads: Option<(usize, HostFactory)>,
    /// Entries are read for their declarations only (`submit_declarations`,
    /// `check_declarations`): a `let` runs only when a declaration needs it
    /// and it is pure.
    declarations_only: bool,
}

/// Makes a host on the thread that calls it (hosts are not `Send`).
pub type HostFactory = std::sync::Arc<dyn Fn() -> Rc<dyn Host> + Send + Sync>;

/// A `check` statement that ran.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    pub label: String,
    /// `file:line` of the statement.
    pub place: String,
    pub passed: bool,
    /// The condition as written.
    pub condition: String,
    /// `left X, right Y` for a failed comparison.
    pub operands: Option<String>,
}

impl Session {
    pub fn new(host: Rc<dyn Host>) -> Session {
        let mut map = SourceMap::default();
        let mut loader = Loader::new(&*host, &mut map);
        for (name, text) in crate::session::prelude::FILES {
            loader.file(name, text, &mut vec![], true);
        }
        // `_`, the last result, is a global like any other.
        loader.file("<session>", "let _ = null", &mut vec![], true);
        let prelude = loader.stmts;
        let prelude_end = map.add("", "");
        let mut session = Session {
            interp: Interp::new(
                host.clone(),
                crate::formats::FORMATS,
                &crate::runtime::exec::stages::ENGINE,
            ),
            host,
            map,
            history: Default::default(),
            history_reads_stdin: false,
            resumable: None,
            prelude_end,
            names: FxHashMap::default(),
            types: Vec::new(),
            checks: Vec::new(),
            threads: None,
            declarations_only: false,
        };
        // The library's `let`s run once, like an entry.
        let (mut out, mut err) = (std::io::sink(), std::io::sink());
        let mut quiet = Sinks::plain(&mut out, &mut err);
        session.run_entry(Entry::checked(0, prelude), &mut quiet, &mut |_, _| Ok(()));
        session
    }

    /// Let the pipelines over a validated JSON Lines file (`count()`,
    /// `report()`, `route`, `write`, stages after `validate`, printing) use
    /// `threads` threads, each with a host from `hosts`.
    pub fn set_threads(&mut self, threads: usize, hosts: HostFactory) {
        self.threads = Some((threads, hosts));
    }

    /// Check and run declarations and `let`s (a worker thread rebuilding a
    /// session); the exit status.
    pub fn declare(&mut self, stmts: Vec<Stmt>, sinks: &mut Sinks) -> i32 {
        self.run_entry(Entry::checked(usize::MAX, stmts), sinks, &mut |_, _| Ok(()))
    }

    pub fn interp(&self) -> &Rc<Interp> {
        &self.interp
    }

    /// The lambdas written in `stmt`, checked against the session without
    /// running it (`written_lambdas`); `None` if it does not check.
    fn lambdas_of(&mut self, stmt: Stmt) -> Option<Vec<Rc<crate::runtime::hir::Lambda>>> {
        let (mut out, mut err) = (std::io::sink(), std::io::sink());
        let mut quiet = Sinks::plain(&mut out, &mut err);
        let (checked, _, pending) = self
            .prepare(&Entry::checked(usize::MAX, vec![stmt]), &mut quiet)
            .ok()?;
        self.discard(pending);
        checked.program.stmts.last().map(written_lambdas)
    }

    /// What worker threads need to run the entry's statements: the user's
    /// declarations so far and the entry, shared by every statement, so
    /// that each statement costs the same whatever the program's length.
    fn parallel_plan(&self, entry: &[Stmt]) -> Option<ParallelPlan> {
        let (threads, hosts) = self.threads.clone()?;
        // Standard input can be read once: a worker rebuilding a `let` or
        // calling a function that reads it would see something else.
        let declared = |s: &&Stmt| matches!(s, Stmt::Type(_) | Stmt::Fn(_));
        let always = self.history_reads_stdin || entry.iter().filter(declared).any(reads_stdin);
        let stdin_let = runs(entry)
            .find(|(_, s)| reads_stdin(s))
            .map(|(run, _)| run);
        Some(ParallelPlan {
            threads,
            hosts,
            history: self.history.clone(),
            user_from: self.user_from(),
            entry: std::sync::Arc::new(entry.to_vec()),
            stdin_from: if always {
                Some(0)
            } else {
                stdin_let.map(|r| r + 1)
            },
        })
    }

    /// Where the user's statements start in the history (the library's
    /// come first).
    fn user_from(&self) -> usize {
        (self.history).partition_point(|s| crate::check::stmt_start(s) < self.prelude_end)
    }

    /// Forget every entry; keep the standard library.
    pub fn reset(&mut self) {
        let threads = self.threads.take();
        *self = Session::new(self.host.clone());
        self.threads = threads;
    }

    pub fn map(&self) -> &SourceMap {
        &self.map
    }

    /// Check an entry against the session without running it.
    pub fn check(&mut self, name: &str, text: &str, sinks: &mut Sinks) -> Result<Checked, i32> {
        let files = self.map.files().len();
        let entry = self.load(name, text);
        let checked = self.prepare(&entry, sinks).map(|(checked, _, pending)| {
            self.discard(pending);
            checked
        });
        // Nothing of the entry is kept, so neither is its text.
        self.map.truncate(files);
        checked
    }

    /// Check an entry and print, for each of its statements, how its
    /// pipelines would run — the execution planner's choice and why the
    /// faster paths were passed over (`hql run --explain`, `:explain`) —
    /// running nothing. A `let` that only builds a stream is evaluated
    /// (streams are lazy: nothing is read), so that a later statement's
    /// plan sees it. Nothing of the entry is kept. The exit status.
    pub fn explain(&mut self, name: &str, text: &str, sinks: &mut Sinks) -> i32 {
        use crate::runtime::exec::planner;
        use crate::runtime::hir::Stmt as HStmt;
        let files = self.map.files().len();
        let entry = self.load(name, text);
        let (checked, runs, pending) = match self.prepare(&entry, sinks) {
            Ok(p) => p,
            Err(status) => return status,
        };
        let first = checked.program.stmts.len() - runs;
        self.interp.load(&checked.program);
        let spans: Vec<Span> = entry.stmts.iter().filter_map(runnable_span).collect();
        let plan = self.parallel_plan(&entry.stmts);
        let lambdas: Rc<[_]> = (checked.program.stmts[first..].iter())
            .map(written_lambdas)
            .collect();
        let mut lines = Vec::new();
        for (i, stmt) in checked.program.stmts[first..].iter().enumerate() {
            let parallel = plan.as_ref().and_then(|p| p.before(i, lambdas.clone()));
            self.interp.set_parallel(parallel);
            let at = |span: Option<&Span>| span.or(spans.get(i)).map(|s| self.place(s));
            let explained = planner::explain(&self.interp, stmt);
            for e in &explained {
                let text = match &e.plan {
                    Ok(plan) => plan.describe(),
                    Err(why) => why.clone(),
                };
                lines.push(format!(
                    "{}: {text}",
                    at(e.span.as_ref()).unwrap_or_default()
                ));
            }
            let stream = match stmt {
                HStmt::Let { slot, value } if planner::builds_only(value) => {
                    let value = self.interp.eval(value, &None).map(|v| v.stored());
                    let stream = matches!(value, Ok(Value::Stream(_)));
                    if let Ok(v) = value {
                        self.interp.set_global(*slot, v);
                    }
                    stream
                }
                _ => false,
            };
            if explained.is_empty() {
                let what = match stream {
                    true => "a stream, planned where it is consumed",
                    false => "no pipeline",
                };
                lines.push(format!("{}: {what}", at(None).unwrap_or_default()));
            }
        }
        self.interp.set_parallel(None);
        self.discard(pending);
        self.map.truncate(files);
        for line in lines {
            let _ = writeln!(sinks.out, "{line}");
        }
        EXIT_OK
    }

    /// `file:line` of a span.
    fn place(&self, span: &Span) -> String {
        match self.map.locate(span) {
            Some((file, at)) => format!("{}:{}", file.name, file.line(at.start)),
            None => String::new(),
        }
    }

    /// Read an entry for its declarations, as the commands that read
    /// declarations only do (`hql diff`, `export`, `contract`, `vet`):
    /// types and functions are declared, and of the `let`s only those a
    /// declaration needs run — and only when they are pure; one that reads
    /// or writes the world outside (`source`, `write`, `route`, `env`,
    /// `param`, `stdin`) is a static error. Nothing else runs. The exit
    /// status.
    pub fn submit_declarations(&mut self, name: &str, text: &str, sinks: &mut Sinks) -> i32 {
        self.declarations_only = true;
        let status = self.submit(name, text, sinks, &mut |_, _| Ok(()));
        self.declarations_only = false;
        status
    }

    /// `check`, for a command that reads declarations only
    /// (`submit_declarations`): a needed `let` that reads or writes the
    /// world outside is a static error too.
    pub fn check_declarations(
        &mut self,
        name: &str,
        text: &str,
        sinks: &mut Sinks,
    ) -> Result<Checked, i32> {
        self.declarations_only = true;
        let checked = self.check(name, text, sinks);
        self.declarations_only = false;
        checked
    }

    /// Read an entry (and its imports) into the source map: where its spans
    /// start, the statements that parsed, and the syntax and import errors.
    fn load(&mut self, name: &str, text: &str) -> Entry {
        let mut loader = Loader::new(&*self.host, &mut self.map);
        let base = loader.map.add("", "");
        loader.file(name, text, &mut vec![normalize(Path::new(name))], false);
        Entry {
            base,
            stmts: loader.stmts,
            diags: loader.diags,
            unparsed: loader.unparsed,
        }
    }

    /// Check an entry against the history: the checked program (history and
    /// entry) and how many of the checked statements are the entry's. The
    /// statements that parsed are checked even when others did not (§7:
    /// every diagnostic); all errors are shown in the order of the text.
    /// An entry of `let`s and expressions is checked against the kept
    /// checker alone, so that each entry costs the same however long the
    /// session (`Resumable`); the rest against the whole history.
    fn prepare(
        &mut self,
        entry: &Entry,
        sinks: &mut Sinks,
    ) -> Result<(Checked, usize, Pending), i32> {
        let runs = entry
            .stmts
            .iter()
            .filter(|s| matches!(s, Stmt::Let { .. } | Stmt::Check { .. } | Stmt::Expr(_)))
            .count();
        let own = |span: &Span| span.start >= entry.base;
        let mut errors = entry.diags.clone();
        let clean = entry.diags.is_empty()
            && !entry.unparsed.any
            && entry.unparsed.names.is_empty()
            && !self.declarations_only;
        let extended = match &mut self.resumable {
            Some(kept) if clean => kept.extend(&entry.stmts),
            _ => None,
        };
        let checked = match extended {
            Some((result, mark)) => result.map(|checked| (checked, Pending::Extended(mark))),
            None => {
                let mut stmts = self.history_without_redefined(&entry.stmts);
                stmts.extend(entry.stmts.iter().cloned());
                let module = Module { stmts };
                check_resumable(
                    &module,
                    self.prelude_end,
                    &entry.unparsed,
                    crate::formats::FORMATS,
                )
                .map(|(checked, kept)| (checked, Pending::Fresh(Box::new(kept))))
            }
        };
        let warnings = match &checked {
            Ok((checked, _)) => {
                let first = checked.program.stmts.len() - runs;
                let unknown = self.unknown_ids(&checked.program.stmts[first..]);
                errors.extend(unknown.iter().map(Diag::from));
                if self.declarations_only {
                    errors.extend(impure_lets(checked, &entry.stmts, first));
                }
                &checked.warnings
            }
            Err(found) => {
                errors.extend(found.errors.iter().map(Diag::from));
                &found.warnings
            }
        };
        errors.sort_by_key(|d| d.span.as_ref().map_or(usize::MAX, |s| s.start));
        let failed = !errors.is_empty();
        let warnings = warnings.iter().filter(|w| own(&w.span())).map(Diag::from);
        emit(sinks, &self.map, warnings.chain(errors));
        match checked {
            Ok((checked, pending)) if !failed => Ok((checked, runs, pending)),
            Ok((_, pending)) => {
                self.discard(pending);
                Err(EXIT_STATIC)
            }
            Err(_) => Err(EXIT_STATIC),
        }
    }

    /// Forget a checked entry that is not kept.
    fn discard(&mut self, pending: Pending) {
        if let (Pending::Extended(mark), Some(kept)) = (pending, &mut self.resumable) {
            kept.undo(&mark);
        }
    }

    /// Keep the checker that checked an entry which ran to its end; after
    /// one that did not, the history (only the `let`s that ran) is checked
    /// whole at the next entry.
    fn keep(&mut self, pending: Pending, ran_to_end: bool) {
        let end = self.map.end();
        match pending {
            _ if !ran_to_end => self.resumable = None,
            Pending::Extended(_) => {
                if let Some(kept) = &mut self.resumable {
                    kept.set_end(end);
                }
            }
            Pending::Fresh(mut kept) => {
                kept.set_end(end);
                self.resumable = Some(*kept);
            }
        }
    }

    /// The history with the entry's redeclared types and functions taken
    /// out: in a session a later declaration replaces an earlier one. A
    /// replaced function leaves a `let` of its name behind, so that every
    /// later global keeps its slot.
    fn history_without_redefined(&self, entry: &[Stmt]) -> Vec<Stmt> {
        let declared = |kind: fn(&Stmt) -> Option<&str>| -> Vec<String> {
            entry.iter().filter_map(kind).map(str::to_string).collect()
        };
        let types = declared(|s| match s {
            Stmt::Type(t) => Some(&t.name.text),
            _ => None,
        });
        let fns = declared(|s| match s {
            Stmt::Fn(f) => Some(&f.name.text),
            _ => None,
        });
        let user = |span: &Span| span.start >= self.prelude_end;
        self.history
            .iter()
            .filter(
                |s| !matches!(s, Stmt::Type(t) if user(&t.span) && types.contains(&t.name.text)),
            )
            .map(|s| match s {
                Stmt::Fn(f) if user(&f.span) && fns.contains(&f.name.text) => Stmt::Let {
                    name: f.name.clone(),
                    value: Expr::new(ExprKind::Lit(Lit::Null), f.span.clone()),
                },
                other => other.clone(),
            })
            .collect()
    }

    /// Check and run one entry; each expression statement's value goes to
    /// `display`. Returns the exit status (tooling.md).
    pub fn submit(
        &mut self,
        name: &str,
        text: &str,
        sinks: &mut Sinks,
        display: &mut Display,
    ) -> i32 {
        let entry = self.load(name, text);
        self.run_entry(entry, sinks, display)
    }

    fn run_entry(&mut self, entry: Entry, sinks: &mut Sinks, display: &mut Display) -> i32 {
        let (checked, runs, pending) = match self.prepare(&entry, sinks) {
            Ok(p) => p,
            Err(status) => return status,
        };
        let entry = entry.stmts;
        let first = checked.program.stmts.len() - runs;
        if entry
            .iter()
            .any(|s| matches!(s, Stmt::Type(_) | Stmt::Fn(_)))
        {
            self.history = std::sync::Arc::new(self.history_without_redefined(&entry));
            let user = self.user_from();
            self.history_reads_stdin = self.history[user..].iter().any(reads_stdin);
        }
        let names = checked.program.names.iter().cloned();
        match pending {
            Pending::Extended(_) => self.names.extend(names),
            Pending::Fresh(_) => self.names = names.collect(),
        }
        self.types = checked.types.clone();
        self.interp.load(&checked.program);
        let mut status = EXIT_OK;
        let mut ran = 0;
        let mut stopped = false;
        // The entry's statements (counting those that run) not run.
        let mut skipped = Vec::new();
        let spans: Vec<Span> = entry.iter().filter_map(runnable_span).collect();
        let plan = self.parallel_plan(&entry);
        let last_result = self.slot("_");
        let lambdas: Rc<[_]> = match plan {
            Some(_) => (checked.program.stmts[first..].iter())
                .map(written_lambdas)
                .collect(),
            None => Rc::new([]),
        };
        // Read for declarations only: the `let`s a declaration needs (pure,
        // or the check above refused them), and nothing else.
        let needed: Option<Vec<u32>> = self.declarations_only.then(|| {
            let needed = crate::check::needed_lets(&checked.program, &checked.types);
            needed.iter().map(|n| n.slot).collect()
        });
        for (i, stmt) in checked.program.stmts[first..].iter().enumerate() {
            if let Some(needed) = &needed {
                match stmt {
                    crate::runtime::hir::Stmt::Let { slot, .. } if needed.contains(slot) => {}
                    crate::runtime::hir::Stmt::Let { slot, .. } => {
                        self.interp.set_global(*slot, Value::Null);
                        skipped.push(i);
                        ran += 1;
                        continue;
                    }
                    _ => {
                        skipped.push(i);
                        ran += 1;
                        continue;
                    }
                }
            }
            let parallel = plan.as_ref().and_then(|p| p.before(ran, lambdas.clone()));
            self.interp.set_parallel(parallel);
            // A signal that came while a statement ran stops the entry
            // even where nothing polled for it (a sort, a list printed).
            let result = self
                .run_one(stmt, last_result, sinks, display)
                .and_then(|ran| crate::runtime::eval::check_interrupt().map(|()| ran));
            match result {
                Ok(true) => {}
                Ok(false) => status = EXIT_FAILED,
                Err(e) => {
                    // Whatever failed after a signal failed because of it.
                    let e = crate::runtime::eval::check_interrupt().err().unwrap_or(e);
                    // An error met while printing a stream has no place of
                    // its own: the statement's.
                    let e = match spans.get(i) {
                        Some(span) => e.at(span),
                        None => e,
                    };
                    sinks.diag(&self.map, &Diag::from(&e));
                    status = EXIT_FAILED;
                    stopped = true;
                    break;
                }
            }
            ran += 1;
        }
        // Targets commit when the entry ends, even after a failed `check`;
        // a runtime error, `unwrap()` or an interrupt leaves them untouched.
        if stopped {
            self.interp.abandon_targets();
        } else if let Err(e) = self.interp.commit_targets() {
            sinks.diag(&self.map, &Diag::from(&e));
            status = EXIT_FAILED;
        }
        // The plan shares the history, which is added to next.
        self.interp.set_parallel(None);
        self.keep(pending, !stopped && skipped.is_empty());
        self.remember(entry, ran, &skipped);
        let _ = sinks.out.flush();
        status
    }

    /// Sources and targets named by id (`source("orders")`, `write("clean")`,
    /// `route(ok: "a", err: "b")`) that no `hql.toml` configures: static
    /// errors, found before anything runs.
    fn unknown_ids(&self, stmts: &[crate::runtime::hir::Stmt]) -> Vec<RuntimeError> {
        use crate::runtime::hir::{Expr as HExpr, Stmt as HStmt};
        let mut errors = Vec::new();
        // The databases the entry writes: a run writes at most one.
        let mut databases: Vec<String> = Vec::new();
        let mut visit = |e: &HExpr| {
            let HExpr::Builtin {
                builtin,
                args,
                span,
            } = e
            else {
                return;
            };
            let ids = match builtin {
                Builtin::Source => args.get(..1),
                Builtin::Write => args.get(1..2),
                Builtin::Route => args.get(1..3),
                _ => None,
            };
            for (n, arg) in ids.unwrap_or_default().iter().enumerate() {
                let HExpr::Const(Value::Str(id)) = arg else {
                    continue;
                };
                let known = match builtin {
                    Builtin::Source => self.host.configured_source(id).err(),
                    // `route`'s first target is its `ok` (its dead letters
                    // can be its `err`).
                    _ => (self.host)
                        .check_target(id, *builtin == Builtin::Route && n == 0)
                        .err(),
                };
                errors.extend(known.map(|e| e.at(span)));
                let database = match builtin {
                    Builtin::Source => None,
                    _ => self.host.target_database(id),
                };
                if let Some(db) = database {
                    if !databases.contains(&db) {
                        if let Some(first) = databases.first() {
                            errors.push(
                                RuntimeError::new(
                                    "hql::config",
                                    format!(
                                        "target `{id}` is in the database {db}, but this run \
                                         already writes {first}, and a run writes at most one"
                                    ),
                                )
                                .with_help(
                                    "a database and files commit together only for one \
                                     database: write the other database in a run of its own",
                                )
                                .at(span),
                            );
                        }
                        databases.push(db);
                    }
                }
            }
        };
        for stmt in stmts {
            match stmt {
                HStmt::Let { value, .. } | HStmt::Expr(value) => value.walk(&mut visit),
                HStmt::Check(c) => c.cond.walk(&mut visit),
            }
        }
        errors
    }

    /// Keep the entry's declarations, and the `let`s that ran; one that was
    /// `skipped` (read for declarations only) is kept as `null`, so that it
    /// keeps its slot and a worker thread rebuilding the session does not
    /// run it either.
    fn remember(&mut self, entry: Vec<Stmt>, ran: usize, skipped: &[usize]) {
        let prelude_end = self.prelude_end;
        let len = self.history.len();
        let history = std::sync::Arc::make_mut(&mut self.history);
        let mut runs = 0;
        for stmt in entry {
            match stmt {
                Stmt::Type(_) | Stmt::Fn(_) => history.push(stmt),
                Stmt::Let { name, value } => {
                    if skipped.contains(&runs) {
                        let value = Expr::new(ExprKind::Lit(Lit::Null), value.span);
                        history.push(Stmt::Let { name, value });
                    } else if runs < ran {
                        history.push(Stmt::Let { name, value });
                    }
                    runs += 1;
                }
                _ => runs += 1,
            }
        }
        // What was kept of the entry may read standard input.
        let user = |s: &&Stmt| crate::check::stmt_start(s) >= prelude_end;
        self.history_reads_stdin |= self.history[len..].iter().filter(user).any(reads_stdin);
    }

    fn run_one(
        &mut self,
        stmt: &crate::runtime::hir::Stmt,
        last_result: Option<u32>,
        sinks: &mut Sinks,
        display: &mut Display,
    ) -> Result<bool, RuntimeError> {
        let outcome = self.interp.run_stmt(stmt);
        let outcome = outcome.and_then(|outcome| {
            if let crate::runtime::hir::Stmt::Check(c) = stmt {
                self.record_check(c, &outcome);
            }
            self.show(outcome, last_result, sinks, display)
        });
        // An expectation that failed in the statement stops the run once
        // its value is shown (language.md §4.11); a statement that failed
        // otherwise says why, and its expectations are forgotten.
        let judged = match outcome {
            Ok(_) => self.interp.judge_statement(),
            Err(_) => {
                self.interp.forget_unmet();
                Ok(())
            }
        };
        self.tell_unmet(sinks);
        let ran = outcome?;
        judged?;
        Ok(ran)
    }

    /// One line on stderr for each failed expectation the interpreter has
    /// to tell (`warning: expectation … failed: …`), or a JSON diagnostic
    /// with `--diagnostics json`.
    fn tell_unmet(&self, sinks: &mut Sinks) {
        for unmet in self.interp.take_notes() {
            let d = Diag::expectation(unmet.message, unmet.warn);
            if sinks.json {
                sinks.diag(&self.map, &d);
            } else {
                let _ = sinks.out.flush();
                let severity = if d.warning { "warning" } else { "error" };
                let _ = writeln!(sinks.err, "{severity}: {}", d.message);
            }
        }
    }

    fn show(
        &mut self,
        outcome: Outcome,
        last_result: Option<u32>,
        sinks: &mut Sinks,
        display: &mut Display,
    ) -> Result<bool, RuntimeError> {
        match outcome {
            Outcome::Quiet => {
                self.interp.end_statement()?;
                Ok(true)
            }
            Outcome::Value(v) => {
                if let Some(slot) = last_result {
                    self.interp.set_global(slot, v.clone());
                }
                display(v, sinks)?;
                self.interp.end_statement()?;
                Ok(true)
            }
            Outcome::CheckFailed {
                label,
                span,
                operands,
            } => {
                let operands =
                    operands.map(|(l, r)| format!("left {}, right {}", to_hql(&l), to_hql(&r)));
                sinks.diag(&self.map, &Diag::check_failed(&label, span, operands));
                Ok(false)
            }
        }
    }

    fn record_check(&mut self, c: &crate::runtime::hir::CheckStmt, outcome: &Outcome) {
        let text = |span: &Span| match self.map.locate(span) {
            Some((file, local)) => file.text.get(local).unwrap_or("").to_string(),
            None => String::new(),
        };
        let place = match self.map.locate(&c.span) {
            Some((file, local)) => format!("{}:{}", file.name, file.line(local.start)),
            None => String::new(),
        };
        let (passed, operands) = match outcome {
            Outcome::CheckFailed { operands, .. } => (
                false,
                operands
                    .as_ref()
                    .map(|(l, r)| format!("left {}, right {}", to_hql(l), to_hql(r))),
            ),
            _ => (true, None),
        };
        self.checks.push(CheckResult {
            label: c.label.clone(),
            place,
            passed,
            condition: text(&c.cond_span),
            operands,
        });
    }

    fn slot(&self, name: &str) -> Option<u32> {
        self.names.get(name).copied()
    }

    /// The user's global names and their current values, in declaration order.
    pub fn vars(&self) -> Vec<(String, Value)> {
        let user = self.declared_by_user();
        let mut vars: Vec<(String, u32)> = (self.names.iter())
            .filter(|(n, _)| *n != "_" && user.contains(n.as_str()))
            .map(|(n, slot)| (n.clone(), *slot))
            .collect();
        vars.sort_by_key(|(_, slot)| *slot);
        vars.into_iter()
            .filter_map(|(n, slot)| Some((n, self.interp.global_value(slot)?)))
            .collect()
    }

    /// The session's declarations, functions and `let`s in the order they
    /// were entered, in canonical form: a program `hql run` accepts
    /// (`:save`). A function declared again is saved as declared last.
    pub fn saved_program(&self) -> String {
        let user = |span: &Span| span.start >= self.prelude_end;
        let user_stmts: Vec<&Stmt> = self
            .history
            .iter()
            .filter(|s| match s {
                Stmt::Type(t) => user(&t.span),
                Stmt::Fn(f) => user(&f.span),
                Stmt::Let { name, .. } => user(&name.span),
                _ => false,
            })
            .collect();
        // A function declared again leaves a `let` of its name in its old
        // place (`history_without_redefined`): not a statement to save.
        let fns: Vec<&str> = (user_stmts.iter())
            .filter_map(|s| match s {
                Stmt::Fn(f) => Some(f.name.text.as_str()),
                _ => None,
            })
            .collect();
        let saved = user_stmts.into_iter().filter(|s| match s {
            Stmt::Let { name, .. } => !fns.contains(&name.text.as_str()),
            _ => true,
        });
        let mut text = String::new();
        let mut last_declared = false;
        for stmt in saved {
            let declared = matches!(stmt, Stmt::Type(_) | Stmt::Fn(_));
            if !text.is_empty() && (declared || last_declared) {
                text.push('\n');
            }
            let stmt_text = crate::syntax::format::stmt_text(stmt);
            text.push_str(stmt_text.trim_end());
            text.push('\n');
            last_declared = declared;
        }
        text
    }

    /// The names the user's `let`s and functions declare.
    fn declared_by_user(&self) -> rustc_hash::FxHashSet<&str> {
        (self.history[self.user_from()..].iter())
            .filter_map(|s| match s {
                Stmt::Let { name, .. } => Some(name.text.as_str()),
                Stmt::Fn(f) => Some(f.name.text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Every declared type, the standard library's included.
    pub fn types(&self) -> &[Rc<Contract>] {
        &self.types
    }

    pub fn contract(&self, name: &str) -> Option<Rc<Contract>> {
        self.types.iter().find(|c| c.name == name).cloned()
    }

    /// The names in scope at top level: globals and types.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.names.keys().cloned().collect();
        names.extend(self.types.iter().map(|c| c.name.clone()));
        names
    }
}

/// What a checked entry leaves to decide once it has run (`Session::keep`):
/// the kept checker was extended by it, or a new one checked the whole
/// program.
enum Pending {
    Extended(Mark),
    Fresh(Box<Resumable>),
}

/// The user's declarations before an entry and the entry's statements,
/// from which each statement's [`Declarations`] are taken.
struct ParallelPlan {
    threads: usize,
    hosts: HostFactory,
    /// The session's history, the user's from `user_from` on.
    history: std::sync::Arc<Vec<Stmt>>,
    user_from: usize,
    entry: std::sync::Arc<Vec<Stmt>>,
    /// From this statement on (counting those that run), a declaration
    /// reads standard input: no worker threads.
    stdin_from: Option<usize>,
}

impl ParallelPlan {
    /// What the entry's statement `at` (counting those that run) hands
    /// the pipelines that run on several threads; `lambdas`, those written
    /// in each of the entry's statements (`written_lambdas`).
    fn before(
        &self,
        at: usize,
        lambdas: Rc<[Vec<Rc<crate::runtime::hir::Lambda>>]>,
    ) -> Option<crate::runtime::eval::Parallel> {
        if self.stdin_from.is_some_and(|from| at >= from) {
            return None;
        }
        Some(crate::runtime::eval::Parallel {
            lambdas,
            threads: self.threads,
            rebuild: std::sync::Arc::new(Declarations {
                history: self.history.clone(),
                user_from: self.user_from,
                entry: self.entry.clone(),
                at,
                hosts: self.hosts.clone(),
            }),
        })
    }
}

/// The entry's `let`s that a declaration needs but that read or write the
/// world outside: static errors where only declarations are read. `first`
/// is where the entry's statements start in the checked program.
fn impure_lets(checked: &Checked, entry: &[Stmt], first: usize) -> Vec<Diag> {
    let needed = crate::check::needed_lets(&checked.program, &checked.types);
    let hir = &checked.program.stmts[first..];
    runs(entry)
        .zip(hir)
        .filter_map(|((_, stmt), lowered)| {
            let (Stmt::Let { name, .. }, crate::runtime::hir::Stmt::Let { slot, .. }) =
                (stmt, lowered)
            else {
                return None;
            };
            let n = needed.iter().find(|n| n.slot == *slot)?;
            let builtin = n.world?;
            Some(Diag::impure_let(
                &name.text,
                &n.by,
                builtin.name(),
                name.span.clone(),
            ))
        })
        .collect()
}

/// The statements an entry runs (`let`, `check`, expressions), numbered.
fn runs(entry: &[Stmt]) -> impl Iterator<Item = (usize, &Stmt)> {
    entry
        .iter()
        .filter(|s| matches!(s, Stmt::Let { .. } | Stmt::Check { .. } | Stmt::Expr(_)))
        .enumerate()
}

/// The declarations and `let`s a worker thread rebuilds before the entry's
/// statement `at` — the declarations so far, the entry's own, and the
/// entry's `let`s before that statement — and where its host comes from:
/// the session's side of pipelines on several threads
/// (`eval::Rebuild`).
struct Declarations {
    history: std::sync::Arc<Vec<Stmt>>,
    user_from: usize,
    entry: std::sync::Arc<Vec<Stmt>>,
    at: usize,
    hosts: HostFactory,
}

impl Declarations {
    fn wanted(&self) -> Vec<Stmt> {
        let mut wanted = self.history[self.user_from..].to_vec();
        let mut runs = 0;
        for stmt in self.entry.iter() {
            match stmt {
                Stmt::Type(_) | Stmt::Fn(_) => wanted.push(stmt.clone()),
                Stmt::Let { .. } if runs < self.at => wanted.push(stmt.clone()),
                _ => {}
            }
            if matches!(stmt, Stmt::Let { .. } | Stmt::Check { .. } | Stmt::Expr(_)) {
                runs += 1;
            }
        }
        wanted
    }
}

impl Declarations {
    /// A session that has run the declarations and `let`s, and the
    /// contract named `ty` in it.
    fn session(&self, ty: &str) -> Result<(Session, Rc<Contract>), &'static str> {
        let mut session = Session::new((self.hosts)());
        let (mut out, mut err) = (std::io::sink(), std::io::sink());
        let mut quiet = Sinks::plain(&mut out, &mut err);
        if session.declare(self.wanted(), &mut quiet) != 0 {
            return Err("the program's declarations did not load on a worker thread");
        }
        let contract = session
            .contract(ty)
            .ok_or("the validated type is missing on a worker thread")?;
        Ok((session, contract))
    }

    /// The entry's statement `n` (counting those that run), up to the
    /// one the worker runs a part of, as an expression statement: checked,
    /// it binds nothing.
    fn statement(&self, n: usize) -> Option<Stmt> {
        if n > self.at {
            return None;
        }
        let (_, stmt) = runs(&self.entry).nth(n)?;
        Some(match stmt {
            Stmt::Let { value, .. } => Stmt::Expr(value.clone()),
            other => other.clone(),
        })
    }
}

impl crate::runtime::eval::Rebuild for Declarations {
    fn rebuild(&self, ty: &str) -> Result<(Rc<Interp>, Rc<Contract>), &'static str> {
        let (session, contract) = self.session(ty)?;
        Ok((session.interp().clone(), contract))
    }

    fn rebuild_with(
        &self,
        ty: &str,
        funcs: &[FnRef],
    ) -> Result<crate::runtime::eval::Rebuilt, &'static str> {
        let (mut session, contract) = self.session(ty)?;
        let mut written = std::collections::BTreeMap::new();
        let mut found = |f: &FnRef| match f {
            FnRef::Declared(name) => session
                .slot(name)
                .and_then(|slot| session.interp.global_value(slot)),
            FnRef::Written { stmt, n } => {
                if !written.contains_key(stmt) {
                    let lambdas = self.statement(*stmt).and_then(|s| session.lambdas_of(s));
                    written.insert(*stmt, lambdas.unwrap_or_default());
                }
                let lambda = written.get(stmt)?.get(*n)?.clone();
                Some(Value::Func(Rc::new(Function::Lambda { lambda, env: None })))
            }
        };
        let values = (funcs.iter().map(&mut found).collect::<Option<Vec<_>>>())
            .ok_or("a function of the pipeline is missing on a worker thread")?;
        Ok((session.interp().clone(), contract, values))
    }
}

/// The lambdas written in a statement, in the order `hir::Expr::walk`
/// meets them: how a worker thread finds the one the running statement
/// hands a stage (`FnRef::Written`).
fn written_lambdas(stmt: &crate::runtime::hir::Stmt) -> Vec<Rc<crate::runtime::hir::Lambda>> {
    use crate::runtime::hir::{Expr as HExpr, Stmt as HStmt};
    let mut found = Vec::new();
    let mut visit = |e: &HExpr| {
        if let HExpr::Lambda(lambda) = e {
            found.push(lambda.clone());
        }
    };
    match stmt {
        HStmt::Let { value, .. } | HStmt::Expr(value) => value.walk(&mut visit),
        HStmt::Check(c) => c.cond.walk(&mut visit),
    }
    found
}

fn reads_stdin(stmt: &Stmt) -> bool {
    let text = match stmt {
        Stmt::Let { value, .. } => crate::syntax::canonical::expr_text(value),
        Stmt::Fn(f) => crate::syntax::canonical::expr_text(&f.body),
        _ => return false,
    };
    text.contains("stdin(")
}

/// An entry read: where its spans start, the statements that parsed, the
/// syntax and import errors, and what the statements that did not parse
/// would have declared.
struct Entry {
    base: usize,
    stmts: Vec<Stmt>,
    diags: Vec<Diag>,
    unparsed: Unparsed,
}

impl Entry {
    /// Statements already parsed (the library, a worker's declarations).
    fn checked(base: usize, stmts: Vec<Stmt>) -> Entry {
        Entry {
            base,
            stmts,
            diags: Vec::new(),
            unparsed: Unparsed::default(),
        }
    }
}

/// Reads an entry and the files it imports into the session's source map.
struct Loader<'a> {
    host: &'a dyn Host,
    map: &'a mut SourceMap,
    stmts: Vec<Stmt>,
    diags: Vec<Diag>,
    unparsed: Unparsed,
    loaded: Vec<PathBuf>,
}

impl<'a> Loader<'a> {
    fn new(host: &'a dyn Host, map: &'a mut SourceMap) -> Loader<'a> {
        Loader {
            host,
            map,
            stmts: Vec::new(),
            diags: Vec::new(),
            unparsed: Unparsed::default(),
            loaded: Vec::new(),
        }
    }

    /// Parse one file; `imported` keeps only its declarations. `stack` holds
    /// the files being imported, outermost first, to catch cycles.
    fn file(&mut self, name: &str, text: &str, stack: &mut Vec<PathBuf>, imported: bool) {
        let base = self.map.add(name, text);
        let parsed = parse_recovering(text, base);
        self.diags.extend(parsed.errors.iter().map(Diag::from));
        self.unparsed.names.extend(parsed.lost_names);
        self.unparsed.any |= parsed.lost_all;
        for stmt in parsed.module.stmts {
            match stmt {
                Stmt::Import { path, span } => self.import(name, &path, span, stack),
                Stmt::Type(_) | Stmt::Fn(_) | Stmt::Let { .. } => self.stmts.push(stmt),
                _ if imported => {}
                other => self.stmts.push(other),
            }
        }
    }

    fn import(&mut self, importer: &str, path: &str, span: Span, stack: &mut Vec<PathBuf>) {
        let dir = Path::new(importer).parent().unwrap_or(Path::new(""));
        let full = normalize(&dir.join(path));
        if stack.contains(&full) {
            return self.diags.push(Diag::import_cycle(path, span));
        }
        if self.loaded.contains(&full) {
            return;
        }
        let shown = full.to_string_lossy().to_string();
        match self.host.read_source(&shown) {
            Ok(text) => {
                self.loaded.push(full.clone());
                stack.push(full);
                self.file(&shown, &text, stack, true);
                stack.pop();
            }
            Err(e) => {
                // What the file declares is unknown: any name may be there.
                self.unparsed.any = true;
                self.diags
                    .push(Diag::import_missing(path, &shown, &e.to_string(), span))
            }
        }
    }
}

/// `a/./b/../c` → `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Where a statement that runs is written (`let`, `check`, an expression).
fn runnable_span(stmt: &Stmt) -> Option<Span> {
    match stmt {
        Stmt::Let { value, .. } => Some(value.span.clone()),
        Stmt::Check { span, .. } => Some(span.clone()),
        Stmt::Expr(e) => Some(e.span.clone()),
        Stmt::Type(_) | Stmt::Fn(_) | Stmt::Import { .. } => None,
    }
}
