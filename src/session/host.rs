//! The host of the real machine: files, standard input, the environment,
//! the command line's `--set` parameters and `hql.toml`.
//!
//! Targets are written atomically: to a temporary file beside the target,
//! renamed over it on commit and removed on abandon, so a target is either
//! its old self or the whole new output, never half of it. A temporary left
//! by a process that was killed is removed by the next write to its target.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use std::sync::{Arc, Mutex};

use crate::runtime::builtins::Compression;
use crate::runtime::eval::io::{
    Boundary, Column, CsvOptions, Database, DatabaseAt, JsonOptions, Seekable, Select, Unreadable,
};
use crate::runtime::eval::policy::{OnDrift, TableTarget};
use crate::runtime::eval::{CommitStep, Pending};
use crate::runtime::eval::{
    Host, PendingFile, Place, Result, RuntimeError, SourceSpec, TargetSpec,
};
use crate::session::compressed::{self, Encoded};
use crate::session::config::{self, Config, ConfigError};

/// Files and standard input of the machine `hql` runs on.
#[derive(Default, Clone)]
pub struct FsHost {
    params: HashMap<String, String>,
    config: Option<Arc<Config>>,
    /// What standard input holds when it is not the data (`None`: it is).
    stdin_holds: Option<StdinHolds>,
    /// The run's targets so far, as later sources of the run read them.
    published: Published,
    /// The folders whose left-over commits and temporaries were looked
    /// for (once a process: a `write` inside `map` does not scan its
    /// folder again for every record).
    swept: Arc<Mutex<HashSet<PathBuf>>>,
    /// The time `age(f)` measures to (`--now`, `HQL_NOW`), in nanoseconds
    /// since 1970; `None`: the run's start.
    now: Option<i128>,
}

/// What the run has written to each target (by its resolved path): the
/// temporary, how many of its bytes, and what finishing the format adds.
type Published = Arc<Mutex<HashMap<PathBuf, Snapshot>>>;

#[derive(Debug, Clone)]
struct Snapshot {
    temp: PathBuf,
    len: u64,
    tail: Vec<u8>,
    /// A compressed target: its stream's end is written only at commit,
    /// so the run cannot read it.
    compressed: Option<Compression>,
}

impl Snapshot {
    /// The snapshot's bytes from `offset` on.
    fn open_at(&self, offset: u64) -> io::Result<Box<dyn BufRead>> {
        if let Some(compression) = self.compressed {
            return Err(unreadable_target(compression));
        }
        let mut file = open_for_reading(&self.temp.to_string_lossy())?;
        let from = offset.min(self.len);
        file.seek(SeekFrom::Start(from))?;
        let tail_from = (offset.saturating_sub(self.len) as usize).min(self.tail.len());
        let bytes = file
            .take(self.len - from)
            .chain(io::Cursor::new(self.tail[tail_from..].to_vec()));
        Ok(Box::new(BufReader::with_capacity(1 << 16, bytes)))
    }
}

/// Why a compressed target this run writes cannot be read by the run.
fn unreadable_target(compression: Compression) -> io::Error {
    Unreadable {
        message: format!(
            "it is a {} target this run writes, and its end is written only when the run commits",
            compression.name()
        ),
        help: Some(
            "read it in a later run, or write it uncompressed to read it back in this one".into(),
        ),
    }
    .into_io()
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

    /// The time `age(f)` measures to, in place of the run's start.
    pub fn with_now(mut self, now: i128) -> FsHost {
        self.now = Some(now);
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

impl FsHost {
    /// What the run has written to `path`, when an earlier statement of
    /// the run wrote it.
    fn snapshot(&self, path: &str) -> Option<Snapshot> {
        let published = self.published.lock().ok()?;
        if published.is_empty() {
            return None;
        }
        published
            .get(&resolve_target(Path::new(path)).ok()?)
            .cloned()
    }

    /// Finish the commits a crashed run left in `dir`, then remove the
    /// temporaries of processes that are gone: once a process a folder.
    fn sweep(&self, dir: &Path) {
        let mut swept = match self.swept.lock() {
            Ok(s) => s,
            Err(_) => return,
        };
        if !swept.insert(dir.to_path_buf()) {
            return;
        }
        let _ = super::commit::sweep(dir);
    }
}

/// The file a target path names: its links followed (also a link to a
/// file not made yet), its folder made absolute; the same for every
/// spelling of one file.
fn resolve_target(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&path)?;
                path = if to.is_absolute() {
                    to
                } else {
                    folder_of(&path).join(to)
                };
            }
            Ok(_) => return path.canonicalize(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let name = path.file_name().ok_or_else(|| {
                    io::Error::new(io::ErrorKind::InvalidInput, "not a file name")
                })?;
                return Ok(folder_of(&path).canonicalize()?.join(name));
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        "too many symbolic links",
    ))
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
        if let Some(snapshot) = self.snapshot(path) {
            return snapshot.open_at(0);
        }
        // A source read from a folder a crashed commit left half done
        // reads the finished commit.
        let dir = folder_of(Path::new(path));
        if dir.is_dir() {
            self.sweep(&dir);
        }
        let file = open_for_reading(path)?;
        compressed::sniffed(BufReader::with_capacity(1 << 16, file))
    }

    /// A file written by an earlier statement of the run is refused: a
    /// format that reads whole files reads its end first, and a target's
    /// end is written only when the run commits (a Parquet file's footer).
    /// A compressed file is decompressed first, into a file of its own
    /// that no name reaches and that goes when it is closed.
    fn open_seekable(&self, path: &str) -> io::Result<Seekable> {
        if self.snapshot(path).is_some() {
            return Err(io::Error::other(
                "this run writes it, and its end is written only when the run commits; read it in a later run",
            ));
        }
        let dir = folder_of(Path::new(path));
        if dir.is_dir() {
            self.sweep(&dir);
        }
        // Asked before opening: opening a FIFO waits for its writer.
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            return Err(io::Error::other(
                "it is not a regular file: this format is read at any offset, from its end first, which a FIFO, a device or a folder cannot give",
            ));
        }
        let file = open_for_reading(path)?;
        match self.compression(path) {
            Some(_) => compressed::unpacked(BufReader::with_capacity(1 << 16, file)),
            None => Ok(file),
        }
        .map(Seekable::File)
    }

    /// A program file is only read: no commit is finished for it, so that
    /// the commands that read declarations change nothing on disk.
    fn read_source(&self, path: &str) -> io::Result<String> {
        std::fs::read_to_string(path)
    }

    fn stdin(&self) -> Option<Box<dyn BufRead>> {
        if self.stdin_holds.is_some() {
            return None;
        }
        Some(compressed::sniffed_or_failing(BufReader::with_capacity(
            1 << 16,
            WaitingStdin,
        )))
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
        if let Some(snapshot) = self.snapshot(path) {
            return snapshot.open_at(offset);
        }
        if self.compression(path).is_some() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "a compressed file is read from its start",
            ));
        }
        let mut file = open_for_reading(path)?;
        file.seek(SeekFrom::Start(offset))?;
        Ok(Box::new(BufReader::with_capacity(1 << 16, file)))
    }

    /// The length of a regular file: a FIFO or a device has none, so it is
    /// read once, front to back, and never split or peeked at; nor has a
    /// compressed file, whose bytes are not the ones read.
    fn file_len(&self, path: &str) -> Option<u64> {
        if let Some(snapshot) = self.snapshot(path) {
            let len = snapshot.len + snapshot.tail.len() as u64;
            return snapshot.compressed.is_none().then_some(len);
        }
        let len = (std::fs::metadata(path).ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())?;
        self.compression(path).is_none().then_some(len)
    }

    /// A regular file's first bytes tell; a FIFO or a device is not
    /// peeked at (its bytes would be gone).
    fn compression(&self, path: &str) -> Option<Compression> {
        if let Some(snapshot) = self.snapshot(path) {
            return snapshot.compressed;
        }
        if !std::fs::metadata(path).ok()?.is_file() {
            return None;
        }
        let file = open_for_reading(path).ok()?;
        let mut start = Vec::with_capacity(Compression::MAGIC_LEN);
        (file.take(Compression::MAGIC_LEN as u64))
            .read_to_end(&mut start)
            .ok()?;
        Compression::of_bytes(&start)
    }

    fn create_file(&self, path: &str) -> io::Result<Box<dyn PendingFile>> {
        // A FIFO or a device (`/dev/stdout`, whatever it points at) cannot
        // be replaced by a rename: it is written as it goes.
        let special = path.starts_with("/dev/")
            || std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
        if special {
            let file = File::options().write(true).open(path)?;
            let out = BufWriter::new(Encoded::for_name(path, file)?);
            return Ok(Box::new(Stream(Some(out), path.to_string())));
        }
        // A link is followed: the file it names is replaced, the link stays.
        let target = self.checked_target(path)?;
        self.sweep(&folder_of(&target));
        Ok(Box::new(TempFile::create(
            path,
            &target,
            self.published.clone(),
        )?))
    }

    fn target_key(&self, path: &str) -> io::Result<String> {
        if path.starts_with("/dev/") {
            return Ok(path.to_string());
        }
        Ok(self.checked_target(path)?.to_string_lossy().into_owned())
    }

    fn commit(
        &self,
        pending: Vec<Box<dyn crate::runtime::eval::Pending>>,
    ) -> std::result::Result<(), crate::runtime::eval::CommitError> {
        super::commit::commit(pending)
    }

    fn run_ended(&self) {
        if let Ok(mut published) = self.published.lock() {
            published.clear();
        }
    }

    /// `--now`, else `HQL_NOW` (the command line refuses one that is not
    /// an RFC 3339 time before anything runs), else the run's start.
    fn now(&self) -> i128 {
        static START: std::sync::OnceLock<i128> = std::sync::OnceLock::new();
        self.now.unwrap_or_else(|| {
            *START.get_or_init(|| {
                let given = std::env::var("HQL_NOW").ok();
                given
                    .and_then(|text| crate::runtime::stdlib_native::instant(&text, false))
                    .unwrap_or_else(|| {
                        std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map_or(0, |d| d.as_nanos() as i128)
                    })
            })
        })
    }

    fn param(&self, name: &str) -> Option<String> {
        self.params.get(name).cloned()
    }

    fn env(&self, name: &str) -> Result<Option<String>> {
        match std::env::var(name) {
            Ok(value) => Ok(Some(value)),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(RuntimeError::new(
                "hql::env",
                format!("environment variable `{name}` is set, but its value is not valid UTF-8"),
            )
            .with_help("HQL strings are UTF-8: set it to UTF-8 text")),
        }
    }

    fn configured_source(&self, id: &str) -> Result<SourceSpec> {
        let Some(config) = &self.config else {
            return Err(crate::runtime::eval::no_configuration("source", id));
        };
        let source = config.source(id).map_err(config_error)?;
        if let config::Place::Sqlite {
            path,
            written,
            table,
            query,
        } = &source.place
        {
            let database = Database {
                written: written.clone(),
                at: DatabaseAt::File(path.clone()),
                select: select(id, table, query)?,
            };
            return Ok(SourceSpec {
                name: id.into(),
                place: Place::Database(database),
                format: crate::formats::sqlite::FORMAT.format,
                boundary: boundary(&source.columns, &source.csv, &source.json),
            });
        }
        if let config::Place::Postgres {
            url,
            written,
            table,
            query,
        } = &source.place
        {
            let select = select(id, table, query)?;
            let url = url.url().map_err(|why| {
                RuntimeError::new("hql::config", format!("source `{id}`: {why}")).with_help(
                    "set it to the server's URL, `postgresql://user:password@host:port/db`",
                )
            })?;
            return Ok(SourceSpec {
                name: id.into(),
                place: Place::Database(Database {
                    written: written.clone(),
                    at: DatabaseAt::Server(url),
                    select,
                }),
                format: crate::formats::postgres::FORMAT.format,
                boundary: boundary(&source.columns, &source.csv, &source.json),
            });
        }
        let (path, format) = file_place(&source.place)?;
        Ok(SourceSpec {
            name: id.into(),
            place: Place::File(path),
            format,
            boundary: boundary(&source.columns, &source.csv, &source.json),
        })
    }

    fn target_database(&self, id: &str) -> Option<String> {
        let target = self.config.as_ref()?.target(id).ok()?;
        match &target.place {
            config::Place::Sqlite { path, .. } => {
                let path = resolve_target(path).unwrap_or_else(|_| path.clone());
                Some(path.display().to_string())
            }
            config::Place::File { .. } => None,
            config::Place::Postgres { written, .. } => Some(written.clone()),
        }
    }

    fn check_target(&self, id: &str, routed: bool) -> Result<()> {
        self.configured_target(id)?;
        let Some(target) = self.config.as_ref().and_then(|c| c.target(id).ok()) else {
            return Ok(());
        };
        let quarantines = target.schema.on_drift == OnDrift::Quarantine;
        if quarantines && target.schema.dead_letters.is_none() && !routed {
            return Err(RuntimeError::new(
                "hql::config",
                format!(
                    "target `{id}` quarantines drifting records (`on_drift = \"quarantine\"`) \
                     but names no dead letters, and `write` has none"
                ),
            )
            .with_help(format!(
                "add `dead_letters = \"ID\"` (a JSON file target) to its `schema`, or write with \
                 `route(ok: {id:?}, err: file(\"dead.jsonl\"))`"
            )));
        }
        Ok(())
    }

    fn configured_target(&self, id: &str) -> Result<TargetSpec> {
        let Some(config) = &self.config else {
            return Err(crate::runtime::eval::no_configuration("target", id));
        };
        let target = config.target(id).map_err(config_error)?;
        let (at, format, table) = match &target.place {
            config::Place::Sqlite { path, table, .. } => (
                DatabaseAt::File(path.clone()),
                crate::formats::sqlite::FORMAT.format,
                table,
            ),
            config::Place::Postgres { url, table, .. } => {
                let url = url.url().map_err(|why| {
                    RuntimeError::new("hql::config", format!("target `{id}`: {why}")).with_help(
                        "set it to the server's URL, `postgresql://user:password@host:port/db`",
                    )
                })?;
                (
                    DatabaseAt::Server(url),
                    crate::formats::postgres::FORMAT.format,
                    table,
                )
            }
            config::Place::File { .. } => {
                let (path, format) = file_place(&target.place)?;
                return Ok(TargetSpec {
                    name: id.to_string(),
                    whole: format.writes_whole(&path),
                    path,
                    format,
                    boundary: boundary(&[], &target.csv, &JsonOptions::default()),
                    table: None,
                });
            }
        };
        let Some(table) = table else {
            return Err(not_a_database(id));
        };
        let path = match &at {
            DatabaseAt::File(path) => path.to_string_lossy().into_owned(),
            DatabaseAt::Server(_) => format!("{}/{table}", target.place.written()),
        };
        let table = TableTarget {
            id: id.to_string(),
            at,
            recover: Some((config.file.clone(), id.to_string())),
            numeric: target.numeric.clone(),
            written: target.place.written().to_string(),
            table: table.clone(),
            mode: target.mode,
            create_table: target.create_table,
            schema: target.schema.clone(),
        };
        Ok(TargetSpec {
            name: id.to_string(),
            path,
            format,
            whole: false,
            boundary: Boundary::default(),
            table: Some(table),
        })
    }

    fn ready_database(&self, _name: &str, path: &Path) -> Result<()> {
        self.sweep(&folder_of(path));
        Ok(())
    }

    /// On standard error; where that fails there is no one to tell.
    fn warn(&self, line: &str) {
        let _ = writeln!(io::stderr(), "{line}");
    }
}

/// A target that is not a regular file (a FIFO, a device): written
/// directly, so what was written before a stop stays written.
struct Stream(Option<BufWriter<Encoded<File>>>, String);

impl Stream {
    fn out(&mut self) -> io::Result<&mut BufWriter<Encoded<File>>> {
        self.0
            .as_mut()
            .ok_or_else(|| io::Error::other("the target is closed"))
    }

    /// Write what is buffered, and a compressed stream's end.
    fn finish(&mut self) -> io::Result<()> {
        match self.0.take() {
            Some(out) => out
                .into_inner()
                .map_err(|e| e.into_error())?
                .finish()?
                .flush(),
            None => Ok(()),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out()?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out()?.flush()
    }
}

impl Pending for Stream {
    fn target(&self) -> String {
        self.1.clone()
    }

    fn prepare(&mut self, _run: &str) -> io::Result<()> {
        self.finish()
    }

    fn step(&self) -> CommitStep {
        CommitStep::Direct
    }

    fn commit(mut self: Box<Self>) -> io::Result<()> {
        self.finish()
    }

    fn abandon(mut self: Box<Self>) {
        let _ = self.finish();
    }
}

impl PendingFile for Stream {}

/// Temporaries of one process are told apart by a counter.
static TEMPORARIES: AtomicU64 = AtomicU64::new(0);

use super::commit::{folder_of, TEMP_MARK};

/// A target's new contents, in a temporary file beside it.
struct TempFile {
    /// The target as the program named it.
    named: String,
    target: PathBuf,
    temp: PathBuf,
    out: Option<BufWriter<Encoded<Flushing>>>,
    /// Written out and synced (`prepare`).
    synced: Option<File>,
    /// Renamed over the target: nothing to remove.
    settled: bool,
    published: Published,
}

impl TempFile {
    /// A temporary beside `target`, made with the mode and owner of the
    /// file it will replace.
    fn create(named: &str, target: &Path, published: Published) -> io::Result<TempFile> {
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
        let dir = folder_of(target);
        let n = TEMPORARIES.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(
            ".{}{TEMP_MARK}{}-{n}",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = create_like(&temp, target)?;
        Ok(TempFile {
            named: named.to_string(),
            target: target.to_path_buf(),
            temp,
            out: Some(BufWriter::with_capacity(
                1 << 16,
                // The name as the program wrote it, whose extensions
                // chose the format too.
                Encoded::for_name(
                    named,
                    Flushing {
                        file,
                        written: 0,
                        started: 0,
                    },
                )?,
            )),
            synced: None,
            settled: false,
            published,
        })
    }

    fn out(&mut self) -> io::Result<&mut BufWriter<Encoded<Flushing>>> {
        self.out
            .as_mut()
            .ok_or_else(|| io::Error::other("the target is closed"))
    }
}

/// Create `temp` new, with the permissions (and, where allowed, the owner)
/// of `like` when it exists, so that a replaced file keeps them; set on
/// the open file before anything is written to it.
fn create_like(temp: &Path, like: &Path) -> io::Result<File> {
    let file = File::options().write(true).create_new(true).open(temp)?;
    if let Ok(meta) = std::fs::metadata(like) {
        let kept = file.set_permissions(meta.permissions());
        #[cfg(unix)]
        let kept = kept.and_then(|()| keep_owner(&file, &meta));
        if let Err(e) = kept {
            drop(file);
            let _ = std::fs::remove_file(temp);
            return Err(e);
        }
    }
    Ok(file)
}

/// Give `file` the owner and group of `meta`; a process that may not
/// (not root, another owner) leaves them its own.
#[cfg(unix)]
fn keep_owner(file: &File, meta: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let mine = file.metadata()?;
    if mine.uid() == meta.uid() && mine.gid() == meta.gid() {
        return Ok(());
    }
    match std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid())) {
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Ok(()),
        other => other,
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

impl Pending for TempFile {
    fn target(&self) -> String {
        self.named.clone()
    }

    fn prepare(&mut self, _run: &str) -> io::Result<()> {
        let Some(out) = self.out.take() else {
            return Ok(());
        };
        let encoded = out.into_inner().map_err(|e| e.into_error())?;
        let flushing = encoded.finish()?;
        flushing
            .file
            .sync_all()
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.named)))?;
        self.synced = Some(flushing.file);
        Ok(())
    }

    fn step(&self) -> CommitStep {
        CommitStep::Rename {
            temp: self.temp.clone(),
            target: self.target.clone(),
        }
    }

    fn commit(mut self: Box<Self>) -> io::Result<()> {
        self.prepare("")?;
        // Whatever happens, the temporary is the commit's now: renamed
        // over the target, or, when the rename fails, removed or kept for
        // recovery by the commit (`session::commit`), which knows which.
        self.settled = true;
        if refused_in_test(&self.named) {
            return Err(io::Error::other(format!(
                "{}: rename refused (test)",
                self.named
            )));
        }
        std::fs::rename(&self.temp, &self.target)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.named)))
    }

    fn abandon(self: Box<Self>) {
        // Dropping removes the temporary.
    }

    fn keep(mut self: Box<Self>) {
        self.settled = true;
    }
}

impl PendingFile for TempFile {
    /// A compressed target is not flushed (a flush would cut its stream
    /// short of the best compression), since the run cannot read it.
    fn publish(&mut self, tail: &[u8]) -> io::Result<()> {
        let out = self.out()?;
        let compressed = out.get_ref().compression();
        if compressed.is_none() {
            out.flush()?;
        }
        let len = out.get_ref().plain().map_or(0, |f| f.written);
        if let Ok(mut published) = self.published.lock() {
            published.insert(
                self.target.clone(),
                Snapshot {
                    temp: self.temp.clone(),
                    len,
                    tail: tail.to_vec(),
                    compressed,
                },
            );
        }
        Ok(())
    }
}

/// Does a test ask this target's rename to fail
/// (`HQL_TEST_REFUSE_RENAME=TARGET`)?
fn refused_in_test(named: &str) -> bool {
    static REFUSED: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let refused = REFUSED.get_or_init(|| std::env::var("HQL_TEST_REFUSE_RENAME").ok());
    refused.as_deref() == Some(named)
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.settled {
            let _ = std::fs::remove_file(&self.temp);
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

/// The path and format of a place (the callers take a SQLite place's
/// table or query first).
fn file_place(place: &config::Place) -> Result<(String, crate::runtime::builtins::Format)> {
    let format = (place.format()).unwrap_or(crate::formats::sqlite::FORMAT.format);
    let path = place.path().ok_or_else(|| {
        RuntimeError::new(
            "hql::config",
            format!("`{}` is a server, not a file", place.written()),
        )
    })?;
    Ok((path.to_string_lossy().into_owned(), format))
}

/// A database asked of an id the configuration gives another place.
/// What a configured database source reads: its query, else its table.
fn select(id: &str, table: &Option<String>, query: &Option<String>) -> Result<Select> {
    match (table, query) {
        (_, Some(q)) => Ok(Select::Query(q.clone())),
        (Some(t), None) => Ok(Select::Table(t.clone())),
        (None, None) => Err(not_a_database(id)),
    }
}

fn not_a_database(id: &str) -> RuntimeError {
    RuntimeError::new(
        "hql::config",
        format!("`{id}` is not a database table or query"),
    )
}

impl FsHost {
    /// The file a target path names, refused when it is a folder.
    fn checked_target(&self, path: &str) -> io::Result<PathBuf> {
        let target = resolve_target(Path::new(path))?;
        if target.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a directory",
            ));
        }
        Ok(target)
    }
}

/// The schema boundary of a configured source or target.
fn boundary(columns: &[Column], csv: &CsvOptions, json: &JsonOptions) -> Boundary {
    Boundary {
        columns: columns.to_vec(),
        csv: csv.clone(),
        json: json.clone(),
    }
}
