//! What the data targets share: the contracts records are checked against,
//! a scratch file per process, and a session on the real host that runs
//! pipelines over it.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

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
"#;

/// The contracts a data target checks each input against.
pub const TYPES: [&str; 2] = ["Order", "Strict"];

/// A file of this process for the input, with the given extension.
pub fn scratch(ext: &str) -> PathBuf {
    std::env::temp_dir().join(format!("hql-fuzz-{}.{ext}", std::process::id()))
}

thread_local! {
    /// A session with the contracts declared, and how many entries it has
    /// run: building one per input would spend most of the time on the
    /// standard library.
    static SESSION: RefCell<(Session, usize)> = RefCell::new((fresh(), 0));
}

fn fresh() -> Session {
    let mut session = Session::new(Rc::new(FsHost::new()));
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
    SESSION.with(|cell| {
        let mut cell = cell.borrow_mut();
        // A session keeps every entry's text: start afresh now and then.
        if cell.1 == 5_000 {
            *cell = (fresh(), 0);
        }
        cell.1 += 1;
        submit(&mut cell.0, entry)
    })
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
