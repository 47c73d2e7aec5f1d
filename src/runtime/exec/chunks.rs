//! A JSON Lines file read in chunks by worker threads, and what they make
//! of each chunk handed back in the order of the file.
//!
//! The calling thread reads the file in chunks cut after a newline,
//! counting their lines so that each chunk knows the number of its first,
//! and hands them to worker threads. Values are `Rc`-based and stay on the
//! thread that made them, so each worker rebuilds its own session from the
//! program's declarations (`eval::Rebuild`) and turns a chunk into
//! something that crosses threads (text, counts). The calling thread takes
//! those in the order of the chunks, so what it does with them is exactly
//! what one thread does. A few chunks a worker are in flight at once, so
//! memory stays bounded whatever the file's size.
//!
//! Every path on several threads runs on this one engine: `count()` and
//! `report()` on the counting path (`counting`), the copier's `route`
//! and `write` (`route/spread.rs`), and the stages after `validate`
//! (`staged`).

use std::collections::BTreeMap;
use std::io::{BufRead, Read};
use std::rc::Rc;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};

use crate::runtime::eval::io::JsonInput;
use crate::runtime::eval::io::{line_too_long, max_line};
use crate::runtime::eval::{check_interrupt, Interp, Parallel, Result, RuntimeError, SentError};
use crate::runtime::exec::counting::{json_lines, MIN_SPLIT_BYTES};
use crate::runtime::exec::stages::cannot_read;
use crate::runtime::json::{BOM, HUGE_LINE};

/// How many bytes a chunk holds, at least (a longer line makes a longer
/// chunk).
const CHUNK_BYTES: usize = 1 << 20;

/// Room a chunk is given past `CHUNK_BYTES` for the read that fills it.
const READ_ROOM: usize = 1 << 16;

/// How many chunks a worker may have waiting or in hand, when the calling
/// thread does little with what comes back (`spread`'s `ahead`).
pub(crate) const AHEAD: usize = 2;

/// Why a compressed file is read on one thread (`--explain`).
pub(crate) const COMPRESSED: &str =
    "the file is compressed, and a compressed stream cannot be cut \
    at byte offsets: it is decompressed on a thread of its own and read front to back";

/// The threads to read `path` on, when there are several and the file is
/// a JSON Lines file of at least a megabyte, not compressed; else why
/// it goes down the path of one thread.
pub(super) fn parallel_for(
    interp: &Interp,
    path: &str,
) -> std::result::Result<Parallel, &'static str> {
    let small = "one thread, or the file is not JSON Lines of a megabyte or more in a regular file";
    let parallel = interp.parallel().filter(|p| p.threads > 1).ok_or(small)?;
    let host = interp.host();
    if host.compression(path).is_some() {
        return Err(COMPRESSED);
    }
    let len = host.file_len(path).ok_or(small)?;
    (len >= MIN_SPLIT_BYTES && json_lines(host, path))
        .then_some(parallel)
        .ok_or(small)
}

/// A chunk of the file for a worker.
pub(crate) struct Job {
    /// The number of its first line.
    pub first_line: u64,
    /// Its bytes, which go back to the reader with the job (or with the
    /// reader `into_reader` makes of them) to be filled again: fresh
    /// memory for every chunk cost the kernel a page fault for each page
    /// of it.
    pub bytes: Vec<u8>,
    back: Sender<Vec<u8>>,
}

impl Drop for Job {
    fn drop(&mut self) {
        give_back(&self.back, std::mem::take(&mut self.bytes));
    }
}

impl Job {
    /// The chunk's bytes as a reader, which gives them back when dropped.
    pub fn into_reader(mut self) -> Box<dyn BufRead> {
        let bytes = std::mem::take(&mut self.bytes);
        Box::new(Lent {
            text: std::io::Cursor::new(bytes),
            back: self.back.clone(),
        })
    }

    /// The chunk's lines, for a JSON source. A first line of `HUGE_LINE`
    /// bytes or more (a huge line starts a chunk: `Chunks::next` cuts
    /// before it) keeps the chunk's buffer, which its decoded string then
    /// takes, so that it is held once; the few lines after it are copied
    /// out.
    pub fn into_lines(mut self) -> JsonInput {
        let first = memchr::memchr(b'\n', &self.bytes).map_or(self.bytes.len(), |i| i + 1);
        if first <= HUGE_LINE {
            return JsonInput::Lines {
                first: None,
                rest: self.into_reader(),
            };
        }
        let mut line = std::mem::take(&mut self.bytes);
        let rest = line.split_off(first);
        let rest: Box<dyn BufRead> = Box::new(std::io::Cursor::new(rest));
        JsonInput::Lines {
            first: Some(line),
            rest,
        }
    }

    /// The chunk's bytes, kept past the reading of them (`Kept`).
    pub fn into_kept(mut self) -> Kept {
        Kept {
            bytes: std::mem::take(&mut self.bytes),
            back: self.back.clone(),
        }
    }
}

/// A chunk's bytes kept after a worker has read them, for the calling
/// thread to read some of its lines again; given back when dropped.
pub(crate) struct Kept {
    bytes: Vec<u8>,
    back: Sender<Vec<u8>>,
}

impl Kept {
    /// A copy, given back when dropped as these are.
    pub fn copied(&self) -> Kept {
        Kept {
            bytes: self.bytes.clone(),
            back: self.back.clone(),
        }
    }
}

impl std::ops::Deref for Kept {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        give_back(&self.back, std::mem::take(&mut self.bytes));
    }
}

/// Give `bytes` back to the reader of the file, unless they are none or a
/// long line grew them far past a chunk's size; the reader may be gone,
/// and they are then freed.
fn give_back(back: &Sender<Vec<u8>>, bytes: Vec<u8>) {
    let capacity = bytes.capacity();
    if capacity > 0 && capacity <= 4 * (CHUNK_BYTES + READ_ROOM) {
        let _ = back.send(bytes);
    }
}

/// A chunk's bytes read by a worker, given back when it is done.
struct Lent {
    text: std::io::Cursor<Vec<u8>>,
    back: Sender<Vec<u8>>,
}

impl Read for Lent {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.text.read(buf)
    }
}

impl BufRead for Lent {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.text.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.text.consume(n);
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        give_back(&self.back, std::mem::take(self.text.get_mut()));
    }
}

/// What a worker does with each piece of work it is handed (a chunk of a
/// file, or another part of a source that can be read apart), made on the
/// worker's thread.
pub(crate) type Worker<R, J = Job> = Box<dyn FnMut(J) -> Result<R>>;

/// How each worker is made, on its own thread.
pub(crate) type Start<'a, R, J = Job> =
    dyn Fn() -> std::result::Result<Worker<R, J>, &'static str> + Sync + 'a;

/// Why reading the file stopped before its end: the number of the line
/// lost, and the message. As a source has it, the failure stands in the
/// place of that line.
pub(crate) struct ReadFailure {
    pub line: u64,
    pub message: String,
}

/// Read the lines of `path` on `parallel`'s threads: each worker is made
/// by `start` on its own thread, and what it makes of a chunk goes to
/// `take`, in the order of the file, until `take` says `false`. Each
/// worker may have `ahead` chunks (at least one) waiting or in hand: more
/// keep the workers busy while `take` works longer on a chunk, at the
/// cost of their memory. A read error ends the input early, and is given
/// back.
pub(crate) fn spread<R: Send>(
    interp: &Rc<Interp>,
    parallel: &Parallel,
    path: &str,
    ahead: usize,
    start: &Start<R>,
    take: &mut dyn FnMut(R) -> Result<bool>,
) -> Result<Option<ReadFailure>> {
    let reader = interp
        .host()
        .open_file(path)
        .map_err(|e| cannot_read(path, &e))?;
    let mut reader = interp.metered(reader, Some(path));
    let (workers, in_flight) = (parallel.threads, parallel.threads * ahead.max(1));
    spread_reader(&mut reader, path, (workers, in_flight), start, take)
}

/// `spread` of what `reader` reads, on `workers` threads with at most
/// `in_flight` chunks handed out and not yet taken.
fn spread_reader<R: Send>(
    reader: &mut Box<dyn BufRead>,
    path: &str,
    threads: (usize, usize),
    start: &Start<R>,
    take: &mut dyn FnMut(R) -> Result<bool>,
) -> Result<Option<ReadFailure>> {
    let mut chunks = Chunks::new();
    // A chunk's bytes come back through `back` to be filled again.
    let (back, spare) = mpsc::channel();
    let mut next = || -> Result<Option<Job>> {
        if chunks.ended {
            return Ok(None);
        }
        let chunk = chunks.next(reader, &spare);
        if let Some(line) = chunks.too_long {
            return Err(line_too_long(path, line));
        }
        Ok(chunk.map(|(first_line, bytes)| Job {
            first_line,
            bytes,
            back: back.clone(),
        }))
    };
    let whole = in_order(threads, &mut next, start, take)?;
    Ok(chunks.failed.filter(|_| whole).map(|message| ReadFailure {
        line: chunks.next_line,
        message,
    }))
}

/// Hand the pieces of work `next` gives to `workers` threads, each made
/// by `start`, with at most `in_flight` handed out and not yet taken, and
/// give what the workers make of them to `take` in the order `next` gave
/// them, until it has no more or `take` says `false` (then `false`). A
/// worker that fails, or panics, fails the whole.
pub(crate) fn in_order<J: Send, R: Send>(
    (workers, in_flight): (usize, usize),
    next: &mut dyn FnMut() -> Result<Option<J>>,
    start: &Start<R, J>,
    take: &mut dyn FnMut(R) -> Result<bool>,
) -> Result<bool> {
    let (jobs, taken) = mpsc::sync_channel::<(usize, J)>(in_flight);
    let taken = Arc::new(Mutex::new(taken));
    let (done, results) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (taken, done) = (taken.clone(), done.clone());
            crate::syntax::limits::spawn_scoped(scope, move || work(start, &taken, &done))
                .map_err(|e| {
                    RuntimeError::new("hql::parallel", format!("cannot start a thread: {e}"))
                })?;
        }
        drop(done);
        // Dropping `jobs` on the way out, however it ends, stops the workers.
        hand_out(jobs, &results, in_flight, next, take)
    })
}

type Done<R> = (usize, std::result::Result<R, SentError>);

/// Hand out the pieces, and take what comes back in their order.
fn hand_out<J, R>(
    jobs: SyncSender<(usize, J)>,
    results: &Receiver<Done<R>>,
    in_flight: usize,
    next: &mut dyn FnMut() -> Result<Option<J>>,
    take: &mut dyn FnMut(R) -> Result<bool>,
) -> Result<bool> {
    let lost = || RuntimeError::from(SentError::worker_stopped());
    let (mut sent, mut taken, mut ended) = (0, 0, false);
    let mut waiting = BTreeMap::new();
    loop {
        while !ended && sent - taken < in_flight {
            check_interrupt()?;
            match next()? {
                Some(job) => {
                    jobs.send((sent, job)).map_err(|_| lost())?;
                    sent += 1;
                }
                None => ended = true,
            }
        }
        if sent == taken {
            return Ok(true);
        }
        let (seq, made) = results.recv().map_err(|_| lost())?;
        waiting.insert(seq, made);
        while let Some(made) = waiting.remove(&taken) {
            if !take(made.map_err(RuntimeError::from)?)? {
                return Ok(false);
            }
            taken += 1;
        }
    }
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
    /// The line longer than the longest allowed that stopped the reading.
    too_long: Option<u64>,
}

impl Chunks {
    /// Chunks from the start of a file.
    fn new() -> Chunks {
        Chunks {
            carry: Vec::new(),
            next_line: 1,
            at_start: true,
            ended: false,
            failed: None,
            too_long: None,
        }
    }

    /// The next chunk and the number of its first line, in the bytes of
    /// a chunk given back if there is one; `None` at the end.
    fn next(
        &mut self,
        reader: &mut Box<dyn BufRead>,
        spare: &Receiver<Vec<u8>>,
    ) -> Option<(u64, Vec<u8>)> {
        let mut chunk = spare.try_recv().unwrap_or_default();
        chunk.clear();
        chunk.append(&mut self.carry);
        // Room for the whole chunk and a read past its end, so that it is
        // not copied as it grows.
        chunk.reserve((CHUNK_BYTES + READ_ROOM).saturating_sub(chunk.len()));
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
                // No newline in the whole chunk: it is all one line.
                if chunk.len() > max_line() {
                    self.too_long = Some(self.next_line);
                    self.ended = true;
                    return None;
                }
            }
            // Read into the chunk itself: a file's reader then reads past
            // its buffer, straight into the chunk's spare room, and the
            // bytes are not copied once more.
            let room = (CHUNK_BYTES + READ_ROOM).saturating_sub(chunk.len());
            match reader
                .take(room.max(READ_ROOM) as u64)
                .read_to_end(&mut chunk)
            {
                Ok(0) => {
                    self.ended = true;
                    break;
                }
                Ok(_) => {}
                Err(e) => {
                    // As a source has it: the line being read is lost, and
                    // the failure stands in its place.
                    let whole = memchr::memrchr(b'\n', &chunk).map_or(0, |i| i + 1);
                    chunk.truncate(whole);
                    self.failed = Some(format!("read error: {e}"));
                    self.ended = true;
                    break;
                }
            }
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

/// The lines of `bytes`: each up to a newline, and a last one unless the
/// bytes end with a newline. Found with `memchr`, several times faster
/// than looking at a byte at a time.
pub(crate) fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (line, after) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        rest = after;
        Some(line)
    })
}

/// A worker: made on its thread, then handed pieces until there are none.
fn work<J, R>(start: &Start<R, J>, taken: &Mutex<Receiver<(usize, J)>>, done: &Sender<Done<R>>) {
    let mut worker = start();
    loop {
        let (seq, job) = {
            let taken = taken.lock().unwrap_or_else(|e| e.into_inner());
            match taken.recv() {
                Ok(job) => job,
                Err(_) => return,
            }
        };
        let made = match &mut worker {
            Ok(worker) => {
                // A panic must not leave the reader waiting for this piece.
                let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| worker(job)));
                match made {
                    Ok(made) => made.map_err(SentError::from),
                    Err(_) => Err(SentError::worker_stopped()),
                }
            }
            Err(why) => Err(SentError::from(RuntimeError::new("hql::parallel", *why))),
        };
        if done.send((seq, made)).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk's bytes come back when its job is dropped, or the reader
    /// made of them; none come back of a chunk grown far past its size.
    #[test]
    fn a_chunks_bytes_come_back() {
        let (back, spare) = mpsc::channel();
        let job = |bytes: Vec<u8>| Job {
            first_line: 1,
            bytes,
            back: back.clone(),
        };
        let mut bytes = Vec::with_capacity(CHUNK_BYTES);
        bytes.extend_from_slice(b"{}\n");
        let address = bytes.as_ptr();
        drop(job(bytes));
        let again = spare.try_recv().expect("the bytes came back");
        assert_eq!((again.as_ptr(), again.capacity()), (address, CHUNK_BYTES));
        let mut reader = job(again).into_reader();
        let mut text = String::new();
        reader.read_to_string(&mut text).unwrap();
        assert_eq!(text, "{}\n");
        assert!(spare.try_recv().is_err(), "not while it is read");
        drop(reader);
        assert_eq!(spare.try_recv().map(|b| b.as_ptr()), Ok(address));
        drop(job(Vec::with_capacity(5 * (CHUNK_BYTES + READ_ROOM))));
        drop(job(Vec::new()));
        assert!(spare.try_recv().is_err());
    }

    /// Lines `1\n2\n…` up to `n`, line `k` holding the number `k`.
    fn numbered(n: u64) -> Vec<u8> {
        (1..=n)
            .flat_map(|k| format!("{k}\n").into_bytes())
            .collect()
    }

    /// A reader of `text` whose bytes from `bad` on cannot be read.
    struct FailingAt {
        text: Vec<u8>,
        at: usize,
        bad: usize,
    }

    impl Read for FailingAt {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.at >= self.bad.min(self.text.len()) {
                return match self.at >= self.bad {
                    true => Err(std::io::Error::other("the disk went away")),
                    false => Ok(0),
                };
            }
            let n = buf.len().min(self.bad.min(self.text.len()) - self.at);
            buf[..n].copy_from_slice(&self.text[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    /// What `spread_reader` takes from workers that give each chunk's
    /// first line and how many lines it holds, checking that each line
    /// holds its number and that chunks come in the order of the file:
    /// how many chunks and lines were taken, and how reading ended. A
    /// worker first waits `pause(first_line)` milliseconds.
    fn spread_numbers(
        text: Vec<u8>,
        bad: usize,
        workers: usize,
        pause: fn(u64) -> u64,
    ) -> (usize, u64, Result<Option<ReadFailure>>) {
        let failing = FailingAt { text, at: 0, bad };
        let mut reader: Box<dyn BufRead> = Box::new(std::io::BufReader::new(failing));
        let start = move || -> std::result::Result<Worker<(u64, u64)>, &'static str> {
            Ok(Box::new(move |job: Job| {
                std::thread::sleep(std::time::Duration::from_millis(pause(job.first_line)));
                let mut n = 0;
                for (k, line) in (job.first_line..).zip(lines(&job.bytes)) {
                    if line != k.to_string().as_bytes() {
                        return Err(RuntimeError::new("hql::test", format!("line {k}")));
                    }
                    n += 1;
                }
                Ok((job.first_line, n))
            }))
        };
        let (mut chunks, mut next) = (0, 1);
        let mut take = |(first, n): (u64, u64)| {
            assert_eq!(first, next, "taken in the order of the file");
            chunks += 1;
            next += n;
            Ok(true)
        };
        let in_flight = workers * AHEAD;
        let ended = spread_reader(&mut reader, "t", (workers, in_flight), &start, &mut take);
        (chunks, next - 1, ended)
    }

    /// Whatever order the workers finish in, their chunks are taken in
    /// the order of the file, each line once.
    #[test]
    fn chunks_are_taken_in_the_order_of_the_file() {
        let text = numbered(700_000);
        let len = text.len();
        // The first chunk takes longest, so later ones finish first.
        let slow_first = |first| if first == 1 { 30 } else { 0 };
        let (chunks, lines, ended) = spread_numbers(text, usize::MAX, 3, slow_first);
        assert!(matches!(ended, Ok(None)));
        assert_eq!(lines, 700_000);
        assert!(
            chunks >= len / CHUNK_BYTES,
            "{chunks} chunks of {len} bytes"
        );
    }

    /// A read error ends the input where it lies, in whichever chunk: the
    /// lines before the one it falls in are taken, none after it, and
    /// the failure stands in the place of that line.
    #[test]
    fn a_read_error_ends_the_input_where_it_lies() {
        let text = numbered(700_000);
        let line_of = |at: usize| memchr::memchr_iter(b'\n', &text[..at]).count() as u64 + 1;
        let mid = text.len() / 2;
        let line_start = memchr::memrchr(b'\n', &text[..mid]).map_or(0, |i| i + 1);
        for bad in [0, 10, CHUNK_BYTES + 3, mid, line_start, text.len() - 2] {
            let lost = line_of(bad);
            let (_, lines, ended) = spread_numbers(text.clone(), bad, 2, |_| 0);
            let failed = match ended {
                Ok(Some(failed)) => failed,
                _ => panic!("byte {bad}: no read failure"),
            };
            assert_eq!((lines, failed.line), (lost - 1, lost), "byte {bad}");
            assert!(failed.message.contains("the disk went away"));
        }
    }

    /// The error given is the earliest in the order of the file, though a
    /// later chunk's came back first; a worker that cannot start gives
    /// why.
    #[test]
    fn the_earliest_error_is_given() {
        let text = numbered(700_000);
        // Where the second chunk starts, found by cutting on this thread.
        let mut reader: Box<dyn BufRead> = Box::new(std::io::Cursor::new(text.clone()));
        let mut chunks = Chunks::new();
        let (_, spare) = mpsc::channel();
        let firsts: Vec<u64> = std::iter::from_fn(|| chunks.next(&mut reader, &spare))
            .map(|(first, _)| first)
            .collect();
        assert!(firsts.len() > 3, "{firsts:?}");
        let second = firsts[1];
        let mut reader: Box<dyn BufRead> = Box::new(std::io::Cursor::new(text.clone()));
        let start = || -> std::result::Result<Worker<()>, &'static str> {
            Ok(Box::new(move |job: Job| match job.first_line {
                1 => Ok(()),
                line if line == second => {
                    std::thread::sleep(std::time::Duration::from_millis(30));
                    Err(RuntimeError::new("hql::test", "earlier"))
                }
                _ => Err(RuntimeError::new("hql::test", "later")),
            }))
        };
        let mut taken = 0;
        let ended = spread_reader(&mut reader, "t", (3, 6), &start, &mut |()| {
            taken += 1;
            Ok(true)
        });
        let message = ended.err().map(|e| e.message);
        assert_eq!((taken, message.as_deref()), (1, Some("earlier")));
        let mut reader: Box<dyn BufRead> = Box::new(std::io::Cursor::new(text));
        let start = || -> std::result::Result<Worker<()>, &'static str> { Err("no start") };
        let ended = spread_reader(&mut reader, "t", (2, 4), &start, &mut |()| Ok(true));
        assert_eq!(ended.err().map(|e| e.message).as_deref(), Some("no start"));
    }

    /// `lines` cuts as splitting at each newline does, but for the empty
    /// piece such a split leaves after a final newline (or of no bytes).
    #[test]
    fn lines_are_cut_at_newlines() {
        let cases: [&[u8]; 8] = [
            b"",
            b"\n",
            b"a",
            b"a\n",
            b"a\nb",
            b"a\n\nb\n",
            b"\n\n\r\n",
            b"{\"k\": 1}\n{\"k\": 2}\n{\"k\"",
        ];
        for bytes in cases {
            let mut split: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
            if bytes.is_empty() || bytes.ends_with(b"\n") {
                split.pop();
            }
            assert_eq!(lines(bytes).collect::<Vec<_>>(), split, "{bytes:?}");
        }
    }
}
