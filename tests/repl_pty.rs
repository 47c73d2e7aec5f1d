//! The interactive REPL on a pseudo-terminal: multi-line input, Tab
//! completion, Ctrl-R, history kept across sessions, Ctrl-C and Ctrl-D.
//! Where no pseudo-terminal can be had, each test says so and passes.

#![cfg(unix)]

use std::path::PathBuf;
use std::process::Command;

use rexpect::session::{spawn_command, PtySession};

const TIMEOUT_MS: u64 = 10_000;
const PROMPT: &str = "hql> ";

/// Start `hql repl` on a pseudo-terminal; `history` is HQL_HISTORY.
fn start(history: &str) -> Option<PtySession> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hql"));
    cmd.env("HQL_HISTORY", history);
    spawn(cmd)
}

fn spawn(mut cmd: Command) -> Option<PtySession> {
    cmd.arg("repl")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "80")
        .env("TERM", "xterm")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    match spawn_command(cmd, Some(TIMEOUT_MS)) {
        Ok(mut p) => {
            p.exp_string(PROMPT).expect("the first prompt");
            Some(p)
        }
        Err(e) => {
            eprintln!("skipped: no pseudo-terminal ({e})");
            None
        }
    }
}

/// A fresh file name in the temporary directory.
fn temp_file(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("hql-pty-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// Type `keys` (sent at once: the writer buffers up to a newline).
fn keys(p: &mut PtySession, keys: &str) {
    p.send(keys).unwrap();
    p.flush().unwrap();
}

/// Type `keys`, press Enter, and wait for `output` and the next prompt.
fn enter(p: &mut PtySession, keys: &str, output: &str) {
    self::keys(p, &format!("{keys}\r"));
    p.exp_string(output)
        .unwrap_or_else(|e| panic!("after {keys:?}, expected {output:?}: {e}"));
    p.exp_string(PROMPT).unwrap();
}

fn quit(mut p: PtySession) {
    p.send_control('d').unwrap();
    p.exp_eof().expect("Ctrl-D on an empty line ends the REPL");
}

#[test]
fn multi_line_entries_continue_until_complete() {
    let Some(mut p) = start("") else { return };
    // An open bracket continues the entry; the closing line submits it.
    keys(&mut p, "[10,\r");
    keys(&mut p, "20 + 3]\r");
    p.exp_string("[10, 23]").unwrap();
    p.exp_string(PROMPT).unwrap();
    // A trailing `|` continues too.
    keys(&mut p, "[5, 6] |\r");
    keys(&mut p, "map(x => x * 100)\r");
    p.exp_string("[500, 600]").unwrap();
    p.exp_string(PROMPT).unwrap();
    // A blank line forces an unfinished entry to be submitted.
    keys(&mut p, "let broken = 1 +\r");
    keys(&mut p, "\r");
    p.exp_string("<repl:3>").unwrap();
    p.exp_string(PROMPT).unwrap();
    enter(&mut p, "[10, 23] == [10, 23]", "true");
    // Inside braces a blank line belongs to the entry; the closing brace
    // submits it.
    keys(&mut p, "type P : Data = {\r");
    keys(&mut p, "  a: Int\r");
    keys(&mut p, "\r");
    keys(&mut p, "  b: Int\r");
    keys(&mut p, "}\r");
    p.exp_string(PROMPT).unwrap();
    enter(&mut p, "P { a: 1, b: 2 }", "{a: 1, b: 2}");
    // A bracket opened inside braces is the innermost: a blank line submits.
    keys(&mut p, "{a: [1,\r");
    keys(&mut p, "\r");
    p.exp_string("hql::parse").unwrap();
    p.exp_string(PROMPT).unwrap();
    quit(p);
}

#[test]
fn tab_completes_builtins_and_fields() {
    let Some(mut p) = start("") else { return };
    enter(&mut p, "uppe\t(\"wren\")", "\"WREN\"");
    enter(
        &mut p,
        "let bird = { species: \"kingfisher\", seen: \"dusk\" }",
        "",
    );
    enter(&mut p, "bird.spec\t", "\"kingfisher\"");
    quit(p);
}

#[test]
fn ctrl_r_searches_history() {
    let Some(mut p) = start("") else { return };
    enter(&mut p, "let zebra = 40", "");
    enter(&mut p, "zebra + 2", "42");
    enter(&mut p, "zebra * 0 + 1", "1");
    p.send_control('r').unwrap();
    p.exp_string("reverse-i-search").unwrap();
    keys(&mut p, "bra +");
    p.exp_string("zebra + 2").unwrap();
    keys(&mut p, "\r");
    p.exp_string("42").unwrap();
    p.exp_string(PROMPT).unwrap();
    quit(p);
}

#[test]
fn history_is_kept_across_sessions() {
    let path = temp_file("kept");
    let history = path.to_str().unwrap();
    let Some(mut p) = start(history) else { return };
    enter(&mut p, "6 * 7", "42");
    quit(p);
    let saved = std::fs::read_to_string(&path).expect("the history file");
    assert!(saved.contains("6 * 7"), "{saved}");

    let Some(mut p) = start(history) else { return };
    // Up recalls the entry of the first session.
    keys(&mut p, "\x1b[A");
    p.exp_string("6 * 7").unwrap();
    keys(&mut p, "\r");
    p.exp_string("42").unwrap();
    p.exp_string(PROMPT).unwrap();
    quit(p);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn history_goes_to_the_state_directory_by_default() {
    let state = temp_file("state");
    let _ = std::fs::remove_dir_all(&state);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hql"));
    cmd.env_remove("HQL_HISTORY").env("XDG_STATE_HOME", &state);
    let Some(mut p) = spawn(cmd) else { return };
    enter(
        &mut p,
        "\"kept in the state directory\"",
        "\"kept in the state directory\"",
    );
    quit(p);
    let saved = std::fs::read_to_string(state.join("hql/history")).expect("the history file");
    assert!(saved.contains("kept in the state directory"), "{saved}");
    let _ = std::fs::remove_dir_all(&state);
}

#[test]
fn ctrl_c_cancels_an_entry_or_an_evaluation() {
    let Some(mut p) = start("") else { return };
    // At the prompt: the half-typed entry is dropped.
    keys(&mut p, "let lost = 1 +");
    p.exp_string("1 +").unwrap();
    p.send_control('c').unwrap();
    p.exp_string(PROMPT).unwrap();
    enter(&mut p, "lost?", "unknown name `lost`");
    // While running: a long evaluation stops, the session goes on. The
    // file says when it has started, so that Ctrl-C comes while it runs
    // (and not while the line editor still has the terminal).
    let program = temp_file("long.hql");
    std::fs::write(
        &program,
        "fn fib(n: Int) -> Int = if n < 2 then n else fib(n - 1) + fib(n - 2)\n\"started\"\nfib(60)\n",
    )
    .unwrap();
    enter(&mut p, "let kept = 99", "");
    keys(&mut p, &format!(":load {}\r", program.display()));
    p.exp_string("\"started\"").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    p.send_control('c').unwrap();
    p.exp_string("interrupted").unwrap();
    p.exp_string(PROMPT).unwrap();
    let _ = std::fs::remove_file(&program);
    enter(&mut p, "kept + fib(10)", "154");
    quit(p);
}

#[test]
fn ctrl_d_on_an_empty_line_exits() {
    let Some(mut p) = start("") else { return };
    enter(&mut p, "1 + 1", "2");
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
    let status = p.process_mut().wait().unwrap();
    assert!(
        matches!(status, rexpect::process::WaitStatus::Exited(_, 0)),
        "{status:?}"
    );
}

/// Start `hql repl` on a pseudo-terminal that says it is `cols` wide
/// (`$COLUMNS` says 80: the terminal's own answer must win).
fn start_sized(cols: usize) -> Option<PtySession> {
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        &format!("stty cols {cols} rows 40 && exec \"$HQL_BIN\" repl"),
    ])
    .env("HQL_BIN", env!("CARGO_BIN_EXE_hql"))
    .env("HQL_HISTORY", "");
    spawn(cmd)
}

/// Tell the pseudo-terminal it is now `cols` wide (as a terminal window
/// does when resized).
fn resize(p: &mut PtySession, cols: u16) {
    use std::os::fd::AsRawFd;
    let master = p
        .process()
        .get_file_handle()
        .expect("the terminal's handle");
    let size = libc::winsize {
        ws_row: 40,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads one `winsize` from the pointer given.
    let done = unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &size) };
    assert_eq!(done, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
}

/// Three columns of 40-character cells: a table 130 columns wide.
const WIDE_ROWS: &str = "[1, 2] | map(i => {first: fmt(\"{}---------------------------------------\", i), second: \"ssssssssssssssssssssssssssssssssssssssss\", third: \"tttttttttttttttttttttttttttttttttttttttt\"})";

/// What the terminal showed, read back as UTF-8 (the pseudo-terminal's
/// reader hands over one `char` a byte).
fn utf8(seen: &str) -> String {
    let bytes: Vec<u8> = seen.chars().map(|c| c as u32 as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn tables_use_the_terminals_width_and_follow_resizes() {
    let Some(mut p) = start_sized(160) else {
        return;
    };
    keys(&mut p, &format!("{WIDE_ROWS}\r"));
    let (_, header) = p.exp_regex("# [^\\n]* first[^\\n]*").unwrap();
    let header = utf8(&header);
    assert!(
        header.contains("│ second") && header.contains("│ third"),
        "{header}"
    );
    let (_, row) = p.exp_regex("1 [^\\n]* 2-[^\\n]*").unwrap();
    let row = utf8(&row);
    assert!(
        row.trim_end().ends_with(&"t".repeat(40)),
        "not shortened: {row:?}"
    );
    p.exp_string(PROMPT).unwrap();

    // The terminal narrows: the same rows are shortened to fit, never wrapped.
    resize(&mut p, 60);
    keys(&mut p, &format!("{WIDE_ROWS}\r"));
    let (_, row) = p.exp_regex("1 [^\\n]* 2-[^\\n]*").unwrap();
    let row = utf8(&row);
    let row = row.trim_end();
    assert!(row.chars().count() <= 60, "{row:?}");
    assert!(row.ends_with('…'), "{row:?}");
    p.exp_string(PROMPT).unwrap();
    quit(p);
}

#[test]
fn a_stream_is_peeked_without_reading_it_to_the_end() {
    // A FIFO whose writer stays open: reading it to the end would never
    // finish, so the rows can only come back if the peek stops early.
    let fifo = temp_file("peek.jsonl");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: mkfifo is not available");
        return;
    }
    let writer_path = fifo.clone();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let mut w = std::fs::OpenOptions::new()
            .write(true)
            .open(&writer_path)
            .unwrap();
        for i in 0..30 {
            writeln!(w, "{{\"n\": {i}, \"bird\": \"wren\"}}").unwrap();
        }
        w.flush().unwrap();
        // Hold the pipe open until the test is over.
        let _ = done_rx.recv_timeout(std::time::Duration::from_secs(30));
    });
    let Some(mut p) = start("") else {
        drop(done_tx);
        let _ = std::fs::OpenOptions::new().read(true).open(&fifo);
        let _ = writer.join();
        return;
    };
    enter(
        &mut p,
        &format!(
            "let ev = source(file({:?}), Json)",
            fifo.display().to_string()
        ),
        "",
    );
    keys(&mut p, "ev\r");
    p.exp_regex("\\n19 [^\\n]* 19 [^\\n]* wren").unwrap();
    p.exp_string(" more rows follow").unwrap();
    p.exp_string(PROMPT).unwrap();
    drop(done_tx);
    let _ = writer.join();
    let _ = std::fs::remove_file(&fifo);
    quit(p);
}

#[test]
fn a_wide_report_goes_over_several_lines_with_its_rules_as_a_table() {
    let Some(mut p) = start_sized(60) else {
        return;
    };
    keys(
        &mut p,
        "type Reading : TypeContract = { low: Int, high: Int, require low <= high }\r",
    );
    p.exp_string(PROMPT).unwrap();
    keys(
        &mut p,
        "[{low: 1, high: 2}, {low: 3, high: 1}, {low: \"x\", high: 1}] | validate(Reading) | report()\r",
    );
    p.exp_string("  total: 3,").unwrap();
    p.exp_string("  by_rule:").unwrap();
    let (_, header) = p.exp_regex("# [^\\n]* rule [^\\n]*").unwrap();
    let header = utf8(&header);
    assert!(
        header.contains("│ kind") && header.contains("│ count"),
        "{header}"
    );
    p.exp_string(PROMPT).unwrap();
    quit(p);
}

#[test]
fn a_pasted_block_is_one_entry_blank_lines_and_all() {
    // The README's own example: a contract with a blank line between its
    // fields and its rules, then a pipeline over several lines.
    let Some(mut p) = start("") else { return };
    let block = "type Reading : TypeContract = {\n    sensor: String\n    low: Int\n    high: Int\n    unit?: String\n\n    require ordered: low <= high else \"low must not exceed high\"\n    require unit? != \"F\"\n}\n\nsource(file(\"examples/tour/readings.jsonl\"), Json)\n| validate(Reading)\n| errs()\n| map(e => e.origin.line)";
    // A terminal sends a paste between these two markers, Enter as CR.
    keys(
        &mut p,
        &format!("\x1b[200~{}\x1b[201~", block.replace('\n', "\r")),
    );
    keys(&mut p, "\r");
    p.exp_string("[2, 3, 4, 5]").unwrap();
    p.exp_string(PROMPT).unwrap();
    enter(&mut p, ":contract Reading", "require Reading.ordered");
    quit(p);
}

#[test]
fn tab_completes_a_file_name_and_the_fields_of_data_in_hand() {
    let Some(mut p) = start("") else { return };
    // The file's name closes its string and `file(`'s bracket.
    keys(&mut p, "let orders = source(file(\"docs/data/orde\t");
    p.exp_string("orders.jsonl\")").unwrap();
    enter(&mut p, ", Json)", "");
    enter(&mut p, "orders | count()", "8");
    // Data read as Json has no static fields: the value in hand has.
    enter(&mut p, "let one = orders | first()", "");
    enter(&mut p, "one.cust\t", "\"ada@example.org\"");
    // Of a stream, the first record's fields, also inside a lambda.
    enter(
        &mut p,
        "orders | take(2) | map(o => o.plac\t)",
        "[\"2024-03-01\", \"2024-03-02\"]",
    );
    quit(p);
}
