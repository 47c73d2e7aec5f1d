//! How far a run has read: counters the evaluator bumps as records go by,
//! for a live progress line drawn elsewhere (tooling.md, "Long runs show
//! progress"). Atomics, so a drawing thread and counting workers can share
//! them; relaxed, since they are only ever shown. A run has a meter only
//! when something watches it (`Interp::watch`): counting costs the ordinary
//! path a few percent.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct Meter {
    records: AtomicU64,
    oks: AtomicU64,
    errs: AtomicU64,
    bytes: AtomicU64,
    /// The size of the sources being read, when known (0: unknown).
    size: AtomicU64,
}

/// What a meter has counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reading {
    pub records: u64,
    pub oks: u64,
    pub errs: u64,
    pub bytes: u64,
    pub size: Option<u64>,
}

impl Meter {
    pub fn read_records(&self, n: u64) {
        self.records.fetch_add(n, Ordering::Relaxed);
    }

    pub fn judged(&self, oks: u64, errs: u64) {
        self.oks.fetch_add(oks, Ordering::Relaxed);
        self.errs.fetch_add(errs, Ordering::Relaxed);
    }

    /// Take back records counted that the run's result leaves out (a
    /// range of a file read past an error that ended it).
    pub fn withdraw(&self, records: u64, oks: u64, errs: u64) {
        self.records.fetch_sub(records, Ordering::Relaxed);
        self.oks.fetch_sub(oks, Ordering::Relaxed);
        self.errs.fetch_sub(errs, Ordering::Relaxed);
    }

    pub fn read_bytes(&self, n: u64) {
        self.bytes.fetch_add(n, Ordering::Relaxed);
    }

    /// A source of `size` bytes is opened: the percentage is of it.
    pub fn start_source(&self, size: Option<u64>) {
        self.bytes.store(0, Ordering::Relaxed);
        self.size.store(size.unwrap_or(0), Ordering::Relaxed);
    }

    pub fn reading(&self) -> Reading {
        let size = self.size.load(Ordering::Relaxed);
        Reading {
            records: self.records.load(Ordering::Relaxed),
            oks: self.oks.load(Ordering::Relaxed),
            errs: self.errs.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            size: (size > 0).then_some(size),
        }
    }
}

/// A reader that counts the bytes taken from it into a meter.
pub struct Metered<R> {
    inner: R,
    meter: std::sync::Arc<Meter>,
}

impl<R> Metered<R> {
    pub fn new(inner: R, meter: std::sync::Arc<Meter>) -> Metered<R> {
        Metered { inner, meter }
    }
}

impl<R: std::io::Read> std::io::Read for Metered<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.meter.read_bytes(n as u64);
        Ok(n)
    }
}

impl<R: std::io::BufRead> std::io::BufRead for Metered<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.meter.read_bytes(amt as u64);
        self.inner.consume(amt);
    }
}
