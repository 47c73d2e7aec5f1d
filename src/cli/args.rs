//! The command line's arguments, as clap parses them (tooling.md,
//! "Commands"): one struct a command, the options several share
//! flattened (`Limits`), and every closed set of values an enum
//! (`--format`, `--dialect`, `--engine`, `--diagnostics`).

use clap::{Parser, Subcommand, ValueEnum};

pub use crate::cli::engine::Engine;
pub use crate::tooling::sql::Dialect;

/// HQL: declare what incoming data must look like and mean, check it, and
/// route what breaks.
#[derive(Parser)]
#[command(name = "hql", version, about, after_long_help = TOP_HELP)]
pub struct Cli {
    /// Without a command, `hql` starts the REPL.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// How diagnostics are written to standard error: `human` reports, or
    /// `json`, one object a line (`code, severity, message, file, line,
    /// column, end_line, end_column, help`) for editors and CI.
    #[arg(long, global = true, value_enum, default_value_t = Diagnostics::Human)]
    pub diagnostics: Diagnostics,
    /// The `hql.toml` to use, instead of the one looked up from the
    /// program's folder upward.
    #[arg(long, global = true, value_name = "PATH", conflicts_with = "no_config")]
    pub config: Option<String>,
    /// Use no `hql.toml`: sources and targets named by id are unknown.
    #[arg(long, global = true)]
    pub no_config: bool,
    /// Refuse an `hql.toml` whose paths leave its own folder.
    #[arg(long, global = true)]
    pub confine: bool,
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
  hql export orders.hql Order --format sql --dialect duckdb --from 'events/*.jsonl'
  hql export orders.hql Order --format sql --dialect spark --from orders.parquet --summary
  hql export orders.hql Order --format sql --dialect duckdb --from-table orders --database shop.duckdb

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
pub enum Diagnostics {
    Human,
    Json,
}

#[derive(Subcommand)]
pub enum Command {
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
        /// Print, per statement, how it will run (the execution path chosen
        /// for each pipeline, and why the faster ones were passed over),
        /// and run nothing.
        #[arg(long)]
        explain: bool,
        /// The time `age(f)` in an `expect` measures to, in RFC 3339
        /// (default: `HQL_NOW`, else the run's start).
        #[arg(long, value_name = "TIME", value_parser = parse_now)]
        now: Option<i128>,
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
        /// Run the notebook cells marked ` ```hql needs=NAME ` (a cell that
        /// needs a server, say `postgres`); without it they are skipped.
        #[arg(long = "with", value_name = "NAME")]
        with: Vec<String>,
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
        /// SQL, in DuckDB (Python's `duckdb` module or the `duckdb` command);
        /// `postgres`: each configured PostgreSQL table, on its server.
        #[arg(long, value_name = "ENGINE", value_enum, hide_possible_values = true)]
        engine: Option<Engine>,
        #[command(flatten)]
        options: FormatFlags,
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
        #[command(flatten)]
        options: FormatFlags,
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
        #[arg(long, value_name = "F", value_enum, hide_possible_values = true)]
        format: ExportFormat,
        /// With `--format sql`: the SQL dialect (`duckdb`, `spark`, `trino`,
        /// `postgres`).
        #[arg(long, value_name = "D", value_enum, hide_possible_values = true)]
        dialect: Option<Dialect>,
        /// With `--format sql`: a JSON Lines file (or glob) to read as text
        /// lines, a Parquet file checked over its typed columns, or a table
        /// expression with a text column `line`.
        #[arg(long, value_name = "INPUT", conflicts_with = "from_table")]
        from: Option<String>,
        /// With `--format sql`: a table with typed columns, checked where it
        /// lies; its columns come from `--columns` or, for DuckDB, from the
        /// catalog of `--database`.
        #[arg(long, value_name = "TABLE")]
        from_table: Option<String>,
        /// With `--from-table`: the table's columns as its catalog names
        /// them (`order_id VARCHAR, amount DOUBLE`, as `DESCRIBE` prints).
        #[arg(long, value_name = "COLUMNS", requires = "from_table")]
        columns: Option<String>,
        /// With `--from-table` and DuckDB: the database file whose catalog
        /// holds the table's columns (read through DuckDB).
        #[arg(
            long,
            value_name = "FILE",
            requires = "from_table",
            conflicts_with = "columns"
        )]
        database: Option<String>,
        /// With `--format sql`: one row, `report()`'s, instead of one a line.
        #[arg(long)]
        summary: bool,
        /// With `--format sql --summary`: the time `age(f)` in an `expect`
        /// measures to, in RFC 3339 (default: `HQL_NOW`, else the engine's
        /// clock when the query runs).
        #[arg(long, value_name = "TIME", value_parser = parse_now)]
        now: Option<i128>,
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
pub struct Limits {
    /// The longest line a source may hold (a JSON line or array element, a
    /// CSV record), in bytes, with an optional K, M or G (default 256M):
    /// a longer one stops the run with an `hql::io` error.
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub max_line: Option<u64>,
}

impl Limits {
    /// Make the limits the ones every source is read with.
    pub fn apply(self) {
        if let Some(bytes) = self.max_line {
            crate::runtime::eval::io::set_max_line(bytes);
        }
    }
}

/// A size in bytes: digits, then optionally `K`, `M` or `G` (powers of
/// 1024, upper or lower case, an optional `B` or `iB` after them).
pub fn parse_size(text: &str) -> Result<u64, String> {
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
pub enum TestFormat {
    Lines,
    Junit,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Hql,
    Json,
}

/// `--set NAME=VALUE`.
pub fn parse_setting(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_string(), value.to_string())),
        _ => Err(format!("expected NAME=VALUE, found `{text}`")),
    }
}

/// What `hql export --format` writes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
pub enum ExportFormat {
    JsonSchema,
    #[value(name = "openlineage")]
    OpenLineage,
    Contract,
    Sql,
}

/// `--now TIME`: an RFC 3339 date-time, as nanoseconds since 1970.
/// `HQL_NOW`, when it is set and a time (the command line has refused it
/// otherwise).
pub fn env_now() -> Option<i128> {
    std::env::var("HQL_NOW")
        .ok()
        .and_then(|t| parse_now(&t).ok())
}

pub fn parse_now(text: &str) -> Result<i128, String> {
    crate::runtime::stdlib_native::instant(text, false)
        .ok_or_else(|| format!("`{text}` is not an RFC 3339 time such as 2026-01-31T12:00:00Z"))
}

/// The format options of the data `hql vet` and `hql infer` read, given
/// to its source as a program's named arguments are (tooling.md, "Format
/// options").
#[derive(clap::Args, Debug, Clone, Default)]
pub struct FormatFlags {
    /// CSV: the character between cells (default `,`; a tab for `.tsv`).
    #[arg(long, value_name = "C")]
    pub delimiter: Option<String>,
    /// CSV: the quote character (default `"`).
    #[arg(long, value_name = "C")]
    pub quote: Option<String>,
    /// CSV: a cell text read as missing, once a text (`--nulls NA --nulls ""`);
    /// the texts given replace the default, the empty cell.
    #[arg(long, value_name = "TEXT")]
    pub nulls: Vec<String>,
    /// CSV: `utf-8` (default), `latin1`, `windows-1252` or `utf-16`; a byte-order mark decides.
    #[arg(long, value_name = "NAME")]
    pub encoding: Option<String>,
    /// CSV: the file has no header row; columns take the contract's field order.
    #[arg(long)]
    pub no_header: bool,
    /// JSON: a JSON pointer to the array of records inside one document (`/data`).
    #[arg(long, value_name = "POINTER")]
    pub at: Option<String>,
}

impl FormatFlags {
    /// The first of the flags that was given, as it is written.
    pub fn first_given(&self) -> Option<&'static str> {
        [
            (self.delimiter.is_some(), "--delimiter"),
            (self.quote.is_some(), "--quote"),
            (!self.nulls.is_empty(), "--nulls"),
            (self.encoding.is_some(), "--encoding"),
            (self.no_header, "--no-header"),
            (self.at.is_some(), "--at"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}
