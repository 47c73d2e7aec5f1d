//! What the fuzz targets do with one input, one function a target (so
//! that `tests/fuzz_regressions.rs` replays the kept inputs through the
//! same code in an ordinary test), and what the data targets share: the
//! contracts records are checked against, a scratch file per process, and a
//! session on the real host that runs pipelines over it.
#![allow(dead_code)] // Each target uses its own part.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use hql::cli::run::{run_source, submit_captured, Captured, OutputFormat, Sinks, Source};
use hql::session::host::FsHost;
use hql::session::memory::MemHost;
use hql::session::Session;

/// Files a fuzzed program may read, so pipelines over data get exercised.
const FILES: [(&str, &str); 3] = [
    (
        "a.jsonl",
        "{\"id\": \"a1\", \"n\": 3, \"tags\": [\"x\"]}\n{\"id\": 7}\nnot json\n\n{\"id\": \"a2\", \"n\": 1e3}\n",
    ),
    ("b.csv", "id,n,when\na1,3,2024-01-02\n\"b,2\",x,\n"),
    ("c.json", "[{\"k\": 1}, {\"k\": [1, {\"z\": null}]}]"),
];

/// The `program` target: arbitrary text as a program, through lex → parse
/// → check → run on an in-memory host: a diagnostic or a result, never a
/// panic or a hang.
pub fn program(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = run_source(
        &Source {
            name: "fuzz.hql",
            text,
        },
        Rc::new(MemHost::new(&FILES, None)),
        OutputFormat::Hql,
        &mut Sinks::plain(&mut out, &mut err),
    );
    let err = String::from_utf8_lossy(&err);
    assert!(matches!(status, 0..=2), "status {status}\n{err}");
}

/// The `json_lines` and `csv` targets: arbitrary bytes as a file of
/// `format` (`Json`, `Csv`), whose fast and ordinary paths must agree.
pub fn data_file(data: &[u8], format: &str) {
    let path = scratch(if format == "Csv" { "csv" } else { "jsonl" });
    std::fs::write(&path, data).expect("scratch file");
    agree(&format!(
        "source(file({:?}), {format})",
        path.display().to_string()
    ));
}

/// Just over the size from which a file is split (`MIN_SPLIT_BYTES`).
const LARGE: usize = (1 << 20) + 1;

/// The `threads` target: arbitrary bytes as JSON Lines, repeated into a
/// file large enough to be split across threads, counted alike on one, two
/// and three.
pub fn threads(data: &[u8]) {
    if data.is_empty() {
        return;
    }
    // Each copy on lines of its own, so that a copy's last line is whole.
    let mut text = Vec::with_capacity(LARGE + data.len() + 1);
    while text.len() < LARGE {
        text.extend_from_slice(data);
        text.push(b'\n');
    }
    let path = scratch("threads.jsonl");
    std::fs::write(&path, &text).expect("scratch file");
    let source = format!("source(file({:?}), Json)", path.display().to_string());
    agree_across_threads(&source);
}

/// Contracts of every kind, with optional fields, defaults, unions, nested
/// records, lists, standard-library types, rules and warnings.
pub const CONTRACTS: &str = r#"
type Line : Data = { sku: String, qty: Int }

type Order : DataContract = {
    id: String
    amount: Float
    note?: String
    status: "new" | "paid" | "void"
    tags: List[String] = []
    lines?: List[Line]
    email?: Email
    require amount >= 0
    require paid_has_note: status != "paid" or note?
    warn big: amount < 1000
}

type Strict : TypeContract = {
    id: Int
    when?: Timestamp
    name: String | Null
    require id > 0
}

type Keyed : DataContract = {
    id?: String | Int
    part: String | Null
    n: Int
    require n >= 0
    warn small: n < 1000
    unique id
    unique (part, n)
}
"#;

/// The contracts a data target checks each input against.
pub const TYPES: [&str; 3] = ["Order", "Strict", "Keyed"];

/// A file of this process for the input, with the given extension.
pub fn scratch(ext: &str) -> PathBuf {
    std::env::temp_dir().join(format!("hql-fuzz-{}.{ext}", std::process::id()))
}

thread_local! {
    /// A session with the contracts declared, and how many entries it has
    /// run: building one per input would spend most of the time on the
    /// standard library.
    static SESSION: RefCell<(Session, usize)> = RefCell::new((fresh(None), 0));
    /// The same on each of `THREADS` threads.
    static THREADED: RefCell<Vec<(Session, usize)>> =
        RefCell::new(THREADS.map(|n| (fresh(Some(n)), 0)).into());
}

/// The threads the `threads` target runs its files on.
const THREADS: [usize; 2] = [2, 3];

/// A session with the contracts declared, on `threads` threads if given.
fn fresh(threads: Option<usize>) -> Session {
    let mut session = Session::new(Rc::new(FsHost::new()));
    if let Some(threads) = threads {
        session.set_threads(threads, Arc::new(|| Rc::new(FsHost::new())));
    }
    let (status, _, err) = submit(&mut session, CONTRACTS);
    assert_eq!(status, 0, "the contracts must check: {err}");
    session
}

fn submit(session: &mut Session, entry: &str) -> (i32, String, String) {
    let text = Source {
        name: "fuzz.hql",
        text: entry,
    };
    let Captured { status, out, err } = submit_captured(session, &text, OutputFormat::Hql);
    (
        status,
        String::from_utf8(out).expect("stdout is UTF-8"),
        String::from_utf8(err).expect("stderr is UTF-8"),
    )
}

/// Run an entry against the contracts: its exit status and what it printed
/// on stdout and stderr.
pub fn run(entry: &str) -> (i32, String, String) {
    SESSION.with(|cell| run_in(&mut cell.borrow_mut(), None, entry))
}

/// Run an entry in `session`, which has run `runs` entries.
fn run_in(
    (session, runs): &mut (Session, usize),
    threads: Option<usize>,
    entry: &str,
) -> (i32, String, String) {
    // A session keeps every entry's text: start afresh now and then.
    if *runs == 5_000 {
        *session = fresh(threads);
        *runs = 0;
    }
    *runs += 1;
    submit(session, entry)
}

/// The fast consumers (`report()`, `oks() | count()`) of `validate(T)` over
/// `source` against the same consumers after a `filter` that keeps every
/// item, which takes the ordinary path: both must print the same.
pub fn agree(source: &str) {
    for ty in TYPES {
        for consumer in ["report()", "oks() | count()", "errs() | count()"] {
            let fast = format!("{source} | validate({ty}) | {consumer}");
            let slow = format!("{source} | validate({ty}) | filter(r => true) | {consumer}");
            let (a, b) = (run(&fast), run(&slow));
            assert_eq!(a, b, "the two paths disagree on {ty} with {consumer}");
            assert!(a.0 == 0 || a.0 == 1, "status {}: {}", a.0, a.2);
        }
    }
}

/// The fast consumers of `validate(T)` over `source` on two and on three
/// threads against the same on one thread: all must print the same.
pub fn agree_across_threads(source: &str) {
    for ty in TYPES {
        for consumer in ["report()", "oks() | count()", "errs() | count()"] {
            let entry = format!("{source} | validate({ty}) | {consumer}");
            let one = run(&entry);
            THREADED.with(|cell| {
                for (threads, session) in THREADS.into_iter().zip(cell.borrow_mut().iter_mut()) {
                    let many = run_in(session, Some(threads), &entry);
                    assert_eq!(
                        many, one,
                        "{threads} threads disagree on {ty} with {consumer}"
                    );
                }
            });
        }
    }
}
