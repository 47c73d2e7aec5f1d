//! The REPL with stdin piped: transcripts of every command and behaviour,
//! compared exactly (no prompts, no colour, history off, a fixed width).

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

/// Run `hql repl` over `input`: (stdout, stderr, exit status).
fn repl(input: &str) -> (String, String, i32) {
    repl_bytes(input.as_bytes())
}

/// Run `hql repl` over `input`, which need not be UTF-8.
fn repl_bytes(input: &[u8]) -> (String, String, i32) {
    let out = common::hql_with_input(&["repl"], input);
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code().unwrap_or(-1),
    )
}

/// Run `input`; expect exactly `stdout` and a clean exit.
fn transcript(input: &str, stdout: &str) {
    let (out, err, status) = repl(input);
    assert_eq!(out, stdout, "stderr:\n{err}");
    assert_eq!(err, "", "no diagnostics expected");
    assert_eq!(status, 0);
}

const SIGHTINGS: &str = "examples/structural/sightings.jsonl";

#[test]
fn lets_persist_and_expressions_print() {
    transcript("let x = 2\nx + 3\n", "5\n");
    transcript(
        "let xs = [1, 2, 3]\nfn twice(n: Int) -> Int = n * 2\nxs | map(twice)\n",
        "[2, 4, 6]\n",
    );
}

#[test]
fn underscore_is_the_last_result() {
    transcript("20 + 1\n_ * 2\n_ + 0\n", "21\n42\n42\n");
    transcript("_\n", "null\n");
    // A statement that prints nothing leaves `_` alone.
    transcript("7\nlet y = 1\n_\n", "7\n7\n");
}

#[test]
fn multi_line_entries() {
    // An open bracket, a trailing `|`, a leading `|`.
    transcript("[\n  1,\n  2\n]\n", "[1, 2]\n");
    transcript("[1, 2] |\nmap(n => n * 10)\n", "[10, 20]\n");
    transcript(
        "[1, 2, 3]\n| filter(n => n > 1)\n| map(n => n + 100)\n",
        "[102, 103]\n",
    );
    transcript(
        "type P : Data = {\n  name: String\n}\nP { name: \"a\" }\n",
        "{name: \"a\"}\n",
    );
}

#[test]
fn a_blank_line_submits_an_unfinished_entry() {
    // The unfinished entry reports its error; the next line is an entry.
    let (out, err, status) = repl("1 +\n\n3\n");
    assert_eq!((out.as_str(), status), ("3\n", 1));
    assert!(err.contains("hql::parse"), "{err}");
    assert!(err.contains("╭─[<repl:1>:1:3]"), "{err}");
    // The bracket left open is pointed at.
    let (out, err, status) = repl("[1, 2,\n\n3\n");
    assert_eq!((out.as_str(), status), ("3\n", 1));
    assert!(err.contains("╭─[<repl:1>:1:1]"), "{err}");
    assert!(err.contains("this `[` is never closed"), "{err}");
    // A bracket opened inside braces: the bracket is the innermost.
    let (out, _, status) = repl("{a: [1,\n\n2\n");
    assert_eq!((out.as_str(), status), ("2\n", 1));
}

#[test]
fn a_blank_line_inside_braces_belongs_to_the_entry() {
    transcript(
        "type P : Data = {\n  a: Int\n\n  b: Int\n}\nP { a: 1, b: 2 }\n",
        "{a: 1, b: 2}\n",
    );
    transcript("{\n  a: [1,\n  2],\n\n  b: 3\n}\n", "{a: [1, 2], b: 3}\n");
}

#[test]
fn crlf_line_ends_are_read_as_line_ends() {
    transcript("1 +\r\n2\r\n\r\n[3,\r\n4]\r\n", "3\n[3, 4]\n");
}

#[test]
fn a_line_that_is_not_utf8_spoils_its_entry_only() {
    let (out, err, status) = repl_bytes(b"1\n\"\xff\"\n2\n");
    assert_eq!((out.as_str(), status), ("1\n2\n", 1));
    assert_eq!(
        err,
        "hql::lex\n\n  × line 2 of the input is not valid UTF-8 (from its byte 2); its entry was not run\n  \
         help: the REPL reads UTF-8 text; save the entries as UTF-8\n"
    );
    // In a multi-line entry: that entry is not run, the next one is.
    let (out, err, status) = repl_bytes(b"[1,\n 2, \xc3]\n3\n");
    assert_eq!((out.as_str(), status), ("3\n", 1));
    assert!(err.contains("line 2 of the input"), "{err}");
}

#[test]
fn stdin_holds_the_entries_so_it_is_no_source() {
    // The second line is the next entry, not data for the first.
    let (out, err, status) = repl("source(stdin(), Json) | count()\n{\"a\": 1}\n");
    assert_eq!((out.as_str(), status), ("{a: 1}\n", 1));
    assert!(err.contains("hql::stdin_twice"), "{err}");
    assert!(
        err.contains(
            "standard input holds the REPL's entries, so `stdin()` cannot read data from it"
        ),
        "{err}"
    );
}

#[test]
fn diagnostics_name_the_entry_and_the_line() {
    let (out, err, status) = repl("let a = 1\nlet b = [\n  a,\n  nope\n]\na\n");
    assert_eq!(out, "1\n");
    assert_eq!(status, 1);
    assert!(err.contains("hql::unknown_name"), "{err}");
    // The second entry, its third line, fourth column.
    assert!(err.contains("╭─[<repl:2>:3:3]"), "{err}");
    assert!(err.contains(" 3 │   nope"), "{err}");
}

#[test]
fn an_error_does_not_end_the_session() {
    let input = "let kept = 10\nkept / 0\nlet lost = nope\nkept + 1\nlost\n1 + * 2\n\"finished\"\n";
    let (out, err, status) = repl(input);
    assert_eq!(out, "11\n\"finished\"\n", "{err}");
    assert_eq!(status, 1, "an entry failed");
    assert!(err.contains("unknown name `nope`"), "{err}");
    assert!(err.contains("unknown name `lost`"), "{err}");
    // A runtime error in one entry, a static one in the next, a parse
    // error in a third: each reported, each numbered.
    assert!(err.contains("<repl:2>"), "{err}");
    assert!(err.contains("<repl:3>"), "{err}");
    assert!(err.contains("<repl:5>"), "{err}");
    assert!(err.contains("<repl:6>"), "{err}");
}

#[test]
fn the_exit_status_is_zero_when_nothing_failed() {
    assert_eq!(repl("1\n:vars\n").2, 0);
    assert_eq!(repl("check 1 == 2\n").2, 1);
    assert_eq!(repl(":nonsense\n").2, 1);
}

#[test]
fn redefining_a_type_or_a_function() {
    transcript(
        "type T : Data = {\n  a: Int\n}\nT { a: 1 }\ntype T : Data = {\n  b: String\n}\nT { b: \"x\" }\n:contract T\n",
        "{a: 1}\n{b: \"x\"}\ntype T: Data (open)\n  fields:\n    b: String\n",
    );
    transcript(
        "fn f(n: Int) -> Int = n + 1\nf(1)\nfn f(n: Int) -> Int = n * 10\nf(1)\n",
        "2\n10\n",
    );
}

#[test]
fn help() {
    let (out, _, status) = repl(":help\n");
    assert_eq!(status, 0);
    let commands = [
        "help", "type", "load", "reset", "vars", "contract", "export", "infer", "describe", "hist",
        "bar", "set", "quit",
    ];
    for command in commands {
        assert!(out.contains(&format!("  :{command} ")), "{out}");
    }
    assert!(out.contains("`_` is the last result"), "{out}");
    transcript(
        ":help type\n",
        ":type EXPR\n  the static type of an expression, without running it\n",
    );
    transcript(
        ":help :quit\n",
        ":quit \n  leave the REPL (Ctrl-D does too)\n",
    );
    let (out, err, status) = repl(":help nothing\n");
    assert_eq!((out.as_str(), status), ("", 1));
    assert_eq!(err, "no command `:nothing`; `:help` lists the commands\n");
}

#[test]
fn type_shows_the_static_type_without_running() {
    transcript(
        &format!(
            "type Sighting : Data = {{\n  species: String\n}}\n:type 1 + 2\n:type [1.5]\n:type source(file(\"{SIGHTINGS}\"), Json) | validate(Sighting) | oks()\n"
        ),
        "Int\nList[Float]\nStream[Sighting]\n",
    );
    // Nothing runs: a missing file is not read.
    transcript(
        ":type source(file(\"no/such/file.jsonl\"), Json) | count()\n",
        "Int\n",
    );
    let (out, err, status) = repl(":type nope\n:type\n");
    assert_eq!((out.as_str(), status), ("", 1));
    assert!(err.contains("unknown name `nope`"), "{err}");
    assert!(err.ends_with("usage: :type EXPR\n"), "{err}");
}

#[test]
fn load_runs_a_file_into_the_session() {
    transcript(
        ":load examples/structural/sightings.hql\n:contract Sighting\n",
        "[\"barn owl at dusk\", \"wren at morning\", \"barn owl at night\", \"kingfisher at morning\"]\n\
         type Sighting: DataContract (open)\n  fields:\n    species: String\n    seen: String  (read by Sighting.seen == \"morning\" or seen == \"dusk\" or seen == \"night\")\n  rules:\n    require Sighting.seen == \"morning\" or seen == \"dusk\" or seen == \"night\": seen == \"morning\" or seen == \"dusk\" or seen == \"night\"\n",
    );
    // Its declarations stay.
    transcript(
        ":load examples/structural/sightings.hql\nSighting { species: \"owl\", seen: \"dusk\" }\n",
        "[\"barn owl at dusk\", \"wren at morning\", \"barn owl at night\", \"kingfisher at morning\"]\n{species: \"owl\", seen: \"dusk\"}\n",
    );
    let (out, err, status) = repl(":load no/such.hql\n:load\n1\n");
    assert_eq!((out.as_str(), status), ("1\n", 1));
    assert!(err.starts_with("cannot read no/such.hql: "), "{err}");
    assert!(err.ends_with("usage: :load FILE\n"), "{err}");
}

#[test]
fn reset_forgets_everything() {
    let (out, err, status) = repl("let x = 1\ntype T : Data = {\n a: Int\n}\n:reset\n:vars\nx\n");
    assert_eq!(out, "the session is empty again\nno names bound yet\n");
    assert_eq!(status, 1);
    assert!(err.contains("unknown name `x`"), "{err}");
    // The standard library stays.
    transcript(
        ":reset\nis_non_empty(\"a\")\n",
        "the session is empty again\ntrue\n",
    );
}

#[test]
fn vars_lists_the_bindings() {
    transcript(":vars\n", "no names bound yet\n");
    transcript(
        &format!(
            "let n = 3\nlet words = [\"a\", \"b\"]\nfn inc(x: Int) -> Int = x + 1\nlet raw = source(file(\"{SIGHTINGS}\"), Json)\n:vars\n"
        ),
        "n = 3\nwords = [\"a\", \"b\"]\ninc = <fn inc>\nraw = <stream>\n",
    );
}

#[test]
fn contract_summarises_a_type() {
    transcript(
        "type Reading : DataContract = {\n  sensor: String\n  low: Int\n  high: Int\n  require ordered: low <= high\n}\n:contract Reading\n",
        "type Reading: DataContract (open)\n  fields:\n    sensor: String\n    low: Int  (read by Reading.ordered)\n    high: Int  (read by Reading.ordered)\n  rules:\n    require Reading.ordered: low <= high\n",
    );
    let (out, err, status) = repl(":contract Nope\n:contract\n");
    assert_eq!((out.as_str(), status), ("", 1));
    assert!(err.starts_with("no type named `Nope`"), "{err}");
    assert!(err.ends_with("usage: :contract TYPE\n"), "{err}");
}

#[test]
fn set_format_json() {
    transcript(
        "{a: 1, b: [true, null]}\n:set format json\n{a: 1, b: [true, null]}\n:set format hql\n{a: 1}\n",
        "{a: 1, b: [true, null]}\n{\"a\":1,\"b\":[true,null]}\n{a: 1}\n",
    );
    let (_, err, status) = repl(":set format xml\n");
    assert_eq!(status, 1);
    assert_eq!(err, "usage: :set format hql|json\n");
}

#[test]
fn quit_ends_the_session() {
    transcript("1\n:quit\n2\n", "1\n");
    transcript("1\n  :q\n2\n", "1\n");
    // The status still says whether an entry failed.
    assert_eq!(repl("nope\n:quit\n").2, 1);
}

#[test]
fn unknown_commands_are_reported() {
    let (out, err, status) = repl(":frobnicate now\n1\n");
    assert_eq!((out.as_str(), status), ("1\n", 1));
    assert_eq!(
        err,
        "unknown command `:frobnicate`; `:help` lists the commands\n"
    );
}

#[test]
fn piped_output_is_what_hql_run_prints() {
    // No tables, no prompts, no escape codes: a list of records prints on
    // one line, as `hql run` would.
    let input = format!("source(file(\"{SIGHTINGS}\"), Json) | take(2)\n");
    let (out, err, status) = repl(&input);
    assert_eq!(status, 0, "{err}");
    assert_eq!(
        out,
        "[{species: \"barn owl\", seen: \"dusk\", site: \"north meadow\"}, {species: \"wren\", seen: \"morning\", site: \"hedge\"}]\n"
    );
    assert!(!out.contains('\x1b') && !err.contains('\x1b'));
    let run = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", "-"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(input.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(String::from_utf8(run.stdout).unwrap(), out);
}

#[test]
fn a_long_stream_is_printed_whole_when_piped() {
    let input = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25] | map(n => {n: n})\n";
    let (out, _, status) = repl(input);
    assert_eq!(status, 0);
    assert!(out.starts_with("[{n: 1}, {n: 2}, "), "{out}");
    assert!(out.ends_with("{n: 25}]\n"), "{out}");
}

/// Each entry's targets commit when the entry ends, so the next entry
/// reads what it wrote; an entry that fails leaves them as they were.
#[test]
fn targets_commit_entry_by_entry() {
    let file = std::env::temp_dir().join(format!("hql-repl-write-{}.jsonl", std::process::id()));
    let path = file.to_string_lossy();
    let input = format!(
        "[{{a: 1}}, {{a: 2}}] | write(file({path:?}))\n\
         source(file({path:?}), Json) | count()\n\
         let n = ([{{a: 9}}] | write(file({path:?}))) / 0\n\
         source(file({path:?}), Json) | count()\n"
    );
    let (out, err, status) = repl(&input);
    let _ = std::fs::remove_file(&file);
    assert_eq!(out, "2\n2\n2\n", "{err}");
    assert!(err.contains("hql::division_by_zero"), "{err}");
    assert_eq!(status, 1);
}

#[test]
fn a_type_defined_in_terms_of_itself_is_an_error_and_the_session_goes_on() {
    let (out, err, status) = repl("type T = T\ntype A = List[A]\n1 + 1\n");
    assert_eq!(out, "2\n", "stderr:\n{err}");
    assert_eq!(err.matches("hql::type_cycle").count(), 2, "{err}");
    assert!(err.contains("T → T") && err.contains("A → A"), "{err}");
    assert_eq!(status, 1, "an entry failed");
}

// :infer (tooling.md, `hql infer`)

#[test]
fn repl_infers_from_a_stream_in_hand() {
    let (out, err, status) =
        repl("let rows = source(file(\"examples/streams/readings.jsonl\"), Json)\n:infer rows\n");
    assert_eq!(
        out,
        "type Readings : DataContract = {\n    sensor: String\n    celsius: Float | String\n}\n"
    );
    assert_eq!(err, "skipped 2 lines that do not decode\n");
    assert_eq!(status, 0);
}

#[test]
fn repl_infers_from_a_list_and_reads_csv_cells() {
    let (out, err, status) = repl(
        ":infer [{a: 1}, {a: 2.5, b: [\"x\"]}]\n:infer source(file(\"examples/io/sqlite/data/orders.csv\"), Csv)\n",
    );
    assert_eq!(
        out,
        "type Record : DataContract = {\n    a: Float\n    b?: List[String]\n}\n\
         type Orders : DataContract = {\n    order_id: Int\n    customer?: String\n    amount: Float\n    paid: Bool\n}\n"
    );
    assert_eq!((err.as_str(), status), ("", 0));
}

#[test]
fn repl_infer_needs_a_stream_or_a_list() {
    let (out, err, status) = repl(":infer\n:infer 5\n:help infer\n");
    assert_eq!(
        out,
        ":infer EXPR\n  a contract every record of a stream or list satisfies\n"
    );
    assert!(err.starts_with("usage: :infer EXPR\n"), "{err}");
    assert!(
        err.contains("expected a stream or a list, found an Int"),
        "{err}"
    );
    assert_eq!(status, 1);
}

// :describe, :hist, :bar (reference §18)

#[test]
fn describe_profiles_a_field_a_row() {
    transcript(
        ":describe [{name: \"wren\", n: 2}, {name: \"owl\", n: null, at: {x: 1.5}}, 7]\n",
        "2 records, 4 fields; skipped 1 value that is not a record\n\
         # │ field │ present  │ absent │ nulls │ types    │ distinct │ min   │ max    │ median /…  │ examples\n\
         ─ │ ───── │ ──────── │ ────── │ ───── │ ──────── │ ──────── │ ───── │ ────── │ ────────── │ ────────\n\
         0 │ name  │ 2 (100%) │ 0      │ 0     │ String   │ 2        │ \"owl\" │ \"wren\" │            │ \"wren\",…\n\
         1 │ n     │ 2 (100%) │ 0      │ 1     │ Int|Null │ 1        │ 2     │ 2      │ ≈ 2 / 2    │ 2\n\
         2 │ at    │ 1 (50%)  │ 1      │ 0     │ Record   │ 1        │       │        │            │ {x: 1.5}\n\
         3 │ at.x  │ 1 (50%)  │ 1      │ 0     │ Float    │ 1        │ 1.5   │ 1.5    │ ≈ 1.5 / 1… │ 1.5\n",
    );
}

#[test]
fn describe_reads_a_stream_and_says_what_it_skipped() {
    let (out, err, status) =
        repl("let orders = source(file(\"docs/data/orders.jsonl\"), Json)\n:describe orders\n");
    assert_eq!((err.as_str(), status), ("", 0));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "7 records, 10 fields; skipped 1 line that does not decode"
    );
    assert!(
        lines[9].starts_with("6 │ country  │ 6 (85.7%) │ 1      │ 0     │ String "),
        "{out}"
    );
    // Laid out for 100 columns when piped.
    assert!(lines.iter().all(|l| l.chars().count() <= 100), "{out}");
    let (_, err, status) = repl(":describe\n:describe 5\n");
    assert!(err.starts_with("usage: :describe EXPR\n"), "{err}");
    assert!(
        err.contains("expected a stream or a list, found an Int"),
        "{err}"
    );
    assert_eq!(status, 1);
}

#[test]
fn hist_draws_nice_bins_in_blocks() {
    transcript(
        ":hist [1, 2, 2, 3, 3, 3, 10, null]\n",
        " [0, 2) │████████████ 1\n [2, 4) │████████████████████████████████████████████████████████████ 5\n \
         [4, 6) │ 0\n [6, 8) │ 0\n[8, 10] │████████████ 1\n\
         7 values, min 1, max 10, 5 bins; 1 item that is not a number left out\n",
    );
    let (out, err, status) = repl(":hist [\"a\"]\n");
    assert_eq!((out.as_str(), status), ("", 1));
    assert!(err.contains("there are no numbers to draw"), "{err}");
}

#[test]
fn bar_draws_a_count_by() {
    transcript(
        ":bar [\"wren\", \"owl\", \"wren\"] | count_by(b => b)\n",
        "wren │████████████████████████████████████████████████████████████ 2\n \
         owl │██████████████████████████████ 1\n",
    );
    let (out, err, status) = repl(":bar [1]\n");
    assert_eq!((out.as_str(), status), ("", 1));
    assert!(
        err.contains("expected records of a key and a number"),
        "{err}"
    );
}

#[test]
fn a_source_without_a_format_says_which_to_add() {
    let (out, err, status) = repl("source(file(\"docs/data/orders.jsonl\"))\n");
    assert_eq!((out.as_str(), status), ("", 1));
    assert!(err.contains("hql::format"), "{err}");
    assert!(
        err.contains("help: add the format: `, Json`, `, Csv` or `, Parquet`"),
        "{err}"
    );
}

/// `:save FILE` writes the session's declarations, functions and `let`s in
/// canonical form, in the order entered (a function declared again as
/// declared last), a program `hql run` accepts; an existing file is
/// replaced only by `:save!`.
#[test]
fn save_writes_the_session_as_a_program_and_refuses_to_overwrite() {
    let dir = common::Scratch::new("repl-save");
    let path = dir.path.join("session.hql");
    let file = path.display().to_string();
    let input = format!(
        "type P : Data = {{ x: Int }}\nlet a   =  1\nfn f(n: Int) -> Int = n + a\n1 + 1\nlet b = f(2)\nfn f(n: Int) -> Int = n * 10\n:save {file}\n:save {file}\n:save! {file}\n"
    );
    let (out, err, status) = repl(&input);
    assert_eq!(err, format!("{file} exists; `:save! {file}` replaces it\n"));
    assert_eq!(status, 1);
    assert_eq!(
        out,
        format!("2\nsaved to {file} (6 lines)\nsaved to {file} (6 lines)\n")
    );
    let saved = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        saved,
        "type P : Data = {\n    x: Int\n}\n\nlet a = 1\nlet b = f(2)\n\nfn f(n: Int) -> Int = n * 10\n"
    );
    let run = dir.hql(&["run", "session.hql"]);
    assert_eq!((run.status, run.err.as_str()), (0, ""));
}

/// An entry's line longer than `--max-line` ends the session, saying so.
#[test]
fn an_entry_line_longer_than_max_line_ends_the_session() {
    let long = format!("let x = 1\nx + 1\nlet s = \"{}\"\nx\n", "y".repeat(3000));
    let out = common::hql_with_input(&["repl", "--max-line", "2K"], long.as_bytes());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "hql: line 3 of the entries is longer than the longest line allowed (2048 bytes)\n"
    );
    assert_eq!(out.status.code(), Some(1));
}
