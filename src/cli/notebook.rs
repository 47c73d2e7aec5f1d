//! Data checks kept as documents: `test_file(path, text) -> FileReport`.
//!
//! A `.hql` file's `check` statements are its cases. A Markdown file is a
//! notebook: its ` ```hql ` blocks are cells run in order in one session,
//! each a case; a following ` ```output ` block is what the cell must print;
//! a ` ```hql error ` cell passes when it yields a diagnostic.

use std::rc::Rc;

use crate::cli::kernel::Kernel;
use crate::runtime::eval::Host;
use crate::session::EXIT_STATIC;
use crate::syntax::ast;

/// One case's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub passed: bool,
    /// Not run: the cell needs what `--with` did not name.
    pub skipped: bool,
    pub label: String,
    /// `file:line`.
    pub place: String,
    /// Why it failed: the check and its operands, a diff, a diagnostic.
    pub detail: String,
}

/// The cases of one file; `updated` is the notebook with its output blocks
/// rewritten (when asked for); `static_error` when a `.hql` file did not
/// pass its static checks.
#[derive(Debug, Default)]
pub struct FileReport {
    pub cases: Vec<Case>,
    /// With `--diagnostics json`: the failing cases' diagnostics, JSON
    /// Lines for standard error (their details then say so).
    pub diagnostics: String,
    pub updated: Option<String>,
    pub static_error: bool,
}

/// A code cell of a notebook.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// 1-based line of the opening fence.
    pub line: usize,
    pub code: String,
    pub expect_error: bool,
    pub output: Option<OutputBlock>,
    /// ` ```hql needs=NAME `: the cell runs only under `--with NAME`.
    pub needs: Option<String>,
}

/// An ` ```output ` block: its text and the lines it spans (the content,
/// without the fences; 0-based, end exclusive).
#[derive(Debug, Clone, PartialEq)]
pub struct OutputBlock {
    pub line: usize,
    pub text: String,
    pub content: std::ops::Range<usize>,
}

/// Run the cases of a `.hql` file or a Markdown notebook.
pub fn test_file(
    path: &str,
    text: &str,
    host: Rc<dyn Host>,
    update: bool,
    json: bool,
    with: &[String],
) -> FileReport {
    let kernel = Kernel::new(host).with_json_diagnostics(json);
    let mut shown = Shown {
        json,
        stderr: String::new(),
    };
    let mut report = if path.ends_with(".md") {
        test_notebook(path, text, kernel, (update, with), &mut shown)
    } else {
        test_program(path, text, kernel, &mut shown)
    };
    report.diagnostics = shown.stderr;
    report
}

/// Where a failing case's diagnostics go: into its detail, or with
/// `--diagnostics json` to standard error, the detail saying so.
struct Shown {
    json: bool,
    stderr: String,
}

impl Shown {
    fn detail(&mut self, diagnostics: &str) -> String {
        if self.json {
            self.stderr.push_str(diagnostics);
            "(diagnostics on standard error)".into()
        } else {
            diagnostics.trim_end().to_string()
        }
    }
}

fn test_program(path: &str, text: &str, mut kernel: Kernel, shown: &mut Shown) -> FileReport {
    let out = kernel.execute(path, text);
    let mut cases: Vec<Case> = out.checks.iter().map(check_case).collect();
    let static_error = out.status == EXIT_STATIC;
    if out.status != 0 && out.checks.iter().all(|c| c.passed) {
        cases.push(Case {
            passed: false,
            skipped: false,
            label: if static_error {
                "static check".into()
            } else {
                "run".into()
            },
            place: path.to_string(),
            detail: shown.detail(&out.diagnostics),
        });
    }
    FileReport {
        cases,
        updated: None,
        static_error,
        diagnostics: String::new(),
    }
}

fn check_case(c: &crate::session::CheckResult) -> Case {
    Case {
        passed: c.passed,
        skipped: false,
        label: c.label.clone(),
        place: c.place.clone(),
        detail: if c.passed {
            String::new()
        } else {
            check_detail(c, format!("check {}", c.condition))
        },
    }
}

/// A failed check: `head`, then its operands when it compared two.
fn check_detail(c: &crate::session::CheckResult, head: String) -> String {
    match &c.operands {
        Some(ops) => format!("{head}\n{ops}"),
        None => head,
    }
}

fn test_notebook(
    path: &str,
    text: &str,
    mut kernel: Kernel,
    (update, with): (bool, &[String]),
    shown: &mut Shown,
) -> FileReport {
    let cells = parse_cells(text);
    let mut cases = Vec::new();
    let mut actual_outputs = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let place = format!("{path}:{}", cell.line);
        if let Some(need) = cell.needs.as_ref().filter(|n| !with.contains(n)) {
            cases.push(Case {
                passed: true,
                skipped: true,
                label: cell_label(i + 1, cell),
                place,
                detail: format!("needs {need}: `hql test --with {need}` runs it"),
            });
            actual_outputs.push(
                cell.output
                    .as_ref()
                    .map(|o| o.text.clone())
                    .unwrap_or_default(),
            );
            continue;
        }
        // Blank lines in front make diagnostics count lines as the file does.
        let code = "\n".repeat(cell.line) + &cell.code;
        let out = kernel.execute(path, &code);
        cases.push(cell_case(i + 1, cell, (&place, path), &out, shown));
        actual_outputs.push(out.text);
    }
    let updated = update.then(|| rewrite_outputs(text, &cells, &actual_outputs));
    FileReport {
        cases,
        updated,
        static_error: false,
        diagnostics: String::new(),
    }
}

fn cell_case(
    n: usize,
    cell: &Cell,
    (place, path): (&str, &str),
    out: &crate::cli::kernel::CellOutput,
    shown: &mut Shown,
) -> Case {
    let label = cell_label(n, cell);
    let mut problems = Vec::new();
    if cell.expect_error {
        if out.status == 0 {
            problems.push("expected a diagnostic, but the cell ran without one".to_string());
        }
    } else {
        for c in out.checks.iter().filter(|c| !c.passed) {
            let head = format!("check {:?} failed: {}", c.label, c.condition);
            problems.push(check_detail(c, head));
        }
        if out.status != 0 && out.checks.iter().all(|c| c.passed) {
            problems.push(shown.detail(&out.diagnostics));
        }
    }
    if let Some(expected) = &cell.output {
        if expected.text != out.text {
            problems.push(format!(
                "output differs ({path}:{}){}",
                expected.line,
                output_diff(&expected.text, &out.text)
            ));
        }
    }
    Case {
        passed: problems.is_empty(),
        skipped: false,
        label,
        place: place.to_string(),
        detail: problems.join("\n"),
    }
}

/// `cell N: ` and the cell's first line of code.
fn cell_label(n: usize, cell: &Cell) -> String {
    let first = cell
        .code
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with("//"));
    format!("cell {n}: {}", clip(first.unwrap_or("").trim(), 48))
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max).collect::<String>())
    }
}

/// The reports of `hql test --format junit`: one `<testsuite>` a file
/// (`path`, its report, whether an empty file passes), one `<testcase>` a
/// case, a failed case's detail in its `<failure>`.
pub fn junit(files: &[(&str, FileReport, bool)]) -> String {
    let cases = |r: &FileReport| r.cases.len().max(1);
    let failures = |r: &FileReport, allow_empty: bool| {
        let failed = r.cases.iter().filter(|c| !c.passed).count();
        failed + usize::from(r.cases.is_empty() && !allow_empty)
    };
    let total: usize = files.iter().map(|(_, r, _)| cases(r)).sum();
    let failed: usize = files.iter().map(|(_, r, a)| failures(r, *a)).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"hql test\" tests=\"{total}\" failures=\"{failed}\">\n"
    ));
    for (path, report, allow_empty) in files {
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">\n",
            xml(path),
            cases(report),
            failures(report, *allow_empty)
        ));
        for case in &report.cases {
            out.push_str(&format!(
                "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\"",
                xml(&case.label),
                xml(path),
                xml(&case.place)
            ));
            if case.skipped {
                out.push_str(&format!(
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                    xml(&case.detail)
                ));
            } else if case.passed {
                out.push_str("/>\n");
            } else {
                let message = case.detail.lines().next().unwrap_or("failed");
                out.push_str(&format!(
                    ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n",
                    xml(message),
                    xml(&case.detail)
                ));
            }
        }
        if report.cases.is_empty() {
            let name = format!("{path}: nothing to run");
            out.push_str(&format!(
                "    <testcase name=\"{}\" classname=\"{}\"",
                xml(&name),
                xml(path)
            ));
            if *allow_empty {
                out.push_str(">\n      <skipped/>\n    </testcase>\n");
            } else {
                out.push_str(
                    ">\n      <failure message=\"no cases in the file\"/>\n    </testcase>\n",
                );
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Text as XML character data or an attribute value: the five special
/// characters escaped, and characters XML 1.0 cannot hold replaced.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// The code cells of a Markdown text, each with its output block.
pub fn parse_cells(text: &str) -> Vec<Cell> {
    let lines: Vec<&str> = text.lines().collect();
    let mut cells: Vec<Cell> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(info) = fence(lines[i]) else {
            i += 1;
            continue;
        };
        let start = i;
        // A fence closes with a bare ``` (a line with an info string is content).
        let end = (i + 1..lines.len())
            .find(|&j| fence(lines[j]) == Some(""))
            .unwrap_or(lines.len());
        let body: String = lines[start + 1..end]
            .iter()
            .map(|l| format!("{l}\n"))
            .collect();
        let mut words = info.split_whitespace();
        let needs = info
            .split_whitespace()
            .find_map(|w| w.strip_prefix("needs="))
            .map(str::to_string);
        match words.next() {
            Some("hql") if words.all(|w| w == "error" || w.starts_with("needs=")) => {
                cells.push(Cell {
                    line: start + 1,
                    code: body,
                    expect_error: info.split_whitespace().any(|w| w == "error"),
                    output: None,
                    needs,
                })
            }
            Some("output") if info == "output" => {
                let follows_cell = cells.last().is_some_and(|c| c.output.is_none())
                    && lines[..start]
                        .iter()
                        .rev()
                        .take_while(|l| fence(l).is_none())
                        .all(|l| l.trim().is_empty());
                if let (true, Some(cell)) = (follows_cell, cells.last_mut()) {
                    cell.output = Some(OutputBlock {
                        line: start + 1,
                        text: body,
                        content: start + 1..end,
                    });
                }
            }
            _ => {}
        }
        i = end + 1;
    }
    cells
}

/// The info string of a fence line (` ```hql ` → `hql`).
pub(crate) fn fence(line: &str) -> Option<&str> {
    line.trim_start().strip_prefix("```").map(str::trim)
}

/// The notebook with every output block holding the actual output.
fn rewrite_outputs(text: &str, cells: &[Cell], actual: &[String]) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    let mut next = 0;
    for (cell, new) in cells.iter().zip(actual) {
        let Some(block) = &cell.output else { continue };
        for l in &lines[next..block.content.start] {
            out.push_str(l);
            out.push('\n');
        }
        out.push_str(new);
        next = block.content.end;
    }
    for l in &lines[next.min(lines.len())..] {
        out.push_str(l);
        out.push('\n');
    }
    if !text.ends_with('\n') {
        out.pop();
    }
    out
}

/// How an output differs from the one expected. Where both have the same
/// number of lines and each differing pair is a printed value, the values
/// are compared part by part and each difference is named by its path
/// (`by_rule[2].count: 70 → 73`); otherwise a line diff.
fn output_diff(expected: &str, actual: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    if a.len() == b.len() {
        let mut parts = Vec::new();
        for (n, (x, y)) in a.iter().zip(&b).enumerate() {
            if x == y {
                continue;
            }
            let Some(found) = value_diff(x, y) else {
                return format!(":\n{}", diff(expected, actual));
            };
            let line = if a.len() > 1 {
                format!("line {}: ", n + 1)
            } else {
                String::new()
            };
            parts.extend(found.into_iter().map(|d| format!("{line}{d}")));
        }
        const SHOWN: usize = 20;
        if parts.len() > SHOWN {
            let more = parts.len() - SHOWN;
            parts.truncate(SHOWN);
            parts.push(format!("… {more} more differences"));
        }
        return format!(", expected → actual:\n{}", parts.join("\n"));
    }
    format!(":\n{}", diff(expected, actual))
}

/// Where two printed values differ, one line per path; `None` when either
/// line is not a value as HQL prints it.
pub fn value_diff(expected: &str, actual: &str) -> Option<Vec<String>> {
    let (a, b) = (printed_value(expected)?, printed_value(actual)?);
    let mut out = Vec::new();
    differences(&a, &b, &mut String::new(), &mut out);
    Some(out)
}

/// A line as the expression it prints.
fn printed_value(line: &str) -> Option<ast::Expr> {
    let module = crate::syntax::parser::parse(line).ok()?;
    match <[ast::Stmt; 1]>::try_from(module.stmts).ok()? {
        [ast::Stmt::Expr(e)] => Some(e),
        _ => None,
    }
}

fn differences(a: &ast::Expr, b: &ast::Expr, path: &mut String, out: &mut Vec<String>) {
    use crate::syntax::ast::ExprKind;
    let text = crate::syntax::canonical::expr_text;
    let at = |path: &str| {
        if path.is_empty() {
            "the value".to_string()
        } else {
            path.trim_start_matches('.').to_string()
        }
    };
    let keep = path.len();
    match (&a.kind, &b.kind) {
        (ExprKind::Record(xs), ExprKind::Record(ys)) => {
            for (k, x) in xs {
                path.push('.');
                path.push_str(&k.text);
                match ys.iter().find(|(j, _)| j.text == k.text) {
                    Some((_, y)) => differences(x, y, path, out),
                    None => out.push(format!("{}: {} → absent", at(path), text(x))),
                }
                path.truncate(keep);
            }
            for (k, y) in ys
                .iter()
                .filter(|(k, _)| xs.iter().all(|(j, _)| j.text != k.text))
            {
                let child = format!("{path}.{}", k.text);
                out.push(format!("{}: absent → {}", at(&child), text(y)));
            }
        }
        (ExprKind::List(xs), ExprKind::List(ys)) => {
            for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
                path.push_str(&format!("[{i}]"));
                differences(x, y, path, out);
                path.truncate(keep);
            }
            if xs.len() != ys.len() {
                out.push(format!(
                    "{}: {} elements → {}",
                    at(path),
                    xs.len(),
                    ys.len()
                ));
            }
        }
        // `ok(…)` and `err(…)`: the same wrapper, what is inside compared.
        (ExprKind::Call(f, xs), ExprKind::Call(g, ys))
            if text(f) == text(g) && xs.len() == ys.len() =>
        {
            for (x, y) in xs.iter().zip(ys) {
                differences(&x.value, &y.value, path, out);
            }
        }
        _ => {
            let (x, y) = (text(a), text(b));
            if x != y {
                out.push(format!("{}: {x} → {y}", at(path)));
            }
        }
    }
}

/// A line diff: `-` expected only, `+` actual only, `  ` both.
pub fn diff(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    // Longest common subsequence table, from the end.
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push(format!("  {}", a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push(format!("+ {}", b[j]));
            j += 1;
        } else {
            out.push(format!("- {}", a[i]));
            i += 1;
        }
    }
    out.join("\n")
}

/// The files `hql test` runs: each path, or the *.hql and *.md files below
/// a directory (sorted, so the order is stable).
pub fn collect_tests(paths: &[String]) -> Result<Vec<crate::cli::run::TestFile>, String> {
    let mut found = Vec::new();
    for p in paths {
        let path = std::path::Path::new(p);
        if path.is_dir() {
            let mut below = Vec::new();
            walk(path, &mut below).map_err(|e| format!("cannot read {p}: {e}"))?;
            found.extend(below.into_iter().map(|p| (p, false)));
        } else {
            found.push((path.to_path_buf(), true));
        }
    }
    found
        .into_iter()
        .map(|(p, named)| {
            let path = p.to_string_lossy().to_string();
            crate::cli::commands::read_program(&path).map(|text| crate::cli::run::TestFile {
                path,
                text,
                named,
            })
        })
        .collect()
}

fn walk(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, found)?;
        } else if path.extension().is_some_and(|e| e == "hql" || e == "md") {
            found.push(path);
        }
    }
    Ok(())
}

/// Write a notebook back as targets are written: never half a file.
pub fn write_atomically(path: &str, text: &str) -> std::io::Result<()> {
    let mut file = crate::session::host::FsHost::new().create_file(path)?;
    file.write_all(text.as_bytes())?;
    file.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTEBOOK: &str = "# Title\n\n```hql\nlet x = 2\nx + 1\n```\n\n```output\n3\n```\n\n```text\n```hql\n```\n\n```hql error\nx +\n```\n";

    #[test]
    fn cells_and_outputs_are_found() {
        let cells = parse_cells(NOTEBOOK);
        assert_eq!(cells.len(), 2);
        assert_eq!(cells[0].line, 3);
        assert_eq!(cells[0].code, "let x = 2\nx + 1\n");
        assert_eq!(cells[0].output.as_ref().unwrap().text, "3\n");
        assert!(cells[1].expect_error);
    }

    #[test]
    fn outputs_are_rewritten_in_place() {
        let cells = parse_cells(NOTEBOOK);
        let updated = rewrite_outputs(NOTEBOOK, &cells, &["4\n".into(), String::new()]);
        assert_eq!(
            updated,
            NOTEBOOK.replace("```output\n3\n```", "```output\n4\n```")
        );
    }

    #[test]
    fn values_differ_by_path() {
        let expected =
            r#"{total: 4, by_rule: [{rule: "A", count: 70}, {rule: "B", count: 1}], note: "x"}"#;
        let actual =
            r#"{total: 4, by_rule: [{rule: "A", count: 73}, {rule: "B", count: 1}], extra: true}"#;
        assert_eq!(
            value_diff(expected, actual).unwrap(),
            [
                "by_rule[0].count: 70 → 73",
                "note: \"x\" → absent",
                "extra: absent → true"
            ]
        );
        assert_eq!(
            value_diff("[ok(1), err({a: [1, 2]})]", "[ok(1), err({a: [1]})]").unwrap(),
            ["[1].a: 2 elements → 1"]
        );
        assert_eq!(value_diff("3", "4").unwrap(), ["the value: 3 → 4"]);
        assert_eq!(value_diff("<fn f>", "4"), None);
    }

    #[test]
    fn diffs_show_both_sides() {
        assert_eq!(diff("a\nb\nc\n", "a\nx\nc\n"), "  a\n+ x\n- b\n  c");
    }
}
