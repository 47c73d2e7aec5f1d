//! Unique keys of a pipeline spread over threads (`staged`).
//!
//! A record's keys decide what it becomes (§4.8 step 6), and they are
//! claimed in the order of the file, so a worker cannot settle them: it
//! leaves each record valid but for its keys `ok` and runs it through the
//! stages as such, logs its keys (`Deferred`, a `KeyLog`), and notes where
//! its item lies in the chunk's rendered text. The calling thread claims
//! the logged keys in the order of the file (`Settler`), a batch of keys in
//! order at once where they lie above every key claimed before. A record
//! whose key was claimed before it is run again on the calling thread from
//! the chunk's bytes, as one thread runs it, and what it becomes takes the
//! place of the worker's item. Repeated keys are few, so almost every
//! record is settled by its keys alone.

use std::cell::{Cell, RefCell};
use std::io::{BufRead, Cursor};
use std::rc::Rc;

use super::{rendered, Made, Piece, Render, Seen};
use crate::runtime::contract::Contract;
use crate::runtime::eval::io::JsonInput;
use crate::runtime::eval::Staged;
use crate::runtime::eval::{Interp, Item, Items, Origin, Result, SentError};
use crate::runtime::exec::chunks::{Job, Kept};
use crate::runtime::exec::stages::{framing, validated_chunk, validated_items, Chunk, KeyWork};
use crate::runtime::json::{strip_line_end, Decoder};
use crate::runtime::validate::{KeyLog, LoggedRecord, Uniques};
use crate::runtime::value::Value;

/// Where a piece stood: the lengths of its texts and counts.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Marks {
    text: usize,
    errs: usize,
    ends: usize,
    n: u64,
    failed: u64,
}

impl Piece {
    fn marks(&self) -> Marks {
        Marks {
            text: self.text.len(),
            errs: self.errs.len(),
            ends: self.ends.len(),
            n: self.n,
            failed: self.failed,
        }
    }
}

/// A record a worker left `ok` whose keys are still to settle: its line
/// (counted from the chunk's first), how many items and failure records
/// (`Render::Route`'s `errs`) the records before it gave, and what it
/// gave. Kept small: most records of a keyed chunk have one.
#[derive(Debug, Clone, Copy)]
struct Pending {
    line: u32,
    n: u32,
    failed: u32,
    gave: Gave,
}

/// What a record gave downstream of validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Gave {
    Nothing,
    Item,
    /// An item `Render::Route` sends to `errs`.
    Failure,
}

/// What a worker logs of a chunk's records whose keys are still to
/// settle, in the order of the chunk.
pub(super) struct Deferred {
    log: KeyLog,
    /// The records with a key, in the log's order (a record with none
    /// cannot repeat one: its item stands).
    pending: Vec<Pending>,
    /// The first of `pending` whose item is not placed yet.
    next: usize,
    first_line: u64,
}

impl Deferred {
    /// For a chunk from line `first_line`, with room for `room` records.
    pub(super) fn new(first_line: u64, room: usize) -> Deferred {
        Deferred {
            log: KeyLog::default(),
            pending: Vec::with_capacity(room),
            next: 0,
            first_line,
        }
    }

    /// How many records it holds.
    pub(super) fn len(&self) -> usize {
        self.pending.len()
    }

    /// Log `ok`, a record of `contract` valid but for its keys, read from
    /// `line`.
    pub(super) fn log(&mut self, contract: &Contract, ok: &Value, line: u64) {
        let Some(shape) = contract.record() else {
            return;
        };
        if self.log.keys_of(shape, ok, line) {
            self.pending.push(Pending {
                line: (line - self.first_line) as u32,
                n: 0,
                failed: 0,
                gave: Gave::Nothing,
            });
        }
    }

    /// The record of `line` gave `gave` after `n` items of which `failed`
    /// failure records; the records before it gave none that is not
    /// placed.
    pub(super) fn placed(&mut self, line: u64, (n, failed): (u64, u64), gave: Gave) {
        let line = (line - self.first_line) as u32;
        self.none_before(line, (n, failed));
        if let Some(p) = self.pending.get_mut(self.next).filter(|p| p.line == line) {
            (p.n, p.failed, p.gave) = (n as u32, failed as u32, gave);
            self.next += 1;
        }
    }

    /// The records not placed before `line` gave nothing, after `n`
    /// items of which `failed` failure records.
    fn none_before(&mut self, line: u32, (n, failed): (u64, u64)) {
        while let Some(p) = self.pending.get_mut(self.next).filter(|p| p.line < line) {
            (p.n, p.failed) = (n as u32, failed as u32);
            self.next += 1;
        }
    }

    /// The chunk is done, with `n` items of which `failed` failure
    /// records: the records not placed gave nothing.
    pub(super) fn done(&mut self, counts: (u64, u64)) {
        self.none_before(u32::MAX, counts);
    }

    /// What crosses back to the calling thread with the chunk's piece.
    pub(super) fn into_keyed(self, text: Kept) -> Keyed {
        Keyed {
            log: self.log,
            pending: self.pending,
            text,
            first_line: self.first_line,
        }
    }
}

/// A worker's chunk as the calling thread settles its keys: the keys
/// logged, the records they belong to, and the chunk's bytes to read a
/// record again from.
pub(super) struct Keyed {
    log: KeyLog,
    pending: Vec<Pending>,
    text: Kept,
    first_line: u64,
}

/// A worker's chunk of a contract with unique keys, its bytes kept for
/// the calling thread to read records again from.
pub(super) struct KeptChunk(Rc<Kept>);

/// The bytes of a kept chunk, as a reader reads them.
struct KeptText(Rc<Kept>);

impl AsRef<[u8]> for KeptText {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl KeptChunk {
    /// Keep `job`'s bytes: the chunk, and a reader of them.
    pub(super) fn open(job: Job) -> (KeptChunk, Box<dyn BufRead>) {
        let kept = Rc::new(job.into_kept());
        let text = Box::new(Cursor::new(KeptText(kept.clone())));
        (KeptChunk(kept), text)
    }

    /// The chunk read: what the calling thread needs of it, its records
    /// taken from `seen`; `room`, set to how many there were, for the
    /// next chunk's.
    pub(super) fn close(self, seen: &Seen, room: &Cell<usize>) -> Option<Keyed> {
        let keys = seen.keys.as_ref()?;
        let deferred = keys.replace(Deferred::new(0, 0));
        room.set(deferred.len());
        // The reader is gone with the chunk's items: the bytes are the
        // chunk's alone.
        let text = Rc::try_unwrap(self.0).unwrap_or_else(|kept| kept.copied());
        Some(deferred.into_keyed(text))
    }
}

/// Keys left for the calling thread: each record valid but for its keys
/// logged in `seen`'s `Deferred`.
pub(super) fn deferred(seen: &Rc<Seen>, contract: &Rc<Contract>) -> KeyWork {
    let (seen, contract) = (seen.clone(), contract.clone());
    KeyWork::Deferred(Box::new(move |ok, origin| {
        if let (Some(keys), Some(origin)) = (&seen.keys, origin) {
            keys.borrow_mut().log(&contract, ok, origin.line);
        }
    }))
}

/// The calling thread's side: the keys claimed so far, and how to run a
/// record again as one thread runs it.
pub(super) struct Settler {
    pub interp: Rc<Interp>,
    pub staged: Rc<Staged>,
    pub render: Render,
    pub uniques: Rc<RefCell<Uniques>>,
    /// For records run again one at a time.
    pub decoder: RefCell<Decoder>,
}

impl Settler {
    /// Claim the keys of a worker's piece in the order of the file, and
    /// put what one thread makes of each record whose key was taken in the
    /// place of the worker's item. After a runtime error, the piece is
    /// the worker's up to its first such record, and one thread's from
    /// there on.
    pub(super) fn settle(&self, made: Made) -> Result<Made> {
        let (piece, error, Some(keyed)) = made else {
            return Ok(made);
        };
        let Keyed {
            mut log,
            pending,
            text,
            first_line,
        } = keyed;
        let Some(shape) = self.staged.contract.record() else {
            return Ok((piece, error, None));
        };
        let mut lines = Lines::new(&text, first_line);
        let mut out = Spliced::new(piece, self.render);
        let stops = error.is_some();
        if let Some((batch, _)) = log.ascending() {
            // One key a record, each above the one before: a key once taken
            // stays so, so the records are run again once all are settled.
            let mut uniques = self.uniques.borrow_mut();
            if uniques.append(shape, batch) {
                return Ok((out.finish(), error, None));
            }
            let mut taken = Vec::new();
            let mut n = 0;
            batch.drain(|key, by| {
                if (!stops || taken.is_empty()) && !uniques.settle_key(shape, key, by).is_empty() {
                    taken.push(n);
                }
                n += 1;
            });
            drop(uniques);
            for n in taken {
                let stopped = self.run_again(&mut out, &pending[n], &mut lines, stops)?;
                if stopped.is_some() || stops {
                    return Ok((out.finish(), stopped, None));
                }
            }
            return Ok((out.finish(), error, None));
        }
        // Records of several keys: each settled in turn, and run again at
        // once, before the keys of the records after it are claimed.
        let mut n = 0;
        for i in 0..log.len() {
            let Some(LoggedRecord::Keys(keys)) = log.get(i) else {
                continue;
            };
            if keys.is_empty() {
                continue;
            }
            if !self
                .uniques
                .borrow_mut()
                .settle_keys(shape, keys)
                .is_empty()
            {
                let stopped = self.run_again(&mut out, &pending[n], &mut lines, stops)?;
                if stopped.is_some() || stops {
                    return Ok((out.finish(), stopped, None));
                }
            }
            n += 1;
        }
        Ok((out.finish(), error, None))
    }

    /// Run the record `p` again, its key taken, as one thread runs it, and
    /// put what it gives in place of the worker's item. With `rest` (the
    /// worker stopped at an error), the rest of the chunk is run from it
    /// on as one thread runs it, and ends the piece; so does a runtime
    /// error, which is given back.
    fn run_again(
        &self,
        out: &mut Spliced,
        p: &Pending,
        lines: &mut Lines,
        rest: bool,
    ) -> Result<Option<SentError>> {
        let line = lines.first_line + u64::from(p.line);
        let start = lines.start_of(line);
        let end = if rest {
            lines.text.len()
        } else {
            lines.end_of_line()
        };
        let text = &lines.text[start..end];
        let claimed = KeyWork::Claimed(self.uniques.clone());
        let (again, error) = match rest {
            true => self.run(text, line, claimed),
            false => self.run_line(text, line, claimed),
        };
        let (before, after) = out.marks_of(p);
        if rest || error.is_some() {
            // What the worker made of the records before it, and counted.
            let (made, _) = self.run(&lines.text[..start], lines.first_line, worker_keys());
            if rest {
                out.piece.tally = made.tally;
            }
            out.cut_at(before, made.judged);
            out.insert(&again);
            return Ok(error);
        }
        if matches!(self.render, Render::Report | Render::Route) {
            // The worker's item, as it counted it.
            let (made, _) = self.run_line(text, line, worker_keys());
            out.piece.tally.withdraw(&made.tally);
        }
        out.replace(before, after);
        out.insert(&again);
        Ok(None)
    }

    /// The lines of `text`, from line `first_line` of the file, through
    /// validation (its keys settled by `keys`) and the steps, rendered.
    fn run(&self, text: &[u8], first_line: u64, keys: KeyWork) -> (Piece, Option<SentError>) {
        let staged = &self.staged;
        let chunk = Chunk {
            framing: match framing(&self.interp, staged.source.format) {
                Ok(framing) => framing,
                Err(e) => return (Piece::default(), Some(SentError::from(e))),
            },
            name: staged.source.name.clone(),
            input: JsonInput::Lines {
                first: None,
                rest: Box::new(Cursor::new(text.to_vec())),
            },
            first_line,
        };
        let lines = validated_chunk(
            &self.interp,
            &staged.contract,
            chunk,
            staged.at.clone(),
            keys,
        );
        self.through_steps(lines)
    }

    /// `run` for one line, which a worker found a valid record: decoded
    /// here and validated as the ordinary path validates a decoded line,
    /// which gives what the line check's record gives (the two are held
    /// to each other by `session::scan_agreement`), without setting up a
    /// reader and a check for one line.
    fn run_line(&self, text: &[u8], line: u64, keys: KeyWork) -> (Piece, Option<SentError>) {
        let Ok(value) = self.decoder.borrow_mut().decode(strip_line_end(text)) else {
            return self.run(text, line, keys);
        };
        let staged = &self.staged;
        let origin = Origin {
            source: staged.source.name.clone(),
            line,
        };
        let item = Item {
            value,
            origin: Some(origin),
        };
        let one = validated_items(
            &self.interp,
            &staged.contract,
            Box::new(std::iter::once(Ok(item))),
            staged.at.clone(),
            keys,
        );
        self.through_steps(one)
    }

    /// Validated records through the steps, rendered.
    fn through_steps(&self, validated: Items) -> (Piece, Option<SentError>) {
        let seen = Rc::new(Seen::default());
        let items = super::counted(validated, &seen);
        rendered(&self.interp, items, &self.staged.steps, self.render, &seen)
    }
}

/// Keys as a worker leaves them: unsettled.
fn worker_keys() -> KeyWork {
    KeyWork::Deferred(Box::new(|_, _| {}))
}

/// The lines of a chunk's bytes, found in order.
struct Lines<'t> {
    text: &'t [u8],
    first_line: u64,
    cursor: LineCursor,
}

impl<'t> Lines<'t> {
    fn new(text: &'t [u8], first_line: u64) -> Lines<'t> {
        Lines {
            text,
            first_line,
            cursor: LineCursor::default(),
        }
    }

    /// Where line `line` of the file (at or after the last found) starts.
    fn start_of(&mut self, line: u64) -> usize {
        self.cursor.start_of(self.text, line - self.first_line)
    }

    /// Where the line found last ends, past its newline.
    fn end_of_line(&self) -> usize {
        self.cursor.end_of_line(self.text)
    }
}

/// A place in a text of lines: where its line `line` (from 0) starts.
#[derive(Default)]
struct LineCursor {
    line: u64,
    at: usize,
}

impl LineCursor {
    /// Where line `line` of `text` (at or after this one) starts.
    fn start_of(&mut self, text: &[u8], line: u64) -> usize {
        while self.line < line {
            self.at = self.end_of_line(text);
            self.line += 1;
        }
        self.at
    }

    /// Where this line of `text` ends, past its newline.
    fn end_of_line(&self, text: &[u8]) -> usize {
        match memchr::memchr(b'\n', &text[self.at..]) {
            Some(i) => self.at + i + 1,
            None => text.len(),
        }
    }
}

/// A worker's piece, remade: its items copied in order, with others put
/// in place of some.
struct Spliced {
    /// The worker's piece.
    old: Piece,
    /// The piece made so far (its tally and judged counts are the
    /// worker's, amended).
    piece: Piece,
    /// Where the worker's piece is copied from next.
    from: Marks,
    /// How many of the worker's records were run again: each was judged
    /// valid and is not.
    again: u64,
    render: Render,
    /// Where the worker's items are found, one a line, in its texts.
    in_text: LineCursor,
    in_errs: LineCursor,
}

impl Spliced {
    fn new(mut old: Piece, render: Render) -> Spliced {
        let piece = Piece {
            tally: std::mem::take(&mut old.tally),
            judged: old.judged,
            ..Piece::default()
        };
        Spliced {
            old,
            piece,
            from: Marks::default(),
            again: 0,
            render,
            in_text: LineCursor::default(),
            in_errs: LineCursor::default(),
        }
    }

    /// Where the worker's item of `p` lies: the marks before and after
    /// it. (Records are asked for in order.)
    fn marks_of(&mut self, p: &Pending) -> (Marks, Marks) {
        let (n, failed) = (u64::from(p.n), u64::from(p.failed));
        let mut before = Marks {
            n,
            failed,
            ..Marks::default()
        };
        let mut after = Marks {
            n: n + u64::from(p.gave != Gave::Nothing),
            failed: failed + u64::from(p.gave == Gave::Failure),
            ..Marks::default()
        };
        let (old, text, errs) = (&self.old, &mut self.in_text, &mut self.in_errs);
        match self.render {
            Render::Count | Render::Report => {}
            Render::Hql => {
                let end = |i: u64| if i > 0 { old.ends[i as usize - 1] } else { 0 };
                (before.text, before.ends) = (end(n), n as usize);
                (after.text, after.ends) = (end(after.n), after.n as usize);
            }
            Render::Json | Render::Write => {
                before.text = text.start_of(old.text.as_bytes(), n);
                after.text = text.start_of(old.text.as_bytes(), after.n);
            }
            Render::Route => {
                before.text = text.start_of(old.text.as_bytes(), n - failed);
                after.text = text.start_of(old.text.as_bytes(), after.n - after.failed);
                before.errs = errs.start_of(old.errs.as_bytes(), failed);
                after.errs = errs.start_of(old.errs.as_bytes(), after.failed);
            }
        }
        (before, after)
    }

    /// Copy the worker's items from where copying stopped up to `to`.
    fn copy_to(&mut self, to: Marks) {
        let (old, piece, from) = (&self.old, &mut self.piece, self.from);
        let base = piece.text.len();
        piece.text.push_str(&old.text[from.text..to.text]);
        piece.errs.push_str(&old.errs[from.errs..to.errs]);
        let ends = &old.ends[from.ends..to.ends];
        piece.ends.extend(ends.iter().map(|e| e - from.text + base));
        piece.n += to.n - from.n;
        piece.failed += to.failed - from.failed;
        self.from = to;
    }

    /// Leave out the worker's item of a record run again, which lies
    /// between `before` and `after`.
    fn replace(&mut self, before: Marks, after: Marks) {
        self.copy_to(before);
        self.from = after;
        self.again += 1;
        self.piece.judged.0 -= 1;
    }

    /// Add `new`'s items where copying stopped.
    fn insert(&mut self, new: &Piece) {
        let piece = &mut self.piece;
        let base = piece.text.len();
        piece.text.push_str(&new.text);
        piece.errs.push_str(&new.errs);
        piece.ends.extend(new.ends.iter().map(|e| e + base));
        piece.n += new.n;
        piece.failed += new.failed;
        piece.tally.merge(&new.tally);
        let (ok, err) = new.judged;
        piece.judged = (piece.judged.0 + ok, piece.judged.1 + err);
    }

    /// Copy none of the worker's items after `to`; `judged`, what the
    /// worker judged of the records before it.
    fn cut_at(&mut self, to: Marks, (ok, err): (u64, u64)) {
        self.copy_to(to);
        self.piece.judged = (ok - self.again, err + self.again);
        self.old = Piece::default();
        self.from = Marks::default();
    }

    /// The piece: the worker's items not yet copied, copied. (Untouched,
    /// it is the worker's.)
    fn finish(mut self) -> Piece {
        if self.again == 0 && self.piece.n == 0 && self.from.n == 0 {
            let Piece { tally, judged, .. } = self.piece;
            return Piece {
                tally,
                judged,
                ..self.old
            };
        }
        let end = self.old.marks();
        self.copy_to(end);
        self.piece
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines are found by their numbers, the last with or without a
    /// newline.
    #[test]
    fn lines_are_found_in_order() {
        let text = b"{\"a\": 1}\n\n{\"a\": 3}\r\n{\"a\": 4}";
        let mut lines = Lines::new(text, 7);
        let at = lines.start_of(9);
        assert_eq!(&text[at..lines.end_of_line()], b"{\"a\": 3}\r\n");
        let at = lines.start_of(10);
        assert_eq!(&text[at..lines.end_of_line()], b"{\"a\": 4}");
    }

    /// A piece remade with an item in place of another keeps the items
    /// around it, and their ends.
    #[test]
    fn an_item_takes_the_place_of_another() {
        let mut old = Piece::default();
        for item in ["one", "two", "three"] {
            old.text.push_str(item);
            old.ends.push(old.text.len());
            old.n += 1;
        }
        old.judged = (3, 0);
        let mut new = Piece::default();
        new.text.push('2');
        new.ends.push(1);
        new.n = 1;
        let mut out = Spliced::new(old, Render::Hql);
        let two = Pending {
            line: 1,
            n: 1,
            failed: 0,
            gave: Gave::Item,
        };
        let (before, after) = out.marks_of(&two);
        out.replace(before, after);
        out.insert(&new);
        let piece = out.finish();
        assert_eq!(piece.text, "one2three");
        assert_eq!(piece.ends, [3, 4, 9]);
        assert_eq!((piece.n, piece.judged), (3, (2, 0)));
    }

    /// Items one a line are found by their place among those of their
    /// kind: a routed failure record in `errs`, any other in `text`.
    #[test]
    fn routed_items_are_found_by_their_kind() {
        let old = Piece {
            text: "a\nb\nc\n".into(),
            errs: "x\ny\n".into(),
            n: 5,
            failed: 2,
            judged: (5, 0),
            ..Piece::default()
        };
        let mut out = Spliced::new(old, Render::Route);
        // The fourth item, the second failure record, after b.
        let y = Pending {
            line: 9,
            n: 3,
            failed: 1,
            gave: Gave::Failure,
        };
        let (before, after) = out.marks_of(&y);
        assert_eq!((before.text, before.errs), (4, 2));
        assert_eq!(
            (after.text, after.errs, after.n, after.failed),
            (4, 4, 4, 2)
        );
        out.replace(before, after);
        let piece = out.finish();
        assert_eq!(
            (piece.text.as_str(), piece.errs.as_str()),
            ("a\nb\nc\n", "x\n")
        );
        assert_eq!((piece.n, piece.failed), (4, 1));
    }
}
