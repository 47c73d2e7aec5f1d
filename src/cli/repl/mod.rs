//! The REPL: `Repl::entry(text) -> Control`, over one `Session`.
//!
//! Entries are HQL code or `:commands`. The interactive editor
//! (`editor.rs`) and the piped mode here both feed entries to the same
//! `Repl`; only the display differs (tables on a terminal, the lines of
//! `hql run` otherwise).

pub mod chart;
mod complete;
mod describe;
mod editor;
mod highlight;
mod table;

use std::borrow::Cow;
use std::io::{BufRead, Read};
use std::rc::Rc;

use crate::cli::run::{print_value, OutputFormat};
use crate::runtime::eval::{Host, RuntimeError};
use crate::runtime::print::to_hql;
use crate::runtime::value::Value;
use crate::session::diagnostic::Diag;
use crate::session::{Session, Sinks, EXIT_FAILED, EXIT_OK};
use crate::syntax::input::{continues_entry, input_status, InputStatus};
use crate::syntax::lexer::{lex, Token};
use crate::syntax::source::SourceMap;
use crate::tooling::export;

pub use editor::run_interactive;

/// Whether the REPL goes on after an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Continue,
    Quit,
}

pub struct Repl {
    session: Session,
    host: Rc<dyn Host>,
    format: OutputFormat,
    /// Terminal width for tables; `None` prints as `hql run` does.
    width: Option<usize>,
    entries: usize,
    /// Did any entry fail (piped mode's exit status)?
    pub failed: bool,
}

/// The commands, with their one-line help (`:help`).
pub const COMMANDS: &[(&str, &str, &str)] = &[
    ("help", "[COMMAND]", "list the commands, or explain one"),
    (
        "type",
        "EXPR",
        "the static type of an expression, without running it",
    ),
    (
        "explain",
        "EXPR",
        "how an expression's pipelines would run (the path chosen, and why), without running it",
    ),
    ("load", "FILE", "run a file into the session"),
    (
        "reset",
        "",
        "forget every entry (the standard library stays)",
    ),
    (
        "vars",
        "",
        "the names this session has bound, with their values",
    ),
    (
        "contract",
        "TYPE",
        "a summary of a type: kind, fields, rules and their identities",
    ),
    (
        "infer",
        "EXPR",
        "a contract every record of a stream or list satisfies",
    ),
    (
        "describe",
        "EXPR",
        "profile the records of a stream or list: a row a field",
    ),
    (
        "hist",
        "EXPR",
        "a histogram of the numbers of a stream or list",
    ),
    (
        "bar",
        "EXPR",
        "a bar chart of a `count_by` result (or of {label, number} records)",
    ),
    (
        "save",
        "FILE",
        "write the declarations and lets as a program (`:save!` replaces a file)",
    ),
    (
        "export",
        "TYPE FORMAT",
        "a type as json-schema, openlineage or contract JSON (as `hql export`)",
    ),
    (
        "set",
        "format hql|json",
        "print values as HQL (the default) or as JSON",
    ),
    ("quit", "", "leave the REPL (Ctrl-D does too)"),
];

impl Repl {
    pub fn new(host: Rc<dyn Host>, width: Option<usize>) -> Repl {
        Repl {
            session: Session::new(host.clone()),
            host,
            format: OutputFormat::Hql,
            width,
            entries: 0,
            failed: false,
        }
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Tables and wide values are laid out for `width` columns from the
    /// next entry on (the terminal was resized).
    pub fn set_width(&mut self, width: usize) {
        self.width = Some(width);
    }

    /// Run one entry: code, or a `:command`.
    pub fn entry(&mut self, text: &str, sinks: &mut Sinks) -> Control {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Control::Continue;
        }
        if let Some(command) = trimmed.strip_prefix(':') {
            return self.command(command, sinks);
        }
        self.entries += 1;
        let name = format!("<repl:{}>", self.entries);
        let (format, width) = (self.format, self.width);
        let status = self.session.submit(&name, text, sinks, &mut |v, sinks| {
            show(v, format, width, sinks)
        });
        self.failed |= status != EXIT_OK;
        Control::Continue
    }

    fn command(&mut self, command: &str, sinks: &mut Sinks) -> Control {
        let (name, arg) = command
            .split_once(char::is_whitespace)
            .unwrap_or((command, ""));
        let arg = arg.trim();
        match name {
            "quit" | "q" | "exit" => return Control::Quit,
            "help" | "h" | "?" => match help(arg) {
                Some(text) => say(sinks, &text),
                None => self.problem(
                    sinks,
                    &format!("no command `:{arg}`; `:help` lists the commands"),
                ),
            },
            "type" | "t" => self.static_type(arg, sinks),
            "explain" if arg.is_empty() => self.problem(sinks, "usage: :explain EXPR"),
            "explain" => {
                self.entries += 1;
                let name = format!("<repl:{}>", self.entries);
                if self.session.explain(&name, arg, sinks) != 0 {
                    self.failed = true;
                }
            }
            "load" | "l" => self.load(arg, sinks),
            "reset" => {
                self.session.reset();
                say(sinks, "the session is empty again");
            }
            "vars" => self.vars(sinks),
            "contract" | "c" if arg.is_empty() => self.problem(sinks, "usage: :contract TYPE"),
            "contract" | "c" => match self.session.contract(arg) {
                Some(c) => say(sinks, c.summary().trim_end()),
                None => self.problem(
                    sinks,
                    &format!("no type named `{arg}`; `:vars` and Tab list what is declared"),
                ),
            },
            "infer" | "i" => self.infer(arg, sinks),
            "describe" | "d" => self.describe(arg, sinks),
            "hist" => self.hist(arg, sinks),
            "bar" => self.bar(arg, sinks),
            "export" => self.export(arg, sinks),
            "save" => self.save(arg, false, sinks),
            "save!" => self.save(arg, true, sinks),
            "set" => self.set(arg, sinks),
            other => self.problem(
                sinks,
                &format!("unknown command `:{other}`; `:help` lists the commands"),
            ),
        }
        Control::Continue
    }

    /// An entry with a line that is not UTF-8 is not run.
    fn not_utf8(&mut self, sinks: &mut Sinks, line: usize, at: usize) {
        self.failed = true;
        let error = RuntimeError::new(
            "hql::lex",
            format!(
                "line {line} of the input is not valid UTF-8 (from its byte {}); its entry was not run",
                at + 1
            ),
        )
        .with_help("the REPL reads UTF-8 text; save the entries as UTF-8");
        sinks.diag(&SourceMap::default(), &Diag::from(&error));
    }

    fn problem(&mut self, sinks: &mut Sinks, message: &str) {
        self.failed = true;
        let _ = sinks.out.flush();
        let _ = writeln!(sinks.err, "{message}");
    }

    /// `:export TYPE FORMAT`: what `hql export` prints for the type.
    fn export(&mut self, arg: &str, sinks: &mut Sinks) {
        let mut words = arg.split_whitespace();
        let (Some(name), Some(format), None) = (words.next(), words.next(), words.next()) else {
            return self.problem(
                sinks,
                "usage: :export TYPE json-schema|openlineage|contract",
            );
        };
        let format = match export::Format::lookup(format) {
            Ok(format) => format,
            Err(message) => return self.problem(sinks, &message),
        };
        match self.session.contract(name) {
            Some(c) => say(sinks, export::export_text(&c, format).trim_end()),
            None => self.problem(
                sinks,
                &format!("no type named `{name}`; `:vars` and Tab list what is declared"),
            ),
        }
    }

    fn static_type(&mut self, expr: &str, sinks: &mut Sinks) {
        if expr.is_empty() {
            return self.problem(sinks, "usage: :type EXPR");
        }
        self.entries += 1;
        let name = format!("<repl:{}>", self.entries);
        match self.session.check(&name, expr, sinks) {
            Ok(checked) => {
                let ty = checked
                    .last_type
                    .map(|t| t.display())
                    .unwrap_or_else(|| "(a statement)".into());
                say(sinks, &ty);
            }
            Err(_) => self.failed = true,
        }
    }

    fn load(&mut self, path: &str, sinks: &mut Sinks) {
        if path.is_empty() {
            return self.problem(sinks, "usage: :load FILE");
        }
        match self.host.read_source(path) {
            Ok(text) => {
                let (format, width) = (self.format, self.width);
                let status = self.session.submit(path, &text, sinks, &mut |v, sinks| {
                    show(v, format, width, sinks)
                });
                self.failed |= status != EXIT_OK;
            }
            Err(e) => self.problem(sinks, &format!("cannot read {path}: {e}")),
        }
    }

    /// `:save FILE` / `:save! FILE`: the session's declarations and `let`s
    /// as a program, written atomically; an existing file is replaced only
    /// with `!`.
    fn save(&mut self, path: &str, replace: bool, sinks: &mut Sinks) {
        if path.is_empty() {
            return self.problem(sinks, "usage: :save FILE (or :save! FILE to replace it)");
        }
        if !replace && std::fs::symlink_metadata(path).is_ok() {
            return self.problem(
                sinks,
                &format!("{path} exists; `:save! {path}` replaces it"),
            );
        }
        let text = self.session.saved_program();
        let written = self.host.create_file(path).and_then(|mut file| {
            file.write_all(text.as_bytes())?;
            file.commit()
        });
        match written {
            Ok(()) => {
                let n = text.lines().filter(|l| !l.is_empty()).count();
                say(
                    sinks,
                    &format!(
                        "saved to {path} ({n} line{})",
                        if n == 1 { "" } else { "s" }
                    ),
                );
            }
            Err(e) => self.problem(sinks, &format!("cannot save to {path}: {e}")),
        }
    }

    fn vars(&mut self, sinks: &mut Sinks) {
        let vars = self.session.vars();
        if vars.is_empty() {
            return say(sinks, "no names bound yet");
        }
        for (name, value) in vars {
            let shown = match value {
                Value::Stream(_) => "<stream>".to_string(),
                v => clip(&to_hql(&v), 100),
            };
            say(sinks, &format!("{name} = {shown}"));
        }
    }

    /// `:infer EXPR`: the contract `hql infer` would print for the records
    /// the expression gives; what was left out is counted on stderr.
    fn infer(&mut self, expr: &str, sinks: &mut Sinks) {
        if expr.is_empty() {
            return self.problem(sinks, "usage: :infer EXPR");
        }
        self.entries += 1;
        let name = format!("<repl:{}>", self.entries);
        let status = self.session.submit(&name, expr, sinks, &mut |v, sinks| {
            let inferred = crate::tooling::infer::infer_items(&v, None)?;
            if let Some(skipped) = inferred.skipped() {
                let _ = sinks.out.flush();
                let _ = writeln!(sinks.err, "{skipped}");
            }
            let name = crate::tooling::infer::default_name_of(&v);
            say(sinks, inferred.contract(&name, false).trim_end());
            Ok(())
        });
        self.failed |= status != EXIT_OK;
    }

    /// Run `expr` as an entry of its own and hand its value to `then`
    /// (`usage` when there is no expression).
    fn with_value(
        &mut self,
        expr: &str,
        usage: &str,
        sinks: &mut Sinks,
        then: &mut dyn FnMut(Value, usize, &mut Sinks) -> Result<(), RuntimeError>,
    ) {
        if expr.is_empty() {
            return self.problem(sinks, usage);
        }
        self.entries += 1;
        let name = format!("<repl:{}>", self.entries);
        // Piped, the charts and tables are laid out for 100 columns.
        let width = self.width.unwrap_or(100);
        let status = self
            .session
            .submit(&name, expr, sinks, &mut |v, sinks| then(v, width, sinks));
        self.failed |= status != EXIT_OK;
    }

    /// `:describe EXPR`: a row a field of the records the expression gives.
    fn describe(&mut self, expr: &str, sinks: &mut Sinks) {
        self.with_value(
            expr,
            "usage: :describe EXPR",
            sinks,
            &mut |v, width, sinks| {
                let profile = describe::describe(&v)?;
                let rows = profile.rows();
                let mut text = format!("{}\n", profile.summary());
                if !rows.is_empty() {
                    table::table_with(&rows.iter().collect::<Vec<_>>(), width, 0, true, &mut text);
                }
                let _ = sinks.out.write_all(text.as_bytes());
                Ok(())
            },
        );
    }

    /// `:hist EXPR`: a histogram of the numbers the expression gives.
    fn hist(&mut self, expr: &str, sinks: &mut Sinks) {
        self.with_value(expr, "usage: :hist EXPR", sinks, &mut |v, width, sinks| {
            match chart::histogram(&v)? {
                Some(h) => {
                    let _ = sinks.out.write_all(h.text(width).as_bytes());
                    Ok(())
                }
                None => Err(RuntimeError::new(
                    "hql::type",
                    "there are no numbers to draw".to_string(),
                )
                .with_help("`:hist` takes a stream or list of numbers: `xs | map(r => r.field)`")),
            }
        });
    }

    /// `:bar EXPR`: a bar a key of a `count_by` result.
    fn bar(&mut self, expr: &str, sinks: &mut Sinks) {
        self.with_value(
            expr,
            "usage: :bar EXPR",
            sinks,
            &mut |v, width, sinks| match chart::keyed(&v)? {
                Some((rows, more)) => {
                    let mut text = chart::bars(&rows, width);
                    if more > 0 {
                        text.push_str(&format!("… {more} more not shown\n"));
                    }
                    let _ = sinks.out.write_all(text.as_bytes());
                    Ok(())
                }
                None => Err(RuntimeError::new(
                    "hql::type",
                    "expected records of a key and a number".to_string(),
                )
                .with_help("`:bar` takes what `count_by` gives: `xs | count_by(r => r.field)`")),
            },
        );
    }

    fn set(&mut self, arg: &str, sinks: &mut Sinks) {
        match arg.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["format", "json"] => self.format = OutputFormat::Json,
            ["format", "hql"] => self.format = OutputFormat::Hql,
            _ => self.problem(sinks, "usage: :set format hql|json"),
        }
    }
}

fn say(sinks: &mut Sinks, text: &str) {
    let _ = writeln!(sinks.out, "{text}");
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}…")
}

/// The help for a command, or the list of all; `None` for no such command.
fn help(topic: &str) -> Option<String> {
    let topic = topic.trim_start_matches(':');
    if let Some((name, args, about)) = COMMANDS.iter().find(|(n, _, _)| *n == topic) {
        return Some(format!(":{name} {args}\n  {about}"));
    }
    if !topic.is_empty() {
        return None;
    }
    let mut out = String::from(
        "Enter HQL to run it; declarations and lets persist. `_` is the last result.\n",
    );
    out.push_str(
        "An unfinished entry (open bracket, trailing operator) continues on the next line;\n\
         a blank line submits it. Tab completes, Ctrl-R searches the history, Ctrl-C\n\
         cancels the entry or stops a long evaluation, Ctrl-D leaves.\n",
    );
    for (name, args, about) in COMMANDS {
        out.push_str(&format!("  :{name:<9}{args:<16}{about}\n"));
    }
    Some(out.trim_end().to_string())
}

/// Show a value: a table when it is a list of records that fits the
/// terminal, else as `hql run` prints it.
fn show(
    v: Value,
    format: OutputFormat,
    width: Option<usize>,
    sinks: &mut Sinks,
) -> Result<(), RuntimeError> {
    match width {
        Some(width) if format == OutputFormat::Hql => {
            table::show(shortened(v, false), width, sinks.out)
        }
        Some(_) => print_value(shortened(v, true), format, sinks.out),
        None => print_value(v, format, sinks.out),
    }
}

/// A value to show on a terminal: a failure record's long `input` (its own,
/// or in a list) shortened (`vet::shortened`); `hql run` and the piped
/// REPL print values whole.
fn shortened(v: Value, json: bool) -> Value {
    let one = |e: &Value| match e {
        Value::Err(failure) => Value::Err(Rc::new(crate::cli::vet::shortened(failure, json))),
        other => other.clone(),
    };
    match &v {
        Value::Err(_) => one(&v),
        Value::List(items) if items.iter().any(|e| matches!(e, Value::Err(_))) => {
            Value::list(items.iter().map(one).collect())
        }
        _ => v,
    }
}

/// Piped mode: entries from `input`, no prompts; a line that starts with
/// `|` or another continuation token, or that follows an unfinished line,
/// continues the entry, and a blank line submits an unfinished one (see
/// [`blank_line_submits`]). A line that is not UTF-8 spoils its entry,
/// which is reported and not run. The status is 1 if any entry failed.
pub fn run_piped(mut input: impl BufRead, host: Rc<dyn Host>, sinks: &mut Sinks) -> i32 {
    let mut repl = Repl::new(host, None);
    let mut entry = Entry::default();
    let mut bytes = Vec::new();
    let mut number = 0;
    // An entry's line is held whole: no longer than a source's may be.
    let limit = crate::runtime::eval::io::max_line() as u64;
    loop {
        bytes.clear();
        match (&mut input).take(limit + 1).read_until(b'\n', &mut bytes) {
            Ok(0) => break,
            Ok(_) if bytes.len() as u64 > limit && bytes.last() != Some(&b'\n') => {
                let message = format!(
                    "hql: line {} of the entries is longer than the longest line allowed ({limit} bytes)",
                    number + 1
                );
                // The entry before it is whole.
                entry.submit(&mut repl, sinks);
                repl.problem(sinks, &message);
                return EXIT_FAILED;
            }
            Ok(_) => number += 1,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                repl.problem(sinks, &format!("hql: cannot read the entries: {e}"));
                break;
            }
        }
        let raw = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let (line, bad) = match std::str::from_utf8(raw) {
            Ok(line) => (Cow::Borrowed(line), None),
            Err(e) => (String::from_utf8_lossy(raw), Some(e.valid_up_to())),
        };
        let blank = line.trim().is_empty();
        if !entry.text.is_empty() {
            let unfinished = input_status(&entry.text) == InputStatus::Incomplete;
            let continues = match blank {
                true => unfinished && !blank_line_submits(&entry.text),
                false => unfinished || continues_entry(&line),
            };
            if !continues && entry.submit(&mut repl, sinks) == Control::Quit {
                return status(&repl);
            }
        }
        if entry.text.is_empty() && blank {
            continue;
        }
        entry.add(&line, number, bad);
        // A command is a line of its own.
        let command = entry.lines == 1 && line.trim_start().starts_with(':');
        if command && entry.submit(&mut repl, sinks) == Control::Quit {
            return status(&repl);
        }
    }
    entry.submit(&mut repl, sinks);
    status(&repl)
}

/// Does a blank line submit an unfinished `entry`? It does, so that the
/// entry reports what is missing — except while the innermost open
/// bracket is `{`, where the blank line belongs to the entry (contract
/// bodies have blank lines). The same in piped mode and on a terminal.
pub fn blank_line_submits(entry: &str) -> bool {
    let Ok(tokens) = lex(entry) else {
        return true;
    };
    // For each open bracket, innermost last: is it a brace?
    let mut braces = Vec::new();
    for (_, token, _) in &tokens {
        match token {
            Token::LParen | Token::LBracket => braces.push(false),
            Token::LBrace => braces.push(true),
            Token::RParen | Token::RBracket | Token::RBrace => {
                braces.pop();
            }
            _ => {}
        }
    }
    braces.last() != Some(&true)
}

/// The entry being gathered in piped mode.
#[derive(Default)]
struct Entry {
    text: String,
    lines: usize,
    /// The first line that is not UTF-8: its number and the byte where
    /// it stops being UTF-8.
    bad: Option<(usize, usize)>,
}

impl Entry {
    fn add(&mut self, line: &str, number: usize, bad: Option<usize>) {
        self.text.push_str(line);
        self.text.push('\n');
        self.lines += 1;
        if self.bad.is_none() {
            self.bad = bad.map(|at| (number, at));
        }
    }

    /// Run the entry (nothing when it is empty), and start a new one.
    fn submit(&mut self, repl: &mut Repl, sinks: &mut Sinks) -> Control {
        let entry = std::mem::take(self);
        match entry.bad {
            _ if entry.text.is_empty() => Control::Continue,
            Some((line, at)) => {
                repl.not_utf8(sinks, line, at);
                Control::Continue
            }
            None => {
                // A signal stops the entry it came in, not the next one.
                crate::runtime::eval::clear_interrupt();
                let control = repl.entry(&entry.text, sinks);
                crate::runtime::eval::clear_interrupt();
                control
            }
        }
    }
}

fn status(repl: &Repl) -> i32 {
    if repl.failed {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}

/// A record of `fields`, for the display tests.
#[cfg(test)]
fn rec(fields: &[(&str, Value)]) -> Value {
    Value::record(
        fields
            .iter()
            .map(|(k, v)| ((*k).into(), v.clone()))
            .collect(),
    )
}
