//! The standard library's native twins (`runtime::stdlib_native`) against
//! the HQL definitions they replace: every `/// example:` line, and a large
//! generated corpus (valid values, near misses, calendar edges, odd
//! Unicode, empty and very long text, values of other types) for each
//! function and each type that calls one, give the same result — value or
//! error — with the twins on and with them off.

mod common;

use std::rc::Rc;

use common::MemHost;
use hql::runtime::eval::{Function, RuntimeError};
use hql::runtime::print::to_hql;
use hql::runtime::stdlib_native::{run_reference, Native};
use hql::runtime::value::Value;
use hql::session::Session;
use hql::session::Sinks;

/// A session with the twins (`native`) and one without (`reference`).
struct Pair {
    native: Session,
    reference: Session,
}

fn quiet<R>(f: impl FnOnce(&mut Sinks) -> R) -> R {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut sinks = Sinks::plain(&mut out, &mut err);
    f(&mut sinks)
}

fn session() -> Session {
    Session::new(Rc::new(MemHost::new(&[], None)))
}

/// Run `text` and give the printed form of each expression statement's value.
fn submit(session: &mut Session, text: &str) -> Vec<String> {
    let mut shown = Vec::new();
    let status = quiet(|sinks| {
        session.submit("<test>", text, sinks, &mut |v, _| {
            shown.push(to_hql(&v));
            Ok(())
        })
    });
    assert_eq!(status, 0, "{text}");
    shown
}

impl Pair {
    fn new() -> Pair {
        Pair {
            native: session(),
            reference: run_reference(session),
        }
    }

    fn submit(&mut self, text: &str) -> (Vec<String>, Vec<String>) {
        let native = submit(&mut self.native, text);
        let reference = run_reference(|| submit(&mut self.reference, text));
        (native, reference)
    }

    /// The values of the user's globals `names`, in each session.
    fn globals(&self, names: &[&str]) -> Vec<(Value, Value)> {
        let find = |s: &Session, name: &str| {
            s.vars()
                .into_iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v)
                .unwrap_or_else(|| panic!("no global {name}"))
        };
        names
            .iter()
            .map(|n| (find(&self.native, n), find(&self.reference, n)))
            .collect()
    }
}

fn outcome(r: Result<Value, RuntimeError>) -> String {
    match r {
        Ok(v) => to_hql(&v),
        Err(e) => format!("error {}: {}", e.code, e.message),
    }
}

/// Call `f` on each argument list in both sessions; every mismatch.
fn compare(pair: &Pair, f: &(Value, Value), label: &str, inputs: &[Vec<Value>]) -> Vec<String> {
    let mut bad = Vec::new();
    for args in inputs {
        let call =
            |s: &Session, f: &Value| outcome(s.interp().call(f, args.iter().cloned().collect()));
        let native = call(&pair.native, &f.0);
        let reference = call(&pair.reference, &f.1);
        if native != reference {
            let shown: Vec<String> = args.iter().map(to_hql).collect();
            bad.push(format!(
                "{label}({}): native {native}, HQL {reference}",
                shown.join(", ")
            ));
        }
    }
    bad
}

fn native_of(v: &Value) -> Option<Native> {
    match v {
        Value::Func(f) => match &**f {
            Function::Decl(def) => def.native,
            _ => None,
        },
        _ => None,
    }
}

// ------------------------------------------------------------------ corpus

/// A small seeded generator (SplitMix64), so that a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Characters the mutations insert: the formats' punctuation, letters,
/// digits, every kind of whitespace, and non-ASCII look-alikes.
const ODD: &[char] = &[
    '0', '1', '2', '5', '9', '-', ':', '.', '+', 'T', 't', 'Z', 'z', ' ', '@', '/', '?', '#', '[',
    ']', 'a', 'A', 'f', 'F', 'g', 'G', 'x', 's', 'S', '%', '_', '"', '\\', '\t', '\n', '\r',
    '\u{b}', '\u{c}', '\u{1c}', '\u{1f}', '\u{85}', '\u{a0}', '\u{1680}', '\u{2003}', '\u{2028}',
    '\u{202f}', '\u{3000}', '\u{200b}', '\u{feff}', '\u{17f}', '\u{212a}', '\u{130}', 'é', 'ß',
    '١', '٣', '０', '😀', '\u{0}',
];

/// Near misses of `s`: a character dropped, replaced, inserted or doubled,
/// the text cut short, or padded.
fn mutations(rng: &mut Rng, s: &str, n: usize, out: &mut Vec<String>) {
    let chars: Vec<char> = s.chars().collect();
    for _ in 0..n {
        let mut c = chars.clone();
        let at = rng.below(c.len() + 1);
        match rng.below(6) {
            0 if at < c.len() => {
                c.remove(at);
            }
            1 if at < c.len() => c[at] = *rng.pick(ODD),
            2 if at < c.len() => c.insert(at, c[at]),
            3 => c.truncate(at),
            4 => {
                c.insert(0, *rng.pick(ODD));
                c.push(*rng.pick(ODD));
            }
            _ => c.insert(at, *rng.pick(ODD)),
        }
        out.push(c.into_iter().collect());
    }
}

fn two(n: u64) -> String {
    format!("{n:02}")
}

fn dates(rng: &mut Rng) -> Vec<String> {
    let years = [
        0, 1, 4, 100, 400, 1582, 1900, 1970, 2000, 2023, 2024, 2100, 9996, 9999,
    ];
    let mut out = Vec::new();
    for y in years {
        for m in 0..=13 {
            for d in [0, 1, 9, 10, 27, 28, 29, 30, 31, 32, 99] {
                out.push(format!("{y:04}-{}-{}", two(m), two(d)));
            }
        }
    }
    for _ in 0..2000 {
        out.push(format!(
            "{:04}-{}-{}",
            rng.below(10000),
            two(rng.next() % 14),
            two(rng.next() % 33)
        ));
    }
    let valid = out.clone();
    for d in valid.iter().step_by(3) {
        mutations(rng, d, 2, &mut out);
    }
    out.extend(
        [
            "",
            "2024-02-29\n",
            "2024-2-29",
            "+2024-02-29",
            "02024-02-29",
            "2024/02/29",
        ]
        .map(String::from),
    );
    out
}

fn timestamps(rng: &mut Rng, dates: &[String]) -> Vec<String> {
    let seps = ["T", "t", " ", "X", "", "_"];
    let times = [
        (0, 0, 0),
        (23, 59, 59),
        (23, 59, 60),
        (24, 0, 0),
        (13, 60, 0),
        (13, 45, 61),
        (19, 5, 9),
    ];
    let fractions = ["", ".", ".5", ".123456", ".000000000001", ".1.2", ".a"];
    let zones = [
        "Z", "z", "", "+00:00", "-00:00", "+05:30", "-08:00", "+23:59", "+24:00", "+05:60",
        "+0530", "+5:30", "ZZ", "UTC", "+05:30Z",
    ];
    let mut out = Vec::new();
    for _ in 0..6000 {
        let (h, m, s) = *rng.pick(&times);
        out.push(format!(
            "{}{}{}:{}:{}{}{}",
            rng.pick(dates),
            rng.pick(&seps),
            two(h),
            two(m),
            two(s),
            rng.pick(&fractions),
            rng.pick(&zones)
        ));
    }
    let valid = out.clone();
    for t in valid.iter().step_by(2) {
        mutations(rng, t, 2, &mut out);
    }
    out.push(format!("2024-02-29T13:45:00.{}Z", "9".repeat(20_000)));
    out.push(format!("2024-02-29T13:45:00.{}", "9".repeat(20_000)));
    out.extend(["2024-02-29T13:45Z", "2024-02-29T13:45:00", "T13:45:00Z"].map(String::from));
    out
}

fn emails(rng: &mut Rng) -> Vec<String> {
    let locals = [
        "ada",
        "a",
        "first.last+tag",
        ".x",
        "x.",
        "a b",
        "",
        "é",
        "a@b",
        "😀",
        "a\u{a0}b",
    ];
    let domains = [
        "example.org",
        "example",
        ".org",
        "example.",
        "a.b",
        "a..b",
        "mail.example.co.uk",
        ".",
        "..",
        "x.y.",
        "-a.b",
        "a.b\n",
        "ex ample.org",
        "exa\u{2003}mple.org",
        "é.fr",
        "a@b.c",
        "",
        "b.c.",
    ];
    let mut out = Vec::new();
    for l in locals {
        for d in domains {
            for at in ["@", "@@", "", " @"] {
                out.push(format!("{l}{at}{d}"));
            }
        }
    }
    let valid = out.clone();
    for e in &valid {
        mutations(rng, e, 6, &mut out);
    }
    out.push(format!("{}@{}.org", "a".repeat(50_000), "b".repeat(50_000)));
    out.push(format!("{}@{}", "a".repeat(30_000), ".".repeat(30_000)));
    out
}

fn urls(rng: &mut Rng) -> Vec<String> {
    let schemes = [
        "http://",
        "https://",
        "HTTPS://",
        "HtTp://",
        "http\u{17f}://",
        "HTTP\u{17f}://",
        "httpss://",
        "ftp://",
        "http:/",
        "http:",
        "",
        "mailto:",
        "https//",
        "h\u{212a}tp://",
    ];
    let users = ["", "user@", "user:pw@", "@", "u[1]@", "u r@", "a@b@", "é@"];
    let hosts = [
        "example.org",
        "localhost",
        "192.168.0.1",
        "[::1]",
        "[FE80::a:1.2.3.4]",
        "[fe80::g]",
        "[]",
        "[::1",
        "::1]",
        "",
        "exa mple.org",
        "ex@mple",
        "xn--bcher-kva.example",
        "é.fr",
        "[::1]x",
        "a[b]",
    ];
    let ports = [
        "", ":", ":0", ":8080", ":65535", ":123456", ":port", ":80:80", ":١",
    ];
    let paths = [
        "",
        "/",
        "/a/b?c=1#d",
        "?q",
        "#f",
        "/ space",
        "/tab\t",
        "//",
        "/é",
        "/\u{a0}",
    ];
    let mut out = Vec::new();
    for _ in 0..6000 {
        out.push(format!(
            "{}{}{}{}{}",
            rng.pick(&schemes),
            rng.pick(&users),
            rng.pick(&hosts),
            rng.pick(&ports),
            rng.pick(&paths)
        ));
    }
    let valid = out.clone();
    for u in valid.iter().step_by(2) {
        mutations(rng, u, 2, &mut out);
    }
    out.push(format!(
        "https://{}.org/{}",
        "a".repeat(40_000),
        "p".repeat(40_000)
    ));
    out
}

fn uuids(rng: &mut Rng) -> Vec<String> {
    const HEX: &[u8] = b"0123456789abcdefABCDEF";
    let mut out = vec![
        "00000000-0000-0000-0000-000000000000".to_string(),
        "123e4567-e89b-12d3-a456-426614174000".to_string(),
    ];
    for _ in 0..3000 {
        let u: String = (0..36)
            .map(|i| match i {
                8 | 13 | 18 | 23 => '-',
                _ => *rng.pick(HEX) as char,
            })
            .collect();
        out.push(u);
    }
    let valid = out.clone();
    for u in &valid {
        mutations(rng, u, 2, &mut out);
    }
    out.push(format!("{}-{}", "a".repeat(8), "b".repeat(60_000)));
    out
}

fn codes() -> Vec<String> {
    let letters: Vec<char> = ('A'..='Z').collect();
    let mut out = Vec::new();
    for a in &letters {
        for b in &letters {
            out.push(format!("{a}{b}"));
            out.push(format!("{a}{}", b.to_ascii_lowercase()));
            for c in &letters {
                out.push(format!("{a}{b}{c}"));
            }
        }
    }
    out.extend(
        [
            "", "C", " CH", "CH ", "CHF ", "ch", "chf", "ＣＨ", "C\u{0}", "CHFF", "\"CH\"",
        ]
        .map(String::from),
    );
    out
}

fn blanks() -> Vec<String> {
    let pieces = [
        "", " ", "\t", "\n", "\r", "\u{b}", "\u{c}", "\u{85}", "\u{a0}", "\u{1680}", "\u{2003}",
        "\u{2028}", "\u{3000}", "\u{200b}", "\u{feff}", "a", "é", "\u{0}",
    ];
    let mut out = Vec::new();
    for a in pieces {
        for b in pieces {
            for c in pieces {
                out.push(format!("{a}{b}{c}"));
            }
        }
    }
    out.push(" ".repeat(100_000));
    out.push(format!("{}x", "\u{3000}".repeat(50_000)));
    out
}

/// Values of other types, each function's fallback to its HQL body.
fn others() -> Vec<Value> {
    vec![
        Value::Null,
        Value::Bool(true),
        Value::Int(2024),
        Value::Float(2024.0),
        Value::Float(-0.5),
        Value::list(vec![Value::str("2024-02-29")]),
    ]
}

fn strings(items: &[String]) -> Vec<Vec<Value>> {
    items.iter().map(|s| vec![Value::str(s.as_str())]).collect()
}

fn ints(n: usize, values: &[i64]) -> Vec<Vec<Value>> {
    let mut rows = vec![vec![]];
    for _ in 0..n {
        rows = rows
            .into_iter()
            .flat_map(|row| {
                values.iter().map(move |v| {
                    let mut row = row.clone();
                    row.push(Value::Int(*v));
                    row
                })
            })
            .collect();
    }
    rows
}

// ------------------------------------------------------------------- tests

#[test]
fn every_example_gives_the_same_result_with_and_without_the_twins() {
    let mut examples = Vec::new();
    for (_, text) in hql::session::prelude::FILES {
        for line in text.lines() {
            if let Some(e) = line.trim().strip_prefix("/// example:") {
                examples.push(e.trim().to_string());
            }
        }
    }
    let mut pair = Pair::new();
    let (native, reference) = pair.submit(&examples.join("\n"));
    assert_eq!(native.len(), examples.len());
    assert_eq!(native, reference);
    assert!(native.iter().all(|v| v == "true"), "{native:?}");
}

#[test]
fn only_the_library_functions_get_twins_and_only_when_switched_on() {
    let mut pair = Pair::new();
    let names: Vec<&str> = Native::ALL.iter().map(|n| n.name()).collect();
    let lets: String = names.iter().map(|n| format!("let f_{n} = {n}\n")).collect();
    pair.submit(&lets);
    let globals: Vec<String> = names.iter().map(|n| format!("f_{n}")).collect();
    let globals: Vec<&str> = globals.iter().map(String::as_str).collect();
    for ((native, reference), n) in pair.globals(&globals).iter().zip(Native::ALL) {
        assert_eq!(native_of(native), Some(n));
        assert_eq!(native_of(reference), None);
    }
    // A program's own declaration of a library name is its own.
    let mut own = session();
    let shown = submit(
        &mut own,
        "fn is_email(s: String) -> Bool = true\nlet f = is_email\nis_email(\"x\")\nis_ok(validate(\"x\", Email))",
    );
    assert_eq!(shown, ["true", "false"]);
    let f = own
        .vars()
        .into_iter()
        .find(|(n, _)| n == "f")
        .map(|(_, v)| v);
    assert_eq!(f.as_ref().and_then(native_of), None);
}

/// Each function and each type over `inputs`, called as a value, through
/// a lambda (a call the checker lowered), and through `validate`.
fn hold(function: &str, ty: Option<&str>, inputs: &[Vec<Value>]) {
    let mut pair = Pair::new();
    let mut program = format!("let direct = {function}\n");
    if inputs[0].len() == 1 {
        program += &format!("let lowered = x => {function}(x)\n");
    }
    if let Some(t) = ty {
        program += &format!("let typed = x => validate(x, {t})\n");
    }
    pair.submit(&program);
    let mut names = vec!["direct"];
    if inputs[0].len() == 1 {
        names.push("lowered");
    }
    if ty.is_some() {
        names.push("typed");
    }
    let globals = pair.globals(&names);
    let mut bad = Vec::new();
    for (f, name) in globals.iter().zip(&names) {
        bad.extend(compare(&pair, f, &format!("{function} {name}"), inputs));
    }
    bad.truncate(20);
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

fn with_others(mut inputs: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
    inputs.extend(others().into_iter().map(|v| vec![v]));
    inputs
}

#[test]
fn calendar_arithmetic_matches_its_definition() {
    let years: Vec<i64> = [
        -400,
        -100,
        -4,
        -1,
        0,
        1,
        4,
        100,
        200,
        400,
        1900,
        2000,
        2023,
        2024,
        2100,
        9999,
        i64::MAX,
        i64::MIN,
    ]
    .into_iter()
    .chain(1890..2110)
    .collect();
    hold("is_leap_year", None, &with_others(ints(1, &years)));
    let months: Vec<i64> = (-1..=14).chain([i64::MIN, i64::MAX]).collect();
    let few_years = [-4, 0, 1900, 2000, 2023, 2024, i64::MAX];
    let mut pairs = ints(2, &months);
    pairs.extend(ints(2, &few_years));
    pairs.push(vec![Value::Int(2024), Value::Float(2.0)]);
    pairs.push(vec![Value::Float(2024.0), Value::Int(2)]);
    pairs.push(vec![Value::Null, Value::Int(3)]);
    hold("days_in_month", None, &pairs);
    let days: Vec<i64> = vec![-1, 0, 1, 27, 28, 29, 30, 31, 32, i64::MAX];
    let mut triples: Vec<Vec<Value>> = Vec::new();
    for y in [0, 1900, 2000, 2023, 2024] {
        for m in -1..=13 {
            for d in &days {
                triples.push(vec![Value::Int(y), Value::Int(m), Value::Int(*d)]);
            }
        }
    }
    triples.push(vec![Value::Int(2024), Value::Int(2), Value::str("29")]);
    triples.push(vec![Value::Int(2024), Value::Null, Value::Int(0)]);
    hold("is_valid_ymd", None, &triples);
}

#[test]
fn dates_and_timestamps_match_their_definitions() {
    let mut rng = Rng(0x5eed_da7e);
    let dates = dates(&mut rng);
    let timestamps = timestamps(&mut rng, &dates);
    let all = [&dates[..], &timestamps[..]].concat();
    hold("is_date", Some("Date"), &with_others(strings(&all)));
    hold(
        "is_timestamp",
        Some("Timestamp"),
        &with_others(strings(&all)),
    );
}

#[test]
fn text_formats_match_their_definitions() {
    let mut rng = Rng(0x7e47);
    let emails = emails(&mut rng);
    let urls = urls(&mut rng);
    let uuids = uuids(&mut rng);
    let blanks = blanks();
    let all = [&emails[..], &urls[..], &uuids[..], &blanks[..]].concat();
    let all = with_others(strings(&all));
    hold("is_email", Some("Email"), &all);
    hold("is_url", Some("Url"), &all);
    hold("is_uuid", Some("Uuid"), &all);
    hold("is_non_empty", Some("NonEmpty"), &all);
}

#[test]
fn codes_match_their_lists() {
    let all = with_others(strings(&codes()));
    hold("is_country_code", Some("CountryCode"), &all);
    hold("is_currency_code", Some("CurrencyCode"), &all);
}
