//! The execution planner: how the consumer at the end of a pipeline runs
//! it, decided in one place. `plan(interp, consumer, input, target)` asks
//! each faster path in turn whether it takes the pipeline — the counting
//! path (`runtime::counting::route`), the copier (`route::copies`), the
//! threads of the staged spread (`staged::Spread::of`) — and keeps, for
//! each it passed over, the reason it gave. `count()`, `report()`,
//! `route` and `write` run the path the plan names; `hql run --explain`
//! and the REPL's `:explain` print it (`ExecPlan::describe`).
//!
//! Every faster path gives what the ordinary path gives, byte for byte:
//! the differential tests (`tests/threads.rs`, `tests/targets.rs`,
//! `session::scan_agreement`) hold each to it.

use std::rc::Rc;

use super::stages::plan_of;
use crate::runtime::builtins::Builtin;
use crate::runtime::eval::io::TargetSpec;
use crate::runtime::eval::Interp;
use crate::runtime::eval::Plan;
use crate::runtime::exec::counting;
use crate::runtime::hir::{Expr, Stmt};
use crate::runtime::value::Value;
use crate::syntax::ast::Span;

/// What ends a pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consumer {
    Count,
    Report,
    Route,
    Write,
    /// An expression statement's stream, printed.
    Print,
}

impl Consumer {
    /// The consumer a builtin is, if it is one the planner plans.
    pub fn of(b: Builtin) -> Option<Consumer> {
        Some(match b {
            Builtin::Count => Consumer::Count,
            Builtin::Report => Consumer::Report,
            Builtin::Route => Consumer::Route,
            Builtin::Write => Consumer::Write,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Consumer::Count => "count()",
            Consumer::Report => "report()",
            Consumer::Route => "route",
            Consumer::Write => "write",
            Consumer::Print => "printing",
        }
    }
}

/// The path a pipeline runs on.
pub enum Path {
    /// Records built and passed from stage to stage, on this thread.
    Ordinary,
    /// A database table target: rows written in the run's transaction.
    Table,
    /// `count()` or `report()` from the line check's verdicts, without
    /// building a record the check vouches for.
    Counting(counting::Route),
    /// Valid lines copied as they are to a JSON target, failures written
    /// from the texts the copier learnt: the copier as planned, run so.
    Copier(Box<super::route::CopyPlan>),
    /// Chunks of the file validated and run through the stages by worker
    /// threads, taken back in the order of the file; with unique keys
    /// settled on this thread (`Spread::keyed`).
    Spread(Box<super::staged::Spread>),
}

/// How a pipeline runs, and why the faster paths before it were passed
/// over.
pub struct ExecPlan {
    pub consumer: Consumer,
    pub path: Path,
    /// Each faster path not taken, with its reason, in the order asked.
    pub passed: Vec<(&'static str, &'static str)>,
    /// Which columns of the source are read, where its format reads only
    /// some (`Codec::columns_read`).
    pub columns: Option<String>,
}

impl ExecPlan {
    /// The plan in a line or two, as `--explain` prints it.
    pub fn describe(&self) -> String {
        let path = match &self.path {
            Path::Ordinary => "ordinary: records built, one thread".to_string(),
            Path::Table => "a table target: rows written in the run's transaction".to_string(),
            Path::Counting(route) => match route {
                counting::Route::Chunks {
                    parallel, keyed, ..
                } => format!(
                    "counting: line check, chunks on {} threads{}",
                    parallel.threads,
                    if *keyed {
                        ", unique keys claimed in file order"
                    } else {
                        ""
                    }
                ),
                counting::Route::OneThread { .. } => "counting: line check, one thread".into(),
                counting::Route::Cells { format, split } => {
                    let format = match *format {
                        "Csv" => "CSV",
                        other => other,
                    };
                    match split {
                        None => format!("counting: {format} cells checked, one thread"),
                        Some(split) => format!(
                            "counting: {format} cells checked, {} parts on {} threads",
                            split.rows.len(),
                            split.parallel.threads
                        ),
                    }
                }
            },
            Path::Copier(plan) => format!(
                "copier: valid lines copied as they are, {}",
                threads_text(plan.threads())
            ),
            Path::Spread(spread) => format!(
                "threads: chunks validated and staged on {} threads{}",
                spread.threads(),
                if spread.keyed() {
                    ", unique keys settled in file order"
                } else {
                    ""
                }
            ),
        };
        let mut text = format!("{}: {path}", self.consumer.name());
        for (name, why) in &self.passed {
            text.push_str(&format!("\n    not {name}: {why}"));
        }
        if let Some(columns) = &self.columns {
            text.push_str(&format!("\n    columns read: {columns}"));
        }
        text
    }
}

fn threads_text(threads: usize) -> String {
    match threads {
        1 => "one thread".into(),
        n => format!("{n} threads"),
    }
}

/// How `consumer` runs the pipeline `input`; `target` is the target
/// `write` writes or `route`'s `ok`.
pub fn plan(
    interp: &Rc<Interp>,
    consumer: Consumer,
    input: &Value,
    target: Option<&TargetSpec>,
) -> ExecPlan {
    let mut passed = Vec::new();
    let path = choose(interp, consumer, input, target, &mut passed);
    let columns = columns_read(interp, input, &path);
    if unsplit(interp, input, &path) {
        passed.push(("chunks", super::chunks::COMPRESSED));
    }
    ExecPlan {
        consumer,
        path,
        passed,
        columns,
    }
}

/// Which columns of `input`'s source `path` reads, where its format reads
/// only some: the counting path over cells reads what the contract needs.
fn columns_read(interp: &Interp, input: &Value, path: &Path) -> Option<String> {
    let (source, contract) = match plan_of(input)? {
        Plan::Source(source) => (source, None),
        Plan::Validated {
            source, contract, ..
        } => (source, Some(contract)),
        Plan::Staged(staged) => (staged.source.clone(), Some(staged.contract.clone())),
    };
    let projected = matches!(path, Path::Counting(counting::Route::Cells { .. }));
    interp
        .codec(source.format)
        .columns_read(contract.as_ref(), projected)
}

fn choose(
    interp: &Rc<Interp>,
    consumer: Consumer,
    input: &Value,
    target: Option<&TargetSpec>,
    passed: &mut Vec<(&'static str, &'static str)>,
) -> Path {
    let measured = measured(input);
    let ordinary = |passed: &mut Vec<_>| {
        passed.push(("faster paths", MEASURED));
        Path::Ordinary
    };
    match consumer {
        Consumer::Count | Consumer::Report => {
            let b = match consumer {
                Consumer::Count => Builtin::Count,
                _ => Builtin::Report,
            };
            match counting::route(interp, b, plan_of(input).as_ref()) {
                Ok(route) => return Path::Counting(route),
                Err(why) => passed.push(("counting", why)),
            }
            if measured {
                return ordinary(passed);
            }
            spread_or_ordinary(input, passed)
        }
        Consumer::Print if measured => ordinary(passed),
        Consumer::Print => spread_or_ordinary(input, passed),
        Consumer::Route | Consumer::Write => {
            let Some(target) = target else {
                return Path::Ordinary;
            };
            if target.table.is_some() {
                return Path::Table;
            }
            if measured {
                return ordinary(passed);
            }
            match super::route::copies(interp, input, target, consumer == Consumer::Write) {
                Ok(plan) => return Path::Copier(Box::new(plan)),
                Err(why) => passed.push(("copier", why)),
            }
            if !super::route::is_json(interp, target) {
                passed.push((
                    "threads",
                    "the target is not JSON with the records' own fields",
                ));
                return Path::Ordinary;
            }
            spread_or_ordinary(input, passed)
        }
    }
}

/// Does `path` read on one thread, where it reads a file in chunks on
/// several, because the file of `input`'s source is compressed?
fn unsplit(interp: &Interp, input: &Value, path: &Path) -> bool {
    let one_thread = match path {
        Path::Counting(counting::Route::OneThread { .. }) => true,
        Path::Copier(plan) => plan.threads() == 1,
        _ => false,
    };
    let source = match plan_of(input) {
        Some(Plan::Validated { source, .. }) => source,
        Some(Plan::Staged(staged)) => staged.source.clone(),
        _ => return false,
    };
    let several = interp.parallel().is_some_and(|p| p.threads > 1);
    let file = counting::json_file(interp, &source);
    one_thread && several && file.is_some_and(|f| interp.host().compression(&f).is_some())
}

/// The threads of the staged spread, when they take `input`; else the
/// ordinary path, with the reason they gave.
fn spread_or_ordinary(input: &Value, passed: &mut Vec<(&'static str, &'static str)>) -> Path {
    match super::staged::Spread::of(input) {
        Ok(spread) => Path::Spread(Box::new(spread)),
        Err(why) => {
            passed.push(("threads", why));
            Path::Ordinary
        }
    }
}

/// The path an expression statement's value is printed on (which needs no
/// interpreter: a stream's plan knows the one that made it).
pub fn print_path(value: &Value) -> Path {
    if measured(value) {
        return Path::Ordinary;
    }
    spread_or_ordinary(value, &mut Vec::new())
}

const MEASURED: &str =
    "the contract has expectations, measured as each record is validated on this thread";

/// Is `input` validated against a contract with expectations? Its
/// measures are counted where `validate` runs, in the order of the
/// records (`runtime::measures`).
fn measured(input: &Value) -> bool {
    let contract = match plan_of(input) {
        Some(Plan::Validated { contract, .. }) => contract,
        Some(Plan::Staged(staged)) => staged.contract.clone(),
        _ => return false,
    };
    contract.record().is_some_and(|r| !r.expects.is_empty())
}

/// The builtins whose call reads a stream (or writes a target): an
/// expression holding one is not evaluated to explain it, since that would
/// run it.
const RUNS: &[Builtin] = &[
    Builtin::Count,
    Builtin::Report,
    Builtin::Route,
    Builtin::Write,
    Builtin::Collect,
    Builtin::Sum,
    Builtin::Min,
    Builtin::Max,
    Builtin::Avg,
    Builtin::First,
    Builtin::All,
    Builtin::Any,
    Builtin::Sort,
    Builtin::SortBy,
    Builtin::Distinct,
    Builtin::CountBy,
    Builtin::GroupBy,
    Builtin::Len,
    Builtin::Join,
];

/// Can `e` be evaluated without reading or writing anything: does it
/// only build streams (sources, `validate` and lazy stages), values and
/// functions? A call of a declared function or lambda might run anything.
pub fn builds_only(e: &Expr) -> bool {
    let mut only = true;
    e.walk(&mut |e| match e {
        Expr::Builtin { builtin, .. } if RUNS.contains(builtin) => only = false,
        Expr::Call { .. } => only = false,
        _ => {}
    });
    only
}

/// What the explanation of a statement says of one pipeline in it: where
/// it is written, and its plan or why it is decided only when it runs.
pub struct Explained {
    /// The consumer's call; `None` for the statement's own stream.
    pub span: Option<Span>,
    pub plan: std::result::Result<ExecPlan, String>,
}

/// The plans of the pipelines `stmt` consumes, as the interpreter would
/// run them now (with the globals it holds), running nothing: each
/// `count()`, `report()`, `route` and `write` in it, and an expression
/// statement's stream, printed.
pub fn explain(interp: &Rc<Interp>, stmt: &Stmt) -> Vec<Explained> {
    let e = match stmt {
        Stmt::Let { value, .. } | Stmt::Expr(value) => value,
        Stmt::Check(c) => &c.cond,
    };
    let mut out = Vec::new();
    e.walk(&mut |e| {
        if let Expr::Builtin {
            builtin,
            args,
            span,
        } = e
        {
            if Consumer::of(*builtin).is_some() {
                out.push(Explained {
                    span: Some(span.clone()),
                    plan: plan_call(interp, *builtin, args),
                });
            }
        }
    });
    if let Stmt::Expr(e) = stmt {
        if builds_only(e) {
            if let Ok(v @ Value::Stream(_)) = interp.eval(e, &None) {
                out.push(Explained {
                    span: None,
                    plan: Ok(plan(interp, Consumer::Print, &v, None)),
                });
            }
        }
    }
    out
}

/// The plan of a call of consumer `b` with `args` (the pipeline first),
/// when its arguments can be evaluated without running anything.
fn plan_call(
    interp: &Rc<Interp>,
    b: Builtin,
    args: &[Expr],
) -> std::result::Result<ExecPlan, String> {
    let name = Consumer::of(b).map_or(b.name(), Consumer::name);
    let later =
        format!("{name}: decided when it runs: its input is computed by running the program");
    let consumer = Consumer::of(b).ok_or_else(|| later.clone())?;
    if !args.iter().all(builds_only) {
        return Err(later);
    }
    let values = args
        .iter()
        .map(|a| interp.eval(a, &None))
        .collect::<crate::runtime::eval::Result<Vec<Value>>>()
        .map_err(|e| format!("{later} ({})", e.message))?;
    let none = Value::Null;
    let target = match consumer {
        Consumer::Write => Some((values.get(1), values.get(2))),
        Consumer::Route => Some((values.get(1), None)),
        _ => None,
    };
    let target = match target {
        Some((Some(t), format)) => Some(
            super::stages::target_spec(interp, t, format.unwrap_or(&none))
                .map_err(|e| format!("{name}: {}", e.message))?,
        ),
        _ => None,
    };
    let input = values.first().unwrap_or(&none);
    Ok(plan(interp, consumer, input, target.as_ref()))
}
