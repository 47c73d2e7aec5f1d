//! The driver shared by `hql run`, `hql check` and the tests: a program's
//! text in, output and diagnostics written to the sinks it is handed, and
//! the exit status of tooling.md out.

use std::io::Write;
use std::rc::Rc;

use crate::runtime::eval::{Host, Items, RuntimeError};
use crate::runtime::exec::planner::{self, Path};
use crate::runtime::exec::staged::Render;
use crate::runtime::exec::staged::Spread;
use crate::runtime::exec::stages::force;
use crate::runtime::json::write_json;
use crate::runtime::print::write_hql;
use crate::runtime::value::Value;
use crate::session::Session;

pub use crate::session::{Sinks, EXIT_FAILED, EXIT_OK, EXIT_STATIC};

/// How values are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Hql,
    Json,
}

/// A program's text and the name diagnostics call it by.
pub struct Source<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

/// Check a program without running it, as `hql check` does: declarations
/// only, so a `let` a declaration needs that reads or writes the world
/// outside is an error (`Session::check_declarations`); the exit status.
pub fn check_source(src: &Source, host: Rc<dyn Host>, sinks: &mut Sinks) -> i32 {
    match Session::new(host).check_declarations(src.name, src.text, sinks) {
        Ok(_) => EXIT_OK,
        Err(status) => status,
    }
}

/// Check, then run every statement; returns the exit status.
pub fn run_source(
    src: &Source,
    host: Rc<dyn Host>,
    format: OutputFormat,
    sinks: &mut Sinks,
) -> i32 {
    Session::new(host).submit(src.name, src.text, sinks, &mut |v, sinks| {
        print_value(v, format, sinks.out)
    })
}

/// What one program printed, kept in memory: its exit status, standard
/// output and standard error.
#[derive(Debug)]
pub struct Captured {
    pub status: i32,
    pub out: Vec<u8>,
    pub err: Vec<u8>,
}

/// Run `src` in `session`, whose earlier declarations it sees, printing
/// its values in `format` into memory (for embedding a session, and for
/// tests).
pub fn submit_captured(session: &mut Session, src: &Source, format: OutputFormat) -> Captured {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = session.submit(
        src.name,
        src.text,
        &mut Sinks::plain(&mut out, &mut err),
        &mut |v, sinks| print_value(v, format, sinks.out),
    );
    Captured { status, out, err }
}

/// What `hql test` was asked for beside the files.
#[derive(Debug, Clone, Default)]
pub struct TestOptions {
    /// Rewrite notebooks' output blocks with the actual output.
    pub update: bool,
    /// A file with no case passes (otherwise it fails, saying so).
    pub allow_empty: bool,
    /// JUnit XML on standard output instead of one line a case.
    pub junit: bool,
    /// Diagnostics as JSON Lines on standard error (`--diagnostics json`).
    pub json_diagnostics: bool,
    /// The needs (`--with postgres`) whose marked cells run; the others
    /// are skipped.
    pub with: Vec<String>,
}

/// A file `hql test` runs.
#[derive(Debug, Clone)]
pub struct TestFile {
    pub path: String,
    pub text: String,
    /// Named on the command line, rather than found by walking a
    /// directory: with nothing to run, it is a failed case (unless
    /// `--allow-empty`); a file found by walking is then skipped silently.
    pub named: bool,
}

/// `hql test`: run the cases of each file and print one line a case and a
/// closing `N passed, M failed` (or, with `junit`, one JUnit XML document);
/// the exit status.
pub fn test_files(
    files: &[TestFile],
    host_for: &dyn Fn(&str) -> Rc<dyn Host>,
    options: TestOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
    save: &mut dyn FnMut(&str, &str) -> std::io::Result<()>,
) -> i32 {
    let (mut passed, mut failed, mut skipped, mut status) = (0, 0, 0, EXIT_OK);
    let mut suites = Vec::new();
    let mut text = String::new();
    for file in files {
        let (path, source) = (&file.path, &file.text);
        let report = crate::cli::notebook::test_file(
            path,
            source,
            host_for(path),
            options.update,
            options.json_diagnostics,
            &options.with,
        );
        let _ = out.flush();
        let _ = err.write_all(report.diagnostics.as_bytes());
        if report.cases.is_empty() && !file.named && !report.static_error {
            continue;
        }
        for case in &report.cases {
            let verdict = match (case.skipped, case.passed) {
                (true, _) => "SKIP",
                (false, true) => "PASS",
                (false, false) => "FAIL",
            };
            text.push_str(&format!("{verdict} {} ({})\n", case.label, case.place));
            for line in case.detail.lines() {
                text.push_str(&format!("     {line}\n"));
            }
            if case.skipped {
                skipped += 1;
            } else if case.passed {
                passed += 1;
            } else {
                failed += 1;
                status = status.max(EXIT_FAILED);
            }
        }
        if report.cases.is_empty() {
            let what = if path.ends_with(".md") {
                "no hql cells"
            } else {
                "no checks"
            };
            let verdict = if options.allow_empty { "NONE" } else { "FAIL" };
            text.push_str(&format!("{verdict} {path}: {what} to run"));
            if !options.allow_empty {
                text.push_str(" (--allow-empty accepts a file with none)");
                failed += 1;
                status = status.max(EXIT_FAILED);
            }
            text.push('\n');
        }
        if report.static_error {
            status = EXIT_STATIC;
        }
        if let Some(new) = report.updated.as_ref().filter(|new| *new != source) {
            match save(path, new) {
                Ok(()) => text.push_str(&format!("updated {path}\n")),
                Err(e) => {
                    text.push_str(&format!("cannot update {path}: {e}\n"));
                    status = status.max(EXIT_FAILED);
                }
            }
        }
        if options.junit {
            suites.push((path.as_str(), report, options.allow_empty));
        } else {
            let _ = out.write_all(text.as_bytes());
        }
        text.clear();
    }
    if options.junit {
        let _ = out.write_all(crate::cli::notebook::junit(&suites).as_bytes());
    } else {
        let _ = match skipped {
            0 => writeln!(out, "{passed} passed, {failed} failed"),
            _ => writeln!(out, "{passed} passed, {failed} failed, {skipped} skipped"),
        };
    }
    status
}

/// Print a statement's value on one line (`--format json`: a stream as JSON
/// Lines). A line is written only once complete, so an error part-way
/// through a stream leaves no half line. A write that fails stops the
/// printing (a stream is read no further); `out` keeps the failure for the
/// command to report when it ends (`cli::output`).
pub fn print_value(
    v: Value,
    format: OutputFormat,
    out: &mut dyn Write,
) -> Result<(), RuntimeError> {
    if let Path::Spread(spread) = planner::print_path(&v) {
        return print_spread(*spread, format, out);
    }
    let mut line = String::new();
    match (format, v) {
        (OutputFormat::Json, Value::Stream(s)) => {
            for item in s.open()? {
                line.clear();
                write_json(&mut line, &force(item?.value)?);
                line.push('\n');
                if out.write_all(line.as_bytes()).is_err() {
                    break;
                }
            }
            return Ok(());
        }
        (OutputFormat::Hql, Value::Stream(s)) => return print_list(s.open()?, out),
        (OutputFormat::Json, v) => write_json(&mut line, &force(v)?),
        (OutputFormat::Hql, v) => write_hql(&mut line, &force(v)?),
    }
    line.push('\n');
    // A failure is kept by `out` and reported when the command ends.
    let _ = out.write_all(line.as_bytes());
    Ok(())
}

/// How much of a printed stream is held before it is written out.
const HELD: usize = 1 << 20;

/// A stream printed as a list, `[a, b]` on one line: held whole while
/// short, so that an error before its end prints none of it, as for any
/// value; past `HELD` bytes written as it goes, so that printing a long
/// stream takes little memory (an error then ends the line where it is).
fn print_list(items: Items, out: &mut dyn Write) -> Result<(), RuntimeError> {
    let mut list = ListLine::default();
    for item in items {
        let value = match item.and_then(|item| force(item.value)) {
            Ok(value) => value,
            Err(e) => {
                list.fail(out);
                return Err(e);
            }
        };
        if !list.push(out, |line| write_hql(line, &value)) {
            return Ok(());
        }
    }
    list.finish(out);
    Ok(())
}

/// A stream that runs on several threads printed as `print_value` prints
/// it, from its items' texts.
fn print_spread(
    spread: Spread,
    format: OutputFormat,
    out: &mut dyn Write,
) -> Result<(), RuntimeError> {
    if format == OutputFormat::Json {
        return spread.run(Render::Json, &mut |piece| {
            Ok(out.write_all(piece.text.as_bytes()).is_ok())
        });
    }
    let mut list = ListLine::default();
    let printed = spread.run(Render::Hql, &mut |piece| {
        let mut start = 0;
        for &end in &piece.ends {
            if !list.push(out, |line| line.push_str(&piece.text[start..end])) {
                return Ok(false);
            }
            start = end;
        }
        Ok(true)
    });
    match printed {
        Ok(()) => {
            list.finish(out);
            Ok(())
        }
        Err(e) => {
            list.fail(out);
            Err(e)
        }
    }
}

/// The line a printed stream is written on (`print_list`).
struct ListLine {
    line: String,
    items: usize,
    /// Past `HELD` bytes: written as it goes.
    streaming: bool,
    /// A write failed: nothing more is written.
    stopped: bool,
}

impl Default for ListLine {
    fn default() -> ListLine {
        ListLine {
            line: String::from("["),
            items: 0,
            streaming: false,
            stopped: false,
        }
    }
}

impl ListLine {
    /// Add an item, written by `item`; `false` when a write failed and
    /// the printing stops.
    fn push(&mut self, out: &mut dyn Write, item: impl FnOnce(&mut String)) -> bool {
        if self.items > 0 {
            self.line.push_str(", ");
        }
        self.items += 1;
        item(&mut self.line);
        if self.line.len() >= HELD {
            self.streaming = true;
            if out.write_all(self.line.as_bytes()).is_err() {
                self.stopped = true;
                return false;
            }
            self.line.clear();
        }
        true
    }

    /// An error stopped the stream: what was written already ends its line.
    fn fail(&self, out: &mut dyn Write) {
        if self.streaming && !self.stopped {
            let _ = out
                .write_all(self.line.as_bytes())
                .and_then(|()| out.write_all(b"\n"));
        }
    }

    /// The stream ended: close the list.
    fn finish(mut self, out: &mut dyn Write) {
        if self.stopped {
            return;
        }
        self.line.push_str("]\n");
        let _ = out.write_all(self.line.as_bytes());
    }
}
