//! What `hql` does at the edges of input and output: adversarial data
//! read on the counting path and the ordinary path alike, FIFOs,
//! directories and unreadable files as sources, standard input that held
//! the program, and standard output that is full, closed, or whose reader
//! has gone. `docs/robustness.md` lists each case with the test that
//! holds it.

#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Run, Scratch};

const CONTRACT: &str = "type T : Data = { a: Int }\n";

/// The count of valid records and the report of `data.jsonl`, through the
/// counting path (`validate(T) | oks() | count()` and `validate(T) |
/// report()`) and, checked to agree, through the ordinary path (a `take`
/// between the source and `validate` keeps the pipeline off the counting
/// path).
fn count_and_report(dir: &Scratch, data: &[u8]) -> String {
    dir.write("data.jsonl", data);
    let source = "source(file(\"data.jsonl\"), Json)";
    let program = format!(
        "{CONTRACT}{source} | validate(T) | oks() | count()\n{source} | validate(T) | report()\n"
    );
    let counted = dir.run(&program, &[]);
    assert_eq!(counted.status, 0, "{}", counted.err);
    let ordinary = program.replace("Json) | validate", "Json) | take(1000000) | validate");
    let read = dir.run(&ordinary, &[]);
    assert_eq!(read.out, counted.out, "the ordinary path agrees");
    counted.out
}

/// `{total: N, ok: N, err: N, warned: 0, by_rule: […]}` after the count.
fn counts(out: &str) -> (i64, &str) {
    let (count, report) = out.split_once('\n').expect("two lines");
    let report = report.split(", warned").next().unwrap();
    (count.parse().unwrap(), report)
}

#[test]
fn invalid_utf8_in_data_is_one_decode_err() {
    let dir = Scratch::new("io-utf8");
    let out = count_and_report(&dir, b"{\"a\": 1}\n{\"a\": \"\xff\"}\n\xfe\n{\"a\": 2}\n");
    assert_eq!(counts(&out), (2, "{total: 4, ok: 2, err: 2"), "{out}");
    assert!(
        out.contains("{rule: \"decode\", kind: \"decode\", count: 2}"),
        "{out}"
    );
}

#[test]
fn nul_bytes_in_data_are_decode_errs() {
    let dir = Scratch::new("io-nul");
    let out = count_and_report(
        &dir,
        b"{\"a\": 1,\x00 \"b\": 2}\n{\"a\": \"x\x00\"}\n\x00\n{\"a\": 3}\n",
    );
    assert_eq!(counts(&out), (1, "{total: 4, ok: 1, err: 3"), "{out}");
}

#[test]
fn a_duplicate_key_takes_its_last_value() {
    let dir = Scratch::new("io-dup");
    let out = count_and_report(
        &dir,
        b"{\"a\": \"x\", \"a\": 2}\n{\"a\": 1, \"a\": \"x\"}\n",
    );
    assert_eq!(counts(&out), (1, "{total: 2, ok: 1, err: 1"), "{out}");
    assert!(
        out.contains("{rule: \"T.a.type\", kind: \"type\", count: 1}"),
        "{out}"
    );
}

#[test]
fn a_byte_order_mark_opens_a_file_only() {
    let dir = Scratch::new("io-bom");
    let out = count_and_report(&dir, b"\xEF\xBB\xBF{\"a\": 1}\n\xEF\xBB\xBF{\"a\": 2}\n");
    assert_eq!(counts(&out), (1, "{total: 2, ok: 1, err: 1"), "{out}");
    assert!(out.contains("rule: \"decode\""), "{out}");
}

#[test]
fn crlf_line_ends_and_no_final_newline() {
    let dir = Scratch::new("io-crlf");
    let out = count_and_report(&dir, b"{\"a\": 1}\r\n\r\n{\"a\": 2}\r\n{\"a\": 3}");
    assert_eq!(counts(&out), (3, "{total: 3, ok: 3, err: 0"), "{out}");
}

#[test]
fn an_empty_file_has_no_records() {
    let dir = Scratch::new("io-empty");
    for data in [&b""[..], b"\n\n  \n", b"[]", b"\xEF\xBB\xBF"] {
        let out = count_and_report(&dir, data);
        assert_eq!(counts(&out), (0, "{total: 0, ok: 0, err: 0"), "{data:?}");
    }
}

#[test]
fn lines_after_a_json_array_are_counted_on_every_path() {
    let dir = Scratch::new("io-array-then-lines");
    let data = b"[{\"a\": 1}]\n{\"a\": 2}\n{\"a\": 3}\n{\"a\": 4}\n";
    let out = count_and_report(&dir, data);
    assert_eq!(counts(&out), (1, "{total: 4, ok: 1, err: 3"), "{out}");
    let threaded = dir.hql(&["run", "--threads", "2", "main.hql"]);
    assert_eq!(threaded.out, out);
    // A large file, so that threads would split it if it were JSON Lines.
    let mut big = b"[{\"a\": 0}]\n".to_vec();
    for i in 0..60_000 {
        big.extend_from_slice(format!("{{\"a\": {i}}}\n").as_bytes());
    }
    let out = count_and_report(&dir, &big);
    assert_eq!(
        counts(&out),
        (1, "{total: 60001, ok: 1, err: 60000"),
        "{out}"
    );
    assert_eq!(dir.hql(&["run", "--threads", "2", "main.hql"]).out, out);
}

/// Wait for `child` at most `seconds`: a run that hangs is killed and fails
/// the test.
fn finish(mut child: Child, seconds: u64) -> Run {
    let end = Instant::now() + Duration::from_secs(seconds);
    while child.try_wait().expect("hql runs").is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            panic!("hql did not finish within {seconds} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("hql ran");
    Run {
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
        status: out.status.code().unwrap_or(-1),
    }
}

#[test]
fn a_fifo_is_read_once_front_to_back() {
    let dir = Scratch::new("io-fifo");
    let fifo = dir.fifo("feed.jsonl");
    let source = "source(file(\"feed.jsonl\"), Json) | validate(T)";
    for (tail, threads, expected) in [
        ("report()", "1", "{total: 3, ok: 2, err: 1"),
        ("report()", "4", "{total: 3, ok: 2, err: 1"),
        ("oks() | count()", "4", "2"),
    ] {
        dir.write("main.hql", format!("{CONTRACT}{source} | {tail}\n"));
        let child = dir.spawn(&["run", "--threads", threads, "main.hql"]);
        let mut feed = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        feed.write_all(b"{\"a\": 1}\n{\"a\": \"x\"}\n{\"a\": 2}\n")
            .unwrap();
        drop(feed);
        let run = finish(child, 20);
        assert_eq!(run.status, 0, "{}", run.err);
        assert!(run.out.starts_with(expected), "{tail}: {}", run.out);
    }
}

#[test]
fn dev_stdin_is_a_source_whether_a_pipe_or_a_file() {
    let dir = Scratch::new("io-dev-stdin");
    dir.write(
        "main.hql",
        format!("{CONTRACT}source(file(\"/dev/stdin\"), Json) | validate(T) | report()\n"),
    );
    let piped = dir.hql_stdin(&["run", "main.hql"], "{\"a\": 1}\n{\"a\": \"x\"}\n");
    assert_eq!(piped.status, 0, "{}", piped.err);
    assert!(
        piped.out.starts_with("{total: 2, ok: 1, err: 1"),
        "{}",
        piped.out
    );
    // A regular file behind it, large enough to be split across threads.
    let mut data = String::new();
    for i in 0..100_000 {
        data.push_str(&format!(
            "{{\"a\": {}}}\n",
            if i % 10 == 0 {
                "\"x\"".into()
            } else {
                i.to_string()
            }
        ));
    }
    let file = dir.write("data.jsonl", &data);
    let child = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", "--threads", "2", "main.hql"])
        .current_dir(&dir.path)
        .env("HQL_PROGRESS", "0")
        .stdin(std::fs::File::open(file).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run = finish(child, 60);
    assert!(
        run.out.starts_with("{total: 100000, ok: 90000, err: 10000"),
        "{}",
        run.out
    );
}

/// `program`'s run: its status must be 1, with one `hql::io` error
/// saying `reason`.
fn io_error(run: &Run, reason: &str) {
    assert_eq!(run.status, 1, "{}", run.out);
    assert_eq!(run.err.matches("hql::io").count(), 1, "{}", run.err);
    assert!(run.err.contains(reason), "{}", run.err);
}

#[test]
fn a_directory_is_no_source() {
    let dir = Scratch::new("io-dir");
    std::fs::create_dir_all(dir.path.join("d.jsonl")).unwrap();
    for pipeline in [
        "source(file(\"d.jsonl\"), Json) | validate(T) | report()",
        "source(file(\"d.jsonl\"), Json) | validate(T) | oks() | count()",
        "source(file(\"d.jsonl\"), Json) | count()",
        "source(file(\"d.jsonl\"), Csv) | validate(T) | report()",
    ] {
        let run = dir.run(&format!("{CONTRACT}{pipeline}\n"), &["--threads", "2"]);
        io_error(&run, "cannot read d.jsonl: it is a directory");
    }
    dir.write("c.hql", CONTRACT);
    let vet = dir.hql(&["vet", "c.hql", "d.jsonl"]);
    io_error(&vet, "cannot read d.jsonl: it is a directory");
}

/// Root reads a file whatever its permissions, so there the test can
/// show nothing and passes, saying so.
#[test]
fn an_unreadable_file_is_no_source() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Scratch::new("io-unreadable");
    let data = dir.write("locked.jsonl", "{\"a\": 1}\n");
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&data).is_ok() {
        eprintln!("skipped: this user reads files whatever their permissions (root)");
        return;
    }
    let run = dir.run(
        &format!("{CONTRACT}source(file(\"locked.jsonl\"), Json) | validate(T) | report()\n"),
        &[],
    );
    io_error(&run, "cannot read locked.jsonl: Permission denied");
}

#[test]
fn stdin_that_held_the_program_is_no_source() {
    let dir = Scratch::new("io-run-stdin");
    let run = dir.hql_stdin(
        &["run", "-"],
        "\"first\"\nsource(stdin(), Json) | count()\n",
    );
    assert_eq!((run.out.as_str(), run.status), ("\"first\"\n", 1));
    assert!(run.err.contains("hql::stdin_twice"), "{}", run.err);
    assert!(
        run.err
            .contains("standard input held the program, and can be read only once"),
        "{}",
        run.err
    );
}

/// `hql ARGS…` in `dir` with its standard output on `stdout`.
fn run_to(dir: &Scratch, args: &[&str], stdout: Stdio, stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(args)
        .current_dir(&dir.path)
        .env("HQL_PROGRESS", "0")
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin);
    finish(child, 60)
}

fn dev_full() -> Stdio {
    Stdio::from(
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap(),
    )
}

#[test]
fn a_full_output_is_an_io_error() {
    let dir = Scratch::new("io-full");
    dir.write("main.hql", "1\n[1, 2]\n");
    let full = "cannot write to standard output: No space left on device";
    io_error(&run_to(&dir, &["run", "main.hql"], dev_full(), b""), full);
    // Past the output's buffer: the stream stops, the error is said once.
    let mut lines = String::new();
    for i in 0..50_000 {
        lines.push_str(&format!("{{\"a\": {i}}}\n"));
    }
    dir.write("many.jsonl", lines);
    dir.write(
        "stream.hql",
        "source(file(\"many.jsonl\"), Json)\n\"after\"\n",
    );
    let args = ["run", "--format", "json", "stream.hql"];
    io_error(&run_to(&dir, &args, dev_full(), b""), full);
    // The REPL, `hql vet` and `hql test` say so too.
    io_error(&run_to(&dir, &["repl"], dev_full(), b"1\n2\n"), full);
    dir.write("c.hql", CONTRACT);
    dir.write("d.jsonl", "{\"a\": 1}\n");
    io_error(
        &run_to(&dir, &["vet", "c.hql", "d.jsonl"], dev_full(), b""),
        full,
    );
    dir.write("t.hql", "check one: 1 == 1\n");
    io_error(&run_to(&dir, &["test", "t.hql"], dev_full(), b""), full);
}

/// `hql ARGS…` with standard output closed (`>&-`), through the shell.
fn with_stdout_closed(dir: &Scratch, args: &[&str]) -> Run {
    let child = Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" \"$@\" >&-")
        .arg(env!("CARGO_BIN_EXE_hql"))
        .args(args)
        .current_dir(&dir.path)
        .env("HQL_PROGRESS", "0")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finish(child, 20)
}

#[test]
fn a_closed_output_is_an_io_error() {
    let dir = Scratch::new("io-closed");
    dir.write("main.hql", "1\n");
    io_error(
        &with_stdout_closed(&dir, &["run", "main.hql"]),
        "cannot write to standard output: Bad file descriptor",
    );
    // Nothing written, nothing failed.
    dir.write("quiet.hql", "let x = 1\ncheck one: x == 1\n");
    let run = with_stdout_closed(&dir, &["run", "quiet.hql"]);
    assert_eq!((run.err.as_str(), run.status), ("", 0));
}

/// `hql run`, its output read up to the first line and then closed: a
/// printed stream stops being read, and the rest of the program runs.
fn read_one_line_then_close(dir: &Scratch, args: &[&str], feed_forever: bool) -> (String, Run) {
    let mut child = dir.spawn(args);
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        // Until hql stops reading (a broken pipe here).
        while feed_forever && stdin.write_all(b"{\"a\": 1}\n").is_ok() {}
    });
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    drop(reader);
    let run = finish(child, 30);
    feeder.join().unwrap();
    (first, run)
}

#[test]
fn a_reader_that_has_gone_is_no_error() {
    let dir = Scratch::new("io-gone");
    // `yes '{"a": 1}' | hql run p.hql | head -1` ends.
    dir.write("endless.hql", "source(stdin(), Json) | map(r => r.a)\n");
    let args = ["run", "--format", "json", "endless.hql"];
    let (first, run) = read_one_line_then_close(&dir, &args, true);
    assert_eq!(first, "1\n");
    assert_eq!((run.err.as_str(), run.status), ("", 0));
    // The statements after the cut one still run: their target commits.
    let mut lines = String::new();
    for i in 0..50_000 {
        lines.push_str(&format!("{{\"a\": {i}}}\n"));
    }
    dir.write("many.jsonl", lines);
    dir.write(
        "main.hql",
        "source(file(\"many.jsonl\"), Json)\n[{a: 1}] | write(file(\"after.jsonl\"))\n",
    );
    let (first, run) =
        read_one_line_then_close(&dir, &["run", "--format", "json", "main.hql"], false);
    assert_eq!(first, "{\"a\":0}\n");
    assert_eq!((run.err.as_str(), run.status), ("", 0));
    assert_eq!(dir.read("after.jsonl"), "{\"a\":1}\n");
}

/// A stream printed in HQL form is one line, `[a, b, …]`, written as it
/// goes once it is long (so that printing any number of records takes
/// little memory): the same bytes as a short one held whole. An error in
/// a short stream prints none of it; in a long one, the line printed so
/// far is ended before the error.
#[test]
fn a_long_stream_prints_as_one_list() {
    let n = 300_000;
    let data: String = (0..n).map(|i| format!("{{\"a\": {i}}}\n")).collect();
    let files = [("d.jsonl", data.as_str())];
    let (out, err, status) = common::run(
        "source(file(\"d.jsonl\"), Json) | map(r => r.a)\nsource(file(\"d.jsonl\"), Json) | take(3) | map(r => r.a)",
        &files,
    );
    let all: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    assert!(out.len() > 1 << 21, "long enough to be written as it goes");
    assert_eq!(out, format!("[{}]\n[0, 1, 2]\n", all.join(", ")));
    assert_eq!((err.as_str(), status), ("", 0));
    for (take, printed) in [(10, false), (n, true)] {
        let src = format!(
            "source(file(\"d.jsonl\"), Json) | take({take}) | map(r => if r.a == {} then r.b + 1 else r.a)",
            take - 1
        );
        let (out, err, status) = common::run(&src, &files);
        assert_eq!(status, 1, "{err}");
        assert_eq!(out.ends_with(&format!("{}\n", take - 2)), printed, "{take}");
        assert_eq!(out.is_empty(), !printed, "{take}");
    }
}

/// A line longer than `--max-line` stops the run with one `hql::io` error
/// naming the source and the line, on every path that reads it: JSON
/// Lines read the ordinary way, counted, counted on threads and read in
/// chunks by threads; a JSON array's element; a CSV record; an endless
/// line (`/dev/zero`) and a long line on standard input.
#[test]
fn a_line_longer_than_max_line_is_an_io_error_on_every_path() {
    let dir = Scratch::new("io-max-line");
    let long = "x".repeat(70_000);
    dir.write(
        "d.jsonl",
        format!("{{\"a\": 1}}\n{{\"a\": 2}}\n{{\"a\": \"{long}\"}}\n{{\"a\": 4}}\n"),
    );
    dir.write(
        "d.json",
        format!("[{{\"a\": 1}},\n {{\"a\": \"{long}\"}}]\n"),
    );
    dir.write("d.csv", format!("a\n1\n{long}\n2\n"));
    let mut big: String = (0..100_000).map(|i| format!("{{\"a\": {i}}}\n")).collect();
    big.push_str(&format!("{{\"a\": \"{long}\"}}\n"));
    dir.write("big.jsonl", big);
    let too_long = |source: &str, line: u64| {
        format!("line {line} of {source} is longer than the longest line allowed (65536 bytes)")
    };
    for (pipeline, source, line) in [
        ("source(file(\"d.jsonl\"), Json) | count()", "d.jsonl", 3),
        (
            "source(file(\"d.jsonl\"), Json) | validate(T) | report()",
            "d.jsonl",
            3,
        ),
        (
            "source(file(\"d.jsonl\"), Json) | validate(T) | oks() | count()",
            "d.jsonl",
            3,
        ),
        ("source(file(\"d.json\"), Json) | count()", "d.json", 2),
        ("source(file(\"d.csv\"), Csv) | count()", "d.csv", 3),
        (
            "source(file(\"d.csv\"), Csv) | validate(T) | report()",
            "d.csv",
            3,
        ),
        (
            "source(file(\"big.jsonl\"), Json) | validate(T) | report()",
            "big.jsonl",
            100_001,
        ),
        (
            "source(file(\"big.jsonl\"), Json) | validate(T) | oks() | count()",
            "big.jsonl",
            100_001,
        ),
        (
            "source(file(\"big.jsonl\"), Json) | validate(T) | errs() | count()",
            "big.jsonl",
            100_001,
        ),
        (
            "source(file(\"big.jsonl\"), Json) | validate(T) | oks() | write(file(\"out.jsonl\"))",
            "big.jsonl",
            100_001,
        ),
        (
            "type K : DataContract = {\n    a: Int\n    unique a\n}\n\
             source(file(\"big.jsonl\"), Json) | validate(K) | oks() | count()",
            "big.jsonl",
            100_001,
        ),
    ] {
        let run = dir.run(
            &format!("{CONTRACT}{pipeline}\n"),
            &["--threads", "2", "--max-line", "64K"],
        );
        io_error(&run, &too_long(source, line));
        assert!(!dir.exists("out.jsonl"), "{pipeline}");
    }
    for format in ["Json", "Csv"] {
        let run = dir.run(
            &format!("source(file(\"/dev/zero\"), {format}) | count()\n"),
            &["--max-line", "1M"],
        );
        io_error(
            &run,
            "line 1 of /dev/zero is longer than the longest line allowed (1048576 bytes)",
        );
    }
    dir.write("main.hql", "source(stdin(), Json) | count()\n");
    let run = dir.hql_stdin(
        &["run", "main.hql", "--max-line", "64k"],
        "y".repeat(200_000),
    );
    io_error(&run, &too_long("<stdin>", 1));
    dir.write("c.hql", CONTRACT);
    let vet = dir.hql(&["vet", "c.hql", "d.jsonl", "--max-line", "64K"]);
    io_error(&vet, &too_long("d.jsonl", 3));
    // Within the limit, the same lines are read as ever.
    let run = dir.run(
        &format!("{CONTRACT}source(file(\"d.jsonl\"), Json) | count()\n"),
        &["--max-line", "70010"],
    );
    assert_eq!((run.status, run.out.as_str()), (0, "4\n"), "{}", run.err);
}

#[test]
fn max_line_takes_a_size_with_a_unit() {
    let dir = Scratch::new("io-max-line-usage");
    for bad in ["0", "12Q", "K", "1.5M"] {
        let run = dir.run("1\n", &["--max-line", bad]);
        assert_eq!(run.status, 2, "{bad}: {}", run.err);
        assert!(run.err.contains("expected a size in bytes"), "{}", run.err);
    }
    let run = dir.run("1\n", &["--max-line", "1G"]);
    assert_eq!((run.status, run.out.as_str()), (0, "1\n"), "{}", run.err);
}

/// The peak resident memory, in KiB, of `child` once it has ended, and
/// whether it succeeded.
fn peak_kib(child: Child) -> (i64, bool) {
    let mut status = 0;
    // SAFETY: `rusage` is plain data that `wait4` fills in; the pid is
    // our own child's, not yet waited for.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    (
        usage.ru_maxrss,
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
    )
}

/// Huge lines and cells, each held about once (tooling.md, "--max-line").
#[test]
fn huge_lines_and_cells_cost_about_their_size_once() {
    a_huge_line_costs_about_its_size_once();
    a_huge_line_costs_about_its_size_once_on_every_thread();
    a_huge_csv_cell_costs_about_its_size_once();
}

/// Run `program` in `dir` with `args`: it must print `expected`, and
/// its peak resident memory stay under 1.5 times `kib`, the size of the
/// huge line or cell it reads.
fn held_once(dir: &Scratch, program: &str, args: &[&str], expected: &str, kib: i64) {
    dir.write("main.hql", program);
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.push("main.hql");
    let mut child = dir.spawn(&all);
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    let (peak, ok) = peak_kib(child);
    assert!(ok, "{program}");
    assert_eq!(out, expected, "{program} {args:?}");
    assert!(
        peak < kib + kib / 2,
        "{program} {args:?}: peak {peak} KiB for {kib} KiB"
    );
}

const HUGE_CONTRACT: &str = "type T : DataContract = {\n    n: Int\n    s: String\n    \
                             require n > 1\n}\n";

/// A huge line is held once on the paths that read a file on several
/// threads too: the thread whose part of the file a line starts in reads
/// it, the others pass over it, and its chunk's buffer becomes its string.
/// (A child's peak memory counts the parent's at the moment it started,
/// so the tests of peak memory run one after another, none holding a huge
/// buffer while another's child runs.)
fn a_huge_line_costs_about_its_size_once_on_every_thread() {
    let dir = Scratch::new("io-huge-line-threads");
    let size = 96 << 20;
    let mut data = Vec::with_capacity(size + 64 * 1024);
    for n in 0..1000 {
        data.extend_from_slice(format!("{{\"n\": {n}, \"s\": \"a\"}}\n").as_bytes());
    }
    data.extend_from_slice(b"{\"n\": 1, \"s\": \"");
    data.resize(data.len() + size, b'x');
    data.extend_from_slice(b"\"}\n");
    for n in 0..1000 {
        data.extend_from_slice(format!("{{\"n\": {n}, \"s\": \"b\"}}\n").as_bytes());
    }
    dir.write("huge.jsonl", &data);
    drop(data);
    let line_kib = (size >> 10) as i64;
    let pipelines = [
        ("validate(T) | count()", "2001\n".to_string()),
        (
            "validate(T) | report()",
            "{total: 2001, ok: 1996, err: 5, warned: 0, by_rule: [{rule: \"T.n > 1\", \
             kind: \"require\", count: 5}]}\n"
                .to_string(),
        ),
        (
            "validate(T) | errs() | map(e => len(e.input.s)) | collect()",
            format!("[1, 1, {size}, 1, 1]\n"),
        ),
        (
            "validate(T) | oks() | filter(r => len(r.s) > 1) | count()",
            "0\n".to_string(),
        ),
    ];
    for threads in ["1", "2"] {
        for (pipeline, expected) in &pipelines {
            let program =
                format!("{HUGE_CONTRACT}source(file(\"huge.jsonl\"), Json) | {pipeline}\n");
            held_once(&dir, &program, &["--threads", threads], expected, line_kib);
        }
    }
}

/// A huge CSV cell is held once: the row's text for a failure record is
/// written again from its cells rather than kept beside them, and the
/// cell's string takes the row's buffer. Quoted or not, read as it is or
/// validated, and as the text a failure record shows.
fn a_huge_csv_cell_costs_about_its_size_once() {
    let dir = Scratch::new("io-huge-cell");
    let size = 96 << 20;
    let line_kib = (size >> 10) as i64;
    for quote in ["", "\""] {
        let mut data = Vec::with_capacity(size + 64 * 1024);
        data.extend_from_slice(b"n,s\n0,a\n");
        data.extend_from_slice(format!("1,{quote}").as_bytes());
        data.resize(data.len() + size, b'x');
        data.extend_from_slice(format!("{quote}\n2,b\n").as_bytes());
        dir.write("huge.csv", &data);
        drop(data);
        let pipelines = [
            (
                "map(r => len(r.s)) | collect()",
                format!("[1, {size}, 1]\n"),
            ),
            ("validate(T) | count()", "3\n".to_string()),
            (
                "validate(T) | errs() | map(e => len(e.input.s)) | collect()",
                format!("[1, {size}]\n"),
            ),
        ];
        for (pipeline, expected) in &pipelines {
            let program = format!("{HUGE_CONTRACT}source(file(\"huge.csv\"), Csv) | {pipeline}\n");
            held_once(&dir, &program, &[], expected, line_kib);
        }
    }
}

/// A line of JSON Lines far longer than the rest, one string most of it,
/// is held once: its string takes the line's buffer rather than a copy
/// of it (tooling.md, "--max-line"). A 96 MiB line costs well under twice
/// its size on the ordinary path.
fn a_huge_line_costs_about_its_size_once() {
    let dir = Scratch::new("io-huge-line");
    let size = 96 << 20;
    let mut data = Vec::with_capacity(size + 64);
    data.extend_from_slice(b"{\"n\": 1, \"s\": \"");
    data.resize(data.len() + size, b'x');
    data.extend_from_slice(b"\", \"m\": [2]}\n{\"n\": 2, \"s\": \"b\", \"m\": []}\n");
    dir.write("huge.jsonl", &data);
    drop(data);
    let line_kib = (size >> 10) as i64;
    held_once(
        &dir,
        "source(file(\"huge.jsonl\"), Json) | map(r => [r.n, len(r.s), r.m])\n",
        &[],
        &format!("[[1, {size}, [2]], [2, 1, []]]\n"),
        line_kib,
    );
}
