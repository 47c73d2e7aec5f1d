//! The live progress line of a long run (tooling.md, "Long runs show
//! progress"): records read, their rate, oks and errs so far, and the
//! percentage with the time left when the source's size is known.
//!
//! Drawn on standard error by a thread of its own from the evaluator's
//! [`Meter`], only when standard error is a terminal, once a run has read
//! for about a second, and never with `--quiet` or `HQL_PROGRESS=0`; it is
//! cleared when the run ends. Whatever the run prints goes through
//! [`Suspending`] writers, which take the line away while they write, so
//! results never land beside it.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::runtime::eval::meter::{Meter, Reading};

/// How long a run reads before the line appears.
const DELAY: Duration = Duration::from_secs(1);
const TICK: Duration = Duration::from_millis(100);

/// A progress line being drawn; `finish` clears it.
pub struct Progress {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

/// Where the progress line is, once it is drawn: shared by the thread that
/// draws it and the writers that print the run's output.
#[derive(Clone, Default)]
pub struct Line(Arc<Mutex<Option<ProgressBar>>>);

impl Line {
    /// `inner`, writing with the progress line taken away meanwhile.
    pub fn writer<W: Write>(&self, inner: W) -> Suspending<W> {
        Suspending {
            line: self.clone(),
            inner,
        }
    }

    /// Run `f` with the line off the screen.
    fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        let bar = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match bar.as_ref() {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    fn set(&self, bar: Option<ProgressBar>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = bar;
    }

    fn show(&self, message: String) {
        let bar = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bar) = bar.as_ref() {
            bar.set_message(message);
            bar.tick();
        }
    }
}

/// A writer that takes the progress line off the screen while it writes.
pub struct Suspending<W> {
    line: Line,
    inner: W,
}

impl<W: Write> Write for Suspending<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let inner = &mut self.inner;
        self.line.suspend(|| inner.write(buf))
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        let inner = &mut self.inner;
        self.line.suspend(|| inner.write_all(buf))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Is a progress line wanted: stderr a terminal, not `--quiet`, and not
/// turned off with `HQL_PROGRESS=0`?
pub fn wanted(quiet: bool) -> bool {
    !quiet
        && std::io::stderr().is_terminal()
        && std::env::var_os("HQL_PROGRESS").is_none_or(|v| v != "0")
}

impl Progress {
    pub fn start(meter: Arc<Meter>, line: &Line) -> Progress {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let line = line.clone();
        let thread = std::thread::spawn(move || draw(&meter, &stopped, &line));
        Progress { stop, thread }
    }

    pub fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}

fn draw(meter: &Meter, stop: &AtomicBool, line: &Line) {
    let started = Instant::now();
    let mut drawn = false;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(TICK);
        let reading = meter.reading();
        if !drawn && started.elapsed() >= DELAY && reading.records > 0 {
            line.set(Some(new_bar()));
            drawn = true;
        }
        if drawn {
            line.show(message(&reading, started.elapsed()));
        }
    }
    let bar = std::mem::take(&mut *line.0.lock().unwrap_or_else(|e| e.into_inner()));
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
}

fn new_bar() -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    // The template is a constant that parses: `{msg}` alone.
    if let Ok(style) = ProgressStyle::with_template("{msg}") {
        bar.set_style(style);
    }
    bar
}

/// `1,204,000 records (402,000/s) · 1,190,120 ok · 13,880 err · 41% · 4s left`
pub fn message(r: &Reading, elapsed: Duration) -> String {
    let seconds = elapsed.as_secs_f64().max(0.001);
    let rate = (r.records as f64 / seconds) as u64;
    let mut text = format!(
        "{} records ({}/s) · {} ok · {} err",
        grouped(r.records),
        grouped(rate),
        grouped(r.oks),
        grouped(r.errs)
    );
    if let Some(size) = r.size.filter(|&s| s > 0) {
        let done = (r.bytes as f64 / size as f64).min(1.0);
        text.push_str(&format!(" · {}%", (done * 100.0) as u64));
        if done > 0.0 {
            let left = seconds * (1.0 - done) / done;
            text.push_str(&format!(" · {}s left", left.ceil() as u64));
        }
    }
    text
}

/// `1234567` as `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_records_rate_results_and_time_left() {
        let r = Reading {
            records: 1_204_000,
            oks: 1_190_120,
            errs: 13_880,
            bytes: 41,
            size: Some(100),
        };
        assert_eq!(
            message(&r, Duration::from_secs(3)),
            "1,204,000 records (401,333/s) · 1,190,120 ok · 13,880 err · 41% · 5s left"
        );
    }

    #[test]
    fn without_a_size_there_is_no_percentage() {
        let r = Reading {
            records: 999,
            oks: 999,
            ..Reading::default()
        };
        assert_eq!(
            message(&r, Duration::from_secs(1)),
            "999 records (999/s) · 999 ok · 0 err"
        );
    }
}
