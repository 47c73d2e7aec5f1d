//! The driver shared by `hql run`, `hql check` and the tests:
//! source text → parse → check → run, with output and diagnostics written to
//! the sinks it is handed and the exit status of tooling.md returned.

use std::io::Write;
use std::rc::Rc;

use std::path::{Component, Path, PathBuf};

use crate::ast::{Module, Span, Stmt};
use crate::check::{check_program, Checked};
use crate::diagnostic::{render, Diag};
use crate::eval::{force, Host, Interp, Outcome, RuntimeError};
use crate::json::write_json;
use crate::parser::parse_at;
use crate::print::write_hql;
use crate::source::SourceMap;
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
    fn diag(&mut self, map: &SourceMap, d: &Diag) {
        let _ = self.out.flush();
        let _ = write!(self.err, "{}", render(d, map, self.color));
    }
}

/// A program with its standard library and imports, parsed.
pub struct Loaded {
    pub map: SourceMap,
    pub module: Module,
    /// Spans below this offset belong to the standard library.
    pub prelude_end: usize,
}

/// Read, parse and join the standard library, the main file and the files
/// it imports (each once, its own imports first). Errors are diagnostics.
pub fn load(main: &Source, host: &dyn Host) -> Result<Loaded, (SourceMap, Vec<Diag>)> {
    let mut loader = Loader {
        host,
        map: SourceMap::default(),
        stmts: Vec::new(),
        diags: Vec::new(),
        loaded: Vec::new(),
    };
    for (name, text) in crate::prelude::FILES {
        loader.file(name, text, &mut vec![], true);
    }
    let prelude_end = loader.map.add("", "");
    let main_path = normalize(Path::new(main.name));
    loader.file(main.name, main.text, &mut vec![main_path], false);
    if loader.diags.is_empty() {
        Ok(Loaded {
            map: loader.map,
            module: Module {
                stmts: loader.stmts,
            },
            prelude_end,
        })
    } else {
        Err((loader.map, loader.diags))
    }
}

struct Loader<'a> {
    host: &'a dyn Host,
    map: SourceMap,
    stmts: Vec<Stmt>,
    diags: Vec<Diag>,
    loaded: Vec<PathBuf>,
}

impl Loader<'_> {
    /// Parse one file; `imported` keeps only its declarations. `stack` holds
    /// the files being imported, outermost first, to catch cycles.
    fn file(&mut self, name: &str, text: &str, stack: &mut Vec<PathBuf>, imported: bool) {
        let base = self.map.add(name, text);
        let module = match parse_at(text, base) {
            Ok(m) => m,
            Err(errors) => return self.diags.extend(errors.iter().map(Diag::from)),
        };
        for stmt in module.stmts {
            match stmt {
                Stmt::Import { path, span } => self.import(name, &path, span, stack),
                Stmt::Type(_) | Stmt::Fn(_) | Stmt::Let { .. } => self.stmts.push(stmt),
                _ if imported => {}
                other => self.stmts.push(other),
            }
        }
    }

    fn import(&mut self, importer: &str, path: &str, span: Span, stack: &mut Vec<PathBuf>) {
        let dir = Path::new(importer).parent().unwrap_or(Path::new(""));
        let full = normalize(&dir.join(path));
        if stack.contains(&full) {
            return self.diags.push(Diag::import_cycle(path, span));
        }
        if self.loaded.contains(&full) {
            return;
        }
        let shown = full.to_string_lossy().to_string();
        match self.host.read_source(&shown) {
            Ok(text) => {
                self.loaded.push(full.clone());
                stack.push(full);
                self.file(&shown, &text, stack, true);
                stack.pop();
            }
            Err(e) => self
                .diags
                .push(Diag::import_missing(path, &shown, &e.to_string(), span)),
        }
    }
}

/// `a/./b/../c` → `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Load, parse and check: the checked program, or the status after reporting.
pub fn check_source(
    src: &Source,
    host: &dyn Host,
    sinks: &mut Sinks,
) -> Result<(SourceMap, Checked), i32> {
    let loaded = match load(src, host) {
        Ok(l) => l,
        Err((map, diags)) => {
            for d in &diags {
                sinks.diag(&map, d);
            }
            return Err(EXIT_STATIC);
        }
    };
    let map = loaded.map;
    match check_program(&loaded.module, loaded.prelude_end) {
        Ok(checked) => {
            for w in &checked.warnings {
                sinks.diag(&map, &Diag::from(w));
            }
            Ok((map, checked))
        }
        Err(diags) => {
            for w in &diags.warnings {
                sinks.diag(&map, &Diag::from(w));
            }
            for e in &diags.errors {
                sinks.diag(&map, &Diag::from(e));
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
    let (map, checked) = match check_source(src, &*host, sinks) {
        Ok(c) => c,
        Err(status) => return status,
    };
    let interp = Interp::new(host);
    interp.load(&checked.program);
    let mut status = EXIT_OK;
    for stmt in &checked.program.stmts {
        let outcome = interp
            .run_stmt(stmt)
            .and_then(|o| emit(o, format, &map, sinks));
        match outcome {
            Ok(true) => {}
            Ok(false) => status = EXIT_FAILED,
            Err(e) => {
                sinks.diag(&map, &Diag::from(&e));
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
    map: &SourceMap,
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
            sinks.diag(map, &Diag::check_failed(&label, span, operands));
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
