//! `source(file(…), Json) | validate(T)` followed by `oks()`, `errs()`,
//! `map(f)` and `filter(f)`, counted, reported, written to a JSON target or
//! printed, on several threads.
//!
//! Each worker rebuilds the program (`Rebuild::rebuild_with`), finds the
//! pipeline's functions in it (`FnRef`), and runs a chunk's lines through
//! validation and the same stages as one thread, with origins offset by
//! the chunk's first line; it gives back the items' text as the consumer
//! wants it (`Render`). The calling thread takes the chunks in the order
//! of the file (`exec::chunks`), so the output is byte for byte what one
//! thread gives, and the first runtime error in file order stops the run
//! with the same message and origin. With unique keys, the workers leave
//! the keys to the calling thread, which claims them in the order of the
//! file and runs again each record whose key was taken before it (`keys`).
//!
//! Only a function that reads nothing but declarations and constants is
//! found on a worker: a declared function, or a lambda written at the top
//! level of one of the entry's statements so far (in the pipeline, or
//! bound by a `let`), with no enclosing frame. A lambda that reads standard
//! input, a parameter, the environment or a stream bound earlier, or one
//! made inside a function call, keeps the pipeline on one thread.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::chunks::{self, ReadFailure, Worker};
use super::stages::write_of_results;
use super::stages::KeyWork;
use super::stages::{framing, read_once, run_step, validated_chunk, validated_items, Chunk};
use crate::runtime::builtins::Builtin;
use crate::runtime::contract::Contract;
use crate::runtime::eval::io::{JsonInput, TargetSpec};
use crate::runtime::eval::{
    FnRef, Function, Interp, Item, Items, Origin, Result, SentError, Staged, Step,
};
use crate::runtime::exec::stages::items;
use crate::runtime::hir::Expr;
use crate::runtime::json::write_json;
use crate::runtime::print::write_hql;
use crate::runtime::validate::Uniques;
use crate::runtime::value::Value;

mod keys;

/// What the consumer wants of each item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Render {
    /// Nothing: `count()`.
    Count,
    /// Counted as `report()` counts it.
    Report,
    /// Its value as JSON, a line (`hql run --format json`).
    Json,
    /// Its printed form (`hql run`), for a list on one line.
    Hql,
    /// Its value as JSON, a line, for `write`, which takes no results.
    Write,
    /// As `route` sends it: a failure record as JSON, a line, to `errs`;
    /// any other value (an `ok`'s value) as JSON, a line, to `text`.
    Route,
}

/// The items of one chunk, rendered.
#[derive(Debug, Default)]
pub struct Piece {
    /// For `Json` and `Write`, each item's text and a newline; for `Hql`,
    /// the items' texts back to back.
    pub text: String,
    /// For `Hql`, where each item's text ends.
    pub ends: Vec<usize>,
    /// How many items.
    pub n: u64,
    /// For `Route`, the failure records, each as JSON and a newline.
    pub errs: String,
    /// How many of the items are failure records.
    pub failed: u64,
    /// How many of the chunk's records validation found valid, and not.
    pub judged: (u64, u64),
    /// For `Report` and `Route`, the items counted.
    pub tally: crate::runtime::exec::stages::Tally,
}

impl Piece {
    /// Add an item as `render` wants it.
    fn add(&mut self, render: Render, item: Item) -> Result<()> {
        if matches!(render, Render::Report | Render::Route) {
            self.tally.add(&item.value);
        }
        match render {
            Render::Count | Render::Report => {}
            Render::Write if matches!(item.value, Value::Ok(_) | Value::Err(_)) => {
                return Err(write_of_results().from_record(&item.origin));
            }
            Render::Json | Render::Write => {
                write_json(
                    &mut self.text,
                    &crate::runtime::exec::stages::force(item.value)?,
                );
                self.text.push('\n');
            }
            Render::Route => match item.value {
                Value::Err(failure) => {
                    write_json(
                        &mut self.errs,
                        &crate::runtime::exec::stages::force((*failure).clone())?,
                    );
                    self.errs.push('\n');
                    self.failed += 1;
                }
                Value::Ok(ok) => {
                    write_json(
                        &mut self.text,
                        &crate::runtime::exec::stages::force(ok.value.clone())?,
                    );
                    self.text.push('\n');
                }
                value => {
                    write_json(&mut self.text, &crate::runtime::exec::stages::force(value)?);
                    self.text.push('\n');
                }
            },
            Render::Hql => {
                write_hql(
                    &mut self.text,
                    &crate::runtime::exec::stages::force(item.value)?,
                );
                self.ends.push(self.text.len());
            }
        }
        self.n += 1;
        Ok(())
    }
}

/// A staged validated JSON Lines file that runs on several threads, and
/// how: the execution planner's answer (`Spread::of`), carried by its
/// plan to whichever consumer runs it (`Spread::run`).
pub struct Spread {
    interp: Rc<Interp>,
    staged: Rc<Staged>,
    path: String,
    parallel: crate::runtime::eval::Parallel,
    funcs: Vec<FnRef>,
}

impl Spread {
    /// The pipeline `value` is, run on several threads; or why it cannot
    /// be (the execution planner's question).
    pub fn of(value: &Value) -> std::result::Result<Spread, &'static str> {
        let not_staged = "the pipeline is not a validated source followed by oks(), errs(), \
                          map and filter";
        let Value::Stream(stream) = value else {
            return Err(not_staged);
        };
        let staged = stream.plan().and_then(|p| p.staged()).ok_or(not_staged)?;
        let staged = Rc::new(staged);
        let interp = staged.interp.upgrade().ok_or(not_staged)?;
        let path = crate::runtime::exec::counting::json_file(&interp, &staged.source)
            .ok_or("the source is not a JSON file read by its field names")?;
        let parallel = chunks::parallel_for(&interp, &path)?;
        let mut funcs = Vec::new();
        for step in &staged.steps {
            if let Some(f) = &step.func {
                funcs.push(fn_ref(&interp, &parallel.lambdas, f).ok_or(
                    "a function of the pipeline reads more than declarations and constants",
                )?);
            }
        }
        Ok(Spread {
            interp,
            staged,
            path,
            parallel,
            funcs,
        })
    }

    /// On how many threads.
    pub fn threads(&self) -> usize {
        self.parallel.threads
    }

    /// Run it: each chunk's items go to `take` in the order of the file,
    /// until it says `false`; an error stops the run after the items
    /// before it are taken.
    pub fn run(self, render: Render, take: &mut dyn FnMut(&Piece) -> Result<bool>) -> Result<()> {
        let start = self.workers(render);
        let interp = &self.interp;
        let settler = self.keyed().then(|| keys::Settler {
            interp: interp.clone(),
            staged: self.staged.clone(),
            render,
            uniques: Rc::default(),
            decoder: RefCell::default(),
        });
        let taken = &mut |made: Made| {
            let (piece, error, _) = match &settler {
                Some(settler) => settler.settle(made)?,
                None => made,
            };
            show(interp, &piece);
            if !take(&piece)? {
                return Ok(false);
            }
            error.map_or(Ok(true), |e| Err(e.into()))
        };
        let (parallel, path) = (&self.parallel, &self.path);
        let uniques = settler.as_ref().map(|s| s.uniques.clone());
        match chunks::spread(interp, parallel, path, chunks::AHEAD, &start, taken)? {
            Some(failed) => self.read_failed(failed, render, uniques, take),
            None => Ok(()),
        }
    }

    /// Has the contract unique keys, which a worker leaves to the calling
    /// thread to settle (`keys`)?
    pub fn keyed(&self) -> bool {
        (self.staged.contract.record()).is_some_and(|r| !r.uniques.is_empty())
    }

    /// How each worker is made on its thread: the program rebuilt, the
    /// steps' functions found in it; then each chunk validated and run
    /// through the steps.
    fn workers(
        &self,
        render: Render,
    ) -> impl Fn() -> std::result::Result<Worker<Made>, &'static str> + Sync {
        let ty = self.staged.contract.name.clone();
        let (steps, at) = (sent_steps(&self.staged.steps), self.staged.at.clone());
        let name = self.staged.source.name.to_string();
        let format = self.staged.source.format;
        let (rebuild, funcs) = (self.parallel.rebuild.clone(), self.funcs.clone());
        let keyed = self.keyed();
        move || {
            let room = Cell::new(0);
            let (interp, contract, mut values) = rebuild.rebuild_with(&ty, &funcs)?;
            let framing = framing(&interp, format).map_err(|_| "the source is not JSON text")?;
            values.reverse();
            let steps: Vec<Step> = (steps.iter())
                .map(|(stage, has_func, at)| Step {
                    stage: *stage,
                    func: has_func.then(|| values.pop()).flatten(),
                    at: at.clone(),
                })
                .collect();
            let (name, at): (Rc<str>, _) = (name.as_str().into(), at.clone());
            Ok(Box::new(move |job: chunks::Job| {
                let first_line = job.first_line;
                let deferred = keyed.then(|| keys::Deferred::new(first_line, room.get()));
                let seen = Rc::new(Seen {
                    keys: deferred.map(RefCell::new),
                    ..Seen::default()
                });
                // With unique keys, the chunk's bytes are kept for the
                // calling thread, and the keys of records valid but for
                // them are logged.
                let (input, kept, keys) = match keyed {
                    true => {
                        let (kept, rest) = keys::KeptChunk::open(job);
                        let input = JsonInput::Lines { first: None, rest };
                        (input, Some(kept), keys::deferred(&seen, &contract))
                    }
                    false => (job.into_lines(), None, KeyWork::claimed()),
                };
                let chunk = Chunk {
                    framing,
                    name: name.clone(),
                    input,
                    first_line,
                };
                let lines = validated_chunk(&interp, &contract, chunk, at.clone(), keys);
                let lines = counted(lines, &seen);
                let (piece, error) = rendered(&interp, lines, &steps, render, &seen);
                let keyed = kept.and_then(|kept| kept.close(&seen, &room));
                Ok((piece, error, keyed))
            }))
        }
    }

    /// A read error ends the input after one failure, as a source has it:
    /// that failure goes through validation and the steps on this thread.
    fn read_failed(
        &self,
        failed: ReadFailure,
        render: Render,
        uniques: Option<Rc<RefCell<Uniques>>>,
        take: &mut dyn FnMut(&Piece) -> Result<bool>,
    ) -> Result<()> {
        let origin = Origin {
            source: self.staged.source.name.clone(),
            line: failed.line,
        };
        let failure =
            crate::runtime::validate::decode_failure(&origin, String::new(), failed.message);
        let item = Item {
            value: failure,
            origin: Some(origin),
        };
        let one = validated_items(
            &self.interp,
            &self.staged.contract,
            Box::new(std::iter::once(Ok(item))),
            self.staged.at.clone(),
            uniques.map_or_else(KeyWork::claimed, KeyWork::Claimed),
        );
        let seen = Rc::new(Seen::default());
        let one = counted(one, &seen);
        let (piece, error) = rendered(&self.interp, one, &self.staged.steps, render, &seen);
        show(&self.interp, &piece);
        take(&piece)?;
        error.map_or(Ok(()), |e| Err(e.into()))
    }
}

/// Show the progress meter the records a piece's items came from.
fn show(interp: &Interp, piece: &Piece) {
    if let Some(meter) = interp.meter() {
        let (ok, err) = piece.judged;
        meter.read_records(ok + err);
        meter.judged(ok, err);
    }
}

/// A chunk's items, the error that stopped them, if one did, and with
/// unique keys, what the calling thread needs to settle them.
type Made = (Piece, Option<SentError>, Option<keys::Keyed>);

/// What a run over a chunk's lines learns of its records as they leave
/// validation.
#[derive(Default)]
struct Seen {
    /// How many validation found valid, and not (for the progress line).
    judged: Cell<(u64, u64)>,
    /// The line of the last.
    line: Cell<u64>,
    /// With unique keys, on a worker: the records whose keys are left to
    /// settle, and where their items lie.
    keys: Option<RefCell<keys::Deferred>>,
}

/// `lines` as they leave validation, seen by `seen`.
fn counted(lines: Items, seen: &Rc<Seen>) -> Items {
    let seen = seen.clone();
    Box::new(lines.inspect(move |item| {
        let (ok, err) = seen.judged.get();
        let failed = matches!(item, Ok(i) if matches!(i.value, Value::Err(_)));
        seen.judged
            .set((ok + u64::from(!failed), err + u64::from(failed)));
        if let Ok(Item {
            origin: Some(origin),
            ..
        }) = item
        {
            seen.line.set(origin.line);
        }
    }))
}

/// The steps as they cross to a worker: each stage, whether it takes a
/// function, and its call.
fn sent_steps(steps: &[Step]) -> Vec<(Builtin, bool, Option<crate::syntax::ast::Span>)> {
    (steps.iter())
        .map(|s| (s.stage, s.func.is_some(), s.at.clone()))
        .collect()
}

/// `lines` through the steps, rendered; a runtime error stops them. Each
/// stage gives at most one item a record, and asks for the next record
/// only once it has given the last one's: an item is the record's seen
/// last, which is how `seen` places the items of records whose keys are
/// left to settle.
fn rendered(
    interp: &Rc<Interp>,
    lines: Items,
    steps: &[Step],
    render: Render,
    seen: &Seen,
) -> (Piece, Option<SentError>) {
    let mut piece = Piece::default();
    let run = || -> Result<()> {
        let mut stream = read_once(lines);
        for step in steps {
            stream = run_step(interp, stream, step)?;
        }
        for item in items(&stream)? {
            let item = item?;
            let before = (piece.n, piece.failed);
            piece.add(render, item)?;
            if let Some(keys) = &seen.keys {
                let gave = match piece.failed > before.1 {
                    true => keys::Gave::Failure,
                    false => keys::Gave::Item,
                };
                keys.borrow_mut().placed(seen.line.get(), before, gave);
            }
        }
        Ok(())
    };
    let error = run().err().map(SentError::from);
    if let Some(keys) = &seen.keys {
        keys.borrow_mut().done((piece.n, piece.failed));
    }
    piece.judged = seen.judged.get();
    (piece, error)
}

/// How a worker finds `f`: a declared function by name, a lambda written
/// in the entry by its place (bound by an earlier `let`, or written in the
/// running statement); `None` when `f` may read more than declarations
/// and constants.
fn fn_ref(
    interp: &Interp,
    lambdas: &[Vec<Rc<crate::runtime::hir::Lambda>>],
    f: &Value,
) -> Option<FnRef> {
    let Value::Func(func) = f else {
        return None;
    };
    match &**func {
        Function::Decl(def) if reads_constants(interp, &def.body) => {
            Some(FnRef::Declared(def.name.clone()))
        }
        Function::Lambda { lambda, env: None } if reads_constants(interp, &lambda.body) => {
            lambdas.iter().enumerate().find_map(|(stmt, written)| {
                let n = written.iter().position(|l| Rc::ptr_eq(l, lambda))?;
                Some(FnRef::Written { stmt, n })
            })
        }
        _ => None,
    }
}

/// Does `body` read only its parameter, declarations and constants, and
/// write nothing: no standard input, parameter or environment variable,
/// no target written, no global bound to a stream or to a closure — in
/// it, nor in the functions it calls by name?
fn reads_constants(interp: &Interp, body: &Expr) -> bool {
    let mut seen = Vec::new();
    constant_body(interp, body, &mut seen)
}

fn constant_body(interp: &Interp, body: &Expr, seen: &mut Vec<u32>) -> bool {
    let mut globals = Vec::new();
    let mut constant = true;
    body.walk(&mut |e| match e {
        Expr::Builtin {
            builtin:
                Builtin::Stdin | Builtin::Param | Builtin::Env | Builtin::Write | Builtin::Route,
            ..
        } => constant = false,
        Expr::Global(slot, _) => globals.push(*slot),
        _ => {}
    });
    for slot in globals {
        if !constant || seen.contains(&slot) {
            continue;
        }
        seen.push(slot);
        constant = match interp.global_value(slot) {
            Some(Value::Stream(_)) => false,
            Some(Value::Func(f)) => match &*f {
                Function::Decl(def) => constant_body(interp, &def.body, seen),
                Function::Lambda { lambda, env: None } => constant_body(interp, &lambda.body, seen),
                Function::Lambda { .. } => false,
                Function::Builtin(b) => !matches!(
                    b,
                    Builtin::Stdin
                        | Builtin::Param
                        | Builtin::Env
                        | Builtin::Write
                        | Builtin::Route
                ),
            },
            _ => true,
        };
    }
    constant
}

/// `count()` of a staged pipeline on several threads.
pub(super) fn count(spread: Spread) -> Result<Value> {
    let mut n = 0;
    spread.run(Render::Count, &mut |piece| {
        n += piece.n;
        Ok(true)
    })?;
    Ok(Value::Int(n as i64))
}

/// `report()` of a staged pipeline on several threads: each chunk's
/// counts, merged (a report does not depend on the order of its items).
pub(super) fn report(spread: Spread) -> Result<Value> {
    let mut tally = crate::runtime::exec::stages::Tally::default();
    spread.run(Render::Report, &mut |piece| {
        tally.merge(&piece.tally);
        Ok(true)
    })?;
    Ok(tally.into_value())
}

/// `write` of a staged pipeline to a JSON target on several threads;
/// `None` for a target of another format.
pub(super) fn write(
    interp: &Rc<Interp>,
    spread: Spread,
    spec: &TargetSpec,
    shape: Option<&Rc<Contract>>,
) -> Option<Result<Value>> {
    if !super::route::is_json(interp, spec) {
        return None;
    }
    let mut target = match crate::runtime::exec::stages::Target::open(interp, spec.clone(), shape) {
        Ok(target) => Some(target),
        Err(e) => return Some(Err(e)),
    };
    let ran = spread.run(Render::Write, &mut |piece| {
        let Some(target) = target.as_mut() else {
            return Ok(false);
        };
        if piece.n == 0 || target.put_lines(piece.text.as_bytes(), piece.n)? {
            return Ok(true);
        }
        for record in piece.text.lines() {
            target.put_text(record.as_bytes())?;
        }
        Ok(true)
    });
    Some(ran.and_then(|()| match target.take() {
        Some(target) => Ok(Value::Int(target.close(interp)?)),
        None => Ok(Value::Int(0)),
    }))
}
