//! A run's targets commit all together or not at all (tooling.md,
//! "Targets"), and a crash at any moment of the commit is finished by the
//! next run that touches those targets, or by `hql recover`.
//!
//! The order:
//!
//! 1. **Prepare** every target: each temporary written out and synced, the
//!    database's marker row for the run (table `_hql_runs`) inserted in its
//!    transaction. Anything that fails here abandons every target.
//! 2. **Journal**: where a run replaces more than one thing, a journal of
//!    its renames (and its database) is written, synced and renamed into
//!    place in the folder of every target. From here on the run is
//!    finished forward, unless its database did not commit.
//! 3. **Database**: the one database of the run commits, marker and all.
//!    If that fails, the journals are removed and every file abandoned.
//! 4. **Renames**, in order; then each folder is synced and the journals
//!    removed.
//!
//! Recovery reads a journal left by a process that is gone: when the run
//! had a database and its marker row is not there, the database never
//! committed, so the temporaries are removed (all old); otherwise every
//! temporary still there is renamed over its target (all new).
//!
//! `HQL_TEST_CRASH_AT` names a step at which the process aborts, so that
//! tests can crash a commit at each step (`prepared`, `journaled`,
//! `database`, `renamed-N` after the N-th rename, `renamed`, `done`).

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::formats::{postgres, sqlite};
use crate::runtime::eval::{abandon_all, CommitError, CommitStep, Pending};
use crate::session::config;

/// The prefix of a journal's file name in each folder it covers.
const JOURNAL_PREFIX: &str = ".hql-commit-";
const JOURNAL_SUFFIX: &str = ".journal";

/// Commit `pending`, all or nothing.
pub fn commit(mut pending: Vec<Box<dyn Pending>>) -> Result<(), CommitError> {
    if pending.is_empty() {
        return Ok(());
    }
    let run = run_id();
    if let Err(e) = pending.iter_mut().try_for_each(|p| p.prepare(&run)) {
        return Err(abandon_all(pending, e.to_string()));
    }
    crash_point("prepared");
    // The database commits first, the files after it.
    pending.sort_by_key(|p| !p.step().is_database());
    let journal = Journal::of(&run, &pending);
    let journaled = match &journal {
        Some(j) => j.write(),
        None => Ok(()),
    };
    if let Err(e) = journaled {
        if let Some(j) = &journal {
            j.remove();
        }
        return Err(abandon_all(
            pending,
            format!("cannot write the commit's journal: {e}"),
        ));
    }
    crash_point("journaled");
    let mut pending = pending.into_iter();
    let mut renamed = 0;
    let mut done = Vec::new();
    while let Some(p) = pending.next() {
        let step = p.step();
        let is_database = step.is_database();
        let target = p.target();
        if let Err(e) = p.commit() {
            let rest: Vec<Box<dyn Pending>> = pending.collect();
            if is_database || done.is_empty() {
                // Nothing is changed yet: every file goes back to before.
                if let CommitStep::Rename { temp, .. } = &step {
                    let _ = std::fs::remove_file(temp);
                }
                if let Some(j) = &journal {
                    j.remove();
                }
                let mut error = abandon_all(rest, format!("{target}: {e}"));
                error.unchanged.insert(0, target);
                return Err(error);
            }
            // Past the point of no return: the journal stays for recovery,
            // and so does every temporary it names, the failed one's too.
            let mut unchanged = vec![target];
            unchanged.extend(rest.iter().map(|p| p.target()));
            rest.into_iter().for_each(|p| p.keep());
            let dir = journal.as_ref().map(|j| j.dirs[0].display().to_string());
            return Err(CommitError {
                message: format!(
                    "the commit stopped after replacing {}: {e}",
                    done.join(", ")
                ),
                unchanged,
                help: Some(format!(
                    "`hql recover {}` finishes it once the cause is fixed",
                    dir.unwrap_or_else(|| ".".into())
                )),
            });
        }
        if is_database {
            crash_point("database");
        } else {
            renamed += 1;
            crash_point(&format!("renamed-{renamed}"));
        }
        done.push(target);
    }
    crash_point("renamed");
    if let Some(j) = &journal {
        j.sync_dirs();
        j.remove();
    }
    crash_point("done");
    Ok(())
}

/// A name for one run's commit, unique on this machine.
fn run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{}-{nanos}", std::process::id())
}

/// Abort here when a test asks to (`HQL_TEST_CRASH_AT`).
fn crash_point(step: &str) {
    static AT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let at = AT.get_or_init(|| std::env::var("HQL_TEST_CRASH_AT").ok());
    if at.as_deref() == Some(step) {
        std::process::abort();
    }
}

/// The journal of one commit: its renames, its database, and the folders
/// it is written in.
struct Journal {
    run: String,
    database: Option<PathBuf>,
    /// The PostgreSQL server the run wrote, as messages name it, and where
    /// its URL is configured (the configuration file and a target's id).
    server: Option<(String, Option<(PathBuf, String)>)>,
    renames: Vec<(PathBuf, PathBuf)>,
    dirs: Vec<PathBuf>,
}

impl Journal {
    /// The journal a commit needs, if it needs one: a single rename, or a
    /// database alone, is atomic by itself.
    fn of(run: &str, pending: &[Box<dyn Pending>]) -> Option<Journal> {
        let mut database = None;
        let mut server = None;
        let mut renames = Vec::new();
        for p in pending {
            match p.step() {
                CommitStep::Database { path } => database = Some(path),
                CommitStep::Server {
                    server: shown,
                    recover,
                } => server = Some((shown, recover)),
                CommitStep::Rename { temp, target } => renames.push((temp, target)),
                CommitStep::Direct => {}
            }
        }
        if renames.len() + usize::from(database.is_some() || server.is_some()) < 2 {
            return None;
        }
        let dirs: BTreeSet<PathBuf> = renames
            .iter()
            .map(|(_, target)| target)
            .chain(database.iter())
            .map(|p| folder_of(p))
            .collect();
        Some(Journal {
            run: run.to_string(),
            database,
            server,
            renames,
            dirs: dirs.into_iter().collect(),
        })
    }

    fn name(&self) -> String {
        format!("{JOURNAL_PREFIX}{}{JOURNAL_SUFFIX}", self.run)
    }

    fn text(&self) -> String {
        let renames: Vec<_> = self
            .renames
            .iter()
            .map(|(temp, target)| json!({"temp": temp, "target": target}))
            .collect();
        let doc = json!({
            "run": self.run,
            "pid": std::process::id(),
            "database": self.database,
            "server": self.server.as_ref().map(|(shown, recover)| json!({
                "shown": shown,
                "config": recover.as_ref().map(|r| &r.0),
                "target": recover.as_ref().map(|r| &r.1),
            })),
            "renames": renames,
            "dirs": self.dirs,
        });
        format!("{doc}\n")
    }

    fn read(path: &Path) -> io::Result<Journal> {
        let text = std::fs::read_to_string(path)?;
        let bad = || io::Error::new(io::ErrorKind::InvalidData, "not a journal of hql");
        let doc: serde_json::Value = serde_json::from_str(&text).map_err(|_| bad())?;
        let path_of = |v: &serde_json::Value| v.as_str().map(PathBuf::from);
        let renames = doc["renames"].as_array().ok_or_else(bad)?;
        let renames = renames
            .iter()
            .map(|r| Some((path_of(&r["temp"])?, path_of(&r["target"])?)))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        let dirs = doc["dirs"].as_array().ok_or_else(bad)?;
        Ok(Journal {
            run: doc["run"].as_str().ok_or_else(bad)?.to_string(),
            database: path_of(&doc["database"]),
            server: doc["server"]["shown"].as_str().map(|shown| {
                let config = path_of(&doc["server"]["config"]);
                let target = doc["server"]["target"].as_str().map(str::to_string);
                (shown.to_string(), config.zip(target))
            }),
            renames,
            dirs: dirs.iter().filter_map(path_of).collect(),
        })
    }

    /// Write the journal into every folder it covers: each copy written
    /// to a temporary, synced, renamed into place, and its folder synced.
    fn write(&self) -> io::Result<()> {
        let text = self.text();
        for dir in &self.dirs {
            let path = dir.join(self.name());
            let temp = dir.join(format!("{}.tmp", self.name()));
            let mut file = File::create(&temp)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&temp, &path)?;
            sync_dir(dir)?;
        }
        Ok(())
    }

    fn sync_dirs(&self) {
        for dir in &self.dirs {
            let _ = sync_dir(dir);
        }
    }

    fn remove(&self) {
        for dir in &self.dirs {
            let _ = std::fs::remove_file(dir.join(self.name()));
            let _ = std::fs::remove_file(dir.join(format!("{}.tmp", self.name())));
            let _ = sync_dir(dir);
        }
    }
}

/// The folder a path is in (`.` for a bare name).
pub(super) fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// What recovery did with one journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovered {
    /// The run's commit was finished: its files replaced.
    Finished { run: String, files: usize },
    /// The run's database never committed: its temporaries removed.
    RolledBack { run: String, files: usize },
    /// The process that wrote the journal is still running.
    Running { run: String },
    /// The journal cannot be acted on (its database cannot be read).
    Stuck { run: String, why: String },
}

/// What a target's temporary holds in its name after the target's name
/// (`.out.jsonl.hql-tmp-PID-N`).
pub const TEMP_MARK: &str = ".hql-tmp-";

/// Finish or roll back every commit a gone process left in `dir`, then
/// remove the temporaries of processes that are gone (runs killed while
/// writing): what the next run touching the folder, and `hql recover`, do.
pub fn sweep(dir: &Path) -> io::Result<Vec<Recovered>> {
    let recovered = recover(dir)?;
    remove_stale(dir);
    Ok(recovered)
}

/// Remove the temporaries in `dir` whose process is gone. Where processes
/// cannot be looked up, none is removed.
fn remove_stale(dir: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| Some(n.split_once(TEMP_MARK)?.1)) else {
            continue;
        };
        let mine = rest.split('-').next() == Some(&std::process::id().to_string());
        if !mine && !alive(rest) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Finish or roll back every commit a gone process left in `dir`.
pub fn recover(dir: &Path) -> io::Result<Vec<Recovered>> {
    let mut done = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(run) = name
            .strip_prefix(JOURNAL_PREFIX)
            .and_then(|n| n.strip_suffix(JOURNAL_SUFFIX))
        else {
            if let Some(run) = name
                .strip_prefix(JOURNAL_PREFIX)
                .and_then(|n| n.strip_suffix(".journal.tmp"))
            {
                // A journal never finished: its run never started to commit.
                if !alive(run) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
            continue;
        };
        if alive(run) {
            done.push(Recovered::Running { run: run.into() });
            continue;
        }
        let journal = match Journal::read(&entry.path()) {
            Ok(j) => j,
            Err(e) => {
                done.push(Recovered::Stuck {
                    run: run.into(),
                    why: e.to_string(),
                });
                continue;
            }
        };
        done.push(finish(&journal));
    }
    Ok(done)
}

/// Finish one journal's commit, forward or back.
fn finish(journal: &Journal) -> Recovered {
    let run = journal.run.clone();
    let committed = match (&journal.database, &journal.server) {
        (Some(db), _) => sqlite::run_committed(db, &journal.run),
        (None, Some((shown, recover))) => server_committed(shown, recover.as_ref(), &journal.run),
        (None, None) => Ok(true),
    };
    let forward = match committed {
        Ok(committed) => committed,
        Err(why) => return Recovered::Stuck { run, why },
    };
    let mut files = 0;
    for (temp, target) in &journal.renames {
        if !temp.exists() {
            continue;
        }
        let acted = if forward {
            std::fs::rename(temp, target)
        } else {
            std::fs::remove_file(temp)
        };
        match acted {
            Ok(()) => files += 1,
            Err(e) => {
                return Recovered::Stuck {
                    run,
                    why: format!("{}: {e}", target.display()),
                }
            }
        }
    }
    journal.sync_dirs();
    journal.remove();
    if forward {
        Recovered::Finished { run, files }
    } else {
        Recovered::RolledBack { run, files }
    }
}

/// Did the run commit on the PostgreSQL server `shown`? Its URL is read
/// again from the configuration that named it (a journal never holds a
/// password).
fn server_committed(
    shown: &str,
    recover: Option<&(PathBuf, String)>,
    run: &str,
) -> std::result::Result<bool, String> {
    let Some((file, id)) = recover else {
        return Err(format!(
            "{shown}: the journal does not say where the server is configured"
        ));
    };
    let config = config::Config::load(file).map_err(|e| format!("{shown}: {}", e.message))?;
    let target = config
        .target(id)
        .map_err(|e| format!("{shown}: {}", e.message))?;
    let config::Place::Postgres { url, .. } = &target.place else {
        return Err(format!(
            "{shown}: target `{id}` of {} is no longer a PostgreSQL table",
            file.display()
        ));
    };
    let url = url.url().map_err(|why| format!("{shown}: {why}"))?;
    postgres::run_committed(&url, run).map_err(|why| format!("{shown}: {why}"))
}

/// Is the process that wrote the journal of `run` still running? Where
/// processes cannot be looked up, it is taken to be gone only when it is
/// this process's own (a journal left by an earlier entry of a session).
fn alive(run: &str) -> bool {
    let Some(pid) = run.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
        return false;
    };
    if pid == std::process::id() {
        return false;
    }
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new(&format!("/proc/{pid}")).exists()
}
