//! Properties that hold for any input, checked over generated ones
//! (`proptest`): the canonical printer round-trips; a record validated and
//! written back keeps every number's text; every record read is an ok or an
//! err, once; the threaded counting path equals one thread.

mod common;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use common::*;
use hql::syntax::ast::{Arg, BinOp, Expr, ExprKind, Lit, Name, UnOp};
use hql::syntax::canonical::{binop_text, expr_text};
use hql::syntax::parser::parse_expr;
use proptest::prelude::*;

// ---------------------------------------------------- the canonical printer

fn name(text: &str) -> Name {
    Name {
        text: text.to_string(),
        span: 0..0,
    }
}

fn expr(kind: ExprKind) -> Expr {
    Expr::new(kind, 0..0)
}

fn boxed(e: Expr) -> Box<Expr> {
    Box::new(e)
}

fn identifier() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "total", "r", "_x", "low2"]).prop_map(str::to_string)
}

/// Record keys, including keywords and keys that need quotes.
fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "a",
        "id",
        "in",
        "then",
        "not",
        "two words",
        "é",
        "1st",
    ])
    .prop_map(str::to_string)
}

/// Names after a dot: identifiers, keywords among them.
fn field_name() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "id", "in", "then", "not", "self", "type"])
        .prop_map(str::to_string)
}

fn literal() -> impl Strategy<Value = Lit> {
    prop_oneof![
        (0u64..1_000_000).prop_map(|n| Lit::Int(n.to_string())),
        Just(Lit::Int("10_000".into())),
        Just(Lit::Int("9223372036854775807".into())),
        prop::sample::select(vec!["1.5", "0.0", "2e3", "1.25E-7", "3.0"])
            .prop_map(|t| Lit::Float(t.to_string())),
        "[a-z \"\\\\\n\té]{0,6}".prop_map(|value| Lit::Str {
            text: serde_json::to_string(&value).unwrap(),
            value,
        }),
        any::<bool>().prop_map(Lit::Bool),
        Just(Lit::Null),
    ]
}

const OPERATORS: [BinOp; 17] = [
    BinOp::Implies,
    BinOp::Or,
    BinOp::And,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::In,
    BinOp::NotIn,
    BinOp::Coalesce,
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
];

/// A call: a name and arguments, maybe named, maybe lambdas (a lambda
/// is written only as an argument, after `let name =` or as a lambda's
/// body: elsewhere `x => y` is an implication).
fn call(inner: impl Strategy<Value = Expr> + Clone) -> impl Strategy<Value = Expr> {
    let lambda = (identifier(), inner.clone())
        .prop_map(|(p, body)| expr(ExprKind::Lambda(name(&p), boxed(body))));
    let arg = prop_oneof![inner, lambda];
    (
        identifier(),
        prop::collection::vec((prop::option::of(identifier()), arg), 0..3),
    )
        .prop_map(|(f, args)| {
            let args = args
                .into_iter()
                .map(|(n, value)| Arg {
                    name: n.map(|n| name(&n)),
                    value,
                })
                .collect();
            expr(ExprKind::Call(boxed(expr(ExprKind::Name(f))), args))
        })
}

fn any_expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        literal().prop_map(|l| expr(ExprKind::Lit(l))),
        identifier().prop_map(|n| expr(ExprKind::Name(n))),
        Just(expr(ExprKind::SelfRef)),
    ];
    leaf.prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| expr(ExprKind::List(v))),
            prop::collection::vec((key(), inner.clone()), 0..3).prop_map(|fields| {
                let fields = fields.into_iter().map(|(k, v)| (name(&k), v)).collect();
                expr(ExprKind::Record(fields))
            }),
            (inner.clone(), field_name())
                .prop_map(|(x, k)| expr(ExprKind::Field(boxed(x), name(&k)))),
            (inner.clone(), identifier()).prop_map(|(x, k)| {
                let field = expr(ExprKind::Field(boxed(x), name(&k)));
                expr(ExprKind::Present(boxed(field)))
            }),
            (inner.clone(), inner.clone())
                .prop_map(|(x, i)| expr(ExprKind::Index(boxed(x), boxed(i)))),
            call(inner.clone()),
            (any::<bool>(), inner.clone()).prop_map(|(not, x)| {
                let op = if not { UnOp::Not } else { UnOp::Neg };
                expr(ExprKind::Unary(op, boxed(x)))
            }),
            (
                prop::sample::select(OPERATORS.to_vec()),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(op, a, b)| expr(ExprKind::Binary(op, boxed(a), boxed(b)))),
            (inner.clone(), call(inner.clone()))
                .prop_map(|(a, f)| expr(ExprKind::Pipe(boxed(a), boxed(f)))),
            (inner.clone(), inner.clone(), inner).prop_map(|(c, a, b)| expr(ExprKind::If(
                boxed(c),
                boxed(a),
                boxed(b)
            ))),
        ]
    })
}

/// The tree as a fully parenthesised form, spans left out: two trees are
/// the same exactly when their shapes are.
fn shape(e: &Expr) -> String {
    let mut out = String::new();
    write_shape(&mut out, e);
    out
}

fn write_shape(out: &mut String, e: &Expr) {
    let all = |out: &mut String, items: &mut dyn Iterator<Item = &Expr>| {
        for x in items {
            out.push(' ');
            write_shape(out, x);
        }
    };
    match &e.kind {
        ExprKind::Lit(l) => write!(out, "{l:?}").unwrap(),
        ExprKind::Name(n) => write!(out, "name:{n}").unwrap(),
        ExprKind::SelfRef => out.push_str("self"),
        ExprKind::List(items) => {
            out.push_str("(list");
            all(out, &mut items.iter());
            out.push(')');
        }
        ExprKind::Record(fields) | ExprKind::Construct(_, fields) => {
            if let ExprKind::Construct(t, _) = &e.kind {
                write!(out, "(construct {}", t.text).unwrap();
            } else {
                out.push_str("(record");
            }
            for (k, v) in fields {
                write!(out, " {:?}:", k.text).unwrap();
                write_shape(out, v);
            }
            out.push(')');
        }
        ExprKind::Field(x, k) => {
            out.push_str("(field ");
            write_shape(out, x);
            write!(out, " {:?})", k.text).unwrap();
        }
        ExprKind::Index(x, i) => {
            out.push_str("(index");
            all(out, &mut [&**x, &**i].into_iter());
            out.push(')');
        }
        ExprKind::Present(x) => {
            out.push_str("(present ");
            write_shape(out, x);
            out.push(')');
        }
        ExprKind::Call(f, args) => {
            out.push_str("(call ");
            write_shape(out, f);
            for a in args {
                match &a.name {
                    Some(n) => write!(out, " {}=", n.text).unwrap(),
                    None => out.push(' '),
                }
                write_shape(out, &a.value);
            }
            out.push(')');
        }
        ExprKind::Unary(op, x) => {
            write!(out, "({op:?} ").unwrap();
            write_shape(out, x);
            out.push(')');
        }
        ExprKind::Binary(op, a, b) => {
            write!(out, "({}", binop_text(*op)).unwrap();
            all(out, &mut [&**a, &**b].into_iter());
            out.push(')');
        }
        ExprKind::Pipe(a, b) => {
            out.push_str("(pipe");
            all(out, &mut [&**a, &**b].into_iter());
            out.push(')');
        }
        ExprKind::Lambda(p, body) => {
            write!(out, "(lambda {} ", p.text).unwrap();
            write_shape(out, body);
            out.push(')');
        }
        ExprKind::If(c, a, b) => {
            out.push_str("(if");
            all(out, &mut [&**c, &**a, &**b].into_iter());
            out.push(')');
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Printing a tree and parsing the text gives the same tree back.
    #[test]
    fn the_canonical_printer_round_trips(e in any_expr()) {
        let text = expr_text(&e);
        let parsed = parse_expr(&text);
        prop_assert!(parsed.is_ok(), "{text}\ndoes not parse: {parsed:?}");
        prop_assert_eq!(shape(&parsed.unwrap()), shape(&e), "{}", text);
    }
}

// -------------------------------------------------------------- numbers

/// A number as data may write it.
fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        "-?[1-9][0-9]{18,30}",
        "-?(0|[1-9][0-9]{0,5})\\.[0-9]{1,8}",
        "-?(0|[1-9][0-9]{0,3})(\\.[0-9]{1,4})?[eE][+-]?[0-9]{1,2}",
        Just("-0".to_string()),
        Just("-0.0".to_string()),
        Just("1.50".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A record validated and written back keeps each number as its text
    /// was, in declared and in extra fields, nested or not.
    #[test]
    fn validated_records_keep_every_numbers_text(
        nums in prop::collection::vec(number_text(), 4)
    ) {
        let line = format!(
            "{{\"x\":{},\"extra\":{},\"deep\":{{\"n\":[{}]}},\"last\":{}}}",
            nums[0], nums[1], nums[2], nums[3]
        );
        let program = "type N : Data = { x: Float }\n\
            source(file(\"in.jsonl\"), Json) | validate(N) | oks() | write(file(\"out.jsonl\"))";
        let (run, written) = run_writing(program, &[("in.jsonl", &line)]);
        prop_assert_eq!(run.status, 0, "{}", run.err);
        prop_assert_eq!(written.get("out.jsonl").map(String::as_str), Some(&*format!("{line}\n")));
    }
}

// ----------------------------------------------------- CSV round trip

/// A field's type for the CSV round trip, and values of it as JSON text:
/// scalars, lists and records; no union of `String` and a number (whose
/// text reads back as the number) and no undeclared fields.
#[derive(Debug, Clone, Copy)]
enum Column {
    Text,
    NullableText,
    Int,
    NullableInt,
    Float,
    Bool,
    Ints,
    Texts,
    Pair,
}

impl Column {
    fn ty(self) -> &'static str {
        match self {
            Column::Text => "String",
            Column::NullableText => "String | Null",
            Column::Int => "Int",
            Column::NullableInt => "Int | Null",
            Column::Float => "Float",
            Column::Bool => "Bool",
            Column::Ints => "List[Int]",
            Column::Texts => "List[String]",
            Column::Pair => "{ a: Int, b?: String }",
        }
    }

    fn nullable(self) -> bool {
        matches!(self, Column::NullableText | Column::NullableInt)
    }

    fn value(self) -> BoxedStrategy<String> {
        let json = |s: String| serde_json::to_string(&s).unwrap();
        match self {
            Column::Text => csv_text().prop_map(json).boxed(),
            Column::NullableText => {
                prop_oneof![Just("null".to_string()), csv_text().prop_map(json)].boxed()
            }
            Column::Int => any::<i64>().prop_map(|n| n.to_string()).boxed(),
            Column::NullableInt => prop_oneof![
                Just("null".to_string()),
                any::<i64>().prop_map(|n| n.to_string())
            ]
            .boxed(),
            Column::Float => prop_oneof![
                any::<f64>().prop_filter("finite", |f| f.is_finite()),
                prop::sample::select(vec![0.0, -0.0, 7.0, 0.1, 1e-7, 2.5e300, -1.5]),
            ]
            .prop_map(|f| serde_json::to_string(&f).unwrap())
            .boxed(),
            Column::Bool => any::<bool>().prop_map(|b| b.to_string()).boxed(),
            Column::Ints => prop::collection::vec(any::<i64>(), 0..4)
                .prop_map(|v| serde_json::to_string(&v).unwrap())
                .boxed(),
            Column::Texts => prop::collection::vec(csv_text(), 0..3)
                .prop_map(|v| serde_json::to_string(&v).unwrap())
                .boxed(),
            Column::Pair => (any::<i32>(), prop::option::of(csv_text()))
                .prop_map(move |(a, b)| match b {
                    Some(b) => format!("{{\"a\":{a},\"b\":{}}}", json(b)),
                    None => format!("{{\"a\":{a}}}"),
                })
                .boxed(),
        }
    }
}

/// Text that CSV must quote or keep as it is: empty, delimiters, quotes,
/// line ends of every kind, spaces, formulas, numbers' look, NUL.
fn csv_text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z ,;\"'\r\n\t=+@é\u{0}0-9.-]{0,8}",
        Just("\"\"".to_string()),
        Just("\r".to_string()),
        Just(" ".to_string()),
        Just("12".to_string()),
        Just("true".to_string()),
    ]
}

/// A contract's fields (after `id: Int`): a type each, and whether it is
/// optional (an optional field never admits `Null`, so that absent and
/// null stay apart in a cell).
fn csv_columns() -> impl Strategy<Value = Vec<(Column, bool)>> {
    let column = prop::sample::select(vec![
        Column::Text,
        Column::NullableText,
        Column::Int,
        Column::NullableInt,
        Column::Float,
        Column::Bool,
        Column::Ints,
        Column::Texts,
        Column::Pair,
    ]);
    prop::collection::vec((column, any::<bool>()), 1..5).prop_map(|columns| {
        columns
            .into_iter()
            .map(|(c, optional)| (c, optional && !c.nullable()))
            .collect()
    })
}

/// The contract and JSON Lines of records it admits.
fn csv_case() -> impl Strategy<Value = (String, Vec<String>)> {
    csv_columns().prop_flat_map(|columns| {
        let fields: Vec<String> = columns
            .iter()
            .enumerate()
            .map(|(i, (c, optional))| {
                format!("f{i}{}: {}", if *optional { "?" } else { "" }, c.ty())
            })
            .collect();
        let contract = format!(
            "type T : TypeContract = {{ id: Int, {} }}\n",
            fields.join(", ")
        );
        let row = columns
            .iter()
            .map(|(c, optional)| {
                let value = c.value().prop_map(Some);
                if *optional {
                    prop_oneof![Just(None), value].boxed()
                } else {
                    value.boxed()
                }
            })
            .collect::<Vec<_>>();
        let line = (any::<i64>(), row).prop_map(|(id, cells)| {
            let mut line = format!("{{\"id\":{id}");
            for (i, cell) in cells.iter().enumerate() {
                if let Some(cell) = cell {
                    write!(line, ",\"f{i}\":{cell}").unwrap();
                }
            }
            line.push('}');
            line
        });
        (Just(contract), prop::collection::vec(line, 1..6))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// Records written to CSV and read back under their contract are the
    /// records written: empty strings, nulls, absent fields, quotes, line
    /// ends, lists and records included.
    #[test]
    fn a_csv_target_reads_back_as_the_records_written((contract, lines) in csv_case()) {
        let s = Scratch::new("prop-csv-round-trip");
        s.write("in.jsonl", lines.join("\n"));
        let written = s.run(
            &format!("{contract}source(file(\"in.jsonl\"), Json) | validate(T) | unwrap() | write(file(\"out.csv\"))\n"),
            &[],
        );
        prop_assert_eq!(written.status, 0, "{}", written.err);
        let read = s.run(
            &format!(
                "{contract}let sent = source(file(\"in.jsonl\"), Json) | validate(T) | oks() | collect()\n\
                 let back = source(file(\"out.csv\"), Csv) | validate(T) | collect()\n\
                 [back | errs() | count(), (back | oks() | collect()) == sent]\nsent\nback\n"
            ),
            &[],
        );
        prop_assert_eq!(read.status, 0, "{}", read.err);
        prop_assert!(read.out.starts_with("[0, true]\n"), "{}\n{}\n{}", contract, s.read("out.csv"), read.out);
    }
}

// ------------------------------------------------- every record, once

/// A line of data: valid, invalid, undecodable, or blank.
fn data_line() -> impl Strategy<Value = String> {
    prop_oneof![
        (any::<i32>(), any::<i32>())
            .prop_map(|(low, high)| format!("{{\"id\": \"r\", \"low\": {low}, \"high\": {high}}}")),
        Just("{\"id\": 5, \"low\": 1, \"high\": 2}".to_string()),
        Just("{\"id\": \"r\"}".to_string()),
        Just("[1, 2]".to_string()),
        Just("{\"id\": \"broken\"".to_string()),
        Just("   ".to_string()),
        Just(String::new()),
        "[ -~]{0,12}",
    ]
}

const RANGE: &str = "type R : DataContract = {\n    id: String\n    low: Int\n    high: Int\n    require low <= high\n}\n";

/// Lines that hold a record: every one that is not blank.
fn records_in(lines: &[String]) -> usize {
    lines.iter().filter(|l| !l.trim().is_empty()).count()
}

/// A first line that makes the file JSON Lines (a file whose first byte is
/// `[` is a JSON array), then any lines.
fn data_lines() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(data_line(), 0..12).prop_map(|mut lines| {
        lines.insert(
            0,
            "{\"id\": \"first\", \"low\": 1, \"high\": 1}".to_string(),
        );
        lines
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Whatever the lines hold, each non-blank one is one ok or one err,
    /// on the counting path and on the ordinary one.
    #[test]
    fn oks_and_errs_are_the_records_read(lines in data_lines()) {
        let data = scratch_file("records.jsonl");
        std::fs::write(&data, lines.join("\n")).unwrap();
        let program = scratch_file("records.hql");
        std::fs::write(
            &program,
            format!(
                "{RANGE}let v = source(file({:?}), Json) | validate(R)\n\
                 [v | oks() | count(), v | errs() | count(), \
                  v | filter(r => true) | oks() | count(), v | filter(r => true) | errs() | count(), \
                  (v | report()).total]",
                data.display().to_string()
            ),
        )
        .unwrap();
        let out = hql_run(&program, "1");
        let n = records_in(&lines);
        let counts: Vec<usize> = out
            .trim()
            .trim_matches(|c| c == '[' || c == ']')
            .split(", ")
            .map(|c| c.parse().unwrap())
            .collect();
        prop_assert_eq!(counts[0] + counts[1], n, "{}", out);
        prop_assert_eq!(&counts[..2], &counts[2..4], "{}", out);
        prop_assert_eq!(counts[4], n, "{}", out);
    }
}

// ----------------------------------------------------------- threads

fn scratch_file(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hql-properties-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A scratch file of `lines`, repeated until it is past the size from
/// which a file is split across threads; its path and text.
fn split_size_file(name: &str, lines: &[String]) -> (PathBuf, String) {
    let mut text = String::new();
    while text.len() < (1 << 20) + 4096 {
        for l in lines {
            text.push_str(l);
            text.push('\n');
        }
    }
    let path = scratch_file(name);
    std::fs::write(&path, &text).unwrap();
    (path, text)
}

fn hql_run(program: &PathBuf, threads: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", "--threads", threads])
        .arg(program)
        .output()
        .expect("hql runs");
    assert!(
        out.status.code() == Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// Over a file large enough to split, four threads count and report
    /// exactly what one thread does.
    #[test]
    fn threaded_counts_equal_one_thread(lines in data_lines()) {
        let (data, _) = split_size_file("data.jsonl", &lines);
        let program = scratch_file("count.hql");
        std::fs::write(
            &program,
            format!(
                "{RANGE}let v = source(file({:?}), Json) | validate(R)\nv | report()\nv | oks() | count()\n",
                data.display().to_string()
            ),
        )
        .unwrap();
        prop_assert_eq!(hql_run(&program, "4"), hql_run(&program, "1"));
    }
}

// ----------------------------------------------------------- unique keys

/// Integers that mostly count up — by steps of 0 to 19, or back by up to
/// 3 — with a run now and then taken from a small range at random, so that
/// keys come in order, repeat, fall a little behind, and come out of order;
/// or, in half the cases, that count up for long stretches, with a rare
/// step back or repeat. Now and then there is no id (`None`).
fn ids() -> impl Strategy<Value = Vec<Option<i64>>> {
    let wild = prop_oneof![
        6 => (0i64..20).prop_map(Some),
        2 => (-3i64..0).prop_map(Some),
        1 => Just(None),
    ];
    let calm = prop_oneof![
        400 => (1i64..20).prop_map(Some),
        1 => (-3i64..1).prop_map(Some),
        1 => Just(None),
    ];
    let steps = prop_oneof![
        prop::collection::vec((wild, -40i64..40, 0u8..50), 1..3_000),
        prop::collection::vec((calm, -40i64..40, 0u8..50), 1..3_000),
    ];
    (steps, any::<i64>()).prop_map(|(steps, start)| {
        let mut at = start / 2;
        steps
            .into_iter()
            .map(|(step, random, absent)| match step {
                _ if absent == 0 => None,
                Some(s) => {
                    at = at.saturating_add(s);
                    Some(at)
                }
                None => Some(random),
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The set of `unique` keys answers as a hash map of each key to its
    /// claimer does, for integer and string keys, whatever their order:
    /// keys claimed or inserted one at a time, and keys in order gathered
    /// in batches (`Ascending`) that the set takes whole exactly when they
    /// all lie above its keys.
    #[test]
    fn a_key_set_answers_as_a_hash_map(ids in ids(), strings in any::<bool>()) {
        use hql::runtime::eval::{write_key, write_key_text};
        use hql::runtime::keyset::{Ascending, KeySet};
        use hql::runtime::value::Value;
        use std::collections::HashMap;
        type Model = HashMap<Vec<u8>, u64>;
        let mut set = KeySet::default();
        let mut model = Model::new();
        let mut batch = (Ascending::default(), Vec::new());
        // Offer the batch: taken whole, or its keys claimed in turn.
        let offer = |set: &mut KeySet, model: &mut Model, batch: &mut (Ascending, Vec<(Vec<u8>, u64)>)| {
            let (keys, held) = batch;
            let Some((first, _)) = held.first() else { return Ok(()) };
            let above = model.keys().all(|k| k < first);
            prop_assert_eq!(set.append(keys), above);
            if !above {
                let mut drained = Vec::new();
                keys.drain(|k, by| drained.push((k.to_vec(), by)));
                prop_assert_eq!(&drained, &*held);
            }
            prop_assert!(keys.is_empty());
            for (key, by) in held.drain(..) {
                if !above {
                    prop_assert_eq!(set.claim(&key, by), !model.contains_key(&key));
                }
                model.entry(key).or_insert(by);
            }
            Ok(())
        };
        for (i, id) in ids.iter().enumerate() {
            let Some(id) = id else {
                offer(&mut set, &mut model, &mut batch)?;
                continue;
            };
            let mut key = Vec::new();
            match strings {
                true => write_key_text(&format!("id-{id}"), &mut key),
                false => write_key(&Value::Int(*id), &mut key),
            }
            // Claimers of every size, not always ascending.
            let by = (i as u64).wrapping_mul(0x9e37_79b9) >> (i % 40);
            if (i / 64) % 2 == 1 {
                // Gathered while in order, the batch offered when not. The
                // batch may keep the buffer it is handed, as a log's is.
                if !batch.0.push_above_taking(&mut key.clone(), by) {
                    offer(&mut set, &mut model, &mut batch)?;
                    if !batch.0.push_above_taking(&mut key.clone(), by) {
                        // Not above the last key the batch held: alone.
                        prop_assert_eq!(set.claim(&key, by), !model.contains_key(&key), "{}", i);
                        model.entry(key).or_insert(by);
                        continue;
                    }
                }
                batch.1.push((key, by));
                continue;
            }
            offer(&mut set, &mut model, &mut batch)?;
            prop_assert_eq!(set.holds(&key), model.contains_key(&key), "{}", i);
            prop_assert_eq!(set.claimer(&key), model.get(&key).copied(), "{}", i);
            set.prefetch(&key);
            if i % 2 == 0 && !model.contains_key(&key) {
                set.insert(&key, by);
            } else {
                prop_assert_eq!(set.claim(&key, by), !model.contains_key(&key), "{}", i);
            }
            model.entry(key).or_insert(by);
        }
        offer(&mut set, &mut model, &mut batch)?;
        prop_assert_eq!(set.len(), model.len());
        for (key, &by) in &model {
            prop_assert_eq!(set.claimer(key), Some(by));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// `unique` over ids in any order: the oks are the first record of
    /// each id and the errs the rest, on one thread and on two, counted,
    /// reported and counted after a stage.
    #[test]
    fn unique_keeps_the_first_of_each_id(ids in ids()) {
        // Repeated past the size a file is split from: every id is met
        // again in later chunks.
        let lines: Vec<String> = (ids.iter())
            .map(|id| match id {
                Some(id) => format!("{{\"id\": {id}}}"),
                None => "{}".to_string(),
            })
            .collect();
        let (data, text) = split_size_file("ids.jsonl", &lines);
        // A record with no id claims no key: every one is valid.
        let keyless = text.lines().filter(|l| *l == "{}").count();
        let distinct = text.lines().filter(|l| *l != "{}").collect::<std::collections::HashSet<_>>().len() + keyless;
        let program = scratch_file("ids.hql");
        std::fs::write(
            &program,
            format!(
                "type E : DataContract = {{ id?: Int\n unique id }}\n\
                 let v = source(file({:?}), Json) | validate(E)\n\
                 [v | oks() | count(), v | errs() | count(), (v | report()).err, \
                  v | filter(r => true) | oks() | count()]\n",
                data.display().to_string()
            ),
        )
        .unwrap();
        let repeats = text.lines().count() - distinct;
        let want = format!("[{distinct}, {repeats}, {repeats}, {distinct}]\n");
        prop_assert_eq!(hql_run(&program, "1"), want.clone());
        prop_assert_eq!(hql_run(&program, "2"), want);
    }
}
