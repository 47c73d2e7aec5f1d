//! `hql.toml`: configured sources and targets, and the schema boundary.
//!
//! Input: the text of an `hql.toml` and its path (`Config::parse`), or a
//! folder to search from upward (`Config::find`). Output: a `Config` whose
//! every key is checked — places resolved against the file's folder, formats
//! known, enumerated values spelled right — or the first `ConfigError`,
//! naming the file and the dotted key (`sources.orders.csv.delimiter`).
//!
//! The keys are walked by hand over a `toml::Table` rather than through
//! serde, so that an unknown key is reported with its whole path and a
//! "did you mean". Ids and columns keep the file's order (the `toml` crate's
//! `preserve_order`). Nothing here opens a data file:
//! that is the runtime's, which reports a missing one as `hql::io`.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;
use toml::{Table, Value};

use crate::check::closest;
use crate::formats::{self, FORMATS};
use crate::runtime::builtins::Format;
use crate::runtime::eval::io::listed;
pub use crate::runtime::eval::io::{Boundary, Column, CsvOptions, JsonOptions, Physical};
pub use crate::runtime::eval::policy::{OnDrift, OnIncompatible, SchemaPolicy, WriteMode};

/// The file name looked up from a program's folder upward.
pub const FILE_NAME: &str = "hql.toml";

/// The checked contents of one `hql.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The `hql.toml` itself, as found or given.
    pub file: PathBuf,
    /// The folder holding it: every path in it is relative to this.
    pub dir: PathBuf,
    pub sources: IndexMap<String, SourceConfig>,
    pub targets: IndexMap<String, TargetConfig>,
}

/// `[sources.ID]`: where records come from and how their columns map onto
/// the program's field names.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceConfig {
    pub id: String,
    pub place: Place,
    /// The schema boundary, one entry per renamed or typed field.
    pub columns: Vec<Column>,
    /// Meaningful only when `place` is a CSV file; defaults otherwise.
    pub csv: CsvOptions,
    /// Meaningful only when `place` is a JSON file; defaults otherwise.
    pub json: JsonOptions,
}

/// `[targets.ID]`: where written records go.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetConfig {
    pub id: String,
    pub place: Place,
    /// Meaningful only when `place` is a CSV file; defaults otherwise.
    pub csv: CsvOptions,
    /// The fields below are meaningful only when `place` is SQLite (a file
    /// target is always replaced whole, atomically); the parser refuses
    /// them on a file so that they are never silently ignored.
    pub mode: WriteMode,
    /// Create the table when it does not exist (default true).
    pub create_table: bool,
    pub schema: SchemaPolicy,
    /// `columns = { F = { type = "numeric" } }` of a PostgreSQL target: the
    /// fields whose columns are `numeric` rather than `bigint` or `double
    /// precision`.
    pub numeric: Vec<String>,
}

/// Where a source reads or a target writes.
///
/// The format lives with the file: a SQLite place has none, so there is no
/// placeholder format to misread.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    File {
        /// Joined with the config's folder.
        path: PathBuf,
        /// As written in `hql.toml`, for messages.
        written: String,
        format: Format,
    },
    Sqlite {
        /// The database file, joined with the config's folder.
        path: PathBuf,
        /// As written in `hql.toml`, for messages.
        written: String,
        /// Required for a target; a source has exactly one of `table` and
        /// `query`.
        table: Option<String>,
        query: Option<String>,
    },
    /// A PostgreSQL server's table or query.
    Postgres {
        url: Connection,
        /// The URL without its password (or the variable that holds it),
        /// for messages.
        written: String,
        /// Required for a target; a source has exactly one of `table` and
        /// `query`.
        table: Option<String>,
        query: Option<String>,
    },
}

/// How a PostgreSQL place's connection URL is given.
#[derive(Debug, Clone, PartialEq)]
pub enum Connection {
    /// `postgres = "postgresql://…"`.
    Url(String),
    /// `postgres_env = "VAR"`: read from the environment when the place is
    /// opened, so no password sits in the file.
    Env(String),
}

impl Connection {
    /// The URL, from the environment when it is kept there.
    pub fn url(&self) -> Result<String, String> {
        match self {
            Connection::Url(url) => Ok(url.clone()),
            Connection::Env(var) => std::env::var(var).map_err(|e| match e {
                std::env::VarError::NotPresent => {
                    format!("environment variable `{var}` (postgres_env) is not set")
                }
                std::env::VarError::NotUnicode(_) => {
                    format!("environment variable `{var}` (postgres_env) is not valid UTF-8")
                }
            }),
        }
    }
}

impl Place {
    /// The place as the user wrote it, for messages.
    pub fn written(&self) -> &str {
        match self {
            Place::File { written, .. }
            | Place::Sqlite { written, .. }
            | Place::Postgres { written, .. } => written,
        }
    }

    /// The path resolved against the config's folder; `None` for a server.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Place::File { path, .. } | Place::Sqlite { path, .. } => Some(path),
            Place::Postgres { .. } => None,
        }
    }

    /// The file format, or `None` for a database place.
    pub fn format(&self) -> Option<Format> {
        match self {
            Place::File { format, .. } => Some(*format),
            Place::Sqlite { .. } | Place::Postgres { .. } => None,
        }
    }
}

/// `columns.F.type`'s spellings: the conversion applied to a cell before
/// the field's declared HQL type.
const PHYSICAL: &[(&str, Physical)] = &[
    ("string", Physical::String),
    ("int", Physical::Int),
    ("float", Physical::Float),
    ("bool", Physical::Bool),
];

/// `format`'s spellings, from the registry: each format a program names,
/// in lower case like every other value in the file (a program writes
/// `Json`, `hql.toml` `"json"`).
fn format_spellings() -> Vec<(String, Format)> {
    (FORMATS.in_programs())
        .map(|f| (f.name().to_ascii_lowercase(), f))
        .collect()
}

/// Which table of `hql.toml` an id belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Source,
    Target,
}

impl EntryKind {
    /// The top-level table: `sources` or `targets`.
    pub fn section(self) -> &'static str {
        match self {
            EntryKind::Source => "sources",
            EntryKind::Target => "targets",
        }
    }

    /// The word for one entry, in messages.
    pub fn noun(self) -> &'static str {
        match self {
            EntryKind::Source => "source",
            EntryKind::Target => "target",
        }
    }

    /// A minimal entry to suggest, e.g. `[sources.orders]` with a file.
    fn example(self, id: &str) -> String {
        let file = match self {
            EntryKind::Source => format!("data/{id}.jsonl"),
            EntryKind::Target => format!("out/{id}.jsonl"),
        };
        format!("[{}.{id}]\nfile = \"{file}\"", self.section())
    }
}

/// A bad `hql.toml`, or an id it does not configure: a static error (exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The `hql.toml` at fault (or, when none was found, where it would be).
    pub file: PathBuf,
    /// The dotted key at fault, e.g. `sources.orders.csv.delimiter`; empty
    /// when the fault is the whole file.
    pub key: String,
    pub message: String,
    pub help: Option<String>,
    /// Where in the file the fault is written — the key, or for a TOML
    /// syntax error the place the parser stopped — when it is known.
    pub at: Option<Box<Located>>,
}

/// A span of an `hql.toml`'s text, with the text, so that a diagnostic can
/// show the line and give its line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub text: Arc<str>,
    /// Byte offsets into `text`.
    pub span: Range<usize>,
}

impl ConfigError {
    fn new(file: &Path, key: String, message: String) -> Self {
        ConfigError {
            file: file.to_path_buf(),
            key,
            message,
            help: None,
            at: None,
        }
    }

    fn with_help(mut self, help: Option<String>) -> Self {
        self.help = help;
        self
    }

    /// The error placed in `text` (the file's), at its key when it has one.
    fn located(mut self, text: &str) -> Self {
        if self.at.is_none() && !self.key.is_empty() {
            self.at = key_span(text, &self.key).map(|span| {
                Box::new(Located {
                    text: text.into(),
                    span,
                })
            });
        }
        self
    }

    /// The 1-based line and column (in characters) where the fault is
    /// written, when known.
    pub fn line_column(&self) -> Option<(usize, usize)> {
        let at = self.at.as_ref()?;
        Some(line_column(&at.text, at.span.start))
    }
}

/// Where the dotted `key` (`sources.orders.csv.delimiter`) is written in
/// `text`: the span of its last part, or of the deepest part written (a
/// key the fault is about may be missing). An id holding a dot is matched
/// too: the parts are joined until a key of the table matches.
fn key_span(text: &str, key: &str) -> Option<Range<usize>> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let parts: Vec<&str> = key.split('.').collect();
    let mut table: &dyn toml_edit::TableLike = doc.as_table();
    let mut span = None;
    let mut i = 0;
    while i < parts.len() {
        let Some((found, item, next)) = (i + 1..=parts.len()).find_map(|j| {
            let name = parts[i..j].join(".");
            let (k, v) = table.get_key_value(&name)?;
            Some((k, v, j))
        }) else {
            break;
        };
        span = found.span().or_else(|| item.span()).or(span);
        i = next;
        match item.as_table_like() {
            Some(inner) => table = inner,
            None => break,
        }
    }
    span
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.file.display())?;
        if !self.key.is_empty() {
            write!(f, "`{}`: ", self.key)?;
        }
        f.write_str(&self.message)?;
        match &self.help {
            Some(help) => write!(f, "\nhelp: {help}"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// The `hql.toml` nearest `start`, walking up to the root; `None` when
    /// there is none, which is no error until a program names an id.
    pub fn find(start: &Path) -> Result<Option<Config>, ConfigError> {
        let Some(file) = locate(start) else {
            return Ok(None);
        };
        let text = std::fs::read_to_string(&file)
            .map_err(|e| ConfigError::new(&file, String::new(), format!("cannot read it: {e}")))?;
        Config::parse(&text, &file).map(Some)
    }

    /// The `hql.toml` at `file` itself (`--config PATH`): no lookup.
    pub fn load(file: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(file)
            .map_err(|e| ConfigError::new(file, String::new(), format!("cannot read it: {e}")))?;
        Config::parse(&text, file)
    }

    /// `--confine`: every configured place is inside the folder of this
    /// file (`..`, absolute paths and symbolic links followed as far as
    /// they exist); the first that leaves it is an error at its key.
    pub fn confine(&self) -> Result<(), ConfigError> {
        let home = resolved(&self.dir);
        let entries = (self
            .sources
            .iter()
            .map(|(id, s)| (EntryKind::Source, id, &s.place)))
        .chain(
            self.targets
                .iter()
                .map(|(id, t)| (EntryKind::Target, id, &t.place)),
        );
        for (kind, id, place) in entries {
            // A server is no path: nothing to confine.
            let Some(path) = place.path() else { continue };
            if resolved(path).starts_with(&home) {
                continue;
            }
            let key = match place {
                Place::File { .. } => "file",
                Place::Sqlite { .. } => "sqlite",
                Place::Postgres { .. } => "postgres",
            };
            let message = format!(
                "`{}` is outside {} (the folder of this {FILE_NAME}), and --confine refuses it",
                place.written(),
                self.dir.display()
            );
            let help = "keep sources and targets in the configuration's folder or below it, or \
                        run without --confine";
            let e = ConfigError::new(
                &self.file,
                format!("{}.{id}.{key}", kind.section()),
                message,
            )
            .with_help(Some(help.to_string()));
            return Err(match std::fs::read_to_string(&self.file) {
                Ok(text) => e.located(&text),
                Err(_) => e,
            });
        }
        Ok(())
    }

    /// Checks the text of an `hql.toml`; `file`'s folder is the base of the
    /// paths inside it.
    pub fn parse(text: &str, file: &Path) -> Result<Config, ConfigError> {
        Config::parse_unplaced(text, file).map_err(|e| e.located(text))
    }

    fn parse_unplaced(text: &str, file: &Path) -> Result<Config, ConfigError> {
        let table: Table = text.parse().map_err(|e| syntax_error(file, text, &e))?;
        let root = Node::root(file, &table);
        root.check_keys(&["sources", "targets"])?;
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let sources = parse_entries(&root, EntryKind::Source, |n, id| parse_source(n, id, &dir))?;
        let targets = parse_entries(&root, EntryKind::Target, |n, id| parse_target(n, id, &dir))?;
        check_dead_letters(file, &targets)?;
        Ok(Config {
            file: file.to_path_buf(),
            dir,
            sources,
            targets,
        })
    }

    /// The source a program names in `source("ID")`.
    pub fn source(&self, id: &str) -> Result<&SourceConfig, ConfigError> {
        let known = || self.sources.keys().map(String::as_str);
        self.sources
            .get(id)
            .ok_or_else(|| unknown_id(&self.file, EntryKind::Source, id, known))
    }

    /// The target a program names in `target("ID")`.
    pub fn target(&self, id: &str) -> Result<&TargetConfig, ConfigError> {
        let known = || self.targets.keys().map(String::as_str);
        self.targets
            .get(id)
            .ok_or_else(|| unknown_id(&self.file, EntryKind::Target, id, known))
    }

    /// What to say when a program names an id but `find(start)` found no
    /// `hql.toml`: the help shows the smallest file that would do.
    pub fn none_found_error(start: &Path, kind: EntryKind, id: &str) -> ConfigError {
        let message = format!("no {FILE_NAME} found from {} upward", start.display());
        let help = format!(
            "{} `{id}` is configured in {FILE_NAME}; create {} with:\n{}",
            capitalized(kind.noun()),
            start.join(FILE_NAME).display(),
            kind.example(id)
        );
        ConfigError::new(&start.join(FILE_NAME), String::new(), message).with_help(Some(help))
    }
}

/// `path` made absolute, its `.` and `..` taken out, and its longest part
/// that exists with its symbolic links followed: where it really points.
fn resolved(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut plain = PathBuf::new();
    for part in absolute.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                plain.pop();
            }
            other => plain.push(other),
        }
    }
    let mut existing = plain.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => break,
        }
    }
    let mut out = existing
        .canonicalize()
        .unwrap_or_else(|_| existing.to_path_buf());
    out.extend(rest.iter().rev());
    out
}

/// The first `hql.toml` in `start` or a folder above it. A relative start
/// is made absolute first, or the walk would stop at its first component.
fn locate(start: &Path) -> Option<PathBuf> {
    let start = if start.as_os_str().is_empty() {
        Path::new(".")
    } else {
        start
    };
    let start = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
    start
        .ancestors()
        .map(|dir| dir.join(FILE_NAME))
        .find(|file| file.is_file())
}

/// A TOML syntax error, placed by line and column since there is no key yet.
fn syntax_error(file: &Path, text: &str, error: &toml::de::Error) -> ConfigError {
    let reason = error.message().trim_end();
    let message = match error.span() {
        Some(span) => {
            let (line, column) = line_column(text, span.start);
            format!("invalid TOML at line {line}, column {column}: {reason}")
        }
        None => format!("invalid TOML: {reason}"),
    };
    let mut e = ConfigError::new(file, String::new(), message);
    e.at = error.span().map(|span| {
        Box::new(Located {
            text: text.into(),
            span,
        })
    });
    e
}

/// The 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// "did you mean `x`?" for the closest candidates, if any is close.
fn did_you_mean<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    let close = closest(word, candidates);
    match close.as_slice() {
        [] => None,
        [one] => Some(format!("did you mean `{one}`?")),
        many => Some(format!("did you mean one of {}?", quoted_list(many))),
    }
}

fn quoted_list<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| format!("`{}`", w.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An id the program names but the file does not configure.
fn unknown_id<'a, I>(file: &Path, kind: EntryKind, id: &str, known: impl Fn() -> I) -> ConfigError
where
    I: Iterator<Item = &'a str>,
{
    let message = format!("unknown {} `{id}`", kind.noun());
    let configured: Vec<&str> = known().collect();
    let help = did_you_mean(id, known()).unwrap_or_else(|| match configured.as_slice() {
        [] => format!(
            "{FILE_NAME} configures no {}; add:\n{}",
            kind.section(),
            kind.example(id)
        ),
        ids => format!("the configured {} are {}", kind.section(), quoted_list(ids)),
    });
    ConfigError::new(file, kind.section().to_string(), message).with_help(Some(help))
}

/// One table of the file being walked, with its dotted key for errors.
struct Node<'a> {
    file: &'a Path,
    key: String,
    table: &'a Table,
}

impl<'a> Node<'a> {
    fn root(file: &'a Path, table: &'a Table) -> Self {
        Node {
            file,
            key: String::new(),
            table,
        }
    }

    /// The dotted key of `name` inside this table (this table's own key
    /// when `name` is empty).
    fn key_of(&self, name: &str) -> String {
        match (self.key.is_empty(), name.is_empty()) {
            (_, true) => self.key.clone(),
            (true, false) => name.to_string(),
            (false, false) => format!("{}.{name}", self.key),
        }
    }

    fn error(&self, name: &str, message: impl Into<String>) -> ConfigError {
        ConfigError::new(self.file, self.key_of(name), message.into())
    }

    /// Refuses any key outside `known`, suggesting the nearest known one.
    fn check_keys(&self, known: &[&str]) -> Result<(), ConfigError> {
        let Some(unknown) = self.table.keys().find(|k| !known.contains(&k.as_str())) else {
            return Ok(());
        };
        let help = did_you_mean(unknown, known.iter().copied())
            .or_else(|| Some(format!("the keys here are {}", quoted_list(known))));
        Err(self
            .error(unknown, format!("unknown key `{unknown}`"))
            .with_help(help))
    }

    fn has(&self, name: &str) -> bool {
        self.table.contains_key(name)
    }

    /// The table at `value`, as a node under `name`.
    fn node(&self, name: &str, value: &'a Value) -> Result<Node<'a>, ConfigError> {
        match value {
            Value::Table(table) => Ok(Node {
                file: self.file,
                key: self.key_of(name),
                table,
            }),
            other => Err(self.expected(name, "a table", other)),
        }
    }

    fn child(&self, name: &str) -> Result<Option<Node<'a>>, ConfigError> {
        self.table.get(name).map(|v| self.node(name, v)).transpose()
    }

    fn string(&self, name: &str) -> Result<Option<&'a str>, ConfigError> {
        match self.table.get(name) {
            None => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Err(self.error(name, "is empty")),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.expected(name, "a string", other)),
        }
    }

    fn flag(&self, name: &str) -> Result<Option<bool>, ConfigError> {
        match self.table.get(name) {
            None => Ok(None),
            Some(Value::Boolean(b)) => Ok(Some(*b)),
            Some(other) => Err(self.expected(name, "true or false", other)),
        }
    }

    /// An enumerated value: one of `choices`' spellings.
    fn choice<T: Copy>(&self, name: &str, choices: &[(&str, T)]) -> Result<Option<T>, ConfigError> {
        let Some(text) = self.string(name)? else {
            return Ok(None);
        };
        if let Some((_, value)) = choices.iter().find(|(spelling, _)| *spelling == text) {
            return Ok(Some(*value));
        }
        let spellings: Vec<&str> = choices.iter().map(|(s, _)| *s).collect();
        let help = did_you_mean(text, spellings.iter().copied())
            .unwrap_or_else(|| format!("expected one of {}", quoted_list(&spellings)));
        Err(self
            .error(name, format!("unknown value `{text}`"))
            .with_help(Some(help)))
    }

    fn expected(&self, name: &str, what: &str, found: &Value) -> ConfigError {
        self.error(name, format!("expected {what}, found {}", found.type_str()))
    }
}

/// `[sources.*]` or `[targets.*]`, each entry parsed by `parse`.
fn parse_entries<T>(
    root: &Node,
    kind: EntryKind,
    parse: impl Fn(&Node, &str) -> Result<T, ConfigError>,
) -> Result<IndexMap<String, T>, ConfigError> {
    let Some(section) = root.child(kind.section())? else {
        return Ok(IndexMap::new());
    };
    let mut entries = IndexMap::new();
    for (id, value) in section.table {
        let entry = section.node(id, value)?;
        entries.insert(id.clone(), parse(&entry, id)?);
    }
    Ok(entries)
}

/// The keys only a database place (SQLite, PostgreSQL) takes.
const SQLITE_ONLY: &[&str] = &["table", "query", "mode", "create_table", "schema"];

const SOURCE_KEYS: &[&str] = &[
    "file",
    "sqlite",
    "postgres",
    "postgres_env",
    "format",
    "table",
    "query",
    "columns",
    "csv",
    "json",
];

const TARGET_KEYS: &[&str] = &[
    "file",
    "sqlite",
    "postgres",
    "postgres_env",
    "format",
    "csv",
    "json",
    "table",
    "mode",
    "create_table",
    "schema",
    "columns",
];

fn parse_source(node: &Node, id: &str, dir: &Path) -> Result<SourceConfig, ConfigError> {
    node.check_keys(SOURCE_KEYS)?;
    let place = parse_place(node, dir, EntryKind::Source)?;
    let options = parse_options(node, &place, EntryKind::Source)?;
    Ok(SourceConfig {
        id: id.to_string(),
        columns: parse_columns(node)?,
        csv: options.csv,
        json: options.json,
        place,
    })
}

fn parse_target(node: &Node, id: &str, dir: &Path) -> Result<TargetConfig, ConfigError> {
    node.check_keys(TARGET_KEYS)?;
    let place = parse_place(node, dir, EntryKind::Target)?;
    Ok(TargetConfig {
        id: id.to_string(),
        csv: parse_options(node, &place, EntryKind::Target)?.csv,
        mode: node.choice("mode", WriteMode::CHOICES)?.unwrap_or_default(),
        create_table: node.flag("create_table")?.unwrap_or(true),
        schema: parse_schema(node)?,
        numeric: parse_numeric(node, &place)?,
        place,
    })
}

/// A PostgreSQL target's `columns = { F = { type = "numeric" } }`: the
/// fields whose columns `create_table` and `evolve` make `numeric`.
fn parse_numeric(node: &Node, place: &Place) -> Result<Vec<String>, ConfigError> {
    let Some(columns) = node.child("columns")? else {
        return Ok(Vec::new());
    };
    if !matches!(place, Place::Postgres { .. }) {
        return Err(node
            .error(
                "columns",
                "a target's `columns` types a PostgreSQL table's columns",
            )
            .with_help(Some(
                "leave it out: this target's columns follow the records' types".to_string(),
            )));
    }
    let mut numeric = Vec::new();
    for (field, value) in columns.table.iter() {
        let column = columns.node(field, value)?;
        column.check_keys(&["type"])?;
        match column.string("type")? {
            Some("numeric") => numeric.push(field.to_string()),
            Some(other) => {
                return Err(column
                    .error(
                        "type",
                        format!("`{other}` is not a column type a target takes"),
                    )
                    .with_help(Some(
                        "`type = \"numeric\"` keeps a number exact, at any size; the other \
                         columns follow the contract's types"
                            .to_string(),
                    )))
            }
            None => {
                return Err(column
                    .error("", "names no `type`")
                    .with_help(Some("write `{ type = \"numeric\" }`".to_string())))
            }
        }
    }
    Ok(numeric)
}

/// Exactly one of `file`, `sqlite`, `postgres` and `postgres_env`, with
/// the keys that go with it.
fn parse_place(node: &Node, dir: &Path, kind: EntryKind) -> Result<Place, ConfigError> {
    const PLACES: [&str; 4] = ["file", "sqlite", "postgres", "postgres_env"];
    let mut given = Vec::new();
    for key in PLACES {
        if let Some(value) = node.string(key)? {
            given.push((key, value));
        }
    }
    match given.as_slice() {
        [] => Err(node
            .error(
                "",
                format!("this {} has no place to read or write", kind.noun()),
            )
            .with_help(Some(
                "add `file = \"PATH\"`, `sqlite = \"PATH\"` or `postgres = \"URL\"`".to_string(),
            ))),
        [("file", written)] => parse_file_place(node, dir, written),
        [("sqlite", written)] => parse_sqlite_place(node, dir, written, kind),
        [(key, value)] => parse_postgres_place(node, key, value, kind),
        [(first, _), (second, _), ..] => Err(node
            .error(second, format!("both `{first}` and `{second}` are set"))
            .with_help(Some(format!(
                "a {} is one place: keep one of them",
                kind.noun()
            )))),
    }
}

/// A PostgreSQL place: `postgres = "URL"` or `postgres_env = "VAR"`.
fn parse_postgres_place(
    node: &Node,
    key: &str,
    value: &str,
    kind: EntryKind,
) -> Result<Place, ConfigError> {
    let (table, query) = database_keys(node, kind, "a PostgreSQL table or query".into())?;
    let (url, written) = match key {
        "postgres" => {
            let written = without_password(value)
                .map_err(|why| node.error(key, format!("not a PostgreSQL URL: {why}")))?;
            (Connection::Url(value.to_string()), written)
        }
        _ => (Connection::Env(value.to_string()), format!("${value}")),
    };
    Ok(Place::Postgres {
        url,
        written,
        table,
        query,
    })
}

/// A PostgreSQL URL (`postgresql://user:secret@host:5432/db?…`) without
/// its password, for messages; why it is not one, when it is not.
pub fn without_password(url: &str) -> Result<String, String> {
    let rest = ["postgresql://", "postgres://"]
        .iter()
        .find_map(|scheme| url.strip_prefix(scheme).map(|rest| (scheme, rest)));
    let Some((scheme, rest)) = rest else {
        return Err("it does not start with `postgresql://`".into());
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let shown = match authority.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split(':').next().unwrap_or_default();
            format!("{user}@{host}")
        }
        None => authority.to_string(),
    };
    // A password in the query string (`?password=…`) is left out too.
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|kv| !kv.to_ascii_lowercase().starts_with("password="))
                .collect();
            match kept.is_empty() {
                true => path.to_string(),
                false => format!("{path}?{}", kept.join("&")),
            }
        }
        None => tail.to_string(),
    };
    Ok(format!("{scheme}{shown}{tail}"))
}

fn parse_file_place(node: &Node, dir: &Path, written: &str) -> Result<Place, ConfigError> {
    if let Some(key) = SQLITE_ONLY.iter().find(|k| node.has(k)) {
        return Err(node
            .error(key, format!("`{key}` applies only to a database place"))
            .with_help(Some(format!(
                "this entry is the file `{written}`; `{key}` needs `sqlite = \"PATH\"` or `postgres = \"URL\"`"
            ))));
    }
    let spellings = format_spellings();
    let choices: Vec<(&str, Format)> = spellings.iter().map(|(s, f)| (s.as_str(), *f)).collect();
    let format = match node.choice("format", &choices)? {
        Some(format) => format,
        None => format_from_extension(node, written)?,
    };
    Ok(Place::File {
        path: dir.join(written),
        written: written.to_string(),
        format,
    })
}

fn format_from_extension(node: &Node, written: &str) -> Result<Format, ConfigError> {
    FORMATS.of_path(written).ok_or_else(|| {
        let spellings = format_spellings();
        let named = spellings.iter().map(|(s, _)| format!("`format = \"{s}\"`"));
        node.error(
            "file",
            format!("cannot tell the format of `{written}` from its extension"),
        )
        .with_help(Some(format!(
            "name it {}, or add {}",
            FORMATS.extensions_listed(),
            listed(named.collect(), "or")
        )))
    })
}

fn parse_sqlite_place(
    node: &Node,
    dir: &Path,
    written: &str,
    kind: EntryKind,
) -> Result<Place, ConfigError> {
    let what = format!("the SQLite database `{written}`");
    let (table, query) = database_keys(node, kind, what)?;
    Ok(Place::Sqlite {
        path: dir.join(written),
        written: written.to_string(),
        table,
        query,
    })
}

/// A database place's `table` and `query`, the keys of a file refused
/// (`what` names the entry for the help).
fn database_keys(
    node: &Node,
    kind: EntryKind,
    what: String,
) -> Result<(Option<String>, Option<String>), ConfigError> {
    if let Some(key) = ["format", "csv", "json"].into_iter().find(|k| node.has(k)) {
        return Err(node
            .error(key, format!("`{key}` applies only to a file"))
            .with_help(Some(format!("this entry is {what}"))));
    }
    let table = node.string("table")?.map(str::to_string);
    let query = node.string("query")?.map(str::to_string);
    check_table_or_query(node, kind, table.is_some(), query.is_some())?;
    Ok((table, query))
}

/// A SQLite source reads one table or one query; a target writes a table
/// (a target has no `query` key, so `check_keys` already refused one).
fn check_table_or_query(
    node: &Node,
    kind: EntryKind,
    table: bool,
    query: bool,
) -> Result<(), ConfigError> {
    match (kind, table, query) {
        (EntryKind::Source, true, true) => Err(node
            .error("query", "both `table` and `query` are set")
            .with_help(Some("a source reads one table or one query".to_string()))),
        (EntryKind::Source, false, false) => Err(node
            .error("", "a database source needs `table` or `query`")
            .with_help(Some("add `table = \"NAME\"`".to_string()))),
        (EntryKind::Target, false, _) => Err(node
            .error("", "a database target needs `table`")
            .with_help(Some("add `table = \"NAME\"`".to_string()))),
        _ => Ok(()),
    }
}

/// `columns = { FIELD = "External" | { name, type, nullable } }`.
fn parse_columns(node: &Node) -> Result<Vec<Column>, ConfigError> {
    let Some(columns) = node.child("columns")? else {
        return Ok(Vec::new());
    };
    let list = columns
        .table
        .iter()
        .map(|(field, value)| parse_column(&columns, field, value))
        .collect::<Result<Vec<_>, _>>()?;
    check_distinct_columns(&columns, &list)?;
    Ok(list)
}

fn parse_column(columns: &Node, field: &str, value: &Value) -> Result<Column, ConfigError> {
    let mut column = Column {
        field: field.to_string(),
        external: field.to_string(),
        physical: None,
        nullable: false,
        index: None,
    };
    match value {
        Value::String(name) if name.is_empty() => Err(columns.error(field, "is empty")),
        Value::String(name) => {
            column.external = name.clone();
            Ok(column)
        }
        Value::Table(_) => {
            let node = columns.node(field, value)?;
            node.check_keys(&["name", "type", "nullable", "index"])?;
            if let Some(name) = node.string("name")? {
                column.external = name.to_string();
            }
            column.index = parse_index(&node)?;
            column.physical = node.choice("type", PHYSICAL)?;
            column.nullable = node.flag("nullable")?.unwrap_or(false);
            Ok(column)
        }
        other => Err(columns.expected(
            field,
            "a column name or a table { name, type, nullable }",
            other,
        )),
    }
}

/// `index = N`: the field reads the `N`th column (from 1), whatever the
/// header names it.
fn parse_index(node: &Node) -> Result<Option<usize>, ConfigError> {
    match node.table.get("index") {
        None => Ok(None),
        Some(Value::Integer(n)) if *n >= 1 => Ok(usize::try_from(*n).ok()),
        Some(Value::Integer(_)) => Err(node
            .error("index", "a column's position counts from 1")
            .with_help(Some("`index = 1` is the first column".to_string()))),
        Some(other) => Err(node.expected("index", "a column's position (from 1)", other)),
    }
}

/// Two fields reading one column would make one cell two fields' value:
/// almost surely a slip of the pen.
fn check_distinct_columns(columns: &Node, list: &[Column]) -> Result<(), ConfigError> {
    let same = |a: &Column, b: &Column| match (a.index, b.index) {
        (None, None) => a.external == b.external,
        (a, b) => a.is_some() && a == b,
    };
    for (i, column) in list.iter().enumerate() {
        if let Some(other) = list[..i].iter().find(|c| same(c, column)) {
            return Err(columns.error(
                &column.field,
                match column.index {
                    Some(n) => format!("column {n} is already read by the field `{}`", other.field),
                    None => format!(
                        "column `{}` is already read by the field `{}`",
                        column.external, other.field
                    ),
                },
            ));
        }
    }
    Ok(())
}

/// The format's table of options (`csv = { delimiter = ";" }`, `json = {
/// at = "/data" }`), allowed only on a file of that format: each key one of
/// the options its sources (or targets) take, set as a program's named
/// argument is (`Boundary::set_option`).
fn parse_options(node: &Node, place: &Place, kind: EntryKind) -> Result<Boundary, ConfigError> {
    let mut boundary = Boundary::default();
    let reading = kind == EntryKind::Source;
    for format in FORMATS.0.iter().map(|r| r.format) {
        let key = format.name().to_ascii_lowercase();
        if format.def().options.is_empty() {
            continue;
        }
        let Some(table) = node.child(&key)? else {
            continue;
        };
        if place.format() != Some(format) {
            let noun = format.name().to_ascii_uppercase();
            return Err(node
                .error(&key, format!("`{key}` options apply only to a {noun} file"))
                .with_help(Some(format!("`{}` is not read as {noun}", place.written()))));
        }
        let names: Vec<&str> = format.options(reading).map(|o| o.name()).collect();
        table.check_keys(&names)?;
        for (name, value) in table.table {
            let Some(option) = format.option(name, reading) else {
                continue;
            };
            let Some(converted) = option_value(value) else {
                return Err(table.expected(name, option.takes(), value));
            };
            (boundary.set_option(option, &converted))
                .map_err(|e| table.error(name, e.message).with_help(Some(e.help)))?;
        }
        (boundary.check_options())
            .map_err(|e| table.error("quote", e.message).with_help(Some(e.help)))?;
    }
    Ok(boundary)
}

/// A TOML value as the value a format option is given in a program.
fn option_value(value: &Value) -> Option<crate::runtime::value::Value> {
    use crate::runtime::value::Value as V;
    Some(match value {
        Value::String(s) => V::str(s.as_str()),
        Value::Boolean(b) => V::Bool(*b),
        Value::Integer(n) => V::Int(*n),
        Value::Array(items) => V::list(items.iter().map(option_value).collect::<Option<_>>()?),
        _ => return None,
    })
}

/// `schema = { on_drift, allow_type_widening, on_incompatible,
/// relax_nullability_on_missing, dead_letters }`.
fn parse_schema(node: &Node) -> Result<SchemaPolicy, ConfigError> {
    let Some(schema) = node.child("schema")? else {
        return Ok(SchemaPolicy::default());
    };
    schema.check_keys(&[
        "on_drift",
        "allow_type_widening",
        "on_incompatible",
        "relax_nullability_on_missing",
        "dead_letters",
    ])?;
    let defaults = SchemaPolicy::default();
    Ok(SchemaPolicy {
        on_drift: schema
            .choice("on_drift", OnDrift::CHOICES)?
            .unwrap_or_default(),
        allow_type_widening: schema
            .flag("allow_type_widening")?
            .unwrap_or(defaults.allow_type_widening),
        on_incompatible: schema
            .choice("on_incompatible", OnIncompatible::CHOICES)?
            .unwrap_or_default(),
        relax_nullability_on_missing: schema
            .flag("relax_nullability_on_missing")?
            .unwrap_or(defaults.relax_nullability_on_missing),
        dead_letters: schema.string("dead_letters")?.map(str::to_string),
    })
}

/// `schema.dead_letters` names a configured target that can hold failure
/// records, which (like `route`'s `err` target) is a JSON file. A target is
/// never its own dead letters: only a SQLite target has a `schema`.
fn check_dead_letters(
    file: &Path,
    targets: &IndexMap<String, TargetConfig>,
) -> Result<(), ConfigError> {
    for target in targets.values() {
        let Some(id) = &target.schema.dead_letters else {
            continue;
        };
        let fault = match targets.get(id) {
            None => Some(unknown_id(file, EntryKind::Target, id, || {
                targets.keys().map(String::as_str)
            })),
            Some(letters) => not_json_fault(file, letters),
        };
        if let Some(mut fault) = fault {
            fault.key = format!("targets.{}.schema.dead_letters", target.id);
            return Err(fault);
        }
    }
    Ok(())
}

fn not_json_fault(file: &Path, letters: &TargetConfig) -> Option<ConfigError> {
    // Failure records are written as JSON text: a format whose records are.
    if (letters.place.format()).is_some_and(|f| formats::codec(f).json_text().is_some()) {
        return None;
    }
    let message = format!(
        "the dead letters `{}` are not a JSON file: failure records are written as JSON",
        letters.id
    );
    let help = "name a target with `file = \"PATH.jsonl\"`".to_string();
    Some(ConfigError::new(file, String::new(), message).with_help(Some(help)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = r#"
[sources.orders]
file = "data/orders.csv"
format = "csv"
columns = { order_id = "Order ID", amount = { name = "Amount", type = "float", nullable = true } }
csv = { delimiter = ";", quote = "'", header = false, nulls = ["NA"], encoding = "latin1" }

[sources.legacy]
sqlite = "legacy.db"
query = "select * from t"

[targets.clean_orders]
file = "out/clean.jsonl"

[targets.dead_orders]
file = "out/dead.json"

[targets.warehouse]
sqlite = "out/warehouse.db"
table = "orders"
mode = "upsert"
create_table = false
schema = { on_drift = "evolve", allow_type_widening = false, on_incompatible = "quarantine", relax_nullability_on_missing = true, dead_letters = "dead_orders" }
"#;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("/proj/hql.toml"))
    }

    fn error(text: &str) -> ConfigError {
        parse(text).expect_err("the config should be refused")
    }

    #[test]
    fn full_example_parses_sources() {
        let config = parse(FULL).unwrap();
        assert_eq!(config.dir, Path::new("/proj"));
        let orders = config.source("orders").unwrap();
        assert_eq!(
            orders.place,
            Place::File {
                path: PathBuf::from("/proj/data/orders.csv"),
                written: "data/orders.csv".into(),
                format: formats::csv::FORMAT.format,
            }
        );
        assert_eq!(
            orders.csv,
            CsvOptions {
                delimiter: Some(b';'),
                quote: b'\'',
                header: false,
                nulls: Some(vec!["NA".into()]),
                encoding: crate::runtime::eval::io::Encoding::Latin1,
                escape_formulas: false,
            }
        );
        let amount = orders.columns.iter().find(|c| c.field == "amount").unwrap();
        assert_eq!(amount.external, "Amount");
        assert_eq!(amount.physical, Some(Physical::Float));
        assert!(amount.nullable);
        let id = orders
            .columns
            .iter()
            .find(|c| c.field == "order_id")
            .unwrap();
        assert_eq!(
            (id.external.as_str(), id.physical, id.nullable),
            ("Order ID", None, false)
        );
    }

    #[test]
    fn full_example_parses_sqlite_source_and_targets() {
        let config = parse(FULL).unwrap();
        let legacy = config.source("legacy").unwrap();
        assert_eq!(legacy.place.format(), None);
        assert!(matches!(&legacy.place,
            Place::Sqlite { table: None, query: Some(q), .. } if q == "select * from t"));
        let warehouse = config.target("warehouse").unwrap();
        assert_eq!(
            warehouse.place.path(),
            Some(Path::new("/proj/out/warehouse.db"))
        );
        assert_eq!(warehouse.mode, WriteMode::Upsert);
        assert!(!warehouse.create_table);
        let expected = SchemaPolicy {
            on_drift: OnDrift::Evolve,
            allow_type_widening: false,
            on_incompatible: OnIncompatible::Quarantine,
            relax_nullability_on_missing: true,
            dead_letters: Some("dead_orders".into()),
        };
        assert_eq!(warehouse.schema, expected);
        let dead = config.target("dead_orders").unwrap();
        assert_eq!(dead.place.format(), Some(formats::json::FORMAT.format));
    }

    #[test]
    fn defaults_fill_what_is_left_out() {
        let config = parse(
            "[sources.a]\nfile = \"a.ndjson\"\n[sources.b]\nfile = \"b.CSV\"\n\
             [targets.t]\nsqlite = \"w.db\"\ntable = \"t\"\n",
        )
        .unwrap();
        assert_eq!(
            config.source("a").unwrap().place.format(),
            Some(formats::json::FORMAT.format)
        );
        let b = config.source("b").unwrap();
        assert_eq!(b.place.format(), Some(formats::csv::FORMAT.format));
        assert_eq!(b.csv, CsvOptions::default());
        assert_eq!(
            (b.csv.delimiter, b.csv.quote, b.csv.header),
            (None, b'"', true)
        );
        assert!(b.columns.is_empty());
        let t = config.target("t").unwrap();
        assert_eq!(t.mode, WriteMode::Append);
        assert!(t.create_table);
        assert_eq!(t.schema.on_drift, OnDrift::Warn);
        assert!(t.schema.allow_type_widening);
        assert_eq!(t.schema.on_incompatible, OnIncompatible::Fail);
        assert!(!t.schema.relax_nullability_on_missing);
        assert_eq!(t.schema.dead_letters, None);
    }

    #[test]
    fn an_empty_file_configures_nothing() {
        let config = parse("").unwrap();
        assert!(config.sources.is_empty() && config.targets.is_empty());
    }

    #[test]
    fn a_column_table_without_name_keeps_the_field_name() {
        let config =
            parse("[sources.s]\nfile = \"s.csv\"\ncolumns = { n = { type = \"int\" } }").unwrap();
        let column = &config.source("s").unwrap().columns[0];
        assert_eq!(column.external, "n");
        assert_eq!(column.physical, Some(Physical::Int));
    }

    #[test]
    fn unknown_key_suggests_the_close_one() {
        let e = error("[sources.orders]\nfile = \"o.csv\"\nfromat = \"csv\"\n");
        assert_eq!(e.file, Path::new("/proj/hql.toml"));
        assert_eq!(e.key, "sources.orders.fromat");
        assert_eq!(e.message, "unknown key `fromat`");
        assert_eq!(e.help.as_deref(), Some("did you mean `format`?"));
    }

    #[test]
    fn unknown_key_far_from_any_lists_the_keys() {
        let e = error("[sources.orders]\nfile = \"o.csv\"\n\ncsv = { separator = \";\" }\n");
        assert_eq!(e.key, "sources.orders.csv.separator");
        let help = e.help.unwrap();
        assert!(help.contains("`delimiter`"), "{help}");
    }

    #[test]
    fn unknown_top_level_key_is_named() {
        let e = error("[source.orders]\nfile = \"o.csv\"\n");
        assert_eq!(e.key, "source");
        assert_eq!(e.help.as_deref(), Some("did you mean `sources`?"));
    }

    #[test]
    fn bad_enum_values_are_refused_with_their_choices() {
        let e = error("[sources.o]\nfile = \"o.txt\"\nformat = \"Json\"\n");
        assert_eq!(e.key, "sources.o.format");
        assert_eq!(e.help.as_deref(), Some("did you mean `json`?"));
        let e = error(
            "[targets.w]\nsqlite = \"w.db\"\ntable = \"t\"\nschema = { on_drift = \"explode\" }\n",
        );
        assert_eq!(e.key, "targets.w.schema.on_drift");
        assert_eq!(e.message, "unknown value `explode`");
        assert_eq!(
            e.help.as_deref(),
            Some("expected one of `warn`, `ignore`, `fail`, `quarantine`, `evolve`")
        );
    }

    #[test]
    fn each_enumerated_key_is_checked() {
        let cases = [
            ("mode = \"merge\"", "targets.w.mode"),
            (
                "schema = { on_incompatible = \"evolve\" }",
                "targets.w.schema.on_incompatible",
            ),
        ];
        for (line, key) in cases {
            let e = error(&format!(
                "[targets.w]\nsqlite = \"w.db\"\ntable = \"t\"\n{line}\n"
            ));
            assert_eq!(e.key, key);
        }
        let e = error("[sources.s]\nfile = \"s.csv\"\ncolumns = { n = { type = \"integer\" } }");
        assert_eq!(e.key, "sources.s.columns.n.type");
        assert!(e.help.unwrap().contains("`int`"));
    }

    #[test]
    fn wrong_value_type_names_what_was_expected() {
        let e = error("[targets.w]\nsqlite = \"w.db\"\ntable = \"t\"\ncreate_table = \"yes\"\n");
        assert_eq!(e.key, "targets.w.create_table");
        assert_eq!(e.message, "expected true or false, found string");
        let e = error("[sources.s]\nfile = 3\n");
        assert_eq!(e.message, "expected a string, found integer");
    }

    #[test]
    fn both_file_and_sqlite_is_refused() {
        let e = error("[sources.o]\nfile = \"o.csv\"\nsqlite = \"o.db\"\ntable = \"o\"\n");
        assert_eq!(e.key, "sources.o.sqlite");
        assert_eq!(e.message, "both `file` and `sqlite` are set");
    }

    #[test]
    fn a_postgres_place_keeps_its_url_and_shows_it_without_the_password() {
        let config = parse(
            "[sources.o]\npostgres = \"postgresql://ada:s3cret@db.example:5433/shop?sslmode=require&password=x\"\ntable = \"shop.orders\"\n\n\
             [sources.e]\npostgres_env = \"SHOP_URL\"\nquery = \"SELECT 1\"\n",
        )
        .unwrap();
        let o = config.source("o").unwrap();
        assert_eq!(
            o.place.written(),
            "postgresql://ada@db.example:5433/shop?sslmode=require"
        );
        assert_eq!(o.place.path(), None);
        assert!(
            matches!(&o.place, Place::Postgres { url: Connection::Url(u), table: Some(t), .. }
            if u.contains("s3cret") && t == "shop.orders")
        );
        let e = config.source("e").unwrap();
        assert_eq!(e.place.written(), "$SHOP_URL");
        assert!(
            matches!(&e.place, Place::Postgres { url: Connection::Env(v), .. } if v == "SHOP_URL")
        );
        let e = error("[sources.o]\npostgres = \"mysql://x\"\ntable = \"t\"\n");
        assert_eq!(e.key, "sources.o.postgres");
        assert!(e.message.contains("not a PostgreSQL URL"), "{}", e.message);
        let e = error(
            "[sources.o]\nsqlite = \"o.db\"\npostgres = \"postgresql://h/d\"\ntable = \"t\"\n",
        );
        assert_eq!(e.message, "both `sqlite` and `postgres` are set");
        let e = error("[sources.o]\npostgres = \"postgresql://h/d\"\n");
        assert_eq!(e.message, "a database source needs `table` or `query`");
        let e = error(
            "[sources.o]\npostgres = \"postgresql://h/d\"\ntable = \"t\"\nformat = \"csv\"\n",
        );
        assert_eq!(e.message, "`format` applies only to a file");
    }

    #[test]
    fn a_url_is_shown_without_its_password() {
        for (url, shown) in [
            ("postgresql://u:p@h/d", "postgresql://u@h/d"),
            ("postgres://u@h:1/d", "postgres://u@h:1/d"),
            ("postgresql://h", "postgresql://h"),
            ("postgresql://u:p:q@h/d?password=p", "postgresql://u@h/d"),
            (
                "postgresql://u:p@h/d?a=1&PASSWORD=p&b=2",
                "postgresql://u@h/d?a=1&b=2",
            ),
        ] {
            assert_eq!(without_password(url).as_deref(), Ok(shown), "{url}");
        }
    }

    #[test]
    fn neither_file_nor_sqlite_is_refused() {
        let e = error("[targets.out]\nformat = \"json\"\n");
        assert_eq!(e.key, "targets.out");
        assert!(e.message.contains("no place"), "{}", e.message);
        assert!(e.help.unwrap().contains("file = "));
    }

    #[test]
    fn sqlite_keys_on_a_file_are_refused() {
        let e = error("[targets.o]\nfile = \"o.jsonl\"\nmode = \"replace\"\n");
        assert_eq!(e.key, "targets.o.mode");
        assert_eq!(e.message, "`mode` applies only to a database place");
        let e = error("[sources.o]\nfile = \"o.jsonl\"\ntable = \"t\"\n");
        assert_eq!(e.key, "sources.o.table");
    }

    #[test]
    fn file_keys_on_sqlite_are_refused() {
        let e = error("[sources.o]\nsqlite = \"o.db\"\ntable = \"t\"\nformat = \"csv\"\n");
        assert_eq!(e.key, "sources.o.format");
        assert_eq!(e.message, "`format` applies only to a file");
    }

    #[test]
    fn sqlite_needs_its_table() {
        let e = error("[targets.w]\nsqlite = \"w.db\"\n");
        assert_eq!(e.key, "targets.w");
        assert_eq!(e.message, "a database target needs `table`");
        let e = error("[sources.s]\nsqlite = \"s.db\"\n");
        assert_eq!(e.message, "a database source needs `table` or `query`");
        let e = error("[sources.s]\nsqlite = \"s.db\"\ntable = \"t\"\nquery = \"q\"\n");
        assert_eq!(e.key, "sources.s.query");
    }

    #[test]
    fn unknown_extension_needs_a_format() {
        let e = error("[sources.o]\nfile = \"o.txt\"\n");
        assert_eq!(e.key, "sources.o.file");
        assert!(e.message.contains("`o.txt`"), "{}", e.message);
        let config = parse("[sources.o]\nfile = \"o.txt\"\nformat = \"csv\"\n").unwrap();
        assert_eq!(
            config.source("o").unwrap().place.format(),
            Some(formats::csv::FORMAT.format)
        );
    }

    #[test]
    fn bad_delimiters_are_refused() {
        for bad in ["\";;\"", "\"\"", "\"é\"", "\"\\n\""] {
            let e = error(&format!(
                "[sources.o]\nfile = \"o.csv\"\ncsv = {{ delimiter = {bad} }}\n"
            ));
            assert_eq!(e.key, "sources.o.csv.delimiter", "{bad}");
        }
        let e = error("[sources.o]\nfile = \"o.csv\"\ncsv = { quote = \",\" }\n");
        assert_eq!(e.key, "sources.o.csv.quote");
    }

    /// Each format's options in its own table, checked as a program's
    /// named arguments are.
    #[test]
    fn format_options_are_read_and_checked() {
        let config =
            parse("[sources.d]\nfile = \"d.json\"\njson = { at = \"/a~1b/c\" }\n").unwrap();
        let at = config.source("d").unwrap().json.at.clone().unwrap();
        assert_eq!(at.steps, ["a/b", "c"]);
        let e = error("[sources.d]\nfile = \"d.json\"\njson = { at = \"data\" }\n");
        assert_eq!(e.key, "sources.d.json.at");
        assert!(e.help.unwrap().contains("JSON pointer"));
        let e = error("[sources.d]\nfile = \"d.csv\"\njson = { at = \"/data\" }\n");
        assert_eq!(e.key, "sources.d.json");
        let e = error("[sources.d]\nfile = \"d.csv\"\ncsv = { encoding = \"ebcdic\" }\n");
        assert_eq!(e.key, "sources.d.csv.encoding");
        assert!(e.help.unwrap().contains("`latin1`"));
        let e = error("[sources.d]\nfile = \"d.csv\"\ncsv = { nulls = \"NA\" }\n");
        assert_eq!(e.key, "sources.d.csv.nulls");
        let e = error("[sources.d]\nfile = \"d.csv\"\ncsv = { escape_formulas = true }\n");
        assert_eq!(e.key, "sources.d.csv.escape_formulas");
        let e = error("[sources.d]\nfile = \"d.csv\"\ncolumns = { a = { index = 0 } }\n");
        assert_eq!(e.key, "sources.d.columns.a.index");
    }

    #[test]
    fn csv_options_on_json_are_refused() {
        let e = error("[sources.o]\nfile = \"o.jsonl\"\ncsv = { header = false }\n");
        assert_eq!(e.key, "sources.o.csv");
        assert_eq!(e.message, "`csv` options apply only to a CSV file");
    }

    #[test]
    fn two_fields_reading_one_column_are_refused() {
        let e =
            error("[sources.o]\nfile = \"o.csv\"\ncolumns = { a = \"X\", b = { name = \"X\" } }\n");
        assert_eq!(e.key, "sources.o.columns.b");
        assert!(e.message.contains("`a`"), "{}", e.message);
    }

    #[test]
    fn syntax_error_gives_line_and_column() {
        let e = error("[sources.o]\nfile = \"o.csv\nformat = \"csv\"\n");
        assert_eq!(e.key, "");
        assert!(
            e.message.starts_with("invalid TOML at line 2, column 14: "),
            "{}",
            e.message
        );
        assert_eq!(e.file, Path::new("/proj/hql.toml"));
    }

    #[test]
    fn line_column_counts_from_one() {
        assert_eq!(line_column("ab\ncdé\nf", 7), (2, 4));
        assert_eq!(line_column("ab", 0), (1, 1));
    }

    #[test]
    fn unknown_id_suggests_a_close_one() {
        let config = parse(FULL).unwrap();
        let e = config.source("ordrs").unwrap_err();
        assert_eq!(e.file, Path::new("/proj/hql.toml"));
        assert_eq!(e.message, "unknown source `ordrs`");
        assert_eq!(e.help.as_deref(), Some("did you mean `orders`?"));
    }

    #[test]
    fn unknown_id_far_from_any_lists_the_ids() {
        let config = parse(FULL).unwrap();
        let e = config.target("zzz").unwrap_err();
        assert_eq!(e.message, "unknown target `zzz`");
        assert_eq!(
            e.help.as_deref(),
            Some("the configured targets are `clean_orders`, `dead_orders`, `warehouse`")
        );
        let e = parse("").unwrap().source("orders").unwrap_err();
        assert!(e.help.unwrap().contains("[sources.orders]"));
    }

    #[test]
    fn dead_letters_must_be_a_configured_json_target() {
        let warehouse = "[targets.w]\nsqlite = \"w.db\"\ntable = \"t\"\n";
        let e = error(&format!(
            "{warehouse}schema = {{ dead_letters = \"dead\" }}\n"
        ));
        assert_eq!(e.key, "targets.w.schema.dead_letters");
        assert_eq!(e.message, "unknown target `dead`");
        let e = error(&format!(
            "{warehouse}schema = {{ dead_letters = \"d\" }}\n[targets.d]\nfile = \"d.csv\"\n"
        ));
        assert_eq!(e.key, "targets.w.schema.dead_letters");
        assert!(e.message.contains("not a JSON file"), "{}", e.message);
        let e = error(&format!("{warehouse}schema = {{ dead_letters = \"w\" }}\n"));
        assert!(
            e.message.contains("`w` are not a JSON file"),
            "{}",
            e.message
        );
    }

    #[test]
    fn display_names_file_key_and_help() {
        let e = error("[sources.orders]\nfile = \"o.csv\"\nfromat = \"csv\"\n");
        assert_eq!(
            e.to_string(),
            "/proj/hql.toml: `sources.orders.fromat`: unknown key `fromat`\n\
             help: did you mean `format`?"
        );
    }

    #[test]
    fn none_found_error_shows_a_minimal_table() {
        let e = Config::none_found_error(Path::new("/proj/app"), EntryKind::Source, "orders");
        assert_eq!(e.message, "no hql.toml found from /proj/app upward");
        let help = e.help.unwrap();
        assert!(
            help.contains("[sources.orders]\nfile = \"data/orders.jsonl\""),
            "{help}"
        );
    }

    /// A fresh folder under the system's temporary folder, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> Self {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos();
            let dir = std::env::temp_dir()
                .join(format!("hql-config-{name}-{}-{nanos}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn find_walks_upward_to_the_nearest_file() {
        let temp = TempDir::new("find");
        let deep = temp.0.join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        let file = temp.0.join("a").join(FILE_NAME);
        std::fs::write(&file, "[sources.orders]\nfile = \"data/o.csv\"\n").unwrap();
        let config = Config::find(&deep).unwrap().expect("found above");
        assert_eq!(config.file, file);
        let orders = config.source("orders").unwrap();
        assert_eq!(
            orders.place.path(),
            Some(temp.0.join("a/data/o.csv").as_path())
        );
        assert_eq!(orders.place.written(), "data/o.csv");
    }

    #[test]
    fn find_reports_errors_of_the_file_it_finds() {
        let temp = TempDir::new("bad");
        std::fs::write(temp.0.join(FILE_NAME), "[sources.o]\nfiel = \"x\"\n").unwrap();
        let e = Config::find(&temp.0).unwrap_err();
        assert_eq!(e.file, temp.0.join(FILE_NAME));
        assert_eq!(e.key, "sources.o.fiel");
    }

    #[test]
    fn find_without_a_file_is_none() {
        let temp = TempDir::new("none");
        // The system's temporary folder might itself lie under an hql.toml;
        // then `find` rightly returns that one, and there is nothing to test.
        if locate(&std::env::temp_dir()).is_none() {
            assert_eq!(Config::find(&temp.0).unwrap(), None);
        } else {
            assert_eq!(locate(&temp.0), locate(&std::env::temp_dir()));
        }
    }
}
