//! What the evaluator asks of the world when it reads a source or writes a
//! target, as traits it owns and is handed (tooling.md, "Sources, targets
//! and the schema boundary").
//!
//! A [`SourceSpec`] or [`TargetSpec`] says where records come from or go
//! and in which [`Format`]; a [`Codec`] (one per format, in `crate::formats`)
//! turns what it reads — an [`Input`]: bytes, or a place it opens itself —
//! into [`Decoded`] records, and records into bytes; what more a format
//! can give is a capability asked for by trait ([`JsonText`],
//! [`RowCells`]). The host's [`PendingFile`] holds what is written until
//! the run ends and it is committed or abandoned ([`Pending`]). The
//! evaluator itself opens no file.

use std::io::{BufRead, Write};
use std::rc::Rc;

use super::policy::TableTarget;
use super::{Items, Origin, Result};
use crate::runtime::builtins::{Format, FormatOption};
use crate::runtime::contract::Contract;
use crate::runtime::value::Value;

pub use crate::runtime::limits::{max_line, set_max_line, DEFAULT_MAX_LINE};

/// The error of a line longer than [`max_line`]: `line` of `source`.
pub fn line_too_long(source: &str, line: u64) -> super::RuntimeError {
    super::RuntimeError::new(
        "hql::io",
        format!(
            "line {line} of {source} is longer than the longest line allowed ({} bytes)",
            max_line()
        ),
    )
    .with_help("a larger limit is `--max-line` with a size in bytes, such as `--max-line 1G`")
}

/// Why a source's bytes cannot be read on, where the host knows more than
/// an I/O error says: a compressed stream cut short or corrupt, a
/// compressed target this run is writing. Carried inside the
/// `std::io::Error` its reader gives (`into_io`), it ends the source with
/// an `hql::io` error naming it (`error`), never a `decode` failure: what
/// follows cannot be read at all, and the records before it were read as
/// usual.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    pub message: String,
    pub help: Option<String>,
}

impl Unreadable {
    /// What `e` says, when a host made it of an `Unreadable`.
    pub fn of(e: &std::io::Error) -> Option<&Unreadable> {
        e.get_ref()?.downcast_ref::<Unreadable>()
    }

    pub fn into_io(self) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, self)
    }

    /// The error that ends the reading of `source`.
    pub fn error(&self, source: &str) -> super::RuntimeError {
        let error =
            super::RuntimeError::new("hql::io", format!("cannot read {source}: {}", self.message));
        match &self.help {
            Some(help) => error.with_help(help.clone()),
            None => error,
        }
    }
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Unreadable {}

/// The error that ends the reading of `source` when `e` says it cannot be
/// read on ([`Unreadable`]); `None` for any other I/O error.
pub fn unreadable(source: &str, e: &std::io::Error) -> Option<super::RuntimeError> {
    Unreadable::of(e).map(|u| u.error(source))
}

/// A format with its codec: one entry of the registry
/// (`crate::formats::FORMATS`) that the session hands the checker and the
/// evaluator.
pub struct Registered {
    pub format: Format,
    pub codec: &'static dyn Codec,
}

/// The formats a run knows, each with its codec: every question of a
/// format that is not a capability of its codec — which format a name or
/// a path's extension means, which names to offer — is asked of it, so
/// that nothing below the registry names a format.
#[derive(Clone, Copy, Default)]
pub struct Formats(pub &'static [Registered]);

impl Formats {
    /// The codec of `format`.
    ///
    /// Every handle a run meets comes from this registry (the checker's
    /// names, `of_path`, the host's configured places), so a format is
    /// always found; the one registry without formats (the checker's
    /// evaluation of defaults) runs nothing that reads or writes.
    pub fn codec(&self, format: Format) -> &'static dyn Codec {
        (self.0.iter())
            .find(|r| r.format == format)
            .map(|r| r.codec)
            .unwrap_or_else(|| panic!("the format {} is not registered", format.name()))
    }

    /// The format a program names `name` (`Json`).
    pub fn named(&self, name: &str) -> Option<Format> {
        self.in_programs().find(|f| f.name() == name)
    }

    /// The formats a program can name, in the registry's order.
    pub fn in_programs(&self) -> impl Iterator<Item = Format> + '_ {
        (self.0.iter())
            .map(|r| r.format)
            .filter(|f| f.def().in_programs)
    }

    /// The format of files named like `path`, by its extension (the one
    /// before a compression's: `orders.csv.gz` is CSV).
    pub fn of_path(&self, path: &str) -> Option<Format> {
        self.in_programs().find(|f| f.is_format_of(path))
    }

    /// The format a program names `name` as other tools spell it (`jsonl`
    /// → `Json`): its name, for a "did you mean".
    pub fn synonym(&self, name: &str) -> Option<&'static str> {
        let folded = name.to_ascii_lowercase();
        (self.in_programs())
            .find(|f| f.def().synonyms.contains(&folded.as_str()))
            .map(|f| f.name())
            .filter(|meant| *meant != name)
    }

    /// The format a file named like `path` most likely holds: its
    /// extension's, or the one it is a synonym of (`.tsv`: `Csv`).
    pub fn meant_by(&self, path: &str) -> Option<Format> {
        self.of_path(path).or_else(|| {
            let ext = crate::runtime::builtins::format_extension(path)?;
            let meant = self.synonym(ext)?;
            self.named(meant)
        })
    }

    /// The names programs write, as help texts list them, each written by
    /// `each` and the last joined by `last` ("or", "and"): "`, Json` or
    /// `, Csv`".
    pub fn names_listed(&self, each: impl Fn(&str) -> String, last: &str) -> String {
        listed(self.in_programs().map(|f| each(f.name())).collect(), last)
    }

    /// The extensions `of_path` knows, as help texts list them: ".jsonl,
    /// .json or .csv".
    pub fn extensions_listed(&self) -> String {
        let each = self.in_programs().flat_map(|f| f.def().extensions);
        listed(each.map(|e| format!(".{e}")).collect(), "or")
    }
}

/// "a, b or c", with `or` the word before the last.
pub fn listed(mut items: Vec<String>, or: &str) -> String {
    let last = items.pop().unwrap_or_default();
    match items.is_empty() {
        true => last,
        false => format!("{} {or} {last}", items.join(", ")),
    }
}

/// Where a source's records come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    File(String),
    Stdin,
    /// A table or query of a database configured in `hql.toml`, which its
    /// format opens itself ([`Input::Database`]) rather than being handed
    /// bytes.
    Database(Database),
}

/// A database a source reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Database {
    /// The database as messages name it: the file as `hql.toml` writes
    /// it, or a server's URL without its password.
    pub written: String,
    pub at: DatabaseAt,
    pub select: Select,
}

/// Where a database is.
#[derive(Debug, Clone, PartialEq)]
pub enum DatabaseAt {
    /// A file (SQLite), resolved against the configuration's folder.
    File(std::path::PathBuf),
    /// A server (PostgreSQL), by its connection URL — which may hold a
    /// password, so it is never printed (`Database::written` is).
    Server(String),
}

/// What a database source reads: a whole table, or a query's rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Select {
    Table(String),
    Query(String),
}

/// What a format reads (`Codec::read`): the host hands bytes only to a
/// format of bytes, a file it can read anywhere only to a format that asks
/// for one (`Codec::reads_files`), and a format that opens its place itself
/// is handed the place.
pub enum Input<'a> {
    /// A byte stream: a file, standard input.
    Bytes(Box<dyn BufRead>),
    /// A whole file, to be read at any offset (Parquet reads its footer
    /// first), as the host opened it.
    File(Seekable),
    /// A database's table or query, readied by the host
    /// (`Host::ready_database`).
    Database(&'a Database),
}

/// A file opened for reading at any offset: a file of the machine, or a
/// file's bytes in memory (a host of files in memory).
pub enum Seekable {
    File(std::fs::File),
    Bytes(Vec<u8>),
}

impl Input<'_> {
    /// The bytes of a byte stream; an error where the source is none.
    pub fn bytes(self, spec: &SourceSpec) -> Result<Box<dyn BufRead>> {
        match self {
            Input::Bytes(reader) => Ok(reader),
            Input::File(Seekable::File(file)) => {
                Ok(Box::new(std::io::BufReader::with_capacity(1 << 16, file)))
            }
            Input::File(Seekable::Bytes(bytes)) => Ok(Box::new(std::io::Cursor::new(bytes))),
            Input::Database(_) => Err(super::RuntimeError::new(
                "hql::format",
                format!(
                    "source `{}` is a database, which {} does not read",
                    spec.name,
                    spec.format.name()
                ),
            )),
        }
    }
}

/// A source: its name in origins, where it is, its format and the schema
/// boundary between the outside's column names and the program's fields.
#[derive(Debug, Clone)]
pub struct SourceSpec {
    /// `origin.source`: the path as given, `"<stdin>"`, or the configured id.
    pub name: Rc<str>,
    pub place: Place,
    pub format: Format,
    pub boundary: Boundary,
}

impl SourceSpec {
    pub fn new(name: &str, place: Place, format: Format) -> SourceSpec {
        SourceSpec {
            name: name.into(),
            place,
            format,
            boundary: Boundary::default(),
        }
    }

    /// The file of a source read from a file.
    pub fn path(&self) -> Option<&str> {
        match &self.place {
            Place::File(p) => Some(p),
            Place::Stdin | Place::Database(_) => None,
        }
    }
}

/// What a source looks like, told before it is read (tooling.md,
/// "Sniffing, never guessing silently"): `seen` says what its first bytes
/// show, `looks` what that suggests, and the fix is to read it as
/// `format` with `options` (`(name, value)`, values as plain text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    pub seen: String,
    pub looks: String,
    pub format: &'static str,
    pub options: Vec<(&'static str, String)>,
}

/// Whose words a hint's fix is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Words {
    /// A `source(file(…), …)` call.
    Program,
    /// The source's table in `hql.toml`.
    Config,
    /// `hql vet`'s flags.
    Flags,
}

impl Hint {
    /// The help line: what it looks like, and the fix for `spec` (read as
    /// `now`) in `words`.
    pub fn help(&self, spec: &SourceSpec, now: &str, words: Words) -> String {
        let path = spec.path().unwrap_or(&spec.name);
        let other = !self.format.eq_ignore_ascii_case(now);
        let fix = match words {
            Words::Program => {
                let args: String = (self.options.iter())
                    .map(|(k, v)| format!(", {k}: {v:?}"))
                    .collect();
                format!(
                    "read it with `source(file({path:?}), {}{args})`",
                    self.format
                )
            }
            Words::Config => {
                let table = self.format.to_ascii_lowercase();
                let mut keys: Vec<String> = Vec::new();
                if other {
                    keys.push(format!("`format = \"{table}\"`"));
                }
                if !self.options.is_empty() {
                    let set: Vec<String> = (self.options.iter())
                        .map(|(k, v)| format!("{k} = {v:?}"))
                        .collect();
                    keys.push(format!("`{table} = {{ {} }}`", set.join(", ")));
                }
                format!(
                    "set {} for source `{}` in hql.toml",
                    keys.join(" and "),
                    spec.name
                )
            }
            Words::Flags => {
                let mut steps: Vec<String> = Vec::new();
                if other {
                    let suffix = self.format.to_ascii_lowercase();
                    steps.push(format!("give the file a `.{suffix}` name"));
                }
                if !self.options.is_empty() {
                    let flags: Vec<String> = (self.options.iter())
                        .map(|(k, v)| format!("--{k} {}", shell_word(v)))
                        .collect();
                    steps.push(format!("pass `{}`", flags.join(" ")));
                }
                steps.join(" and ")
            }
        };
        format!("{}: {fix}", self.looks)
    }
}

/// `text` as one shell word: bare when it needs no quoting, `$'\t'` for
/// a tab, else single-quoted.
fn shell_word(text: &str) -> String {
    let bare = |c: char| c.is_ascii_alphanumeric() || "/._-,".contains(c);
    match text {
        "\t" => "$'\\t'".to_string(),
        t if !t.is_empty() && t.chars().all(bare) => t.to_string(),
        t => format!("'{}'", t.replace('\'', "'\\''")),
    }
}

/// The schema boundary of a source or target, with its format's options
/// (tooling.md, "Format options"): from `hql.toml`, from the named
/// arguments after the format in a program, or from `hql vet`'s and `hql
/// infer`'s flags, each set through [`Boundary::set_option`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Boundary {
    pub columns: Vec<Column>,
    pub csv: CsvOptions,
    pub json: JsonOptions,
}

impl Boundary {
    /// The field an external column name stands for.
    pub fn field_of<'a>(&'a self, external: &'a str) -> (&'a str, Option<&'a Column>) {
        match self
            .columns
            .iter()
            .find(|c| c.index.is_none() && c.external == external)
        {
            Some(c) => (&c.field, Some(c)),
            None => (external, None),
        }
    }

    /// The column that renames the `position`th column (from 1), if any.
    pub fn at_position(&self, position: usize) -> Option<&Column> {
        self.columns.iter().find(|c| c.index == Some(position))
    }

    /// The external column name of a field.
    pub fn external_of<'a>(&'a self, field: &'a str) -> &'a str {
        self.columns
            .iter()
            .find(|c| c.field == field)
            .map_or(field, |c| &c.external)
    }

    /// Set `option` to `value`: a string, a flag or a list of strings as
    /// the option takes (`FormatOption::takes`).
    pub fn set_option(
        &mut self,
        option: FormatOption,
        value: &Value,
    ) -> std::result::Result<(), OptionError> {
        let csv = &mut self.csv;
        match option {
            FormatOption::Delimiter => csv.delimiter = Some(one_character(option, value)?),
            FormatOption::Quote => csv.quote = one_character(option, value)?,
            FormatOption::Header => csv.header = flag(option, value)?,
            FormatOption::EscapeFormulas => csv.escape_formulas = flag(option, value)?,
            FormatOption::Nulls => csv.nulls = Some(strings(option, value)?),
            FormatOption::Encoding => csv.encoding = Encoding::named(text(option, value)?)?,
            FormatOption::At => self.json.at = Some(Pointer::parse(text(option, value)?)?),
        }
        Ok(())
    }

    /// Set each of `options` (a record of option names and values, as a
    /// program's named arguments give them) of a source (`reading`) or a
    /// target of `format`, then check them together.
    pub fn set_options(
        &mut self,
        format: Format,
        reading: bool,
        options: &Value,
    ) -> std::result::Result<(), OptionError> {
        let Value::Record(options) = options else {
            return Ok(());
        };
        for (name, value) in options.iter() {
            let option = (format.option(name, reading))
                .ok_or_else(|| OptionError::unknown(format, name, reading))?;
            self.set_option(option, value)?;
        }
        self.check_options()
    }

    /// What no single option can say wrong: a delimiter that is also the
    /// quote.
    pub fn check_options(&self) -> std::result::Result<(), OptionError> {
        // (A `.tsv` file's tab is never a quote one can write.)
        if self.csv.delimiter.unwrap_or(b',') == self.csv.quote {
            return Err(OptionError::new(
                format!(
                    "the delimiter `{}` is also the quote",
                    char::from(self.csv.quote)
                ),
                "give `quote` another character: `quote: \"'\"`",
            ));
        }
        Ok(())
    }
}

/// A format option's value that cannot be: why, and what to write.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionError {
    pub message: String,
    pub help: String,
}

impl OptionError {
    fn new(message: impl Into<String>, help: impl Into<String>) -> OptionError {
        OptionError {
            message: message.into(),
            help: help.into(),
        }
    }

    /// `option`'s value is not of the kind it takes.
    fn kind(option: FormatOption, value: &Value, example: &str) -> OptionError {
        OptionError::new(
            format!(
                "`{}` takes {}, found {}",
                option.name(),
                option.takes(),
                value.kind_article()
            ),
            format!("for example `{}: {example}`", option.name()),
        )
    }

    /// `name` is no option of `format`'s sources (`reading`) or targets.
    pub fn unknown(format: Format, name: &str, reading: bool) -> OptionError {
        let noun = if reading { "source" } else { "target" };
        let known: Vec<String> = (format.options(reading))
            .map(|o| format!("`{}`", o.name()))
            .collect();
        let help = match known.is_empty() {
            true => format!("a {} {noun} takes no options", format.name()),
            false => format!("a {} {noun} takes {}", format.name(), listed(known, "and")),
        };
        OptionError::new(
            format!("a {} {noun} has no option `{name}`", format.name()),
            help,
        )
    }

    /// As a runtime error (a value known only when the source opens).
    pub fn into_runtime(self) -> super::RuntimeError {
        super::RuntimeError::new("hql::format_option", self.message).with_help(self.help)
    }
}

fn text(option: FormatOption, value: &Value) -> std::result::Result<&str, OptionError> {
    value
        .as_str()
        .ok_or_else(|| OptionError::kind(option, value, "\"…\""))
}

fn flag(option: FormatOption, value: &Value) -> std::result::Result<bool, OptionError> {
    match value {
        Value::Bool(b) => Ok(*b),
        _ => Err(OptionError::kind(option, value, "false")),
    }
}

fn strings(option: FormatOption, value: &Value) -> std::result::Result<Vec<String>, OptionError> {
    let kind = || OptionError::kind(option, value, "[\"NA\", \"\"]");
    let Value::List(items) = value else {
        return Err(kind());
    };
    (items.iter())
        .map(|v| v.as_str().map(str::to_string).ok_or_else(kind))
        .collect()
}

/// A delimiter or quote: one ASCII character other than a line break, the
/// only kind the CSV reader splits on.
fn one_character(option: FormatOption, value: &Value) -> std::result::Result<u8, OptionError> {
    let text = text(option, value)?;
    match text.as_bytes() {
        [byte] if !matches!(byte, b'\n' | b'\r') && byte.is_ascii() => Ok(*byte),
        _ => Err(OptionError::new(
            format!("`{}` is one ASCII character, not {text:?}", option.name()),
            format!(
                "for example `{}: \"{}\"` (a tab is `\"\\t\"`)",
                option.name(),
                if option == FormatOption::Quote {
                    "'"
                } else {
                    ";"
                }
            ),
        )),
    }
}

/// How a CSV file is laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvOptions {
    /// `None`: the file's own default, a tab for a `.tsv` file and a comma
    /// for any other (`CsvOptions::delimiter_for`).
    pub delimiter: Option<u8>,
    pub quote: u8,
    pub header: bool,
    /// The unquoted cell texts read as absent (null where the field admits
    /// it); `None`: the empty cell only.
    pub nulls: Option<Vec<String>>,
    pub encoding: Encoding,
    /// A target's cells that start as a spreadsheet formula does (`=`,
    /// `+`, `-`, `@`, a tab) are written after a `'`.
    pub escape_formulas: bool,
}

impl Default for CsvOptions {
    fn default() -> CsvOptions {
        CsvOptions {
            delimiter: None,
            quote: b'"',
            header: true,
            nulls: None,
            encoding: Encoding::Utf8,
            escape_formulas: false,
        }
    }
}

impl CsvOptions {
    /// The delimiter of the file `path` (none: standard input).
    pub fn delimiter_for(&self, path: Option<&str>) -> u8 {
        // `rows.tsv.gz` is tab-separated too: the extension before a
        // compression's decides, as it decides the format.
        let tsv = path
            .and_then(crate::runtime::builtins::format_extension)
            .is_some_and(|e| e.eq_ignore_ascii_case("tsv"));
        self.delimiter.unwrap_or(if tsv { b'\t' } else { b',' })
    }

    /// Does an unquoted cell of this text read as absent or null?
    pub fn is_null(&self, cell: &[u8]) -> bool {
        match &self.nulls {
            None => cell.is_empty(),
            Some(nulls) => nulls.iter().any(|n| n.as_bytes() == cell),
        }
    }
}

/// The text encoding of a CSV file; a byte-order mark overrides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Latin1,
    Windows1252,
    Utf16,
}

impl Encoding {
    pub const ALL: &'static [Encoding] = &[
        Encoding::Utf8,
        Encoding::Latin1,
        Encoding::Windows1252,
        Encoding::Utf16,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Latin1 => "latin1",
            Encoding::Windows1252 => "windows-1252",
            Encoding::Utf16 => "utf-16",
        }
    }

    /// The encoding named `name`, in any case, its hyphens optional.
    pub fn named(name: &str) -> std::result::Result<Encoding, OptionError> {
        let folded = |n: &str| n.to_ascii_lowercase().replace(['-', '_'], "");
        (Encoding::ALL.iter().copied())
            .find(|e| folded(e.name()) == folded(name))
            .ok_or_else(|| {
                let known = Encoding::ALL.iter().map(|e| format!("`{}`", e.name()));
                OptionError::new(
                    format!("unknown encoding `{name}`"),
                    format!("the encodings are {}", listed(known.collect(), "and")),
                )
            })
    }
}

/// A JSON source's options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonOptions {
    /// The array holding the records inside one enclosing document.
    pub at: Option<Pointer>,
}

/// A JSON pointer (RFC 6901): the keys (or array indexes) from the
/// document's root down to a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    /// As written, for messages.
    pub text: String,
    /// Each step, its `~1` and `~0` read as `/` and `~`.
    pub steps: Vec<String>,
}

impl Pointer {
    pub fn parse(text: &str) -> std::result::Result<Pointer, OptionError> {
        let invalid = |why: &str| {
            OptionError::new(
                format!("`at` is not a JSON pointer: {text:?} {why}"),
                "a JSON pointer is `/` and a key for each level down, `~1` standing for `/` and `~0` for `~` in a key: `\"/data\"`, `\"/response/items\"`",
            )
        };
        if text.is_empty() {
            return Ok(Pointer {
                text: String::new(),
                steps: Vec::new(),
            });
        }
        let Some(rest) = text.strip_prefix('/') else {
            return Err(invalid("does not start with `/`"));
        };
        let steps = (rest.split('/'))
            .map(|step| {
                unescape_step(step).ok_or_else(|| invalid("has a `~` not followed by `0` or `1`"))
            })
            .collect::<std::result::Result<_, _>>()?;
        Ok(Pointer {
            text: text.to_string(),
            steps,
        })
    }
}

/// A pointer's step with `~1` read as `/` and `~0` as `~`; `None` for any
/// other `~`.
fn unescape_step(step: &str) -> Option<String> {
    let mut out = String::with_capacity(step.len());
    let mut chars = step.chars();
    while let Some(c) = chars.next() {
        match c {
            '~' => match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            },
            c => out.push(c),
        }
    }
    Some(out)
}

/// One renamed or typed column (`columns = { amount = { name = "Amount",
/// type = "float" } }`), or one renamed by its position (`{ index = 4 }`).
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub field: String,
    pub external: String,
    pub physical: Option<Physical>,
    pub nullable: bool,
    /// The column's position (from 1) that this field reads, whatever its
    /// header says: one of two columns the header names alike.
    pub index: Option<usize>,
}

/// A column's physical type, applied to a text cell before the declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Physical {
    String,
    Int,
    Float,
    Bool,
}

/// A file target: its name in messages, its path and how it is written.
#[derive(Debug, Clone)]
pub struct TargetSpec {
    pub name: String,
    pub path: String,
    pub format: Format,
    /// Written as one document (a `.json` file: one JSON array) rather
    /// than one record a line (`Format::writes_whole`).
    pub whole: bool,
    pub boundary: Boundary,
    /// A database table configured in `hql.toml`: written record by record
    /// through its format's `Tables` rather than as bytes.
    pub table: Option<TableTarget>,
}

impl TargetSpec {
    /// A file target of `format`.
    pub fn file(path: &str, format: Format) -> TargetSpec {
        TargetSpec {
            name: path.to_string(),
            path: path.to_string(),
            format,
            whole: format.writes_whole(path),
            boundary: Boundary::default(),
            table: None,
        }
    }
}

/// A record read from a source.
pub struct Decoded {
    /// The record, or an `err` of kind `decode`.
    pub value: Value,
    pub origin: Origin,
}

/// A cell as a format of text cells decodes it (CSV): one decision,
/// turned into a value for `validate`, written as JSON text, or checked
/// where it lies (`crate::runtime::scan::LineCheck::verdict_cells`).
pub enum Cell<'a> {
    Null,
    Text(&'a str),
    Int(i64),
    /// An integer beyond i64: its sign and digits, without `+` or leading
    /// zeros.
    Big(String),
    Float(f64),
    /// A decimal no double holds exactly (`1e-400`, twenty digits): its
    /// JSON text, with a fraction or exponent, kept digit for digit.
    Decimal(String),
    Bool(bool),
    /// A list, record or map field's cell, decoded from its JSON text.
    Nested(Value),
}

impl Cell<'_> {
    pub fn into_value(self) -> Value {
        match self {
            Cell::Nested(v) => v,
            cell => cell.to_value(),
        }
    }

    pub fn to_value(&self) -> Value {
        match self {
            Cell::Null => Value::Null,
            Cell::Text(t) => Value::str(*t),
            Cell::Int(n) => Value::Int(*n),
            Cell::Big(digits) | Cell::Decimal(digits) => Value::from_number_text(digits),
            Cell::Float(f) => Value::Float(*f),
            Cell::Bool(b) => Value::Bool(*b),
            Cell::Nested(v) => v.clone(),
        }
    }
}

/// A row read for the line check (`RowCells::each_row_for_check`).
pub enum RowForCheck<'a> {
    /// The row's cells, converted: one per field the contract declares, in
    /// its order (`None` where the row has none), and whether the row has
    /// a value in a column the contract does not declare. The consumer
    /// answers whether it could judge the record from these; if not, the
    /// row comes again as `Text`.
    Cells {
        fields: &'a [Option<Cell<'a>>],
        undeclared: bool,
    },
    /// The JSON text of the record the row decodes to.
    Text(&'a str),
    /// A row that does not decode: its `decode` failure.
    Failed(Decoded),
}

/// The records of a source, one at a time.
pub trait RecordSource: Iterator<Item = Result<Decoded>> {
    /// The record last yielded as it was received, where decoding converted
    /// it (CSV cells read as a contract's types): failure records show this
    /// one. Built only when asked for, so a valid record costs nothing more.
    fn received(&self) -> Option<Value> {
        None
    }

    /// The end-of-stream hook: the source is exhausted, and what is judged
    /// of a source as a whole is judged here; an error ends the stream as
    /// its last item. Called once, by [`next_or_end`], when the source
    /// first gives no record; never when reading stops early (`first()`,
    /// an error, a stopped run), since a source read in part has no end to
    /// judge. The fast paths that read a format's lines or cells where they
    /// lie (`JsonText`, `RowCells`) open no `RecordSource`: a format whose
    /// sources judge at their end offers neither capability.
    fn end(&mut self) -> Result<()> {
        Ok(())
    }
}

/// The next record of `source`, or, the first time it has none, what its
/// end-of-stream hook ([`RecordSource::end`]) gives; `ended` remembers that
/// it ran.
pub fn next_or_end(source: &mut dyn RecordSource, ended: &mut bool) -> Option<Result<Decoded>> {
    if *ended {
        return None;
    }
    let next = source.next();
    if next.is_none() {
        *ended = true;
        return source.end().err().map(Err);
    }
    next
}

pub type DecodedRecords = Box<dyn RecordSource>;

/// Records that need no `received` form: any iterator of them.
pub struct Plain<I>(pub I);

impl<I: Iterator<Item = Result<Decoded>>> Iterator for Plain<I> {
    type Item = Result<Decoded>;

    fn next(&mut self) -> Option<Result<Decoded>> {
        self.0.next()
    }
}

impl<I: Iterator<Item = Result<Decoded>>> RecordSource for Plain<I> {}

/// A format: how what it reads becomes records and records become bytes;
/// what more it can give is asked for by capability (`json_text`, `cells`).
pub trait Codec: Sync {
    /// The records of `input`, the one door every source's records come
    /// through. With a `shape`, a format whose cells are not the
    /// contract's types (CSV's text, SQLite's columns) converts them to
    /// the declared types (language.md §6.1).
    fn read(
        &self,
        input: Input,
        spec: &SourceSpec,
        shape: Option<&Rc<Contract>>,
    ) -> Result<DecodedRecords>;

    /// Does reading depend on the contract the records are validated against?
    fn reads_by_shape(&self) -> bool {
        false
    }

    /// Is it read from a whole file at any offset rather than front to back
    /// (`Input::File`)? Such a format cannot read standard input.
    fn reads_files(&self) -> bool {
        false
    }

    /// Which of a source's columns are read, where the format reads only
    /// some of them, for `--explain`: for `count()` and `report()` over
    /// its cells (`projected`), or for every other reader.
    fn columns_read(&self, _shape: Option<&Rc<Contract>>, _projected: bool) -> Option<String> {
        None
    }

    /// What a source's first bytes, `first` (all of them when `complete`),
    /// suggest where they look like another format or another dialect of
    /// this one (tooling.md, "Sniffing"): a hint for the user, never a
    /// change to the reading.
    fn sniff(&self, _spec: &SourceSpec, _first: &[u8], _complete: bool) -> Option<Hint> {
        None
    }

    /// Its records as JSON texts, which the line check reads as they are
    /// (the counting path, the copier and the threads read such a file's
    /// bytes), and a target of it takes a record as its compact JSON text.
    fn json_text(&self) -> Option<&dyn JsonText> {
        None
    }

    /// Its rows as converted cells, which `count()` and `report()` judge
    /// without building records.
    fn cells(&self) -> Option<&dyn RowCells> {
        None
    }

    /// Its targets as tables that take records (a database's).
    fn tables(&self) -> Option<&dyn Tables> {
        None
    }

    /// Can it hold nested values as they are (failure records go only to
    /// a target that can)?
    fn keeps_nesting(&self) -> bool {
        true
    }

    /// Can it write records of `shape` to `spec`? Asked when a target is
    /// opened, before anything is read or written: a format whose columns
    /// come from the contract refuses a field it has no column for.
    fn check_target(&self, _spec: &TargetSpec, _shape: Option<&Rc<Contract>>) -> Result<()> {
        Ok(())
    }

    /// A writer of records as bytes in this format; `shape` is the
    /// contract of the records when it is known (a CSV header follows its
    /// fields). `None` for a format whose targets take records, not bytes
    /// (a database table: `Codec::tables`).
    fn writer(
        &self,
        _spec: &TargetSpec,
        _shape: Option<&Rc<Contract>>,
    ) -> Option<Box<dyn RecordWriter>> {
        None
    }
}

/// Offered each line of JSON Lines before it is decoded: the value to
/// yield for it, or `None` to have it decoded as usual.
pub type LineReader = Box<dyn FnMut(&[u8]) -> Option<Value>>;

/// The bytes a format of JSON texts reads ([`JsonText::items`]).
pub enum JsonInput {
    /// A whole source: after a byte-order mark, one array or JSON Lines,
    /// as its first significant byte says.
    Whole(Box<dyn BufRead>),
    /// A part of a JSON Lines file cut at a newline: every line a record,
    /// whatever its first byte, and no byte-order mark looked for. `first`
    /// is its first line with its newline, held apart (a huge line's
    /// buffer, which its decoded string then takes).
    Lines {
        first: Option<Vec<u8>>,
        rest: Box<dyn BufRead>,
    },
}

/// The capability of a format whose records are JSON texts, one a line
/// or in one array (`Codec::json_text`): its framing, through which the
/// execution paths read such a file's lines.
pub trait JsonText: Sync {
    /// The records of `input` as stream items of the source `name`, each
    /// line first offered to `line_reader`; `lines_before` lines of the
    /// file come before `input` (0 for a whole file).
    fn items(
        &self,
        input: JsonInput,
        name: Rc<str>,
        lines_before: u64,
        line_reader: Option<LineReader>,
    ) -> Items;
}

/// Consecutive parts of a source read apart (`RowCells::parts`): parts
/// `first..end`, the first of whose rows is row `first_line`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub parts: std::ops::Range<usize>,
    pub first_line: u64,
}

/// The capability of a format whose cells are text (`Codec::cells`): its
/// rows converted by a contract, for the line check.
pub trait RowCells {
    /// Read `input` for the line check: each record, converted by `shape`
    /// as `Codec::read` converts it, handed to `each` as its cells where it
    /// can be and, when `each` answers `false` to those, as the JSON text
    /// it would encode to. With `part`, only the rows of that part (one of
    /// `parts`); a format without parts is never given one.
    fn each_row_for_check(
        &self,
        input: Input,
        spec: &SourceSpec,
        shape: &Rc<Contract>,
        part: Option<&Part>,
        each: &mut dyn FnMut(RowForCheck) -> Result<bool>,
    ) -> Result<()>;

    /// The parts `input` can be read in apart, on threads of their own
    /// (Parquet's row groups), each as its number of rows, when there are
    /// several; `None` for a format read front to back.
    fn parts(&self, _input: Input, _spec: &SourceSpec) -> Result<Option<Vec<u64>>> {
        Ok(None)
    }

    /// Are its cells text that a contract converts (CSV), which `hql
    /// infer` reads as typed cells the way decoding would? Not so for a
    /// format whose cells are typed in the file (Parquet).
    fn cells_are_text(&self) -> bool {
        true
    }
}

/// The capability of a format whose targets are tables that take records
/// (`Codec::tables`), in the run's transaction.
pub trait Tables {
    /// Open `target` (its database readied by `Host::ready_database`);
    /// `shape` is the contract of the records when it is known, `warn`
    /// puts one line where the run's warnings go.
    fn open(
        &self,
        target: &TableTarget,
        shape: Option<&Rc<Contract>>,
        warn: Box<dyn Fn(&str)>,
    ) -> Result<Box<dyn TableSink>>;
}

/// The code of an error a writer meets in the bytes it writes (a full
/// disk): the evaluator adds which target it was.
pub const WRITE_FAILED: &str = "hql::io";

/// Writes records one at a time, then closes the output (a JSON array's `]`).
pub trait RecordWriter {
    fn write(&mut self, out: &mut dyn Write, record: &Value) -> Result<()>;

    /// Write a record given as the compact JSON text [`RecordWriter::write`]
    /// would give it; `false` when this format cannot take it so.
    fn write_json_text(&mut self, _out: &mut dyn Write, _text: &[u8]) -> Result<bool> {
        Ok(false)
    }

    /// Write `n` records given as their compact JSON texts, each followed
    /// by a newline, as they stand; `false` when this format frames records
    /// otherwise (the caller then gives them one at a time).
    fn write_json_lines(&mut self, _out: &mut dyn Write, _text: &[u8], _n: u64) -> Result<bool> {
        Ok(false)
    }

    /// The call that wrote ends (a `write`, a `route`): encode what the
    /// writer gathered, so that a record it cannot take fails that call,
    /// not the run's commit. The run may still write more after it.
    fn settle(&mut self, _out: &mut dyn Write) -> Result<()> {
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Write) -> Result<()>;

    /// The bytes `finish` would write now, for a reader of what was
    /// written so far (a JSON array's `]`).
    fn tail(&self) -> Vec<u8> {
        Vec::new()
    }
}

/// A target being written: the bytes go to a temporary beside it, which
/// replaces the target when the run commits and is removed when it is
/// abandoned.
pub trait PendingFile: Write + Pending {
    /// A statement that wrote this target has ended: what it holds so far,
    /// followed by `tail` (what finishing the format would add, a JSON
    /// array's `]`), is what a later source of the run that names the
    /// target reads (tooling.md, "One run, one output per target").
    fn publish(&mut self, _tail: &[u8]) -> std::io::Result<()> {
        Ok(())
    }
}

/// What a run holds until it ends — a file target's temporary, a
/// database's transaction — and commits or abandons then, all together
/// (tooling.md, "Commit is all or nothing across the run's targets"): the
/// host prepares every one, then commits every one.
pub trait Pending {
    /// The target, as the program named it (for messages).
    fn target(&self) -> String;

    /// Do everything that can fail short of changing the target: write out
    /// and sync a temporary; insert a database's marker row for the run
    /// `run` into its transaction.
    fn prepare(&mut self, run: &str) -> std::io::Result<()>;

    /// What committing does, for the run's journal.
    fn step(&self) -> CommitStep;

    /// Change the target: rename the temporary over it, or commit the
    /// transaction.
    fn commit(self: Box<Self>) -> std::io::Result<()>;

    /// Leave the target as it was, and no temporary behind.
    fn abandon(self: Box<Self>);

    /// The commit stopped past its point of no return (the database, or a
    /// file, already changed): leave the temporary where it is, for the
    /// run's journal to finish the commit by (`hql recover`).
    fn keep(self: Box<Self>) {}
}

/// What one target's commit does.
#[derive(Debug, Clone, PartialEq)]
pub enum CommitStep {
    /// A temporary renamed over a file.
    Rename {
        temp: std::path::PathBuf,
        target: std::path::PathBuf,
    },
    /// A database transaction committed, with the run's marker row.
    Database { path: std::path::PathBuf },
    /// A server's transaction committed, with the run's marker row;
    /// `recover` says where the server's URL is configured.
    Server {
        server: String,
        recover: Option<(std::path::PathBuf, String)>,
    },
    /// Nothing a crash could leave half done (a FIFO written as it goes,
    /// a target held in memory).
    Direct,
}

impl CommitStep {
    /// Does the step commit a database (which commits before any file)?
    pub fn is_database(&self) -> bool {
        matches!(
            self,
            CommitStep::Database { .. } | CommitStep::Server { .. }
        )
    }
}

/// A commit that did not happen: why, and the targets left as they were.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitError {
    pub message: String,
    /// The targets a commit left unchanged (all of them, unless a crash
    /// of the machine's own interrupted the renames).
    pub unchanged: Vec<String>,
    pub help: Option<String>,
}

/// Commit `pending` in order with no journal: every one prepared before
/// the first commits. Hosts whose targets cannot be left half done (in
/// memory) use it as it is.
pub fn commit_in_order(
    mut pending: Vec<Box<dyn Pending>>,
    run: &str,
) -> std::result::Result<(), CommitError> {
    let prepared = pending.iter_mut().try_for_each(|p| p.prepare(run));
    if let Err(e) = prepared {
        return Err(abandon_all(pending, e.to_string()));
    }
    let mut failed = None;
    for p in pending {
        let target = p.target();
        if let Err(e) = p.commit() {
            failed.get_or_insert(CommitError {
                message: e.to_string(),
                unchanged: vec![target],
                help: None,
            });
        }
    }
    failed.map_or(Ok(()), Err)
}

/// Abandon every target after `message` stopped the commit.
pub fn abandon_all(pending: Vec<Box<dyn Pending>>, message: String) -> CommitError {
    let unchanged = pending.iter().map(|p| p.target()).collect();
    for p in pending {
        p.abandon();
    }
    CommitError {
        message,
        unchanged,
        help: None,
    }
}

/// A target that takes records rather than bytes: a database table, whose
/// live schema each batch of records is compared with (tooling.md, schema
/// drift). What it writes stays in the run's transaction until the run
/// ends.
pub trait TableSink {
    /// Take one record; `origin` goes into its failure record if the drift
    /// policy sets it aside.
    fn put(&mut self, record: &Value, origin: Option<&Origin>) -> Result<()>;

    /// The failure records (kind `schema_drift`) of the records set aside
    /// since the last call, for the dead letters.
    fn quarantined(&mut self) -> Vec<Value>;

    /// May the policy set records aside, and to which configured target
    /// (`Some(None)`: none is configured, so `route`'s `err` target)?
    fn dead_letters(&self) -> Option<Option<String>>;

    /// Write what is still buffered: the records written, and the drift met
    /// (`[{column, change, count}]`).
    fn finish(&mut self) -> Result<(i64, Value)>;

    /// The transaction, for the run to commit or abandon when it ends.
    fn into_pending(self: Box<Self>) -> Box<dyn Pending>;
}
