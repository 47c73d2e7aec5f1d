//! The run's connection to a PostgreSQL server, on a thread of its own:
//! the run hands it statements to run in order. A batch of rows to `COPY`
//! is handed over without waiting, so the server takes one batch in while
//! the run reads and checks the next (the two overlap, as `psql \copy`'s
//! reading and the server's parsing do); any other statement waits for its
//! answer, after everything handed over before it. A `COPY` that fails is
//! told at the next statement the run waits for, with the row it stopped
//! at.

use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex};

use postgres::Client;

use super::said;

/// A statement run on the connection's thread.
type Job = Box<dyn FnOnce(&mut Client) + Send>;

/// Where a row came from, as a thread can hold it.
pub(super) type RowOrigin = Option<(Arc<str>, u64)>;

/// Why the connection failed: the server's words, and the row a `COPY`
/// stopped at.
#[derive(Debug, Clone)]
pub(super) struct Failed {
    pub why: String,
    pub row: RowOrigin,
}

impl From<String> for Failed {
    fn from(why: String) -> Failed {
        Failed { why, row: None }
    }
}

/// Batches handed over and not yet taken in, at most: the run waits when
/// the server is further behind.
const AHEAD: usize = 2;

pub(super) struct Connection {
    jobs: Option<SyncSender<Job>>,
    /// The first `COPY` that failed.
    failed: Arc<Mutex<Option<Failed>>>,
}

impl Connection {
    /// A connected client, on a thread of its own.
    pub fn new(mut client: Client) -> Connection {
        let (jobs, rx) = sync_channel::<Job>(AHEAD);
        std::thread::spawn(move || {
            for job in rx {
                job(&mut client);
            }
        });
        Connection {
            jobs: Some(jobs),
            failed: Arc::default(),
        }
    }

    /// The failure of a `COPY` handed over earlier, if one failed.
    fn earlier(&self) -> Option<Failed> {
        self.failed.lock().ok().and_then(|f| f.clone())
    }

    /// Run `f` on the connection, after everything handed over before it,
    /// and wait for its answer.
    pub fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<T, String> + Send + 'static,
    ) -> Result<T, Failed> {
        if let Some(failed) = self.earlier() {
            return Err(failed);
        }
        let (tx, rx) = sync_channel(1);
        let job: Job = Box::new(move |client| {
            let _ = tx.send(f(client));
        });
        let gone = || Failed::from("the connection's thread stopped".to_string());
        self.jobs
            .as_ref()
            .ok_or_else(gone)?
            .send(job)
            .map_err(|_| gone())?;
        let answer = rx.recv().map_err(|_| gone())?;
        // A `COPY` before it that failed aborted the transaction: that is
        // what is said.
        if let Some(failed) = self.earlier() {
            return Err(failed);
        }
        answer.map_err(Failed::from)
    }

    /// Hand over `data` for `COPY … FROM STDIN` (`sql`) without waiting;
    /// `origins` are its rows' (for the row a failure stopped at).
    pub fn copy(&self, sql: String, data: Vec<u8>, origins: Vec<RowOrigin>) -> Result<(), Failed> {
        if let Some(failed) = self.earlier() {
            return Err(failed);
        }
        let failed = self.failed.clone();
        let job: Job = Box::new(move |client| {
            if failed.lock().map_or(true, |f| f.is_some()) {
                return;
            }
            if let Err(e) = copy_in(client, &sql, &data) {
                if let Ok(mut slot) = failed.lock() {
                    slot.get_or_insert(copy_failed(&e, &origins));
                }
            }
        });
        let gone = || Failed::from("the connection's thread stopped".to_string());
        self.jobs
            .as_ref()
            .ok_or_else(gone)?
            .send(job)
            .map_err(|_| gone())
    }

    /// Wait until everything handed over is done.
    pub fn settle(&self) -> Result<(), Failed> {
        self.call(|_| Ok(()))
    }

    /// Hand over `sql` without waiting for it (a `ROLLBACK` on the way
    /// out), and let the thread end once it has run.
    pub fn close_with(&mut self, sql: &'static str) {
        if let Some(jobs) = self.jobs.take() {
            let _ = jobs.send(Box::new(move |client| {
                let _ = client.batch_execute(sql);
            }));
        }
    }
}

fn copy_in(client: &mut Client, sql: &str, data: &[u8]) -> Result<(), CopyError> {
    use std::io::Write;
    let mut writer = client.copy_in(sql).map_err(CopyError::Server)?;
    writer.write_all(data).map_err(CopyError::Io)?;
    writer.finish().map_err(CopyError::Server)?;
    Ok(())
}

enum CopyError {
    Server(postgres::Error),
    Io(std::io::Error),
}

/// A `COPY`'s failure, with the column and row it names (`COPY orders,
/// line 3, column amount: "…"`: the value is not shown).
fn copy_failed(e: &CopyError, origins: &[RowOrigin]) -> Failed {
    let e = match e {
        CopyError::Server(e) => e,
        CopyError::Io(e) => return Failed::from(e.to_string()),
    };
    let mut why = said(e);
    let mut row = None;
    if let Some(at) = e.as_db_error().and_then(|db| db.where_()) {
        let line = at
            .split(", line ")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse::<usize>().ok());
        if let Some(column) = at
            .split(", column ")
            .nth(1)
            .map(|rest| rest.split(':').next().unwrap_or(rest))
        {
            why = format!("column `{column}`: {why}");
        }
        row = line
            .and_then(|n| origins.get(n.wrapping_sub(1)))
            .cloned()
            .flatten();
    }
    Failed { why, row }
}
