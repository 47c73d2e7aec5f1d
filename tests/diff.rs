//! `hql diff OLD NEW` (tooling.md, "Contract tooling"): one row per item of
//! the classification list, the version verdicts, the readable and JSON
//! reports, and the exit statuses of the built binary.

mod common;
use common::*;

use std::rc::Rc;

use hql::cli::contracts::load;
use hql::session::{Session, Sinks};
use hql::tooling::diff::{diff, TypeDiff};

/// The types of `old` and `new` compared in memory.
fn diffs(old: &str, new: &str) -> Vec<TypeDiff> {
    let host = Rc::new(MemHost::new(&[("old.hql", old), ("new.hql", new)], None));
    let mut err = Vec::new();
    let mut out = std::io::sink();
    let mut sinks = Sinks::plain(&mut out, &mut err);
    let mut types = |file| load(&mut Session::new(host.clone()), file, &mut sinks);
    let (before, after) = (types("old.hql"), types("new.hql"));
    match (before, after) {
        (Ok(a), Ok(b)) => diff(&a.types, &b.types),
        _ => panic!(
            "old:\n{old}\nnew:\n{new}\ndoes not load:\n{}",
            String::from_utf8_lossy(&err)
        ),
    }
}

/// Every change as `Type: class  text`.
fn changes(old: &str, new: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for d in diffs(old, new) {
        for c in &d.changes {
            lines.push(format!("{}: {}  {}", d.name, c.class().name(), c.text()));
        }
    }
    lines
}

/// A row: what it shows, the old program, the new one, every change.
type Row = (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
);

const ROWS: &[Row] = &[
    // Breaking.
    (
        "type removed",
        "type A : Data = { a: Int }\ntype B : Data = { b: Int }",
        "type A : Data = { a: Int }",
        &["B: breaking  type removed: Data record"],
    ),
    (
        "field removed",
        "type T : Data = { a: Int, b: String }",
        "type T : Data = { a: Int }",
        &["T: breaking  field removed: b (String)"],
    ),
    (
        "field renamed: a removal plus an addition",
        "type T : Data = { a: Int }",
        "type T : Data = { b: Int }",
        &[
            "T: breaking  field removed: a (Int)",
            "T: breaking  required field added: b (Int)",
        ],
    ),
    (
        "required field added (nullable or not)",
        "type T : Data = { a: Int }",
        "type T : Data = { a: Int, b: Int | Null }",
        &["T: breaking  required field added: b (Int | Null)"],
    ),
    (
        "optional field made required",
        "type T : Data = { a?: Int }",
        "type T : Data = { a: Int }",
        &["T: breaking  optional field made required: a"],
    ),
    (
        "nullable field made non-null",
        "type T : Data = { a: Int | Null }",
        "type T : Data = { a: Int }",
        &["T: breaking  nullable field made non-null: a: Int | Null → Int"],
    ),
    (
        "field type changed",
        "type T : Data = { a: Int }",
        "type T : Data = { a: String }",
        &["T: breaking  type changed: a: Int → String"],
    ),
    (
        "field type narrowed",
        "type T : Data = { a: Float }",
        "type T : Data = { a: Int }",
        &["T: breaking  type changed: a: Float → Int"],
    ),
    (
        "union shrunk",
        "type T : Data = { a: Int | String }",
        "type T : Data = { a: Int }",
        &["T: breaking  type changed: a: Int | String → Int"],
    ),
    (
        "literal union shrunk",
        "type T : Data = { s: \"open\" | \"shipped\" | \"cancelled\" }",
        "type T : Data = { s: \"open\" | \"shipped\" }",
        &["T: breaking  literal union shrunk: s: \"open\" | \"shipped\" | \"cancelled\" → \"open\" | \"shipped\""],
    ),
    (
        "open kind made closed",
        "type T : Data = { a: Int }",
        "type T : Type = { a: Int }",
        &["T: breaking  open kind made closed: Data → Type"],
    ),
    (
        "require rule added",
        "type T : DataContract = { a: Int }",
        "type T : DataContract = { a: Int\n require a > 0 }",
        &["T: breaking  require rule added: T.a > 0"],
    ),
    (
        "named require rule changed",
        "type T : DataContract = { a: Int\n require pos: a > 0 }",
        "type T : DataContract = { a: Int\n require pos: a >= 1 }",
        &["T: breaking  require rule changed: T.pos: a > 0 → a >= 1"],
    ),
    (
        "unnamed require rule changed: the old identity and the new one, paired",
        "type T : DataContract = { a: Int\n require a > 0 }",
        "type T : DataContract = { a: Int\n require a > 1 }",
        &["T: breaking  require rule changed: T.a > 0 → T.a > 1"],
    ),
    (
        "warning made a require rule",
        "type T : DataContract = { a: Int\n warn pos: a > 0 }",
        "type T : DataContract = { a: Int\n require pos: a > 0 }",
        &["T: breaking  warning made a require rule: T.pos"],
    ),
    (
        "named check added",
        "fn pos(n: Int) -> Bool = n > 0\ntype T : DataContract = { a: Int }",
        "fn pos(n: Int) -> Bool = n > 0\ntype T : DataContract = { a: Int\n validate a with pos }",
        &["T: breaking  named check added: T.a.pos"],
    ),
    (
        "unique key added",
        "type T : DataContract = { a: Int, b: Int }",
        "type T : DataContract = { a: Int, b: Int\n unique a }",
        &["T: breaking  unique key added: T.a.unique"],
    ),
    (
        "unique key changed",
        "type T : DataContract = { a: Int, b: Int\n unique a }",
        "type T : DataContract = { a: Int, b: Int\n unique (a, b) }",
        &["T: breaking  unique key changed: T.a.unique → T.a+b.unique"],
    ),
    (
        "default changed",
        "type T : DataContract = { c: String = \"CH\" }",
        "type T : DataContract = { c: String = \"DE\" }",
        &["T: breaking  default changed: c: \"CH\" → \"DE\""],
    ),
    (
        "default removed",
        "type T : DataContract = { c: String = \"CH\" }",
        "type T : DataContract = { c: String }",
        &["T: breaking  default removed: c (\"CH\")"],
    ),
    (
        "a change inside a named type is reported under that type only",
        "type Item : Type = { q: Int }\ntype Cart : Type = { item: Item, items: List[Item] }",
        "type Item : Type = { q: String }\ntype Cart : Type = { item: Item, items: List[Item] }",
        &["Item: breaking  type changed: q: Int → String"],
    ),
    (
        "inside an inline record, by dotted path",
        "type T : Type = { lines: List[{ sku: String, qty?: Int }] }",
        "type T : Type = { lines: List[{ sku: String, qty: Int }] }",
        &["T: breaking  optional field made required: lines.qty"],
    ),
    (
        "a refinement's rule changed, and its base narrowed",
        "type Code = String | Int require self != \"\"",
        "type Code = String require self != \"-\"",
        &[
            "Code: breaking  type changed: String | Int → String",
            "Code: breaking  require rule changed: Code.self != \"\" → Code.self != \"-\"",
        ],
    ),
    (
        "a field given a refinement type",
        "type T : Data = { e: String }",
        "type T : Data = { e: Email }",
        &["T: breaking  type changed: e: String → Email"],
    ),
    // Additive.
    (
        "type added",
        "type A : Data = { a: Int }",
        "type A : Data = { a: Int }\ntype B : Type = { b: Int }",
        &["B: additive  type added: Type record"],
    ),
    (
        "optional field added",
        "type T : Data = { a: Int }",
        "type T : Data = { a: Int, b?: String }",
        &["T: additive  optional field added: b (String)"],
    ),
    (
        "field added with a default",
        "type T : DataContract = { a: Int }",
        "type T : DataContract = { a: Int, c: String = \"CH\" }",
        &["T: additive  field with a default added: c (String = \"CH\")"],
    ),
    (
        "type widened: Int to Float",
        "type T : Data = { a: Int }",
        "type T : Data = { a: Float }",
        &["T: additive  type widened: a: Int → Float"],
    ),
    (
        "type widened: a union grown",
        "type T : Data = { a: Int }",
        "type T : Data = { a: Int | String }",
        &["T: additive  type widened: a: Int → Int | String"],
    ),
    (
        "type widened: a refinement's rules dropped",
        "type T : Data = { e: Email }",
        "type T : Data = { e: String }",
        &["T: additive  type widened: e: Email → String"],
    ),
    (
        "field made nullable",
        "type T : Data = { a: Int }",
        "type T : Data = { a: Int | Null }",
        &["T: additive  field made nullable: a: Int → Int | Null"],
    ),
    (
        "required field made optional",
        "type T : Data = { a: Int }",
        "type T : Data = { a?: Int }",
        &["T: additive  required field made optional: a"],
    ),
    (
        "literal union grown",
        "type T : Data = { s: \"open\" | \"shipped\" }",
        "type T : Data = { s: \"open\" | \"shipped\" | \"lost\" }",
        &["T: additive  literal union grown: s: \"open\" | \"shipped\" → \"open\" | \"shipped\" | \"lost\""],
    ),
    (
        "require rule removed",
        "type T : DataContract = { a: Int\n require pos: a > 0 }",
        "type T : DataContract = { a: Int }",
        &["T: additive  require rule removed: T.pos (a > 0)"],
    ),
    (
        "require rule made a warning",
        "type T : DataContract = { a: Int\n require pos: a > 0 }",
        "type T : DataContract = { a: Int\n warn pos: a > 0 }",
        &["T: additive  require rule made a warning: T.pos"],
    ),
    (
        "named check removed",
        "fn pos(n: Int) -> Bool = n > 0\ntype T : DataContract = { a: Int\n validate a with pos }",
        "fn pos(n: Int) -> Bool = n > 0\ntype T : DataContract = { a: Int }",
        &["T: additive  named check removed: T.a.pos"],
    ),
    (
        "unique key removed",
        "type T : DataContract = { a: Int\n unique a }",
        "type T : DataContract = { a: Int }",
        &["T: additive  unique key removed: T.a.unique"],
    ),
    (
        "closed kind made open",
        "type T : TypeContract = { a: Int }",
        "type T : DataContract = { a: Int }",
        &["T: additive  closed kind made open: TypeContract → DataContract"],
    ),
    (
        "warn rule added",
        "type T : DataContract = { a: Int }",
        "type T : DataContract = { a: Int\n warn big: a < 100 }",
        &["T: additive  warn rule added: T.big (a < 100)"],
    ),
    (
        "warn rule changed",
        "type T : DataContract = { a: Int\n warn a < 100 }",
        "type T : DataContract = { a: Int\n warn a < 50 }",
        &["T: additive  warn rule changed: T.a < 100 → T.a < 50"],
    ),
    (
        "default added",
        "type T : DataContract = { c: String }",
        "type T : DataContract = { c: String = \"CH\" }",
        &["T: additive  default added: c (\"CH\")"],
    ),
    // Cosmetic.
    (
        "version",
        "@version(\"1.0.0\")\ntype T : Data = { a: Int }",
        "@version(\"1.0.1\")\ntype T : Data = { a: Int }",
        &["T: cosmetic  version: 1.0.0 → 1.0.1"],
    ),
    (
        "owner",
        "@owner(\"sales\")\ntype T : Data = { a: Int }",
        "type T : Data = { a: Int }",
        &["T: cosmetic  owner: sales → none"],
    ),
    (
        "descriptions of the type, a field and a rule",
        "/// Old.\ntype T : DataContract = {\n /// A.\n a: Int\n /// R.\n require r: a > 0 }",
        "/// New.\ntype T : DataContract = {\n /// A!\n a: Int\n /// R!\n require r: a > 0 }",
        &[
            "T: cosmetic  description changed",
            "T: cosmetic  description changed: a",
            "T: cosmetic  description changed: T.r",
        ],
    ),
    (
        "a rule's message",
        "type T : DataContract = { a: Int\n require r: a > 0 else \"a must be positive\" }",
        "type T : DataContract = { a: Int\n require r: a > 0 }",
        &["T: cosmetic  rule message changed: T.r: a must be positive → none"],
    ),
    (
        "the kind renamed with its openness kept",
        "type T : Data = { a: Int }",
        "type T : DataContract = { a: Int }",
        &["T: cosmetic  kind renamed, openness kept: Data → DataContract"],
    ),
    (
        "the order of fields",
        "type T : Data = { a: Int, b: Int }",
        "type T : Data = { b: Int, a: Int }",
        &["T: cosmetic  field order changed: a, b → b, a"],
    ),
    (
        "formatting and comments: no change at all",
        "type T : DataContract = { a: Int, b: Int\n require (a<=b) }",
        "// a comment\ntype T : DataContract = {\n    a: Int\n    b: Int\n\n    require a <= b  // the same rule\n}",
        &[],
    ),
];

/// Every row's changes, the programs made from its old and new text by
/// `program`; fails naming each row that differs.
fn assert_rows(rows: &[Row], program: impl Fn(&str) -> String) {
    let mut wrong = Vec::new();
    for (what, old, new, expected) in rows {
        let found = changes(&program(old), &program(new));
        if found != *expected {
            wrong.push(format!(
                "{what}:\n  expected {expected:#?}\n  found {found:#?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn each_item_of_the_classification_list() {
    assert_rows(ROWS, str::to_string);
}

/// `T : DataContract = { a: Int, e?: String, t: Timestamp, … }` with the
/// expectations given, old and new.
fn with_expects(lines: &str) -> String {
    format!("type T : DataContract = {{ a: Int\n e?: String\n t: Timestamp\n{lines} }}")
}

/// Expectations (language.md §4.11): each row gives the old and new
/// expectation lines of `with_expects`.
const EXPECT_ROWS: &[Row] = &[
    // Breaking.
    (
        "expect added",
        "",
        "expect rows >= 10",
        &["T: breaking  expect added: T.rows >= 10"],
    ),
    (
        "named expect added shows its condition",
        "",
        "expect budget: failures <= 1%",
        &["T: breaking  expect added: T.budget (failures <= 1%)"],
    ),
    (
        "named upper bound tightened",
        "expect budget: failures <= 2%",
        "expect budget: failures <= 1%",
        &["T: breaking  expect changed: T.budget: failures <= 2% → failures <= 1%"],
    ),
    (
        "unnamed lower bound tightened: one expectation changed, old identity → new",
        "expect rows >= 10",
        "expect rows >= 20",
        &["T: breaking  expect changed: T.rows >= 10 → T.rows >= 20"],
    ),
    (
        "operator changed",
        "expect budget: failures <= 10",
        "expect budget: failures < 10",
        &["T: breaking  expect changed: T.budget: failures <= 10 → failures < 10"],
    ),
    (
        "measure changed",
        "expect e: missing(e) <= 5%",
        "expect e: nulls(e) <= 5%",
        &["T: breaking  expect changed: T.e: missing(e) <= 5% → nulls(e) <= 5%"],
    ),
    (
        "a bound of == moved either way",
        "expect n: nulls(a) == 0",
        "expect n: nulls(a) == 1",
        &["T: breaking  expect changed: T.n: nulls(a) == 0 → nulls(a) == 1"],
    ),
    (
        "one bound loosened, another tightened",
        "expect r: rows >= 10 and rows <= 100",
        "expect r: rows >= 5 and rows <= 50",
        &["T: breaking  expect changed: T.r: rows >= 10 and rows <= 100 → rows >= 5 and rows <= 50"],
    ),
    (
        "a bound under not: raising `not rows < n` tightens",
        "expect r: not rows < 100",
        "expect r: not rows < 200",
        &["T: breaking  expect changed: T.r: not rows < 100 → not rows < 200"],
    ),
    (
        "a literal inside arithmetic",
        "expect r: rows - 10 >= failures",
        "expect r: rows - 20 >= failures",
        &["T: breaking  expect changed: T.r: rows - 10 >= failures → rows - 20 >= failures"],
    ),
    (
        "expect warn made an expect",
        "expect warn rows >= 10",
        "expect rows >= 10",
        &["T: breaking  expect warn made an expect: T.rows >= 10"],
    ),
    // Additive.
    (
        "expect removed",
        "expect rows >= 10",
        "",
        &["T: additive  expect removed: T.rows >= 10"],
    ),
    (
        "unnamed lower bound loosened",
        "expect rows >= 1000",
        "expect rows >= 500",
        &["T: additive  expect bound loosened: T.rows >= 1000 → T.rows >= 500"],
    ),
    (
        "named share loosened",
        "expect budget: failures <= 1%",
        "expect budget: failures <= 2.5%",
        &["T: additive  expect bound loosened: T.budget: failures <= 1% → failures <= 2.5%"],
    ),
    (
        "a bound on the left loosened",
        "expect r: 10 <= rows",
        "expect r: 5 <= rows",
        &["T: additive  expect bound loosened: T.r: 10 <= rows → 5 <= rows"],
    ),
    (
        "a duration loosened",
        "expect fresh: age(t) <= 1d",
        "expect fresh: age(t) <= 36h",
        &["T: additive  expect bound loosened: T.fresh: age(t) <= 1d → age(t) <= 36h"],
    ),
    (
        "both bounds of a range loosened",
        "expect r: rows >= 10 and rows <= 100",
        "expect r: rows >= 5 and rows <= 200",
        &["T: additive  expect bound loosened: T.r: rows >= 10 and rows <= 100 → rows >= 5 and rows <= 200"],
    ),
    (
        "a negative bound loosened",
        "expect m: min(a) >= -1",
        "expect m: min(a) >= -5",
        &["T: additive  expect bound loosened: T.m: min(a) >= -1 → min(a) >= -5"],
    ),
    (
        "a bound under not: raising `not rows > n` loosens",
        "expect r: not rows > 100",
        "expect r: not rows > 200",
        &["T: additive  expect bound loosened: T.r: not rows > 100 → not rows > 200"],
    ),
    (
        "an expect made an expect warn",
        "expect rows >= 10",
        "expect warn rows >= 10",
        &["T: additive  expect made an expect warn: T.rows >= 10"],
    ),
    (
        "expect warn added, changed (tightened) and removed",
        "expect warn w: rows >= 10\n expect warn distinct(a) >= 3",
        "expect warn w: rows >= 50\n expect warn missing(e) == 0",
        &[
            "T: additive  expect warn changed: T.w: rows >= 10 → rows >= 50",
            "T: additive  expect warn removed: T.distinct(a) >= 3",
            "T: additive  expect warn added: T.missing(e) == 0",
        ],
    ),
    (
        "two unnamed expectations over the same measures: no pairing",
        "expect rows >= 10\n expect rows <= 100",
        "expect rows >= 5\n expect rows <= 200",
        &[
            "T: breaking  expect added: T.rows >= 5",
            "T: breaking  expect added: T.rows <= 200",
            "T: additive  expect removed: T.rows >= 10",
            "T: additive  expect removed: T.rows <= 100",
        ],
    ),
    // Cosmetic.
    (
        "the same bound written otherwise",
        "expect r: rows >= 1000",
        "expect r: rows >= 1_000",
        &["T: cosmetic  expect rewritten, same bounds: T.r: rows >= 1000 → rows >= 1_000"],
    ),
    (
        "an expectation's description",
        "/// Old.\n expect r: rows >= 1",
        "/// New.\n expect r: rows >= 1",
        &["T: cosmetic  description changed: T.r"],
    ),
    (
        "reordered and reformatted: no change",
        "expect rows >= 1\n expect budget: failures <= 1%",
        "expect budget: (failures<=1%)\n expect rows>=1",
        &[],
    ),
];

#[test]
fn each_expectation_change_is_classified() {
    assert_rows(EXPECT_ROWS, with_expects);
}

/// A type whose field `a` went from Int to String (a breaking change),
/// under the two versions given.
fn versioned(old: Option<&str>, new: Option<&str>) -> (String, String) {
    let program = |version: Option<&str>, ty: &str| {
        let line = version
            .map(|v| format!("@version(\"{v}\")\n"))
            .unwrap_or_default();
        format!("{line}type T : Data = {{ a: {ty} }}\n")
    };
    (program(old, "Int"), program(new, "String"))
}

#[test]
fn the_version_verdicts() {
    let cases: &[(Option<&str>, Option<&str>, bool, &str)] = &[
        (Some("1.4.0"), Some("1.5.0"), false, "needs a major bump: breaking changes since 1.4.0 need 2.0.0 or later (found 1.5.0)"),
        (Some("1.4.0"), Some("2.0.0"), true, "ok: breaking changes, major bump 1.4.0 → 2.0.0"),
        (Some("1.4.0"), Some("3.0.0-rc.1"), true, "ok: breaking changes, major bump 1.4.0 → 3.0.0-rc.1"),
        (Some("0.3.2"), Some("0.3.3"), false, "needs a minor (0.x) bump: breaking changes since 0.3.2 need 0.4.0 or later (found 0.3.3)"),
        (Some("0.3.2"), Some("0.4.0"), true, "ok: breaking changes, minor bump under 0.x 0.3.2 → 0.4.0"),
        (None, None, false, "needs a version: breaking changes to a type with no @version (add a version)"),
        (None, Some("1.0.0"), true, "ok: breaking changes, version 1.0.0 added"),
        (Some("1.4.0"), None, false, "needs a major bump: breaking changes since 1.4.0 need 2.0.0 or later (found none)"),
        (Some("1.4.0"), Some("latest"), false, "cannot check the bump: `latest` is not a version MAJOR.MINOR.PATCH, and breaking changes need one"),
    ];
    for (old, new, ok, text) in cases {
        let (a, b) = versioned(*old, *new);
        let found = diffs(&a, &b);
        assert_eq!(found.len(), 1, "{old:?} → {new:?}");
        assert_eq!(found[0].verdict_text(), *text, "{old:?} → {new:?}");
        assert_eq!(found[0].verdict.ok(), *ok, "{old:?} → {new:?}");
    }
}

#[test]
fn additive_and_cosmetic_changes_need_no_bump() {
    let found = diffs(
        "@version(\"1.0.0\")\ntype T : Data = { a: Int }",
        "@version(\"1.0.0\")\n@owner(\"me\")\ntype T : Data = { a: Float, b?: Int }",
    );
    assert_eq!(found[0].verdict_text(), "ok: no breaking change");
    assert!(found[0].verdict.ok());
}

fn example(name: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join("examples/tooling/diff").join(name)).unwrap()
}

fn scratch(name: &str, old: &str, new: &str) -> Scratch {
    let s = Scratch::new(name);
    s.write("old.hql", old);
    s.write("new.hql", new);
    s
}

const REPORT: &str = "\
Order (1.4.0 → 1.5.0)
  breaking  literal union shrunk: status: \"open\" | \"shipped\" | \"cancelled\" → \"open\" | \"shipped\"
  breaking  require rule added: Order.positive (qty > 0)
  additive  type widened: qty: Int → Float
  additive  optional field added: channel (String)
  additive  warn rule removed: Order.qty < 1_000
  cosmetic  version: 1.4.0 → 1.5.0
  verdict: needs a major bump: breaking changes since 1.4.0 need 2.0.0 or later (found 1.5.0)

1 type changed: 2 breaking, 3 additive, 1 cosmetic; version bump missing for Order
";

#[test]
fn the_readable_report() {
    let s = scratch("diff-report", &example("old.hql"), &example("new.hql"));
    let r = s.hql(&["diff", "old.hql", "new.hql"]);
    assert_eq!(r.out, REPORT);
    assert_eq!(r.err, "");
    assert_eq!(r.status, 1);
}

#[test]
fn the_json_report() {
    let s = scratch("diff-json", &example("old.hql"), &example("new.hql"));
    let r = s.hql(&["diff", "old.hql", "new.hql", "--format", "json"]);
    let expected = concat!(
        r#"{"old":"old.hql","new":"new.hql","types":[{"type":"Order","presence":"changed","#,
        r#""old_version":"1.4.0","new_version":"1.5.0","changes":["#,
        r#"{"class":"breaking","change":"literal_union_shrunk","subject":"status","#,
        r#""old":"\"open\" | \"shipped\" | \"cancelled\"","new":"\"open\" | \"shipped\"","#,
        r#""text":"literal union shrunk: status: \"open\" | \"shipped\" | \"cancelled\" → \"open\" | \"shipped\""},"#,
        r#"{"class":"breaking","change":"rule_added","subject":"Order.positive","old":null,"new":"qty > 0","#,
        r#""text":"require rule added: Order.positive (qty > 0)"},"#,
        r#"{"class":"additive","change":"type_widened","subject":"qty","old":"Int","new":"Float","#,
        r#""text":"type widened: qty: Int → Float"},"#,
        r#"{"class":"additive","change":"optional_field_added","subject":"channel","old":null,"new":"String","#,
        r#""text":"optional field added: channel (String)"},"#,
        r#"{"class":"additive","change":"warn_removed","subject":"Order.qty < 1_000","old":null,"new":null,"#,
        r#""text":"warn rule removed: Order.qty < 1_000"},"#,
        r#"{"class":"cosmetic","change":"version","subject":"","old":"1.4.0","new":"1.5.0","#,
        r#""text":"version: 1.4.0 → 1.5.0"}],"#,
        r#""verdict":{"ok":false,"needed":"major","least":"2.0.0","#,
        r#""text":"needs a major bump: breaking changes since 1.4.0 need 2.0.0 or later (found 1.5.0)"}}],"#,
        r#""summary":{"types":1,"breaking":2,"additive":3,"cosmetic":1,"ok":false}}"#,
        "\n"
    );
    assert_eq!(r.out, expected);
    assert_eq!(r.status, 1);
    let doc: serde_json::Value = serde_json::from_str(&r.out).expect("one JSON document");
    assert_eq!(doc["summary"]["ok"], false);
}

#[test]
fn exit_0_with_the_bump_or_no_breaking_change() {
    let bumped = example("new.hql").replace("1.5.0", "2.0.0");
    let s = scratch("diff-bumped", &example("old.hql"), &bumped);
    let r = s.hql(&["diff", "old.hql", "new.hql"]);
    assert_eq!(r.status, 0, "{}", r.out);
    assert!(
        r.out
            .contains("  verdict: ok: breaking changes, major bump 1.4.0 → 2.0.0\n"),
        "{}",
        r.out
    );
    assert!(r.out.ends_with("; versions ok\n"), "{}", r.out);

    let same = scratch("diff-same", &example("old.hql"), &example("old.hql"));
    let r = same.hql(&["diff", "old.hql", "new.hql"]);
    assert_eq!((r.status, r.out.as_str()), (0, "no changes\n"));
    let r = same.hql(&["diff", "old.hql", "new.hql", "--format", "json"]);
    assert_eq!(
        r.out,
        "{\"old\":\"old.hql\",\"new\":\"new.hql\",\"types\":[],\
         \"summary\":{\"types\":0,\"breaking\":0,\"additive\":0,\"cosmetic\":0,\"ok\":true}}\n"
    );
}

#[test]
fn exit_1_for_a_breaking_change_to_a_type_with_no_version() {
    let s = scratch(
        "diff-unversioned",
        "type T : Data = { a: Int }",
        "type T : Data = { b: Int }",
    );
    let r = s.hql(&["diff", "old.hql", "new.hql"]);
    assert_eq!(r.status, 1);
    assert!(r.out.contains("(add a version)"), "{}", r.out);
}

#[test]
fn exit_status_follows_the_class_of_an_expectation_change() {
    let contract =
        |version: &str, expect: &str| format!("@version(\"{version}\")\n{}", with_expects(expect));
    // (scratch name, old, new, exit status, a line the report holds)
    let cases = [
        (
            "diff-expect-loosened",
            contract("1.0.0", "expect budget: failures <= 1%"),
            contract("1.0.0", "expect budget: failures <= 5%"),
            0,
            "additive  expect bound loosened: T.budget",
        ),
        (
            "diff-expect-tightened",
            contract("1.0.0", "expect budget: failures <= 5%"),
            contract("1.1.0", "expect budget: failures <= 1%"),
            1,
            "need 2.0.0 or later",
        ),
        (
            "diff-expect-bumped",
            contract("1.0.0", ""),
            contract("2.0.0", "expect rows >= 1"),
            0,
            "breaking  expect added: T.rows >= 1",
        ),
    ];
    for (name, old, new, status, line) in cases {
        let r = scratch(name, &old, &new).hql(&["diff", "old.hql", "new.hql"]);
        assert_eq!(r.status, status, "{name}: {}", r.out);
        assert!(r.out.contains(line), "{name}: {}", r.out);
    }
}

#[test]
fn exit_2_for_a_static_error_in_either_file_or_bad_usage() {
    let s = scratch(
        "diff-static",
        "type T : Data = { a: Int }",
        "type T : Data = { a: Nope }",
    );
    let r = s.hql(&["diff", "old.hql", "new.hql"]);
    assert_eq!(r.status, 2);
    assert_eq!(r.out, "");
    assert!(r.err.contains("Nope"), "{}", r.err);
    let r = s.hql(&["diff", "new.hql", "new.hql"]);
    assert_eq!(r.status, 2);
    assert_eq!(
        r.err.matches("hql::unknown_name").count(),
        2,
        "both files' errors: {}",
        r.err
    );
    let r = s.hql(&["diff", "old.hql", "missing.hql"]);
    assert_eq!(r.status, 2);
    assert!(
        squash(&r.err).contains("cannot read missing.hql"),
        "{}",
        r.err
    );
    let r = s.hql(&["diff", "old.hql"]);
    assert_eq!(r.status, 2);
    let r = s.hql(&["diff", "old.hql", "new.hql", "--format", "yaml"]);
    assert_eq!(r.status, 2);
}

/// The README's example prints what the README shows.
#[test]
fn the_readmes_diff_example_prints_what_the_readme_shows() {
    let (shown, r) =
        readme_example("hql diff examples/tooling/diff/old.hql examples/tooling/diff/new.hql");
    assert_eq!(r.out, shown);
    assert_eq!(shown, REPORT);
    assert_eq!(r.status, 1);
}
