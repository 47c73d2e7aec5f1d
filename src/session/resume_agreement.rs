//! The differential tests of the kept checker (`check::Resumable`): a
//! session that checks an entry of `let`s and expressions against what it
//! kept prints, entry by entry, exactly what a session that checks the
//! whole history again prints — values, diagnostics and exit statuses —
//! across entries that fail to check, fail while running, redefine `let`s
//! that function bodies, rules and defaults read, and redeclare functions
//! and types. And the kept checker is what checks such entries, so that an
//! entry costs the same however long the session.

use std::rc::Rc;

use super::{Session, Sinks};
use crate::runtime::print::to_hql;
use crate::session::memory::MemHost;

const DATA: &str = "{\"n\": 1, \"s\": \"a\"}\n{\"n\": -2, \"s\": \"b\"}\n{\"s\": \"c\"}\n";

fn new_session() -> Session {
    Session::new(Rc::new(MemHost::new(&[("data.jsonl", DATA)], None)))
}

/// Submit an entry; what it printed and its exit status.
fn submit(session: &mut Session, n: usize, text: &str) -> (i32, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut sinks = Sinks::plain(&mut out, &mut err);
    let name = format!("<repl:{n}>");
    let status = session.submit(&name, text, &mut sinks, &mut |v, sinks| {
        writeln!(sinks.out, "{}", to_hql(&v)).expect("written to memory");
        Ok(())
    });
    let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8");
    (status, text(out), text(err))
}

/// Run `entries` in a session that keeps its checker and in one that
/// checks the whole history at every entry; they must print the same.
/// Returns the kept session.
fn agree(entries: &[&str]) -> Session {
    let (mut kept, mut whole) = (new_session(), new_session());
    for (n, entry) in entries.iter().enumerate() {
        whole.resumable = None;
        let by_kept = submit(&mut kept, n, entry);
        let by_whole = submit(&mut whole, n, entry);
        assert_eq!(by_kept, by_whole, "entry {n}: {entry}");
        // `:type` and completion check without keeping anything.
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut quiet = Sinks::plain(&mut out, &mut err);
        let typed = |checked: Result<crate::check::Checked, i32>| {
            checked.map(|c| c.last_type.map(|t| t.display()))
        };
        let probe = "let probe = 1\nprobe";
        let by_kept = typed(kept.check("<probe>", probe, &mut quiet));
        whole.resumable = None;
        let by_whole = typed(whole.check("<probe>", probe, &mut quiet));
        assert_eq!(by_kept, by_whole, "after entry {n}");
    }
    assert_eq!(kept.vars().len(), whole.vars().len());
    assert_eq!(kept.saved_program(), whole.saved_program());
    kept
}

#[test]
fn lets_and_expressions_agree() {
    agree(&[
        "let a = 1",
        "a + 1",
        "let a = a + 10",
        "a",
        "let m = 1\nlet n = m + a\nn",
        "let xs = [1, 2, 3]",
        "map(xs, x => x * a)",
        "xs | filter(x => x > 1) | map(x => x + n)",
        "check \"positive\": a > 0",
        "check \"small\": a < 5",
        "fmt(\"{} {}\", a, n)",
        "probe",
        "let r = {x: 1, y: \"two\"}",
        "r.y",
        ":not an entry",
    ]);
}

#[test]
fn entries_that_fail_leave_nothing_behind() {
    agree(&[
        "let a = 1",
        // Fails to check: nothing of it is kept.
        "let b = nope",
        "b",
        "let c = a + 1\nlet d = c + \"x\"\nlet e = 2",
        "c",
        "e",
        // Fails while running: the `let`s before the failure are kept.
        "let f = 1\nlet g = 1 / 0\nlet h = 3",
        "f",
        "g",
        "h",
        "let g = 2",
        "g + f",
        "[1, 2][5]",
        "a",
    ]);
}

#[test]
fn redefinitions_agree() {
    agree(&[
        "let k = 2",
        "fn f(x) = x * k",
        "f(1)",
        // `f`'s body reads `k`: whichever `k` it sees, both sessions see it.
        "let k = 3",
        "f(1)",
        "fn g() = 1",
        "let y = g()",
        "fn g() = 2",
        "g() + y",
        "let limit = 10",
        "type Row : DataContract = {\n    n: Int = limit\n    s: String\n    require n < limit\n}",
        "source(file(\"data.jsonl\"), Json) | validate(Row) | count()",
        "let limit = 0",
        "source(file(\"data.jsonl\"), Json) | validate(Row) | oks() | map(r => r.n) | collect()",
        "type Row : DataContract = {\n    n: Int\n    require n > 0\n}",
        "source(file(\"data.jsonl\"), Json) | validate(Row) | errs() | count()",
        "let limit = 5",
        "limit",
    ]);
}

#[test]
fn an_entry_of_lets_is_checked_against_the_kept_checker_alone() {
    let mut session = new_session();
    for n in 0..500 {
        let entry = format!("let v{n} = {n} + 1");
        assert_eq!(submit(&mut session, n, &entry).0, 0);
    }
    assert_eq!(
        submit(&mut session, 500, "v499 + v0"),
        (0, "501\n".into(), "".into())
    );
    let kept = session.resumable.as_ref().expect("kept");
    // The library was checked whole once; every entry since on its own.
    assert_eq!(kept.extended(), 501);
    // A failed check is taken back: the next entry is the 502nd.
    assert_ne!(submit(&mut session, 501, "let w = nope").0, 0);
    assert_eq!(session.resumable.as_ref().expect("kept").extended(), 501);
    // A declaration checks the whole program again, and makes a new one.
    assert_eq!(submit(&mut session, 502, "fn one() = 1").0, 0);
    assert_eq!(submit(&mut session, 503, "let z = one()").0, 0);
    assert_eq!(session.resumable.as_ref().expect("kept").extended(), 1);
}
