//! `hql recover [DIR]`: finish or roll back the commits that runs which
//! crashed while committing left in a folder (tooling.md, "Targets"). The
//! next run that touches those targets does the same on its own; this
//! command is for a folder no run will touch soon.

use std::path::Path;

use crate::session::commit::{sweep, Recovered};
use crate::session::{Sinks, EXIT_FAILED, EXIT_OK};

/// Recover `dir` (default: the current folder); one line per commit found.
pub fn recover(dir: Option<&str>, sinks: &mut Sinks) -> i32 {
    let dir = dir.unwrap_or(".");
    let found = match sweep(Path::new(dir)) {
        Ok(found) => found,
        Err(e) => {
            let _ = writeln!(sinks.err, "hql recover: cannot read {dir}: {e}");
            return EXIT_FAILED;
        }
    };
    if found.is_empty() {
        let _ = writeln!(sinks.out, "{dir}: no interrupted commit");
        return EXIT_OK;
    }
    let mut status = EXIT_OK;
    for one in found {
        let line = match one {
            Recovered::Finished { run, files } => {
                format!(
                    "run {run}: commit finished ({files} {} replaced)",
                    files_word(files)
                )
            }
            Recovered::RolledBack { run, files } => format!(
                "run {run}: its database never committed; rolled back ({files} {} removed)",
                temporaries_word(files)
            ),
            Recovered::Running { run } => format!("run {run}: still running, left alone"),
            Recovered::Stuck { run, why } => {
                status = EXIT_FAILED;
                format!("run {run}: cannot be recovered yet: {why}")
            }
        };
        let _ = writeln!(sinks.out, "{line}");
    }
    status
}

fn files_word(n: usize) -> &'static str {
    if n == 1 {
        "file"
    } else {
        "files"
    }
}

fn temporaries_word(n: usize) -> &'static str {
    if n == 1 {
        "temporary"
    } else {
        "temporaries"
    }
}
