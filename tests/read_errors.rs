//! A file whose reading fails part-way is taken as `source` takes it —
//! the line being read is lost and one failure stands in its place — by
//! `count()`, `report()`, stages after `validate`, `route`, `write` and the
//! progress meter, on one thread, on several, with unique keys or without,
//! and on the ordinary path alike.

mod common;

use std::collections::HashMap;
use std::ops::Range;
use std::rc::Rc;
use std::sync::Arc;

use common::{MemHost, Run};
use hql::cli::run::OutputFormat;
use hql::runtime::eval::meter::Reading;
use hql::session::Session;

/// The file `data.jsonl` holding `text`, whose bytes in `bad` cannot be
/// read (`MemHost::failing`).
#[derive(Clone)]
struct FailingDisk {
    text: Arc<String>,
    bad: Range<usize>,
}

impl FailingDisk {
    fn new(text: String, bad: Range<usize>) -> FailingDisk {
        FailingDisk {
            text: Arc::new(text),
            bad,
        }
    }

    fn host(&self) -> MemHost {
        MemHost::new(&[("data.jsonl", &self.text)], None).failing("data.jsonl", self.bad.clone())
    }
}

/// Run `program` on `disk`, on `threads` threads (`None`: as a session
/// without threads runs it): what it printed, its exit status, and the
/// targets it committed.
fn run(
    disk: &FailingDisk,
    program: &str,
    threads: Option<usize>,
) -> (String, i32, HashMap<String, String>) {
    let (run, written, _) = run_watched(disk, program, threads);
    (run.out, run.status, written)
}

/// `run`, with a progress meter watching: what it read at the end.
fn run_watched(
    disk: &FailingDisk,
    program: &str,
    threads: Option<usize>,
) -> (Run, HashMap<String, String>, Reading) {
    let host = Rc::new(disk.host());
    let mut session = Session::new(host.clone());
    let meter = session.interp().watch();
    if let Some(threads) = threads {
        let disk = disk.clone();
        session.set_threads(threads, Arc::new(move || Rc::new(disk.host())));
    }
    let run = common::submit(&mut session, program, OutputFormat::Hql);
    assert!(run.err.is_empty() || run.status != 0, "{}", run.err);
    let written = host.written.borrow().clone();
    (run, written, meter.reading())
}

/// Over a megabyte of records whose ids repeat, some invalid, some with
/// no id, and a line that does not decode now and then.
fn records() -> String {
    let mut text = String::new();
    for i in 0..24_000u64 {
        let id = (i * 7919) % 9_000;
        let line = match i % 89 {
            0 => "{\"id\": \"r1\"".to_string(),
            1 => format!("{{\"id\": \"r{id}\", \"low\": 9, \"high\": 1}}"),
            2 => format!("{{\"low\": 1, \"high\": {}}}", i % 30),
            _ => format!(
                "{{\"id\": \"r{id}\", \"low\": {}, \"high\": {}, \"note\": \"{}\"}}",
                i % 11,
                12 + i % 40,
                "n".repeat((i % 40) as usize)
            ),
        };
        text.push_str(&line);
        text.push('\n');
    }
    assert!(text.len() > 1 << 20, "large enough to split across threads");
    text
}

/// The number written in `text` after the first `after`.
fn number_after(text: &str, after: &str) -> u64 {
    let at = text.find(after).unwrap() + after.len();
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap()
}

/// The output of `PROGRAM` with one more decode failure.
fn one_more_decode_failure(output: &str) -> String {
    let [oks, report, errs, lows] = output.lines().collect::<Vec<_>>()[..] else {
        panic!("four results: {output}");
    };
    let decode = "{rule: \"decode\", kind: \"decode\", count: ";
    let mut report = report.to_string();
    for field in ["total: ", "err: ", decode] {
        let n = number_after(&report, field);
        report = report.replacen(&format!("{field}{n}"), &format!("{field}{}", n + 1), 1);
    }
    let errs = errs.parse::<u64>().unwrap() + 1;
    format!("{oks}\n{report}\n{errs}\n{lows}\n")
}

/// After the contract: the valid records counted, the report, the
/// failures counted and a count after `map` and `filter`, each on the
/// path of its own (the counting path, and stages after `validate`).
const PROGRAM: &str = "\
source(file(\"data.jsonl\"), Json) | validate(R) | oks() | count()
source(file(\"data.jsonl\"), Json) | validate(R) | report()
source(file(\"data.jsonl\"), Json) | validate(R) | errs() | count()
source(file(\"data.jsonl\"), Json) | validate(R) | oks() | map(r => r.low) | filter(l => l > 9) | count()
";

/// `records()` on disks that fail in the middle of a line, well after the
/// first chunks: from two thirds of the file to its end (where a third
/// thread's range starts), and for a few bytes before the middle of the file,
/// after which a range that starts later reads well.
fn failing_disks() -> [FailingDisk; 2] {
    let text = records();
    let at = |fraction: f64| {
        let at = (text.len() as f64 * fraction) as usize + 17;
        assert_ne!(text.as_bytes()[at - 1], b'\n');
        at
    };
    let (to_end, window) = (at(2.0 / 3.0), at(0.45));
    [
        FailingDisk::new(text.clone(), to_end..usize::MAX),
        FailingDisk::new(text, window..window + 64),
    ]
}

#[test]
fn a_read_error_part_way_counts_alike_on_every_path() {
    let contracts = [
        "",
        "    unique id\n",
        "    unique id\n    unique (low, high)\n",
    ];
    for (disk, more) in failing_disks()
        .iter()
        .flat_map(|d| contracts.map(|c| (d, c)))
    {
        let program = format!(
            "type R : DataContract = {{\n    id?: String\n    low: Int\n    high: Int\n    \
             note?: String\n    require ordered: low <= high\n{more}}}\n{PROGRAM}"
        );
        let (one, status, _) = run(disk, &program, None);
        assert_eq!(status, 0, "{more}: {one}");
        // The whole lines before the failure are counted as they would be
        // alone, with one more decode failure, and nothing after it.
        let whole = disk.text[..disk.bad.start].rfind('\n').unwrap();
        let before = FailingDisk::new(disk.text[..=whole].to_string(), 0..0);
        let (alone, ..) = run(&before, &program, None);
        assert_eq!(one, one_more_decode_failure(&alone), "{more}");
        for threads in [1, 2, 3] {
            let (many, status, _) = run(disk, &program, Some(threads));
            assert_eq!(
                (many, status),
                (one.clone(), 0),
                "{more}: {threads} threads"
            );
        }
        let ordinary = program.replace("Json) | validate", "Json) | take(1000000) | validate");
        let (ordinarily, status, _) = run(disk, &ordinary, None);
        assert_eq!((ordinarily, status), (one, 0), "{more}: ordinary");
    }
}

/// `route` and `write` across threads commit what one thread commits when
/// the file fails part-way: the records before the failure, and the
/// failure among the `err`s.
#[test]
fn a_read_error_part_way_routes_alike_on_every_path() {
    // Unique keys keep `route` and `write` on one thread.
    for (disk, more) in failing_disks()
        .iter()
        .flat_map(|d| ["", "    unique id\n"].map(|c| (d, c)))
    {
        let program = format!(
            "type R : DataContract = {{\n    id?: String\n    low: Int\n    high: Int\n    \
             note?: String\n    require ordered: low <= high\n{more}}}\n\
             source(file(\"data.jsonl\"), Json) | validate(R) \
             | route(ok: file(\"ok.jsonl\"), err: file(\"err.jsonl\"))\n\
             source(file(\"data.jsonl\"), Json) | validate(R) | oks() \
             | map(r => {{id: r.id?, low: r.low}}) | write(file(\"lows.jsonl\"))\n"
        );
        let one = run(disk, &program, None);
        assert_eq!(one.1, 0, "{more}: {one:?}");
        let written = &one.2;
        let mut targets: Vec<_> = written.keys().collect();
        targets.sort();
        assert_eq!(targets, ["err.jsonl", "lows.jsonl", "ok.jsonl"], "{more}");
        let errs = &written["err.jsonl"];
        assert!(
            errs.lines().last().unwrap().contains("the disk went away"),
            "{more}: {errs}"
        );
        for threads in [1, 2, 3] {
            let many = run(disk, &program, Some(threads));
            assert_eq!(many, one, "{more}: {threads} threads");
        }
        let ordinary = program.replace("Json) | validate", "Json) | take(1000000) | validate");
        assert_eq!(run(disk, &ordinary, None), one, "{more}: ordinary");
    }
}

/// The progress meter counts the records, `ok`s and `err`s the report
/// counts, on one thread and on several, with unique keys or without, up
/// to a read error and past it; on the counting path, and through a stage
/// (where a record whose key was taken turns from `ok` to `err`).
#[test]
fn the_meter_counts_what_the_report_counts() {
    let whole = FailingDisk::new(records(), 0..0);
    let disks = failing_disks();
    let ends = ["report()", "map(r => r) | report()"];
    for disk in [&whole, &disks[0], &disks[1]] {
        for (more, end) in ["", "    unique id\n"]
            .iter()
            .flat_map(|more| ends.map(|end| (more, end)))
        {
            let program = format!(
                "type R : DataContract = {{\n    id?: String\n    low: Int\n    high: Int\n    \
                 note?: String\n    require ordered: low <= high\n{more}}}\n\
                 source(file(\"data.jsonl\"), Json) | validate(R) | {end}\n"
            );
            let (run, _, one) = run_watched(disk, &program, None);
            let number = |field| number_after(&run.out, field);
            let counted = (number("total: "), number("ok: "), number("err: "));
            assert_eq!(
                (one.records, one.oks, one.errs),
                counted,
                "{more}: {}",
                run.out
            );
            for threads in [2, 3] {
                let (.., many) = run_watched(disk, &program, Some(threads));
                assert_eq!(
                    (many.records, many.oks, many.errs),
                    counted,
                    "{more}: {threads} threads"
                );
            }
        }
    }
}
