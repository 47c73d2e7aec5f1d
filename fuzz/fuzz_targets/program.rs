//! Arbitrary text as a program, through lex → parse → check → run on an
//! in-memory host with a few data files: a diagnostic or a result, never a
//! panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

use std::rc::Rc;

use hql::cli::run::{run_source, OutputFormat, Sinks, Source};
use hql::session::memory::MemHost;

/// Files a program may read, so pipelines over data get exercised.
const FILES: [(&str, &str); 3] = [
    (
        "a.jsonl",
        "{\"id\": \"a1\", \"n\": 3, \"tags\": [\"x\"]}\n{\"id\": 7}\nnot json\n\n{\"id\": \"a2\", \"n\": 1e3}\n",
    ),
    ("b.csv", "id,n,when\na1,3,2024-01-02\n\"b,2\",x,\n"),
    ("c.json", "[{\"k\": 1}, {\"k\": [1, {\"z\": null}]}]"),
];

fuzz_target!(|data: &[u8]| {
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
});
