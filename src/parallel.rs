//! `count()` and `report()` over a validated JSON Lines file, on several
//! threads: `try_consume(interp, builtin, plan) -> Option<Value>`.
//!
//! Values are `Rc`-based and stay on the thread that made them, so each
//! worker builds its own session from the program's declarations, reads
//! its own byte range of the file, validates, and sends back only counts
//! (`Tally`), which are merged. Counts do not depend on the order records
//! are seen in, so the result is exactly the single-threaded one. Anything
//! else — other pipelines, stdin, a JSON array, a contract with unique keys
//! (which depend on order) — runs on one thread as before.

use std::io::BufRead;
use std::rc::Rc;

use crate::builtins::Builtin;
use crate::eval::{Host, Interp, Parallel, Plan, Result, RuntimeError, Tally};
use crate::json::Decoder;
use crate::session::{Session, Sinks};
use crate::validate::{decode_failure, validate_value};
use crate::value::Value;

/// Files smaller than this are not worth starting threads for.
const MIN_SPLIT_BYTES: u64 = 1 << 20;

/// Run `count()` (of `validate(T) | oks()`) or `report()` (of `validate(T)`)
/// on several threads when the stream and the host allow it.
pub fn try_consume(interp: &Rc<Interp>, b: Builtin, plan: Option<Plan>) -> Result<Option<Value>> {
    let (
        Some(parallel),
        Some(Plan::Validated {
            path,
            contract,
            oks,
        }),
    ) = (interp.parallel(), plan)
    else {
        return Ok(None);
    };
    let wanted = matches!((b, oks), (Builtin::Count, true) | (Builtin::Report, false));
    let order_free = contract.record().is_some_and(|r| r.uniques.is_empty());
    let host = interp.host();
    let Some(len) = host.file_len(&path) else {
        return Ok(None);
    };
    if !wanted
        || !order_free
        || parallel.threads < 2
        || len < MIN_SPLIT_BYTES
        || !json_lines(host, &path)
    {
        return Ok(None);
    }
    let tally = run(&parallel, &contract.name, &path, len)?;
    Ok(Some(match b {
        Builtin::Count => Value::Int(tally.ok),
        _ => tally.into_value(),
    }))
}

/// Is the file JSON Lines (its first significant byte is not `[`)?
fn json_lines(host: &Rc<dyn Host>, path: &str) -> bool {
    let Ok(mut reader) = host.open_file(path) else {
        return false;
    };
    let Ok(buf) = reader.fill_buf() else {
        return false;
    };
    let first = buf
        .iter()
        .copied()
        .find(|b| !b.is_ascii_whitespace() && *b != 0xEF && *b != 0xBB && *b != 0xBF);
    first.is_some() && first != Some(b'[')
}

/// Split `[0, len)` into one range a thread and tally each on its own thread.
fn run(parallel: &Parallel, ty: &str, path: &str, len: u64) -> Result<Tally> {
    let n = parallel.threads as u64;
    let bounds: Vec<(u64, u64)> = (0..n).map(|i| (len * i / n, len * (i + 1) / n)).collect();
    let results: Vec<std::result::Result<Tally, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .iter()
            .map(|&(start, end)| {
                let job = Job {
                    declarations: parallel.declarations.clone(),
                    hosts: parallel.hosts.clone(),
                    ty: ty.to_string(),
                    path: path.to_string(),
                    start,
                    end,
                };
                scope.spawn(move || job.tally())
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a worker thread stopped unexpectedly".into()))
            })
            .collect()
    });
    let mut total = Tally::default();
    // Ranges are in file order, so the first error is the earliest one.
    for result in results {
        total.merge(result.map_err(|m| RuntimeError::new("hql::parallel", m))?);
    }
    Ok(total)
}

/// One thread's share: everything in it is `Send`.
struct Job {
    declarations: Vec<crate::ast::Stmt>,
    hosts: std::sync::Arc<dyn Fn() -> Rc<dyn Host> + Send + Sync>,
    ty: String,
    path: String,
    start: u64,
    end: u64,
}

impl Job {
    fn tally(self) -> std::result::Result<Tally, String> {
        let host = (self.hosts)();
        let mut session = Session::new(host.clone());
        let mut quiet = Sinks {
            out: &mut std::io::sink(),
            err: &mut std::io::sink(),
            color: false,
        };
        if session.declare(self.declarations, &mut quiet) != 0 {
            return Err("the program's declarations did not load on a worker thread".into());
        }
        let contract = session
            .contract(&self.ty)
            .ok_or("the validated type is missing on a worker thread")?;
        let interp = session.interp().clone();
        // Start one byte early and drop through the first newline: a range
        // owns the lines that start inside it.
        let from = self.start.saturating_sub(1);
        let mut reader = host
            .open_file_at(&self.path, from)
            .map_err(|e| e.to_string())?;
        let mut pos = from;
        let mut line = Vec::new();
        if self.start > 0 {
            pos += read_line(&mut reader, &mut line)?;
        }
        let origin = crate::eval::Origin {
            source: self.path.as_str().into(),
            line: 0,
        };
        let mut decoder = Decoder::new();
        let mut tally = Tally::default();
        while pos < self.end {
            let n = read_line(&mut reader, &mut line)?;
            if n == 0 {
                break;
            }
            pos += n;
            let text = trim_line(&line);
            let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let result = match decoder.decode(text) {
                Ok(v) => {
                    validate_value(&interp, &contract, v, None, None).map_err(|e| e.message)?
                }
                Err(e) => decode_failure(&origin, String::new(), e.to_string()),
            };
            tally.add(&result);
        }
        Ok(tally)
    }
}

fn read_line(
    reader: &mut Box<dyn BufRead>,
    line: &mut Vec<u8>,
) -> std::result::Result<u64, String> {
    line.clear();
    reader
        .read_until(b'\n', line)
        .map(|n| n as u64)
        .map_err(|e| e.to_string())
}

fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}
