//! `count()` and `report()` over a validated JSON Lines file take the
//! counting path and may run on several threads (`hql run --threads N`);
//! their results must be exactly those of one thread and of the ordinary
//! path, whatever the file holds.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A file over the splitting threshold, with every kind of line: valid and
/// invalid records, lines that do not decode, blank lines, CRLF endings.
fn data_file(dir: &Path) -> PathBuf {
    let mut text = String::from("\u{feff}");
    for i in 0..20_000 {
        let line = match i % 97 {
            0 => "{\"id\": \"broken\"".to_string(),
            1 => String::new(),
            2 => format!("{{\"id\": \"r{i}\", \"low\": 9, \"high\": 1}}"),
            3 => format!(
                "{{\"id\": {i}, \"low\": 1, \"high\": 2, \"note\": \"{}\"}}",
                "x".repeat(40)
            ),
            _ => format!(
                "{{\"id\": \"r{i}\", \"low\": {}, \"high\": {}, \"note\": \"{}\"}}",
                i % 7,
                10 + i % 5,
                "y".repeat(i % 50)
            ),
        };
        text.push_str(&line);
        text.push_str(if i % 3 == 0 { "\r\n" } else { "\n" });
    }
    let path = dir.join("records.jsonl");
    std::fs::write(&path, text).expect("temp file");
    assert!(
        std::fs::metadata(&path).unwrap().len() > 1 << 20,
        "the file must be large enough to split"
    );
    path
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hql-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A file of `lines`, the last with no newline after it.
fn write_lines(dir: &Path, name: &str, lines: &[impl AsRef<str>]) -> PathBuf {
    let text: Vec<&str> = lines.iter().map(AsRef::as_ref).collect();
    let path = dir.join(name);
    std::fs::write(&path, text.join("\n")).unwrap();
    path
}

/// The contract the counting tests check records against, with `more` in
/// its body.
fn contract_r(more: &str) -> String {
    format!(
        "type R : DataContract = {{\n    id: String\n    low: Int\n    high: Int\n    \
         note?: String\n    require ordered: low <= high\n{more}}}\n"
    )
}

/// `contract` (which declares `R`), then the count of the valid records of
/// `data` and its report.
fn count_and_report(contract: &str, data: &Path) -> String {
    let source = format!(
        "source(file({:?}), Json) | validate(R)",
        data.to_string_lossy()
    );
    format!("{contract}{source} | oks() | count()\n{source} | report()\n")
}

/// `program` with `take` before each `validate` of a source, which keeps
/// it off the counting path and the one-pass read: every record is decoded
/// and validated the ordinary way.
fn on_the_ordinary_path(program: &str) -> String {
    let ordinary = program.replace("Json) | validate", "Json) | take(1000000) | validate");
    assert_ne!(ordinary, program);
    ordinary
}

fn run(dir: &Path, program: &str, threads: usize) -> String {
    let file = dir.join(format!("p{threads}.hql"));
    std::fs::write(&file, program).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", "--threads", &threads.to_string()])
        .arg(&file)
        .output()
        .expect("hql runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn counts_and_reports_agree_across_thread_counts() {
    let dir = scratch("threads");
    let data = data_file(&dir);
    let contract = contract_r("    warn short: len(note? ?? \"\") < 45\n");
    let program = count_and_report(&contract, &data);
    let one = run(&dir, &program, 1);
    // What the generator wrote: blank lines are not records.
    let kinds: Vec<usize> = (0..20_000).map(|i| i % 97).collect();
    let blank = kinds.iter().filter(|&&k| k == 1).count();
    let bad = kinds
        .iter()
        .filter(|&&k| k == 0 || k == 2 || k == 3)
        .count();
    let good: Vec<usize> = (0..20_000).filter(|i| i % 97 > 3).collect();
    let warned = good.iter().filter(|i| *i % 50 >= 45).count();
    let expected = format!(
        "{}\n{{total: {}, ok: {}, err: {bad}, warned: {warned}, ",
        good.len(),
        20_000 - blank,
        good.len()
    );
    assert!(
        one.starts_with(&expected),
        "{one}\nexpected to start with {expected}"
    );
    for threads in [2, 3, 4] {
        assert_eq!(run(&dir, &program, threads), one, "{threads} threads");
    }
    assert_eq!(
        run(&dir, &on_the_ordinary_path(&program), 1),
        one,
        "the ordinary path"
    );
}

/// A file over the splitting threshold whose records repeat their keys
/// across it: valid, invalid and warned records with keys taken before
/// and after, records with no key, lines that do not decode. The first
/// half's ids count up; the second's repeat them out of order.
fn keyed_file(dir: &Path) -> PathBuf {
    let mut lines = Vec::new();
    for i in 0..30_000u64 {
        let id = match i {
            0..15_000 => format!("{i:05}"),
            _ => format!("{:05}", (i * 7919) % 12_000),
        };
        let note = "n".repeat((i % 50) as usize);
        lines.push(match i % 97 {
            0 => "{\"id\": \"r1\"".to_string(),
            1 => String::new(),
            2 | 40 => format!("{{\"id\": \"r{id}\", \"low\": 9, \"high\": 1}}"),
            3 | 60 => format!("{{\"low\": {}, \"high\": 20, \"note\": \"{note}\"}}", i % 4),
            _ => format!(
                "{{\"id\": \"r{id}\", \"low\": {}, \"high\": {}, \"note\": \"{note}\"}}",
                i % 11,
                12 + (i * 31) % 3_000
            ),
        });
    }
    let path = write_lines(dir, "keyed.jsonl", &lines);
    assert!(std::fs::metadata(&path).unwrap().len() > 1 << 20);
    path
}

/// With unique keys, workers check the file's chunks and this thread
/// claims the keys in the order of the file: the counts are one thread's
/// and the ordinary path's, for one key, for a key of two fields, for two
/// keys (a record claims both or neither), and with warnings, whose
/// records claim their keys too.
#[test]
fn unique_keys_are_counted_across_threads_as_on_one_thread() {
    let dir = scratch("keyed");
    let data = keyed_file(&dir);
    let keyed = |more: &str| {
        format!(
            "type R : DataContract = {{\n    id?: String\n    low: Int\n    high: Int\n    \
             note?: String\n    require ordered: low <= high\n{more}}}\n"
        )
    };
    for more in [
        "    unique id\n",
        "    unique id\n    warn short: len(note? ?? \"\") < 45\n",
        "    unique id\n    unique (low, high)\n",
        "    unique (low, high)\n",
        "    unique (low, high)\n    unique id\n    warn short: len(note? ?? \"\") < 45\n",
    ] {
        let program = count_and_report(&keyed(more), &data);
        let one = run(&dir, &program, 1);
        let ok: u64 = one.lines().next().unwrap().parse().unwrap();
        // Some keys repeat, and their later records fail.
        assert!(ok > 100 && one.contains("unique"), "{more}: {one}");
        for threads in [2, 3] {
            assert_eq!(
                run(&dir, &program, threads),
                one,
                "{more}: {threads} threads"
            );
        }
        assert_eq!(
            run(&dir, &on_the_ordinary_path(&program), 1),
            one,
            "{more}: the ordinary path"
        );
    }
}

/// Lines longer than a read, a last line with no newline, blank lines of
/// spaces, tabs or a lone CR, and a byte-order mark: the counting path
/// reads them as `source` does.
#[test]
fn the_counting_path_reads_lines_as_source_does() {
    let dir = scratch("edges");
    let long = "z".repeat(200_000);
    let lines = [
        "\u{feff}{\"id\": \"a\", \"low\": 1, \"high\": 2}".to_string(),
        format!("{{\"id\": \"long\", \"low\": 1, \"high\": 2, \"note\": \"{long}\"}}"),
        "  \t ".to_string(),
        "\r".to_string(),
        format!("{{\"id\": \"bad\", \"low\": 3, \"high\": 2, \"pad\": \"{long}\"}}\r"),
        "{\"id\": \"c\", \"low\": 1, \"high\": 2, \"id\": 7}".to_string(),
        format!("{{\"id\": \"broken {long}"),
        "{\"id\": \"last\", \"low\": 0, \"high\": 0}".to_string(),
    ];
    let data = write_lines(&dir, "edges.jsonl", &lines);
    let program = count_and_report(&contract_r(""), &data);
    let counted = run(&dir, &program, 1);
    assert!(
        counted.starts_with("3\n{total: 6, ok: 3, err: 3,"),
        "{counted}"
    );
    assert_eq!(run(&dir, &on_the_ordinary_path(&program), 1), counted);
    assert_eq!(run(&dir, &program, 2), counted);
}

/// `source(file(…), Json) | validate(T)` builds valid records as it reads
/// them; whatever follows sees exactly what the ordinary path gives, down
/// to number text, field order, origins and failures.
#[test]
fn a_validated_file_reads_as_the_ordinary_path_reads_it() {
    let dir = scratch("one-pass");
    let lines = [
        "\u{feff}{\"id\": \"a\", \"low\": 1, \"high\": 2.50, \"tags\": [\"x\"]}",
        "",
        "{\"extra\": {\"deep\": [1, -0, 1e2]}, \"high\": 99999999999999999999, \"id\": \"b\", \"low\": -0}\r",
        "{\"id\": \"c\", \"low\": 3, \"high\": 2}",
        "{\"\\u0069d\": \"d\\n\\u00e9\", \"low\": 1, \"high\": 1, \"x\": 1, \"x\": 2}",
        "{\"id\": 5, \"low\": 1}",
        "[1, 2]",
        "{\"id\": \"e\", \"low\": 1, \"high\": 1, \"tags\": [\"y\", null]}",
        "{\"id\": \"f\", \"low\": 1, \"high\": 1",
        "{\"id\": \"g\", \"low\": 1, \"high\": 4, \"tags\": []}",
    ];
    let data = write_lines(&dir, "mixed.jsonl", &lines);
    let contract = r#"type R : DataContract = {
    id: String
    low: Int
    high: Float
    tags?: List[String | Null]
    require ordered: low <= high
}
"#;
    let source = format!("source(file({:?}), Json)", data.to_string_lossy());
    let program = format!(
        "{contract}{source} | validate(R)\n{source} | validate(R) | oks() | map(r => r.high)\n"
    );
    let read = run(&dir, &program, 1);
    assert_eq!(run(&dir, &on_the_ordinary_path(&program), 1), read);
    assert!(read.contains("origin: {source: "), "{read}");
    assert!(read.contains("99999999999999999999"), "{read}");
}

/// `--threads` beyond four a core is capped, with a note: a thread a
/// range costs memory and start-up time, and 100,000 of them would abort.
#[test]
fn threads_are_capped_at_four_per_core() {
    let dir = scratch("cap");
    let data = data_file(&dir);
    let program = count_and_report(&contract_r(""), &data);
    let file = dir.join("capped.hql");
    std::fs::write(&file, &program).unwrap();
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", "--threads", "100000"])
        .arg(&file)
        .output()
        .expect("hql runs");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let plural = if cores == 1 { "" } else { "s" };
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "hql: --threads 100000 is more than 4 per core; using {} ({cores} core{plural} here)\n",
            cores * 4
        )
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        run(&dir, &program, 1)
    );
}

/// `route` of a validated JSON Lines file on several threads writes the
/// same bytes as one thread, and as the ordinary path (and so does `write`
/// of its valid records): the file is cut
/// into chunks at newlines and routed by workers, and what they give back
/// is written in the order of the file. Here with every kind of line, a
/// line longer than a chunk, a flat contract (whose failures are written
/// from learnt texts), a nested closed one, and a JSON array target.
#[test]
fn route_across_threads_writes_what_one_thread_writes() {
    let dir = scratch("route-threads");
    let data = data_file(&dir);
    let mut text = std::fs::read_to_string(&data).unwrap();
    let long = format!(
        "{{\"id\": \"long\", \"low\": 1, \"high\": 2, \"note\": \"{}\"}}\n",
        "z".repeat(1_500_000)
    );
    let middle = text[..text.len() / 2].rfind('\n').unwrap() + 1;
    text.insert_str(middle, &long);
    let tail = text.clone();
    text.push_str(&tail.replace('\u{feff}', ""));
    std::fs::write(&data, text).unwrap();
    let nested = "type Part : TypeContract = {\n    id: String\n    low: Int\n    high: Int\n    \
                  note?: String\n    require ordered: low <= high\n}\n\
                  type R : DataContract = {\n    id: String\n    low: Int\n    high: Int\n    \
                  note?: String\n    parts?: List[Part]\n}\n";
    for (n, contract) in [
        contract_r(""),
        contract_r("    warn small: low < 6\n"),
        nested.to_string(),
    ]
    .iter()
    .enumerate()
    {
        let route = |tag: &str| {
            format!(
                "{contract}source(file({:?}), Json) | validate(R) | route(ok: file({:?}), err: file({:?}))\n",
                data.to_string_lossy(),
                dir.join(format!("ok-{tag}.jsonl")).to_string_lossy(),
                dir.join(format!("err-{tag}.json")).to_string_lossy(),
            )
        };
        let read = |tag: &str| {
            let ok = std::fs::read(dir.join(format!("ok-{tag}.jsonl"))).unwrap();
            let err = std::fs::read(dir.join(format!("err-{tag}.json"))).unwrap();
            (ok, err)
        };
        let one = run(&dir, &route("1"), 1);
        let ordinary = run(&dir, &on_the_ordinary_path(&route("o")), 1);
        assert_eq!(one, ordinary, "contract {n}");
        assert_eq!(
            read("1"),
            read("o"),
            "contract {n}: one thread, ordinary path"
        );
        for threads in [2, 3] {
            let tag = format!("{threads}");
            assert_eq!(run(&dir, &route(&tag), threads), one, "contract {n}");
            assert_eq!(read(&tag), read("1"), "contract {n}: {threads} threads");
        }
        assert!(one.starts_with("{total: "), "{one}");
        // `write` of the valid records alone is read the same way, to JSON
        // Lines (written a chunk at a time) and to a JSON array.
        for ext in ["jsonl", "json"] {
            let write = |tag: &str| {
                format!(
                    "{contract}source(file({:?}), Json) | validate(R) | oks() | write(file({:?}))\n",
                    data.to_string_lossy(),
                    dir.join(format!("w-{tag}.{ext}")).to_string_lossy(),
                )
            };
            let read = |tag: &str| std::fs::read(dir.join(format!("w-{tag}.{ext}"))).unwrap();
            let written = run(&dir, &on_the_ordinary_path(&write("o")), 1);
            for threads in [1, 2, 3] {
                let tag = format!("{threads}");
                assert_eq!(run(&dir, &write(&tag), threads), written, "contract {n}");
                assert_eq!(
                    read(&tag),
                    read("o"),
                    "contract {n}: write, {threads} threads"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Targets written on several threads are committed with the run, as on
/// one: a runtime error later in the program leaves the old targets byte
/// for byte and no temporary beside them.
#[test]
fn a_failing_run_abandons_what_route_wrote_on_several_threads() {
    let dir = scratch("route-threads-abandon");
    let data = data_file(&dir);
    let (ok, err) = (dir.join("ok.jsonl"), dir.join("err.jsonl"));
    std::fs::write(&ok, "old ok\n").unwrap();
    std::fs::write(&err, "old err\n").unwrap();
    let program = format!(
        "{}source(file({:?}), Json) | validate(R) | route(ok: file({:?}), err: file({:?}))\n\
         [0] | map(z => 1 / z) | count()\n",
        contract_r(""),
        data.to_string_lossy(),
        ok.to_string_lossy(),
        err.to_string_lossy(),
    );
    let file = dir.join("p.hql");
    std::fs::write(&file, program).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", "--threads", "2"])
        .arg(&file)
        .output()
        .expect("hql runs");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&ok).unwrap(), "old ok\n");
    assert_eq!(std::fs::read_to_string(&err).unwrap(), "old err\n");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains("hql-tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A data file of a few megabytes: `data_file`'s lines, four times.
fn big_data_file(dir: &Path) -> PathBuf {
    let data = data_file(dir);
    let text = std::fs::read_to_string(&data).unwrap();
    let again = text.replace('\u{feff}', "");
    std::fs::write(&data, format!("{text}{again}{again}{again}")).unwrap();
    data
}

/// `hql run` of `program` with `args`: standard output, standard error and
/// the exit status.
fn run_full(dir: &Path, program: &str, args: &[&str]) -> (String, String, Option<i32>) {
    let file = dir.join("full.hql");
    std::fs::write(&file, program).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hql"))
        .arg("run")
        .args(args)
        .arg(&file)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("hql runs");
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code(),
    )
}

/// `source(file(data), Json) | validate(R)`.
fn validated(data: &Path) -> String {
    format!(
        "source(file({:?}), Json) | validate(R)",
        data.to_string_lossy()
    )
}

/// Run `program` (with `args`) on the ordinary path, then on 1, 2 and 3
/// threads: the same output, status and `targets` (files in `dir`) each
/// time. The ordinary path's output.
fn runs_as_the_ordinary_path(dir: &Path, program: &str, args: &[&str], targets: &[&str]) -> String {
    let files = || -> Vec<Vec<u8>> {
        (targets.iter())
            .map(|f| std::fs::read(dir.join(f)).unwrap())
            .collect()
    };
    let ordinary = run_full(dir, &on_the_ordinary_path(program), args);
    assert_eq!(ordinary.2, Some(0), "{}", ordinary.1);
    let written = files();
    for threads in ["1", "2", "3"] {
        let with = [args, &["--threads", threads]].concat();
        assert_eq!(
            run_full(dir, program, &with),
            ordinary,
            "{args:?}, {threads} threads"
        );
        assert_eq!(files(), written, "{args:?}, {threads} threads");
    }
    ordinary.0
}

/// `validate(T)` followed by `oks()`, `errs()`, `map(f)` and `filter(f)`,
/// counted, written or printed, gives on several threads byte for byte
/// what one thread gives, and what the ordinary path gives.
#[test]
fn stages_after_validate_across_threads_give_what_one_thread_gives() {
    let dir = scratch("stages-threads");
    let data = big_data_file(&dir);
    let src = validated(&data);
    let target = |name: &str| dir.join(name).to_string_lossy().to_string();
    let program = format!(
        "{}fn twice(x) = x * 2\n\
         let spread = r => r.high - r.low\n\
         let diffs = {src} | oks() | map(spread) | filter(d => d > 8)\n\
         diffs | count()\n\
         diffs\n\
         {src} | oks() | map(r => r.high - r.low) | count()\n\
         {src} | oks() | filter(r => r.low > 3) | count()\n\
         {src} | oks() | map(r => r.low) | filter(x => x > 2) | count()\n\
         {src} | errs() | count()\n\
         {src} | filter(r => is_err(r)) | report()\n\
         {src} | map(r => r) | report()\n\
         {src} | errs() | write(file({:?}))\n\
         {src} | oks() | map(r => {{id: r.id, d: twice(r.low)}}) | write(file({:?}))\n\
         {src} | oks() | filter(r => r.low == 2) | map(r => r.note) | write(file({:?}))\n\
         {src} | oks() | map(r => r.high)\n\
         {src} | errs()\n\
         {src} | count()\n\
         {src} | oks()\n\
         {src}\n\
         {src} | map(r => r) | route(ok: file({:?}), err: file({:?}))\n\
         {src} | oks() | map(r => {{id: r.id}}) | route(ok: file({:?}), err: file({:?}))\n",
        contract_r("    warn short: len(note? ?? \"\") < 45\n"),
        target("errs.jsonl"),
        target("mapped.jsonl"),
        target("notes.json"),
        target("ok.jsonl"),
        target("err.json"),
        target("ids.json"),
        target("none.jsonl"),
    );
    let targets = [
        "errs.jsonl",
        "mapped.jsonl",
        "notes.json",
        "ok.jsonl",
        "err.json",
        "ids.json",
        "none.jsonl",
    ];
    for format in ["hql", "json"] {
        let printed = runs_as_the_ordinary_path(&dir, &program, &["--format", format], &targets);
        if format == "hql" {
            assert_eq!(printed.lines().count(), 18, "{printed}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A contract that fills defaults is read by decoding each line: `route`,
/// `write` of its valid records and printing still give on several threads
/// what one thread gives.
#[test]
fn a_contract_with_defaults_spreads_as_one_thread_reads_it() {
    let dir = scratch("stages-threads-defaults");
    let data = big_data_file(&dir);
    let src = validated(&data);
    let target = |name: &str| dir.join(name).to_string_lossy().to_string();
    let program = format!(
        "type R : DataContract = {{\n    id: String\n    low: Int\n    high: Int\n    \
         note?: String\n    tag: String = \"none\"\n    require ordered: low <= high\n}}\n\
         {src} | route(ok: file({:?}), err: file({:?}))\n\
         {src} | oks() | write(file({:?}))\n\
         {src} | oks() | map(r => r.tag) | take(3)\n",
        target("ok.jsonl"),
        target("err.jsonl"),
        target("valid.json"),
    );
    let printed = runs_as_the_ordinary_path(
        &dir,
        &program,
        &[],
        &["ok.jsonl", "err.jsonl", "valid.json"],
    );
    assert!(
        printed.ends_with("[\"none\", \"none\", \"none\"]\n"),
        "{printed}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A lambda that fails on a record in the middle of the file stops the
/// run on several threads as on one: the same message and origin (the
/// first failing record in the file's order), and the target untouched.
#[test]
fn a_failing_lambda_stops_the_run_as_on_one_thread() {
    let dir = scratch("stages-threads-error");
    let data = big_data_file(&dir);
    let out = dir.join("out.jsonl");
    std::fs::write(&out, "old\n").unwrap();
    let src = format!("{} | oks()", validated(&data));
    let fails = "map(r => if r.id == \"r15000\" or r.id == \"r19000\" then 1 / 0 else r.low)";
    for end in [
        "count()".to_string(),
        format!("write(file({:?}))", out.to_string_lossy()),
        "take(5000000)".to_string(),
    ] {
        let program = format!("{}{src} | {fails} | {end}\n", contract_r(""));
        let one = run_full(&dir, &program, &["--threads", "1"]);
        assert_eq!(one.2, Some(1), "{}", one.1);
        assert!(one.1.contains("records.jsonl:15"), "{}", one.1);
        for threads in ["2", "3"] {
            assert_eq!(run_full(&dir, &program, &["--threads", threads]), one);
        }
        for format in ["hql", "json"] {
            let printed = format!("{}{src} | {fails}\n", contract_r(""));
            let one = run_full(&dir, &printed, &["--format", format, "--threads", "1"]);
            assert_eq!(one.2, Some(1));
            let two = run_full(&dir, &printed, &["--format", format, "--threads", "2"]);
            assert_eq!(two, one, "printed as {format}");
        }
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A lambda that reads a parameter (itself or through a declared
/// function), closes over a function's parameter, or reads standard input
/// keeps the pipeline on one thread, with the answer one thread gives.
#[test]
fn lambdas_reading_more_than_constants_stay_on_one_thread() {
    let dir = scratch("stages-threads-local");
    let data = big_data_file(&dir);
    let src = format!("{} | oks()", validated(&data));
    let program = format!(
        "{}fn above(k) = {src} | filter(r => r.low > k) | count()\n\
         fn limit() = len(param(\"k\", \"abc\"))\n\
         above(3)\n\
         {src} | filter(r => r.low > limit()) | count()\n\
         {src} | filter(r => r.low > 3) | count()\n\
         {src} | filter(r => r.low > len(param(\"k\", \"abc\"))) | count()\n",
        contract_r("")
    );
    // Standard input can be read once: a lambda reading it fails on the
    // second record, as on one thread.
    let stdin = format!(
        "{}{src} | filter(r => r.low > (source(stdin(), Json) | count())) | count()\n",
        contract_r("")
    );
    let one_stdin = run_full(&dir, &stdin, &["--threads", "1"]);
    assert_eq!(one_stdin.2, Some(1));
    assert!(one_stdin.1.contains("hql::stdin_twice"), "{}", one_stdin.1);
    assert_eq!(run_full(&dir, &stdin, &["--threads", "3"]), one_stdin);
    let one = run_full(&dir, &program, &["--threads", "1"]);
    assert_eq!(one.2, Some(0), "{}", one.1);
    let lines: Vec<&str> = one.0.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(lines.iter().all(|l| *l == lines[0]), "{lines:?}");
    assert_eq!(run_full(&dir, &program, &["--threads", "3"]), one);
    std::fs::remove_dir_all(&dir).ok();
}

/// The contracts with unique keys the spread stages are checked with: one
/// key, one key with warnings, and two keys (one of two fields) with
/// warnings, which a record claims both or neither of.
const KEYED_CONTRACTS: [&str; 3] = [
    "    unique id\n",
    "    unique id\n    warn short: len(note? ?? \"\") < 45\n",
    "    unique (low, high)\n    unique id\n    warn short: len(note? ?? \"\") < 45\n",
];

/// `R` of the keyed files, with `more` in its body.
fn keyed_contract(more: &str) -> String {
    format!(
        "type R : DataContract = {{\n    id?: String\n    low: Int\n    high: Int\n    \
         note?: String\n    require ordered: low <= high\n{more}}}\n"
    )
}

/// With unique keys, `validate(T)` followed by stages, counted, reported,
/// written, routed or printed, gives on several threads byte for byte what
/// one thread and the ordinary path give: the workers leave the keys to
/// this thread, which runs again each record whose key was taken before
/// it, in the place of the worker's item.
#[test]
fn stages_with_unique_keys_across_threads_give_what_one_thread_gives() {
    let dir = scratch("keyed-stages");
    let data = keyed_file(&dir);
    let src = validated(&data);
    let target = |name: &str| dir.join(name).to_string_lossy().to_string();
    let targets = [
        "errs.jsonl",
        "mapped.jsonl",
        "ok.jsonl",
        "err.jsonl",
        "ids.json",
    ];
    for (n, more) in KEYED_CONTRACTS.iter().enumerate() {
        let program = format!(
            "{}{src} | oks() | map(r => r.low) | count()\n\
             {src} | errs() | count()\n\
             {src} | map(r => r) | report()\n\
             {src} | filter(r => is_ok(r)) | report()\n\
             {src} | errs() | write(file({:?}))\n\
             {src} | oks() | map(r => {{id: r.id?, d: r.high - r.low}}) | write(file({:?}))\n\
             {src} | route(ok: file({:?}), err: file({:?}))\n\
             {src} | oks() | map(r => {{id: r.id?}}) | route(ok: file({:?}), err: file({:?}))\n\
             {src} | errs() | map(r => r.failures)\n\
             {src} | oks() | map(r => r.id?)\n\
             {src}\n",
            keyed_contract(more),
            target("errs.jsonl"),
            target("mapped.jsonl"),
            target("ok.jsonl"),
            target("err.jsonl"),
            target("ids.json"),
            target("none.jsonl"),
        );
        let formats: &[&str] = if n == 0 { &["hql", "json"] } else { &["hql"] };
        for format in formats {
            let printed =
                runs_as_the_ordinary_path(&dir, &program, &["--format", format], &targets);
            if *format == "hql" {
                assert_eq!(printed.lines().count(), 11, "{more}");
                assert!(printed.contains("R.id.unique"), "{more}");
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A file over the splitting threshold of records with distinct ids but
/// for `dup`, first on line 1 with `low` 0, again on line `again` with
/// `low` 3; and `boom` on line `boom`, if given.
fn file_with_a_repeat(dir: &Path, again: usize, boom: Option<usize>) -> PathBuf {
    let lines: Vec<String> = (1..=24_000)
        .map(|line| {
            let (id, low) = match line {
                1 => ("dup".to_string(), 0),
                _ if line == again => ("dup".to_string(), 3),
                _ if Some(line) == boom => ("boom".to_string(), 3),
                _ => (format!("r{line}"), line % 5),
            };
            format!(
                "{{\"id\": \"{id}\", \"low\": {low}, \"high\": 9, \"note\": \"{}\"}}",
                "z".repeat(line % 40)
            )
        })
        .collect();
    let path = write_lines(dir, "repeat.jsonl", &lines);
    assert!(std::fs::metadata(&path).unwrap().len() > 1 << 20);
    path
}

/// A record a worker takes for valid whose key was taken before it, and
/// whose item fails downstream, fails on no thread: this thread runs the
/// rest of its chunk again, as one thread runs it. An error after it
/// stops the run as on one thread; and a record that fails only once its
/// key is found taken stops it too.
#[test]
fn an_error_a_repeated_key_decides_is_one_threads_error() {
    let dir = scratch("keyed-error");
    let out = dir.join("out.jsonl");
    // `dup` on line 15000 fails in the map while taken for valid.
    let fails =
        "map(r => if r.id == \"boom\" or (r.id == \"dup\" and r.low == 3) then 1 / 0 else r.low)";
    for boom in [None, Some(15_010), Some(22_000)] {
        let data = file_with_a_repeat(&dir, 15_000, boom);
        let src = format!("{} | oks()", validated(&data));
        for end in [
            "count()".to_string(),
            "report()".to_string(),
            format!("write(file({:?}))", out.to_string_lossy()),
            "take(5000000) | count()".to_string(),
        ] {
            std::fs::write(&out, "old\n").unwrap();
            let program = format!(
                "{}{src} | {fails} | {end}\n",
                keyed_contract("    unique id\n")
            );
            let one = run_full(&dir, &program, &["--threads", "1"]);
            let written = std::fs::read(&out).unwrap();
            match boom {
                None => assert_eq!(one.2, Some(0), "{}", one.1),
                Some(line) => {
                    assert_eq!(one.2, Some(1), "{}", one.1);
                    assert!(one.1.contains(&format!("repeat.jsonl:{line}")), "{}", one.1);
                }
            }
            for threads in ["2", "3"] {
                std::fs::write(&out, "old\n").unwrap();
                let many = run_full(&dir, &program, &["--threads", threads]);
                assert_eq!(many, one, "{boom:?}, {end}, {threads} threads");
                assert_eq!(std::fs::read(&out).unwrap(), written);
            }
        }
        // The repeat's failure record fails in the map, on line 15000.
        let program = format!(
            "{}{} | errs() | map(r => if r.failures[0].kind == \"unique\" then 1 / 0 else 0) | count()\n",
            keyed_contract("    unique id\n"),
            validated(&data)
        );
        let one = run_full(&dir, &program, &["--threads", "1"]);
        assert_eq!(one.2, Some(1), "{}", one.1);
        assert!(one.1.contains("repeat.jsonl:15000"), "{}", one.1);
        assert_eq!(run_full(&dir, &program, &["--threads", "2"]), one);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A repeated key's failure names the line of the record that claimed the
/// key (language.md §4.3), whichever path reads the file: printed,
/// written, routed to dead letters, on one thread or several, and on the
/// ordinary path. Keys out of order (the set's table) as well as in order
/// (its run).
#[test]
fn a_repeated_key_names_the_line_that_claimed_it_on_every_path() {
    let dir = scratch("keyed-claimer");
    let claimed = "the key (id) of R was already taken by the record at line 1";
    for again in [300, 23_500] {
        let data = file_with_a_repeat(&dir, again, None);
        let src = validated(&data);
        let target = |name: &str| dir.join(name).to_string_lossy().to_string();
        let program = format!(
            "{}{src} | errs() | map(e => {{line: e.origin.line, message: e.failures[0].message}})\n\
             {src} | errs() | write(file({:?}))\n\
             {src} | route(ok: file({:?}), err: file({:?}))\n",
            keyed_contract("    unique id\n"),
            target("errs.jsonl"),
            target("ok.jsonl"),
            target("dead.jsonl"),
        );
        let targets = ["errs.jsonl", "dead.jsonl"];
        let printed = runs_as_the_ordinary_path(&dir, &program, &[], &targets);
        assert!(
            printed.contains(&format!("{{line: {again}, message: \"{claimed}\"}}")),
            "{printed}"
        );
        for file in targets {
            let text = std::fs::read_to_string(dir.join(file)).unwrap();
            assert_eq!(text.matches(claimed).count(), 1, "{file}: {text}");
        }
    }
    // Keys out of order: each repeat names its own first line.
    let lines: Vec<String> = (1..=30_000u64)
        .map(|line| {
            let id = (line * 7_919) % 20_011;
            format!("{{\"id\": \"k{id}\", \"low\": 1, \"high\": 9, \"note\": \"{line}\"}}")
        })
        .collect();
    let data = write_lines(&dir, "shuffled.jsonl", &lines);
    let program = format!(
        "{}{} | errs() | map(e => [e.origin.line, e.failures[0].message])\n",
        keyed_contract("    unique id\n"),
        validated(&data)
    );
    let printed = runs_as_the_ordinary_path(&dir, &program, &[], &[]);
    let mut first = std::collections::HashMap::new();
    let mut expected = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let id = line.split('"').nth(3).unwrap();
        match first.get(id) {
            Some(at) => expected.push(format!(
                "[{}, \"the key (id) of R was already taken by the record at line {at}\"]",
                n + 1
            )),
            None => {
                first.insert(id, n + 1);
            }
        }
    }
    assert_eq!(expected.len(), 30_000 - 20_011);
    assert_eq!(printed, format!("[{}]\n", expected.join(", ")));
    std::fs::remove_dir_all(&dir).ok();
}
