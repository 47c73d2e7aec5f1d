//! The `hql` command: a thin shell around the library (tooling.md).

use std::collections::HashMap;
use std::io::{self, IsTerminal, Read, Write};
use std::process::ExitCode;
use std::rc::Rc;

use clap::{Parser, Subcommand, ValueEnum};

use hql::cli::output::{note, Failure, Stdout};
use hql::runtime::eval::Host;
use hql::session::config::{Config, ConfigError};
use hql::session::host::{FsHost, StdinHolds};
use std::sync::Arc;

use hql::cli::progress::{Line, Progress};
use hql::cli::run::{check_source, print_value, OutputFormat, Sinks, Source, EXIT_OK, EXIT_STATIC};
use hql::runtime::eval::meter::Meter;
use hql::session::Session;

/// HQL: declare what incoming data must look like and mean, check it, and
/// route what breaks.
#[derive(Parser)]
#[command(name = "hql", version, about, after_long_help = TOP_HELP)]
struct Cli {
    /// Without a command, `hql` starts the REPL.
    #[command(subcommand)]
    command: Option<Command>,
    /// How diagnostics are written to standard error: `human` reports, or
    /// `json`, one object a line (`code, severity, message, file, line,
    /// column, end_line, end_column, help`) for editors and CI.
    #[arg(long, global = true, value_enum, default_value_t = Diagnostics::Human)]
    diagnostics: Diagnostics,
    /// The `hql.toml` to use, instead of the one looked up from the
    /// program's folder upward.
    #[arg(long, global = true, value_name = "PATH", conflicts_with = "no_config")]
    config: Option<String>,
    /// Use no `hql.toml`: sources and targets named by id are unknown.
    #[arg(long, global = true)]
    no_config: bool,
    /// Refuse an `hql.toml` whose paths leave its own folder.
    #[arg(long, global = true)]
    confine: bool,
}

/// Which `hql.toml` applies: `--config`, `--no-config`, `--confine`.
#[derive(Clone, Default)]
struct ConfigChoice {
    file: Option<String>,
    none: bool,
    confine: bool,
}

// What `--help` shows after the options: examples, exit statuses and the
// environment, as tooling.md fixes them (`-h` stays short).

const TOP_HELP: &str = "\
Examples:
  hql run examples/structural/sightings.hql
  hql vet contracts.hql orders.jsonl --errors 5
  hql infer orders.jsonl > orders.hql
  hql                      the REPL

Exit status: 0 success; 1 a check, test case, record or runtime step failed
(or fmt --check / diff found something); 2 a static error or bad usage.

Environment:
  NO_COLOR         no colour in diagnostics
  HQL_PROGRESS=0   no progress line on a terminal
  HQL_HISTORY      the REPL's history file (empty: none); default
                   $XDG_STATE_HOME/hql/history or ~/.local/state/hql/history
  COLUMNS          the REPL's table width where the terminal does not say
  hql.toml         configured sources and targets, found from the program's
                   folder upward (--config PATH names one, --no-config uses
                   none, --confine refuses paths outside its folder)";

const RUN_HELP: &str = "\
Examples:
  hql run pipeline.hql
  hql run pipeline.hql --set input=orders-march.jsonl --format json
  cat pipeline.hql | hql run -

Exit status: 0 success; 1 a failed check, a runtime error, unwrap() or a
fail-fast target stopping the run; 2 a static error or bad usage.
Environment: NO_COLOR, HQL_PROGRESS=0; hql.toml from the program's folder up.";

const REPL_HELP: &str = "\
Examples:
  hql                                  interactive, with history and Tab
  printf 'let x = 2\\nx + 3\\n' | hql repl   entries from standard input

Inside: :help lists the commands (:type, :load, :contract, :export, :infer, …).
Exit status (piped): 1 if any entry failed, else 0.
Environment: HQL_HISTORY, XDG_STATE_HOME, NO_COLOR, COLUMNS.";

const TEST_HELP: &str = "\
Examples:
  hql test checks/                     every .hql and .md file below
  hql test README.md --update          rewrite the output blocks
  hql test docs --format junit > junit.xml

Exit status: 0 every case passed; 1 a case failed (or a file had none,
without --allow-empty); 2 a static error or bad usage.";

const VET_HELP: &str = "\
Examples:
  hql vet orders.hql orders.jsonl
  hql vet orders.hql march.csv april.jsonl --type Order --errors 3
  hql vet orders.hql orders.jsonl --dead-letters bad.jsonl --format json

Exit status: 0 every record passed; 1 a record failed; 2 a static error in the
contracts file or bad usage.
Environment: HQL_PROGRESS=0, NO_COLOR; hql.toml for configured source ids.";

const FMT_HELP: &str = "\
Examples:
  hql fmt contracts.hql
  hql fmt --check $(git ls-files '*.hql') README.md
  hql fmt - < messy.hql

Exit status: 0 done (or nothing to change); 1 --check found a file that
would change; 2 a file that does not parse (left untouched) or bad usage.";

const DIFF_HELP: &str = "\
Examples:
  hql diff old/orders.hql orders.hql
  git show main:orders.hql > /tmp/old.hql && hql diff /tmp/old.hql orders.hql --format json

Exit status: 0 no breaking change without its version bump; 1 a breaking
change needs a bump it lacks (the report says which); 2 a static error or bad
usage.";

const INFER_HELP: &str = "\
Examples:
  hql infer orders.jsonl > orders.hql
  hql infer customers.csv --name Customer --closed --limit 10000

Exit status: 0 a contract printed; 1 no record to infer from; 2 bad usage.";

const CHECK_HELP: &str = "\
Examples:
  hql check pipeline.hql contracts.hql
  hql check pipeline.hql --diagnostics json

Exit status: 0 no error; 2 a static error or bad usage.";

const EXPORT_HELP: &str = "\
Examples:
  hql export orders.hql Order --format json-schema > order.schema.json
  hql export orders.hql Order --format openlineage
  hql export orders.hql Order --format contract

Exit status: 0 exported; 2 a static error, an unknown type or format.";

const CONTRACT_HELP: &str = "\
Examples:
  hql contract orders.hql
  hql contract orders.hql Order

Exit status: 0 printed; 2 a static error or an unknown type.";

const RECOVER_HELP: &str = "\
Examples:
  hql recover
  hql recover out/

Exit status: 0 nothing left to do, or every interrupted commit finished or
rolled back; 1 a commit that cannot be finished yet (its database cannot be
read), or the folder cannot be read.";

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Diagnostics {
    Human,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Check a program, then run it, printing each expression statement's value.
    #[command(after_long_help = RUN_HELP)]
    Run {
        /// The program (`-` reads it from standard input).
        file: String,
        /// How values are printed.
        #[arg(long, value_enum, default_value_t = Format::Hql)]
        format: Format,
        /// Threads for a validated JSON Lines file's pipelines: counted,
        /// reported, written, routed or printed (default: every core).
        #[arg(long)]
        threads: Option<usize>,
        /// A parameter the program reads with `param("NAME")` (repeatable).
        #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_setting)]
        set: Vec<(String, String)>,
        /// No progress line on a terminal.
        #[arg(long, short)]
        quiet: bool,
        #[command(flatten)]
        limits: Limits,
    },
    /// The interactive REPL (reads entries from standard input when it is not a terminal).
    #[command(after_long_help = REPL_HELP)]
    Repl {
        #[command(flatten)]
        limits: Limits,
    },
    /// Run the `check`s of .hql files and the cells of Markdown notebooks.
    #[command(after_long_help = TEST_HELP)]
    Test {
        /// Files, or directories searched for *.hql and *.md.
        #[arg(required = true)]
        paths: Vec<String>,
        /// Rewrite notebooks' output blocks with the actual output.
        #[arg(long)]
        update: bool,
        /// A file with no checks (or a notebook with no cells) passes;
        /// without this it fails, saying so.
        #[arg(long)]
        allow_empty: bool,
        /// `lines`: one line a case and a closing count; `junit`: JUnit XML
        /// for CI systems.
        #[arg(long, value_enum, default_value_t = TestFormat::Lines)]
        format: TestFormat,
        #[command(flatten)]
        limits: Limits,
    },
    /// Validate data files against a contract, without a program: a report per file.
    #[command(after_long_help = VET_HELP)]
    Vet {
        /// The file declaring the contract.
        contracts: String,
        /// Data files (format from the extension: .jsonl, .json, .csv; `-` for
        /// standard input as JSON) or configured source ids.
        #[arg(required = true)]
        data: Vec<String>,
        /// The type to validate against (default: the only record type the
        /// contracts file declares).
        #[arg(long = "type", value_name = "T")]
        ty: Option<String>,
        /// Print up to N failure records under each file's report.
        #[arg(long, value_name = "N", default_value_t = 0)]
        errors: usize,
        /// Write every failure record to PATH (JSON Lines, atomically).
        #[arg(long, value_name = "PATH")]
        dead_letters: Option<String>,
        /// `hql` prints reports in HQL's form; `json`, one object a line.
        #[arg(long, value_enum, default_value_t = Format::Hql)]
        format: Format,
        /// Threads for the reports (default: every core).
        #[arg(long)]
        threads: Option<usize>,
        /// No progress line on a terminal.
        #[arg(long, short)]
        quiet: bool,
        /// `duckdb`: check each JSON Lines file with the contract compiled to
        /// SQL, in DuckDB (Python's `duckdb` module or the `duckdb` command).
        #[arg(long, value_name = "ENGINE")]
        engine: Option<String>,
        #[command(flatten)]
        limits: Limits,
    },
    /// Rewrite programs in the canonical layout (Markdown files: their hql blocks).
    #[command(after_long_help = FMT_HELP)]
    Fmt {
        /// Files to format in place (`-` formats standard input to standard output).
        #[arg(required = true)]
        files: Vec<String>,
        /// Rewrite nothing: name each file that would change, and exit 1 if any would.
        #[arg(long)]
        check: bool,
    },
    /// Compare the types of two contracts files: every change classified,
    /// and whether each type's version bump matches (exit 1 when not).
    #[command(after_long_help = DIFF_HELP)]
    Diff {
        /// The contracts file as it was.
        old: String,
        /// The contracts file as it is now.
        new: String,
        /// `hql` prints a report for people; `json`, one JSON document.
        #[arg(long, value_enum, default_value_t = Format::Hql)]
        format: Format,
    },
    /// Print a contract that every record of a data file satisfies.
    #[command(after_long_help = INFER_HELP)]
    Infer {
        /// The data (format from the extension: .jsonl, .json, .csv; `-` for
        /// standard input as JSON) or a configured source id.
        data: String,
        /// The type's name (default: the file's stem, capitalised).
        #[arg(long, value_name = "T")]
        name: Option<String>,
        /// A closed `TypeContract` rather than an open `DataContract`.
        #[arg(long)]
        closed: bool,
        /// Read at most N records (default: all).
        #[arg(long, value_name = "N")]
        limit: Option<u64>,
    },
    /// Check programs without running them: every diagnostic, nothing run.
    #[command(after_long_help = CHECK_HELP)]
    Check {
        /// The programs to check.
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Write one type of a contracts file for other tools: JSON Schema, OpenLineage,
    /// HQL's canonical JSON, or a DuckDB query that checks data where it lies.
    #[command(after_long_help = EXPORT_HELP)]
    Export {
        /// The file declaring the type.
        file: String,
        /// The type to export.
        #[arg(value_name = "TYPE")]
        ty: String,
        /// `json-schema` (draft 2020-12), `openlineage` (a SchemaDatasetFacet),
        /// `contract` (HQL's canonical JSON of the type) or `sql` (a query that
        /// checks every line where the data lies).
        #[arg(long, value_name = "F")]
        format: String,
        /// With `--format sql`: the SQL dialect (`duckdb`, `spark`, `trino`).
        #[arg(long, value_name = "D")]
        dialect: Option<String>,
        /// With `--format sql`: a JSON Lines file (or glob) to read as text
        /// lines, or a table expression with a text column `line`.
        #[arg(long, value_name = "INPUT")]
        from: Option<String>,
        /// With `--format sql`: one row, `report()`'s, instead of one a line.
        #[arg(long)]
        summary: bool,
    },
    /// Finish, or roll back, the commits of runs that crashed while
    /// committing their targets in a folder (the next run touching those
    /// targets does it too).
    #[command(after_long_help = RECOVER_HELP)]
    Recover {
        /// The folder of the targets (default: the current folder).
        dir: Option<String>,
    },
    /// A summary of each type a contracts file declares: version, owner, kind,
    /// fields with the rules that read them, rule identities.
    #[command(after_long_help = CONTRACT_HELP)]
    Contract {
        /// The file declaring the types.
        file: String,
        /// Only this type.
        #[arg(value_name = "TYPE")]
        ty: Option<String>,
    },
}

/// What a source may hold (tooling.md, "Hostile input stays bounded").
#[derive(clap::Args, Clone, Copy)]
struct Limits {
    /// The longest line a source may hold (a JSON line or array element, a
    /// CSV record), in bytes, with an optional K, M or G (default 256M):
    /// a longer one stops the run with an `hql::io` error.
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    max_line: Option<u64>,
}

impl Limits {
    /// Make the limits the ones every source is read with.
    fn apply(self) {
        if let Some(bytes) = self.max_line {
            hql::runtime::eval::io::set_max_line(bytes);
        }
    }
}

/// A size in bytes: digits, then optionally `K`, `M` or `G` (powers of
/// 1024, upper or lower case, an optional `B` or `iB` after them).
fn parse_size(text: &str) -> Result<u64, String> {
    let bad = || format!("expected a size in bytes such as 4096, 64K, 256M or 1G, found `{text}`");
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = text[digits.len()..].to_ascii_uppercase();
    let shift = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(bad()),
    };
    let n: u64 = digits.parse().map_err(|_| bad())?;
    if n == 0 {
        return Err(bad());
    }
    n.checked_mul(1 << shift).ok_or_else(bad)
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum TestFormat {
    Lines,
    Junit,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Hql,
    Json,
}

fn read_program(file: &str) -> Result<String, String> {
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
    let path = std::path::Path::new(file);
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    if !matches!(ext.as_str(), "json" | "jsonl" | "ndjson" | "csv" | "tsv") {
        return None;
    }
    Some(format!(
        "{file} looks like data, not a program: did you mean `hql vet CONTRACTS {file}` \
         (check it against a contract), `hql infer {file}` (a contract from it), or a \
         program reading it with `source(file({file:?}), {})`?",
        if ext == "csv" || ext == "tsv" {
            "Csv"
        } else {
            "Json"
        }
    ))
}

fn color() -> bool {
    io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// The command runs on a thread with a deep stack: the phases recurse as
/// deep as a statement nests (`hql::syntax::limits`).
fn main() -> ExitCode {
    hql::syntax::limits::with_stack(command)
}

fn command() -> ExitCode {
    let cli = Cli::parse();
    let choice = ConfigChoice {
        file: cli.config.clone(),
        none: cli.no_config,
        confine: cli.confine,
    };
    let find_config = |program: &str| find_config(program, &choice);
    let command = cli.command.unwrap_or(Command::Repl {
        limits: Limits { max_line: None },
    });
    match &command {
        Command::Run { limits, .. }
        | Command::Vet { limits, .. }
        | Command::Test { limits, .. }
        | Command::Repl { limits } => limits.apply(),
        _ => {}
    }
    if matches!(command, Command::Repl { .. }) {
        return ExitCode::from(repl(&choice) as u8);
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
        Command::Repl { .. } => EXIT_OK,
        Command::Test {
            paths,
            update,
            allow_empty,
            format,
            ..
        } => match collect_tests(&paths) {
            Ok(files) => {
                let mut save = |path: &str, text: &str| write_atomically(path, text);
                let host_for = |path: &str| -> Rc<dyn Host> {
                    // A file whose hql.toml is broken (or refused by
                    // --confine) is run without it, saying so; its cases
                    // that need it fail.
                    let config = find_config(path).unwrap_or_else(|e| {
                        note(&format!("hql: {e}\nhql: {path} runs without it"));
                        None
                    });
                    Rc::new(FsHost::new().with_config(config))
                };
                let options = hql::cli::run::TestOptions {
                    update,
                    allow_empty,
                    junit: format == TestFormat::Junit,
                    json_diagnostics: sinks.json,
                };
                hql::cli::run::test_files(
                    &files, &host_for, options, sinks.out, sinks.err, &mut save,
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
            ..
        } => match read_program(&file) {
            Ok(text) => {
                let name = if file == "-" { "<stdin>" } else { &file };
                let format = match format {
                    Format::Hql => OutputFormat::Hql,
                    Format::Json => OutputFormat::Json,
                };
                let config = match find_config(&file) {
                    Ok(config) => config,
                    Err(e) => return ExitCode::from(sinks.config_error(&e) as u8),
                };
                let mut host = FsHost::new()
                    .with_params(set.into_iter().collect::<HashMap<_, _>>())
                    .with_config(config);
                if file == "-" {
                    host = host.with_stdin_holding(StdinHolds::Program);
                }
                let mut session = threaded_session(host, threads);
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
            ..
        } => {
            let config = match find_config(&contracts) {
                Ok(config) => config,
                Err(e) => return ExitCode::from(sinks.config_error(&e) as u8),
            };
            let host = FsHost::new().with_config(config);
            let job = hql::cli::vet::VetJob {
                contracts,
                data,
                ty,
                errors,
                dead_letters,
                json: matches!(format, Format::Json),
                engine,
            };
            let session = threaded_session(host, threads);
            let meter = watch(&session, quiet);
            with_progress(meter, &line, || {
                hql::cli::vet::vet(&job, session, &mut sinks)
            })
        }
        Command::Fmt { files, check } => {
            hql::cli::fmt::fmt(&hql::cli::fmt::FmtJob { files, check }, &mut sinks)
        }
        Command::Diff { old, new, format } => {
            let session = || Session::new(Rc::new(FsHost::new()));
            let json = matches!(format, Format::Json);
            hql::cli::diff::diff(&old, &new, json, [session(), session()], &mut sinks)
        }
        Command::Infer {
            data,
            name,
            closed,
            limit,
        } => {
            let config = match find_config(&data) {
                Ok(config) => config,
                Err(e) => return ExitCode::from(sinks.config_error(&e) as u8),
            };
            let host = FsHost::new().with_config(config);
            let job = hql::cli::infer::InferJob {
                data,
                name,
                closed,
                limit,
            };
            hql::cli::infer::infer(&job, threaded_session(host, None), &mut sinks)
        }
        Command::Export {
            file,
            ty,
            format,
            dialect,
            from,
            summary,
        } => match find_config(&file) {
            Ok(config) => {
                let session = Session::new(Rc::new(FsHost::new().with_config(config)));
                let sql = hql::cli::export::SqlArgs {
                    dialect,
                    from,
                    summary,
                };
                hql::cli::export::export(session, &file, &ty, &format, &sql, &mut sinks)
            }
            Err(e) => sinks.config_error(&e),
        },
        Command::Contract { file, ty } => match find_config(&file) {
            Ok(config) => {
                let session = Session::new(Rc::new(FsHost::new().with_config(config)));
                hql::cli::contract::contract(session, &file, ty.as_deref(), &mut sinks)
            }
            Err(e) => sinks.config_error(&e),
        },
        Command::Recover { dir } => hql::cli::recover::recover(dir.as_deref(), &mut sinks),
        Command::Check { files } => files.iter().fold(EXIT_OK, |status, file| {
            let config = match find_config(file) {
                Ok(config) => config,
                Err(e) => return status.max(sinks.config_error(&e)),
            };
            let one = match read_program(file) {
                Ok(text) => check_source(
                    &Source {
                        name: file,
                        text: &text,
                    },
                    Rc::new(FsHost::new().with_config(config)),
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
    if closed_stdout::at_start() {
        return Stdout::new(hql::cli::output::Closed);
    }
    Stdout::new(inner)
}

/// Was standard output closed when the process started (`hql run p.hql
/// >&-`)? Before `main`, the Rust runtime opens `/dev/null` on a closed
/// standard descriptor (so that no file opened later takes its number),
/// which would make every write to a closed output succeed unseen. On
/// Linux this asks first, from the program's initialisers, which run
/// before the runtime's; elsewhere a closed output is `/dev/null`.
mod closed_stdout {
    use std::sync::atomic::{AtomicBool, Ordering};

    static CLOSED: AtomicBool = AtomicBool::new(false);

    pub fn at_start() -> bool {
        CLOSED.load(Ordering::Relaxed)
    }

    #[cfg(target_os = "linux")]
    mod probe {
        use std::sync::atomic::Ordering;

        extern "C" {
            fn fcntl(fd: i32, cmd: i32, ...) -> i32;
        }

        /// `F_GETFD`: fails (with `EBADF`) exactly when the descriptor is closed.
        const GET_FLAGS: i32 = 1;

        extern "C" fn probe() {
            // SAFETY: `fcntl(1, F_GETFD)` only reads the descriptor table.
            let closed = unsafe { fcntl(1, GET_FLAGS) } == -1;
            super::CLOSED.store(closed, Ordering::Relaxed);
        }

        #[used]
        #[link_section = ".init_array"]
        static PROBE: extern "C" fn() = probe;
    }
}

/// The files `hql test` runs: each path, or the *.hql and *.md files below
/// a directory (sorted, so the order is stable).
fn collect_tests(paths: &[String]) -> Result<Vec<hql::cli::run::TestFile>, String> {
    let mut found = Vec::new();
    for p in paths {
        let path = std::path::Path::new(p);
        if path.is_dir() {
            let mut below = Vec::new();
            walk(path, &mut below).map_err(|e| format!("cannot read {p}: {e}"))?;
            found.extend(below.into_iter().map(|p| (p, false)));
        } else {
            found.push((path.to_path_buf(), true));
        }
    }
    found
        .into_iter()
        .map(|(p, named)| {
            let path = p.to_string_lossy().to_string();
            read_program(&path).map(|text| hql::cli::run::TestFile { path, text, named })
        })
        .collect()
}

fn walk(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) -> io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, found)?;
        } else if path.extension().is_some_and(|e| e == "hql" || e == "md") {
            found.push(path);
        }
    }
    Ok(())
}

/// Write a notebook back as targets are written: never half a file.
fn write_atomically(path: &str, text: &str) -> io::Result<()> {
    let mut file = FsHost::new().create_file(path)?;
    file.write_all(text.as_bytes())?;
    file.commit()
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
        let status = hql::cli::repl::run_interactive(Rc::new(host), color(), &mut out);
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
    let status = hql::cli::repl::run_piped(input, Rc::new(host), &mut sinks);
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
    hql::cli::progress::wanted(quiet).then(|| session.interp().watch())
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

/// `--set NAME=VALUE`.
fn parse_setting(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_string(), value.to_string())),
        _ => Err(format!("expected NAME=VALUE, found `{text}`")),
    }
}

/// Ctrl-C or a termination signal stops the run at the next record, which
/// abandons its targets; a second one ends the process at once.
fn stop_on_signals() {
    let handled = ctrlc::set_handler(|| {
        if hql::runtime::eval::interrupted() {
            std::process::exit(130);
        }
        hql::runtime::eval::interrupt();
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
    extern "C" {
        fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
        fn _exit(status: i32) -> !;
    }

    const SIGTERM: i32 = 15;

    extern "C" fn on_term(_: i32) {
        if hql::runtime::eval::interrupted() {
            // SAFETY: `_exit` is async-signal-safe.
            unsafe { _exit(128 + SIGTERM) }
        }
        hql::runtime::eval::interrupt_by(hql::runtime::eval::Signal::Term);
    }

    pub fn name_it() {
        // SAFETY: the handler touches atomics only, and `_exit`.
        unsafe {
            signal(SIGTERM, on_term);
        }
    }
}

#[cfg(not(unix))]
mod termination {
    pub fn name_it() {}
}

fn usage_error(message: &str) -> i32 {
    note(&format!("hql: {message}"));
    EXIT_STATIC
}
