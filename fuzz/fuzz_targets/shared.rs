//! What the data targets share: the contracts records are checked against,
//! a scratch file per process, and a session on the real host that runs
//! pipelines over it.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use hql::cli::run::{submit_captured, Captured, OutputFormat, Source};
use hql::session::host::FsHost;
use hql::session::Session;

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
#[allow(dead_code)] // Not the `threads` target's: its large files would take long.
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
#[allow(dead_code)] // Only the `threads` target splits its files.
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
