//! The live progress line (tooling.md, "Long runs show progress"): drawn on
//! a terminal once a run has read a source for about a second, absent when
//! standard error is not a terminal, with `--quiet` or `HQL_PROGRESS=0`.
//! The source is a FIFO fed slowly, so the run lasts as long as the test
//! wants, whatever the machine's speed.

#![cfg(unix)]

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::Scratch;
use rexpect::session::{spawn_command, PtySession};

const PROGRAM: &str = "type R : DataContract = { n: Int, require n % 7 != 0 }\n\
    source(file(\"feed.jsonl\"), Json) | validate(R) | report()\n";

/// A folder with the program and a FIFO `feed.jsonl`; a thread writes
/// `lines` records into it over about two seconds.
fn slow_feed(name: &str, lines: usize) -> (Scratch, std::thread::JoinHandle<()>) {
    let dir = Scratch::new(name);
    dir.write("main.hql", PROGRAM);
    let fifo = dir.fifo("feed.jsonl");
    let feeder = std::thread::spawn(move || {
        // Opening blocks until hql opens the FIFO for reading.
        let mut feed = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        for n in 1..=lines {
            writeln!(feed, "{{\"n\": {n}}}").unwrap();
            if n % 10 == 0 {
                feed.flush().unwrap();
                std::thread::sleep(Duration::from_millis(2000 / lines as u64 * 10));
            }
        }
    });
    (dir, feeder)
}

/// `hql run main.hql ARGS` on a pseudo-terminal, with `env` set; `None`
/// where no pseudo-terminal can be had.
fn on_terminal(dir: &Scratch, args: &[&str], env: Option<(&str, &str)>) -> Option<PtySession> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hql"));
    cmd.args(["run", "main.hql"])
        .args(args)
        .current_dir(&dir.path)
        .env("TERM", "xterm")
        .env_remove("HQL_PROGRESS");
    if let Some((k, v)) = env {
        cmd.env(k, v);
    }
    match spawn_command(cmd, Some(15_000)) {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("skipped: no pseudo-terminal ({e})");
            None
        }
    }
}

const PROGRESS: &str = r"\d+ records \(\d+/s\) \S+ \d+ ok \S+ \d+ err";

#[test]
fn a_terminal_shows_records_oks_and_errs_while_a_long_run_reads() {
    let (dir, feeder) = slow_feed("progress-pty", 300);
    let Some(mut p) = on_terminal(&dir, &[], None) else {
        return;
    };
    // The line appears while the FIFO is still being fed...
    p.exp_regex(PROGRESS)
        .unwrap_or_else(|e| panic!("no progress line: {e}"));
    // ...and the report follows when the feed ends.
    p.exp_string("{total: 300, ok: 258, err: 42")
        .expect("the report");
    feeder.join().unwrap();
}

/// On a terminal too, `--quiet` and `HQL_PROGRESS=0` turn the line off:
/// everything the run shows up to its end is the report.
#[test]
fn quiet_and_hql_progress_0_turn_the_line_off_on_a_terminal() {
    for (args, env) in [
        (vec!["--quiet"], None),
        (vec![], Some(("HQL_PROGRESS", "0"))),
    ] {
        let (dir, feeder) = slow_feed("progress-off", 300);
        let Some(mut p) = on_terminal(&dir, &args, env) else {
            return;
        };
        let shown = p.exp_eof().expect("the run ends");
        feeder.join().unwrap();
        assert!(
            shown.starts_with("{total: 300, ok: 258, err: 42"),
            "{args:?} {env:?}: {shown}"
        );
        assert!(!shown.contains("records ("), "{args:?} {env:?}: {shown}");
    }
}

#[test]
fn piped_stderr_shows_no_progress() {
    let (dir, feeder) = slow_feed("progress-piped", 150);
    let out = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", "main.hql"])
        .current_dir(&dir.path)
        .env_remove("HQL_PROGRESS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("hql runs");
    feeder.join().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("{total: 150, ok: 129, err: 21"));
}
