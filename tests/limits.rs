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
    let src = format!("\"runs?\"\n{}1\n", "x => ".repeat(4_000));
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
