//! `route` of a validated JSON Lines file (and `write` of its valid
//! records) on several threads.
//!
//! The calling thread reads the file in chunks cut after a newline,
//! counting their lines so that each chunk knows the number of its first,
//! and hands them to worker threads. Values are `Rc`-based and stay on the
//! thread that made them, so each worker rebuilds its own session from the
//! program's declarations (as the counting path's workers do) and routes a
//! chunk's lines with its own copier into two texts, one record a line.
//! The calling thread writes those to the targets in the order of the
//! chunks: the targets get exactly the records one thread writes, in the
//! same order, with the same origins. A few chunks a worker are in flight
//! at once, so memory stays bounded whatever the file's size.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::rc::Rc;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};

use super::{routed, Copier, Routes, Targets};
use crate::runtime::contract::Contract;
use crate::runtime::counting::{json_lines, MIN_SPLIT_BYTES};
use crate::runtime::eval::stages::json_items;
use crate::runtime::eval::{
    cannot_read, check_interrupt, Interp, Origin, Parallel, Rebuild, Result, RuntimeError,
    SentError,
};
use crate::runtime::json::{fill, write_json, JsonSource, BOM};
use crate::runtime::validate;
use crate::runtime::value::Value;

/// How many bytes a chunk holds, at least (a longer line makes a longer
/// chunk).
const CHUNK_BYTES: usize = 1 << 20;

/// How many chunks a worker may have waiting or in hand.
const AHEAD: usize = 2;

/// The threads to route a file the copier reads on, when there are
/// several and the file is a JSON Lines file of at least a megabyte;
/// `None` sends it down the path of one thread.
pub(super) fn parallel_for(interp: &Interp, path: &str) -> Option<Parallel> {
    let parallel = interp.parallel().filter(|p| p.threads > 1)?;
    let host = interp.host();
    let len = host.file_len(path)?;
    (len >= MIN_SPLIT_BYTES && json_lines(host, path)).then_some(parallel)
}

/// A chunk of the file for a worker.
struct Job {
    seq: usize,
    /// The number of its first line.
    first_line: u64,
    bytes: Vec<u8>,
}

/// A chunk routed: each target's records as compact JSON, one a line.
#[derive(Default)]
struct Routed {
    ok: Vec<u8>,
    err: Vec<u8>,
    oks: u64,
    errs: u64,
}

impl Routes for Routed {
    fn text(&mut self, ok: bool, text: &[u8]) -> Result<()> {
        let (out, n) = match ok {
            true => (&mut self.ok, &mut self.oks),
            false => (&mut self.err, &mut self.errs),
        };
        out.extend_from_slice(text);
        out.push(b'\n');
        *n += 1;
        Ok(())
    }

    fn value(&mut self, ok: bool, v: &Value) -> Result<()> {
        // As the JSON writer writes a record.
        let mut text = String::new();
        write_json(&mut text, v);
        self.text(ok, text.as_bytes())
    }
}

/// Route the lines of `path` on `parallel`'s threads into `out`.
pub(super) fn spread(
    interp: &Rc<Interp>,
    parallel: &Parallel,
    path: &str,
    name: &str,
    contract: &Rc<Contract>,
    errs_wanted: bool,
    out: &mut Targets,
) -> Result<()> {
    let reader = interp
        .host()
        .open_file(path)
        .map_err(|e| cannot_read(path, &e))?;
    let mut reader = interp.metered(reader, Some(path));
    let workers = parallel.threads;
    let (jobs, taken) = mpsc::sync_channel::<Job>(workers * AHEAD);
    let taken = Arc::new(Mutex::new(taken));
    let (done, results) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (taken, done) = (taken.clone(), done.clone());
            let rebuild = parallel.rebuild.clone();
            let ty = contract.name.clone();
            crate::syntax::limits::spawn_scoped(scope, move || {
                work(&*rebuild, &ty, name, errs_wanted, &taken, &done)
            })
            .map_err(|e| {
                RuntimeError::new("hql::parallel", format!("cannot start a thread: {e}"))
            })?;
        }
        drop(done);
        // Dropping `jobs` on the way out, however it ends, stops the workers.
        feed(interp, &mut reader, name, jobs, &results, workers, out)
    })
}

/// Read the file in chunks, hand them out, and write what comes back in
/// the order of the file.
fn feed(
    interp: &Rc<Interp>,
    reader: &mut Box<dyn BufRead>,
    name: &str,
    jobs: SyncSender<Job>,
    results: &Receiver<(usize, std::result::Result<Routed, SentError>)>,
    workers: usize,
    out: &mut Targets,
) -> Result<()> {
    let lost = || RuntimeError::from(SentError::worker_stopped());
    let mut chunks = Chunks {
        carry: Vec::new(),
        next_line: 1,
        at_start: true,
        ended: false,
        failed: None,
    };
    let (mut sent, mut written) = (0, 0);
    let mut waiting = BTreeMap::new();
    loop {
        while !chunks.ended && sent - written < workers * AHEAD {
            check_interrupt()?;
            let Some((first_line, bytes)) = chunks.next(reader) else {
                break;
            };
            let seq = sent;
            jobs.send(Job {
                seq,
                first_line,
                bytes,
            })
            .map_err(|_| lost())?;
            sent += 1;
        }
        if sent == written {
            break;
        }
        let (seq, routed) = results.recv().map_err(|_| lost())?;
        waiting.insert(seq, routed);
        while let Some(routed) = waiting.remove(&written) {
            let routed = routed.map_err(RuntimeError::from)?;
            write(interp, &routed, out)?;
            written += 1;
        }
    }
    drop(jobs);
    // A read error ends the input after one failure, as a source has it.
    if let Some(message) = chunks.failed {
        let origin = Origin {
            source: name.into(),
            line: chunks.next_line,
        };
        let failure = validate::decode_failure(&origin, String::new(), message);
        if let Value::Err(record) = &failure {
            out.value(false, record)?;
        }
    }
    Ok(())
}

/// Write a routed chunk's records to the targets: whole, to a JSON Lines
/// target, one at a time to another.
fn write(interp: &Interp, routed: &Routed, out: &mut Targets) -> Result<()> {
    let counts = [routed.oks, routed.errs];
    for (ok, text, n) in [
        (true, &routed.ok, routed.oks),
        (false, &routed.err, routed.errs),
    ] {
        if n == 0 || out.lines(ok, text, n)? {
            continue;
        }
        for record in text.split(|&b| b == b'\n').filter(|r| !r.is_empty()) {
            out.text(ok, record)?;
        }
    }
    if let Some(meter) = interp.meter() {
        meter.read_records(counts[0] + counts[1]);
        meter.judged(counts[0], counts[1]);
    }
    Ok(())
}

/// The file cut into chunks that end after a newline (or at its end).
struct Chunks {
    /// Bytes read past the last chunk's end.
    carry: Vec<u8>,
    /// The number of the next chunk's first line.
    next_line: u64,
    at_start: bool,
    ended: bool,
    /// Why reading stopped early.
    failed: Option<String>,
}

impl Chunks {
    /// The next chunk and the number of its first line; `None` at the end.
    fn next(&mut self, reader: &mut Box<dyn BufRead>) -> Option<(u64, Vec<u8>)> {
        let mut chunk = std::mem::take(&mut self.carry);
        let mut searched = 0;
        loop {
            if chunk.len() >= CHUNK_BYTES {
                if let Some(i) = memchr::memrchr(b'\n', &chunk[searched..]) {
                    let end = searched + i + 1;
                    self.carry.extend_from_slice(&chunk[end..]);
                    chunk.truncate(end);
                    break;
                }
                searched = chunk.len();
            }
            let buf = match fill(reader) {
                Ok(buf) => buf,
                Err(e) => {
                    // As a source has it: the line being read is lost, and
                    // the failure stands in its place.
                    let whole = memchr::memrchr(b'\n', &chunk).map_or(0, |i| i + 1);
                    chunk.truncate(whole);
                    self.failed = Some(format!("read error: {e}"));
                    self.ended = true;
                    break;
                }
            };
            if buf.is_empty() {
                self.ended = true;
                break;
            }
            chunk.extend_from_slice(buf);
            let n = buf.len();
            reader.consume(n);
        }
        if std::mem::take(&mut self.at_start) && chunk.starts_with(BOM) {
            chunk.drain(..BOM.len());
        }
        if chunk.is_empty() {
            return None;
        }
        let first_line = self.next_line;
        self.next_line += memchr::memchr_iter(b'\n', &chunk).count() as u64;
        Some((first_line, chunk))
    }
}

/// A worker: rebuild the session, then route each chunk handed to it.
fn work(
    rebuild: &dyn Rebuild,
    ty: &str,
    name: &str,
    errs_wanted: bool,
    taken: &Mutex<Receiver<Job>>,
    done: &Sender<(usize, std::result::Result<Routed, SentError>)>,
) {
    let built = rebuild.rebuild(ty).and_then(|(interp, contract)| {
        let copier = Copier::new(&contract, &interp, errs_wanted)
            .ok_or("the contract cannot be checked by lines")?;
        Ok((interp, contract, copier))
    });
    let name: Rc<str> = name.into();
    loop {
        let job = {
            let taken = taken.lock().unwrap_or_else(|e| e.into_inner());
            match taken.recv() {
                Ok(job) => job,
                Err(_) => return,
            }
        };
        let seq = job.seq;
        let routed = match &built {
            Ok((interp, contract, copier)) => {
                // A panic must not leave the reader waiting for this chunk.
                let routed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    route_chunk(interp, contract, copier, &name, job)
                }));
                match routed {
                    Ok(routed) => routed.map_err(SentError::from),
                    Err(_) => Err(SentError::worker_stopped()),
                }
            }
            Err(why) => Err(SentError::from(RuntimeError::new("hql::parallel", *why))),
        };
        if done.send((seq, routed)).is_err() {
            return;
        }
    }
}

/// Route the lines of one chunk as one thread routes them.
fn route_chunk(
    interp: &Rc<Interp>,
    contract: &Rc<Contract>,
    copier: &Rc<RefCell<Copier>>,
    name: &Rc<str>,
    job: Job,
) -> Result<Routed> {
    let mut out = Routed::default();
    let mut record_text = Vec::new();
    let text: Box<dyn BufRead> = Box::new(std::io::Cursor::new(job.bytes));
    let lines = JsonSource::lines(text).with_line_reader(Copier::hook(copier, interp));
    for item in json_items(lines, name.clone(), job.first_line - 1) {
        routed(interp, copier, contract, item?, &mut record_text, &mut out)?;
    }
    Ok(out)
}
