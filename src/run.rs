//! The driver shared by `hql run`, `hql check` and the tests:
//! source text → parse → check → run, with output and diagnostics written to
//! the sinks it is handed and the exit status of tooling.md returned.

use std::io::Write;
use std::rc::Rc;

use crate::check::{check, Checked};
use crate::diagnostic::{render, Diag};
use crate::eval::{force, Host, Interp, Outcome, RuntimeError};
use crate::json::write_json;
use crate::parser::parse;
use crate::print::write_hql;
use crate::value::Value;

/// Exit statuses (tooling.md, normative).
pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_STATIC: i32 = 2;

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

/// Where output goes.
pub struct Sinks<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
    pub color: bool,
}

impl Sinks<'_> {
    fn diag(&mut self, src: &Source, d: &Diag) {
        let _ = self.out.flush();
        let _ = write!(self.err, "{}", render(d, src.name, src.text, self.color));
    }
}

/// Parse and check: the checked program, or the status after reporting.
pub fn check_source(src: &Source, sinks: &mut Sinks) -> Result<Checked, i32> {
    let module = match parse(src.text) {
        Ok(m) => m,
        Err(errors) => {
            for e in &errors {
                sinks.diag(src, &Diag::from(e));
            }
            return Err(EXIT_STATIC);
        }
    };
    match check(&module) {
        Ok(checked) => {
            for w in &checked.warnings {
                sinks.diag(src, &Diag::from(w));
            }
            Ok(checked)
        }
        Err(diags) => {
            for w in &diags.warnings {
                sinks.diag(src, &Diag::from(w));
            }
            for e in &diags.errors {
                sinks.diag(src, &Diag::from(e));
            }
            Err(EXIT_STATIC)
        }
    }
}

/// Check, then run every statement; returns the exit status.
pub fn run_source(
    src: &Source,
    host: Rc<dyn Host>,
    format: OutputFormat,
    sinks: &mut Sinks,
) -> i32 {
    let checked = match check_source(src, sinks) {
        Ok(c) => c,
        Err(status) => return status,
    };
    let interp = Interp::new(host);
    interp.load(&checked.program);
    let mut status = EXIT_OK;
    for stmt in &checked.program.stmts {
        let outcome = interp
            .run_stmt(stmt)
            .and_then(|o| emit(o, format, src, sinks));
        match outcome {
            Ok(true) => {}
            Ok(false) => status = EXIT_FAILED,
            Err(e) => {
                sinks.diag(src, &Diag::from(&e));
                return EXIT_FAILED;
            }
        }
    }
    let _ = sinks.out.flush();
    status
}

/// Print an outcome; `Ok(false)` when a check failed.
fn emit(
    outcome: Outcome,
    format: OutputFormat,
    src: &Source,
    sinks: &mut Sinks,
) -> Result<bool, RuntimeError> {
    match outcome {
        Outcome::Quiet => Ok(true),
        Outcome::Value(v) => {
            print_value(v, format, sinks.out)?;
            Ok(true)
        }
        Outcome::CheckFailed {
            label,
            span,
            operands,
        } => {
            let operands =
                operands.map(|(l, r)| format!("left {}, right {}", hql_text(&l), hql_text(&r)));
            sinks.diag(src, &Diag::check_failed(&label, span, operands));
            Ok(false)
        }
    }
}

fn hql_text(v: &Value) -> String {
    let mut s = String::new();
    write_hql(&mut s, v);
    s
}

/// Print a statement's value on one line (`--format json`: a stream as JSON
/// Lines). A line is written only once complete, so an error part-way
/// through a stream leaves no half line.
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
                let _ = out.write_all(line.as_bytes());
            }
            return Ok(());
        }
        (OutputFormat::Json, v) => write_json(&mut line, &force(v)?),
        (OutputFormat::Hql, v) => write_hql(&mut line, &force(v)?),
    }
    line.push('\n');
    let _ = out.write_all(line.as_bytes());
    Ok(())
}
