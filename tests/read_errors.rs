//! A file whose reading fails part-way: `count()` and `report()` take the
//! failure as `source` does — the line being read is lost and one failure
//! stands in its place — on one thread, on several, with unique keys or
//! without, after stages, and on the ordinary path alike.

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::ops::Range;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use hql::cli::run::{print_value, OutputFormat};
use hql::runtime::eval::meter::Reading;
use hql::runtime::eval::{Host, PendingFile};
use hql::session::{Session, Sinks};

/// A host with one file, `data.jsonl`, whose bytes in `bad` cannot be
/// read: every read there is an error. Targets are kept in
/// `written` when they commit.
#[derive(Clone)]
struct FailingDisk {
    text: Arc<Vec<u8>>,
    bad: Range<usize>,
    written: Arc<Mutex<BTreeMap<String, String>>>,
}

/// A target of a `FailingDisk`, committed whole or not at all.
struct Target {
    path: String,
    bytes: Vec<u8>,
    written: Arc<Mutex<BTreeMap<String, String>>>,
}

impl Write for Target {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl PendingFile for Target {
    fn commit(self: Box<Self>) -> io::Result<()> {
        let text = String::from_utf8(self.bytes).map_err(io::Error::other)?;
        self.written.lock().unwrap().insert(self.path, text);
        Ok(())
    }

    fn abandon(self: Box<Self>) {}
}

/// A reader of a `FailingDisk`'s file from some offset on.
struct FailingReader {
    disk: FailingDisk,
    at: usize,
}

impl Read for FailingReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let bad = &self.disk.bad;
        if bad.contains(&self.at) {
            return Err(io::Error::other("the disk went away"));
        }
        // Reads are short, so that the failure comes in the middle of the
        // chunks a reader gathers.
        let mut end = self.disk.text.len().min(self.at + buf.len().min(4096));
        if self.at < bad.start {
            end = end.min(bad.start);
        }
        let n = end - self.at;
        buf[..n].copy_from_slice(&self.disk.text[self.at..end]);
        self.at = end;
        Ok(n)
    }
}

impl FailingDisk {
    fn reader(&self, path: &str, at: usize) -> io::Result<Box<dyn BufRead>> {
        if path != "data.jsonl" {
            return Err(io::ErrorKind::NotFound.into());
        }
        let reader = FailingReader {
            disk: self.clone(),
            at,
        };
        Ok(Box::new(BufReader::with_capacity(8192, reader)))
    }
}

impl Host for FailingDisk {
    fn open_file(&self, path: &str) -> io::Result<Box<dyn BufRead>> {
        self.reader(path, 0)
    }

    fn stdin(&self) -> Option<Box<dyn BufRead>> {
        None
    }

    fn open_file_at(&self, path: &str, offset: u64) -> io::Result<Box<dyn BufRead>> {
        self.reader(path, offset as usize)
    }

    fn file_len(&self, path: &str) -> Option<u64> {
        (path == "data.jsonl").then_some(self.text.len() as u64)
    }

    fn create_file(&self, path: &str) -> io::Result<Box<dyn PendingFile>> {
        Ok(Box::new(Target {
            path: path.to_string(),
            bytes: Vec::new(),
            written: self.written.clone(),
        }))
    }
}

impl FailingDisk {
    /// A disk holding `text` whose bytes in `bad` cannot be read.
    fn new(text: Vec<u8>, bad: Range<usize>) -> FailingDisk {
        FailingDisk {
            text: Arc::new(text),
            bad,
            written: Arc::default(),
        }
    }

    /// What the targets committed, taken off the disk.
    fn take_written(&self) -> BTreeMap<String, String> {
        std::mem::take(&mut *self.written.lock().unwrap())
    }
}

/// Run `program` on `disk`, on `threads` threads (`None`: as a session
/// without threads runs it): what it printed, and its exit status.
fn run(disk: &FailingDisk, program: &str, threads: Option<usize>) -> (String, i32) {
    let (out, status, _) = run_watched(disk, program, threads);
    (out, status)
}

/// `run`, with a progress meter watching: what it read at the end.
fn run_watched(
    disk: &FailingDisk,
    program: &str,
    threads: Option<usize>,
) -> (String, i32, Reading) {
    let mut session = Session::new(Rc::new(disk.clone()));
    let meter = session.interp().watch();
    if let Some(threads) = threads {
        let disk = disk.clone();
        session.set_threads(threads, Arc::new(move || Rc::new(disk.clone())));
    }
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = session.submit(
        "test.hql",
        program,
        &mut Sinks::plain(&mut out, &mut err),
        &mut |v, sinks| print_value(v, OutputFormat::Hql, sinks.out),
    );
    let err = String::from_utf8(err).unwrap();
    assert!(err.is_empty() || status != 0, "{err}");
    (String::from_utf8(out).unwrap(), status, meter.reading())
}

/// Over a megabyte of records whose ids repeat, some invalid, some with
/// no id, and a line that does not decode now and then.
fn records() -> Vec<u8> {
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
    text.into_bytes()
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
        assert_ne!(text[at - 1], b'\n');
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
        let (one, status) = run(disk, &program, None);
        assert_eq!(status, 0, "{more}: {one}");
        // The whole lines before the failure are counted as they would be
        // alone, with one more decode failure, and nothing after it.
        let whole = disk.text[..disk.bad.start]
            .iter()
            .rposition(|&b| b == b'\n')
            .unwrap();
        let before = FailingDisk::new(disk.text[..=whole].to_vec(), 0..0);
        let (alone, _) = run(&before, &program, None);
        assert_eq!(one, one_more_decode_failure(&alone), "{more}");
        for threads in [1, 2, 3] {
            assert_eq!(
                run(disk, &program, Some(threads)),
                (one.clone(), 0),
                "{more}: {threads} threads"
            );
        }
        let ordinary = program.replace("Json) | validate", "Json) | take(1000000) | validate");
        assert_eq!(run(disk, &ordinary, None), (one, 0), "{more}: ordinary");
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
        let written = disk.take_written();
        assert_eq!(
            written.keys().collect::<Vec<_>>(),
            ["err.jsonl", "lows.jsonl", "ok.jsonl"],
            "{more}: {one:?}"
        );
        let errs = &written["err.jsonl"];
        assert!(
            errs.lines().last().unwrap().contains("the disk went away"),
            "{more}: {errs}"
        );
        for threads in [1, 2, 3] {
            let many = run(disk, &program, Some(threads));
            assert_eq!(many, one, "{more}: {threads} threads");
            assert_eq!(disk.take_written(), written, "{more}: {threads} threads");
        }
        let ordinary = program.replace("Json) | validate", "Json) | take(1000000) | validate");
        assert_eq!(run(disk, &ordinary, None), one, "{more}: ordinary");
        assert_eq!(disk.take_written(), written, "{more}: ordinary");
    }
}

/// The progress meter counts the records, `ok`s and `err`s the report
/// counts, on one thread and on several, with unique keys or without, up
/// to a read error and past it.
#[test]
fn the_meter_counts_what_the_report_counts() {
    let whole = FailingDisk::new(records(), 0..0);
    let disks = failing_disks();
    for disk in [&whole, &disks[0], &disks[1]] {
        for more in ["", "    unique id\n"] {
            let program = format!(
                "type R : DataContract = {{\n    id?: String\n    low: Int\n    high: Int\n    \
                 note?: String\n    require ordered: low <= high\n{more}}}\n\
                 source(file(\"data.jsonl\"), Json) | validate(R) | report()\n"
            );
            let (report, _, one) = run_watched(disk, &program, None);
            let number = |field| number_after(&report, field);
            let counted = (number("total: "), number("ok: "), number("err: "));
            assert_eq!(
                (one.records, one.oks, one.errs),
                counted,
                "{more}: {report}"
            );
            for threads in [2, 3] {
                let (_, _, many) = run_watched(disk, &program, Some(threads));
                assert_eq!(
                    (many.records, many.oks, many.errs),
                    counted,
                    "{more}: {threads} threads"
                );
            }
        }
    }
}
