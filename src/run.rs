//! The driver shared by `hql run`, `hql check` and the tests: a program's
//! text in, output and diagnostics written to the sinks it is handed, and
//! the exit status of tooling.md out.

use std::io::Write;
use std::rc::Rc;

use crate::eval::{force, Host, RuntimeError};
use crate::json::write_json;
use crate::print::write_hql;
use crate::session::Session;
use crate::value::Value;

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
    let mut session = Session::new(host);
    session.submit(src.name, src.text, sinks, &mut |v, sinks| {
        print_value(v, format, sinks.out)
    })
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
