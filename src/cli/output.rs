//! Standard output as the commands write it: `Stdout::new(writer)` gives
//! the writer to print through and the [`Failure`] to settle when the
//! command ends.
//!
//! A write that fails ends what is being printed — a stream being printed
//! stops being read — and every later write fails the same way, so
//! nothing more is printed. The run itself goes on to its end, as it does
//! after a failed `check`. When it ends, the failure is reported once, as
//! an `hql::io` error with exit status 1, except for a reader that has
//! gone away (a closed pipe, as with `hql run p.hql | head -1`): that
//! output was not wanted any more, so it is no error and nothing is said.

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;

use crate::runtime::eval::RuntimeError;
use crate::session::diagnostic::Diag;
use crate::session::{Sinks, EXIT_FAILED};
use crate::syntax::source::SourceMap;

/// Was standard output closed when the process started? The binary's
/// initialiser says so (`mark_stdout_closed`) before the Rust runtime
/// opens `/dev/null` in its place.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Standard output was closed when the process started.
pub fn mark_stdout_closed() {
    STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Was standard output closed when the process started?
pub fn stdout_closed_at_start() -> bool {
    STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The first write to standard output that failed, shared by the writer
/// and the command that settles it.
#[derive(Clone, Default)]
pub struct Failure(Rc<RefCell<Option<(io::ErrorKind, String)>>>);

impl Failure {
    fn get(&self) -> Option<io::Error> {
        let first = self.0.borrow();
        first
            .as_ref()
            .map(|(kind, message)| io::Error::new(*kind, message.clone()))
    }

    fn note(&self, e: &io::Error) {
        // An interrupted write is retried, not a failure.
        if e.kind() == io::ErrorKind::Interrupted {
            return;
        }
        let mut first = self.0.borrow_mut();
        if first.is_none() {
            *first = Some((e.kind(), e.to_string()));
        }
    }

    /// Flush `sinks.out` and settle the command's exit status: a failed
    /// write is reported on `sinks.err` and makes it at least 1; a reader
    /// that has gone leaves it as it is.
    pub fn settle(&self, status: i32, sinks: &mut Sinks) -> i32 {
        // A failure here is noted by the writer underneath.
        let _ = sinks.out.flush();
        match self.get() {
            None => status,
            Some(e) if e.kind() == io::ErrorKind::BrokenPipe => status,
            Some(e) => {
                let error =
                    RuntimeError::new("hql::io", format!("cannot write to standard output: {e}"))
                        .with_help(
                        "what was printed after the failure is lost; the run went on to its end",
                    );
                sinks.diag(&SourceMap::default(), &Diag::from(&error));
                status.max(EXIT_FAILED)
            }
        }
    }
}

/// Standard output that remembers its first failure and fails every write
/// after it.
pub struct Stdout {
    inner: Box<dyn Write>,
    failure: Failure,
}

impl Stdout {
    pub fn new(inner: impl Write + 'static) -> (Stdout, Failure) {
        let failure = Failure::default();
        let out = Stdout {
            inner: Box::new(inner),
            failure: failure.clone(),
        };
        (out, failure)
    }

    fn checked<T>(&mut self, write: impl FnOnce(&mut dyn Write) -> io::Result<T>) -> io::Result<T> {
        if let Some(e) = self.failure.get() {
            return Err(e);
        }
        write(&mut *self.inner).inspect_err(|e| self.failure.note(e))
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.checked(|w| w.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.checked(|w| w.flush())
    }
}

/// A line on standard error; where that fails there is no one to tell.
pub fn note(message: &str) {
    let _ = writeln!(io::stderr(), "{message}");
}

/// A standard output that was closed when the process started: every
/// write fails as it would on the closed descriptor.
pub struct Closed;

/// `EBADF`, the error of a write to a closed descriptor.
const BAD_DESCRIPTOR: i32 = 9;

impl Write for Closed {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::from_raw_os_error(BAD_DESCRIPTOR))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that takes `room` bytes, then fails with `kind`.
    struct Limited {
        room: usize,
        kind: io::ErrorKind,
    }

    impl Write for Limited {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(self.kind.into());
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn settle(kind: io::ErrorKind, status: i32) -> (i32, String) {
        let (mut out, failure) = Stdout::new(Limited { room: 4, kind });
        assert!(out.write_all(b"12345").is_err());
        // Later writes fail too.
        assert!(out.write(b"1").is_err());
        let mut err = Vec::new();
        let mut sinks = Sinks::plain(&mut out, &mut err);
        let status = failure.settle(status, &mut sinks);
        (status, String::from_utf8(err).unwrap())
    }

    #[test]
    fn a_failed_write_is_reported_once_when_the_command_ends() {
        let (status, err) = settle(io::ErrorKind::StorageFull, 0);
        assert_eq!(status, EXIT_FAILED);
        assert_eq!(err.matches("hql::io").count(), 1, "{err}");
        assert!(err.contains("cannot write to standard output"), "{err}");
    }

    #[test]
    fn a_reader_that_has_gone_is_no_error() {
        assert_eq!(settle(io::ErrorKind::BrokenPipe, 0), (0, String::new()));
        assert_eq!(settle(io::ErrorKind::BrokenPipe, 1), (1, String::new()));
    }

    #[test]
    fn a_closed_descriptor_fails_every_write() {
        let (mut out, failure) = Stdout::new(Closed);
        assert!(out.write_all(b"x").is_err());
        let e = failure.get().unwrap();
        assert!(e.to_string().ends_with("(os error 9)"), "{e}");
    }
}
