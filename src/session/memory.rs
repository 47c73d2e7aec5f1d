//! A host whose files live in memory: for tests, fuzzing and anything that
//! runs a program without touching the machine's files.
//!
//! Sources are read from a map of path → text; standard input, when given,
//! can be read once; targets are kept in memory and appear in `written`
//! when they commit, so a test can see what a run committed and that an
//! abandoned target left nothing.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{self, BufRead, Cursor, Write};
use std::rc::Rc;

use crate::runtime::eval::{Host, PendingFile};

/// Files, standard input and committed targets, all in memory.
pub struct MemHost {
    pub files: HashMap<String, String>,
    pub stdin: RefCell<Option<String>>,
    /// Each committed target's path and text.
    pub written: Rc<RefCell<HashMap<String, String>>>,
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
        }
    }
}

impl Host for MemHost {
    fn open_file(&self, path: &str) -> io::Result<Box<dyn BufRead>> {
        match self.files.get(path) {
            Some(text) => Ok(Box::new(Cursor::new(text.clone().into_bytes()))),
            None => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no such file: {path}"),
            )),
        }
    }

    fn stdin(&self) -> Option<Box<dyn BufRead>> {
        self.stdin
            .borrow_mut()
            .take()
            .map(|t| Box::new(Cursor::new(t.into_bytes())) as Box<dyn BufRead>)
    }

    fn create_file(&self, path: &str) -> io::Result<Box<dyn PendingFile>> {
        Ok(Box::new(MemTarget {
            path: path.to_string(),
            bytes: Vec::new(),
            written: self.written.clone(),
        }))
    }
}

/// A target of the in-memory host: its bytes, kept until it commits.
struct MemTarget {
    path: String,
    bytes: Vec<u8>,
    written: Rc<RefCell<HashMap<String, String>>>,
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

impl PendingFile for MemTarget {
    fn commit(self: Box<Self>) -> io::Result<()> {
        let text = String::from_utf8(self.bytes).map_err(io::Error::other)?;
        self.written.borrow_mut().insert(self.path, text);
        Ok(())
    }

    fn abandon(self: Box<Self>) {}
}
