//! `hql run --explain` and the REPL's `:explain` (tooling.md, "Commands"):
//! each statement's pipelines with the path the execution planner chose
//! and why the faster ones were passed over, nothing run; and what the
//! plan names is what runs: the program then prints on two threads what
//! it prints on one.

mod common;

use common::Scratch;

/// A JSON Lines file over the threads' threshold (a megabyte), with valid
/// and invalid records, and a small CSV file.
fn data(dir: &Scratch) {
    let mut lines = String::new();
    for i in 0..30_000i64 {
        let n = if i % 10 == 0 { -1 } else { i };
        lines.push_str(&format!(
            "{{\"id\": \"r{i}\", \"n\": {n}, \"note\": \"{}\"}}\n",
            "x".repeat((i % 20) as usize)
        ));
    }
    dir.write("rows.jsonl", lines.as_bytes());
    dir.write("rows.csv", b"id,n\nr1,1\nr2,-2\n");
}

const PROGRAM: &str = r#"type Row : DataContract = {
    id: String
    n: Int
    require n >= 0
}

type Keyed : DataContract = {
    id: String
    n: Int
    unique id
}

let rows = source(file("rows.jsonl"), Json) | validate(Row)
rows | oks() | count()
rows | report()
rows | errs() | map(e => e.origin.line) | take(3)
source(file("rows.jsonl"), Json) | validate(Keyed) | oks() | count()
source(file("rows.csv"), Csv) | validate(Row) | report()
let n = rows | count()
rows | route(ok: file("ok.jsonl"), err: file("err.jsonl"))
rows | oks() | write(file("ok.csv"), Csv)
n + 1
fn again() = source(file("rows.jsonl"), Json) | validate(Row)
again() | oks() | count()
"#;

#[test]
fn explain_prints_each_statements_path_and_runs_nothing() {
    let dir = Scratch::new("explain");
    data(&dir);
    let run = dir.run(PROGRAM, &["--explain", "--threads", "2"]);
    assert_eq!(run.err, "");
    assert_eq!(run.status, 0);
    assert_eq!(
        run.out,
        "main.hql:13: a stream, planned where it is consumed
main.hql:14: count(): counting: line check, chunks on 2 threads
main.hql:15: report(): counting: line check, chunks on 2 threads
main.hql:16: printing: ordinary: records built, one thread
    not threads: the pipeline is not a validated source followed by oks(), errs(), map and filter
main.hql:17: count(): counting: line check, chunks on 2 threads, unique keys claimed in file order
main.hql:18: report(): counting: CSV cells checked, one thread
main.hql:19: count(): threads: chunks validated and staged on 2 threads
    not counting: count() counts valid records only after oks(), report() every result
main.hql:20: route: copier: valid lines copied as they are, 2 threads
main.hql:21: write: ordinary: records built, one thread
    not copier: the target is not JSON with the records' own fields
    not threads: the target is not JSON with the records' own fields
main.hql:22: no pipeline
main.hql:24: count(): decided when it runs: its input is computed by running the program
"
    );
    // Nothing ran: no target was written.
    assert!(!dir.path.join("ok.jsonl").exists());
    assert!(!dir.path.join("ok.csv").exists());
    // On one thread, the paths that split say so.
    let one = dir.run(PROGRAM, &["--explain", "--threads", "1"]);
    assert!(one
        .out
        .contains("main.hql:14: count(): counting: line check, one thread\n"));
    assert!(one.out.contains(
        "main.hql:19: count(): ordinary: records built, one thread\n    \
         not counting: count() counts valid records only after oks(), report() every result\n    \
         not threads: one thread, or the file is not JSON Lines of a megabyte or more in a regular file\n"
    ));
}

/// The paths explained are the paths run: the program prints the same on
/// two threads (where the plan splits) as on one (where it does not).
#[test]
fn what_is_explained_runs_as_one_thread_runs_it() {
    let dir = Scratch::new("explain-runs");
    data(&dir);
    let two = dir.run(PROGRAM, &["--threads", "2"]);
    assert_eq!(two.status, 0, "{}", two.err);
    let written = |name: &str| std::fs::read_to_string(dir.path.join(name)).unwrap();
    let (ok, err, csv) = (written("ok.jsonl"), written("err.jsonl"), written("ok.csv"));
    let one = dir.run(PROGRAM, &["--threads", "1"]);
    assert_eq!(
        (one.out, one.err, one.status),
        (two.out.clone(), two.err, two.status)
    );
    assert_eq!(
        (written("ok.jsonl"), written("err.jsonl"), written("ok.csv")),
        (ok, err, csv)
    );
    assert!(
        two.out
            .starts_with("27000\n{total: 30000, ok: 27000, err: 3000,"),
        "{}",
        two.out
    );
}

#[test]
fn explain_of_a_program_that_does_not_check_is_its_diagnostics() {
    let dir = Scratch::new("explain-static");
    let run = dir.run(
        "source(file(\"a.jsonl\"), Json) | validate(Nope) | count()\n",
        &["--explain"],
    );
    assert_eq!(run.status, 2);
    assert!(run.err.contains("hql::unknown_name"), "{}", run.err);
    assert_eq!(run.out, "");
}

#[test]
fn the_repl_explains_an_expression() {
    let dir = Scratch::new("explain-repl");
    data(&dir);
    let entries = "type Row : DataContract = {\n    n: Int\n}\n\
                   :explain source(file(\"rows.jsonl\"), Json) | validate(Row) | report()\n\
                   :explain\n";
    let mut child = dir.spawn(&["repl", "--max-line", "1M"]);
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(entries.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = format!("<repl:{}>:1: report(): counting: line check, ", 2);
    assert!(text.contains(&line), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage: :explain EXPR"));
}
