//! Micro-benchmarks of the hot paths: decoding a line, checking a line
//! against a contract as it is read, validating a record, one rule, one
//! regex check. They guide work on the evaluator; whole-process comparisons
//! with other tools live in `bench/`.

use std::hint::black_box;
use std::io::Cursor;
use std::rc::Rc;

use criterion::{criterion_group, criterion_main, Criterion};
use hql::cli::kernel::Kernel;
use hql::runtime::eval::Host;
use hql::runtime::json::Decoder;
use hql::runtime::scan::LineCheck;

const LINE: &[u8] = br#"{"order_id": "o17", "status": "shipped", "amount": 312.5, "customer_email": "user17@example.com", "low": 3, "high": 40, "note": "leave at door", "channel": "web"}"#;

const CONTRACT: &str = r#"type Order : DataContract = {
    order_id: String
    status: "open" | "shipped" | "cancelled"
    amount: Float
    customer_email?: String | Null
    low: Int
    high: Int
    require amount >= 0
    require low <= high
    require customer_email? == null or matches(customer_email?, r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
}
"#;

/// Records a pipeline reads, so that setting up the session costs little
/// beside them.
const RECORDS: usize = 50_000;

/// A host with one file, `orders.jsonl`: `LINE`, `RECORDS` times.
struct Lines(Rc<[u8]>);

impl Lines {
    fn new() -> Lines {
        let mut text = Vec::new();
        for _ in 0..RECORDS {
            text.extend_from_slice(LINE);
            text.push(b'\n');
        }
        Lines(text.into())
    }
}

impl Host for Lines {
    fn open_file(&self, _path: &str) -> std::io::Result<Box<dyn std::io::BufRead>> {
        Ok(Box::new(Cursor::new(self.0.clone())))
    }

    fn stdin(&self) -> Option<Box<dyn std::io::BufRead>> {
        None
    }
}

fn decode(c: &mut Criterion) {
    let mut decoder = Decoder::new();
    c.bench_function("decode one order line", |b| {
        b.iter(|| decoder.decode(black_box(LINE)))
    });
}

/// The line check `count()` and `report()` use, on one line (no record is
/// built).
fn line_check(c: &mut Criterion) {
    let mut kernel = Kernel::new(Rc::new(Lines::new()));
    let out = kernel.execute("contract.hql", CONTRACT);
    assert_eq!(out.status, 0, "{}", out.diagnostics);
    let contract = kernel.session().contract("Order").expect("declared");
    let interp = kernel.session().interp().clone();
    let mut check = LineCheck::new(&contract, &interp).expect("a record contract");
    c.bench_function("line check of one order line", |b| {
        b.iter(|| check.verdict(&interp, black_box(LINE)))
    });
}

/// Run `program` over `RECORDS` lines: the cost of a record is the time
/// divided by `RECORDS`.
fn pipeline(c: &mut Criterion, name: &str, program: &str) {
    let text = format!("{CONTRACT}\n{program}\n");
    let host = Rc::new(Lines::new());
    let mut group = c.benchmark_group("pipelines");
    group.sample_size(10);
    group.bench_function(name, |b| {
        b.iter(|| {
            let mut kernel = Kernel::new(host.clone());
            let out = kernel.execute("bench.hql", &text);
            assert_eq!(out.status, 0, "{}", out.diagnostics);
            out.text
        })
    });
    group.finish();
}

fn validate(c: &mut Criterion) {
    pipeline(
        c,
        "decode + validate 50k orders (the ordinary path)",
        r#"source(file("orders.jsonl"), Json) | validate(Order) | oks() | count()"#,
    );
    pipeline(
        c,
        "decode only, 50k orders",
        r#"source(file("orders.jsonl"), Json) | count()"#,
    );
}

fn rule_and_regex(c: &mut Criterion) {
    pipeline(
        c,
        "one rule over 50k records",
        r#"source(file("orders.jsonl"), Json) | filter(o => o.low <= o.high) | count()"#,
    );
    pipeline(
        c,
        "one regex check over 50k records",
        r#"source(file("orders.jsonl"), Json) | filter(o => matches(o.customer_email, r"^[^@\s]+@[^@\s]+\.[^@\s]+$")) | count()"#,
    );
}

criterion_group!(hot_paths, decode, line_check, validate, rule_and_regex);
criterion_main!(hot_paths);
