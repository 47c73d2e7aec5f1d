//! Limits and adversarial programs (docs/robustness.md): long lines, many
//! diagnostics, deep nesting, large programs. Each input must end in a
//! clear diagnostic or a result, never a panic, a stack overflow or a hang.

mod common;
use common::*;

// ------------------------------------------------------------- long lines

/// The rendered source line holding `needle`, and the line below it that
/// holds the label's `┬`: the character column of each.
fn label_columns(err: &str, needle: &str) -> (usize, usize) {
    let lines: Vec<&str> = err.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains('│') && l.contains(needle))
        .unwrap_or_else(|| panic!("no source line shows {needle:?}:\n{err}"));
    let column = |line: &str, pat: &str| {
        let byte = line.find(pat).unwrap();
        line[..byte].chars().count()
    };
    let mark = lines[at + 1..]
        .iter()
        .find(|l| l.contains('┬'))
        .unwrap_or_else(|| panic!("no label under the line:\n{err}"));
    (column(lines[at], needle), column(mark, "┬"))
}

/// A diagnostic far along a long line is shown in a window around its
/// label: no line of it is long, the header gives the file's own column,
/// and the label's mark stands under the text it names.
#[track_caller]
fn assert_clipped(err: &str, needle: &str, header: &str) {
    assert!(err.contains(header), "expected {header} in:\n{err}");
    assert!(
        err.lines().all(|l| l.chars().count() < 200),
        "a rendered line is long:\n{err}"
    );
    let (text, mark) = label_columns(err, needle);
    assert_eq!(text, mark, "the label is not under {needle:?}:\n{err}");
}

#[test]
fn diagnostics_on_long_lines_are_clipped_around_their_label() {
    let pad = " ".repeat(70_000);
    // A static error at column 70,001 (miette cannot lay out columns past
    // 65,535).
    let err = static_error(&format!("\"runs?\"\n{pad}x\n"), "hql::unknown_name");
    assert_clipped(&err, "x", "test.hql:2:70001");
    // Text before and after the label on the same long line.
    let long = format!("\"{}\"", "a".repeat(80_000));
    let src = format!("\"runs?\"\nlet y = {long} + q + {long}\n");
    let err = static_error(&src, "hql::unknown_name");
    assert_clipped(&err, "q", "test.hql:2:80014");
    assert!(err.contains('…'), "{err}");
    // A runtime error.
    let (out, err) = runtime_error(&format!("\"runs\"\n{pad}1 / 0\n"), &[]);
    assert_eq!(out, "\"runs\"\n");
    assert!(err.contains("hql::division_by_zero"), "{err}");
    assert!(err.lines().all(|l| l.chars().count() < 200), "{err}");
    assert!(err.contains("test.hql:2:70001"), "{err}");
    // A failed check.
    let (out, err, status) = run(&format!("{pad}check \"c\": 1 == 2\n"), &[]);
    assert_eq!((out.as_str(), status), ("", 1), "{err}");
    assert!(err.contains("hql::check_failed"), "{err}");
    assert!(err.contains("test.hql:1:70001"), "{err}");
    assert!(err.lines().all(|l| l.chars().count() < 200), "{err}");
    // A warning.
    let src = format!("type T : DataContract = {{\n  a: Int\n  require {pad}a? > 0\n}}\n1\n");
    let (out, err, status) = run(&src, &[]);
    assert_eq!((out.as_str(), status), ("1\n", 0), "{err}");
    assert!(err.contains("hql::needless_mark"), "{err}");
    assert_clipped(&err, "a?", "test.hql:3:70011");
}

#[test]
fn a_label_over_many_lines_is_shown_on_its_first() {
    let items = "1,\n".repeat(10_000);
    let (_, err) = runtime_error(
        &format!("\"runs\"\n[\n{items}\"x\"] | map(v => v + 1)\n"),
        &[],
    );
    assert!(err.lines().count() < 60, "{err}");
}

#[test]
fn diagnostics_are_capped_with_a_count_of_the_rest() {
    // 4,000 unknown names on one line.
    let src = format!("\"runs?\"\n[{}1]\n", "x, ".repeat(4_000));
    let err = static_error(&src, "hql::unknown_name");
    assert_eq!(
        err.matches("hql::unknown_name").count(),
        100,
        "{}",
        &err[..2000]
    );
    assert!(
        err.ends_with("… and 3900 more errors, not shown (only the first 100 are)\n"),
        "{}",
        &err[err.len() - 500..]
    );
    assert!(err.len() < 100_000, "{} bytes", err.len());
    // Syntax errors are capped the same way.
    let src = format!("\"runs?\"\n{}", "let = 1\n".repeat(150));
    let err = static_error(&src, "hql::parse");
    assert_eq!(err.matches("hql::parse").count(), 100);
    assert!(err.ends_with("… and 50 more errors, not shown (only the first 100 are)\n"));
}

// ------------------------------------------------------------ nesting depth

use hql::syntax::limits::{with_stack, MAX_DEPTH};

/// `hql check` of a program in memory: (stderr, status).
fn check(src: &str) -> (String, i32) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let status = hql::cli::run::check_source(
        &hql::cli::run::Source {
            name: "test.hql",
            text: src,
        },
        std::rc::Rc::new(MemHost::new(&[], None)),
        &mut hql::cli::run::Sinks::plain(&mut out, &mut err),
    );
    (String::from_utf8(err).unwrap(), status)
}

/// A construct repeated `n` times, nested: its program, the `n` that
/// reaches exactly `MAX_DEPTH` levels, and what the program prints then.
struct Nesting {
    name: &'static str,
    program: fn(usize) -> String,
    /// Levels the program has beyond the `n` repeated ones.
    extra: usize,
    printed: fn(usize) -> String,
}

fn nested(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("{}{inner}{}", open.repeat(n), close.repeat(n))
}

fn nestings() -> Vec<Nesting> {
    let one = |_| "1\n".to_string();
    vec![
        Nesting {
            name: "pipeline stages",
            program: |n| format!("[1]{}\n", " | map(x => x)".repeat(n)),
            extra: 3,
            printed: |_| "[1]\n".into(),
        },
        Nesting {
            name: "calls",
            program: |n| nested("abs(", "-1", ")", n) + "\n",
            extra: 2,
            printed: one,
        },
        Nesting {
            name: "inline record types",
            program: |n| {
                let ty = nested("{ a: ", "Int", " }", n);
                format!("type T : Data = {{ a: {ty} }}\n[1] | validate(T) | count()\n")
            },
            extra: 1,
            printed: one,
        },
        Nesting {
            name: "type arguments",
            program: |n| {
                let ty = nested("List[", "Int", "]", n);
                format!("type T = {ty}\n[1] | validate(T) | count()\n")
            },
            extra: 1,
            printed: one,
        },
        Nesting {
            name: "record literals",
            program: |n| nested("{a: ", "1", "}", n) + "\n",
            extra: 1,
            printed: |n| nested("{a: ", "1", "}", n) + "\n",
        },
        Nesting {
            name: "list literals",
            program: |n| nested("[", "1", "]", n) + "\n",
            extra: 1,
            printed: |n| nested("[", "1", "]", n) + "\n",
        },
        Nesting {
            name: "`+`",
            program: |n| format!("1{}\n", " + 1".repeat(n)),
            extra: 1,
            printed: |n| format!("{}\n", n + 1),
        },
        Nesting {
            name: "`not`",
            program: |n| format!("{}true\n", "not ".repeat(n)),
            extra: 1,
            printed: |n| format!("{}\n", n % 2 == 0),
        },
        Nesting {
            name: "unary minus",
            program: |n| format!("({}1)\n", "- ".repeat(n)),
            extra: 1,
            printed: |n| format!("{}\n", if n % 2 == 0 { 1 } else { -1 }),
        },
        Nesting {
            name: "`if` in `then`",
            program: |n| nested("if true then ", "1", " else 2", n) + "\n",
            extra: 1,
            printed: one,
        },
        Nesting {
            name: "`else if`",
            program: |n| format!("{}2\n", "if false then 1 else ".repeat(n)),
            extra: 1,
            printed: |_| "2\n".into(),
        },
        Nesting {
            name: "`??`",
            program: |n| format!("null{} ?? 1\n", " ?? null".repeat(n)),
            extra: 2,
            printed: one,
        },
        Nesting {
            name: "`=>` between conditions",
            program: |n| format!("true{}\n", " => true".repeat(n)),
            extra: 1,
            printed: |_| "true\n".into(),
        },
        Nesting {
            name: "`or`",
            program: |n| format!("false{}\n", " or false".repeat(n)),
            extra: 1,
            printed: |_| "false\n".into(),
        },
        Nesting {
            name: "lambdas",
            program: |n| format!("let f = {}1\n1\n", "x => ".repeat(n)),
            extra: 1,
            printed: one,
        },
        Nesting {
            name: "a function's body",
            program: |n| format!("fn f(x) = {}\nf(1) | len()\n", nested("[", "x", "]", n)),
            extra: 1,
            printed: one,
        },
        Nesting {
            name: "a rule",
            program: |n| {
                let rule = format!("{}true", "not ".repeat(n));
                format!("type T : DataContract = {{ a: Int\n require {rule} }}\n[{{a: 1}}] | validate(T) | oks() | count()\n")
            },
            extra: 1,
            printed: |n| format!("{}\n", if n % 2 == 0 { 1 } else { 0 }),
        },
    ]
}

/// At `MAX_DEPTH` levels every construct is checked and run, on the stack
/// `hql` runs with; one level more is `hql::too_deep`, with its span and
/// help, before anything runs.
#[test]
fn every_construct_runs_at_the_depth_limit_and_is_refused_above_it() {
    with_stack(|| {
        for case in nestings() {
            let n = MAX_DEPTH - case.extra;
            let at_limit = (case.program)(n);
            let (err, status) = check(&at_limit);
            assert_eq!((status, err.as_str()), (0, ""), "check, {}", case.name);
            let (out, err, status) = run(&at_limit, &[]);
            assert_eq!(status, 0, "run, {}: {err}", case.name);
            assert_eq!(out, (case.printed)(n), "run, {}", case.name);

            let above = (case.program)(n + 1);
            let (err, status) = check(&above);
            assert_eq!(status, 2, "check, {}: {err}", case.name);
            assert_eq!(
                err.matches("hql::too_deep").count(),
                1,
                "{}: {err}",
                case.name
            );
            let flat = squash(&err);
            assert!(
                flat.contains("this statement nests deeper than 1000 levels"),
                "{flat}"
            );
            assert!(flat.contains("level 1001 starts here"), "{flat}");
            assert!(
                flat.contains("help: a statement may nest 1000 levels"),
                "{flat}"
            );
            let (out, err, status) = run(&above, &[]);
            assert_eq!((out.as_str(), status), ("", 2), "run, {}: {err}", case.name);
        }
    });
}

/// A too deep statement costs only itself: the others are still checked.
#[test]
fn a_too_deep_statement_is_one_error_among_the_others() {
    with_stack(|| {
        let deep = nested("[", "1", "]", 5_000);
        let (err, status) = check(&format!("let a = {deep}\nlet = 2\nnope\n"));
        assert_eq!(status, 2);
        assert!(err.contains("hql::too_deep"), "{err}");
        assert!(err.contains("hql::parse"), "{err}");
        assert!(err.contains("test.hql:1:1009"), "{err}");
    });
}

/// Far deeper programs than the limit end the same way, through the `hql`
/// command (whose own stack set-up is under test), in every phase a
/// syntax tree reaches: nothing may overflow the stack.
#[test]
fn far_deeper_programs_are_refused_by_the_command() {
    let dir = std::env::temp_dir().join(format!("hql-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = 100_000;
    let cases = [
        (nested("[", "1", "]", n), "hql::too_deep"),
        (nested("(", "1", ")", n), ""),
        ("[".repeat(n), "hql::parse"),
        (format!("[{}", nested("[", "1", "]", n)), "hql::parse"),
        (format!("1{}\n", " + 1".repeat(n)), "hql::too_deep"),
        (format!("{}true\n", "not ".repeat(n)), "hql::too_deep"),
        (format!("({}1)\n", "- ".repeat(n)), "hql::too_deep"),
        (
            format!("[1]{}\n", " | map(x => x)".repeat(n)),
            "hql::too_deep",
        ),
        (format!("let f = {}1\n", "x => ".repeat(n)), "hql::too_deep"),
        (
            format!("type T = {}\n", nested("List[", "Int", "]", n)),
            "hql::too_deep",
        ),
        (
            format!(
                "type T : Data = {{ a: {} }}\n",
                nested("{ a: ", "Int", " }", n)
            ),
            "hql::too_deep",
        ),
        // A syntax error after a deep part: the half-built tree is dropped.
        (format!("{} )", nested("[", "1", "]", n)), "hql::parse"),
        (format!("1{} )", " + 1".repeat(n)), "hql::parse"),
    ];
    for (i, (src, code)) in cases.iter().enumerate() {
        let path = dir.join(format!("deep{i}.hql"));
        std::fs::write(&path, src).unwrap();
        for command in ["check", "run"] {
            let output = std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
                .args([command, path.to_str().unwrap()])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&output.stderr);
            let status = output.status.code();
            if code.is_empty() {
                assert_eq!(status, Some(0), "case {i}, {command}: {err}");
            } else {
                assert_eq!(status, Some(2), "case {i}, {command}: {err}");
                assert!(err.contains(code), "case {i}, {command}: {err}");
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A declared function that calls itself from deep inside its body fills
/// the stack before it reaches the call limit: `hql::recursion`, on the
/// main thread and on the counting threads.
#[test]
fn recursion_stops_before_the_stack_is_full() {
    let body = nested("[", "f(x - 1)", "]", 990);
    let fun = format!("fn f(x) = if x == 0 then [] else {body}\n");
    with_stack(|| {
        let (out, err) = runtime_error(&format!("{fun}\"runs\"\nlet v = f(790)\n"), &[]);
        assert_eq!(out, "\"runs\"\n");
        assert!(err.contains("hql::recursion"), "{err}");
        assert!(err.contains("help: make sure the recursion reaches its base case"));
        // Plain recursion stops at the call limit.
        let (_, err) = runtime_error(
            "fn g(x) = if x == 0 then 0 else 1 + g(x - 1)\ng(100000)\n",
            &[],
        );
        assert!(err.contains("`g` calls itself more than 800 deep"), "{err}");
        assert_eq!(
            eval1("fn g(x) = if x == 0 then 0 else 1 + g(x - 1)\ng(799)"),
            "799"
        );
    });
    // On the counting threads: a rule that recurses deep for one record in
    // the second half of a file big enough to be split.
    let dir = std::env::temp_dir().join(format!("hql-limits-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut data = String::new();
    for i in 0..50_000 {
        let a = if i == 40_000 { -1 } else { 1 };
        data.push_str(&format!(
            "{{\"a\": {a}, \"pad\": \"xxxxxxxxxxxxxxxxxxxx\"}}\n"
        ));
    }
    std::fs::write(dir.join("d.jsonl"), data).unwrap();
    let body = nested("[", "f(x - 1)", "]", 60);
    let program = format!(
        "fn f(x) = if x == 0 then 0 else {body} == [] or true\n\
         type T : DataContract = {{ a: Int\n pad: String\n require a != -1 or f(700) }}\n\
         source(file(\"d.jsonl\"), Json) | validate(T) | report()\n"
    );
    std::fs::write(dir.join("p.hql"), program).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", "--threads", "2", "p.hql"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert_eq!(
        out,
        "{total: 50000, ok: 50000, err: 0, warned: 0, by_rule: []}\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// ------------------------------------------------------------- deep data

/// Data nested deeper than the decoder's limit (512 levels) is a `decode`
/// failure with its origin, and reading goes on; at the limit it is read,
/// validated and printed.
#[test]
fn deep_data_is_a_decode_failure_and_reading_goes_on() {
    with_stack(|| {
        let deep = nested("[", "1", "]", 100_000);
        let at_limit = nested("[", "1", "]", 512);
        let file = format!("{{\"a\": 1}}\n{deep}\n{{\"a\": {deep}}}\n{at_limit}\n{{\"a\": 2}}\n");
        let files = [("d.jsonl", file.as_str())];
        let src = "type T : Data = { a: Int }\n\
                   source(file(\"d.jsonl\"), Json) | validate(T) | errs() | map(e => [e.origin.line, e.failures[0].kind])\n\
                   source(file(\"d.jsonl\"), Json) | validate(T) | oks() | map(r => r.a)\n\
                   source(file(\"d.jsonl\"), Json) | validate(T) | report()\n";
        let out = ok_out(src, &files);
        assert_eq!(
            out,
            "[[2, \"decode\"], [3, \"decode\"], [4, \"not_record\"]]\n[1, 2]\n\
             {total: 5, ok: 2, err: 3, warned: 0, by_rule: [{rule: \"decode\", kind: \"decode\", count: 2}, {rule: \"T.not_record\", kind: \"not_record\", count: 1}]}\n"
        );
        // The same in a JSON array: the deep element fails, the next is read.
        let array = format!("[\n{deep},\n{{\"a\": 3}}\n]\n");
        let src = "type T : Data = { a: Int }\n\
                   source(file(\"d.json\"), Json) | validate(T) | errs() | map(e => [e.origin.line, e.failures[0].kind])\n\
                   source(file(\"d.json\"), Json) | validate(T) | oks() | map(r => r.a)\n";
        let out = ok_out(src, &[("d.json", array.as_str())]);
        assert_eq!(out, "[[2, \"decode\"]]\n[3]\n");
        // A too deep line's failure says why, not what it holds.
        let src = "type T : Data = { a: Int }\n\
                   source(file(\"d.jsonl\"), Json) | validate(T) | errs() | map(e => e.failures[0].message) | first()\n";
        let out = ok_out(src, &files);
        assert!(out.contains("nested deeper than 512 levels"), "{out}");
        // The deepest data read is printed, as HQL and as JSON.
        let inner = nested("[", "1", "]", 511);
        let line = format!("{{\"a\": {inner}}}\n");
        let files = [("d.jsonl", line.as_str())];
        let src = "source(file(\"d.jsonl\"), Json)\n";
        assert_eq!(ok_out(src, &files), format!("[{{a: {inner}}}]\n"));
        let (out, err, status) = run_json(src, &files);
        assert_eq!((status, err.as_str()), (0, ""));
        assert_eq!(out, format!("{{\"a\":{inner}}}\n"));
    });
}

// ------------------------------------------------------- large programs

/// Programs large enough that any phase doing per-statement work over the
/// whole program (or per-field work over a whole record) would not finish
/// in any reasonable time: 200,000 statements took hours before each such
/// spot was made linear. Each must run to its right result.
#[test]
fn large_programs_run_in_time_proportional_to_their_size() {
    with_stack(|| {
        let n = 200_000;
        assert_eq!(ok_out(&"let a = 1\n".repeat(n), &[]), "");
        let src = format!("let x = 0\n{}x\n", "let x = x + 1\n".repeat(n));
        assert_eq!(ok_out(&src, &[]), format!("{n}\n"));
        let out = ok_out(&"1\n".repeat(n), &[]);
        assert_eq!(out.len(), 2 * n);
        let src = (0..n)
            .map(|i| format!("check \"c{i}\": {i} == {i}\n"))
            .collect::<String>();
        assert_eq!(ok_out(&src, &[]), "");
        let src = format!("{}1\n", "/// a doc comment\n".repeat(n));
        assert_eq!(ok_out(&src, &[]), "1\n");
        let fields: Vec<String> = (0..n).map(|i| format!("f{i}: x")).collect();
        let src = format!("let x = 1\n{{{}}} | keys() | len()\n", fields.join(", "));
        assert_eq!(ok_out(&src, &[]), format!("{n}\n"));
        // Keys from data: repeated ones keep their first place, last value.
        let keys: Vec<String> = (0..n)
            .map(|i| format!("\"k{}\": {i}", i % (n / 2)))
            .collect();
        let data = format!("{{{}}}\n", keys.join(", "));
        let src = "source(file(\"d.jsonl\"), Json) | map(r => [len(keys(r)), r.k0, r.k1])\n";
        let out = ok_out(src, &[("d.jsonl", data.as_str())]);
        assert_eq!(out, format!("[[{}, {}, {}]]\n", n / 2, n / 2, n / 2 + 1));
    });
}

/// A name of a million characters is one unknown name, with no
/// "did you mean" measured against every candidate letter by letter.
#[test]
fn a_very_long_name_is_one_quick_error() {
    let name = "a".repeat(1_000_000);
    let err = static_error(
        &format!("\"runs?\"\nlet {name}b = 1\n{name}\n"),
        "hql::unknown_name",
    );
    assert_eq!(err.matches("hql::unknown_name").count(), 1);
    assert!(err.len() < 3_000, "{} bytes", err.len());
}

/// A value can nest deeper than any one statement: each `let` may nest
/// the one before. Its static type is followed only so far, and comparing,
/// printing and dropping it take time in proportion to its size.
#[test]
fn values_nest_deeper_than_statements() {
    with_stack(|| {
        let mut src = String::from("let a0 = 1\n");
        for i in 1..=100 {
            src.push_str(&format!(
                "let a{i} = {}\n",
                nested("[", &format!("a{}", i - 1), "]", 990)
            ));
        }
        src.push_str("a100 == a100\nlen(a100)\na100\n");
        let out = ok_out(&src, &[]);
        let deep = nested("[", "1", "]", 99_000);
        assert_eq!(out, format!("true\n1\n{deep}\n"));
    });
}

/// Each type of an inheritance chain holds its ancestors' fields, so a
/// chain costs the square of its depth; nothing in it may cost more (every
/// type once measured all its ancestors' fields again for each ancestor,
/// the cube: 1,000 levels took 17 s). 600 levels check and validate with
/// every inherited field.
#[test]
fn a_deep_inheritance_chain_is_checked_once_per_level() {
    let depth = 600;
    let mut src = String::from("type T0 : DataContract = {\n    f0: Int\n    require f0 >= 0\n}\n");
    for i in 1..depth {
        src.push_str(&format!("type T{i} : T{} = {{ f{i}: Int }}\n", i - 1));
    }
    let last = depth - 1;
    src.push_str(&format!(
        "[{{f0: -1}}] | validate(T{last}) | errs() | map(e => len(e.failures))\n"
    ));
    with_stack(|| {
        // The record lacks every field but `f0`, which breaks T0's rule.
        assert_eq!(ok_out(&src, &[]), format!("[{depth}]\n"));
    });
}
