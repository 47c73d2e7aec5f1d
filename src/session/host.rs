//! The host of the real machine: files, standard input, the environment,
//! the command line's `--set` parameters and `hql.toml`.
//!
//! Targets are written atomically: to a temporary file beside the target,
//! renamed over it on commit and removed on abandon, so a target is either
//! its old self or the whole new output, never half of it. A temporary left
//! by a process that was killed is removed by the next write to its target.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use std::sync::Arc;

use std::rc::Rc;

use crate::formats::sqlite;
use crate::runtime::contract::Contract;
use crate::runtime::eval::io::{Boundary, Column, CsvOptions, DecodedRecords};
use crate::runtime::eval::TableSink;
use crate::runtime::eval::{
    Host, PendingFile, Place, Result, RuntimeError, SourceSpec, TargetSpec,
};
use crate::session::config::{self, Config, ConfigError};

/// Files and standard input of the machine `hql` runs on.
#[derive(Default, Clone)]
pub struct FsHost {
    params: HashMap<String, String>,
    config: Option<Arc<Config>>,
    /// What standard input holds when it is not the data (`None`: it is).
    stdin_holds: Option<StdinHolds>,
}

/// What standard input holds besides data, so `stdin()` cannot read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdinHolds {
    /// The program (`hql run -`).
    Program,
    /// The REPL's entries (piped mode).
    Entries,
}

impl FsHost {
    pub fn new() -> FsHost {
        FsHost::default()
    }

    /// `--set name=value` pairs, for `param("name")`.
    pub fn with_params(mut self, params: HashMap<String, String>) -> FsHost {
        self.params = params;
        self
    }

    /// The `hql.toml` that configures sources and targets by id.
    pub fn with_config(mut self, config: Option<Config>) -> FsHost {
        self.config = config.map(Arc::new);
        self
    }

    pub fn config(&self) -> Option<&Config> {
        self.config.as_deref()
    }

    /// Standard input holds the program or the REPL's entries: a source
    /// reading it is an error saying so (it would read nothing, or wait on
    /// the entries themselves).
    pub fn with_stdin_holding(mut self, holds: StdinHolds) -> FsHost {
        self.stdin_holds = Some(holds);
        self
    }
}

/// A file opened for reading; a directory is refused here, as a missing
/// file is, rather than failing on its first read.
fn open_for_reading(path: &str) -> io::Result<File> {
    let file = File::open(path)?;
    if file.metadata()?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory",
        ));
    }
    Ok(file)
}

/// Standard input read from its descriptor, waiting for input in short
/// turns so that a signal that comes while it waits stops the run
/// (tooling.md, Targets): a blocked read would be resumed after the
/// signal's handler ran, and wait on.
struct WaitingStdin;

/// How long one turn of waiting for standard input lasts, in milliseconds.
const WAIT_TURN_MS: i32 = 100;

impl io::Read for WaitingStdin {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if crate::runtime::eval::interrupted() {
                return Err(io::Error::other("interrupted while waiting for input"));
            }
            let mut waiting = libc::pollfd {
                fd: libc::STDIN_FILENO,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid `pollfd`, for the duration of the call.
            let ready = unsafe { libc::poll(&mut waiting, 1, WAIT_TURN_MS) };
            match ready {
                0 => continue,
                n if n < 0 => {
                    let e = io::Error::last_os_error();
                    if e.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    return Err(e);
                }
                // Readable, at its end, or failed: the read says which.
                _ => break,
            }
        }
        // SAFETY: `buf` is valid for writes of `buf.len()` bytes.
        let n = unsafe { libc::read(libc::STDIN_FILENO, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n as usize)
    }
}

impl Host for FsHost {
    fn open_file(&self, path: &str) -> io::Result<Box<dyn BufRead>> {
        let file = open_for_reading(path)?;
        Ok(Box::new(BufReader::with_capacity(1 << 16, file)))
    }

    fn stdin(&self) -> Option<Box<dyn BufRead>> {
        if self.stdin_holds.is_some() {
            return None;
        }
        Some(Box::new(BufReader::with_capacity(1 << 16, WaitingStdin)))
    }

    fn stdin_unavailable(&self) -> RuntimeError {
        let (message, help) = match self.stdin_holds {
            Some(StdinHolds::Program) => (
                "standard input held the program, and can be read only once",
                "save the program to a file and give it the data: `hql run program.hql < data.jsonl`",
            ),
            Some(StdinHolds::Entries) => (
                "standard input holds the REPL's entries, so `stdin()` cannot read data from it",
                "read the data from a file: `source(file(\"data.jsonl\"), Json)`",
            ),
            None => return RuntimeError::new("hql::stdin", "standard input is not available"),
        };
        RuntimeError::new("hql::stdin_twice", message).with_help(help)
    }

    fn open_file_at(&self, path: &str, offset: u64) -> io::Result<Box<dyn BufRead>> {
        let mut file = open_for_reading(path)?;
        file.seek(SeekFrom::Start(offset))?;
        Ok(Box::new(BufReader::with_capacity(1 << 16, file)))
    }

    /// The length of a regular file: a FIFO or a device has none, so it is
    /// read once, front to back, and never split or peeked at.
    fn file_len(&self, path: &str) -> Option<u64> {
        std::fs::metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len())
    }

    fn create_file(&self, path: &str) -> io::Result<Box<dyn PendingFile>> {
        // A FIFO or a device (`/dev/stdout`, whatever it points at) cannot
        // be replaced by a rename: it is written as it goes.
        let special = path.starts_with("/dev/")
            || std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
        if special {
            let file = File::options().write(true).open(path)?;
            return Ok(Box::new(Stream(BufWriter::new(file))));
        }
        // A link is followed: the file it names is replaced, the link stays.
        let target = match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path)?,
            _ => PathBuf::from(path),
        };
        Ok(Box::new(TempFile::create(&target)?))
    }

    fn param(&self, name: &str) -> Option<String> {
        self.params.get(name).cloned()
    }

    fn env(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn configured_source(&self, id: &str) -> Result<SourceSpec> {
        let Some(config) = &self.config else {
            return Err(crate::runtime::eval::no_configuration("source", id));
        };
        let source = config.source(id).map_err(config_error)?;
        if let config::Place::Sqlite { written, .. } = &source.place {
            return Ok(SourceSpec {
                name: id.into(),
                place: Place::Database(written.clone()),
                format: crate::runtime::builtins::Format::Json,
                boundary: boundary(&source.columns, &source.csv),
            });
        }
        let (path, format) = file_place(&source.place)?;
        Ok(SourceSpec {
            name: id.into(),
            place: Place::File(path),
            format,
            boundary: boundary(&source.columns, &source.csv),
        })
    }

    fn configured_target(&self, id: &str) -> Result<TargetSpec> {
        let Some(config) = &self.config else {
            return Err(crate::runtime::eval::no_configuration("target", id));
        };
        let target = config.target(id).map_err(config_error)?;
        if let config::Place::Sqlite { path, .. } = &target.place {
            return Ok(TargetSpec {
                name: id.to_string(),
                path: path.to_string_lossy().into_owned(),
                format: crate::runtime::builtins::Format::Json,
                array: false,
                boundary: Boundary::default(),
                table: true,
            });
        }
        let (path, format) = file_place(&target.place)?;
        Ok(TargetSpec {
            name: id.to_string(),
            array: format.writes_array(&path),
            path,
            format,
            boundary: boundary(&[], &target.csv),
            table: false,
        })
    }

    fn open_rows(&self, spec: &SourceSpec, shape: Option<&Rc<Contract>>) -> Result<DecodedRecords> {
        let source = self.config_of("source", &spec.name)?.source(&spec.name);
        let source = source.map_err(config_error)?;
        let config::Place::Sqlite {
            path, table, query, ..
        } = &source.place
        else {
            return Err(not_a_database(&spec.name));
        };
        let select = match (table, query) {
            (_, Some(q)) => sqlite::Select::Query(q.clone()),
            (Some(t), None) => sqlite::Select::Table(t.clone()),
            (None, None) => return Err(not_a_database(&spec.name)),
        };
        sqlite::read_rows(path, spec, &select, shape)
    }

    fn open_table(
        &self,
        spec: &TargetSpec,
        shape: Option<&Rc<Contract>>,
    ) -> Result<Box<dyn TableSink>> {
        let target = self.config_of("target", &spec.name)?.target(&spec.name);
        let target = target.map_err(config_error)?;
        let config::Place::Sqlite {
            path,
            written,
            table: Some(table),
            ..
        } = &target.place
        else {
            return Err(not_a_database(&spec.name));
        };
        let table = sqlite::TableTarget {
            id: spec.name.clone(),
            path: path.clone(),
            written: written.clone(),
            table: table.clone(),
            mode: target.mode,
            create_table: target.create_table,
            schema: target.schema.clone(),
        };
        sqlite::open_target(&table, shape, Box::new(warning))
    }
}

/// A target that is not a regular file (a FIFO, a device): written
/// directly, so what was written before a stop stays written.
struct Stream(BufWriter<File>);

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl PendingFile for Stream {
    fn commit(mut self: Box<Self>) -> io::Result<()> {
        self.0.flush()
    }

    fn abandon(mut self: Box<Self>) {
        let _ = self.0.flush();
    }
}

/// Temporaries of one process are told apart by a counter.
static TEMPORARIES: AtomicU64 = AtomicU64::new(0);

/// A target's new contents, in a temporary file beside it.
struct TempFile {
    target: PathBuf,
    temp: PathBuf,
    out: Option<BufWriter<Flushing>>,
}

impl TempFile {
    fn create(target: &Path) -> io::Result<TempFile> {
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let prefix = format!(".{}.hql-tmp-", name.to_string_lossy());
        remove_stale(&dir, &prefix);
        let n = TEMPORARIES.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!("{prefix}{}-{n}", std::process::id()));
        let file = File::options().write(true).create_new(true).open(&temp)?;
        Ok(TempFile {
            target: target.to_path_buf(),
            temp,
            out: Some(BufWriter::with_capacity(
                1 << 16,
                Flushing {
                    file,
                    written: 0,
                    started: 0,
                },
            )),
        })
    }

    fn out(&mut self) -> io::Result<&mut BufWriter<Flushing>> {
        self.out
            .as_mut()
            .ok_or_else(|| io::Error::other("the target is closed"))
    }
}

impl Write for TempFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out()?.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out()?.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out()?.flush()
    }
}

/// A temporary file whose bytes are handed to the disk as they are
/// written, a few megabytes at a time, without waiting for them: the
/// `fsync` before the rename then has little left to wait for.
struct Flushing {
    file: File,
    written: u64,
    /// Where the bytes not yet handed over start.
    started: u64,
}

/// How many bytes are written before they are handed to the disk.
const WRITEBACK_STEP: u64 = 8 << 20;

impl Write for Flushing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        if self.written - self.started >= WRITEBACK_STEP {
            start_writeback(&self.file, self.started, self.written - self.started);
            self.started = self.written;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Start writing a range of `file` to the disk, not waiting for it. Only
/// a hint: durability comes from the `fsync` at commit.
#[cfg(target_os = "linux")]
fn start_writeback(file: &File, from: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let (Ok(from), Ok(len)) = (i64::try_from(from), i64::try_from(len)) else {
        return;
    };
    // SAFETY: the descriptor is open for as long as `file` is borrowed,
    // and the call only reads its arguments.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), from, len, libc::SYNC_FILE_RANGE_WRITE);
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File, _from: u64, _len: u64) {}

impl PendingFile for TempFile {
    fn commit(mut self: Box<Self>) -> io::Result<()> {
        let written = self.out.take().map(|out| {
            let flushing = out.into_inner().map_err(|e| e.into_error())?;
            flushing.file.sync_all()
        });
        let renamed = written
            .unwrap_or(Ok(()))
            .and_then(|()| std::fs::rename(&self.temp, &self.target));
        renamed.map_err(|e| {
            let _ = std::fs::remove_file(&self.temp);
            io::Error::new(e.kind(), format!("{}: {e}", self.target.display()))
        })
    }

    fn abandon(self: Box<Self>) {
        // Dropping removes the temporary.
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if self.out.take().is_some() || self.temp.exists() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Remove the temporaries of `prefix` in `dir` whose process is gone (a
/// run killed while writing). Where processes cannot be looked up, none is
/// removed.
fn remove_stale(dir: &Path, prefix: &str) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else {
            continue;
        };
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A configuration error met while running: `hql::config`.
pub fn config_error(e: ConfigError) -> RuntimeError {
    let error = RuntimeError::new(
        "hql::config",
        e.to_string().lines().next().unwrap_or("").to_string(),
    );
    match e.help {
        Some(help) => error.with_help(help),
        None => error,
    }
}

/// The path and format of a file place.
fn file_place(place: &config::Place) -> Result<(String, crate::runtime::builtins::Format)> {
    match place {
        config::Place::File { path, format, .. } => {
            Ok((path.to_string_lossy().into_owned(), *format))
        }
        config::Place::Sqlite { path, .. } => Ok((
            path.to_string_lossy().into_owned(),
            crate::runtime::builtins::Format::Json,
        )),
    }
}

/// A warning of a target (drift under `on_drift = "warn"`), on standard
/// error; where that fails there is no one to tell.
fn warning(message: &str) {
    let _ = writeln!(io::stderr(), "{message}");
}

/// A database asked of an id the configuration gives another place.
fn not_a_database(id: &str) -> RuntimeError {
    RuntimeError::new(
        "hql::config",
        format!("`{id}` is not a SQLite table or query"),
    )
}

impl FsHost {
    fn config_of(&self, what: &str, id: &str) -> Result<&Config> {
        self.config
            .as_deref()
            .ok_or_else(|| crate::runtime::eval::no_configuration(what, id))
    }
}

/// The schema boundary of a configured source or target.
fn boundary(columns: &[Column], csv: &CsvOptions) -> Boundary {
    Boundary {
        columns: columns.to_vec(),
        csv: *csv,
    }
}
