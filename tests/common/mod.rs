//! Shared helpers for the spec tests: an in-memory host and `run`.
#![allow(dead_code)]

use std::collections::HashMap;
use std::rc::Rc;

use hql::cli::run::{submit_captured, Captured, OutputFormat, Source};
pub use hql::session::memory::MemHost;
use hql::session::Session;

/// Run a program in memory: what it printed and the targets it committed.
pub fn run_writing(src: &str, files: &[(&str, &str)]) -> (Run, HashMap<String, String>) {
    let host = Rc::new(MemHost::new(files, None));
    let run = run_on(src, host.clone(), OutputFormat::Hql);
    let written = host.written.borrow().clone();
    (run, written)
}

/// Run a program on `host`.
fn run_on(src: &str, host: Rc<MemHost>, format: OutputFormat) -> Run {
    submit(&mut Session::new(host), src, format)
}

/// Run a program in `session`, printing its values in `format`.
pub fn submit(session: &mut Session, src: &str, format: OutputFormat) -> Run {
    let text = Source {
        name: "test.hql",
        text: src,
    };
    let Captured { status, out, err } = submit_captured(session, &text, format);
    Run {
        out: String::from_utf8(out).expect("stdout is UTF-8"),
        err: String::from_utf8(err).expect("stderr is UTF-8"),
        status,
    }
}

/// What a run produced.
#[derive(Debug)]
pub struct Run {
    pub out: String,
    pub err: String,
    pub status: i32,
}

pub fn run_full(
    src: &str,
    files: &[(&str, &str)],
    stdin: Option<&str>,
    format: OutputFormat,
) -> Run {
    run_on(src, Rc::new(MemHost::new(files, stdin)), format)
}

/// Run a program with the given files: (stdout, stderr, status).
pub fn run(src: &str, files: &[(&str, &str)]) -> (String, String, i32) {
    let r = run_full(src, files, None, OutputFormat::Hql);
    (r.out, r.err, r.status)
}

/// Run with `--format json`.
pub fn run_json(src: &str, files: &[(&str, &str)]) -> (String, String, i32) {
    let r = run_full(src, files, None, OutputFormat::Json);
    (r.out, r.err, r.status)
}

/// Run with stdin contents.
pub fn run_stdin(src: &str, stdin: &str) -> (String, String, i32) {
    let r = run_full(src, &[], Some(stdin), OutputFormat::Hql);
    (r.out, r.err, r.status)
}

/// Run a program that must succeed (status 0, nothing on stderr); its stdout.
#[track_caller]
pub fn ok_out(src: &str, files: &[(&str, &str)]) -> String {
    let (out, err, status) = run(src, files);
    assert_eq!(
        status, 0,
        "expected status 0\nprogram:\n{src}\nstdout:\n{out}\nstderr:\n{err}"
    );
    assert!(
        err.is_empty(),
        "expected empty stderr\nprogram:\n{src}\nstderr:\n{err}"
    );
    out
}

/// The single printed line of an expression statement program.
#[track_caller]
pub fn eval1(src: &str) -> String {
    let out = ok_out(src, &[]);
    out.strip_suffix('\n').unwrap_or(&out).to_string()
}

/// Assert a program is rejected statically: exit 2, no stdout, stderr names `code`.
#[track_caller]
pub fn static_error(src: &str, code: &str) -> String {
    let (out, err, status) = run(src, &[]);
    assert_eq!(status, 2, "expected a static error (exit 2) with {code}\nprogram:\n{src}\nstdout:\n{out}\nstderr:\n{err}");
    assert!(
        out.is_empty(),
        "nothing may run when a static error exists; stdout:\n{out}"
    );
    assert!(
        err.contains(code),
        "expected diagnostic code {code}\nprogram:\n{src}\nstderr:\n{err}"
    );
    err
}

/// Assert a program stops with a runtime error: exit 1 and a diagnostic on stderr.
#[track_caller]
pub fn runtime_error(src: &str, files: &[(&str, &str)]) -> (String, String) {
    let (out, err, status) = run(src, files);
    assert_eq!(
        status, 1,
        "expected a runtime error (exit 1)\nprogram:\n{src}\nstdout:\n{out}\nstderr:\n{err}"
    );
    assert!(
        !err.is_empty(),
        "a runtime error prints a diagnostic\nprogram:\n{src}"
    );
    (out, err)
}

/// Collapse whitespace runs (miette may wrap long help lines).
pub fn squash(s: &str) -> String {
    let s: String = s
        .chars()
        .filter(|c| !matches!(c, '│' | '╰' | '─' | '╭' | '┬' | '·'))
        .collect();
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Lines of stdout.
pub fn lines(s: &str) -> Vec<&str> {
    s.lines().collect()
}

/// A folder of real files for one test, removed when the test ends.
pub struct Scratch {
    pub path: std::path::PathBuf,
}

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("hql-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("scratch folder");
        Scratch { path }
    }

    pub fn write(&self, name: &str, text: impl AsRef<[u8]>) -> std::path::PathBuf {
        let path = self.path.join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("scratch subfolder");
        }
        std::fs::write(&path, text).expect("scratch file");
        path
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path.join(name))
            .unwrap_or_else(|e| panic!("cannot read {name}: {e}"))
    }

    pub fn read_bytes(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.path.join(name)).unwrap_or_else(|e| panic!("cannot read {name}: {e}"))
    }

    pub fn exists(&self, name: &str) -> bool {
        self.path.join(name).exists()
    }

    /// The names of the files in the folder, sorted (temporaries included).
    pub fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.path)
            .expect("scratch folder")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// `hql ARGS…` run in the folder.
    pub fn hql(&self, args: &[&str]) -> Run {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
            .args(args)
            .current_dir(&self.path)
            .env("HQL_PROGRESS", "0")
            .output()
            .expect("hql runs");
        Run {
            out: String::from_utf8_lossy(&out.stdout).into_owned(),
            err: String::from_utf8_lossy(&out.stderr).into_owned(),
            status: out.status.code().unwrap_or(-1),
        }
    }

    /// `hql run PROGRAM ARGS…`, the program written to `main.hql` first.
    pub fn run(&self, program: &str, args: &[&str]) -> Run {
        self.write("main.hql", program);
        let mut all = vec!["run", "main.hql"];
        all.extend_from_slice(args);
        self.hql(&all)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// What `hql` does with real processes: standard input, signals, temporaries.
impl Scratch {
    /// `hql ARGS…` run in the folder with `stdin` piped in.
    pub fn hql_stdin(&self, args: &[&str], stdin: impl AsRef<[u8]>) -> Run {
        use std::io::Write;
        let mut child = self.spawn(args);
        let mut input = child.stdin.take().expect("piped stdin");
        let bytes = stdin.as_ref().to_vec();
        // Fed from a thread, so that a large output cannot block the input;
        // a program may stop reading early: a broken pipe is no failure here.
        let feeder = std::thread::spawn(move || {
            let _ = input.write_all(&bytes);
        });
        let out = child.wait_with_output().expect("hql runs");
        feeder.join().expect("stdin fed");
        Run {
            out: String::from_utf8_lossy(&out.stdout).into_owned(),
            err: String::from_utf8_lossy(&out.stderr).into_owned(),
            status: out.status.code().unwrap_or(-1),
        }
    }

    /// `hql ARGS…` started in the folder, its three streams piped.
    pub fn spawn(&self, args: &[&str]) -> std::process::Child {
        use std::process::Stdio;
        std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
            .args(args)
            .current_dir(&self.path)
            .env("HQL_PROGRESS", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("hql starts")
    }

    /// A FIFO (`mkfifo`) in the folder.
    pub fn fifo(&self, name: &str) -> std::path::PathBuf {
        let path = self.path.join(name);
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .expect("mkfifo runs");
        assert!(made.success(), "mkfifo {name}");
        path
    }

    /// The bytes of a file.
    pub fn bytes(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.path.join(name)).unwrap_or_else(|e| panic!("cannot read {name}: {e}"))
    }

    /// The temporaries of targets (`.NAME.hql-tmp-PID-N`) in the folder.
    pub fn temporaries(&self) -> Vec<String> {
        self.files()
            .into_iter()
            .filter(|f| f.contains(".hql-tmp-"))
            .collect()
    }

    /// Wait up to `seconds` for `ready`; whether it became true.
    pub fn wait_until(&self, seconds: u64, mut ready: impl FnMut(&Scratch) -> bool) -> bool {
        let end = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
        while std::time::Instant::now() < end {
            if ready(self) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        ready(self)
    }
}

/// A command the README shows in a ` ```sh ` block, run from the
/// repository root, and the ` ```text ` block that follows it: (what the
/// README shows, what the command does).
pub fn readme_example(command: &str) -> (String, Run) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("the README");
    let after = readme
        .split(&format!("```sh\n{command}\n```\n\n```text\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("the README shows `{command}` and its output"));
    let shown = &after[..after.find("```").expect("the output block ends")];
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(command.split(' ').skip(1))
        .current_dir(root)
        .output()
        .expect("hql runs");
    let run = Run {
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
        status: out.status.code().unwrap_or(-1),
    };
    (shown.to_string(), run)
}

/// Run the built `hql` with `args` from the repository's root, `input` on
/// its standard input, and no colour, history or terminal width from the
/// environment.
/// `ok_out` of `src` with `files` written to a fresh directory and the
/// binary run there on one thread: a source reads a real file, so the
/// counting path (which wants a file's length) is taken where it applies.
pub fn ok_out_on_disk(src: &str, files: &[(&str, &str)]) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use std::sync::atomic::{AtomicUsize, Ordering};
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("hql-disk-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", "--threads", "1", "-"])
        .env("NO_COLOR", "1")
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hql runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(src.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "program:\n{src}\nstderr:\n{stderr}"
    );
    assert!(stderr.is_empty(), "program:\n{src}\nstderr:\n{stderr}");
    String::from_utf8(out.stdout).unwrap()
}

pub fn hql_with_input(args: &[&str], input: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("HQL_HISTORY", "")
        .env("COLUMNS", "80")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hql runs");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// Every example program that checks (no expected `.status`: it does not
/// stop with an error), with the record types it declares and the JSON
/// Lines files it reads that exist, paths from the repository's root.
pub fn example_contracts() -> Vec<(String, Vec<String>, Vec<String>)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut dirs = vec![root.join("examples")];
    while let Some(dir) = dirs.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                if !path.ends_with("errors") {
                    dirs.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "hql") || path.with_extension("status").exists()
            {
                continue;
            }
            let source = std::fs::read_to_string(&path).unwrap();
            let types = hql::cli::contracts::type_names(&source, true);
            if types.is_empty() {
                continue;
            }
            let data = source
                .split("file(\"")
                .skip(1)
                .filter_map(|rest| rest.split_once('"').map(|(p, _)| p.to_string()))
                .filter(|p| p.ends_with(".jsonl") && root.join(p).exists())
                .collect();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            out.push((rel, types, data));
        }
    }
    out
}

/// The peak resident memory of `child` once it has ended, in KiB.
pub fn peak_kib(child: std::process::Child) -> i64 {
    let pid = child.id();
    let mut status = 0;
    // SAFETY: `rusage` is plain data that `wait4` fills in; the pid is
    // our own child's, not yet waited for.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid as libc::pid_t, "wait4");
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    usage.ru_maxrss
}
