//! Targets on real files (language.md §6.1; tooling.md "Sources, targets
//! and the schema boundary"): `write` and `route`, their formats, their
//! atomicity (commit when the run ends, abandon on a runtime error, an
//! `unwrap()` stop or a signal; a `kill -9` temporary cleaned up by the next
//! write) and the parameters `param` / `env` that name files.

mod common;
use common::*;

use std::io::Write;
use std::time::{Duration, Instant};

/// Run `program` in `scratch`; it must succeed with nothing on stderr.
#[track_caller]
fn ok_run(scratch: &Scratch, program: &str, args: &[&str]) -> String {
    let r = scratch.run(program, args);
    assert_eq!(
        r.status, 0,
        "expected status 0\nprogram:\n{program}\nstdout:\n{}\nstderr:\n{}",
        r.out, r.err
    );
    assert!(r.err.is_empty(), "expected empty stderr, got:\n{}", r.err);
    r.out
}

/// Run `program`; it must stop with a runtime error (exit 1) naming `code`.
#[track_caller]
fn failing_run(scratch: &Scratch, program: &str, code: &str) -> Run {
    let r = scratch.run(program, &[]);
    assert_eq!(
        r.status, 1,
        "expected a runtime error (exit 1)\nprogram:\n{program}\nstdout:\n{}\nstderr:\n{}",
        r.out, r.err
    );
    assert!(r.err.contains(code), "expected {code} in:\n{}", r.err);
    r
}

/// Run `program`; it must be rejected statically: exit 2, nothing printed.
#[track_caller]
fn static_run(scratch: &Scratch, program: &str, code: &str) -> Run {
    let r = scratch.run(program, &[]);
    assert_eq!(
        r.status, 2,
        "expected a static error (exit 2)\nprogram:\n{program}\nstdout:\n{}\nstderr:\n{}",
        r.out, r.err
    );
    assert!(r.out.is_empty(), "nothing may run: {}", r.out);
    assert!(r.err.contains(code), "expected {code} in:\n{}", r.err);
    r
}

const ORDERS: &str = "{\"id\":1,\"name\":\"a\",\"tags\":[1,2]}\n\
                      {\"id\":2,\"name\":\"b\",\"tags\":{\"k\":1}}\n\
                      {\"id\":\"bad\"}\n";

const ORDER: &str = "type T : DataContract = { id: Int, name: String }\n";

// ------------------------------------------------------------ write

#[test]
fn write_jsonl_writes_json_lines_and_returns_the_count() {
    let s = Scratch::new("t-jsonl");
    s.write("in.jsonl", ORDERS);
    s.write(
        "num.jsonl",
        "{\"p\":1.50,\"big\":12345678901234567890123}\n",
    );
    let out = ok_run(
        &s,
        "source(file(\"in.jsonl\"), Json) | write(file(\"out.jsonl\"))\n\
         source(file(\"num.jsonl\"), Json) | write(file(\"num-out.jsonl\"))\n\
         [{a: 1, b: \"x\"}, {a: [true, null]}] | write(file(\"built.jsonl\"))\n",
        &[],
    );
    assert_eq!(out, "3\n1\n2\n");
    assert_eq!(s.read("out.jsonl"), ORDERS);
    // Numbers read from JSON are written back exactly as they came.
    assert_eq!(
        s.read("num-out.jsonl"),
        "{\"p\":1.50,\"big\":12345678901234567890123}\n"
    );
    assert_eq!(
        s.read("built.jsonl"),
        "{\"a\":1,\"b\":\"x\"}\n{\"a\":[true,null]}\n"
    );
    assert!(s.temporaries().is_empty(), "{:?}", s.files());
}

#[test]
fn write_json_writes_one_array_also_of_an_empty_stream() {
    let s = Scratch::new("t-json");
    s.write("in.jsonl", ORDERS);
    let out = ok_run(
        &s,
        "source(file(\"in.jsonl\"), Json) | write(file(\"out.json\"))\n\
         [] | write(file(\"empty.json\"))\n\
         source(file(\"in.jsonl\"), Json) | filter(r => false) | write(file(\"none.json\"))\n",
        &[],
    );
    assert_eq!(out, "3\n0\n0\n");
    assert_eq!(
        s.read("out.json"),
        "[\n{\"id\":1,\"name\":\"a\",\"tags\":[1,2]},\n\
         {\"id\":2,\"name\":\"b\",\"tags\":{\"k\":1}},\n\
         {\"id\":\"bad\"}\n]\n"
    );
    assert_eq!(s.read("empty.json"), "[]\n");
    assert_eq!(s.read("none.json"), "[]\n");
    // The array reads back as the same records.
    let back = ok_run(&s, "source(file(\"out.json\"), Json) | count()\n", &[]);
    assert_eq!(back, "3\n");
}

#[test]
fn csv_header_is_the_contracts_fields_then_the_first_records_extras() {
    let s = Scratch::new("t-csv-contract");
    s.write(
        "in.jsonl",
        "{\"x\":1,\"name\":\"a\",\"id\":1}\n{\"name\":\"b\",\"id\":2,\"note\":\"n\"}\n{\"id\":\"bad\"}\n",
    );
    let out = ok_run(
        &s,
        "type T : DataContract = { id: Int, name: String, note?: String }\n\
         source(file(\"in.jsonl\"), Json) | validate(T) | oks() | write(file(\"out.csv\"))\n",
        &[],
    );
    assert_eq!(out, "2\n");
    assert_eq!(s.read("out.csv"), "id,name,note,x\n1,a,,1\n2,b,n,\n");
}

#[test]
fn csv_header_of_an_empty_validated_source_is_the_contracts_fields() {
    let s = Scratch::new("t-csv-empty");
    s.write("in.jsonl", "{\"id\":\"bad\"}\n");
    let out = ok_run(
        &s,
        &format!("{ORDER}source(file(\"in.jsonl\"), Json) | validate(T) | oks() | write(file(\"out.csv\"))\n"),
        &[],
    );
    assert_eq!(out, "0\n");
    assert_eq!(s.read("out.csv"), "id,name\n");
}

#[test]
fn csv_header_follows_the_contract_after_filter_and_for_lists() {
    let s = Scratch::new("t-csv-contract-plan");
    s.write("in.jsonl", "{\"x\":1,\"name\":\"a\",\"id\":1}\n");
    let out = ok_run(
        &s,
        "type T : DataContract = { id: Int, name: String, note?: String }\n\
         source(file(\"in.jsonl\"), Json) | validate(T) | oks() | filter(r => r.id > 0) | write(file(\"filtered.csv\"))\n\
         [{x: 1, name: \"a\", id: 1}] | validate(T) | oks() | write(file(\"list.csv\"))\n",
        &[],
    );
    assert_eq!(out, "1\n1\n");
    assert_eq!(s.read("filtered.csv"), "id,name,note,x\n1,a,,1\n");
    assert_eq!(s.read("list.csv"), "id,name,note,x\n1,a,,1\n");
}

#[test]
fn csv_header_without_a_contract_is_the_first_records_fields() {
    let s = Scratch::new("t-csv-plain");
    let out = ok_run(
        &s,
        "[{b: 1, a: 1.5, c: true, d: \"x,y\"}, {a: 2, b: null, d: \"say \\\"hi\\\"\"}] | write(file(\"out.csv\"))\n",
        &[],
    );
    assert_eq!(out, "2\n");
    assert_eq!(
        s.read("out.csv"),
        "b,a,c,d\n1,1.5,true,\"x,y\"\n,2,,\"say \"\"hi\"\"\"\n"
    );
}

#[test]
fn csv_cells_hold_nested_values_as_json_text_and_read_back() {
    let s = Scratch::new("t-csv-nested");
    s.write(
        "in.jsonl",
        "{\"id\":1,\"items\":[1,2],\"addr\":{\"city\":\"Bern\",\"zip\":[3000]}}\n",
    );
    let out = ok_run(
        &s,
        "type Addr : DataContract = { city: String }\n\
         type T : DataContract = { id: Int, items: List[Int], addr: Addr }\n\
         source(file(\"in.jsonl\"), Json) | validate(T) | oks() | write(file(\"out.csv\"))\n",
        &[],
    );
    assert_eq!(out, "1\n");
    assert_eq!(
        s.read("out.csv"),
        "id,items,addr\n1,\"[1,2]\",\"{\"\"city\"\":\"\"Bern\"\",\"\"zip\"\":[3000]}\"\n"
    );
    let back = ok_run(
        &s,
        "type Addr : DataContract = { city: String }\n\
         type T : DataContract = { id: Int, items: List[Int], addr: Addr }\n\
         source(file(\"out.csv\"), Csv) | validate(T)\n",
        &[],
    );
    assert_eq!(
        back,
        "[ok({id: 1, items: [1, 2], addr: {city: \"Bern\", zip: [3000]}})]\n"
    );
}

#[test]
fn csv_record_with_a_field_outside_the_header_is_an_error_and_nothing_is_written() {
    let s = Scratch::new("t-csv-outside");
    s.write("in.jsonl", ORDERS);
    s.write("out.csv", "old,contents\n");
    let r = failing_run(
        &s,
        &format!(
            "{ORDER}[{{a: 1}}] | write(file(\"first.jsonl\"))\n\
             source(file(\"in.jsonl\"), Json) | map(r => if r.id == 2 then {{id: 2, late: 1}} else {{id: r.id}}) \
             | write(file(\"out.csv\"))\n\
             \"not reached\"\n"
        ),
        "hql::csv_header",
    );
    assert_eq!(r.out, "1\n", "what ran before stays printed");
    let err = squash(&r.err);
    assert!(
        err.contains("field `late` is not a column of out.csv: its header is id"),
        "{err}"
    );
    assert_eq!(s.read("out.csv"), "old,contents\n");
    assert!(
        !s.exists("first.jsonl"),
        "every target of the run is abandoned"
    );
    assert!(s.temporaries().is_empty(), "{:?}", s.files());
}

#[test]
fn write_to_an_unknown_extension_asks_for_a_format() {
    let s = Scratch::new("t-txt");
    let r = failing_run(&s, "[{a: 1}] | write(file(\"x.txt\"))\n", "hql::format");
    let err = squash(&r.err);
    assert!(
        err.contains("cannot tell the format of x.txt from its extension"),
        "{err}"
    );
    assert!(err.contains("write(file(\"x.txt\"), Json)"), "{err}");
    assert!(!s.exists("x.txt"));
    assert!(s.temporaries().is_empty(), "{:?}", s.files());
}

#[test]
fn write_with_a_named_format_overrides_the_extension() {
    let s = Scratch::new("t-txt-json");
    let out = ok_run(
        &s,
        "[{a: 1}, {a: 2}] | write(file(\"x.txt\"), Json)\n\
         [{a: 1}, {a: 2}] | write(file(\"y.txt\"), Csv)\n\
         [{a: 1}] | write(file(\"z.jsonl\"), Csv)\n",
        &[],
    );
    assert_eq!(out, "2\n2\n1\n");
    assert_eq!(s.read("x.txt"), "{\"a\":1}\n{\"a\":2}\n");
    assert_eq!(s.read("y.txt"), "a\n1\n2\n");
    assert_eq!(s.read("z.jsonl"), "a\n1\n");
}

#[test]
fn write_of_validate_results_is_a_static_error() {
    let s = Scratch::new("t-write-results");
    s.write("in.jsonl", ORDERS);
    let r = static_run(
        &s,
        &format!("{ORDER}\"runs?\"\nsource(file(\"in.jsonl\"), Json) | validate(T) | write(file(\"out.jsonl\"))\n"),
        "hql::write_results",
    );
    let err = squash(&r.err);
    assert!(err.contains("`write` takes values, not results"), "{err}");
    for name in ["oks()", "unwrap()", "route("] {
        assert!(err.contains(name), "the help names {name}: {err}");
    }
    assert!(!s.exists("out.jsonl"));
}

// ------------------------------------------------------------ route

const FAILURE: &str = "{\"type\":\"T\",\"version\":null,\"origin\":{\"source\":\"in.jsonl\",\"line\":3},\
    \"input\":{\"id\":\"bad\"},\"failures\":[\
    {\"rule\":\"T.id.type\",\"kind\":\"type\",\"path\":\"id\",\"fields\":[\"id\"],\"severity\":\"error\",\"message\":\"field id must be Int\"},\
    {\"rule\":\"T.name.missing\",\"kind\":\"missing\",\"path\":\"name\",\"fields\":[\"name\"],\"severity\":\"error\",\"message\":\"required field name (String) is missing\"}]}";

#[test]
fn route_sends_oks_and_failure_records_to_two_files_and_returns_counts() {
    let s = Scratch::new("t-route");
    s.write("in.jsonl", ORDERS);
    let out = ok_run(
        &s,
        &format!(
            "{ORDER}source(file(\"in.jsonl\"), Json) | validate(T) \
             | route(ok: file(\"ok.jsonl\"), err: file(\"dead.jsonl\"))\n"
        ),
        &[],
    );
    assert_eq!(out, "{total: 3, ok: 2, err: 1, warned: 0, by_rule: [{rule: \"T.id.type\", kind: \"type\", count: 1}, {rule: \"T.name.missing\", kind: \"missing\", count: 1}]}\n");
    assert_eq!(
        s.read("ok.jsonl"),
        "{\"id\":1,\"name\":\"a\",\"tags\":[1,2]}\n{\"id\":2,\"name\":\"b\",\"tags\":{\"k\":1}}\n"
    );
    assert_eq!(s.read("dead.jsonl"), format!("{FAILURE}\n"));
    // Every record is in one of the two files.
    let back = ok_run(
        &s,
        "(source(file(\"ok.jsonl\"), Json) | count()) + (source(file(\"dead.jsonl\"), Json) | count())\n",
        &[],
    );
    assert_eq!(back, "3\n");
}

#[test]
fn route_takes_its_named_arguments_in_either_order() {
    let s = Scratch::new("t-route-order");
    s.write("in.jsonl", ORDERS);
    let out = ok_run(
        &s,
        &format!(
            "{ORDER}source(file(\"in.jsonl\"), Json) | validate(T) \
             | route(err: file(\"dead.json\"), ok: file(\"ok.csv\"))\n"
        ),
        &[],
    );
    assert_eq!(out, "{total: 3, ok: 2, err: 1, warned: 0, by_rule: [{rule: \"T.id.type\", kind: \"type\", count: 1}, {rule: \"T.name.missing\", kind: \"missing\", count: 1}]}\n");
    assert_eq!(
        s.read("ok.csv"),
        "id,name,tags\n1,a,\"[1,2]\"\n2,b,\"{\"\"k\"\":1}\"\n"
    );
    assert_eq!(s.read("dead.json"), format!("[\n{FAILURE}\n]\n"));
}

#[test]
fn route_to_a_csv_err_target_is_an_error() {
    let s = Scratch::new("t-route-csv-err");
    s.write("in.jsonl", ORDERS);
    s.write("dead.csv", "old\n");
    let r = failing_run(
        &s,
        &format!(
            "{ORDER}source(file(\"in.jsonl\"), Json) | validate(T) \
             | route(ok: file(\"ok.jsonl\"), err: file(\"dead.csv\"))\n"
        ),
        "hql::route",
    );
    let err = squash(&r.err);
    assert!(
        err.contains("the `err` target dead.csv is not JSON"),
        "{err}"
    );
    assert!(err.contains(".jsonl"), "{err}");
    assert_eq!(s.read("dead.csv"), "old\n");
    assert!(!s.exists("ok.jsonl"));
    assert!(s.temporaries().is_empty(), "{:?}", s.files());
}

#[test]
fn route_without_a_named_argument_is_a_static_error() {
    let s = Scratch::new("t-route-missing");
    s.write("in.jsonl", ORDERS);
    let r = static_run(
        &s,
        &format!(
            "{ORDER}\"runs?\"\nsource(file(\"in.jsonl\"), Json) | validate(T) | route(ok: file(\"ok.jsonl\"))\n"
        ),
        "hql::missing_named_argument",
    );
    assert!(
        squash(&r.err).contains("`route` needs the named argument `err`"),
        "{}",
        r.err
    );
    assert!(!s.exists("ok.jsonl"));
}

// ------------------------------------------------------------ atomicity

#[test]
fn a_runtime_error_later_in_the_run_leaves_the_old_target_byte_for_byte() {
    let s = Scratch::new("t-abandon");
    let old: &[u8] = b"{\"old\": 1}\r\n\xff not even JSON\n";
    s.write("out.jsonl", old);
    let r = failing_run(
        &s,
        "[{a: 1}, {a: 2}] | write(file(\"out.jsonl\"))\n[{a: 3}] | write(file(\"new.jsonl\"))\n1 / 0\n",
        "hql::division_by_zero",
    );
    assert_eq!(r.out, "2\n1\n");
    assert_eq!(s.bytes("out.jsonl"), old);
    assert!(!s.exists("new.jsonl"));
    assert!(s.temporaries().is_empty(), "{:?}", s.files());
}

#[test]
fn unwrap_with_one_bad_record_names_rule_and_origin_and_writes_nothing() {
    let s = Scratch::new("t-unwrap");
    s.write("in.jsonl", "{\"id\":1}\n{\"id\":-2}\n{\"id\":3}\n");
    s.write("old.jsonl", "old\n");
    let program = "type T : DataContract = { id: Int, require id > 0 }\n\
                   source(file(\"in.jsonl\"), Json) | validate(T) | unwrap() | write(file(\"out.jsonl\"))\n\
                   source(file(\"in.jsonl\"), Json) | validate(T) | unwrap() | write(file(\"old.jsonl\"))\n";
    let r = failing_run(&s, program, "hql::unwrap");
    assert_eq!(r.out, "");
    let err = squash(&r.err);
    assert!(
        err.contains("a record fails: T.id > 0 (record at in.jsonl:2)"),
        "{err}"
    );
    assert!(!s.exists("out.jsonl"));
    assert_eq!(s.read("old.jsonl"), "old\n");
    assert!(s.temporaries().is_empty(), "{:?}", s.files());
}

#[test]
fn a_failed_check_still_commits_the_targets() {
    let s = Scratch::new("t-check-commits");
    s.write("out.jsonl", "old\n");
    let r = s.run(
        "let n = [{a: 1}, {a: 2}] | write(file(\"out.jsonl\"))\ncheck \"few\": n < 2\n\"after\"\n",
        &[],
    );
    assert_eq!(r.status, 1, "{}", r.err);
    assert_eq!(r.out, "\"after\"\n");
    assert!(r.err.contains("hql::check_failed"), "{}", r.err);
    assert_eq!(s.read("out.jsonl"), "{\"a\":1}\n{\"a\":2}\n");
    assert!(s.temporaries().is_empty(), "{:?}", s.files());
}

#[test]
fn a_target_in_a_missing_folder_is_an_io_error() {
    let s = Scratch::new("t-missing-folder");
    let r = failing_run(&s, "[{a: 1}] | write(file(\"nodir/x.jsonl\"))\n", "hql::io");
    let err = squash(&r.err);
    assert!(err.contains("cannot write nodir/x.jsonl"), "{err}");
    assert!(
        err.contains("the target's folder must exist and be writable"),
        "{err}"
    );
    assert!(!s.exists("nodir"));
}

#[test]
fn reading_and_writing_one_file_in_one_pipeline_replaces_it_whole() {
    let s = Scratch::new("t-in-place");
    s.write("d.jsonl", "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n");
    let out = ok_run(
        &s,
        "source(file(\"d.jsonl\"), Json) | filter(r => r.a != 2) | write(file(\"d.jsonl\"))\n",
        &[],
    );
    assert_eq!(out, "2\n");
    assert_eq!(s.read("d.jsonl"), "{\"a\":1}\n{\"a\":3}\n");
    assert!(s.temporaries().is_empty(), "{:?}", s.files());
}

/// The program that copies JSON lines from stdin to `out.jsonl`.
const COPY: &str = "source(stdin(), Json) | write(file(\"out.jsonl\"))\n";

const OLD: &[u8] = b"{\"old\":true}\n";

/// Start `hql run main.hql` copying stdin to `out.jsonl`, feed it one
/// line, and wait until its temporary exists.
fn writing_process(s: &Scratch) -> (std::process::Child, std::process::ChildStdin) {
    s.write("main.hql", COPY);
    s.write("out.jsonl", OLD);
    let mut child = s.spawn(&["run", "main.hql"]);
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin.write_all(b"{\"a\":1}\n").expect("hql reads");
    stdin.flush().expect("flush");
    let started = s.wait_until(20, |s| !s.temporaries().is_empty());
    assert!(started, "no temporary appeared: {:?}", s.files());
    (child, stdin)
}

/// Wait for `child` to end, feeding `stdin` a line now and then so a
/// reader blocked on it wakes up; its exit status and stderr.
fn wait_feeding(
    mut child: std::process::Child,
    mut stdin: std::process::ChildStdin,
) -> (Option<i32>, String) {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            drop(stdin);
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            return (status.code(), err);
        }
        if Instant::now() > end {
            let _ = child.kill();
            panic!("hql did not stop");
        }
        let _ = stdin.write_all(b"{\"b\":2}\n");
        let _ = stdin.flush();
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn kill_9_leaves_the_old_target_and_a_temporary_the_next_write_removes() {
    let s = Scratch::new("t-kill9");
    let (mut child, stdin) = writing_process(&s);
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    drop(stdin);
    assert_eq!(s.bytes("out.jsonl"), OLD);
    let left = s.temporaries();
    assert_eq!(left.len(), 1, "{:?}", s.files());
    assert!(left[0].starts_with(".out.jsonl.hql-tmp-"), "{left:?}");

    let r = s.hql_stdin(&["run", "main.hql"], "{\"new\":1}\n{\"new\":2}\n");
    assert_eq!(r.status, 0, "{}", r.err);
    assert_eq!(r.out, "2\n");
    assert_eq!(s.read("out.jsonl"), "{\"new\":1}\n{\"new\":2}\n");
    assert!(
        s.temporaries().is_empty(),
        "the stale temporary is removed: {:?}",
        s.files()
    );
}

/// Send `signal` (`-INT`, `-TERM`) to a process.
fn signal(child: &std::process::Child, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "kill {signal} failed");
}

#[test]
fn sigint_abandons_the_run_exit_1_old_target_intact_no_temporary() {
    let s = Scratch::new("t-sigint");
    let (child, stdin) = writing_process(&s);
    signal(&child, "-INT");
    let (status, err) = wait_feeding(child, stdin);
    assert_eq!(status, Some(1), "{err}");
    assert!(err.contains("hql::interrupted"), "{err}");
    assert_eq!(s.bytes("out.jsonl"), OLD);
    assert!(s.temporaries().is_empty(), "{:?}", s.files());
}

#[test]
fn sigterm_abandons_the_run_like_sigint() {
    let s = Scratch::new("t-sigterm");
    let (child, stdin) = writing_process(&s);
    signal(&child, "-TERM");
    let (status, err) = wait_feeding(child, stdin);
    // Killed by the signal itself, it would leave its temporary behind.
    assert!(status.is_some_and(|c| c != 0), "{status:?} {err}");
    assert_eq!(s.bytes("out.jsonl"), OLD);
    assert!(s.temporaries().is_empty(), "{:?}", s.files());
}

#[test]
fn the_interrupted_message_names_the_signal_that_stopped_the_run() {
    for (sent, named) in [
        ("-TERM", "help: SIGTERM stopped"),
        ("-INT", "help: Ctrl-C (SIGINT) stopped"),
    ] {
        let s = Scratch::new("t-signal-named");
        let (child, stdin) = writing_process(&s);
        signal(&child, sent);
        let (status, err) = wait_feeding(child, stdin);
        assert_eq!(status, Some(1), "{sent}: {err}");
        assert!(
            err.contains("hql::interrupted") && err.contains(named),
            "{sent}: {err}"
        );
        assert!(!err.contains("Ctrl-C") || sent == "-INT", "{sent}: {err}");
    }
}

/// Wait up to 60 seconds for `child` to end without feeding it: its exit
/// status and stderr (`None` when it did not end, and was killed).
fn wait_unfed(mut child: std::process::Child) -> (Option<i32>, String) {
    let end = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            return (None, String::from("hql did not stop"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("reaped");
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code(), err)
}

#[test]
fn a_signal_while_waiting_for_input_abandons_the_run() {
    for sig in ["-TERM", "-INT"] {
        let s = Scratch::new("t-signal-waiting");
        let (child, stdin) = writing_process(&s);
        signal(&child, sig);
        // Standard input stays open and silent: hql is waiting on it.
        let (status, err) = wait_unfed(child);
        drop(stdin);
        assert_eq!(status, Some(1), "{sig}: {err}");
        assert!(err.contains("hql::interrupted"), "{sig}: {err}");
        assert_eq!(s.bytes("out.jsonl"), OLD, "{sig}");
        assert!(s.temporaries().is_empty(), "{sig}: {:?}", s.files());
    }
}

/// A program that collects `data.jsonl`, says so with a failed check on
/// stderr, then sorts, groups and counts what it collected, and writes
/// it to `out.jsonl`.
const SORTING: &str = "let xs = source(file(\"data.jsonl\"), Json) | collect()\n\
check \"collected\": false\n\
let ys = xs | sort_by(r => r.n) | sort_by(r => 0 - r.n) | sort() | filter(r => r.n >= 0) | map(r => {n: r.n, m: r.n % 7})\n\
let gs = ys | group_by(r => r.m)\n\
let cs = ys | count_by(r => r.n % 1000)\n\
ys | write(file(\"out.jsonl\"))\n";

#[test]
fn a_signal_during_a_sort_over_collected_data_abandons_the_run() {
    for sig in ["-TERM", "-INT"] {
        let s = Scratch::new("t-signal-sorting");
        let data: String = (0..200_000u64)
            .map(|i| format!("{{\"n\":{}}}\n", (i * 7919) % 200_000))
            .collect();
        s.write("data.jsonl", data);
        s.write("main.hql", SORTING);
        s.write("out.jsonl", OLD);
        let mut child = s.spawn(&["run", "main.hql"]);
        drop(child.stdin.take());
        // The failed check is on stderr once the data is collected.
        let mut stderr = child.stderr.take().expect("piped stderr");
        let mut seen = Vec::new();
        let mut byte = [0u8];
        while !String::from_utf8_lossy(&seen).contains("collected") {
            let n = std::io::Read::read(&mut stderr, &mut byte).expect("stderr");
            assert_eq!(
                n,
                1,
                "hql ended before the check: {}",
                String::from_utf8_lossy(&seen)
            );
            seen.push(byte[0]);
        }
        signal(&child, sig);
        let (status, _) = wait_unfed(child);
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut rest);
        assert_eq!(status, Some(1), "{sig}: {rest}");
        assert!(rest.contains("hql::interrupted"), "{sig}: {rest}");
        assert_eq!(s.bytes("out.jsonl"), OLD, "{sig}");
        assert!(s.temporaries().is_empty(), "{sig}: {:?}", s.files());
    }
}

// ------------------------------------------------------------ parameters

#[test]
fn set_gives_param_a_value_and_one_program_checks_any_file() {
    let s = Scratch::new("t-param");
    s.write("a.jsonl", "{\"id\":1}\n{\"id\":2}\n");
    s.write("b.jsonl", "{\"id\":1}\n");
    let program =
        "source(file(param(\"input\")), Json) | write(file(param(\"out\", \"default.jsonl\")))\n";
    let out = ok_run(&s, program, &["--set", "input=a.jsonl"]);
    assert_eq!(out, "2\n");
    assert_eq!(s.read("default.jsonl"), "{\"id\":1}\n{\"id\":2}\n");
    let out = ok_run(
        &s,
        program,
        &["--set", "input=b.jsonl", "--set", "out=b-copy.jsonl"],
    );
    assert_eq!(out, "1\n");
    assert_eq!(s.read("b-copy.jsonl"), "{\"id\":1}\n");
}

#[test]
fn param_fallback_and_values_with_equals_signs() {
    let s = Scratch::new("t-param-fallback");
    let program = "param(\"x\", \"fallback\")\nparam(\"y\", \"unused\")\n";
    assert_eq!(ok_run(&s, program, &[]), "\"fallback\"\n\"unused\"\n");
    assert_eq!(
        ok_run(&s, program, &["--set", "x=given", "--set", "y=a=b"]),
        "\"given\"\n\"a=b\"\n"
    );
    assert_eq!(ok_run(&s, "param(\"e\")\n", &["--set", "e="]), "\"\"\n");
}

#[test]
fn a_missing_set_is_a_runtime_error_naming_the_parameter() {
    let s = Scratch::new("t-param-missing");
    let r = failing_run(
        &s,
        "\"before\"\nsource(file(param(\"input\")), Json) | count()\n\"after\"\n",
        "hql::param",
    );
    assert_eq!(r.out, "\"before\"\n");
    let err = squash(&r.err);
    assert!(err.contains("parameter `input` is not set"), "{err}");
    assert!(err.contains("--set input=VALUE"), "{err}");
}

#[test]
fn env_reads_the_environment_with_a_fallback() {
    let s = Scratch::new("t-env");
    let home = std::env::var("HOME").expect("HOME is set where the tests run");
    let out = ok_run(
        &s,
        "env(\"HOME\")\nenv(\"NOPE_X\", \"d\")\nenv(\"HOME\", \"unused\")\n",
        &[],
    );
    assert_eq!(out, format!("{home:?}\n\"d\"\n{home:?}\n"));
    let r = failing_run(&s, "env(\"NOPE_X\")\n", "hql::env");
    assert!(
        squash(&r.err).contains("environment variable `NOPE_X` is not set"),
        "{}",
        r.err
    );
}

#[test]
fn a_non_utf8_env_value_is_an_error_saying_so() {
    use std::os::unix::ffi::OsStrExt;
    let s = Scratch::new("t-env-utf8");
    s.write(
        "main.hql",
        "\"before\"\nenv(\"HQL_TEST_LATIN1\", \"fallback\")\n",
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", "main.hql"])
        .current_dir(&s.path)
        .env("HQL_PROGRESS", "0")
        .env("HQL_TEST_LATIN1", std::ffi::OsStr::from_bytes(b"caf\xe9"))
        .output()
        .expect("hql runs");
    let err = squash(&String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "\"before\"\n");
    assert!(err.contains("hql::env"), "{err}");
    assert!(
        err.contains(
            "environment variable `HQL_TEST_LATIN1` is set, but its value is not valid UTF-8"
        ),
        "{err}"
    );
    assert!(!err.contains("is not set"), "{err}");
}

#[test]
fn a_set_without_equals_is_a_usage_error() {
    let s = Scratch::new("t-set-usage");
    s.write("main.hql", "[{a: 1}] | write(file(\"out.jsonl\"))\n");
    let r = s.hql(&["run", "main.hql", "--set", "noequals"]);
    assert_eq!(r.status, 2, "{}", r.err);
    assert_eq!(r.out, "");
    assert!(r.err.contains("expected NAME=VALUE"), "{}", r.err);
    assert!(r.err.contains("noequals"), "{}", r.err);
    assert!(!s.exists("out.jsonl"), "nothing ran");
    let r = s.hql(&["run", "main.hql", "--set", "=v"]);
    assert_eq!(r.status, 2, "{}", r.err);
    assert!(!s.exists("out.jsonl"), "nothing ran");
}

/// `route` of a validated JSON Lines file copies valid lines as compact
/// text without building them; the ordinary path (here forced by a
/// `filter`, which keeps no plan) builds and encodes each record. Both
/// must write the same bytes, line for line, whatever the lines hold.
#[test]
fn route_copying_valid_lines_writes_what_the_ordinary_path_writes() {
    let dir = Scratch::new("route-copy");
    let mut lines = Vec::new();
    for i in 0..3000 {
        let many_extras: String = (0..40).map(|e| format!(r#","e{e}":{e}"#)).collect();
        let line = match i % 17 {
            // Compact lines, which are copied as they are unless a key
            // repeats where the line check does not look.
            12 => format!(r#"{{"id":{i},"name":"n","x":1,"x":2}}"#),
            13 => format!(r#"{{"id":{i},"name":"n","o":{{"k":1,"k":2}}}}"#),
            14 => format!(r#"{{"id":{i},"name":"n","l":[{{"k":1,"k":2}}]}}"#),
            15 => format!(r#"{{"id":{i},"name":"n"{many_extras},"e39":"again"}}"#),
            16 => format!(r#"{{"id":{i},"name":"n","z":[1,2.50,-0,1E3]}}"#),
            0 => format!(
                r#"{{"id": {i}, "name": "n{i}", "tags": ["a", "b"], "at": {{"x": 1.50, "y": -0}}}}"#
            ),
            1 => format!(r#"  {{ "id" :	{i} , "name":"sp ace" , "extra" : {{ }} }}  "#),
            2 => format!(r#"{{"id": {i}, "name": "esc\"aped\u00e9"}}"#),
            3 => format!(r#"{{"id": {i}, "name": "dup", "name": "again"}}"#),
            4 => format!(r#"{{"id": {i}, "name": "n", "nested": {{"k": 1, "k": 2}}}}"#),
            5 => format!(r#"{{"id": -{i}, "name": "negative"}}"#),
            6 => format!(r#"{{"id": "{i}", "name": "wrong type"}}"#),
            7 => "{\"id\": 1, \"name\": ".to_string(),
            8 => String::new(),
            9 => format!(
                r#"{{"id": {i}, "name": "ünïcödé ✓", "big": 123456789012345678901234567890}}"#
            ),
            10 => format!(
                r#"{{"id": {i}, "name": "n", "f": 1e5, "g": 2.0, "h": [null, true, false]}}"#
            ),
            _ => format!("{{\"id\": {i}, \"name\": \"crlf\"}}\r"),
        };
        lines.push(line);
    }
    dir.write("in.jsonl", lines.join("\n"));
    let contract =
        "type R : DataContract = {\n    id: Int\n    name: String\n    require id >= 0\n}\n";
    let copying = format!(
        "{contract}source(file(\"in.jsonl\"), Json) | validate(R) | route(ok: file(\"ok1.jsonl\"), err: file(\"err1.jsonl\"))\n"
    );
    let ordinary = format!(
        "{contract}source(file(\"in.jsonl\"), Json) | validate(R) | filter(r => true) | route(ok: file(\"ok2.jsonl\"), err: file(\"err2.jsonl\"))\n"
    );
    let a = dir.run(&copying, &[]);
    let b = dir.run(&ordinary, &[]);
    assert_eq!((a.status, b.status), (0, 0), "{}{}", a.err, b.err);
    assert_eq!(a.out, b.out);
    assert_eq!(a.out, "{total: 2824, ok: 2293, err: 531, warned: 0, by_rule: [{rule: \"R.id >= 0\", kind: \"require\", count: 177}, {rule: \"R.id.type\", kind: \"type\", count: 177}, {rule: \"decode\", kind: \"decode\", count: 177}]}\n");
    assert!(dir.read("ok1.jsonl").contains(r#""x":2}"#));
    assert_eq!(dir.read("ok1.jsonl"), dir.read("ok2.jsonl"));
    assert_eq!(dir.read("err1.jsonl"), dir.read("err2.jsonl"));
}

/// `route` writes a failing line of a record of scalar fields from the
/// texts of failures met before, once each has been met; the ordinary
/// path builds every failure record. Both must write the same bytes,
/// whatever breaks: a refinement at two fields (same rule, two paths),
/// missing, null and undeclared fields, a rule that cannot be evaluated,
/// warnings, and several failures at once.
#[test]
fn route_writing_failures_from_texts_met_before_writes_what_the_ordinary_path_writes() {
    let dir = Scratch::new("route-failures");
    let cases = [
        r#"{"id":5,"a":"ok","b":"fine"}"#,
        r#"{"id":5,"a":"BAD","b":"fine"}"#,
        r#"{"id":5,"a":"ok","b":"BAD"}"#,
        r#"{"id":5,"a":"BAD","b":"BAD"}"#,
        r#"{"id":5}"#,
        r#"{"id":5,"a":null}"#,
        r#"{"id":5,"a":"ok","x":1}"#,
        r#"{"id":5,"a":"ok","y":[1,{"k":2}],"x":"s"}"#,
        r#"{"id":0,"a":"ok"}"#,
        r#"{"id":500,"a":"ok"}"#,
        r#"{"id":"5","a":7,"c":"no"}"#,
        r#"{"id":5,"a":"ok","c":null}"#,
        r#"{"id":-5,"a":"sp ace"}"#,
        r#"{"id":9,"a":"esc\u0041ped"}"#,
        r#"{"a":"ok","id":5,"a":"twice"}"#,
        r#"{"a":7,"id":"5"}"#,
        r#"{"x":1,"c":"no","id":"5","a":"ok"}"#,
    ];
    let lines: Vec<&str> = (0..600).map(|i| cases[(i * 7) % cases.len()]).collect();
    dir.write("in \"é\".jsonl", lines.join("\n"));
    let contract = "type Word = String require lower: matches(self, r\"^[a-z]+$\")\n\
        @version(\"2.1.0\")\ntype R : TypeContract = {\n    id: Int\n    a: Word\n    b?: Word\n    c?: Int | Null\n\
        require ratio: 10 / id > 0\n    warn small: id < 100\n}\n";
    let run = |tail: &str, n: u8| {
        let program = format!(
            "{contract}source(file(\"in \\\"é\\\".jsonl\"), Json) | validate(R){tail} | route(ok: file(\"ok{n}.jsonl\"), err: file(\"err{n}.jsonl\"))\n"
        );
        dir.run(&program, &[])
    };
    let (a, b) = (run("", 1), run(" | filter(r => true)", 2));
    assert_eq!((a.status, b.status), (0, 0), "{}{}", a.err, b.err);
    assert_eq!(a.out, b.out);
    assert_eq!(a.out, "{total: 600, ok: 143, err: 457, warned: 35, by_rule: [{rule: \"Word.lower\", kind: \"require\", count: 210}, {rule: \"R.x.extra\", kind: \"extra\", count: 106}, {rule: \"R.id.type\", kind: \"type\", count: 105}, {rule: \"R.a.type\", kind: \"type\", count: 70}, {rule: \"R.c.type\", kind: \"type\", count: 70}, {rule: \"R.a.missing\", kind: \"missing\", count: 36}, {rule: \"R.y.extra\", kind: \"extra\", count: 36}, {rule: \"R.a.null\", kind: \"null\", count: 35}, {rule: \"R.ratio\", kind: \"eval\", count: 35}, {rule: \"R.ratio\", kind: \"require\", count: 35}, {rule: \"R.small\", kind: \"warn\", count: 35}]}\n");
    assert_eq!(dir.read("ok1.jsonl"), dir.read("ok2.jsonl"));
    assert_eq!(dir.read("err1.jsonl"), dir.read("err2.jsonl"));
    let failures = dir.read("err1.jsonl");
    assert!(failures.contains(r#""path":"b""#));
    assert!(failures.contains(r#""version":"2.1.0","origin":{"source":"in \"é\".jsonl","#));
}

#[test]
fn route_to_one_file_for_both_ok_and_err_is_an_error() {
    let dir = Scratch::new("route-same");
    dir.write("in.jsonl", "{\"id\": 1}\n");
    let run = dir.run(
        "type R : Data = { id: Int }\n\
         source(file(\"in.jsonl\"), Json) | validate(R) | route(ok: file(\"x.jsonl\"), err: file(\"x.jsonl\"))\n",
        &[],
    );
    assert_eq!(run.status, 1, "{}", run.err);
    assert!(
        run.err.contains("`ok` and `err` both write x.jsonl"),
        "{}",
        run.err
    );
    assert!(!dir.exists("x.jsonl"));
}

/// A small file system of its own, unmounted when dropped.
struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    /// `None` where this process may not mount one (not root, say).
    fn mount(dir: &Scratch) -> Option<SmallDisk> {
        let at = dir.path.join("small");
        std::fs::create_dir_all(&at).ok()?;
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&at)
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        mounted.success().then_some(SmallDisk(at))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_is_an_error_naming_the_target_and_the_old_file_stays() {
    let dir = Scratch::new("full-disk");
    let Some(disk) = SmallDisk::mount(&dir) else {
        eprintln!("skipped: cannot mount a small file system here");
        return;
    };
    std::fs::write(disk.0.join("out.jsonl"), "old\n").unwrap();
    let lines: Vec<String> = (0..5000)
        .map(|i| format!("{{\"id\": {i}, \"pad\": \"{}\"}}", "x".repeat(40)))
        .collect();
    dir.write("in.jsonl", lines.join("\n"));
    let run = dir.run(
        "source(file(\"in.jsonl\"), Json) | write(file(\"small/out.jsonl\"))\n",
        &[],
    );
    assert_eq!(run.status, 1, "{}", run.err);
    assert!(
        run.err
            .contains("cannot write small/out.jsonl: No space left on device"),
        "{}",
        run.err
    );
    assert_eq!(
        std::fs::read_to_string(disk.0.join("out.jsonl")).unwrap(),
        "old\n"
    );
    let left: Vec<_> = std::fs::read_dir(&disk.0).unwrap().flatten().collect();
    assert_eq!(left.len(), 1, "no temporary is left");
}

#[test]
fn a_link_is_followed_the_file_it_names_is_replaced_and_the_link_stays() {
    let dir = Scratch::new("target-link");
    dir.write("real.jsonl", "old\n");
    std::os::unix::fs::symlink("real.jsonl", dir.path.join("link.jsonl")).unwrap();
    let run = dir.run("[{a: 1}] | write(file(\"link.jsonl\"))\n", &[]);
    assert_eq!(run.status, 0, "{}", run.err);
    let link = std::fs::symlink_metadata(dir.path.join("link.jsonl")).unwrap();
    assert!(link.file_type().is_symlink(), "the link is still a link");
    assert_eq!(dir.read("real.jsonl"), "{\"a\":1}\n");
}

#[test]
fn a_fifo_or_a_device_target_is_written_as_it_goes() {
    let dir = Scratch::new("target-fifo");
    let fifo = dir.fifo("pipe.jsonl");
    let reader = std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap());
    let run = dir.run(
        "[{a: 1}, {a: 2}] | write(file(\"pipe.jsonl\"))\n[{a: 3}] | write(file(\"/dev/null\"), Json)\n",
        &[],
    );
    assert_eq!((run.status, run.out.as_str()), (0, "2\n1\n"), "{}", run.err);
    assert_eq!(reader.join().unwrap(), "{\"a\":1}\n{\"a\":2}\n");
    let null = std::fs::metadata("/dev/null").unwrap();
    assert!(!null.is_file(), "/dev/null is still a device");
    assert!(dir.path.join("pipe.jsonl").exists());
}

/// Results the checker cannot see as results (a function's value) are
/// refused when `write` meets them, with the same help, and nothing is
/// written.
#[test]
fn write_of_results_the_checker_cannot_see_is_a_runtime_error() {
    let dir = Scratch::new("write-results-runtime");
    let run = dir.run(
        "fn results(x) = [ok(x), err(x)]\nresults(1) | write(file(\"r.jsonl\"))\n",
        &[],
    );
    assert_eq!(run.status, 1, "{}", run.err);
    assert!(run.err.contains("hql::write_results"), "{}", run.err);
    assert!(run.err.contains("`oks()`"), "{}", run.err);
    assert!(!dir.exists("r.jsonl"));
}

// ------------------------------------------------- one output per target

#[test]
fn two_writes_to_one_target_in_a_run_add_up_to_one_output() {
    let s = Scratch::new("t-one-output");
    let out = ok_run(
        &s,
        "[{a: 1}, {a: 2}] | write(file(\"out.jsonl\"))\n\
         [{a: 3}] | write(file(\"out.jsonl\"))\n\
         [{a: 1, b: \"x\"}] | write(file(\"out.csv\"))\n\
         [{a: 2, b: \"y\"}] | write(file(\"out.csv\"))\n\
         [{a: 1}] | write(file(\"out.json\"))\n\
         [{a: 2}, {a: 3}] | write(file(\"out.json\"))\n",
        &[],
    );
    assert_eq!(out, "2\n1\n1\n1\n1\n2\n");
    assert_eq!(s.read("out.jsonl"), "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n");
    // The CSV target keeps the first write's header.
    assert_eq!(s.read("out.csv"), "a,b\n1,x\n2,y\n");
    let array: serde_json::Value = serde_json::from_str(&s.read("out.json")).unwrap();
    assert_eq!(array, serde_json::json!([{"a": 1}, {"a": 2}, {"a": 3}]));
}

#[test]
fn every_spelling_of_one_file_is_one_target() {
    let s = Scratch::new("t-spellings");
    s.write("sub/keep.txt", "");
    let abs = s.path.join("out.jsonl");
    std::os::unix::fs::symlink(&abs, s.path.join("link.jsonl")).unwrap();
    let program = format!(
        "[{{n: 1}}] | write(file(\"out.jsonl\"))\n\
         [{{n: 2}}] | write(file(\"./out.jsonl\"))\n\
         [{{n: 3}}] | write(file({:?}))\n\
         [{{n: 4}}] | write(file(\"sub/../out.jsonl\"))\n\
         [{{n: 5}}] | write(file(\"link.jsonl\"))\n",
        abs.display().to_string()
    );
    let out = ok_run(&s, &program, &[]);
    assert_eq!(out, "1\n1\n1\n1\n1\n");
    assert_eq!(
        s.read("out.jsonl"),
        "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n{\"n\":4}\n{\"n\":5}\n"
    );
    // The link still names the file it named.
    let link = std::fs::symlink_metadata(s.path.join("link.jsonl")).unwrap();
    assert!(link.file_type().is_symlink());
}

#[test]
fn route_with_ok_and_err_on_one_file_is_refused_before_reading() {
    let s = Scratch::new("t-route-same");
    s.write("in.jsonl", ORDERS);
    s.write("both.jsonl", OLD);
    let r = failing_run(
        &s,
        &format!(
            "{ORDER}source(file(\"in.jsonl\"), Json) | validate(T) \
             | route(ok: file(\"both.jsonl\"), err: file(\"./both.jsonl\"))\n"
        ),
        "hql::route",
    );
    assert!(r.err.contains("both write"), "{}", r.err);
    assert_eq!(s.bytes("both.jsonl"), OLD);
    assert!(s.temporaries().is_empty(), "{:?}", s.files());
}

#[test]
fn a_source_reads_what_earlier_statements_of_the_run_wrote() {
    let s = Scratch::new("t-read-back");
    s.write("out.jsonl", "{\"old\":1}\n");
    s.write("arr.json", "[{\"old\":1}]\n");
    let out = ok_run(
        &s,
        "[{n: 1}, {n: 2}] | write(file(\"out.jsonl\"))\n\
         source(file(\"out.jsonl\"), Json) | count()\n\
         [{n: 1}] | write(file(\"arr.json\"))\n\
         [{n: 2}] | write(file(\"arr.json\"))\n\
         source(file(\"arr.json\"), Json) | map(r => r.n)\n",
        &[],
    );
    assert_eq!(out, "2\n2\n1\n1\n[1, 2]\n");
}

#[test]
fn within_one_statement_a_source_reads_the_old_content_of_its_target() {
    let s = Scratch::new("t-in-place");
    s.write("data.jsonl", "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n");
    let out = ok_run(
        &s,
        "source(file(\"data.jsonl\"), Json) | filter(r => r.n != 2) | write(file(\"data.jsonl\"))\n\
         source(file(\"data.jsonl\"), Json) | map(r => r.n)\n",
        &[],
    );
    assert_eq!(out, "2\n[1, 3]\n");
    assert_eq!(s.read("data.jsonl"), "{\"n\":1}\n{\"n\":3}\n");
}

#[test]
fn a_target_that_is_a_folder_is_refused_before_anything_is_read_and_nothing_commits() {
    let s = Scratch::new("t-dir-target");
    s.write("dir.jsonl/inside", "");
    s.write("other.jsonl", OLD);
    let r = failing_run(
        &s,
        "[{a: 1}] | write(file(\"other.jsonl\"))\n\
         source(file(\"missing.jsonl\"), Json) | write(file(\"dir.jsonl\"))\n",
        "hql::io",
    );
    assert!(r.err.contains("directory"), "{}", r.err);
    // The target was refused before the missing source was opened.
    assert!(!r.err.contains("cannot read"), "{}", r.err);
    assert_eq!(s.bytes("other.jsonl"), OLD);
    assert!(s.temporaries().is_empty(), "{:?}", s.files());
}

#[test]
fn a_replaced_file_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new("t-mode");
    for (name, mode) in [("secret.jsonl", 0o600), ("shared.jsonl", 0o644)] {
        let path = s.write(name, OLD);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    ok_run(
        &s,
        "[{a: 1}] | write(file(\"secret.jsonl\"))\n[{a: 1}] | write(file(\"shared.jsonl\"))\n",
        &[],
    );
    for (name, mode) in [("secret.jsonl", 0o600), ("shared.jsonl", 0o644)] {
        let meta = std::fs::metadata(s.path.join(name)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, mode, "{name}");
        assert_eq!(s.read(name), "{\"a\":1}\n");
    }
}

// ------------------------------------------------ all or nothing at commit

/// The two old files of the route below, and what a run writes.
const ROUTE_IN: &str = "{\"id\":1,\"name\":\"a\"}\n{\"id\":\"x\"}\n{\"id\":3,\"name\":\"c\"}\n";
const ROUTE: &str = "type T : DataContract = { id: Int, name: String }\n\
                     source(file(\"in.jsonl\"), Json) | validate(T) \
                     | route(ok: file(\"good.jsonl\"), err: file(\"bad.jsonl\"))\n";
const OLD_GOOD: &str = "{\"old\":\"good\"}\n";
const OLD_BAD: &str = "{\"old\":\"bad\"}\n";

/// A folder with the route's input, program and old targets.
fn route_scratch(name: &str) -> Scratch {
    let s = Scratch::new(name);
    s.write("in.jsonl", ROUTE_IN);
    s.write("main.hql", ROUTE);
    s.write("good.jsonl", OLD_GOOD);
    s.write("bad.jsonl", OLD_BAD);
    s
}

/// `hql run main.hql` with `HQL_TEST_CRASH_AT=step`: it must abort there.
#[track_caller]
fn crash_at(s: &Scratch, step: &str) {
    use std::os::unix::process::ExitStatusExt;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", "main.hql"])
        .current_dir(&s.path)
        .env("HQL_PROGRESS", "0")
        .env("HQL_TEST_CRASH_AT", step)
        .output()
        .expect("hql runs");
    assert_eq!(
        out.status.signal(),
        Some(6),
        "the commit never reached step {step}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The route's two targets are both old or both new.
#[track_caller]
fn all_old_or_all_new(s: &Scratch) -> bool {
    let (good, bad) = (s.read("good.jsonl"), s.read("bad.jsonl"));
    if good == OLD_GOOD {
        assert_eq!(bad, OLD_BAD, "a half-committed run: good old, bad new");
        return false;
    }
    assert_eq!(
        good,
        "{\"id\":1,\"name\":\"a\"}\n{\"id\":3,\"name\":\"c\"}\n"
    );
    assert!(
        bad.contains("T.name.missing"),
        "a half-committed run: {bad}"
    );
    true
}

#[test]
fn a_crash_at_each_step_of_a_two_file_commit_ends_all_old_or_all_new() {
    for (step, new) in [
        ("prepared", false),
        ("journaled", true),
        ("renamed-1", true),
        ("renamed", true),
        ("done", true),
    ] {
        // Recovered by `hql recover`, and by the next run touching them.
        for by_command in [true, false] {
            let s = route_scratch("t-crash");
            crash_at(&s, step);
            if by_command {
                let r = s.hql(&["recover"]);
                assert_eq!(r.status, 0, "{step}: {}{}", r.out, r.err);
                assert_eq!(all_old_or_all_new(&s), new, "{step}");
            } else {
                let r = s.run("[{a: 1}] | write(file(\"elsewhere.jsonl\"))\n", &[]);
                assert_eq!(r.status, 0, "{step}: {}", r.err);
                assert_eq!(all_old_or_all_new(&s), new, "{step}");
            }
            let left: Vec<String> = (s.files().into_iter())
                .filter(|f| f.contains(".hql-"))
                .collect();
            assert!(left.is_empty(), "{step}: {left:?}");
        }
    }
}

/// A rename that fails after another target was replaced leaves the
/// journal and every temporary it names, so `hql recover` finishes the
/// commit: both targets new, nothing left behind. (Before, the failed
/// rename's temporary was removed, and recovery left good new, bad old.)
#[test]
fn a_rename_that_fails_past_the_point_of_no_return_is_finished_by_recover() {
    let s = route_scratch("t-refused-rename");
    let out = run_refusing(&s, "bad.jsonl");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("hql::commit"), "{err}");
    assert!(err.contains("hql recover"), "{err}");
    // Mixed until recovered: good new, bad old, its temporary kept.
    assert_ne!(s.read("good.jsonl"), OLD_GOOD);
    assert_eq!(s.read("bad.jsonl"), OLD_BAD);
    let kept = temporaries(&s);
    assert!(kept.iter().any(|f| f.contains("bad.jsonl")), "{kept:?}");
    let r = s.hql(&["recover"]);
    assert_eq!(r.status, 0, "{}{}", r.out, r.err);
    assert!(all_old_or_all_new(&s));
    assert_eq!(temporaries(&s), Vec::<String>::new());
}

/// A rename that fails before anything changed abandons the run: both
/// targets old, no temporary and no journal left.
#[test]
fn a_first_rename_that_fails_leaves_every_target_old() {
    let s = route_scratch("t-refused-first");
    let out = run_refusing(&s, "good.jsonl");
    assert_eq!(out.status.code(), Some(1));
    assert!(!all_old_or_all_new(&s));
    assert_eq!(temporaries(&s), Vec::<String>::new());
}

/// `hql run main.hql` with the rename of `target` refused.
fn run_refusing(s: &Scratch, target: &str) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", "main.hql"])
        .current_dir(&s.path)
        .env("HQL_PROGRESS", "0")
        .env("HQL_TEST_REFUSE_RENAME", target)
        .output()
        .expect("hql runs")
}

/// The commit's temporaries and journals in the folder.
fn temporaries(s: &Scratch) -> Vec<String> {
    (s.files().into_iter())
        .filter(|f| f.contains(".hql-"))
        .collect()
}

#[test]
fn recover_in_a_folder_with_nothing_to_do_says_so() {
    let s = Scratch::new("t-recover-none");
    let r = s.hql(&["recover"]);
    assert_eq!(
        (r.status, r.out.as_str()),
        (0, ".: no interrupted commit\n")
    );
}

#[test]
fn forty_kill_9s_at_random_moments_never_leave_a_half_committed_route() {
    // A route big enough that some kills land inside the commit.
    let mut input = String::new();
    for i in 0..20_000 {
        if i % 7 == 0 {
            input.push_str("{\"id\":\"x\"}\n");
        } else {
            input.push_str(&format!("{{\"id\":{i},\"name\":\"n{i}\"}}\n"));
        }
    }
    let s = Scratch::new("t-kill-commit");
    s.write("in.jsonl", &input);
    s.write("main.hql", ROUTE);
    let (old_good, old_bad) = ("{\"old\":1}\n", "{\"old\":2}\n");
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let (mut old, mut new) = (0, 0);
    for _ in 0..40 {
        s.write("good.jsonl", old_good);
        s.write("bad.jsonl", old_bad);
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut child = s.spawn(&["run", "main.hql"]);
        std::thread::sleep(Duration::from_micros(seed % 60_000));
        let _ = child.kill();
        let _ = child.wait();
        let r = s.hql(&["recover"]);
        assert_eq!(r.status, 0, "{}{}", r.out, r.err);
        let (good, bad) = (s.read("good.jsonl"), s.read("bad.jsonl"));
        if good == old_good {
            assert_eq!(bad, old_bad, "good old, bad new");
            old += 1;
        } else {
            assert_eq!(good.lines().count(), 20_000 - 20_000 / 7 - 1);
            assert_eq!(bad.lines().count(), 20_000 / 7 + 1, "good new, bad not");
            new += 1;
        }
        assert!(s.temporaries().is_empty(), "{:?}", s.files());
    }
    assert_eq!(old + new, 40);
}

#[test]
fn a_write_inside_map_adds_to_one_output_and_keeps_one_file_open() {
    let s = Scratch::new("t-write-in-map");
    let input: String = (0..20_000).map(|i| format!("{{\"n\":{i}}}\n")).collect();
    s.write("in.jsonl", &input);
    let out = ok_run(
        &s,
        "source(file(\"in.jsonl\"), Json) | map(r => [r] | write(file(\"out.jsonl\"))) | sum()\n",
        &[],
    );
    assert_eq!(out, "20000\n");
    assert_eq!(s.read("out.jsonl"), input);
}

#[test]
fn one_target_written_in_two_formats_is_an_error_and_nothing_commits() {
    let s = Scratch::new("t-two-formats");
    s.write("out.jsonl", OLD);
    let r = failing_run(
        &s,
        "[{a: 1}] | write(file(\"out.jsonl\"))\n[{a: 2}] | write(file(\"out.jsonl\"), Csv)\n",
        "hql::io",
    );
    assert!(
        r.err
            .contains("out.jsonl is written twice in this run, as Json and as Csv"),
        "{}",
        r.err
    );
    assert_eq!(s.bytes("out.jsonl"), OLD);
    assert!(s.temporaries().is_empty(), "{:?}", s.files());
}

#[test]
fn commands_that_read_declarations_leave_a_crashed_commit_for_a_run_to_finish() {
    let s = route_scratch("t-crash-readonly");
    crash_at(&s, "journaled");
    s.write("shared.hql", "type T : DataContract = { id: Int }\n");
    s.write("c.hql", "import \"shared.hql\"\ntype U : T = { n?: Int }\n");
    let before = s.files();
    for args in [
        &["check", "c.hql"][..],
        &["contract", "c.hql"],
        &["export", "c.hql", "U", "--format", "json-schema"],
        &["diff", "c.hql", "c.hql"],
    ] {
        let r = s.hql(args);
        assert_eq!(r.status, 0, "{args:?}: {}", r.err);
        assert_eq!(s.files(), before, "{args:?} changed the folder");
    }
    assert_eq!(s.read("good.jsonl"), OLD_GOOD);
    // The next run finishes it.
    let r = s.hql(&["recover"]);
    assert_eq!(r.status, 0, "{}", r.err);
    assert!(all_old_or_all_new(&s));
}
