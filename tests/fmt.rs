//! `hql fmt`: the canonical layout (snapshots: source, then what it
//! becomes), the command's files and exit statuses, and the repository
//! kept formatted — with the formatter held to idempotence and to keeping
//! every statement's meaning.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use hql::cli::fmt::format_markdown;
use hql::cli::notebook::parse_cells;
use hql::syntax::format::{format_source, stmt_text};
use hql::syntax::lexer::lex_with_comments;
use hql::syntax::parser::parse;

fn fmt(src: &str) -> String {
    let once = format_source(src).expect("the snapshot parses");
    assert_eq!(format_source(&once).unwrap(), once, "not idempotent");
    assert_same_meaning(src, &once, "snapshot");
    once
}

/// The statements of both texts have the same canonical text, and the
/// output keeps every comment of the input.
fn assert_same_meaning(before: &str, after: &str, name: &str) {
    let texts = |src: &str| -> Vec<String> {
        let module = parse(src).unwrap_or_else(|e| panic!("{name} does not parse: {e:?}"));
        module.stmts.iter().map(stmt_text).collect()
    };
    assert_eq!(texts(before), texts(after), "{name}: meaning changed");
    let comments = |src: &str| -> Vec<String> {
        let (_, comments) = lex_with_comments(src).unwrap();
        comments
            .iter()
            .map(|c| src[c.span.clone()].trim_end().to_string())
            .collect::<Vec<String>>()
    };
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    assert_eq!(
        sorted(comments(before)),
        sorted(comments(after)),
        "{name}: comments lost"
    );
}

// ------------------------------------------------------------ the layout

#[test]
fn spacing_and_blank_line_groups() {
    let src = "\n\nlet  x=1+2\n\n\n\nlet y = [1,2]\nx*  3\n\n";
    assert_eq!(fmt(src), "let x = 1 + 2\n\nlet y = [1, 2]\nx * 3\n");
}

#[test]
fn an_and_inside_an_or_is_parenthesised() {
    let src = "type T : DataContract = {\n    a: Int\n    require a > 0 or a < -5 and a != -7\n}\nlet k = x => x and 1 > 0 or not x\n";
    assert_eq!(
        fmt(src),
        "type T : DataContract = {\n    a: Int\n    require a > 0 or (a < -5 and a != -7)\n}\nlet k = x => (x and 1 > 0) or not x\n"
    );
}

#[test]
fn comments_in_every_place() {
    let src = r#"#!/usr/bin/env hql
// Header comment.

/// A reading.
@version("1.0")   // the contract's version
type Reading : Data = {   // opening
    // about the sensor

    /// The sensor's name.
    sensor: String   // end of a field
    value?: Float = 0.0
    // before the rules
    require value? >= 0 else "negative"   // end of a rule
    // last in the body
}   // after the body

let readings = [{sensor: "a", value: 1.0}]
    // between stages
    | validate(Reading)
    | oks()   // end of a stage
// at the end
"#;
    let want = r#"#!/usr/bin/env hql
// Header comment.

/// A reading.
@version("1.0") // the contract's version
type Reading : Data = { // opening
    // about the sensor

    /// The sensor's name.
    sensor: String // end of a field
    value?: Float = 0.0
    // before the rules
    require value? >= 0 else "negative" // end of a rule
    // last in the body
} // after the body

let readings = [{sensor: "a", value: 1.0}]
    // between stages
    | validate(Reading)
    | oks() // end of a stage
// at the end
"#;
    assert_eq!(fmt(src), want);
}

#[test]
fn a_comment_inside_a_one_line_expression_moves_above_or_to_the_end() {
    let src = "let xs = [1, // one\n  // two\n  2]\n";
    assert_eq!(fmt(src), "// two\nlet xs = [1, 2] // one\n");
}

#[test]
fn types_with_annotations_fields_defaults_and_rules() {
    let src = r#"@owner("ops") @version("2.0")
type Order:DataContract={order_id:String,"unit price"?:Float=1.5,tags:List[String]|Null
address: {street: String, city: String}
require positive: self["unit price"]? > 0
warn order_id != "" else "empty id"
validate order_id with is_order_id
unique(order_id)
unique (order_id, tags)}
type Empty : Data = {}
type Kg = Float require positive: self > 0 warn self < 1000
fn is_order_id(s: String) -> Bool = starts_with(s, "O-")
check "orders":1<2
import "x.hql"
"#;
    let want = r#"@owner("ops")
@version("2.0")
type Order : DataContract = {
    order_id: String
    "unit price"?: Float = 1.5
    tags: List[String] | Null
    address: { street: String, city: String }
    require positive: self["unit price"]? > 0
    warn order_id != "" else "empty id"
    validate order_id with is_order_id
    unique order_id
    unique (order_id, tags)
}
type Empty : Data = {}
type Kg = Float
    require positive: self > 0
    warn self < 1000
fn is_order_id(s: String) -> Bool = starts_with(s, "O-")
check orders: 1 < 2
import "x.hql"
"#;
    // `import` needs its file only when the program runs; the layout is
    // checked without running it.
    assert_eq!(fmt(src), want);
}

#[test]
fn expectations_are_laid_out_as_members() {
    let src = r#"type Order : DataContract = {placed: Timestamp, email?: String, id: String
expect   rows>=1_000 ,expect budget:failures<=1%
/// fresh enough
expect  warn fresh :age( placed )<=3d // a day is fine too
expect 0.5%>=missing(email) and not(nulls(email)>0 or distinct(id)<10)
expect orphans(id,source("customers")|map(c=>c.id))==0
expect orphans(id,["a","b"])==0
}
let r = 10%3
"#;
    let want = r#"type Order : DataContract = {
    placed: Timestamp
    email?: String
    id: String
    expect rows >= 1_000
    expect budget: failures <= 1%
    /// fresh enough
    expect warn fresh: age(placed) <= 3d // a day is fine too
    expect 0.5% >= missing(email) and not (nulls(email) > 0 or distinct(id) < 10)
    expect orphans(id, source("customers") | map(c => c.id)) == 0
    expect orphans(id, ["a", "b"]) == 0
}
let r = 10 % 3
"#;
    assert_eq!(fmt(src), want);
}

#[test]
fn an_inline_record_with_docs_or_comments_goes_one_field_a_line() {
    let src = "type T : Data = {\n    a: {\n        /// the street\n        street: String\n        city: String // where\n    } | Null\n    b: { x: Int }\n}\n";
    assert_eq!(fmt(src), src);
}

#[test]
fn a_pipeline_wider_than_100_columns_goes_one_stage_a_line() {
    let src = "source(file(\"examples/contracts/movies.jsonl\"), Json) | validate(Movie) | errs() | flat_map(e => e.failures) | map(f => f.rule)\nxs | count()\n";
    let want = "source(file(\"examples/contracts/movies.jsonl\"), Json)\n    | validate(Movie)\n    | errs()\n    | flat_map(e => e.failures)\n    | map(f => f.rule)\nxs | count()\n";
    assert_eq!(fmt(src), want);
    // A short one broken by its author is joined again.
    assert_eq!(fmt("let n = xs\n    | count()\n"), "let n = xs | count()\n");
}

#[test]
fn wide_lists_and_conditionals_break() {
    let src = r#"let codes = ["AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT",
    "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS", "BT", "BV"]
let rows = [{title: "Up", year: 2009}, {title: "Metropolis", year: 1927}, {title: "Nosferatu", year: 1922}] | validate(Movie)
fn days(year: Int, month: Int) -> Int = if month < 1 or month > 12 then 0 else if month == 2 then 28 + leap(year) else if month in [4, 6, 9, 11] then 30 else 31
"#;
    let want = r#"let codes = [
    "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT",
    "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS",
    "BT", "BV"
]
let rows = [
    {title: "Up", year: 2009},
    {title: "Metropolis", year: 1927},
    {title: "Nosferatu", year: 1922}
] | validate(Movie)
fn days(year: Int, month: Int) -> Int =
    if month < 1 or month > 12 then 0
    else if month == 2 then 28 + leap(year)
    else if month in [4, 6, 9, 11] then 30
    else 31
"#;
    assert_eq!(fmt(src), want);
}

#[test]
fn meaning_is_kept_where_layout_would_change_it() {
    // A `let` value that is an implication keeps its parentheses (bare, it
    // would read as a lambda); a statement cannot start with `-` (the line
    // would continue the one before).
    assert_eq!(fmt("let f = (a => b)\n(-x)\n"), "let f = (a => b)\n(-x)\n");
    // A check's label stays a string when it is not a plain name.
    assert_eq!(fmt("check \"if\": true\n"), "check \"if\": true\n");
}

// ------------------------------------------------------------ Markdown

#[test]
fn markdown_formats_hql_blocks_only() {
    let md = "# T\n\n```hql\nlet  x=1\n```\n\n```output\n```\n\n```hql error\nlet  y =\n```\n\n```text\nlet  z=1\n```\n\n<!-- fmt: off -->\n```hql\n[1]\n  | count()\n```\n";
    let want = md.replacen("let  x=1", "let x = 1", 1);
    assert_eq!(format_markdown(md).unwrap(), want);
    assert_eq!(format_markdown(&want).unwrap(), want);
}

// ------------------------------------------------------------ the command

fn hql(args: &[&str], dir: &Path, stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the hql binary runs");
    use std::io::Write;
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hql-fmt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn files_are_rewritten_in_place() {
    let dir = scratch("rewrite");
    std::fs::write(dir.join("a.hql"), "let  x=1\n").unwrap();
    std::fs::write(dir.join("b.hql"), "let y = 2\n").unwrap();
    std::fs::write(dir.join("n.md"), "```hql\n1+1\n```\n").unwrap();
    let out = hql(&["fmt", "a.hql", "b.hql", "n.md"], &dir, "");
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), String::new())
    );
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    assert_eq!(read("a.hql"), "let x = 1\n");
    assert_eq!(read("b.hql"), "let y = 2\n");
    assert_eq!(read("n.md"), "```hql\n1 + 1\n```\n");
}

#[test]
fn check_names_the_files_that_would_change_and_exits_1() {
    let dir = scratch("check");
    std::fs::write(dir.join("a.hql"), "let  x=1\n").unwrap();
    std::fs::write(dir.join("b.hql"), "let y = 2\n").unwrap();
    std::fs::write(dir.join("c.md"), "```hql\n1+1\n```\n").unwrap();
    let out = hql(&["fmt", "--check", "a.hql", "b.hql", "c.md"], &dir, "");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "a.hql\nc.md\n");
    assert_eq!(
        std::fs::read_to_string(dir.join("a.hql")).unwrap(),
        "let  x=1\n"
    );
    let out = hql(&["fmt", "--check", "b.hql"], &dir, "");
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), String::new())
    );
}

#[test]
fn a_dash_formats_standard_input_to_standard_output() {
    let dir = scratch("stdin");
    let out = hql(&["fmt", "-"], &dir, "xs|count( )\n");
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), "xs | count()\n".into())
    );
    let out = hql(&["fmt", "--check", "-"], &dir, "xs|count( )\n");
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(1), "<stdin>\n".into())
    );
}

#[test]
fn a_file_that_does_not_parse_is_reported_and_left_untouched() {
    let dir = scratch("broken");
    let broken = "let  x = (1 +\n// kept\n";
    std::fs::write(dir.join("broken.hql"), broken).unwrap();
    std::fs::write(dir.join("ok.hql"), "let  y=2\n").unwrap();
    let out = hql(&["fmt", "broken.hql", "ok.hql"], &dir, "");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("hql::parse") && err.contains("broken.hql:"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(dir.join("broken.hql")).unwrap(),
        broken.as_bytes()
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("ok.hql")).unwrap(),
        "let y = 2\n"
    );
    // In a notebook, the error points at the block's line in the file.
    std::fs::write(dir.join("n.md"), "# N\n\n```hql\nlet = 1\n```\n").unwrap();
    let out = hql(&["fmt", "n.md"], &dir, "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("n.md:4:5"),
        "{}",
        text(&out.stderr)
    );
}

// ------------------------------------------------------------ the repository

fn files(dir: &Path, ext: &str, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, ext, found);
        } else if path.extension().is_some_and(|e| e == ext) {
            found.push(path);
        }
    }
}

/// Every `.hql` file under `examples/` and `stdlib/` that parses (the
/// examples of syntax errors do not), and the README and `docs/*.md`.
fn repository() -> (Vec<PathBuf>, Vec<PathBuf>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut hql = Vec::new();
    files(&root.join("examples"), "hql", &mut hql);
    files(&root.join("stdlib"), "hql", &mut hql);
    hql.retain(|p| parse(&std::fs::read_to_string(p).unwrap()).is_ok());
    let mut md = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "md") {
            md.push(entry.path());
        }
    }
    (hql, md)
}

#[test]
fn the_repository_is_formatted_and_fmt_is_idempotent_over_it() {
    let (hql, md) = repository();
    assert!(hql.len() > 50, "{} files", hql.len());
    let mut unformatted = Vec::new();
    for path in &hql {
        let src = std::fs::read_to_string(path).unwrap();
        let once = format_source(&src).unwrap();
        assert_eq!(format_source(&once).unwrap(), once, "{}", path.display());
        if once != src {
            unformatted.push(path.display().to_string());
        }
    }
    for path in &md {
        let src = std::fs::read_to_string(path).unwrap();
        let once = format_markdown(&src).unwrap();
        assert_eq!(format_markdown(&once).unwrap(), once, "{}", path.display());
        if once != src {
            unformatted.push(path.display().to_string());
        }
    }
    assert!(
        unformatted.is_empty(),
        "not formatted (run `hql fmt` on them): {unformatted:?}"
    );
}

#[test]
fn formatting_keeps_the_meaning_of_every_statement_in_the_repository() {
    let (hql, md) = repository();
    for path in &hql {
        let src = std::fs::read_to_string(path).unwrap();
        let out = format_source(&src).unwrap();
        assert_same_meaning(&src, &out, &path.display().to_string());
    }
    for path in &md {
        for cell in parse_cells(&std::fs::read_to_string(path).unwrap()) {
            if cell.expect_error {
                continue;
            }
            let name = format!("{}:{}", path.display(), cell.line);
            let out = format_source(&cell.code).unwrap();
            assert_same_meaning(&cell.code, &out, &name);
        }
    }
}

#[test]
fn a_rewritten_file_keeps_its_executable_bit() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("exec");
    let path = dir.join("tool.hql");
    std::fs::write(&path, "#!/usr/bin/env hql\nlet  x=1\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = hql(&["fmt", "tool.hql"], &dir, "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "#!/usr/bin/env hql\nlet x = 1\n"
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
}
