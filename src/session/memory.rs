//! A host whose files live in memory: for tests, fuzzing and anything that
//! runs a program without touching the machine's files.
//!
//! Sources are read from a map of path → text, from any offset, so that a
//! run can split them across threads; a span of a file's bytes can be made
//! unreadable, to see how a run takes a failing disk. Standard input, when
//! given, can be read once; targets are kept in memory and appear in
//! `written` when they commit, so a test can see what a run committed and
//! that an abandoned target left nothing.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Cursor, Read, Write};
use std::ops::Range;
use std::rc::Rc;

use crate::runtime::eval::{CommitStep, Host, Pending, PendingFile};

/// Files, standard input and committed targets, all in memory.
pub struct MemHost {
    pub files: HashMap<String, String>,
    pub stdin: RefCell<Option<String>>,
    /// Each committed target's path and text.
    pub written: Rc<RefCell<HashMap<String, String>>>,
    /// What the run has written so far to each target, as its later
    /// sources read it.
    published: Rc<RefCell<HashMap<String, String>>>,
    /// The bytes of a file that cannot be read: each read there fails.
    unreadable: Option<(String, Range<usize>)>,
}

impl MemHost {
    pub fn new(files: &[(&str, &str)], stdin: Option<&str>) -> MemHost {
        MemHost {
            files: files
                .iter()
                .map(|(p, c)| (p.to_string(), c.to_string()))
                .collect(),
            stdin: RefCell::new(stdin.map(str::to_string)),
            written: Rc::default(),
            published: Rc::default(),
            unreadable: None,
        }
    }

    /// The host, with the bytes `bad` of the file at `path` unreadable.
    pub fn failing(mut self, path: &str, bad: Range<usize>) -> MemHost {
        self.unreadable = Some((path.to_string(), bad));
        self
    }

    fn file(&self, path: &str) -> io::Result<String> {
        let path = path.strip_prefix("./").unwrap_or(path);
        if let Some(text) = self.published.borrow().get(path) {
            return Ok(text.clone());
        }
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no such file: {path}")))
    }
}

impl Host for MemHost {
    fn open_file(&self, path: &str) -> io::Result<Box<dyn BufRead>> {
        self.open_file_at(path, 0)
    }

    fn open_file_at(&self, path: &str, offset: u64) -> io::Result<Box<dyn BufRead>> {
        let bytes = self.file(path)?.into_bytes();
        let bad = match &self.unreadable {
            Some((p, bad)) if p == path => bad.clone(),
            _ => 0..0,
        };
        let at = (offset as usize).min(bytes.len());
        Ok(Box::new(BufReader::new(MemReader { bytes, at, bad })))
    }

    fn file_len(&self, path: &str) -> Option<u64> {
        self.file(path).ok().map(|text| text.len() as u64)
    }

    fn stdin(&self) -> Option<Box<dyn BufRead>> {
        self.stdin
            .borrow_mut()
            .take()
            .map(|t| Box::new(Cursor::new(t.into_bytes())) as Box<dyn BufRead>)
    }

    fn create_file(&self, path: &str) -> io::Result<Box<dyn PendingFile>> {
        Ok(Box::new(MemTarget {
            path: path.strip_prefix("./").unwrap_or(path).to_string(),
            bytes: Vec::new(),
            written: self.written.clone(),
            published: self.published.clone(),
        }))
    }

    fn run_ended(&self) {
        self.published.borrow_mut().clear();
    }
}

/// A file of the in-memory host, read from `at` on; a read in `bad` fails.
struct MemReader {
    bytes: Vec<u8>,
    at: usize,
    bad: Range<usize>,
}

impl Read for MemReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.bad.contains(&self.at) {
            return Err(io::Error::other("the disk went away"));
        }
        // A read stops where the bad bytes start, so that it fails next.
        let mut end = self.bytes.len().min(self.at + buf.len());
        if self.at < self.bad.start {
            end = end.min(self.bad.start);
        }
        let n = end - self.at;
        buf[..n].copy_from_slice(&self.bytes[self.at..end]);
        self.at = end;
        Ok(n)
    }
}

/// A target of the in-memory host: its bytes, kept until it commits.
struct MemTarget {
    path: String,
    bytes: Vec<u8>,
    written: Rc<RefCell<HashMap<String, String>>>,
    published: Rc<RefCell<HashMap<String, String>>>,
}

impl Write for MemTarget {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Pending for MemTarget {
    fn target(&self) -> String {
        self.path.clone()
    }

    fn prepare(&mut self, _run: &str) -> io::Result<()> {
        std::str::from_utf8(&self.bytes).map_err(io::Error::other)?;
        Ok(())
    }

    fn step(&self) -> CommitStep {
        CommitStep::Direct
    }

    fn commit(self: Box<Self>) -> io::Result<()> {
        let text = String::from_utf8(self.bytes).map_err(io::Error::other)?;
        self.written.borrow_mut().insert(self.path, text);
        Ok(())
    }

    fn abandon(self: Box<Self>) {}
}

impl PendingFile for MemTarget {
    fn publish(&mut self, tail: &[u8]) -> io::Result<()> {
        let mut text = self.bytes.clone();
        text.extend_from_slice(tail);
        let text = String::from_utf8(text).map_err(io::Error::other)?;
        self.published.borrow_mut().insert(self.path.clone(), text);
        Ok(())
    }
}
