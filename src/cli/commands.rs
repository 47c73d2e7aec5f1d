//! The commands, each one call into its module, around what every
//! command shares: the `hql.toml` chosen, standard output and its
//! failures, the progress line, threads and signals.

use std::collections::HashMap;
use std::io::{self, IsTerminal, Read, Write};
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::Arc;

use crate::cli::args::{Cli, Command, Diagnostics, Format, TestFormat};
use crate::cli::output::{note, Failure, Stdout};
use crate::cli::progress::{Line, Progress};
use crate::cli::run::{
    check_source, print_value, OutputFormat, Sinks, Source, EXIT_OK, EXIT_STATIC,
};
use crate::runtime::eval::meter::Meter;
use crate::runtime::eval::Host;
use crate::session::config::{Config, ConfigError};
use crate::session::host::{FsHost, StdinHolds};
use crate::session::Session;

/// Which `hql.toml` applies: `--config`, `--no-config`, `--confine`.
#[derive(Clone, Default)]
pub struct ConfigChoice {
    file: Option<String>,
    none: bool,
    confine: bool,
}

/// Run the command `cli` names; its exit status.
pub fn run(cli: Cli) -> ExitCode {
    let choice = ConfigChoice {
        file: cli.config.clone(),
        none: cli.no_config,
        confine: cli.confine,
    };
    // A program's host, with the `hql.toml` that applies to it.
    let host_for = |program: &str| -> Result<FsHost, ConfigError> {
        find_config(program, &choice).map(|config| FsHost::new().with_config(config))
    };
    // Every command's host reads `HQL_NOW` (`FsHost::now`): a bad one is
    // refused before anything runs.
    if let Err(e) = env_now() {
        return ExitCode::from(usage_error(&e) as u8);
    }
    let command = match cli.command {
        None => return ExitCode::from(repl(&choice) as u8),
        Some(Command::Repl { limits }) => {
            limits.apply();
            return ExitCode::from(repl(&choice) as u8);
        }
        Some(command) => command,
    };
    if let Command::Run { limits, .. }
    | Command::Vet { limits, .. }
    | Command::Test { limits, .. } = &command
    {
        limits.apply();
    }
    // Output takes the progress line off the screen while it is written;
    // standard error is not locked for the whole run, since the line's
    // thread writes there too.
    let line = Line::default();
    let (stdout, failure) = stdout(line.writer(io::stdout().lock()));
    let mut out = io::BufWriter::new(stdout);
    let mut err = line.writer(io::stderr());
    let mut sinks = Sinks {
        out: &mut out,
        err: &mut err,
        color: color(),
        json: cli.diagnostics == Diagnostics::Json,
    };
    let status = match command {
        Command::Repl { .. } => unreachable!("the REPL started above"),
        Command::Test {
            paths,
            update,
            allow_empty,
            format,
            with,
            ..
        } => match crate::cli::notebook::collect_tests(&paths) {
            Ok(files) => {
                let mut save =
                    |path: &str, text: &str| crate::cli::notebook::write_atomically(path, text);
                let test_host = |path: &str| -> Rc<dyn Host> {
                    // A file whose hql.toml is broken (or refused by
                    // --confine) is run without it, saying so; its cases
                    // that need it fail.
                    Rc::new(host_for(path).unwrap_or_else(|e| {
                        note(&format!("hql: {e}\nhql: {path} runs without it"));
                        FsHost::new()
                    }))
                };
                let options = crate::cli::run::TestOptions {
                    update,
                    allow_empty,
                    junit: format == TestFormat::Junit,
                    json_diagnostics: sinks.json,
                    with,
                };
                crate::cli::run::test_files(
                    &files, &test_host, options, sinks.out, sinks.err, &mut save,
                )
            }
            Err(e) => usage_error(&e),
        },
        Command::Run {
            file,
            format,
            threads,
            set,
            quiet,
            explain,
            now,
            ..
        } => match read_program(&file) {
            Ok(text) => {
                let name = if file == "-" { "<stdin>" } else { &file };
                let format = match format {
                    Format::Hql => OutputFormat::Hql,
                    Format::Json => OutputFormat::Json,
                };
                let host = match host_for(&file) {
                    Ok(host) => host,
                    Err(e) => return ExitCode::from(sinks.config_error(&e) as u8),
                };
                let mut host = host.with_params(set.into_iter().collect::<HashMap<_, _>>());
                if let Some(now) = now {
                    host = host.with_now(now);
                }
                if file == "-" {
                    host = host.with_stdin_holding(StdinHolds::Program);
                }
                let mut session = threaded_session(host, threads);
                if explain {
                    return ExitCode::from(
                        failure.settle(session.explain(name, &text, &mut sinks), &mut sinks) as u8,
                    );
                }
                let meter = watch(&session, quiet);
                with_progress(meter, &line, || {
                    session.submit(name, &text, &mut sinks, &mut |v, sinks| {
                        print_value(v, format, sinks.out)
                    })
                })
            }
            Err(e) => usage_error(&e),
        },
        Command::Vet {
            contracts,
            data,
            ty,
            errors,
            dead_letters,
            format,
            threads,
            quiet,
            engine,
            options,
            ..
        } => {
            let host = match host_for(&contracts) {
                Ok(host) => host,
                Err(e) => return ExitCode::from(sinks.config_error(&e) as u8),
            };
            let job = crate::cli::vet::VetJob {
                contracts,
                data,
                ty,
                errors,
                dead_letters,
                json: matches!(format, Format::Json),
                engine,
                options,
            };
            let session = threaded_session(host, threads);
            let meter = watch(&session, quiet);
            with_progress(meter, &line, || {
                crate::cli::vet::vet(&job, session, &mut sinks)
            })
        }
        Command::Fmt { files, check } => {
            crate::cli::fmt::fmt(&crate::cli::fmt::FmtJob { files, check }, &mut sinks)
        }
        Command::Diff { old, new, format } => {
            let session = || Session::new(Rc::new(FsHost::new()));
            let json = matches!(format, Format::Json);
            crate::cli::diff::diff(&old, &new, json, [session(), session()], &mut sinks)
        }
        Command::Infer {
            data,
            name,
            closed,
            limit,
            options,
        } => {
            let host = match host_for(&data) {
                Ok(host) => host,
                Err(e) => return ExitCode::from(sinks.config_error(&e) as u8),
            };
            let job = crate::cli::infer::InferJob {
                data,
                name,
                closed,
                limit,
                options,
            };
            crate::cli::infer::infer(&job, threaded_session(host, None), &mut sinks)
        }
        Command::Export {
            file,
            ty,
            format,
            dialect,
            from,
            from_table,
            columns,
            database,
            summary,
            now,
        } => match host_for(&file) {
            Ok(host) => {
                let session = Session::new(Rc::new(host));
                let sql = crate::cli::export::SqlArgs {
                    dialect,
                    from,
                    from_table,
                    columns,
                    database,
                    summary,
                    now: now.or_else(crate::cli::args::env_now),
                };
                crate::cli::export::export(session, &file, &ty, format, &sql, &mut sinks)
            }
            Err(e) => sinks.config_error(&e),
        },
        Command::Contract { file, ty } => match host_for(&file) {
            Ok(host) => {
                let session = Session::new(Rc::new(host));
                crate::cli::contract::contract(session, &file, ty.as_deref(), &mut sinks)
            }
            Err(e) => sinks.config_error(&e),
        },
        Command::Recover { dir } => crate::cli::recover::recover(dir.as_deref(), &mut sinks),
        Command::Check { files } => files.iter().fold(EXIT_OK, |status, file| {
            let host = match host_for(file) {
                Ok(host) => host,
                Err(e) => return status.max(sinks.config_error(&e)),
            };
            let one = match read_program(file) {
                Ok(text) => check_source(
                    &Source {
                        name: file,
                        text: &text,
                    },
                    Rc::new(host),
                    &mut sinks,
                ),
                Err(e) => usage_error(&e),
            };
            status.max(one)
        }),
    };
    ExitCode::from(failure.settle(status, &mut sinks) as u8)
}

/// Standard output, through `cli::output::Stdout`, which keeps its first
/// failure for the command to report.
fn stdout(inner: impl Write + 'static) -> (Stdout, Failure) {
    if crate::cli::output::stdout_closed_at_start() {
        return Stdout::new(crate::cli::output::Closed);
    }
    Stdout::new(inner)
}

fn repl(choice: &ConfigChoice) -> i32 {
    let config = find_config("-", choice).unwrap_or_else(|e| {
        note(&format!("hql: {e}\nhql: going on without it"));
        None
    });
    let host = FsHost::new().with_config(config);
    if io::stdin().is_terminal() {
        // Unlocked: the line editor writes to the terminal too.
        let (mut out, failure) = stdout(io::stdout());
        let status = crate::cli::repl::run_interactive(Rc::new(host), color(), &mut out);
        let mut err = io::stderr();
        let mut sinks = Sinks {
            out: &mut out,
            err: &mut err,
            color: color(),
            json: false,
        };
        return failure.settle(status, &mut sinks);
    }
    let input = io::stdin().lock();
    let (out, failure) = stdout(io::stdout().lock());
    let mut out = io::BufWriter::new(out);
    let mut err = io::stderr().lock();
    let mut sinks = Sinks::plain(&mut out, &mut err);
    // Entries come from standard input: sources read files only.
    let host = host.with_stdin_holding(StdinHolds::Entries);
    // A signal stops the entry running; the session goes on.
    stop_on_signals();
    let status = crate::cli::repl::run_piped(input, Rc::new(host), &mut sinks);
    failure.settle(status, &mut sinks)
}

/// The `hql.toml` of a program: looked up from its folder upward (from the
/// current folder for a program read from standard input), or the one
/// `--config` names, or none with `--no-config`; with `--confine`, one
/// whose paths stay in its folder.
fn find_config(program: &str, choice: &ConfigChoice) -> Result<Option<Config>, ConfigError> {
    let config = match &choice.file {
        _ if choice.none => None,
        Some(file) => Some(Config::load(std::path::Path::new(file))?),
        None => {
            let start = match std::path::Path::new(program).parent() {
                Some(dir) if program != "-" && !dir.as_os_str().is_empty() => dir.to_path_buf(),
                _ => std::path::PathBuf::from("."),
            };
            Config::find(&start)?
        }
    };
    if choice.confine {
        if let Some(config) = &config {
            config.confine()?;
        }
    }
    Ok(config)
}

/// The session's meter, when a progress line is wanted (a run nobody
/// watches counts nothing).
fn watch(session: &Session, quiet: bool) -> Option<Arc<Meter>> {
    crate::cli::progress::wanted(quiet).then(|| session.interp().watch())
}

/// Run `job`, with a progress line drawn from `meter` when there is one.
fn with_progress(meter: Option<Arc<Meter>>, line: &Line, job: impl FnOnce() -> i32) -> i32 {
    let progress = meter.map(|meter| Progress::start(meter, line));
    let status = job();
    if let Some(p) = progress {
        p.finish();
    }
    status
}

/// A session on `host` whose counting path may use `threads` threads
/// (default: every core), each with a copy of the host; Ctrl-C and
/// SIGTERM stop it at the next record.
fn threaded_session(host: FsHost, threads: Option<usize>) -> Session {
    let threads = thread_count(threads);
    let mut session = Session::new(Rc::new(host.clone()));
    session.set_threads(
        threads,
        std::sync::Arc::new(move || Rc::new(host.clone()) as Rc<dyn Host>),
    );
    stop_on_signals();
    session
}

/// More threads than this a core only cost memory and start-up time.
const THREADS_PER_CORE: usize = 4;

/// The threads to count with: `--threads` (at least 1, at most
/// `THREADS_PER_CORE` a core, with a note when capped), else every core.
fn thread_count(asked: Option<usize>) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let most = cores * THREADS_PER_CORE;
    match asked {
        None => cores,
        Some(n) if n > most => {
            let plural = if cores == 1 { "" } else { "s" };
            note(&format!(
                "hql: --threads {n} is more than {THREADS_PER_CORE} per core; using {most} ({cores} core{plural} here)"
            ));
            most
        }
        Some(n) => n.max(1),
    }
}

pub fn read_program(file: &str) -> Result<String, String> {
    if let Some(hint) = looks_like_data(file) {
        return Err(hint);
    }
    if file == "-" {
        let mut text = String::new();
        io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read the program from standard input: {e}"))?;
        return Ok(text);
    }
    std::fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))
}

/// A program named like a data file: most likely data given where a
/// program was wanted. What to run instead.
fn looks_like_data(file: &str) -> Option<String> {
    let format = crate::formats::FORMATS.meant_by(file)?;
    Some(format!(
        "{file} looks like data, not a program: did you mean `hql vet CONTRACTS {file}` \
         (check it against a contract), `hql infer {file}` (a contract from it), or a \
         program reading it with `source(file({file:?}), {})`?",
        format.name()
    ))
}

fn color() -> bool {
    io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Ctrl-C or a termination signal stops the run at the next record, which
/// abandons its targets; a second one ends the process at once.
fn stop_on_signals() {
    let handled = ctrlc::set_handler(|| {
        if crate::runtime::eval::interrupted() {
            std::process::exit(130);
        }
        crate::runtime::eval::interrupt();
    });
    // Without a handler the signal ends the process, as it would anyway.
    if handled.is_ok() {
        termination::name_it();
    }
}

/// SIGTERM gets a handler of its own, so that the message names it rather
/// than Ctrl-C: it only marks the interrupt (atomics, as a signal handler
/// may), as the Ctrl-C handler does.
#[cfg(unix)]
mod termination {
    extern "C" fn on_term(_: libc::c_int) {
        if crate::runtime::eval::interrupted() {
            // SAFETY: `_exit` is async-signal-safe.
            unsafe { libc::_exit(128 + libc::SIGTERM) }
        }
        crate::runtime::eval::interrupt_by(crate::runtime::eval::Signal::Term);
    }

    pub fn name_it() {
        let handler = on_term as extern "C" fn(libc::c_int);
        // SAFETY: the handler touches atomics only, and `_exit`.
        unsafe {
            libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
        }
    }
}

#[cfg(not(unix))]
mod termination {
    pub fn name_it() {}
}

/// `HQL_NOW`, when set, checked: the time `age(f)` measures to.
fn env_now() -> Result<(), String> {
    match std::env::var("HQL_NOW") {
        Ok(text) => crate::cli::args::parse_now(&text)
            .map(|_| ())
            .map_err(|e| format!("HQL_NOW: {e}")),
        Err(_) => Ok(()),
    }
}

fn usage_error(message: &str) -> i32 {
    note(&format!("hql: {message}"));
    EXIT_STATIC
}
