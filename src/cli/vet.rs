//! `hql vet CONTRACTS DATA… [--type T]`: the one-line job without a
//! program (tooling.md, "Commands").
//!
//! Input: a contracts file, data files (or configured source ids, or `-`)
//! and options. Output: one line per data file, `PATH: {report}`, with up
//! to `--errors N` failure records under it (or one JSON object a line
//! with `--format json`), every failure record in `--dead-letters PATH`,
//! and the exit status: 1 when any record fails.
//!
//! Each file is read through the same session and pipeline a program
//! would use — `source(…) | validate(T) | report()` when only the report
//! is wanted, so the counting path and its threads serve `vet` as they
//! serve `hql run` — and once, in one pass, when failure records are
//! wanted too.

use std::rc::Rc;

use crate::cli::args::FormatFlags;
use crate::cli::engine::Engine;
use crate::formats::FORMATS;
use crate::runtime::contract::expect_kind;
use crate::runtime::eval::{Host, Interp, RuntimeError, TargetSpec};
use crate::runtime::exec::stages::items;
use crate::runtime::exec::stages::Tally;
use crate::runtime::exec::stages::Target;
use crate::runtime::json::write_json;
use crate::runtime::print::to_hql;
use crate::runtime::value::Value;
use crate::session::{Session, Sinks, EXIT_FAILED, EXIT_OK, EXIT_STATIC};

/// What `hql vet` was asked to do.
pub struct VetJob {
    pub contracts: String,
    pub data: Vec<String>,
    pub ty: Option<String>,
    /// Failure records to print under each file's report.
    pub errors: usize,
    pub dead_letters: Option<String>,
    pub json: bool,
    /// `--engine duckdb`: each file checked by the contract compiled to SQL,
    /// run in DuckDB, instead of by `hql` itself; `--engine postgres`: each
    /// configured PostgreSQL table, on its server.
    pub engine: Option<Engine>,
    /// The data's format options.
    pub options: crate::cli::args::FormatFlags,
}

/// One data file's outcome.
struct Vetted {
    report: Value,
    errors: Vec<Value>,
    /// What each failed error expectation says, for stderr.
    unmet: Vec<String>,
}

/// A file's counts: `report()`'s value, or the tally of a pass that also
/// kept failure records.
enum Counted {
    Report(Value),
    Tally(Tally),
}

/// Run the job; the exit status.
pub fn vet(job: &VetJob, mut session: Session, sinks: &mut Sinks) -> i32 {
    let text = match session_host(&session).read_source(&job.contracts) {
        Ok(text) => text,
        Err(e) => return usage(sinks, &format!("cannot read {}: {e}", job.contracts)),
    };
    let ty = match choose_type(&text, job.ty.as_deref()) {
        Ok(ty) => ty,
        Err(message) => return usage(sinks, &message),
    };
    if let Some(engine) = job.engine {
        return vet_in_engine(job, engine, &ty, session, sinks);
    }
    // Usage errors come before any file is read.
    let sources: Result<Vec<String>, String> = job
        .data
        .iter()
        .map(|d| source_expr(&session, d, &job.options))
        .collect();
    let sources = match sources {
        Ok(s) => s,
        Err(message) => return usage(sinks, &message),
    };
    // A file's expectations are judged and reported with it; a budget does
    // not stop the reading (language.md §4.11).
    session.interp().report_expectations();
    session.interp().name_sources_by_flags();
    let import = format!("import {}", quoted(&job.contracts));
    let status = session.submit_declarations("<vet>", &import, sinks);
    if status != EXIT_OK {
        return status;
    }
    if session.contract(&ty).is_none_or(|c| c.record().is_none()) {
        let declared = record_types(&text).join(", ");
        return usage(
            sinks,
            &format!(
                "`{ty}` is not a record type of {} (it declares {declared})",
                job.contracts
            ),
        );
    }
    let mut dead = match job
        .dead_letters
        .as_deref()
        .map(|p| DeadLetters::open(&session, p))
    {
        Some(Ok(d)) => Some(d),
        Some(Err(e)) => return usage(sinks, &e),
        None => None,
    };
    let mut status = EXIT_OK;
    for (data, source) in job.data.iter().zip(&sources) {
        match vet_one(&mut session, job, source, &ty, dead.as_mut(), sinks) {
            Ok(vetted) => {
                let failed = failed(&vetted.report);
                print_file(job, data, &vetted, sinks);
                for message in &vetted.unmet {
                    let _ = writeln!(sinks.err, "error: {data}: {message}");
                }
                if failed {
                    status = EXIT_FAILED;
                }
            }
            // Dropping the dead letters abandons them.
            Err(run_status) => return run_status,
        }
    }
    if let Some(d) = dead {
        if let Err(e) = d.commit() {
            let _ = writeln!(sinks.err, "hql vet: {e}");
            return EXIT_FAILED;
        }
    }
    status
}

fn session_host(session: &Session) -> Rc<dyn Host> {
    session.interp().host().clone()
}

/// `--engine E`: each file's (or configured table's) report from the
/// contract compiled to SQL and run in the engine (`crate::cli::engine`).
fn vet_in_engine(
    job: &VetJob,
    engine: Engine,
    ty: &str,
    mut session: Session,
    sinks: &mut Sinks,
) -> i32 {
    let name = engine.name();
    if job.errors > 0 || job.dead_letters.is_some() {
        return usage(
            sinks,
            &format!(
                "--engine {name} gives reports only: --errors and --dead-letters need hql itself"
            ),
        );
    }
    if let Some(flag) = job.options.first_given() {
        return usage(
            sinks,
            &format!(
                "--engine {name} reads each {} as it is: {flag} is for hql itself",
                match engine {
                    Engine::DuckDb => "JSON Lines file",
                    Engine::Postgres => "table",
                }
            ),
        );
    }
    let files = engine == Engine::DuckDb;
    if let Some(d) = job
        .data
        .iter()
        .find(|d| files && !crate::cli::engine::reads(d))
    {
        return usage(
            sinks,
            &format!(
                "--engine duckdb reads JSON Lines files (.jsonl, .ndjson) and Parquet files, not {d}"
            ),
        );
    }
    let declared = match crate::cli::contracts::load(&mut session, &job.contracts, sinks) {
        Ok(d) => d,
        Err(status) => return status,
    };
    let contract = match declared.get(ty) {
        Ok(c) => c.clone(),
        Err(message) => return usage(sinks, &message),
    };
    let mut status = EXIT_OK;
    for data in &job.data {
        let report = match engine {
            Engine::DuckDb => crate::cli::engine::duckdb_report(&contract, data, session.interp()),
            Engine::Postgres => {
                crate::cli::engine::postgres_report(&contract, data, session.interp())
            }
        };
        let report = match report {
            Ok(report) => report,
            Err(message) => {
                let _ = writeln!(sinks.err, "hql vet: {message}");
                return EXIT_FAILED;
            }
        };
        if failed(&report) {
            status = EXIT_FAILED;
        }
        let vetted = Vetted {
            report,
            errors: Vec::new(),
            unmet: Vec::new(),
        };
        print_file(job, data, &vetted, sinks);
    }
    status
}

fn usage(sinks: &mut Sinks, message: &str) -> i32 {
    let _ = writeln!(sinks.err, "hql vet: {message}");
    EXIT_STATIC
}

/// The type to validate against: the one named, or the only record type
/// the contracts file itself declares.
fn choose_type(text: &str, named: Option<&str>) -> Result<String, String> {
    if let Some(t) = named {
        return Ok(t.to_string());
    }
    match record_types(text).as_slice() {
        [one] => Ok(one.to_string()),
        [] => Err("the contracts file declares no record type; name one with `--type T`".into()),
        many => Err(format!(
            "the contracts file declares {} record types ({}); choose one with `--type T`",
            many.len(),
            many.join(", ")
        )),
    }
}

fn record_types(text: &str) -> Vec<String> {
    crate::cli::contracts::type_names(text, true)
}

/// The source expression of a data argument (`hql vet`'s and `hql
/// infer`'s): an existing file (format from its extension), `-` for
/// standard input as JSON, or a configured id; the format options given
/// as flags follow as named arguments, checked as a program's are.
pub fn source_expr(session: &Session, data: &str, flags: &FormatFlags) -> Result<String, String> {
    let options = named_options(flags);
    if data == "-" {
        return Ok(format!("source(stdin(), Json{options})"));
    }
    let exists = std::path::Path::new(data).exists();
    if !exists && session_host(session).configured_source(data).is_ok() {
        if !options.is_empty() {
            return Err(format!(
                "`{data}` is a configured source: set its format options in hql.toml"
            ));
        }
        return Ok(format!("source({})", quoted(data)));
    }
    let format = FORMATS.of_path(data).ok_or_else(|| {
        format!(
            "cannot tell the format of {data} from its extension ({})",
            FORMATS.extensions_listed()
        )
    })?;
    Ok(format!(
        "source(file({}), {}{options})",
        quoted(data),
        format.name()
    ))
}

/// The flags' format options as named arguments: `, delimiter: ";"`.
fn named_options(flags: &FormatFlags) -> String {
    let mut out = String::new();
    let mut text = |name: &str, value: &Option<String>| {
        if let Some(v) = value {
            out.push_str(&format!(", {name}: {}", quoted(v)));
        }
    };
    text("delimiter", &flags.delimiter);
    text("quote", &flags.quote);
    text("encoding", &flags.encoding);
    text("at", &flags.at);
    if !flags.nulls.is_empty() {
        let nulls: Vec<String> = flags.nulls.iter().map(|n| quoted(n)).collect();
        out.push_str(&format!(", nulls: [{}]", nulls.join(", ")));
    }
    if flags.no_header {
        out.push_str(", header: false");
    }
    out
}

/// An HQL string literal of `text`.
fn quoted(text: &str) -> String {
    let mut out = String::new();
    write_json(&mut out, &Value::str(text));
    out
}

fn vet_one(
    session: &mut Session,
    job: &VetJob,
    source: &str,
    ty: &str,
    dead: Option<&mut DeadLetters>,
    sinks: &mut Sinks,
) -> Result<Vetted, i32> {
    let wants_failures = job.errors > 0 || dead.is_some();
    let pipeline = if wants_failures {
        format!("{source} | validate({ty})")
    } else {
        format!("{source} | validate({ty}) | report()")
    };
    let mut vetted = None;
    let mut dead = dead;
    let status = session.submit("<vet>", &pipeline, sinks, &mut |v, _| {
        vetted = Some(if wants_failures {
            one_pass(v, job.errors, dead.as_deref_mut())?
        } else {
            (Counted::Report(v), vec![])
        });
        Ok(())
    });
    let judged = session.interp().take_judged();
    match vetted {
        Some((report, errors)) if status == EXIT_OK => Ok(Vetted {
            report: match report {
                // `report()` lists the expectations itself.
                Counted::Report(report) => report,
                Counted::Tally(mut tally) => {
                    tally.add_expectations(&judged);
                    tally.into_value()
                }
            },
            errors,
            unmet: judged
                .iter()
                .filter(|u| !u.warn)
                .map(|u| u.message.clone())
                .collect(),
        }),
        _ => Err(status.max(EXIT_FAILED)),
    }
}

/// Count every result, keep the first `keep` failure records and send
/// every failure record to the dead letters, reading the stream once.
fn one_pass(
    results: Value,
    keep: usize,
    mut dead: Option<&mut DeadLetters>,
) -> Result<(Counted, Vec<Value>), RuntimeError> {
    let mut tally = Tally::default();
    let mut errors = Vec::new();
    for item in items(&results)? {
        let item = item?;
        tally.add(&item.value);
        if let Value::Err(failure) = &item.value {
            if errors.len() < keep {
                errors.push((**failure).clone());
            }
            if let Some(d) = dead.as_deref_mut() {
                d.write(failure)?;
            }
        }
    }
    Ok((Counted::Tally(tally), errors))
}

/// Did a record or an error expectation fail (language.md §4.11: `vet`
/// exits 1 then)?
fn failed(report: &Value) -> bool {
    failed_expectation(report) || report_count(report, "err") > 0
}

/// Does the report's `by_rule` hold an error expectation (kind `expect`)
/// that failed? The engine's summary row lists them as `report()` does.
fn failed_expectation(report: &Value) -> bool {
    let Value::Record(r) = report else {
        return false;
    };
    let Some(Value::List(by_rule)) = r.get("by_rule") else {
        return false;
    };
    by_rule.iter().any(|entry| match entry {
        Value::Record(e) => {
            matches!(e.get("kind"), Some(Value::Str(k)) if **k == *expect_kind(false))
        }
        _ => false,
    })
}

fn report_count(report: &Value, field: &str) -> i64 {
    match report {
        Value::Record(r) => match r.get(field) {
            Some(Value::Int(n)) => *n,
            _ => 0,
        },
        _ => 0,
    }
}

fn print_file(job: &VetJob, data: &str, vetted: &Vetted, sinks: &mut Sinks) {
    let mut line = String::new();
    if job.json {
        let mut object = crate::runtime::value::Record::default();
        object.insert("file".into(), Value::str(data));
        object.insert("report".into(), vetted.report.clone());
        let shown = vetted.errors.iter().map(|e| shortened(e, true)).collect();
        object.insert("errors".into(), Value::list(shown));
        write_json(&mut line, &Value::record(object));
        line.push('\n');
    } else {
        line.push_str(&format!("{data}: {}\n", to_hql(&vetted.report)));
        for e in &vetted.errors {
            line.push_str(&format!("  {}\n", to_hql(&shortened(e, false))));
        }
    }
    let _ = sinks.out.write_all(line.as_bytes());
}

/// The longest `input` of a failure record `--errors` and the REPL show
/// whole, in bytes of its printed form (tooling.md, "Commands").
pub const INPUT_SHOWN: usize = 4096;

/// A failure record to show a person: an `input` whose printed form (JSON
/// with `json`, else HQL's) is longer than [`INPUT_SHOWN`] is cut there,
/// with how many bytes were left out; a text input is cut as text, any
/// other becomes the text of its cut printed form. Anything else as it is.
pub fn shortened(failure: &Value, json: bool) -> Value {
    let Value::Record(r) = failure else {
        return failure.clone();
    };
    let Some(input) = r.get("input") else {
        return failure.clone();
    };
    let text = match input {
        Value::Str(s) => s.to_string(),
        v if json => crate::runtime::json::to_json(v),
        v => to_hql(v),
    };
    let printed = match input {
        Value::Str(_) if json => crate::runtime::json::to_json(input).len(),
        Value::Str(_) => to_hql(input).len(),
        _ => text.len(),
    };
    if printed <= INPUT_SHOWN {
        return failure.clone();
    }
    let mut cut = INPUT_SHOWN.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let left = text.len() - cut;
    if left == 0 {
        return failure.clone();
    }
    let mut r = (**r).clone();
    r.insert(
        "input".into(),
        Value::str(format!("{}… ({left} more bytes not shown)", &text[..cut])),
    );
    Value::record(r)
}

/// `--dead-letters PATH`: every failure record, JSON Lines, committed when
/// every file has been read.
struct DeadLetters(Target, Rc<Interp>);

impl DeadLetters {
    fn open(session: &Session, path: &str) -> Result<DeadLetters, String> {
        // Dead letters are JSON Lines whatever the path (tooling.md).
        let mut spec = TargetSpec::file(path, crate::formats::json::FORMAT.format);
        spec.whole = false;
        let target = Target::open(session.interp(), spec, None).map_err(|e| e.message)?;
        Ok(DeadLetters(target, session.interp().clone()))
    }

    fn write(&mut self, failure: &Value) -> Result<(), RuntimeError> {
        self.0.put(failure)
    }

    fn commit(self) -> Result<(), String> {
        let DeadLetters(target, interp) = self;
        target.close(&interp).map_err(|e| e.message)?;
        interp
            .commit_targets()
            .map_err(|e| format!("cannot write the dead letters: {}", e.message))
    }
}
