//! `count()` of `validate(T) | oks()` and `report()` of `validate(T)` over a
//! JSON Lines file, or a CSV file whose codec gives each row's converted
//! cells (`RowCells::each_row_for_check`): the pipelines that check records
//! and keep only counts.
//! `route(interp, builtin, plan)` says whether and how (the execution
//! planner asks it), `consume` runs it.
//!
//! No record is built for these: each line is first checked as it is read
//! ([`LineCheck`]), and only a line that check cannot vouch for — one that
//! fails, warns, or does not decode — is decoded and validated the ordinary
//! way, so its failures are counted exactly as `validate` names them.
//!
//! With several threads (`--threads`), the calling thread reads the file
//! in chunks and hands them to worker threads (`exec::chunks`, the engine
//! every path on several threads runs on). Values are `Rc`-based and stay
//! on the thread that made them, so each worker builds its own session
//! from the program's declarations, checks the lines of the chunks it
//! takes, and sends back only counts ([`Tally`]), which the calling thread
//! merges in the order of the file, as one thread meets failures.
//!
//! Unique keys depend on order: with them, a worker also logs what keys
//! decide ([`KeyLog`]), and the calling thread claims the keys in the
//! order of the file (`run`).
//!
//! Anything else — other pipelines, stdin, a file that is not a regular
//! file (a FIFO or a device has no length to split by, and cannot be
//! peeked at and then read again), a JSON array — takes the ordinary
//! path. A CSV file is counted on one thread: a quoted cell may hold a
//! newline.

use std::io::{BufRead, Read};
use std::rc::Rc;
use std::sync::Arc;

use crate::runtime::builtins::Builtin;
use crate::runtime::contract::Contract;
use crate::runtime::eval::io::{
    line_too_long, max_line, unreadable, Cell, Part as SourcePart, RowForCheck,
};
use crate::runtime::eval::meter::Meter;
use crate::runtime::eval::{
    check_interrupt, Host, Interp, Origin, Parallel, Plan, Result, SourceSpec,
};
use crate::runtime::exec::chunks::{self, Worker};
use crate::runtime::exec::stages::cannot_read;
use crate::runtime::exec::stages::Tally;
use crate::runtime::json::{fill, is_json_space, Decoder, BOM};
use crate::runtime::measures::{Measures, Part};
use crate::runtime::scan::{LineCheck, Verdict};
use crate::runtime::validate::{
    decode_failure, findings_keyed, validate_value, KeyLog, LoggedRecord, Uniques,
};
use crate::runtime::value::Value;

/// Files smaller than this are not worth starting threads for.
pub(crate) const MIN_SPLIT_BYTES: u64 = 1 << 20;

/// Why a contract with expectations takes the ordinary path.
const MEASURED: &str = "the contract has expectations, measured here only over JSON Lines whose \
    records the line check leaves as they are (no defaults, no unique keys)";

/// How `count()` (of `validate(T) | oks()`) or `report()` (of
/// `validate(T)`) reads its file on the counting path.
pub enum Route {
    /// JSON Lines in chunks that worker threads check (`chunks::spread`),
    /// their counts merged in the order of the file; with unique keys
    /// (`keyed`), this thread claims the keys they log in that order.
    Chunks {
        path: String,
        len: u64,
        parallel: Parallel,
        keyed: bool,
    },
    /// JSON Lines on this thread: the first `len` bytes of the file (its
    /// length when planned), or, for a compressed file, all it holds.
    OneThread { path: String, len: Option<u64> },
    /// The rows of a format that gives its converted cells (CSV,
    /// Parquet); `format` names it. On this thread, or, with `split`, its
    /// parts (Parquet's row groups) on worker threads, their counts
    /// merged in the order of the file.
    Cells {
        format: &'static str,
        split: Option<Split>,
    },
}

/// A source's parts, read apart on worker threads (`RowCells::parts`).
pub struct Split {
    pub parallel: Parallel,
    /// Each part's number of rows.
    pub rows: Vec<u64>,
}

/// The counting path's route for `b` over `plan`, or why it has none (the
/// ordinary path then runs): the execution planner's question.
pub fn route(
    interp: &Rc<Interp>,
    b: Builtin,
    plan: Option<&Plan>,
) -> std::result::Result<Route, &'static str> {
    let Some(Plan::Validated {
        source,
        contract,
        oks,
        ..
    }) = plan
    else {
        return Err("the pipeline is not a validated source followed by this consumer");
    };
    if !matches!((b, oks), (Builtin::Count, true) | (Builtin::Report, false)) {
        return Err("count() counts valid records only after oks(), report() every result");
    }
    let measured = contract.record().is_some_and(|r| !r.expects.is_empty());
    if measured {
        // A valid line is measured from the check's frame, so the check
        // must vouch for lines as they are (no defaults to fill), and the
        // measures are counted in the order of the file, on one thread.
        let check = LineCheck::keyed(contract, interp);
        if !check.is_some_and(|c| c.keeps_records()) || json_file(interp, source).is_none() {
            return Err(MEASURED);
        }
        if contract.record().is_some_and(|r| !r.uniques.is_empty()) {
            return Err(MEASURED);
        }
    }
    if source.boundary.json.at.is_some() {
        return Err(
            "the records are an array inside one document (`at`), found by reading it whole",
        );
    }
    let Some(path) = json_file(interp, source) else {
        if source.path().is_some() && interp.codec(source.format).cells().is_some() {
            return Ok(Route::Cells {
                format: source.format.name(),
                split: split(interp, contract, source),
            });
        }
        return Err("the source is not a file the line check reads");
    };
    let host = interp.host();
    // Only a regular file has a length: anything else is read once. A
    // compressed file is read once too, decompressed, and never split.
    let len = host.file_len(&path);
    if len.is_none() && host.compression(&path).is_none() {
        return Err(
            "the source is not a regular file (standard input, a FIFO, a device, or missing)",
        );
    }
    if !json_lines(host, &path) {
        return Err("the file is a JSON array, not JSON Lines");
    }
    let split = len.and_then(|len| {
        (interp.parallel())
            .filter(|p| p.threads > 1 && len >= MIN_SPLIT_BYTES)
            .map(|p| (len, p))
    });
    // Unique keys are claimed in the order of the records (`run`).
    let order_free = contract.record().is_some_and(|r| r.uniques.is_empty());
    Ok(match split {
        Some((len, parallel)) if order_free => Route::Chunks {
            path,
            len,
            parallel,
            keyed: false,
        },
        // Workers must judge most lines, or this thread would validate
        // them all again.
        Some((len, parallel)) if LineCheck::keyed(contract, interp).is_some() => Route::Chunks {
            path,
            len,
            parallel,
            keyed: true,
        },
        _ => Route::OneThread { path, len },
    })
}

/// Run `count()` or `report()` over a validated source on `route`;
/// `None` when its file cannot be opened, for the ordinary path to report.
pub fn consume(
    interp: &Rc<Interp>,
    b: Builtin,
    plan: Option<&Plan>,
    route: Route,
) -> Result<Option<Value>> {
    let Some(Plan::Validated {
        source, contract, ..
    }) = plan
    else {
        return Ok(None);
    };
    let tally = match route {
        Route::Cells { split: None, .. } => return tally_rows(interp, contract, source, b),
        Route::Cells {
            split: Some(split), ..
        } => tally_parts(interp, contract, source, b, split)?,
        Route::Chunks {
            path,
            len,
            parallel,
            keyed,
        } => {
            start_meter(interp, len);
            run(interp, contract, &parallel, &path, b, keyed)?
        }
        Route::OneThread { path, len } => {
            if let Some(meter) = interp.meter() {
                meter.start_source(len);
            }
            let mut counter = Counter::new(interp, contract, b, &path, interp.meter(), false);
            counter.measure(Measures::of(interp, contract)?);
            let mark = interp.unmet_count();
            let (tally, measures) = tally_file(counter, &path, len)?;
            judge(interp, tally, measures, mark)
        }
    };
    Ok(Some(match b {
        Builtin::Count => Value::Int(tally.ok),
        _ => tally.into_value(),
    }))
}

/// Judge the expectations `measures` counted, when the contract has
/// any: those that do not hold go to the interpreter, and to the tally's
/// rules.
fn judge(interp: &Interp, mut tally: Tally, measures: Option<Measures>, mark: usize) -> Tally {
    if let Some(m) = measures {
        m.end(interp);
        tally.add_unmet(interp, mark);
    }
    tally
}

fn start_meter(interp: &Interp, len: u64) {
    if let Some(meter) = interp.meter() {
        meter.start_source(Some(len));
    }
}

/// `count()` or `report()` over a file whose format converts its records
/// (CSV), on one thread: each row's converted cells get the line check's
/// verdict (`LineCheck::verdict_cells`), and a row it cannot judge so is
/// checked as the JSON text of the record it decodes to. A CSV file is
/// never split, since a quoted cell may hold a newline.
fn tally_rows(
    interp: &Rc<Interp>,
    contract: &Rc<Contract>,
    source: &SourceSpec,
    consumer: Builtin,
) -> Result<Option<Value>> {
    if source.path().is_none() {
        return Ok(None);
    }
    let Ok(input) = interp.open_input(source) else {
        // The ordinary path reports it.
        return Ok(None);
    };
    let mut counter = Counter::new(
        interp,
        contract,
        consumer,
        &source.name,
        interp.meter(),
        false,
    );
    match interp.codec(source.format).cells() {
        None => Ok(None),
        Some(cells) => {
            cells.each_row_for_check(input, source, contract, None, &mut |row| counter.row(row))?;
            let tally = counter.finish(None)?;
            Ok(Some(match consumer {
                Builtin::Count => Value::Int(tally.ok),
                _ => tally.into_value(),
            }))
        }
    }
}

/// The parts of `source` to count on worker threads, when there are
/// several threads and its format reads it in several parts: a regular
/// file of a megabyte or more (a compressed one would be decompressed by
/// every worker), whose contract claims no unique keys (they are claimed
/// in the order of the records).
fn split(interp: &Rc<Interp>, contract: &Contract, source: &SourceSpec) -> Option<Split> {
    let parallel = interp.parallel().filter(|p| p.threads > 1)?;
    let (host, path) = (interp.host(), source.path()?);
    let len = host
        .file_len(path)
        .filter(|_| host.compression(path).is_none())?;
    if len < MIN_SPLIT_BYTES {
        return None;
    }
    if !contract.record().is_some_and(|r| r.uniques.is_empty()) {
        return None;
    }
    let cells = interp.codec(source.format).cells()?;
    let rows = cells
        .parts(interp.open_input(source).ok()?, source)
        .ok()??;
    Some(Split { parallel, rows })
}

/// `count()` or `report()` over the parts of a file, each read by a
/// worker thread as `tally_rows` reads the whole, a few parts a worker at
/// once; their counts are merged in the order of the file.
fn tally_parts(
    interp: &Rc<Interp>,
    contract: &Rc<Contract>,
    source: &SourceSpec,
    consumer: Builtin,
    split: Split,
) -> Result<Tally> {
    let (ty, name, format) = (
        contract.name.clone(),
        source.name.to_string(),
        source.format,
    );
    let (place, boundary) = (source.place.clone(), source.boundary.clone());
    let (rebuild, meter) = (split.parallel.rebuild.clone(), interp.meter().cloned());
    let start = move || -> std::result::Result<Worker<Tally, SourcePart>, &'static str> {
        let (interp, contract) = rebuild.rebuild(&ty)?;
        let mut spec = SourceSpec::new(&name, place.clone(), format);
        spec.boundary = boundary.clone();
        let mut counter = Counter::new(&interp, &contract, consumer, &name, meter.as_ref(), true);
        Ok(Box::new(move |part: SourcePart| {
            let input = interp.open_input(&spec)?;
            if let Some(cells) = interp.codec(spec.format).cells() {
                cells.each_row_for_check(input, &spec, &contract, Some(&part), &mut |row| {
                    counter.row(row)
                })?;
            }
            Ok(counter.hand_over().0)
        }))
    };
    let mut parts = (split.rows.iter().enumerate()).scan(1, |first_line, (i, &rows)| {
        let part = SourcePart {
            parts: i..i + 1,
            first_line: *first_line,
        };
        *first_line += rows;
        Some(part)
    });
    let mut next = || Ok(parts.next());
    let mut total = Tally::default();
    let mut take = |tally: Tally| {
        total.merge(&tally);
        Ok(true)
    };
    let threads = split.parallel.threads;
    chunks::in_order(
        (threads, threads * chunks::AHEAD),
        &mut next,
        &start,
        &mut take,
    )?;
    Ok(total)
}

/// The file of a source the line check can read: a file of a format
/// whose records are JSON texts (`Codec::json_text`), whose keys are
/// the program's field names.
pub fn json_file(interp: &Interp, source: &SourceSpec) -> Option<String> {
    let plain = interp.codec(source.format).json_text().is_some()
        && source.boundary.columns.is_empty()
        && source.boundary.json.at.is_none();
    source.path().filter(|_| plain).map(str::to_string)
}

/// Is the file JSON Lines: is its first significant byte, after a
/// byte-order mark, not `[`?
pub(crate) fn json_lines(host: &Rc<dyn Host>, path: &str) -> bool {
    let Ok(mut reader) = host.open_file(path) else {
        return false;
    };
    let Ok(buf) = reader.fill_buf() else {
        return false;
    };
    let buf = buf.strip_prefix(BOM).unwrap_or(buf);
    let first = buf.iter().copied().find(|&b| !is_json_space(b));
    first.is_some() && first != Some(b'[')
}

/// Count with `counter` the records of the lines of the first `len`
/// bytes of the file (its length when the run was planned; a compressed
/// file's whole), for `count()` (which needs only the valid ones counted)
/// or `report()`. A read error ends the input after one failure; a
/// compressed stream that breaks off ends it with an error.
fn tally_file(
    mut counter: Counter,
    path: &str,
    len: Option<u64>,
) -> Result<(Tally, Option<Measures>)> {
    let len = len.unwrap_or(u64::MAX);
    let mut reader = counter
        .interp
        .host()
        .open_file(path)
        .map_err(|e| cannot_read(path, &e))?;
    // Lines are taken from the reader's buffer where they lie in it; one
    // that straddles two reads is gathered in `carry`.
    let mut carry = Vec::new();
    let mut pos = 0;
    let mut line_start = 0;
    while line_start < len || !carry.is_empty() {
        check_interrupt()?;
        counter.tick(Some(pos));
        let buf = match fill(&mut reader) {
            Ok(buf) => buf,
            Err(e) => {
                if let Some(error) = unreadable(path, &e) {
                    return Err(error);
                }
                counter.read_failed(&e);
                break;
            }
        };
        if buf.is_empty() {
            if !carry.is_empty() {
                counter.line(&carry, line_start)?;
            }
            break;
        }
        let end = memchr::memchr(b'\n', buf);
        if carry.len() + end.unwrap_or(buf.len()) > max_line() {
            return Err(line_too_long(
                path,
                line_at(&counter.interp, path, line_start)?,
            ));
        }
        let Some(i) = end else {
            carry.extend_from_slice(buf);
            let n = buf.len();
            reader.consume(n);
            pos += n as u64;
            continue;
        };
        if carry.is_empty() {
            counter.line(&buf[..i], line_start)?;
        } else {
            carry.extend_from_slice(&buf[..i]);
            counter.line(&carry, line_start)?;
            carry.clear();
        }
        reader.consume(i + 1);
        pos += i as u64 + 1;
        line_start = pos;
    }
    let measures = counter.measures.take();
    Ok((counter.finish(Some(pos))?, measures))
}

/// The number of the line of `path` that starts at byte `at`, counted
/// from the file's start (only for a message: it reads the file again).
fn line_at(interp: &Interp, path: &str, at: u64) -> Result<u64> {
    let reader = interp
        .host()
        .open_file(path)
        .map_err(|e| cannot_read(path, &e))?;
    let mut newlines = 0;
    let mut reader = reader.take(at);
    loop {
        let buf = fill(&mut reader).map_err(|e| cannot_read(path, &e))?;
        if buf.is_empty() {
            return Ok(newlines + 1);
        }
        newlines += memchr::memchr_iter(b'\n', buf).count() as u64;
        let n = buf.len();
        reader.consume(n);
    }
}

/// How many records ahead of the one whose keys are settled have their
/// keys' slots fetched: enough to hide the wait for memory that a lookup
/// in a large set otherwise costs.
const KEYS_AHEAD: usize = 8;

/// How many chunks of the file each worker may have waiting or in hand
/// when this thread settles their keys (`run`): that takes it a
/// good part of the time a worker takes to check a chunk, and with the
/// usual two the workers often waited for it. On two cores, 5,000,000
/// events took 1.21 s by the clock with four against 1.29 s with two.
const CHUNKS_AHEAD: usize = 4;

/// How many valid records' keys one thread logs before it settles them.
const KEYS_BATCH: usize = 1024;

/// How many lines go by between two updates of the meter.
const SHOW_EVERY: u32 = 4096;

/// What lines are counted with: the file's on one thread; on several, a
/// worker's chunks, and on the calling thread the lines whose keys decide
/// them.
struct Counter {
    interp: Rc<Interp>,
    contract: Rc<Contract>,
    check: Option<LineCheck>,
    keys: Keys,
    decoder: Decoder,
    consumer: Builtin,
    tally: Tally,
    origin: Origin,
    meter: Option<Arc<Meter>>,
    /// What the meter has been shown: records, oks, errs, and the byte
    /// read up to.
    shown: (i64, i64, i64, u64),
    /// Lines counted since the meter was last shown.
    unshown: u32,
    /// The measures of the contract's expectations, counted line by line
    /// (on a worker, logged for this thread to add: `Measures::logging`).
    measures: Option<Measures>,
    /// Are they `seen_by` the check?
    seen_only: bool,
}

/// What a counter does with the unique keys of the records it counts.
enum Keys {
    /// The contract has none.
    None,
    /// They are claimed here, in the order of the records: a valid
    /// record's keys are logged in `pending` and settled a batch at a
    /// time, their places fetched ahead, and always before a record is
    /// validated the ordinary way.
    Claimed { uniques: Uniques, pending: KeyLog },
    /// They are logged, for the calling thread to claim in the order of
    /// the file (a worker's counter, `run`).
    Logged(KeyLog),
}

impl Counter {
    /// A counter of records of `contract`; `logged`, on a worker that
    /// logs what unique keys decide rather than claiming keys itself.
    fn new(
        interp: &Rc<Interp>,
        contract: &Rc<Contract>,
        consumer: Builtin,
        source: &str,
        meter: Option<&Arc<Meter>>,
        logged: bool,
    ) -> Counter {
        let keyed = contract.record().is_some_and(|r| !r.uniques.is_empty());
        Counter {
            interp: interp.clone(),
            contract: contract.clone(),
            check: LineCheck::keyed(contract, interp),
            keys: match (keyed, logged) {
                (false, _) => Keys::None,
                (true, false) => Keys::Claimed {
                    uniques: Uniques::default(),
                    pending: KeyLog::default(),
                },
                (true, true) => Keys::Logged(KeyLog::default()),
            },
            decoder: Decoder::new(),
            consumer,
            tally: Tally::default(),
            origin: Origin {
                source: source.into(),
                line: 0,
            },
            meter: meter.cloned(),
            shown: (0, 0, 0, 0),
            unshown: 0,
            measures: None,
            seen_only: false,
        }
    }

    /// Count the measures of the contract's expectations too (`None`:
    /// it has none).
    fn measure(&mut self, measures: Option<Measures>) {
        self.seen_only = match (&measures, &self.check) {
            (Some(m), Some(check)) => m.seen_by(check),
            _ => false,
        };
        self.measures = measures;
    }

    /// One more line: the meter is shown a batch of lines at a time, since
    /// an atomic add a line would cost the count path a few percent.
    fn tick(&mut self, pos: Option<u64>) {
        self.unshown += 1;
        if self.unshown == SHOW_EVERY {
            self.show(pos);
        }
    }

    /// Show the meter what was counted since it was last shown; `pos`, the
    /// byte read up to, where the meter's bytes are counted here.
    fn show(&mut self, pos: Option<u64>) {
        let (total, ok, err, at) = self.shown;
        let t = &self.tally;
        let pos = pos.unwrap_or(at);
        if let Some(meter) = &self.meter {
            meter.read_records((t.total - total) as u64);
            meter.judged((t.ok - ok) as u64, (t.err - err) as u64);
            meter.read_bytes(pos.saturating_sub(at));
        }
        self.shown = (t.total, t.ok, t.err, pos);
        self.unshown = 0;
    }

    /// Count the line starting at byte `at` (its newline left off).
    fn line(&mut self, line: &[u8], at: u64) -> Result<()> {
        let text = line.strip_suffix(b"\r").unwrap_or(line);
        // As `source` reads it: a byte-order mark may open the file only.
        let text = match at {
            0 => text.strip_prefix(BOM).unwrap_or(text),
            _ => text,
        };
        if text.iter().all(|&b| is_json_space(b)) {
            return Ok(());
        }
        let verdict = match self.check.as_mut() {
            Some(c) => c.verdict(&self.interp, text),
            None => Verdict::Unsure,
        };
        if self.measures.is_some() {
            return self.measured(text, verdict);
        }
        if self.consumer == Builtin::Report
            && matches!(self.keys, Keys::None)
            && verdict != Verdict::Valid
        {
            // `report()` counts failures by rule: the check names them for
            // a record of scalar fields; the ordinary path, for the rest.
            // A valid line, most of them, needs none named: the verdict,
            // quicker, is enough.
            if let Some(found) = self
                .check
                .as_mut()
                .and_then(|c| c.findings(&self.interp, text))
            {
                self.tally.add_findings(&found);
                return Ok(());
            }
        }
        if self.judged(verdict)? {
            return Ok(());
        }
        self.ordinary(text)
    }

    /// Count and measure a line of a contract with expectations: a valid
    /// one from the frame the check filled, any other decoded and
    /// validated the ordinary way, since the measures read its fields and
    /// where its failures lie.
    fn measured(&mut self, text: &[u8], verdict: Verdict) -> Result<()> {
        let Some(measures) = self.measures.as_mut() else {
            return Ok(());
        };
        if let (Verdict::Valid, Some(check)) = (verdict, &self.check) {
            self.tally.add_valid(1);
            return measures.observe_valid(check);
        }
        // A line that fails is named by the check, and measured from what
        // it saw, when the measures ask no more of it.
        if let Some(check) = self.check.as_mut().filter(|_| self.seen_only) {
            if let Some(found) = check.findings(&self.interp, text) {
                self.tally.add_findings(&found);
                return measures.observe_line(check, !found.failures.is_empty());
            }
        }
        let Ok(input) = self.decoder.decode(text) else {
            self.tally.add_undecodable();
            return measures.observe_undecodable();
        };
        let result = validate_value(&self.interp, &self.contract, input.clone(), None, None)?;
        self.tally.add(&result);
        measures.observe(&input, &result)
    }

    /// Count the record of `text` the ordinary way: decoded, validated and
    /// its failures named. A worker logs a record whose keys decide its
    /// outcome — one with no failure but for its keys, or whose validation
    /// stopped with an error — for the calling thread to validate in turn.
    fn ordinary(&mut self, text: &[u8]) -> Result<()> {
        // Keys are claimed in the order of the records.
        self.settle_pending()?;
        let tally = &mut self.tally;
        let value = match self.decoder.decode(text) {
            Ok(v) => v,
            Err(_) => {
                // Counted by its rule alone: its message is never shown.
                tally.add_undecodable();
                return Ok(());
            }
        };
        let (interp, contract) = (&self.interp, &self.contract);
        match &mut self.keys {
            Keys::None => tally.add_findings(&findings_keyed(interp, contract, &value, None)?),
            Keys::Claimed { uniques, .. } => {
                tally.add_findings(&findings_keyed(interp, contract, &value, Some(uniques))?)
            }
            // A failure leaves a record's keys unclaimed and unlooked-at
            // (§4.8 step 6): such a record is counted here.
            Keys::Logged(log) => match findings_keyed(interp, contract, &value, None) {
                Ok(found) if !found.failures.is_empty() => tally.add_findings(&found),
                _ => log.line(text),
            },
        }
        Ok(())
    }

    /// Settle, in order, the records of `log` (a worker's, of a chunk of
    /// the file, or this counter's own): each valid record's keys claimed,
    /// their slots fetched a few records ahead, each logged line validated
    /// with the keys claimed so far.
    fn settle_log(&mut self, log: &mut KeyLog) -> Result<()> {
        let contract = self.contract.clone();
        let Some(shape) = contract.record() else {
            return Ok(());
        };
        let (tally, keys) = (&mut self.tally, &mut self.keys);
        if let (Some((batch, keyless)), Keys::Claimed { uniques, .. }) = (log.ascending(), keys) {
            // Keys in order, each record's one key or none: above all
            // claimed so far, they are taken whole, and every record is
            // new; else each is settled in turn.
            let n = batch.len();
            if uniques.append(shape, batch) {
                tally.add_valid(n);
            } else {
                batch.drain(|key, by| tally.add_unique(shape, &uniques.settle_key(shape, key, by)));
            }
            tally.add_valid(keyless);
            return Ok(());
        }
        // Keys above all before them need no fetching, and while every key
        // has been so there is nothing to fetch (`Uniques::fetches_ahead`):
        // this batch then fetches nothing.
        let fetching =
            matches!(&self.keys, Keys::Claimed { uniques, .. } if uniques.fetches_ahead());
        let fetch = |keys: &mut Keys, i: usize| {
            if let (Some(LoggedRecord::Keys(ahead)), Keys::Claimed { uniques, .. }) =
                (log.get(i), keys)
            {
                uniques.prefetch(shape, ahead);
            }
        };
        if fetching {
            (0..KEYS_AHEAD).for_each(|i| fetch(&mut self.keys, i));
        }
        let mut i = 0;
        while let Some(record) = log.get(i) {
            if fetching {
                fetch(&mut self.keys, i + KEYS_AHEAD);
            }
            match (record, &mut self.keys) {
                (LoggedRecord::Keys(keys), Keys::Claimed { uniques, .. }) => {
                    let taken = uniques.settle_keys(shape, keys);
                    self.tally.add_unique(shape, &taken);
                }
                (LoggedRecord::Line(text), _) => self.ordinary(text)?,
                (LoggedRecord::Keys(_), _) => {}
            }
            i += 1;
        }
        Ok(())
    }

    /// Settle the keys this counter logged and has not settled yet.
    fn settle_pending(&mut self) -> Result<()> {
        let Keys::Claimed { pending, .. } = &mut self.keys else {
            return Ok(());
        };
        let mut pending = std::mem::take(pending);
        let settled = self.settle_log(&mut pending);
        if let Keys::Claimed { pending: kept, .. } = &mut self.keys {
            *kept = pending.cleared();
        }
        settled
    }

    /// What a worker's counter has counted and logged since it last
    /// handed them over (the meter shown them first).
    fn hand_over(&mut self) -> Handed {
        self.show(None);
        self.shown = (0, 0, 0, self.shown.3);
        let log = match &mut self.keys {
            Keys::Logged(log) => {
                let next = log.with_room_of();
                std::mem::replace(log, next)
            }
            _ => KeyLog::default(),
        };
        let part = self.measures.as_mut().map(Measures::hand_over);
        (std::mem::take(&mut self.tally), log, part)
    }

    /// Count a row a format hands the line check (`RowCells`): `false`
    /// to have the text of one its cells cannot be judged from.
    fn row(&mut self, row: RowForCheck) -> Result<bool> {
        // The reader counts the bytes.
        self.tick(None);
        match row {
            RowForCheck::Cells { fields, undeclared } => self.cells(fields, undeclared),
            // Not the start of a file: a byte-order mark is no concern here.
            RowForCheck::Text(text) => self.line(text.as_bytes(), 1).map(|()| true),
            RowForCheck::Failed(failure) => {
                self.tally.add(&failure.value);
                Ok(true)
            }
        }
    }

    /// Count a record given as its converted cells (`RowForCheck::Cells`), if
    /// the check can judge it from them; `false` to have its text.
    fn cells(&mut self, fields: &[Option<Cell>], undeclared: bool) -> Result<bool> {
        let verdict = match self.check.as_mut() {
            Some(c) => c.verdict_cells(&self.interp, fields, undeclared),
            None => Verdict::Unsure,
        };
        self.judged(verdict)
    }

    /// Count a record by the check's verdict when that is all the
    /// consumer needs; `false` when its failures must be named.
    fn judged(&mut self, verdict: Verdict) -> Result<bool> {
        let tally = &mut self.tally;
        Ok(match (verdict, self.consumer) {
            (Verdict::Valid, _) if !matches!(self.keys, Keys::None) => {
                let (Some(check), Some(shape)) = (self.check.as_ref(), self.contract.record())
                else {
                    return Ok(false);
                };
                match &mut self.keys {
                    // Counts name no claimer: no record has a line here.
                    Keys::Claimed { pending, .. } => {
                        pending.keys(shape, |s| check.key_part(s), 0);
                        if pending.len() == KEYS_BATCH {
                            self.settle_pending()?;
                        }
                    }
                    Keys::Logged(log) => {
                        log.keys(shape, |s| check.key_part(s), 0);
                    }
                    Keys::None => {}
                }
                true
            }
            (Verdict::Valid, _) => {
                tally.add_valid(1);
                true
            }
            (Verdict::Invalid, Builtin::Count) => {
                tally.total += 1;
                tally.err += 1;
                true
            }
            // `report()` counts failures by rule: only the ordinary path
            // names them.
            _ => false,
        })
    }

    /// The tally, once every line is counted: its keys settled, and the
    /// meter shown it (`pos` as for `show`).
    fn finish(mut self, pos: Option<u64>) -> Result<Tally> {
        self.settle_pending()?;
        self.show(pos);
        Ok(self.tally)
    }

    /// A read error ends the input after one failure, as `source` has it.
    fn read_failed(&mut self, e: &std::io::Error) {
        self.input_failed(format!("read error: {e}"));
    }

    /// The input ended early, for the reason `message` gives: one failure.
    fn input_failed(&mut self, message: String) {
        self.tally
            .add(&decode_failure(&self.origin, String::new(), message));
        if let Some(m) = self.measures.as_mut() {
            // The run stops at its end anyway; a budget only says so first.
            let _ = m.observe_undecodable();
        }
    }
}

/// What a worker hands this thread for the chunks it counted: their
/// tally, the keys and lines it logged, and what it measured.
type Handed = (Tally, KeyLog, Option<Part>);

/// `count()` or `report()` on several threads. Workers check the file's
/// chunks (`chunks::spread`) and count every record, or, with unique keys
/// (`keyed`), every record whose outcome its keys cannot change; they log
/// the rest (`KeyLog`): the keys of each valid record, and the line of
/// each record with no failure but for its keys that the line check could
/// not judge. This thread merges the counts and settles the logs in the
/// order of the file, so each key is claimed by the record that claims it
/// on one thread, the earliest error is the one given, a read error ends
/// the input where it lies, and the counts are exactly one thread's.
fn run(
    interp: &Rc<Interp>,
    contract: &Rc<Contract>,
    parallel: &Parallel,
    path: &str,
    consumer: Builtin,
    keyed: bool,
) -> Result<Tally> {
    let (ty, name) = (contract.name.clone(), path.to_string());
    let (rebuild, meter) = (parallel.rebuild.clone(), interp.meter().cloned());
    let start = move || -> std::result::Result<Worker<Handed>, &'static str> {
        let (interp, contract) = rebuild.rebuild(&ty)?;
        let mut counter = Counter::new(&interp, &contract, consumer, &name, meter.as_ref(), true);
        counter.measure(Measures::logging(&contract));
        let name = name.clone();
        Ok(Box::new(move |job: chunks::Job| {
            for (at, line) in (job.first_line..).zip(chunks::lines(&job.bytes)) {
                // The reader stops only at a line with no newline in a
                // whole chunk.
                if line.len() > max_line() {
                    return Err(line_too_long(&name, at));
                }
                counter.tick(None);
                // Not the start of the file: the reader took any byte-order
                // mark off.
                counter.line(line, 1)?;
            }
            Ok(counter.hand_over())
        }))
    };
    let mut here = Counter::new(interp, contract, consumer, path, interp.meter(), false);
    // The keys `orphans` compares with are read before the first record.
    here.measure(Measures::of(interp, contract)?);
    let mark = interp.unmet_count();
    let mut total = Tally::default();
    let mut take = |(tally, mut log, part): Handed| {
        total.merge(&tally);
        if !log.is_empty() {
            here.settle_log(&mut log)?;
            here.show(None);
        }
        match (part, here.measures.as_mut()) {
            (Some(part), Some(m)) => m.add(part).map(|()| true),
            _ => Ok(true),
        }
    };
    let ahead = if keyed { CHUNKS_AHEAD } else { chunks::AHEAD };
    let failed = chunks::spread(interp, parallel, path, ahead, &start, &mut take)?;
    if let Some(failed) = failed {
        here.input_failed(failed.message);
    }
    let measures = here.measures.take();
    total.merge(&here.finish(None)?);
    Ok(judge(interp, total, measures, mark))
}
