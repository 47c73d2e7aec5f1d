//! The driver shared by `hql run`, `hql check` and the tests: a program's
//! text in, output and diagnostics written to the sinks it is handed, and
//! the exit status of tooling.md out.

use std::io::Write;
use std::rc::Rc;

use crate::runtime::eval::{force, Host, RuntimeError};
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

/// Check a program without running it; the exit status.
pub fn check_source(src: &Source, host: Rc<dyn Host>, sinks: &mut Sinks) -> i32 {
    match Session::new(host).check(src.name, src.text, sinks) {
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

/// `hql test`: run each file's cases, print a line per case and the closing
/// `N passed, M failed`; write updated notebooks back through `save`.
/// The status is 1 when a case failed, 2 when a `.hql` file has a static error.
pub fn test_files(
    files: &[(String, String)],
    host_for: &dyn Fn(&str) -> Rc<dyn Host>,
    update: bool,
    out: &mut dyn Write,
    save: &mut dyn FnMut(&str, &str) -> std::io::Result<()>,
) -> i32 {
    let (mut passed, mut failed, mut status) = (0, 0, EXIT_OK);
    for (path, text) in files {
        let report = crate::cli::notebook::test_file(path, text, host_for(path), update);
        for case in &report.cases {
            let verdict = if case.passed { "PASS" } else { "FAIL" };
            let _ = writeln!(out, "{verdict} {} ({})", case.label, case.place);
            for line in case.detail.lines() {
                let _ = writeln!(out, "     {line}");
            }
            if case.passed {
                passed += 1;
            } else {
                failed += 1;
                status = status.max(EXIT_FAILED);
            }
        }
        if report.static_error {
            status = EXIT_STATIC;
        }
        if let Some(new) = report.updated.filter(|new| new != text) {
            match save(path, &new) {
                Ok(()) => {
                    let _ = writeln!(out, "updated {path}");
                }
                Err(e) => {
                    let _ = writeln!(out, "cannot update {path}: {e}");
                    status = status.max(EXIT_FAILED);
                }
            }
        }
    }
    let _ = writeln!(out, "{passed} passed, {failed} failed");
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
        (OutputFormat::Json, v) => write_json(&mut line, &force(v)?),
        (OutputFormat::Hql, v) => write_hql(&mut line, &force(v)?),
    }
    line.push('\n');
    // A failure is kept by `out` and reported when the command ends.
    let _ = out.write_all(line.as_bytes());
    Ok(())
}
