//! Spec tests: every normative statement of language.md that the core
//! covers, driven in-process through `hql::cli::run::run_source`.
//! Each test names the section it pins down. Expected values come from the
//! spec, not from what the implementation happens to print.

mod common;
use common::*;

const SIGHTINGS_PATH: &str = "examples/structural/sightings.jsonl";
const SIGHTINGS: &str = r#"{"species": "barn owl", "seen": "dusk", "site": "north meadow"}
{"species": "wren", "seen": "morning", "site": "hedge"}
{"species": "barn owl", "seen": "night", "site": "old barn"}
{"species": "kingfisher", "seen": "morning", "site": "river bend"}
"#;
const SWIFT: &str = r#"{"species": "swift", "seen": "noon", "site": "church tower"}
"#;

const FIRST_PROGRAM: &str = r#"type Sighting : DataContract = {
    species: String
    seen: String

    require seen == "morning" or seen == "dusk" or seen == "night"
}

source(file("examples/structural/sightings.jsonl"), Json)
| validate(Sighting)
| oks()
| map(s => fmt("{} at {}", s.species, s.seen))
"#;

fn five_sightings() -> String {
    format!("{SIGHTINGS}{SWIFT}")
}

// ======================================================================
// §1 A first program
// ======================================================================

#[test]
fn s1_first_program_prints_exactly() {
    let out = ok_out(FIRST_PROGRAM, &[(SIGHTINGS_PATH, SIGHTINGS)]);
    assert_eq!(
        out,
        "[\"barn owl at dusk\", \"wren at morning\", \"barn owl at night\", \"kingfisher at morning\"]\n"
    );
}

#[test]
fn s1_undeclared_site_is_kept_by_open_contract() {
    let src = FIRST_PROGRAM.replace(
        r#"| map(s => fmt("{} at {}", s.species, s.seen))"#,
        "| map(s => s.site)",
    );
    let out = ok_out(&src, &[(SIGHTINGS_PATH, SIGHTINGS)]);
    assert_eq!(
        out,
        "[\"north meadow\", \"hedge\", \"old barn\", \"river bend\"]\n"
    );
}

#[test]
fn s1_fifth_line_oks_unchanged() {
    let data = five_sightings();
    let out = ok_out(FIRST_PROGRAM, &[(SIGHTINGS_PATH, &data)]);
    assert_eq!(
        out,
        "[\"barn owl at dusk\", \"wren at morning\", \"barn owl at night\", \"kingfisher at morning\"]\n"
    );
}

#[test]
fn s1_fifth_line_errs_names_the_rule() {
    let data = five_sightings();
    let src = FIRST_PROGRAM.replace(
        "| oks()\n| map(s => fmt(\"{} at {}\", s.species, s.seen))",
        "| errs()",
    );
    let out = ok_out(&src, &[(SIGHTINGS_PATH, &data)]);
    // §4.9's example record, up to the (non-normative) message text.
    let prefix = r#"[{type: "Sighting", version: null, origin: {source: "examples/structural/sightings.jsonl", line: 5}, input: {species: "swift", seen: "noon", site: "church tower"}, failures: [{rule: "Sighting.seen == \"morning\" or seen == \"dusk\" or seen == \"night\"", kind: "require", path: null, fields: ["seen"], severity: "error", message: ""#;
    assert!(
        out.starts_with(prefix),
        "got:\n{out}\nexpected prefix:\n{prefix}"
    );
    assert!(out.ends_with("\"}]}]\n"), "one failure, one err: {out}");
    // Messages never carry the value received.
    let message = &out[prefix.len()..];
    assert!(
        !message.contains("noon"),
        "message must not carry the value: {message}"
    );
}

// ======================================================================
// §2 Lexical structure and layout
// ======================================================================

#[test]
fn s2_pipe_at_line_start_continues() {
    assert_eq!(eval1("[1, 2, 3]\n| map(x => x * 2)\n| count()"), "3");
}

#[test]
fn s2_newlines_inside_parens_and_brackets() {
    assert_eq!(eval1("[\n1,\n2\n,\n3\n]"), "[1, 2, 3]");
    assert_eq!(eval1("len(\n\"abc\"\n)"), "3");
    assert_eq!(eval1("(1\n+\n2)"), "3");
}

#[test]
fn s2_newline_in_braces_separates_fields() {
    assert_eq!(eval1("{a: 1\nb: 2\n}"), "{a: 1, b: 2}");
}

#[test]
fn s2_trailing_operator_continues() {
    assert_eq!(eval1("1 +\n2"), "3");
    assert_eq!(eval1("let f = x =>\nx * 10\nf(2)"), "20");
    assert_eq!(eval1("[1, 2] |\ncount()"), "2");
}

#[test]
fn s2_leading_operator_continues() {
    assert_eq!(eval1("1\n+ 2"), "3");
    // A statement cannot begin with unary minus: the `-` continues.
    assert_eq!(eval1("5\n- 2"), "3");
    assert_eq!(eval1("2\n* 3"), "6");
    assert_eq!(eval1("1\n== 1"), "true");
    assert_eq!(eval1("true\nand false"), "false");
    assert_eq!(eval1("false\nor true"), "true");
    assert_eq!(eval1("{a: 1}.b?\n?? 7"), "7");
}

#[test]
fn s2_leading_dot_then_else_continue() {
    assert_eq!(eval1("{a: {b: 5}}\n.a\n.b"), "5");
    assert_eq!(eval1("if 1 > 2\nthen \"yes\"\nelse \"no\""), "\"no\"");
}

#[test]
fn s2_keywords_after_dot_and_as_record_keys() {
    assert_eq!(
        eval1("{type: 1, check: 2, if: 3}"),
        "{type: 1, check: 2, if: 3}"
    );
    assert_eq!(eval1("{type: 1, check: 2}.type"), "1");
    assert_eq!(eval1("{type: 1, check: 2}.check"), "2");
    assert_eq!(eval1("let e = {in: 4}\ne.in"), "4");
}

#[test]
fn s2_keyword_as_field_name_in_type_body() {
    let src = r#"type T : DataContract = {
    check: Bool
    type: String
    require self.check
}
[{check: true, type: "a"}, {check: false, type: "b"}] | validate(T) | map(r => is_ok(r))
"#;
    assert_eq!(ok_out(src, &[]), "[true, false]\n");
}

#[test]
fn s2_keyword_field_names_on_their_own_line() {
    // A line in braces that starts with a keyword and `:` or `?:` is a
    // field, even for the keywords that otherwise continue a line.
    let src = r#"type T : DataContract = {
    a: Int
    in: String
    and?: Bool
    or: Int
    then: Int
    else: Int
    with: Int
    require self.in != "" and self.or > 0
}
[{a: 1, in: "x", or: 2, then: 3, else: 4, with: 5}, {a: 1, in: "", or: 2, then: 3, else: 4, with: 5}]
| validate(T)
| map(r => is_ok(r))
{a: 1
 in: 2
 or: 3}
"#;
    assert_eq!(ok_out(src, &[]), "[true, false]\n{a: 1, in: 2, or: 3}\n");
    // Elsewhere those keywords still continue the line before.
    assert_eq!(eval1("true\nand false"), "false");
    assert_eq!(eval1("{a: 2\nin [1, 2]}"), "{a: true}");
}

#[test]
fn s2_byte_order_mark_is_skipped() {
    assert_eq!(ok_out("\u{feff}1 + 1\n", &[]), "2\n");
    assert_eq!(
        ok_out("\u{feff}#!/usr/bin/env hql run\n1 + 2\n", &[]),
        "3\n"
    );
    // Only at the very start.
    static_error("1\n\u{feff}2\n", "hql::lex");
}

#[test]
fn s2_comments_and_shebang() {
    let src = "#!/usr/bin/env hql run\n// a comment\n1 + 1 // trailing\n/// doc before a type\ntype T : Data = { a: Int }\n\"x\"\n";
    assert_eq!(ok_out(src, &[]), "2\n\"x\"\n");
}

#[test]
fn s2_integer_literals() {
    assert_eq!(eval1("1_000_000"), "1000000");
    assert_eq!(eval1("9223372036854775807"), "9223372036854775807");
}

#[test]
fn s2_integer_literal_out_of_range_is_static() {
    static_error("\"runs?\"\n9223372036854775808", "hql::int_out_of_range");
}

#[test]
fn s2_float_literals() {
    assert_eq!(eval1("3.14"), "3.14");
    assert_eq!(eval1("1e-3"), "0.001");
    assert_eq!(eval1("2.5E6"), "2500000.0");
}

#[test]
fn s2_string_escapes() {
    assert_eq!(eval1(r#""a\"b\\c\nd\re\tf""#), r#""a\"b\\c\nd\re\tf""#);
    assert_eq!(eval1(r#"len("\u{1F600}")"#), "1");
    assert_eq!(eval1(r#""\u{1F600}" == "😀""#), "true");
    assert_eq!(eval1(r#"len("\0")"#), "1");
    assert_eq!(eval1(r#"len("a\nb")"#), "3");
}

#[test]
fn s2_raw_strings_take_no_escapes() {
    assert_eq!(eval1(r#"r"\d+""#), r#""\\d+""#);
    assert_eq!(eval1(r#"len(r"\n")"#), "2");
    assert_eq!(eval1(r##"r#"say "hi" \n"#"##), r#""say \"hi\" \\n""#);
}

#[test]
fn s2_float_literal_out_of_range_is_static() {
    // Like an Int beyond i64: `1e999` would be an infinity, which no value is.
    let err = static_error("\"runs?\"\n1e999", "hql::float_out_of_range");
    assert!(squash(&err).contains("at most about 1.8e308"), "{err}");
    static_error("\"runs?\"\n[-1e999]", "hql::float_out_of_range");
    let (out, err, status) = run_json("\"runs?\"\n1e999", &[]);
    assert_eq!((out.as_str(), status), ("", 2), "{err}");
    assert_eq!(eval1("1.7e308"), "1.7e308");
}

// ======================================================================
// §3 Values and numbers
// ======================================================================

const NUMS: &str = r#"{"a": 1.50, "b": 12345678901234567890123, "c": 1.0, "d": 12345678901234567890124, "e": 7}
"#;

#[test]
fn s3_numbers_from_data_keep_source_text() {
    let out = ok_out(r#"source(file("n.jsonl"), Json)"#, &[("n.jsonl", NUMS)]);
    assert_eq!(
        out,
        "[{a: 1.50, b: 12345678901234567890123, c: 1.0, d: 12345678901234567890124, e: 7}]\n"
    );
}

#[test]
fn s3_numbers_from_data_keep_text_through_field_access() {
    let out = ok_out(
        r#"source(file("n.jsonl"), Json) | map(r => [r.a, r.b, r.c])"#,
        &[("n.jsonl", NUMS)],
    );
    assert_eq!(out, "[[1.50, 12345678901234567890123, 1.0]]\n");
}

#[test]
fn s3_extreme_numbers_from_data_keep_their_text() {
    let data = "{\"x\": 1e999}\n{\"x\": -0}\n{\"x\": -0.0}\n";
    let files = [("n.jsonl", data)];
    let src = "type N : Data = { x: Float }\n\
        source(file(\"n.jsonl\"), Json) | validate(N) | oks() | map(r => [r.x, r.x > 1.0e308, r.x == 0])";
    assert_eq!(
        ok_out(src, &files),
        "[[1e999, true, false], [-0, false, true], [-0.0, false, true]]\n"
    );
    let (out, _, status) = run_json("source(file(\"n.jsonl\"), Json)", &files);
    assert_eq!(status, 0);
    assert_eq!(out, "{\"x\":1e999}\n{\"x\":-0}\n{\"x\":-0.0}\n");
    // Arithmetic on a number beyond a Float's range has no finite result.
    let (_, err) = runtime_error(
        "source(file(\"n.jsonl\"), Json) | map(r => r.x * 1)",
        &files,
    );
    assert!(err.contains("hql::not_finite"), "{err}");
}

#[test]
fn s3_a_long_positional_tiny_decimal_is_not_zero() {
    let tiny = format!("0.{}1", "0".repeat(330));
    let data = format!("{{\"x\": {tiny}}}\n{{\"x\": 0.000}}\n");
    let files = [("n.jsonl", data.as_str())];
    let src = "source(file(\"n.jsonl\"), Json) | map(r => [r.x > 0, r.x == 0])";
    assert_eq!(ok_out(src, &files), "[[true, false], [false, true]]\n");
    let (out, _, status) = run_json("source(file(\"n.jsonl\"), Json)", &files);
    assert_eq!(status, 0);
    assert_eq!(out, format!("{{\"x\":{tiny}}}\n{{\"x\":0.000}}\n"));
}

#[test]
fn s3_negation_and_abs_of_a_huge_float_are_runtime_errors() {
    let files = [("n.jsonl", "{\"x\": 1e999}\n{\"x\": -1e999}\n")];
    for (program, op) in [
        (
            "source(file(\"n.jsonl\"), Json) | map(r => -r.x)",
            "`-` of 1e999",
        ),
        (
            "source(file(\"n.jsonl\"), Json) | map(r => abs(r.x))",
            "`abs` of 1e999",
        ),
        (
            "source(file(\"n.jsonl\"), Json) | skip(1) | map(r => abs(r.x))",
            "`abs` of -1e999",
        ),
    ] {
        let (out, err) = runtime_error(program, &files);
        assert_eq!(out, "", "{program}");
        assert!(err.contains("hql::not_finite"), "{program}: {err}");
        assert!(
            squash(&err).contains(&format!("{op} is beyond the range of a Float")),
            "{program}: {err}"
        );
    }
    assert_eq!(
        eval1("[-1.5, abs(-1.5e308), -(1e308)]"),
        "[-1.5, 1.5e308, -1e308]"
    );
}

#[test]
fn s3_numbers_from_data_written_back_exactly_in_json() {
    let (out, err, status) = run_json(r#"source(file("n.jsonl"), Json)"#, &[("n.jsonl", NUMS)]);
    assert_eq!(status, 0, "{err}");
    assert!(out.contains("1.50"), "{out}");
    assert!(out.contains("12345678901234567890123"), "{out}");
    assert!(out.contains("1.0"), "{out}");
}

#[test]
fn s3_arithmetic_makes_a_new_value() {
    let out = ok_out(
        r#"source(file("n.jsonl"), Json) | map(r => r.a + 0)"#,
        &[("n.jsonl", NUMS)],
    );
    assert_eq!(out, "[1.5]\n");
}

#[test]
fn s3_number_validates_by_lexical_form() {
    let src = r#"type I : Data = { v: Int }
type F : Data = { v: Float }
source(file("v.jsonl"), Json) | map(r => [is_ok(validate(r, I)), is_ok(validate(r, F))])
"#;
    let data = "{\"v\": 1.0}\n{\"v\": 12345678901234567890123}\n{\"v\": 3}\n{\"v\": 1e2}\n";
    let out = ok_out(src, &[("v.jsonl", data)]);
    assert_eq!(
        out,
        "[[false, true], [true, true], [true, true], [false, true]]\n"
    );
}

#[test]
fn s3_float_field_keeps_int_as_received() {
    let src = r#"type F : Data = { v: Float }
source(file("v.jsonl"), Json) | validate(F)
"#;
    let out = ok_out(src, &[("v.jsonl", "{\"v\": 3}\n")]);
    assert_eq!(out, "[ok({v: 3})]\n");
}

#[test]
fn s3_float_not_int_failure_identity() {
    let src = r#"type I : Data = { v: Int }
source(file("v.jsonl"), Json) | validate(I) | errs() | map(e => e.failures | map(f => [f.rule, f.kind]))
"#;
    let out = ok_out(src, &[("v.jsonl", "{\"v\": 1.0}\n")]);
    assert_eq!(out, "[[[\"I.v.type\", \"type\"]]]\n");
}

#[test]
fn s3_comparisons_use_exact_value() {
    let src = r#"source(file("n.jsonl"), Json) | map(r => [r.b < r.d, r.b == r.d, r.b > 9223372036854775807, r.a == 1.5, r.c == 1, r.e == 7.0])"#;
    let out = ok_out(src, &[("n.jsonl", NUMS)]);
    assert_eq!(out, "[[true, false, true, true, true, true]]\n");
}

#[test]
fn s3_comparisons_exact_near_2_pow_53() {
    let src = r#"source(file("n.jsonl"), Json) | map(r => [r.a == r.b, r.a > r.b, r.a == 9007199254740992.0])"#;
    let data = "{\"a\": 9007199254740993, \"b\": 9007199254740992}\n";
    let out = ok_out(src, &[("n.jsonl", data)]);
    assert_eq!(out, "[[false, true, false]]\n");
}

#[test]
fn s3_arithmetic_on_big_int_is_runtime_error() {
    let (out, _) = runtime_error(
        "\"before\"\nsource(file(\"n.jsonl\"), Json) | map(r => r.b + 1)",
        &[("n.jsonl", NUMS)],
    );
    assert_eq!(out, "\"before\"\n");
}

#[test]
fn s3_equality_int_float() {
    assert_eq!(eval1("1 == 1.0"), "true");
    assert_eq!(eval1("[1, {a: 2}] == [1.0, {a: 2.0}]"), "true");
    assert_eq!(eval1("1 != 1.0"), "false");
}

#[test]
fn s3_plus_on_strings_lists_and_mixed_numbers() {
    assert_eq!(eval1(r#""ab" + "cd""#), r#""abcd""#);
    assert_eq!(eval1("[1] + [2, 3]"), "[1, 2, 3]");
    assert_eq!(eval1("1 + 2.5"), "3.5");
    assert_eq!(eval1("1 + 1.0"), "2.0");
    assert_eq!(eval1("2 * 1.5"), "3.0");
    assert_eq!(eval1("1 + 2"), "3");
}

#[test]
fn s3_int_division_gives_float() {
    assert_eq!(eval1("7 / 2"), "3.5");
    assert_eq!(eval1("4 / 2"), "2.0");
}

#[test]
fn s3_remainder_has_sign_of_dividend() {
    assert_eq!(eval1("(-7) % 3"), "-1");
    assert_eq!(eval1("7 % (-3)"), "1");
    assert_eq!(eval1("7 % 3"), "1");
}

#[test]
fn s3_remainder_is_ints_only() {
    let (out, err, status) = run("7.5 % 2", &[]);
    assert!(status == 1 || status == 2, "status {status}, out {out}");
    assert!(out.is_empty() && !err.is_empty());
}

#[test]
fn s3_division_by_zero_is_runtime_error() {
    let (out, _) = runtime_error("\"a\"\n[0] | map(z => 1 / z)\n\"b\"", &[]);
    assert_eq!(out, "\"a\"\n");
    runtime_error("[0] | map(z => 1 % z)", &[]);
}

#[test]
fn s3_int_overflow_is_runtime_error() {
    runtime_error("[9223372036854775807] | map(n => n + 1)", &[]);
    runtime_error("[9223372036854775807] | map(n => n * 2)", &[]);
    runtime_error("[0 - 9223372036854775807] | map(n => n - 2)", &[]);
}

#[test]
fn s3_nan_and_infinity_are_runtime_errors() {
    runtime_error("[0.0] | map(z => 1.0 / z)", &[]);
    runtime_error("[0.0] | map(z => z / z)", &[]);
    runtime_error("[1e308] | map(x => x * 10)", &[]);
}

#[test]
fn s3_record_equality_ignores_order_printing_keeps_it() {
    assert_eq!(eval1("{a: 1, b: 2} == {b: 2, a: 1}"), "true");
    assert_eq!(eval1("{b: 2, a: 1}"), "{b: 2, a: 1}");
    assert_eq!(eval1("{a: 1} == {a: 1, b: 2}"), "false");
}

#[test]
fn s3_chained_comparison_is_syntax_error() {
    static_error("1 < 2 < 3", "hql::parse");
    static_error("1 == 1 == true", "hql::parse");
}

#[test]
fn s3_ordering_numbers_and_strings() {
    assert_eq!(eval1(r#""B" < "a""#), "true");
    assert_eq!(eval1(r#""é" > "z""#), "true");
    assert_eq!(eval1("1 < 1.5"), "true");
    assert_eq!(eval1("2 >= 2.0"), "true");
}

#[test]
fn s3_ordering_other_pairs_is_a_type_error() {
    let (out, err, status) = run(r#"[1] | map(x => x < "a")"#, &[]);
    assert!(status == 1 || status == 2, "status {status}, out {out}");
    assert!(out.is_empty() && !err.is_empty());
}

#[test]
fn s3_big_int_against_float_compares_by_exact_value() {
    let src = r#"source(file("n.jsonl"), Json) | map(r => [r.i == r.f, r.i < r.f, r.f > r.i, r.i == r.g, r.f == r.h])"#;
    let data = "{\"i\": 12345678901234567890123, \"f\": 12345678901234567890124.0, \"g\": 12345678901234567890123.00, \"h\": 1.2345678901234567890124e22}\n";
    let out = ok_out(src, &[("n.jsonl", data)]);
    assert_eq!(out, "[[false, true, true, true, true]]\n");
    assert_eq!(
        eval1("9223372036854775807 == 9223372036854775808.0"),
        "false"
    );
    assert_eq!(eval1("9223372036854775807 < 9223372036854775808.0"), "true");
    assert_eq!(eval1("9007199254740993 > 9007199254740992.0"), "true");
    // A whole Float beyond 2^53 is worth every digit of it.
    assert_eq!(
        eval1("[float(1152921504606846976) == 1152921504606846976, float(1152921504606846976) == 1152921504606847000]"),
        "[true, false]"
    );
    assert_eq!(
        eval1("[float(1152921504606846976), 1152921504606846976] | distinct() | len()"),
        "1"
    );
}

#[test]
fn s3_distinct_count_by_group_by_use_exact_equality() {
    assert_eq!(
        eval1("[9223372036854775807, 9223372036854775806] | distinct()"),
        "[9223372036854775807, 9223372036854775806]"
    );
    assert_eq!(
        eval1("[9223372036854775807, 9223372036854775806, 9223372036854775807] | count_by(x => x)"),
        "[{key: 9223372036854775807, count: 2}, {key: 9223372036854775806, count: 1}]"
    );
    assert_eq!(
        eval1("[9223372036854775807, 9223372036854775806] | group_by(x => x) | map(g => g.items)"),
        "[[9223372036854775807], [9223372036854775806]]"
    );
    // Equal values still meet: 1 == 1.0, records whatever their order.
    assert_eq!(
        eval1("[1, 1.0, {a: 1, b: [2]}, {b: [2.0], a: 1}] | distinct()"),
        "[1, {a: 1, b: [2]}]"
    );
    let data = "1.0\n1.00\n1\n12345678901234567890123\n12345678901234567890124\n12345678901234567890123.0\n0.10\n0.1\n";
    let out = ok_out(
        r#"let s = source(file("n.jsonl"), Json)
s | distinct()
s | count_by(x => x) | map(c => c.count)"#,
        &[("n.jsonl", data)],
    );
    assert_eq!(
        out,
        "[1.0, 12345678901234567890123, 12345678901234567890124, 0.10]\n[3, 2, 2, 1]\n"
    );
}

#[test]
fn s3_big_int_average_and_negation_raise_big_int() {
    let (_, err) = runtime_error(
        "source(file(\"n.jsonl\"), Json) | map(r => r.b) | avg()",
        &[("n.jsonl", NUMS)],
    );
    assert!(err.contains("hql::big_int"), "{err}");
    let (_, err) = runtime_error(
        "source(file(\"n.jsonl\"), Json) | map(r => -r.b)",
        &[("n.jsonl", NUMS)],
    );
    assert!(err.contains("hql::big_int"), "{err}");
    assert!(!err.contains("cannot negate"), "{err}");
    assert_eq!(eval1("(-9223372036854775807 - 1) % (-1)"), "0");
    assert_eq!(eval1("[1.50, 2] | avg()"), "1.75");
}

#[test]
fn s3_ordering_lists_is_a_static_type_error() {
    let err = static_error("\"runs?\"\n[[1] < [2]]", "hql::operand_types");
    assert!(err.contains("`<` cannot take a List and a List"), "{err}");
    static_error("\"runs?\"\n[1] - [2]", "hql::operand_types");
    static_error("\"runs?\"\n{a: 1} + {b: 2}", "hql::operand_types");
}

// ======================================================================
// §4.1 Type expressions
// ======================================================================

fn rules_of(types: &str, values: &str) -> String {
    let src = format!(
        "{types}\n{values} | validate(T) | map(r => if is_ok(r) then \"ok\" else [r] | errs() | first() | get(\"failures\") | map(f => f.rule))\n"
    );
    ok_out(&src, &[])
}

fn failures_of(types: &str, value: &str) -> String {
    let src = format!("{types}\n[{value}] | validate(T) | errs() | map(e => e.failures | map(f => [f.rule, f.kind, f.path]))\n");
    ok_out(&src, &[])
}

#[test]
fn s4_1_scalar_and_literal_types() {
    let t =
        r#"type T : Data = { s: String, b: Bool, n: Null, a: Any, st: "open" | "shipped" | 3 }"#;
    let out = ok_out(
        &format!("{t}\n[{{s: \"x\", b: true, n: null, a: [1], st: 3}}, {{s: \"x\", b: false, n: null, a: null, st: \"open\"}}] | validate(T) | map(r => is_ok(r))"),
        &[],
    );
    assert_eq!(out, "[true, true]\n");
    assert_eq!(
        failures_of(t, r#"{s: 1, b: "true", n: 0, a: 1, st: "lost"}"#),
        r#"[[["T.s.type", "type", "s"], ["T.b.type", "type", "b"], ["T.n.type", "type", "n"], ["T.st.type", "type", "st"]]]"#.to_string() + "\n"
    );
}

#[test]
fn s4_1_union_failure_is_one_type_failure_listing_members() {
    let src = r#"type T : Data = { v: Int | String }
[{v: true}] | validate(T) | errs() | map(e => e.failures)
"#;
    let out = ok_out(src, &[]);
    assert!(out.matches("rule:").count() == 1, "one failure: {out}");
    assert!(out.contains(r#"rule: "T.v.type", kind: "type""#), "{out}");
    let msg = out.split("message: ").nth(1).unwrap_or("");
    assert!(
        msg.contains("Int") && msg.contains("String"),
        "message lists the members: {msg}"
    );
}

#[test]
fn s4_1_list_and_map_types() {
    let t = "type T : Data = { xs: List[Int], m: Map[String] }";
    let out = failures_of(t, r#"{xs: [1, "a", 3, true], m: {a: "x", b: 2}}"#);
    assert!(out.contains(r#"["T.xs.type", "type", "xs[1]"]"#), "{out}");
    assert!(out.contains(r#"["T.xs.type", "type", "xs[3]"]"#), "{out}");
    assert!(out.contains(r#""type", "m.b"]"#), "{out}");
    let ok = ok_out(
        &format!("{t}\n{{xs: [], m: {{}}}} | validate(T) | is_ok()"),
        &[],
    );
    assert_eq!(ok, "true\n");
}

#[test]
fn s4_1_alias_union_nullable() {
    let src = r#"type MaybeText = String | Null
[null, "a", 3] | validate(MaybeText) | map(r => is_ok(r))
"#;
    assert_eq!(ok_out(src, &[]), "[true, true, false]\n");
}

#[test]
fn s4_1_a_type_defined_in_terms_of_itself_is_static() {
    for (src, cycle) in [
        ("type T = T", "`T` is defined in terms of itself: T → T"),
        (
            "type A = B\ntype B = A",
            "`A` is defined in terms of itself: A → B → A",
        ),
        ("type A = List[A]", "A → A"),
        ("type A = A | Int", "A → A"),
        ("type A = A require self > 0", "A → A"),
        ("type A = Map[B]\ntype B = A | Null", "A → B → A"),
    ] {
        let err = static_error(&format!("\"runs?\"\n{src}"), "hql::type_cycle");
        assert!(squash(&err).contains(cycle), "{src}: {err}");
    }
}

#[test]
fn s4_1_a_type_may_refer_to_itself_through_a_record_field() {
    let src = r#"type Tree : Type = { name: String, children: List[Tree] }
type Chain = List[{ next?: Chain }]
[{name: "a", children: [{name: "b", children: []}]}, {name: "c", children: [{name: 1, children: []}]}] | validate(Tree) | map(r => is_ok(r))
[[{next: [{}]}], [{next: [3]}]] | validate(Chain) | map(r => is_ok(r))
"#;
    assert_eq!(ok_out(src, &[]), "[true, false]\n[true, false]\n");
}

// ======================================================================
// §4.2 The four kinds
// ======================================================================

fn kind_result(kind: &str) -> String {
    let src = format!("type T : {kind} = {{ a: Int }}\n{{a: 1, x: 2, y: 3}} | validate(T)\n");
    ok_out(&src, &[])
}

#[test]
fn s4_2_data_admits_and_keeps_extra_fields() {
    assert_eq!(kind_result("Data"), "ok({a: 1, x: 2, y: 3})\n");
}

#[test]
fn s4_2_datacontract_admits_and_keeps_extra_fields() {
    assert_eq!(kind_result("DataContract"), "ok({a: 1, x: 2, y: 3})\n");
}

#[test]
fn s4_2_type_refuses_extra_fields_one_failure_each() {
    assert_eq!(
        failures_of("type T : Type = { a: Int }", "{x: 2, a: 1, y: 3}"),
        "[[[\"T.x.extra\", \"extra\", \"x\"], [\"T.y.extra\", \"extra\", \"y\"]]]\n"
    );
}

#[test]
fn s4_2_typecontract_refuses_extra_fields() {
    assert_eq!(
        failures_of("type T : TypeContract = { a: Int }", "{a: 1, x: 2}"),
        "[[[\"T.x.extra\", \"extra\", \"x\"]]]\n"
    );
}

#[test]
fn s4_2_extra_failure_fields_and_severity() {
    let src = "type T : Type = { a: Int }\n{a: 1, x: 2} | validate(T) | errs() | map(e => e.failures | map(f => [f.fields, f.severity]))";
    // errs() on a single result: use a list to be safe.
    let src = src.replace("{a: 1, x: 2} |", "[{a: 1, x: 2}] |");
    assert_eq!(ok_out(&src, &[]), "[[[[\"x\"], \"error\"]]]\n");
}

#[test]
fn s4_2_rule_in_plain_kind_is_static_error_naming_contract_kind() {
    let err = static_error(
        "type T : Data = {\n a: Int\n require a > 0\n}\n1",
        "hql::member_not_allowed",
    );
    assert!(squash(&err).contains("DataContract"), "{err}");
    let err = static_error(
        "type T : Type = {\n a: Int\n warn a > 0\n}\n1",
        "hql::member_not_allowed",
    );
    assert!(squash(&err).contains("TypeContract"), "{err}");
}

#[test]
fn s4_2_default_and_check_in_plain_kind_are_static_errors() {
    let err = static_error(
        "type T : Type = {\n a: Int = 1\n}\n1",
        "hql::member_not_allowed",
    );
    assert!(squash(&err).contains("TypeContract"), "{err}");
    let err = static_error(
        "fn pos(n) = n > 0\ntype T : Data = {\n a: Int\n validate a with pos\n}\n1",
        "hql::member_not_allowed",
    );
    assert!(squash(&err).contains("DataContract"), "{err}");
}

#[test]
fn s4_2_inline_nested_record_takes_openness_of_declaration() {
    assert_eq!(
        failures_of("type T : Type = { a: { b: Int } }", "{a: {b: 1, c: 2}}"),
        "[[[\"T.a.c.extra\", \"extra\", \"a.c\"]]]\n"
    );
    let out = ok_out(
        "type T : Data = { a: { b: Int } }\n{a: {b: 1, c: 2}} | validate(T)",
        &[],
    );
    assert_eq!(out, "ok({a: {b: 1, c: 2}})\n");
}

#[test]
fn s4_2_named_nested_type_uses_its_own_kind() {
    let types = "type Inner : Type = { b: Int }\ntype T : Data = { a: Inner }";
    assert_eq!(
        failures_of(types, "{a: {b: 1, c: 2}}"),
        "[[[\"Inner.c.extra\", \"extra\", \"a.c\"]]]\n"
    );
    let types = "type Inner : Data = { b: Int }\ntype T : Type = { a: Inner }";
    let out = ok_out(
        &format!("{types}\n{{a: {{b: 1, c: 2}}}} | validate(T) | is_ok()"),
        &[],
    );
    assert_eq!(out, "true\n");
}

#[test]
fn s4_2_plain_kind_may_have_contract_typed_fields() {
    let types =
        "type Inner : DataContract = { b: Int\n require pos: b > 0 }\ntype T : Data = { a: Inner }";
    assert_eq!(
        failures_of(types, "{a: {b: 0}}"),
        // Like a refinement rule (§4.5), a nested contract's rule carries the field's path.
        "[[[\"Inner.pos\", \"require\", \"a\"]]]\n"
    );
}

// ======================================================================
// §4.3 / §4.4 Members, optional fields, the `?` mark
// ======================================================================

#[test]
fn s4_3_optional_field_absent_ok_null_fails() {
    let t = "type T : Data = { a: Int, b?: String }";
    let out = ok_out(
        &format!("{t}\n[{{a: 1}}, {{a: 1, b: \"x\"}}] | validate(T) | map(r => is_ok(r))"),
        &[],
    );
    assert_eq!(out, "[true, true]\n");
    assert_eq!(
        failures_of(t, "{a: 1, b: null}"),
        "[[[\"T.b.null\", \"null\", \"b\"]]]\n"
    );
}

#[test]
fn s4_3_optional_nullable_field_admits_null() {
    let t = "type T : Data = { b?: String | Null }";
    let out = ok_out(
        &format!("{t}\n[{{}}, {{b: null}}] | validate(T) | map(r => is_ok(r))"),
        &[],
    );
    assert_eq!(out, "[true, true]\n");
}

#[test]
fn s4_3_nullable_field_must_be_present() {
    let t = "type T : Data = { note: String | Null }";
    assert_eq!(
        failures_of(t, "{}"),
        "[[[\"T.note.missing\", \"missing\", \"note\"]]]\n"
    );
    let out = ok_out(&format!("{t}\n{{note: null}} | validate(T)"), &[]);
    assert_eq!(out, "ok({note: null})\n");
}

#[test]
fn s4_3_required_field_missing_and_null() {
    let t = "type T : Data = { a: Int, b: Int }";
    assert_eq!(
        failures_of(t, "{b: null}"),
        "[[[\"T.a.missing\", \"missing\", \"a\"], [\"T.b.null\", \"null\", \"b\"]]]\n"
    );
}

#[test]
fn s4_3_defaults_filled_when_absent_appended_in_declaration_order() {
    let t = "type T : DataContract = {\n x: Int = 1\n a: Int\n y: String = \"CH\"\n}";
    let out = ok_out(&format!("{t}\n{{z: 0, a: 5}} | validate(T)"), &[]);
    assert_eq!(out, "ok({z: 0, a: 5, x: 1, y: \"CH\"})\n");
    let out = ok_out(
        &format!("{t}\n{{y: \"DE\", a: 5, x: 9}} | validate(T)"),
        &[],
    );
    assert_eq!(out, "ok({y: \"DE\", a: 5, x: 9})\n");
}

#[test]
fn s4_3_default_not_filled_when_null() {
    let t = "type T : DataContract = { x: Int = 1 }";
    assert_eq!(
        failures_of(t, "{x: null}"),
        "[[[\"T.x.null\", \"null\", \"x\"]]]\n"
    );
}

#[test]
fn s4_3_default_filled_before_rules_and_input_is_before_defaults() {
    let t =
        "type T : DataContract = {\n x: Int = 5\n y: Int\n require x > 3\n require big: y > 100\n}";
    let src = format!("{t}\n[{{y: 1}}] | validate(T) | errs() | map(e => [e.input, e.failures | map(f => f.rule)])");
    assert_eq!(ok_out(&src, &[]), "[[{y: 1}, [\"T.big\"]]]\n");
}

#[test]
fn s4_3_default_must_match_type() {
    static_error(
        "type T : DataContract = { n: Int = \"x\" }\n1",
        "hql::default_type",
    );
}

#[test]
fn s4_3_named_rule_custom_message() {
    let t = "type T : DataContract = {\n low: Int\n high: Int\n require ordered_bounds: low <= high else \"low must not exceed high\"\n}";
    let src = format!("{t}\n[{{low: 5, high: 1}}] | validate(T) | errs() | map(e => e.failures)");
    let out = ok_out(&src, &[]);
    assert_eq!(
        out,
        "[[{rule: \"T.ordered_bounds\", kind: \"require\", path: null, fields: [\"low\", \"high\"], severity: \"error\", message: \"low must not exceed high\"}]]\n"
    );
}

#[test]
fn s4_3_named_check() {
    let t = "fn is_cc(c) = c in [\"CH\", \"DE\"]\ntype T : DataContract = {\n country?: String | Null\n validate country with is_cc\n}";
    let out = rules_of(
        t,
        "[{country: \"CH\"}, {country: \"XX\"}, {}, {country: null}]",
    );
    assert_eq!(out, "[\"ok\", [\"T.country.is_cc\"], \"ok\", \"ok\"]\n");
    let out = failures_of(t, "{country: \"XX\"}");
    assert!(
        out.starts_with("[[[\"T.country.is_cc\", \"check\""),
        "{out}"
    );
}

#[test]
fn s4_3_quoted_field_name() {
    let t = "type T : DataContract = {\n \"US Gross\": Int\n require self[\"US Gross\"] >= 0\n}";
    let out = rules_of(t, "[{\"US Gross\": 5}, {\"US Gross\": -1}, {}]");
    assert_eq!(
        out,
        "[\"ok\", [\"T.self[\\\"US Gross\\\"] >= 0\"], [\"T.US Gross.missing\"]]\n"
    );
}

#[test]
fn s4_3_self_is_whole_value() {
    let t = "type T : DataContract = {\n a: Int\n require len(keys(self)) <= 2\n}";
    let out = rules_of(t, "[{a: 1, b: 2}, {a: 1, b: 2, c: 3}]");
    assert_eq!(out, "[\"ok\", [\"T.len(keys(self)) <= 2\"]]\n");
}

#[test]
fn s4_3_unique_keys_compare_with_eq() {
    let t = "type U : DataContract = {\n k: Any\n unique k\n}";
    let src = format!("{t}\n[{{k: {{x: 1, y: 2}}}}, {{k: {{y: 2, x: 1}}}}, {{k: 1}}, {{k: 1.0}}, {{k: 9223372036854775807}}, {{k: 9223372036854775806}}] | validate(U) | map(r => is_ok(r))");
    assert_eq!(
        ok_out(&src, &[]),
        "[true, false, true, false, true, true]\n"
    );
    let data = "{\"k\": 1.0}\n{\"k\": 1.00}\n{\"k\": 1}\n{\"k\": 12345678901234567890123}\n{\"k\": 12345678901234567890124}\n{\"k\": 12345678901234567890123.0}\n";
    let src = format!("{t}\nsource(file(\"u.jsonl\"), Json) | validate(U) | errs() | map(e => [e.origin.line, e.failures | map(f => f.rule)])");
    assert_eq!(
        ok_out(&src, &[("u.jsonl", data)]),
        "[[2, [\"U.k.unique\"]], [3, [\"U.k.unique\"]], [6, [\"U.k.unique\"]]]\n"
    );
    // A compound key: its fields compared one by one with `==`.
    let t = "type P : DataContract = {\n a: Any\n b: Any\n unique (a, b)\n}";
    let src = format!("{t}\n[{{a: 1, b: [1]}}, {{a: 1.0, b: [1.0]}}, {{a: 1, b: [2]}}] | validate(P) | map(r => is_ok(r))");
    assert_eq!(ok_out(&src, &[]), "[true, false, true]\n");
}

/// Many keys, read by every path that validates a JSON Lines file: the
/// counting path (`count()`, `report()`, keys settled a few records
/// behind), the path that builds records (`errs()`), and the ordinary one
/// (a line with a repeated key, which the line check leaves to it). A
/// later `ok` record with a key already taken is always an `err`.
#[test]
fn s4_3_unique_keys_over_many_records() {
    let t = "type E : DataContract = {\n id: String\n n: Int\n require n >= 0\n unique id\n}";
    // Each line's id and whether its rule holds; the expected outcome
    // follows from a set of the ids claimed so far.
    let mut data = String::new();
    let (mut claimed, mut taken, mut bad) = (std::collections::HashSet::new(), Vec::new(), 0);
    for i in 1..=20_000 {
        let (id, n) = match i {
            _ if i % 11 == 0 => (format!("ev-{:09}", i / 3), -1),
            _ if i % 7 == 0 => (format!("ev-{:09}", i / 2), 1),
            _ => (format!("ev-{i:09}"), 1),
        };
        if i % 997 == 0 {
            // A repeated key: the last value counts, the ordinary path decides.
            data.push_str(&format!(
                "{{\"id\": \"x\", \"id\": \"{id}\", \"n\": {n}}}\n"
            ));
        } else {
            data.push_str(&format!("{{\"id\": \"{id}\", \"n\": {n}}}\n"));
        }
        if n < 0 {
            bad += 1;
        } else if !claimed.insert(id) {
            taken.push(i);
        }
    }
    let ok = 20_000 - bad - taken.len();
    assert!(taken.len() > 1000 && bad > 1000 && taken.iter().any(|i| i % 997 == 0));
    let files = [("e.jsonl", data.as_str())];
    let src = format!("{t}\nsource(file(\"e.jsonl\"), Json) | validate(E) | oks() | count()");
    assert_eq!(ok_out(&src, &files), format!("{ok}\n"));
    assert_eq!(ok_out_on_disk(&src, &files), format!("{ok}\n"));
    let src = format!("{t}\nsource(file(\"e.jsonl\"), Json) | validate(E) | report()");
    let report = format!(
        "{{total: 20000, ok: {ok}, err: {}, warned: 0, by_rule: [{{rule: \"E.n >= 0\", kind: \"require\", count: {bad}}}, {{rule: \"E.id.unique\", kind: \"unique\", count: {}}}]}}\n",
        bad + taken.len(),
        taken.len()
    );
    assert_eq!(ok_out(&src, &files), report);
    assert_eq!(ok_out_on_disk(&src, &files), report);
    let src = format!("{t}\nsource(file(\"e.jsonl\"), Json) | validate(E) | errs() | filter(e => e.failures[0].kind == \"unique\") | map(e => e.origin.line)");
    let lines: Vec<String> = taken.iter().map(|i| i.to_string()).collect();
    assert_eq!(ok_out(&src, &files), format!("[{}]\n", lines.join(", ")));
}

/// Keys equal by value however they are spelled, alone and in compound
/// keys, on the counting path (a file on disk) as on the others (the
/// in-memory host, which has no file lengths).
#[test]
fn s4_3_unique_keys_equal_by_value_when_counted() {
    let t = "type U : DataContract = {\n k: Any\n unique k\n}";
    let data = "{\"k\": 1}\n{\"k\": 1.0}\n{\"k\": 1e0}\n{\"k\": 2}\n{\"k\": \"1\"}\n{\"k\": [1, {\"a\": 1, \"b\": 2}]}\n{\"k\": [1.0, {\"b\": 2, \"a\": 1}]}\n{\"k\": null}\n{\"k\": null}\n{}\n{}\n";
    for consumer in ["oks() | count()", "errs() | count()"] {
        let src = format!("{t}\nsource(file(\"u.jsonl\"), Json) | validate(U) | {consumer}");
        let want = if consumer.starts_with("oks") {
            "6\n"
        } else {
            "5\n"
        };
        assert_eq!(ok_out(&src, &[("u.jsonl", data)]), want, "{consumer}");
        assert_eq!(
            ok_out_on_disk(&src, &[("u.jsonl", data)]),
            want,
            "{consumer}"
        );
    }
    let t = "type P : DataContract = {\n a: Any\n b: Any\n unique (a, b)\n}";
    let data = "{\"a\": 1, \"b\": \"x\"}\n{\"a\": 1.0, \"b\": \"x\"}\n{\"a\": 1, \"b\": \"y\"}\n{\"a\": 2, \"b\": \"x\"}\n{\"a\": 1, \"b\": \"xy\"}\n{\"a\": 12, \"b\": \"\"}\n{\"a\": 1, \"b\": \"2\"}\n";
    let src = format!("{t}\nsource(file(\"p.jsonl\"), Json) | validate(P) | report()");
    let want = "{total: 7, ok: 6, err: 1, warned: 0, by_rule: [{rule: \"P.a+b.unique\", kind: \"unique\", count: 1}]}\n";
    assert_eq!(ok_out(&src, &[("p.jsonl", data)]), want);
    assert_eq!(ok_out_on_disk(&src, &[("p.jsonl", data)]), want);
}

/// String keys no rule reads are claimed from their text on the counting
/// path, without building the value: equal however they are escaped,
/// apart from numbers and from other fields' keys, and a null or absent
/// key is left out, as on the path that builds each record.
#[test]
fn s4_3_unique_string_keys_claimed_from_their_text_when_counted() {
    let t = "type U : DataContract = {\n code: String\n alt?: String | Int | Null\n n: Int\n require n >= 0\n unique code\n unique (alt, n)\n}";
    let data = concat!(
        "{\"code\": \"ab\", \"alt\": \"1\", \"n\": 1}\n",
        "{\"code\": \"a\\u0062\", \"alt\": 1, \"n\": 1}\n",
        "{\"code\": \"\u{e9}t\u{e9}\", \"alt\": 1, \"n\": 1}\n",
        "{\"code\": \"\\u00e9t\\u00e9\", \"n\": 2}\n",
        "{\"code\": \"\", \"alt\": null, \"n\": 3}\n",
        "{\"code\": \"x\", \"alt\": null, \"n\": 3}\n",
        "{\"code\": \"y\", \"alt\": \"1\", \"n\": 1}\n",
        "{\"code\": \"\", \"n\": -1}\n",
        "{\"code\": \"z\", \"alt\": \"1\", \"n\": 2}\n",
        "{\"code\": 5, \"n\": 4}\n",
        "{\"code\": \"w\", \"alt\": \"q\\\"\", \"n\": 4}\n",
        "{\"code\": \"v\", \"alt\": \"q\\\"\", \"n\": 4}\n",
    );
    let files = [("u.jsonl", data)];
    let report = |tail: &str| {
        let src = format!("{t}\nsource(file(\"u.jsonl\"), Json) | validate(U) | {tail}");
        let counted = ok_out_on_disk(&src, &files);
        // The in-memory host has no file lengths: the ordinary path.
        assert_eq!(ok_out(&src, &files), counted, "{tail}");
        counted
    };
    let want = "{total: 12, ok: 6, err: 6, warned: 0, by_rule: [{rule: \"U.alt+n.unique\", kind: \"unique\", count: 2}, {rule: \"U.code.unique\", kind: \"unique\", count: 2}, {rule: \"U.code.type\", kind: \"type\", count: 1}, {rule: \"U.n >= 0\", kind: \"require\", count: 1}]}\n";
    assert_eq!(report("report()"), want);
    // Each record built, then its keys claimed from its values.
    assert_eq!(report("map(r => r) | report()"), want);
    assert_eq!(report("oks() | count()"), "6\n");
}

#[test]
fn s4_4_optional_read_without_mark_is_static_error() {
    let err = static_error(
        "type T : DataContract = {\n age?: Int\n require age <= 150\n}\n1",
        "hql::optional_without_mark",
    );
    assert!(squash(&err).contains("age?"), "help suggests `age?`: {err}");
    let err = static_error(
        "type T : DataContract = {\n note: String | Null\n require note != \"\"\n}\n1",
        "hql::optional_without_mark",
    );
    assert!(squash(&err).contains("note?"), "{err}");
}

#[test]
fn s4_4_needless_mark_is_warning_status_unchanged() {
    let (out, err, status) = run(
        "type T : DataContract = {\n a: Int\n require a? > 0\n}\n{a: 1} | validate(T)",
        &[],
    );
    assert_eq!(status, 0, "{err}");
    assert_eq!(out, "ok({a: 1})\n");
    assert!(err.contains("hql::needless_mark"), "{err}");
    assert!(
        err.contains('⚠') || err.to_lowercase().contains("warning"),
        "rendered as a warning: {err}"
    );
}

#[test]
fn s4_4_needless_mark_warning_with_failing_check_keeps_status_1() {
    let (_, err, status) = run(
        "type T : DataContract = {\n a: Int\n require a? > 0\n}\ncheck c: 1 > 2",
        &[],
    );
    assert_eq!(status, 1, "{err}");
    assert!(err.contains("hql::needless_mark"));
}

#[test]
fn s4_4_presence_of_bool_warns() {
    let (out, err, status) = run("type T : DataContract = {\n flag?: Bool\n require flag?\n}\n{flag: false} | validate(T) | is_ok()", &[]);
    assert_eq!(status, 0, "{err}");
    assert!(err.contains("hql::presence_of_bool"), "{err}");
    assert!(squash(&err).contains("flag? == true"), "{err}");
    // It is a presence test: false is present, so the rule holds.
    assert_eq!(out, "true\n");
}

#[test]
fn s4_4_presence_test() {
    let t = "type T : DataContract = {\n email?: String | Null\n phone?: String | Null\n require email_or_phone: email? or phone?\n}";
    let out = rules_of(
        t,
        "[{}, {phone: \"1\"}, {phone: null}, {email: \"e\", phone: null}]",
    );
    assert_eq!(
        out,
        "[[\"T.email_or_phone\"], \"ok\", [\"T.email_or_phone\"], \"ok\"]\n"
    );
}

#[test]
fn s4_4_presence_test_in_implication() {
    let t = "type T : DataContract = {\n status: String\n tracking?: String\n require status == \"shipped\" => tracking?\n}";
    let out = rules_of(
        t,
        "[{status: \"shipped\"}, {status: \"open\"}, {status: \"shipped\", tracking: \"x\"}]",
    );
    assert_eq!(
        out,
        "[[\"T.status == \\\"shipped\\\" => tracking?\"], \"ok\", \"ok\"]\n"
    );
}

#[test]
fn s4_4_presence_test_under_not() {
    let t = "type T : DataContract = {\n a?: Int\n require not a?\n}";
    let out = rules_of(t, "[{}, {a: 1}]");
    assert_eq!(out, "[\"ok\", [\"T.not a?\"]]\n");
}

#[test]
fn s4_4_in_all_and_any_lambdas_and_let_bound_predicates_the_mark_is_the_value() {
    // `x.f?` there is the value (absent and null count as false), not a
    // presence test: `false` is present but does not hold.
    assert_eq!(
        ok_out(
            "[{x: true}, {x: false}] | all(r => r.x?)\n[{x: false}, {x: null}, {}] | any(r => r.x?)\n[{x: false}, {}] | filter(r => r.x?)\nlet p = r => r.x?\n[{x: true}, {x: false}, {}] | filter(p)\n",
            &[]
        ),
        "false\nfalse\n[{x: false}]\n[{x: true}]\n"
    );
    // A value that is not a Bool is no condition, not a presence test.
    let err = static_error("[{x: 1}] | all(r => r.x?)", "hql::condition_type");
    assert!(
        err.contains("a condition must be a Bool, not an Int"),
        "{err}"
    );
}

#[test]
fn s4_4_kleene_and_or() {
    let t = "type T : DataContract = {\n x: Int\n y?: Int\n require r_and: x > 100 and y? > 0\n require r_and2: y? > 0 and x > 100\n require r_or: x > 0 or y? > 0\n}";
    // x=1: `false and absent` is false (twice); `true or absent` is true.
    assert_eq!(rules_of(t, "[{x: 1}]"), "[[\"T.r_and\", \"T.r_and2\"]]\n");
    // x=500: `true and absent` is absent: holds.
    assert_eq!(rules_of(t, "[{x: 500}]"), "[\"ok\"]\n");
    // x=-1: `false or absent` is absent: holds.
    let t2 = "type T : DataContract = {\n x: Int\n y?: Int\n require r_or: x > 0 or y? > 0\n}";
    assert_eq!(
        rules_of(t2, "[{x: -1}, {x: -1, y: -1}]"),
        "[\"ok\", [\"T.r_or\"]]\n"
    );
}

#[test]
fn s4_4_kleene_not_and_implication() {
    let t = "type T : DataContract = {\n y?: Int\n z: Bool\n require n: not (y? > 0)\n require i: z => y? > 0\n}";
    // y absent: `not absent` holds; `true => absent` is absent: holds.
    assert_eq!(rules_of(t, "[{z: true}]"), "[\"ok\"]\n");
    assert_eq!(rules_of(t, "[{z: true, y: 5}]"), "[[\"T.n\"]]\n");
    assert_eq!(rules_of(t, "[{z: true, y: -5}]"), "[[\"T.i\"]]\n");
    assert_eq!(rules_of(t, "[{z: false, y: -5}]"), "[\"ok\"]\n");
}

#[test]
fn s4_4_require_over_absent_holds() {
    let t = "type T : DataContract = {\n age?: Int\n require age? <= 150\n}";
    assert_eq!(
        rules_of(t, "[{}, {age: 20}, {age: 200}]"),
        "[\"ok\", \"ok\", [\"T.age? <= 150\"]]\n"
    );
}

#[test]
fn s4_4_warn_over_absent_holds() {
    let t = "type T : DataContract = {\n age?: Int\n warn age? <= 150\n}";
    let src = format!("{t}\n[{{}}, {{age: 200}}] | validate(T) | warnings() | map(w => w.rule)");
    assert_eq!(ok_out(&src, &[]), "[\"T.age? <= 150\"]\n");
}

#[test]
fn s4_4_if_treats_absent_as_false() {
    assert_eq!(
        eval1("let r = {a: 1}\nif r.b? > 0 then \"yes\" else \"no\""),
        "\"no\""
    );
    assert_eq!(
        eval1("let r = {a: 1}\nif not (r.b? > 0) then \"yes\" else \"no\""),
        "\"no\""
    );
    assert_eq!(
        eval1("let r = {a: 1}\nif r.a? then \"yes\" else \"no\""),
        "\"yes\""
    );
    assert_eq!(
        eval1("let r = {a: null}\nif r.a? then \"yes\" else \"no\""),
        "\"no\""
    );
}

#[test]
fn s4_4_filter_treats_absent_as_false() {
    assert_eq!(
        eval1("[{a: 1}, {a: 2, b: 5}, {a: 3, b: -1}] | filter(r => r.b? > 0) | map(r => r.a)"),
        "[2]"
    );
    assert_eq!(
        eval1("[{a: 1}, {a: 2, b: null}, {a: 3, b: 0}] | filter(r => r.b?) | map(r => r.a)"),
        "[3]"
    );
}

#[test]
fn s4_4_check_treats_absent_as_false() {
    let (out, err, status) = run("let r = {a: 1}\ncheck \"has b\": r.b? > 0\n\"after\"", &[]);
    assert_eq!(status, 1, "{err}");
    assert!(err.contains("has b"), "{err}");
    assert_eq!(out, "\"after\"\n");
}

#[test]
fn s4_4_coalesce() {
    assert_eq!(eval1("{a: 1}.b? ?? 7"), "7");
    assert_eq!(eval1("{a: null}.a? ?? 7"), "7");
    assert_eq!(eval1("{a: 0}.a? ?? 7"), "0");
    assert_eq!(eval1("{a: false}.a? ?? true"), "false");
}

#[test]
fn s4_4_absent_propagates_and_becomes_null() {
    assert_eq!(eval1("{a: 1}.b?"), "null");
    assert_eq!(eval1("{a: 1}.b? + 1"), "null");
    assert_eq!(eval1("[{a: 1}.b?]"), "[null]");
    assert_eq!(eval1("{x: {a: 1}.b?}"), "{x: null}");
    assert_eq!(eval1("{a: 1}.b?.c"), "null");
    assert_eq!(eval1("({a: 1}.b? > 0) ?? \"absent\""), "\"absent\"");
    assert_eq!(eval1("[{a: 1}.b? > 0]"), "[null]");
}

#[test]
fn s4_4_call_with_an_absent_argument_is_absent_without_running() {
    // `f` would say `false` if it ran: it does not.
    assert_eq!(eval1("fn f(x) = x == null\nf({a: 1}.b?)"), "null");
    assert_eq!(eval1("fn f(x) = x == null\nf({a: 1}.b? ?? null)"), "true");
    assert_eq!(eval1("upper({}.x?)"), "null");
    assert_eq!(eval1("[{}.x?] | map(x => x)"), "[null]");
    for call in [
        "len(e?)",
        "contains(e?, \"a\")",
        "contains(\"a\", e?)",
        "lower(e?)",
        "trim(e?)",
        "abs(e?)",
        "int(e?)",
        "is_email(e?)",
        "fmt(\"{}\", e?)",
        "get({}, \"a\", e?)",
        "(e? | map(x => x))",
        "f(e?)",
        "g(e?)",
    ] {
        let program = format!(
            "fn f(s) = s\nlet g = x => 1\n[{{}}] | map(r => {})",
            call.replace("e?", "r.e?")
        );
        assert_eq!(ok_out(&program, &[]), "[null]\n", "{call}");
    }
    // In a rule an absent condition holds; `??` gives the call a value.
    let src = "type T : DataContract = {\n e?: String\n require l: len(e?) > 1\n require m: len(e? ?? \"\") < 5\n}\n[{}, {e: \"x\"}, {e: \"xy\"}, {e: \"xyzzyx\"}] | validate(T) | map(r => [r] | errs() | map(e => e.failures | map(f => [f.rule, f.kind])))";
    assert_eq!(
        ok_out(src, &[]),
        "[[], [[[\"T.l\", \"require\"]]], [], [[[\"T.m\", \"require\"]]]]\n"
    );
}

#[test]
fn s4_4_a_nested_optional_field_needs_its_mark() {
    for types in [
        "type T : DataContract = {\n addr: { city?: String }\n require addr.city != \"\"\n}",
        "type Addr = { city?: String }\ntype T : DataContract = {\n addr: Addr\n require addr.city != \"\"\n}",
        // A type declared after the rule, a nullable field, read through `self`.
        "type T : DataContract = {\n addr: Addr\n require self.addr.city != \"\"\n}\ntype Addr : Data = { city: String | Null }",
        // Through an optional record and an alias of a record type.
        "type A2 = Addr\ntype Addr = { city?: String }\ntype T : DataContract = {\n addr?: A2\n require addr?.city == \"x\"\n}",
    ] {
        let err = static_error(&format!("\"runs?\"\n{types}"), "hql::optional_without_mark");
        assert!(squash(&err).contains("city?`"), "{types}: {err}");
    }
}

#[test]
fn s4_4_a_nested_optional_field_with_its_mark_holds_when_absent() {
    let src = "type Addr = { city?: String }\ntype T : DataContract = {\n addr: Addr\n require addr.city? != \"\"\n}\n[{addr: {}}, {addr: {city: \"\"}}] | validate(T) | map(r => is_ok(r))";
    assert_eq!(ok_out(src, &[]), "[true, false]\n");
    // `?` on a nested field that is always there is a warning only.
    let (out, err, status) = run(
        "type T : DataContract = {\n addr: { city: String }\n require addr.city? != \"\"\n}\n\"runs\"",
        &[],
    );
    assert_eq!((out.as_str(), status), ("\"runs\"\n", 0), "{err}");
    assert!(err.contains("hql::needless_mark"), "{err}");
}

#[test]
fn s4_3_two_checks_with_one_identity_are_static() {
    let err = static_error(
        "\"runs?\"\ntype M : DataContract = {\n a: Int\n require r: a > 0\n require r: a > 1\n}",
        "hql::duplicate_rule",
    );
    let flat = squash(&err);
    assert!(
        flat.contains("`M.r`") && flat.contains("`require r: a > 0` and `require r: a > 1`"),
        "{err}"
    );
    for members in [
        // Textually identical unnamed rules: one identity from the canonical form.
        "require a > 0\n require a  >  0",
        "require a > 0\n warn a > 0",
        // A name may equal another rule's canonical text.
        "require a\n require a: a",
        "validate a with is_email\n validate a with is_email",
        "unique a\n unique a",
    ] {
        let src = format!("\"runs?\"\ntype M : DataContract = {{\n a: String\n {members}\n}}");
        static_error(&src, "hql::duplicate_rule");
    }
}

#[test]
fn s4_3_a_default_is_checked_against_its_fields_type_and_rules() {
    for (field, broken) in [
        (r#"e: Email = "nope""#, "breaks `Email.well_formed`"),
        // Through a function and a `let` of the standard library.
        (r#"c: CountryCode = "XX""#, "breaks `CountryCode.assigned`"),
        (r#"p: Percent = 100 + 1"#, "breaks `Percent.in_range`"),
        (
            r#"d: { day: Date } = {day: "2023-02-29"}"#,
            "breaks `Date.calendar_date`",
        ),
        (
            "country: String = \"XX\"\n validate country with is_country_code",
            "breaks `T.country.is_country_code`",
        ),
        (r#"s: "open" | "shut" = "ajar""#, "does not match its type"),
    ] {
        let src = format!("\"runs?\"\ntype T : DataContract = {{\n {field}\n}}");
        let err = static_error(&src, "hql::default_type");
        assert!(squash(&err).contains(broken), "{field}: {err}");
    }
    let good = "type T : DataContract = {\n e: Email = \"a@b.ch\"\n c: CountryCode = \"CH\"\n}\n{} | validate(T)";
    assert_eq!(ok_out(good, &[]), "ok({e: \"a@b.ch\", c: \"CH\"})\n");
    // A default that reads a parameter is not known before it runs.
    let later = "type T : DataContract = {\n e: Email = param(\"e\", \"nope\")\n}\n\"runs\"";
    assert_eq!(ok_out(later, &[]), "\"runs\"\n");
}

#[test]
fn s4_3_a_condition_is_a_bool() {
    let err = static_error(
        "\"runs?\"\ntype T : DataContract = {\n a: Int\n require a\n}",
        "hql::condition_type",
    );
    assert!(
        err.contains("a condition must be a Bool, not an Int"),
        "{err}"
    );
    static_error(
        "\"runs?\"\ntype T : DataContract = {\n a: Int\n s?: String\n require s? and a\n}",
        "hql::condition_type",
    );
    // A named check's function gets the field's value.
    let err = static_error(
        "fn f(s: String) = s != \"\"\ntype T : DataContract = {\n e: Int\n validate e with f\n}\n\"runs?\"",
        "hql::argument_type",
    );
    assert!(err.contains("`f` expects a String, not an Int"), "{err}");
}

#[test]
fn s4_3_unknown_or_repeated_annotations_are_static() {
    let err = static_error(
        "@foo(\"x\")\ntype T : Data = { a: Int }\n\"runs?\"",
        "hql::unknown_annotation",
    );
    assert!(err.contains("unknown annotation `@foo`"), "{err}");
    let err = static_error(
        "@vesion(\"1\")\ntype T : Data = { a: Int }\n\"runs?\"",
        "hql::unknown_annotation",
    );
    assert!(squash(&err).contains("did you mean `@version`"), "{err}");
    static_error(
        "@owner(\"a\")\n@version(\"1\")\n@owner(\"b\")\ntype T : Data = { a: Int }\n\"runs?\"",
        "hql::repeated_annotation",
    );
}

// ======================================================================
// §4.7 Identities
// ======================================================================

#[test]
fn s4_7_unnamed_rule_canonical_form() {
    let t = "type Order : DataContract = {\n amount: Int\n require amount   <  10_000\n}";
    let src = format!("{t}\n[{{amount: 20000}}] | validate(Order) | errs() | map(e => e.failures | map(f => [f.rule, f.kind]))");
    assert_eq!(
        ok_out(&src, &[]),
        "[[[\"Order.amount < 10_000\", \"require\"]]]\n"
    );
}

fn rule_id(body: &str, value: &str) -> String {
    let src = format!(
        "type T : DataContract = {{\n{body}\n}}\n[{value}] | validate(T) | errs() | map(e => e.failures | map(f => f.rule)) | first() | first()\n"
    );
    let out = ok_out(&src, &[]);
    out.trim_end().to_string()
}

#[test]
fn s4_7_canonical_form_spacing_parens_commas() {
    assert_eq!(
        rule_id("a: Int\nb: Int\nrequire (a+b)*2>b", "{a: -10, b: 1}"),
        r#""T.(a + b) * 2 > b""#
    );
    assert_eq!(
        rule_id("a: Int\nrequire ((a)) > (0)", "{a: 0}"),
        r#""T.a > 0""#
    );
    assert_eq!(
        rule_id("a: Int\nb: Int\nrequire a + (b * 2) > 100", "{a: 0, b: 1}"),
        r#""T.a + b * 2 > 100""#
    );
    assert_eq!(
        rule_id("s: String\nrequire contains(s,\"x\")", "{s: \"a\"}"),
        r#""T.contains(s, \"x\")""#
    );
    assert_eq!(
        rule_id("a: Int\nrequire a in [1,2,3]", "{a: 0}"),
        r#""T.a in [1, 2, 3]""#
    );
    assert_eq!(
        rule_id("a: Int\nrequire a - (1 - 2) > 5", "{a: 0}"),
        r#""T.a - (1 - 2) > 5""#
    );
}

#[test]
fn s4_7_raw_strings_stay_raw_in_identity() {
    assert_eq!(
        rule_id("s: String\nrequire matches(s, r\"^\\d+$\")", "{s: \"a\"}"),
        r#""T.matches(s, r\"^\\d+$\")""#
    );
}

#[test]
fn s4_7_literals_as_written() {
    assert_eq!(
        rule_id("a: Float\nrequire a < 1.50", "{a: 9.0}"),
        r#""T.a < 1.50""#
    );
    assert_eq!(
        rule_id("a: Float\nrequire a < 1e3", "{a: 9000.0}"),
        r#""T.a < 1e3""#
    );
}

#[test]
fn s4_7_reformatting_never_changes_identity() {
    let a = rule_id("a: Int\nb: Int\nrequire a>0 and b>0", "{a: 0, b: 0}");
    let b = rule_id(
        "a: Int\nb: Int\n\n   require    (a > 0)\n   and (b   > 0)",
        "{b: 0, a: 0}",
    );
    let c = rule_id(
        "b: Int\na: Int\nrequire x: b > 100\nrequire a > 0 and b > 0",
        "{a: 0, b: 200}",
    );
    assert_eq!(a, r#""T.a > 0 and b > 0""#);
    assert_eq!(a, b);
    assert_eq!(a, c);
}

#[test]
fn s4_7_warn_identity_and_kind() {
    let src = "type T : DataContract = {\n a: Int\n warn a < 10\n warn big: a < 100\n}\n[{a: 500}] | validate(T) | warnings() | map(w => [w.rule, w.kind, w.severity])";
    assert_eq!(
        ok_out(src, &[]),
        "[[\"T.a < 10\", \"warn\", \"warning\"], [\"T.big\", \"warn\", \"warning\"]]\n"
    );
}

#[test]
fn s4_7_rule_raising_runtime_error_is_eval_failure() {
    let src = "type T : DataContract = {\n a: Int\n b: Int\n require a / b > 1\n}\n[{a: 1, b: 0}] | validate(T) | errs() | map(e => e.failures | map(f => [f.rule, f.kind]))\n\"still running\"";
    let (out, err, status) = run(src, &[]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(out, "[[[\"T.a / b > 1\", \"eval\"]]]\n\"still running\"\n");
}

#[test]
fn s4_7_warn_rule_raising_gives_eval_warning() {
    let src = "type T : DataContract = {\n a: Int\n b: Int\n warn a / b > 1\n}\n[{a: 1, b: 0}] | validate(T) | warnings() | map(w => [w.rule, w.kind, w.severity])";
    assert_eq!(
        ok_out(src, &[]),
        "[[\"T.a / b > 1\", \"eval\", \"warning\"]]\n"
    );
}

#[test]
fn s4_7_not_record() {
    let src = "type T : Data = { a: Int }\n[5, \"x\", [1]] | validate(T) | errs() | map(e => e.failures | map(f => [f.rule, f.kind, f.path]))";
    assert_eq!(
        ok_out(src, &[]),
        "[[[\"T.not_record\", \"not_record\", null]], [[\"T.not_record\", \"not_record\", null]], [[\"T.not_record\", \"not_record\", null]]]\n"
    );
}

#[test]
fn s4_7_nested_inline_paths_no_list_indices_in_identity() {
    let t = "type T : Data = {\n address: { city: String }\n items: List[{ sku: String }]\n}";
    let out = failures_of(t, "{address: {}, items: [{sku: \"a\"}, {sku: \"b\"}, {}]}");
    assert_eq!(
        out,
        "[[[\"T.address.city.missing\", \"missing\", \"address.city\"], [\"T.items.sku.missing\", \"missing\", \"items[2].sku\"]]]\n"
    );
}

#[test]
fn s4_7_nested_named_type_identity() {
    let t = "type Item : Data = { qty: Int }\ntype T : Data = { items: List[Item] }";
    let out = failures_of(t, "{items: [{qty: 1}, {qty: \"x\"}]}");
    assert_eq!(out, "[[[\"Item.qty.type\", \"type\", \"items[1].qty\"]]]\n");
}

#[test]
fn s4_7_field_names_as_written_in_identity() {
    let t = "type T : Data = { \"US Gross\": Int }";
    assert_eq!(
        failures_of(t, "{\"US Gross\": \"x\"}"),
        "[[[\"T.US Gross.type\", \"type\", \"US Gross\"]]]\n"
    );
}

#[test]
fn s4_7_decode_failure_at_source() {
    let data = "{\"a\": 1}\n{not json\n{\"a\": 2}\n";
    let src = "source(file(\"d.jsonl\"), Json) | map(r => is_err(r))";
    let out = ok_out(src, &[("d.jsonl", data)]);
    // Reading goes on after the bad line.
    assert_eq!(out, "[false, true, false]\n");
}

#[test]
fn s4_9_decode_failure_shape() {
    let data = "{\"a\": 1}\n{not json\n";
    let src = "type T : Data = { a: Int }\nsource(file(\"d.jsonl\"), Json) | validate(T) | errs()";
    let out = ok_out(src, &[("d.jsonl", data)]);
    let prefix = r#"[{type: null, version: null, origin: {source: "d.jsonl", line: 2}, input: "{not json", failures: [{rule: "decode", kind: "decode", path: null, fields: [], severity: "error", message: "#;
    assert!(
        out.starts_with(prefix),
        "got:\n{out}\nwant prefix:\n{prefix}"
    );
}

#[test]
fn s4_9_decode_err_passes_through_validate_unchanged() {
    let data = "{not json\n";
    let src = "type T : Data = { a: Int }\nlet s = source(file(\"d.jsonl\"), Json)\n(s | collect()) == (s | validate(T) | collect())";
    assert_eq!(ok_out(src, &[("d.jsonl", data)]), "true\n");
}

#[test]
fn s4_7_a_childs_rule_named_like_its_parents_keeps_both_identities() {
    // §4.6: the parent's rules keep the parent's identities, so a child's
    // rule of the same name is another check, not a replacement.
    let types = "type P : DataContract = {\n a: Int\n require r: a > 0\n}\ntype T : P = {\n require r: a > 1\n}";
    assert_eq!(
        rules_of(types, "[{a: 0}, {a: 1}, {a: 2}]"),
        "[[\"P.r\", \"T.r\"], [\"T.r\"], \"ok\"]\n"
    );
}

// ======================================================================
// §4.8 Validating one value
// ======================================================================

const ORDER_T: &str = "type T : TypeContract = {\n a: Int\n b: String\n require pos: a > 0\n require nonempty: b != \"\"\n require both: a > 1 and b != \"x\"\n}";

#[test]
fn s4_8_all_failures_collected_in_order() {
    assert_eq!(
        failures_of(ORDER_T, "{z: 1, b: 5, y: 2, a: \"x\"}"),
        "[[[\"T.a.type\", \"type\", \"a\"], [\"T.b.type\", \"type\", \"b\"], [\"T.z.extra\", \"extra\", \"z\"], [\"T.y.extra\", \"extra\", \"y\"]]]\n"
    );
}

#[test]
fn s4_8_rules_in_declaration_order_all_collected() {
    assert_eq!(
        failures_of(ORDER_T, "{a: -1, b: \"\"}"),
        "[[[\"T.pos\", \"require\", null], [\"T.nonempty\", \"require\", null], [\"T.both\", \"require\", null]]]\n"
    );
}

#[test]
fn s4_8_rule_reading_failed_field_not_evaluated() {
    // `a` failed: pos and both read it and are skipped; nonempty still runs.
    assert_eq!(
        failures_of(ORDER_T, "{a: \"x\", b: \"\"}"),
        "[[[\"T.a.type\", \"type\", \"a\"], [\"T.nonempty\", \"require\", null]]]\n"
    );
    assert_eq!(
        failures_of(ORDER_T, "{b: \"\"}"),
        "[[[\"T.a.missing\", \"missing\", \"a\"], [\"T.nonempty\", \"require\", null]]]\n"
    );
}

#[test]
fn s4_8_extra_before_rules_and_checks_in_field_step() {
    let t = "fn short(s) = len(s) < 3\ntype T : TypeContract = {\n a: Int\n b: String\n require pos: a > 0\n validate b with short\n}";
    assert_eq!(
        failures_of(t, "{x: 1, a: 0, b: \"long\"}"),
        "[[[\"T.b.short\", \"check\", \"b\"], [\"T.x.extra\", \"extra\", \"x\"], [\"T.pos\", \"require\", null]]]\n"
    );
}

#[test]
fn s4_8_warn_rules_only_when_no_failure() {
    let t = "type T : DataContract = {\n a: Int\n require pos: a > 0\n warn small: a < 10\n}";
    let src = format!("{t}\n[{{a: 50}}, {{a: -50}}] | validate(T) | map(r => r)");
    let out = ok_out(&src, &[]);
    // The err must not carry a warning for `small`.
    assert!(!out.contains("T.small"), "{out}");
    let src = format!("{t}\n[{{a: 50}}, {{a: -50}}] | validate(T) | warnings() | map(w => w.rule)");
    assert_eq!(ok_out(&src, &[]), "[\"T.small\"]\n");
    let src = format!("{t}\n[{{a: 50}}] | validate(T) | oks()");
    assert_eq!(ok_out(&src, &[]), "[{a: 50}]\n");
}

#[test]
fn s4_8_err_has_no_warn_failures() {
    let t = "type T : DataContract = {\n a: Int\n require pos: a > 0\n warn small: a > 10\n}";
    assert_eq!(
        failures_of(t, "{a: -50}"),
        "[[[\"T.pos\", \"require\", null]]]\n"
    );
}

#[test]
fn s4_8_validate_single_value_gives_one_result() {
    let t = "type T : Data = { a: Int }";
    assert_eq!(
        ok_out(&format!("{t}\n{{a: 1}} | validate(T)"), &[]),
        "ok({a: 1})\n"
    );
    let out = ok_out(&format!("{t}\n{{a: \"x\"}} | validate(T)"), &[]);
    assert!(out.starts_with("err({type: \"T\", version: null, origin: null, input: {a: \"x\"}, failures: [{rule: \"T.a.type\""), "{out}");
    assert_eq!(
        ok_out(&format!("{t}\nvalidate({{a: 1}}, T)"), &[]),
        "ok({a: 1})\n"
    );
}

#[test]
fn s4_8_validate_list_validates_each() {
    let t = "type T : Data = { a: Int }";
    let out = ok_out(&format!("{t}\n[{{a: 1}}, {{a: 2}}] | validate(T)"), &[]);
    assert_eq!(out, "[ok({a: 1}), ok({a: 2})]\n");
}

#[test]
fn s4_8_validate_on_ok_revalidates_err_passes_through() {
    let t = "type A : DataContract = { a: Int }\ntype B : DataContract = { a: Int\n require small: a < 3 }";
    let out = ok_out(
        &format!("{t}\n{{a: 5}} | validate(A) | validate(B) | is_err()"),
        &[],
    );
    assert_eq!(out, "true\n");
    let out = ok_out(&format!("{t}\n[{{a: 5}}] | validate(A) | validate(B) | errs() | map(e => [e.type, e.failures | map(f => f.rule)])"), &[]);
    assert_eq!(out, "[[\"B\", [\"B.small\"]]]\n");
    // An err passes through unchanged.
    let out = ok_out(
        &format!("{t}\nlet e = {{a: 5}} | validate(B)\n(e | validate(A)) == e"),
        &[],
    );
    assert_eq!(out, "true\n");
    let out = ok_out(&format!("{t}\nok({{a: 1}}) | validate(B)"), &[]);
    assert_eq!(out, "ok({a: 1})\n");
}

#[test]
fn s4_8_version_travels_into_failure_record() {
    let src = "@version(\"1.2.0\")\n@owner(\"data-platform\")\ntype T : Data = { a: Int }\n[{a: \"x\"}] | validate(T) | errs() | map(e => [e.type, e.version])";
    assert_eq!(ok_out(src, &[]), "[[\"T\", \"1.2.0\"]]\n");
}

// ======================================================================
// §4.9 Failure records
// ======================================================================

#[test]
fn s4_9_failure_record_fields_in_order() {
    let src = "type T : DataContract = {\n a: Int\n require a > 0\n}\n[{a: 0}] | validate(T) | errs() | map(e => [keys(e), e.failures | map(f => keys(f))])";
    assert_eq!(
        ok_out(src, &[]),
        "[[[\"type\", \"version\", \"origin\", \"input\", \"failures\"], [[\"rule\", \"kind\", \"path\", \"fields\", \"severity\", \"message\"]]]]\n"
    );
}

#[test]
fn s4_9_fields_in_order_of_first_mention() {
    let t = "type T : DataContract = {\n low: Int\n high: Int\n mid: Int\n require r: high >= low and mid > low and high > 0\n}";
    let src = format!("{t}\n[{{low: 5, high: 1, mid: 0}}] | validate(T) | errs() | map(e => e.failures | map(f => f.fields))");
    assert_eq!(ok_out(&src, &[]), "[[[\"high\", \"low\", \"mid\"]]]\n");
}

#[test]
fn s4_9_field_failure_fields_is_the_field() {
    let src = "type T : Data = { a: Int }\n[{a: \"x\"}] | validate(T) | errs() | map(e => e.failures | map(f => [f.path, f.fields, f.severity]))";
    assert_eq!(ok_out(src, &[]), "[[[\"a\", [\"a\"], \"error\"]]]\n");
}

#[test]
fn s4_9_message_never_carries_the_value() {
    let t = "type T : DataContract = {\n a: Int\n s: String\n n: Int\n require small: n < 10\n require len(s) < 3\n}";
    let src = format!("{t}\n[{{a: \"SECRET_VALUE_1\", s: \"ok\", n: 1}}, {{a: 1, s: \"SECRET_VALUE_2\", n: 777777}}] | validate(T) | errs() | map(e => e.failures | map(f => f.message))");
    let out = ok_out(&src, &[]);
    assert_eq!(
        out.matches("\", \"").count() + out.matches("[\"").count(),
        3,
        "three messages: {out}"
    );
    assert!(!out.contains("SECRET_VALUE"), "{out}");
    assert!(!out.contains("777777"), "{out}");
}

#[test]
fn s4_9_message_names_field_and_expected_type() {
    let src = "type T : Data = { amount: Int }\n[{amount: \"x\"}] | validate(T) | errs() | map(e => e.failures | map(f => f.message)) | first() | first()";
    let out = ok_out(src, &[]);
    assert!(out.contains("amount") && out.contains("Int"), "{out}");
}

#[test]
fn s4_9_input_is_the_value_as_received() {
    let src =
        "type T : Data = { a: Int }\n[{b: 1, a: \"x\"}] | validate(T) | errs() | map(e => e.input)";
    assert_eq!(ok_out(src, &[]), "[{b: 1, a: \"x\"}]\n");
}

#[test]
fn s4_9_warnings_shape_origin_last() {
    let t = "type T : DataContract = {\n a: Int\n warn small: a < 10\n}";
    let src = format!("{t}\nsource(file(\"w.jsonl\"), Json) | validate(T) | warnings()");
    let out = ok_out(&src, &[("w.jsonl", "{\"a\": 1}\n{\"a\": 50}\n")]);
    let prefix = "[{rule: \"T.small\", kind: \"warn\", path: null, fields: [\"a\"], severity: \"warning\", message: ";
    assert!(out.starts_with(prefix), "{out}");
    assert!(
        out.ends_with(", origin: {source: \"w.jsonl\", line: 2}}]\n"),
        "{out}"
    );
    let src = format!(
        "{t}\nsource(file(\"w.jsonl\"), Json) | validate(T) | warnings() | map(w => keys(w))"
    );
    let out = ok_out(&src, &[("w.jsonl", "{\"a\": 50}\n")]);
    assert_eq!(
        out,
        "[[\"rule\", \"kind\", \"path\", \"fields\", \"severity\", \"message\", \"origin\"]]\n"
    );
}

#[test]
fn s4_9_warnings_one_entry_per_broken_warn_rule() {
    let t = "type T : DataContract = {\n a: Int\n warn w1: a < 10\n warn w2: a < 20\n warn w3: a > 0\n}";
    let src = format!(
        "{t}\n[{{a: 50}}, {{a: 15}}, {{a: 1}}] | validate(T) | warnings() | map(w => w.rule)"
    );
    assert_eq!(ok_out(&src, &[]), "[\"T.w1\", \"T.w2\", \"T.w1\"]\n");
}

#[test]
fn s4_9_origin_lines_jsonl_counts_blank_lines() {
    let data = "{\"a\": 1}\n\n{\"a\": \"x\"}\n   \n{\"a\": \"y\"}\n";
    let src = "type T : Data = { a: Int }\nsource(file(\"data/in.jsonl\"), Json) | validate(T) | errs() | map(e => e.origin)";
    assert_eq!(
        ok_out(src, &[("data/in.jsonl", data)]),
        "[{source: \"data/in.jsonl\", line: 3}, {source: \"data/in.jsonl\", line: 5}]\n"
    );
}

#[test]
fn s4_9_origin_lines_json_array_where_element_starts() {
    let data =
        "\n  [\n  {\"a\": 1},\n  {\"a\":\n     \"x\"},\n\n  {\"a\": \"y\"}, {\"a\": \"z\"}\n]\n";
    let src = "type T : Data = { a: Int }\nsource(file(\"arr.json\"), Json) | validate(T) | errs() | map(e => e.origin.line)";
    assert_eq!(ok_out(src, &[("arr.json", data)]), "[4, 7, 7]\n");
}

#[test]
fn s4_9_json_array_mode_reads_elements() {
    let data = "[{\"a\": 1}, {\"a\": 2}]";
    assert_eq!(
        ok_out(
            "source(file(\"arr.json\"), Json) | map(r => r.a)",
            &[("arr.json", data)]
        ),
        "[1, 2]\n"
    );
}

#[test]
fn s4_9_filter_keeps_origin_map_drops_it() {
    let data = "{\"a\": \"x\"}\n";
    let src = "type T : Data = { a: Int }\nlet s = source(file(\"o.jsonl\"), Json)\ns | filter(r => true) | take(5) | skip(0) | validate(T) | errs() | map(e => e.origin)\ns | map(r => {a: r.a}) | validate(T) | errs() | map(e => e.origin)";
    assert_eq!(
        ok_out(src, &[("o.jsonl", data)]),
        "[{source: \"o.jsonl\", line: 1}]\n[null]\n"
    );
}

#[test]
fn s4_9_origin_stdin() {
    let src = "type T : Data = { a: Int }\nsource(stdin(), Json) | validate(T) | errs() | map(e => e.origin)";
    let (out, err, status) = run_stdin(src, "{\"a\": 1}\n{\"a\": \"x\"}\n");
    assert_eq!(status, 0, "{err}");
    assert_eq!(out, "[{source: \"<stdin>\", line: 2}]\n");
}

#[test]
fn s4_9_program_built_values_have_null_origin() {
    let src =
        "type T : Data = { a: Int }\n[{a: \"x\"}] | validate(T) | errs() | map(e => e.origin)";
    assert_eq!(ok_out(src, &[]), "[null]\n");
}

#[test]
fn s4_9_stages_that_pass_values_through_keep_their_origin() {
    let data = "{\"a\": \"x\", \"k\": 3}\n{\"a\": \"y\", \"k\": 1}\n{\"a\": 2, \"k\": 2}\n";
    let src = r#"type A : Data = { a: Int }
let s = source(file("d.jsonl"), Json)
s | sort_by(r => r.k) | validate(A) | errs() | map(e => e.origin.line)
s | sort() | validate(A) | errs() | map(e => e.origin.line)
[s | first() | validate(A)] | errs() | map(e => e.origin)
s | group_by(r => r.k % 2) | map(g => g.items | validate(A) | errs() | map(e => e.origin.line))
s | distinct() | collect() | validate(A) | errs() | map(e => e.origin.line)
s | validate(A) | sort_by(r => is_ok(r)) | errs() | map(e => e.origin.line)
s | validate(A) | errs() | sort_by(e => e.input.k) | map(e => e.origin.line)
s | map(r => {a: r.a, k: r.k}) | sort() | validate(A) | errs() | map(e => e.origin)"#;
    assert_eq!(
        ok_out(src, &[("d.jsonl", data)]),
        "[2, 1]\n[1, 2]\n[{source: \"d.jsonl\", line: 1}]\n[[1, 2], []]\n[1, 2]\n[1, 2]\n[2, 1]\n[null, null]\n"
    );
    // A valid record passed through keeps it too, for a later failure.
    let src = r#"type A : Data = { a: Any }
type B : Data = { a: Int }
source(file("d.jsonl"), Json) | validate(A) | oks() | sort_by(r => r.k) | validate(B) | errs() | map(e => e.origin.line)"#;
    assert_eq!(ok_out(src, &[("d.jsonl", data)]), "[2, 1]\n");
}

#[test]
fn s4_9_whole_value_failures_have_a_null_path() {
    let src = "type E2 = Email | Null\n[\"bad\"] | validate(E2) | errs() | map(e => e.failures | map(f => [f.rule, f.path]))";
    assert_eq!(ok_out(src, &[]), "[[[\"Email.well_formed\", null]]]\n");
    let types = "type R : DataContract = {\n a: Int\n require pos: a > 0\n}\ntype U = R | Null\ntype P = Int require self > 0\ntype Q = P\ntype V = P | String";
    let src = format!("{types}\n[{{a: 0}}] | validate(U) | errs() | map(e => e.failures | map(f => f.path))\n[0, true] | validate(Q) | errs() | map(e => e.failures | map(f => f.path))\n[0] | validate(V) | errs() | map(e => e.failures | map(f => f.path))\n[5] | validate(R) | errs() | map(e => e.failures | map(f => f.path))");
    assert_eq!(
        ok_out(&src, &[]),
        "[[null]]\n[[null], [null]]\n[[null]]\n[[null]]\n"
    );
}

#[test]
fn s4_9_runtime_errors_over_data_never_carry_its_values() {
    let data = "{\"i\": 9123, \"p\": \"(secret\", \"xs\": [1, 2]}\n";
    for (body, code) in [
        ("r.xs[r.i]", "hql::missing_field"),
        ("matches(\"x\", r.p)", "hql::regex"),
        ("r[r.p]", "hql::missing_field"),
        ("{a: 1}[r.p]", "hql::missing_field"),
    ] {
        let src = format!("source(file(\"d.jsonl\"), Json) | map(r => {body})");
        let (_, err) = runtime_error(&src, &[("d.jsonl", data)]);
        let message = err.lines().find(|l| l.contains('×')).unwrap_or_default();
        assert!(err.contains(code), "{body}: {err}");
        assert!(!message.contains("9123"), "{body}: {message}");
        assert!(!message.contains("secret"), "{body}: {message}");
        assert!(
            !err.contains(" 2\n") && !message.contains("of 2"),
            "{body}: {message}"
        );
    }
    // What the program wrote itself may be named.
    let (_, err) = runtime_error("[1, 2][9123]", &[]);
    assert!(
        squash(&err).contains("the index 9123 is outside the list"),
        "{err}"
    );
    let (_, err) = runtime_error("{a: 1}[\"zz\"]", &[]);
    assert!(
        squash(&err).contains("the record has no field \"zz\""),
        "{err}"
    );
}

// ======================================================================
// §5 Expressions
// ======================================================================

#[test]
fn s5_pipe_binds_tighter_than_comparison() {
    assert_eq!(eval1("[1, 2, 3, 4] | count() > 3"), "true");
    assert_eq!(eval1("[1, 2, 3] | count() > 3"), "false");
    assert_eq!(eval1("([1, 2] | count()) + 1"), "3");
}

#[test]
fn s5_pipe_is_first_argument() {
    assert_eq!(eval1("\"a-b\" | split(\"-\")"), "[\"a\", \"b\"]");
    assert_eq!(eval1("[1, 2, 3] | take(2) | map(x => x * 10)"), "[10, 20]");
}

#[test]
fn s5_pipe_then_arithmetic_needs_parens_with_help() {
    let err = static_error("[1, 2] | count() + 1", "hql::pipe");
    assert!(squash(&err).contains("([1, 2] | count()) + 1"), "{err}");
}

#[test]
fn s5_pipe_into_type_name_suggests_validate() {
    let err = static_error(
        "type Sighting : Data = { a: Int }\n[{a: 1}] | Sighting",
        "hql::pipe",
    );
    assert!(squash(&err).contains("validate(Sighting)"), "{err}");
}

#[test]
fn s5_precedence_table() {
    assert_eq!(eval1("1 + 2 * 3"), "7");
    assert_eq!(eval1("10 - 4 - 3"), "3");
    assert_eq!(eval1("8 / 2 / 2"), "2.0");
    assert_eq!(eval1("not 1 == 2"), "true");
    assert_eq!(eval1("true or false and false"), "true");
    assert_eq!(eval1("not false and false"), "false");
    assert_eq!(eval1("false => false => false"), "true");
    assert_eq!(eval1("true or false => false"), "false");
    assert_eq!(eval1("{a: 1}.a? ?? 2 + 3"), "1");
    assert_eq!(eval1("{a: 1}.b? ?? 2 == 2"), "true");
    assert_eq!(eval1("(0 - 2) * 3"), "-6");
    assert_eq!(eval1("2 * (-3)"), "-6");
    assert_eq!(eval1("(-2) + 5"), "3");
    assert_eq!(eval1("[1, 2] + [3] | count()"), "3");
}

#[test]
fn s5_if_and_lambda_extend_right() {
    assert_eq!(eval1("if true then 1 else 2 + 10"), "1");
    assert_eq!(eval1("if false then 1 else 2 + 10"), "12");
    assert_eq!(eval1("[1] | map(x => x + 1 == 2)"), "[true]");
}

#[test]
fn s5_lambda_and_implication() {
    assert_eq!(
        eval1("[true, false] | map(x => (x => false))"),
        "[false, true]"
    );
    assert_eq!(eval1("let f = x => x * 2\nf(4)"), "8");
}

#[test]
fn s5_functions_are_values() {
    assert_eq!(
        eval1("fn double(x: Int) -> Int = x * 2\n[1, 2] | map(double)"),
        "[2, 4]"
    );
    assert_eq!(eval1("fn add(a, b) = a + b\nadd(1, 2)"), "3");
    assert_eq!(eval1("fn add(a, b) = a + b\n1 | add(2)"), "3");
}

#[test]
fn s5_named_args_unknown_is_static() {
    static_error("[1] | count(by: 1)", "hql::unknown_named_argument");
}

#[test]
fn s5_named_args_repeated_is_static() {
    static_error("[1] | count(by: 1, by: 2)", "hql::repeated_named_argument");
}

#[test]
fn s5_in_and_not_in() {
    assert_eq!(eval1("2 in [1, 2]"), "true");
    assert_eq!(eval1("5 in [1, 2]"), "false");
    assert_eq!(eval1("2.0 in [1, 2]"), "true");
    assert_eq!(eval1("\"ell\" in \"hello\""), "true");
    assert_eq!(eval1("3 not in [1, 2]"), "true");
    assert_eq!(eval1("\"z\" not in \"abc\""), "true");
    assert_eq!(eval1("\"a\" not in \"abc\""), "false");
}

#[test]
fn s5_records_and_index() {
    assert_eq!(eval1("{a: 1, \"odd key\": 2}[\"odd key\"]"), "2");
    assert_eq!(eval1("{a: 1}.a"), "1");
    assert_eq!(eval1("[10, 20, 30][1]"), "20");
}

#[test]
fn s5_missing_field_read_is_runtime_error_naming_field() {
    let (out, err) = runtime_error("\"before\"\nlet r = {a: 1}\nr.zzz_missing\n\"after\"", &[]);
    assert_eq!(out, "\"before\"\n");
    assert!(err.contains("zzz_missing"), "{err}");
}

#[test]
fn s5_missing_field_runtime_error_over_data_names_origin() {
    let (_, err) = runtime_error(
        "source(file(\"m.jsonl\"), Json) | map(r => r.zzz_missing)",
        &[("m.jsonl", "{\"a\": 1}\n{\"b\": 2}\n")],
    );
    assert!(err.contains("zzz_missing"), "{err}");
    assert!(
        err.contains("m.jsonl:1"),
        "tooling.md: runtime errors over data name the origin: {err}"
    );
}

#[test]
fn s5_in_takes_a_list_a_string_or_a_record() {
    let err = static_error("\"runs?\"\n[1 in 5]", "hql::operand_types");
    assert!(err.contains("`in` cannot take an Int and an Int"), "{err}");
    static_error("\"runs?\"\n1 in \"abc\"", "hql::operand_types");
    static_error("\"runs?\"\n1 not in {a: 1}", "hql::operand_types");
    assert_eq!(
        eval1(r#"["b" in "abc", "a" in {a: 1}, 2 in [1, 2]]"#),
        "[true, true, true]"
    );
}

#[test]
fn s5_calling_a_type_says_validate() {
    let err = static_error(
        "type T : Data = { a: Int }\n\"runs?\"\n[1, 2] | T()",
        "hql::call_of_type",
    );
    assert!(squash(&err).contains("write `validate(T)`"), "{err}");
}

// ======================================================================
// §6 Statements, pipelines and streams
// ======================================================================

#[test]
fn s6_statements_print_lets_and_decls_do_not() {
    let src = "let x = 1\ntype T : Data = { a: Int }\nfn f(a) = a\nx + 1\ncheck ok: true\n\"done\"";
    assert_eq!(ok_out(src, &[]), "2\n\"done\"\n");
}

#[test]
fn s6_let_bound_stream_reruns() {
    let src = "let s = source(file(\"a.jsonl\"), Json)\ns | count()\ns | map(r => r.n) | sum()\ns | count()";
    let data = "{\"n\": 1}\n{\"n\": 2}\n{\"n\": 3}\n";
    assert_eq!(ok_out(src, &[("a.jsonl", data)]), "3\n6\n3\n");
}

#[test]
fn s6_stdin_read_twice_is_runtime_error() {
    let src = "let s = source(stdin(), Json)\ns | count()\ns | count()\n\"never\"";
    let (out, err, status) = run_stdin(src, "{\"n\": 1}\n{\"n\": 2}\n");
    assert_eq!(status, 1, "{err}");
    assert_eq!(out, "2\n");
    assert!(!err.is_empty());
}

#[test]
fn s6_check_failure_reports_and_continues() {
    let src = "\"one\"\ncheck \"few bad\": [1, 2, 3] | count() <= 2\n\"two\"";
    let (out, err, status) = run(src, &[]);
    assert_eq!(status, 1);
    assert_eq!(out, "\"one\"\n\"two\"\n");
    assert!(err.contains("few bad"), "{err}");
    assert!(err.contains("left 3, right 2"), "{err}");
    assert!(
        err.contains("test.hql:2") || err.contains("line 2"),
        "names its line: {err}"
    );
}

#[test]
fn s6_check_identifier_label_and_passing_check_silent() {
    let (out, err, status) = run("check few: 1 < 2\ncheck many: 5 > 10\n1", &[]);
    assert_eq!(status, 1);
    assert_eq!(out, "1\n");
    assert!(err.contains("many"), "{err}");
    assert_eq!(
        err.matches("check failed").count(),
        1,
        "only the failing check is reported: {err}"
    );
    assert!(err.contains("left 5, right 10"), "{err}");
}

#[test]
fn s6_check_false_non_comparison() {
    let (_, err, status) = run("check \"all good\": false", &[]);
    assert_eq!(status, 1);
    assert!(err.contains("all good"), "{err}");
}

#[test]
fn s6_runtime_error_stops_program_keeps_output() {
    let (out, err) = runtime_error("1\n2\n[0] | map(z => 1 / z)\n3", &[]);
    assert_eq!(out, "1\n2\n");
    assert!(!err.is_empty());
}

#[test]
fn s6_runtime_errors_point_at_the_expression_that_raised_them() {
    // (program, where the diagnostic points: file:line:column, the source
    // line shown under it)
    let cases = [
        // Conditions over data: a condition the checker can see is
        // no Bool is a static error.
        (
            "\"a\"\nsource(file(\"c.jsonl\"), Json) | map(r => if r.c then \"a\" else \"b\")",
            "test.hql:2:42",
            "2 │ source",
        ),
        (
            "let c = source(file(\"c.jsonl\"), Json) | first()\ncheck \"x\": c.c",
            "test.hql:2:12",
            "2 │ check",
        ),
        (
            "let s = source(file(\"c.jsonl\"), Json) | filter(r => r.c)\n1\ns",
            "test.hql:1:9",
            "1 │ let s",
        ),
        (
            "let s = [1] | flat_map(x => 1)\n1\ns",
            "test.hql:1:9",
            "1 │ let s",
        ),
        (
            "let s = [ok(1), err(2)] | unwrap()\n1\ns",
            "test.hql:1:9",
            "1 │ let s",
        ),
        (
            "let s = [1] | map(x => x / 0)\n1\ns",
            "test.hql:1:24",
            "1 │ let s",
        ),
        (
            "let s = source(file(\"none.jsonl\"), Json)\n1\ns | count()",
            "test.hql:1:9",
            "1 │ let s",
        ),
    ];
    for (src, place, line) in cases {
        let (_, err) = runtime_error(src, &[("c.jsonl", "{\"c\": 1}\n")]);
        assert!(err.contains(&format!("[{place}]")), "{src}: {err}");
        assert!(err.contains(line), "{src}: {err}");
        assert!(err.contains('┬'), "{src}: a label marks the span: {err}");
    }
}

#[test]
fn s6_missing_file_is_runtime_error() {
    let (out, _) = runtime_error(
        "\"a\"\nsource(file(\"nope.jsonl\"), Json) | count()\n\"b\"",
        &[],
    );
    assert_eq!(out, "\"a\"\n");
}

#[test]
fn s6_jsonl_blank_lines_skipped() {
    let data = "\n{\"a\": 1}\n\n\n{\"a\": 2}\n\n";
    assert_eq!(
        ok_out(
            "source(file(\"b.jsonl\"), Json) | count()",
            &[("b.jsonl", data)]
        ),
        "2\n"
    );
}

#[test]
fn s6_json_array_with_leading_whitespace() {
    let data = "  \n\t[1, 2, 3]\n";
    assert_eq!(
        ok_out(
            "source(file(\"b.json\"), Json) | sum()",
            &[("b.json", data)]
        ),
        "6\n"
    );
}

#[test]
fn s6_each_line_after_a_json_array_is_one_decode_err() {
    // An array, then JSON Lines: no record is lost, and none counted twice.
    let data = "[{\"a\": 1}]\n{\"a\": 2}\n\n{\"a\": 3}\n{\"a\": 4}";
    let src = "type T : Data = { a: Int }\n\
               let rs = source(file(\"m.json\"), Json) | validate(T)\n\
               rs | report()\n\
               rs | errs() | map(e => [e.origin.line, e.failures[0].message])";
    assert_eq!(
        ok_out(src, &[("m.json", data)]),
        "{total: 4, ok: 1, err: 3, warned: 0, by_rule: [{rule: \"decode\", kind: \"decode\", count: 3}]}\n\
         [[2, \"line 2 is not valid JSON: trailing characters after the array\"], \
         [4, \"line 4 is not valid JSON: trailing characters after the array\"], \
         [5, \"line 5 is not valid JSON: trailing characters after the array\"]]\n"
    );
}

#[test]
fn s6_jsonl_non_record_values() {
    let data = "1\n\"x\"\n[2]\n";
    assert_eq!(
        ok_out("source(file(\"v.jsonl\"), Json)", &[("v.jsonl", data)]),
        "[1, \"x\", [2]]\n"
    );
}

#[test]
fn s6_lists_accepted_where_streams_are() {
    let src = "type T : Data = { a: Int }\n[{a: 1}, {a: \"x\"}] | validate(T) | oks() | count()";
    assert_eq!(ok_out(src, &[]), "1\n");
}

#[test]
fn s6_a_condition_that_is_not_a_bool_is_static() {
    for src in [
        "check \"x\": 5",
        "[1, 2] | filter(x => x + 1)",
        "[1, 2] | any(x => \"yes\")",
        "if \"yes\" then 1 else 2",
        "not 3",
    ] {
        let err = static_error(&format!("\"runs?\"\n{src}"), "hql::condition_type");
        assert!(err.contains("a condition must be a Bool"), "{src}: {err}");
    }
}

// ======================================================================
// §6.1 Builtins
// ======================================================================

#[test]
fn s6_1_report() {
    let t = "type T : DataContract = {\n a: Int\n require pos: a > 0\n warn small: a < 10\n}";
    let src = format!(
        "{t}\n[{{a: 1}}, {{a: -1}}, {{a: 50}}, {{a: \"x\"}}, {{a: -5}}] | validate(T) | report()"
    );
    assert_eq!(
        ok_out(&src, &[]),
        "{total: 5, ok: 2, err: 3, warned: 1, by_rule: [{rule: \"T.pos\", kind: \"require\", count: 2}, {rule: \"T.a.type\", kind: \"type\", count: 1}, {rule: \"T.small\", kind: \"warn\", count: 1}]}\n"
    );
}

#[test]
fn s6_1_report_counts_every_failure_and_warning() {
    let t = "type T : DataContract = {\n a: Int\n b: Int\n warn w1: a < 10\n warn w2: b < 10\n}";
    let src = format!(
        "{t}\n[{{a: 50, b: 50}}, {{a: \"x\", b: \"y\"}}, {{a: 1, b: 1}}] | validate(T) | report()"
    );
    assert_eq!(
        ok_out(&src, &[]),
        "{total: 3, ok: 2, err: 1, warned: 1, by_rule: [{rule: \"T.a.type\", kind: \"type\", count: 1}, {rule: \"T.b.type\", kind: \"type\", count: 1}, {rule: \"T.w1\", kind: \"warn\", count: 1}, {rule: \"T.w2\", kind: \"warn\", count: 1}]}\n"
    );
}

#[test]
fn s6_1_report_empty() {
    let src = "type T : Data = { a: Int }\n[] | validate(T) | report()";
    assert_eq!(
        ok_out(src, &[]),
        "{total: 0, ok: 0, err: 0, warned: 0, by_rule: []}\n"
    );
}

#[test]
fn s6_1_oks_errs() {
    let src = "type T : Data = { a: Int }\nlet r = [{a: 1}, {a: \"x\"}, {a: 3}] | validate(T)\nr | oks()\nr | errs() | map(e => e.input)";
    assert_eq!(ok_out(src, &[]), "[{a: 1}, {a: 3}]\n[{a: \"x\"}]\n");
}

#[test]
fn s6_1_unwrap_passes_oks() {
    let src = "type T : Data = { a: Int }\n[{a: 1}, {a: 2}] | validate(T) | unwrap()";
    assert_eq!(ok_out(src, &[]), "[{a: 1}, {a: 2}]\n");
}

#[test]
fn s6_1_unwrap_stops_with_exit_1_naming_rule() {
    let src = "type T : DataContract = {\n a: Int\n require positive_a: a > 0\n}\n\"before\"\n[{a: 1}, {a: -1}, {a: 2}] | validate(T) | unwrap() | count()\n\"after\"";
    let (out, err, status) = run(src, &[]);
    assert_eq!(status, 1, "{err}");
    assert_eq!(out, "\"before\"\n");
    assert!(err.contains("T.positive_a"), "{err}");
}

#[test]
fn s6_1_count_by_ties_in_first_appearance_order() {
    assert_eq!(
        eval1("[\"b\", \"a\", \"c\", \"a\", \"b\", \"d\", \"e\", \"e\", \"e\"] | count_by(x => x)"),
        "[{key: \"e\", count: 3}, {key: \"b\", count: 2}, {key: \"a\", count: 2}, {key: \"c\", count: 1}, {key: \"d\", count: 1}]"
    );
}

#[test]
fn s6_1_group_by_first_appearance() {
    assert_eq!(
        eval1("[1, 2, 3, 4, 5] | group_by(x => x % 2)"),
        "[{key: 1, items: [1, 3, 5]}, {key: 0, items: [2, 4]}]"
    );
}

#[test]
fn s6_1_sort_and_stable_sort_by() {
    assert_eq!(eval1("[3, 1, 2] | sort()"), "[1, 2, 3]");
    assert_eq!(
        eval1("[\"b\", \"a\", \"C\"] | sort()"),
        "[\"C\", \"a\", \"b\"]"
    );
    assert_eq!(
        eval1("[{n: \"a\", k: 2}, {n: \"b\", k: 1}, {n: \"c\", k: 2}, {n: \"d\", k: 1}, {n: \"e\", k: 0}] | sort_by(r => r.k) | map(r => r.n)"),
        "[\"e\", \"b\", \"d\", \"a\", \"c\"]"
    );
}

#[test]
fn s6_1_sort_over_mixed_kinds_follows_the_order_of_kinds() {
    assert_eq!(
        eval1("[[2], null, \"b\", {b: 1}, true, 1.5, [1, 2], {a: 2}, false, 3, \"a\", [1], {a: 1, b: 0}, {a: 1}, [1, \"x\"], [1, null]] | sort()"),
        "[null, false, true, 1.5, 3, \"a\", \"b\", [1], [1, null], [1, 2], [1, \"x\"], [2], {a: 1}, {a: 2}, {a: 1, b: 0}, {b: 1}]"
    );
    assert_eq!(
        eval1("[{k: [1, 2]}, {k: {z: 0}}, {k: [1]}, {k: 0}] | sort_by(r => r.k) | map(r => r.k)"),
        "[0, [1], [1, 2], {z: 0}]"
    );
}

#[test]
fn s6_1_get_runs_with_an_absent_first_argument() {
    assert_eq!(
        eval1("let r = {a: null}\n[get(r.a?, \"f\", 7), get(r.b?, \"f\", 8), get(null, \"f\", 9), get({f: 1}, \"f\", 0)]"),
        "[7, 8, 9, 1]"
    );
    // In a rule: the record's optional field read with `?`.
    let t = "type T : DataContract = {\n m?: Map[Int]\n require get(m?, \"n\", 1) > 0\n}";
    assert_eq!(
        rules_of(t, "[{}, {m: {n: 0}}, {m: {}}]"),
        "[\"ok\", [\"T.get(m?, \\\"n\\\", 1) > 0\"], \"ok\"]\n"
    );
}

#[test]
fn s6_1_distinct_first_occurrences() {
    assert_eq!(eval1("[3, 1, 3, 2, 1] | distinct()"), "[3, 1, 2]");
    assert_eq!(
        eval1("[{a: 1, b: 2}, {b: 2, a: 1}] | distinct() | count()"),
        "1"
    );
    assert_eq!(eval1("[1, 1.0, 2] | distinct()"), "[1, 2]");
}

/// Standard input that never ends, as from `yes '{"a": 1}'`: it counts the
/// bytes it served, and stops after a few megabytes only so that a stage
/// which wrongly reads on fails its test instead of hanging it.
struct Endless {
    served: std::rc::Rc<std::cell::Cell<usize>>,
}

impl std::io::Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        const LINE: &[u8] = b"{\"a\": 1}\n";
        let at = self.served.get();
        if at > 8 << 20 {
            return Ok(0);
        }
        for (i, b) in buf.iter_mut().enumerate() {
            *b = LINE[(at + i) % LINE.len()];
        }
        self.served.set(at + buf.len());
        Ok(buf.len())
    }
}

impl hql::runtime::eval::Host for Endless {
    fn open_file(&self, _: &str) -> std::io::Result<Box<dyn std::io::BufRead>> {
        Err(std::io::ErrorKind::NotFound.into())
    }

    fn stdin(&self) -> Option<Box<dyn std::io::BufRead>> {
        let served = self.served.clone();
        Some(Box::new(std::io::BufReader::new(Endless { served })))
    }
}

#[test]
fn s6_1_any_and_all_stop_at_the_first_deciding_element() {
    for (stage, printed) in [
        ("any(r => r.a == 1)", "true\n"),
        ("all(r => r.a == 2)", "false\n"),
    ] {
        let served = std::rc::Rc::new(std::cell::Cell::new(0));
        let host = std::rc::Rc::new(Endless {
            served: served.clone(),
        });
        let text = format!("source(stdin(), Json) | {stage}");
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let status = hql::cli::run::run_source(
            &hql::cli::run::Source {
                name: "p.hql",
                text: &text,
            },
            host,
            hql::cli::run::OutputFormat::Hql,
            &mut hql::cli::run::Sinks::plain(&mut out, &mut err),
        );
        assert_eq!(status, 0, "{}", String::from_utf8_lossy(&err));
        assert_eq!(String::from_utf8_lossy(&out), printed);
        assert!(
            served.get() < 1 << 20,
            "{stage} read {} bytes",
            served.get()
        );
    }
    assert_eq!(eval1("[1, 2, 3] | any(x => x > 2)"), "true");
    assert_eq!(eval1("[1, 2, 3] | all(x => x > 0)"), "true");
    assert_eq!(eval1("[] | any(x => true)"), "false");
    assert_eq!(eval1("[] | all(x => false)"), "true");
}

#[test]
fn s6_1_unwrap_of_an_err_that_is_no_failure_record_names_its_kind() {
    let (out, err) = runtime_error("\"before\"\n[ok(1), err(\"boom\")] | unwrap()", &[]);
    assert_eq!(out, "\"before\"\n");
    let err = squash(&err);
    assert!(
        err.contains("hql::unwrap")
            && err.contains("`unwrap()` met an `err` holding a String, not a failure record"),
        "{err}"
    );
    // What it holds may come from data: the message never shows it.
    let message = err.split(" [").next().unwrap_or_default();
    assert!(!message.contains("boom"), "{message}");
    let (_, err) = runtime_error("[err({code: 7})] | unwrap()", &[]);
    assert!(squash(&err).contains("holding a Record"), "{err}");
}

#[test]
fn s6_1_aggregates() {
    assert_eq!(eval1("[1, 2, 3] | sum()"), "6");
    assert_eq!(eval1("[1, 2.5] | sum()"), "3.5");
    assert_eq!(eval1("[3, 1, 2] | min()"), "1");
    assert_eq!(eval1("[3, 1, 2] | max()"), "3");
    assert_eq!(eval1("[1, 2] | avg()"), "1.5");
    assert_eq!(eval1("[] | avg()"), "null");
    assert_eq!(eval1("[5, 6] | first()"), "5");
    assert_eq!(eval1("[] | first()"), "null");
    assert_eq!(eval1("[1, 2, 3] | count()"), "3");
}

#[test]
fn s6_1_stream_stages() {
    assert_eq!(eval1("[1, 2, 3, 4] | take(2)"), "[1, 2]");
    assert_eq!(eval1("[1, 2, 3, 4] | skip(3)"), "[4]");
    assert_eq!(
        eval1("[1, 2] | flat_map(x => [x, x * 10])"),
        "[1, 10, 2, 20]"
    );
    assert_eq!(eval1("[1, 2] | all(x => x > 0)"), "true");
    assert_eq!(eval1("[1, 2] | all(x => x > 1)"), "false");
    assert_eq!(eval1("[1, 2] | any(x => x > 1)"), "true");
    assert_eq!(eval1("[] | all(x => false)"), "true");
    assert_eq!(eval1("[] | any(x => true)"), "false");
    assert_eq!(eval1("[1, 2] | collect()"), "[1, 2]");
    assert_eq!(eval1("[1, 2, 3] | filter(x => x != 2)"), "[1, 3]");
}

#[test]
fn s6_1_fmt() {
    assert_eq!(eval1("fmt(\"{{{}}} and {}\", \"x\", 2)"), "\"{x} and 2\"");
    assert_eq!(
        eval1("fmt(\"{}|{}|{}|{}\", \"s\", [1, \"a\"], 2.0, null)"),
        r#""s|[1, \"a\"]|2.0|null""#
    );
    assert_eq!(eval1("fmt(\"{{}}\")"), "\"{}\"");
}

#[test]
fn s6_1_text_functions() {
    assert_eq!(eval1("len(\"héllo\")"), "5");
    assert_eq!(eval1("len([1, 2])"), "2");
    assert_eq!(eval1("len({a: 1, b: 2})"), "2");
    assert_eq!(eval1("lower(\"AbC\")"), "\"abc\"");
    assert_eq!(eval1("upper(\"AbC\")"), "\"ABC\"");
    assert_eq!(eval1("trim(\"  a b \")"), "\"a b\"");
    assert_eq!(eval1("contains(\"hello\", \"ell\")"), "true");
    assert_eq!(eval1("starts_with(\"hello\", \"he\")"), "true");
    assert_eq!(eval1("ends_with(\"hello\", \"he\")"), "false");
    assert_eq!(eval1("replace(\"a-b-c\", \"-\", \"+\")"), "\"a+b+c\"");
    assert_eq!(
        eval1("split(\"a,b,,c\", \",\")"),
        "[\"a\", \"b\", \"\", \"c\"]"
    );
    assert_eq!(eval1("join([\"a\", \"b\"], \"-\")"), "\"a-b\"");
}

#[test]
fn s6_1_matches_is_unanchored() {
    assert_eq!(eval1("matches(\"abc\", \"b\")"), "true");
    assert_eq!(eval1("matches(\"abc\", \"^b$\")"), "false");
    assert_eq!(eval1("matches(\"abc\", r\"^a.c$\")"), "true");
    assert_eq!(eval1("let p = \"^\\\\d+$\"\nmatches(\"123\", p)"), "true");
}

#[test]
fn s6_1_invalid_regex_literal_is_static() {
    static_error("\"runs?\"\nmatches(\"a\", \"(\")", "hql::invalid_regex");
    static_error(
        "[\"a\"] | filter(s => matches(s, r\"[\"))",
        "hql::invalid_regex",
    );
}

#[test]
fn s6_1_numbers() {
    assert_eq!(eval1("abs(-3)"), "3");
    assert_eq!(eval1("abs(-2.5)"), "2.5");
    assert_eq!(eval1("round(2.5)"), "3");
    assert_eq!(eval1("round(-2.5)"), "-3");
    assert_eq!(eval1("round(0.5)"), "1");
    assert_eq!(eval1("round(1.4)"), "1");
    assert_eq!(eval1("round(3)"), "3");
    assert_eq!(eval1("floor(2.7)"), "2");
    assert_eq!(eval1("floor(-2.5)"), "-3");
    assert_eq!(eval1("ceil(2.1)"), "3");
    assert_eq!(eval1("ceil(-2.1)"), "-2");
    assert_eq!(eval1("int(-2.7)"), "-2");
    assert_eq!(eval1("int(2.7)"), "2");
    assert_eq!(eval1("int(\"42\")"), "42");
    assert_eq!(eval1("float(2)"), "2.0");
    assert_eq!(eval1("string(12)"), "\"12\"");
    assert_eq!(eval1("string(1.5)"), "\"1.5\"");
}

#[test]
fn s6_1_records_and_results() {
    assert_eq!(eval1("keys({b: 1, a: 2})"), "[\"b\", \"a\"]");
    assert_eq!(eval1("values({b: 1, a: 2})"), "[1, 2]");
    assert_eq!(eval1("has({a: 1}, \"a\")"), "true");
    assert_eq!(eval1("has({a: 1}, \"b\")"), "false");
    assert_eq!(eval1("get({a: 1}, \"a\", 5)"), "1");
    assert_eq!(eval1("get({a: 1}, \"b\", 5)"), "5");
    assert_eq!(eval1("get(null, \"a\", 5)"), "5");
    assert_eq!(
        eval1("merge({a: 1, b: 2}, {b: 3, c: 4})"),
        "{a: 1, b: 3, c: 4}"
    );
    assert_eq!(eval1("ok(1)"), "ok(1)");
    assert_eq!(eval1("err(\"x\")"), "err(\"x\")");
    assert_eq!(
        eval1("[is_ok(ok(1)), is_ok(err(1)), is_err(err(1)), is_err(ok(1))]"),
        "[true, false, true, false]"
    );
}

#[test]
fn s6_1_builtin_input_of_a_known_wrong_type_is_static() {
    let err = static_error("\"runs?\"\nkeys([1])", "hql::argument_type");
    assert!(err.contains("`keys` expects a record, not a List"), "{err}");
    static_error("\"runs?\"\n{a: 1} | count()", "hql::argument_type");
    static_error("\"runs?\"\nabs([1])", "hql::argument_type");
}

#[test]
fn s6_1_validate_of_a_value_that_is_not_a_type() {
    let err = static_error("let t = 5\n\"runs?\"\n[1] | validate(t)", "hql::not_a_type");
    assert!(
        squash(&err).contains("`t` is not a type: it is an Int"),
        "{err}"
    );
    // A `let` holding a type is one.
    let ok = ok_out(
        "type T : Data = { a: Int }\nlet t = T\n[{a: 1}] | validate(t) | count()",
        &[],
    );
    assert_eq!(ok, "1\n");
}

// ======================================================================
// §7 Static checking
// ======================================================================

#[test]
fn s7_nothing_runs_when_static_error_exists() {
    let (out, err, status) = run("\"first\"\n[1] | cout()\n\"last\"", &[]);
    assert_eq!(status, 2);
    assert_eq!(out, "");
    assert!(err.contains("hql::unknown_name"), "{err}");
    assert!(squash(&err).contains("did you mean `count`"), "{err}");
}

#[test]
fn s7_static_error_late_in_file_stops_early_statements() {
    let (out, _, status) = run("\"first\"\ncheck c: 1 > 2\nlet y = zzz_undefined", &[]);
    assert_eq!(status, 2);
    assert_eq!(out, "");
}

#[test]
fn s7_multiple_syntax_errors_all_reported() {
    let (out, err, status) = run("let = 1\n\"ok\"\nlet = 2\n(1 +\n", &[]);
    assert_eq!(status, 2);
    assert_eq!(out, "");
    assert!(
        err.matches("hql::parse").count() >= 3,
        "every recoverable syntax error: {err}"
    );
}

#[test]
fn s7_multiple_check_errors_all_reported() {
    let (_, err, status) = run("foo_a\nfoo_b\n", &[]);
    assert_eq!(status, 2);
    assert!(err.contains("foo_a") && err.contains("foo_b"), "{err}");
    assert_eq!(err.matches("hql::unknown_name").count(), 2, "{err}");
}

#[test]
fn s7_syntax_errors_do_not_hide_the_other_statements_static_errors() {
    let (out, err, status) = run("\"runs?\"\nlet = 1\ncount_x([1])\n", &[]);
    assert_eq!((out.as_str(), status), ("", 2), "{err}");
    let (parse, unknown) = (err.find("hql::parse"), err.find("hql::unknown_name"));
    assert!(parse.is_some() && unknown.is_some(), "{err}");
    assert!(parse < unknown, "in the order of the text: {err}");
}

#[test]
fn s7_what_a_broken_statement_declares_is_not_unknown() {
    let src = "let x = 1 2\nfn f(a) = a | 3\ntype T : Data = { a Int }\n\"runs?\"\nx + 1\n[1] | validate(T)\nf(1)\nzz";
    let (out, err, status) = run(src, &[]);
    assert_eq!((out.as_str(), status), ("", 2), "{err}");
    assert_eq!(err.matches("hql::parse").count(), 2, "{err}");
    assert_eq!(err.matches("hql::pipe").count(), 1, "{err}");
    assert_eq!(err.matches("hql::unknown_name").count(), 1, "{err}");
    assert!(err.contains("unknown name `zz`"), "{err}");
}

#[test]
fn s7_checker_errors_do_not_hide_type_flow_errors() {
    let src = "type O : TypeContract = {\n amount: Float\n note?: String\n require amount > 0 and note != \"\"\n}\n\"runs?\"\n[{amount: 1.0}] | validate(O) | oks() | map(o => o.amout)";
    let err = static_error(src, "hql::optional_without_mark");
    assert!(err.contains("hql::unknown_field"), "{err}");
    assert!(squash(&err).contains("did you mean `amount`"), "{err}");
}

#[test]
fn s7_an_ancestors_errors_are_reported_once() {
    let src = "type P : DataContract = {\n a: Int\n b?: Int\n require zz > 0\n require b > 0\n}\ntype C : P = { c: Int }\ntype D : P = { d: Int }\n\"runs?\"";
    let err = static_error(src, "hql::unknown_name");
    assert_eq!(err.matches("hql::unknown_name").count(), 1, "{err}");
    assert_eq!(
        err.matches("hql::optional_without_mark").count(),
        1,
        "{err}"
    );
}

#[test]
fn s7_unknown_names_get_did_you_mean_everywhere() {
    let decls = "type T : Data = { amount: Int }\nfn double(x) = x * 2\n";
    for (src, code, suggestion) in [
        ("[{amount: 1}] | validate(Tt)", "hql::unknown_name", "`T`"),
        ("Tt { amount: 1 }", "hql::unknown_name", "`T`"),
        ("type U : Data = { a: Strng }", "hql::unknown_name", "`String`"),
        ("type U : Data = { a: string }", "hql::unknown_name", "`String`"),
        ("type U : Data = { a: Lst[Int] }", "hql::unknown_name", "`List`"),
        ("type U : Tt = { b: Int }", "hql::unknown_name", "`T`"),
        ("dobule(1)", "hql::unknown_name", "`double`"),
        ("[1] | mapp(x => x)", "hql::unknown_name", "`map`"),
        ("COUNT([1])", "hql::unknown_name", "`count`"),
        ("source(file(\"a.jsonl\"), Jsn)", "hql::unknown_name", "`Json`"),
        (
            "type U : DataContract = {\n a: String\n validate a with is_emial\n}",
            "hql::unknown_name",
            "`is_email`",
        ),
        (
            "type U : DataContract = {\n amount: Int\n unique amout\n}",
            "hql::unknown_field",
            "`amount`",
        ),
        (
            "type U : Type = { amount: Int }\n[{amount: 1}] | validate(U) | oks() | map(u => u.amout)",
            "hql::unknown_field",
            "`amount`",
        ),
        ("count([1], bye: 1)", "hql::unknown_named_argument", ""),
        ("route([1], ok: \"a\", er: \"b\")", "hql::unknown_named_argument", "`err`"),
    ] {
        let err = static_error(&format!("{decls}\"runs?\"\n{src}"), code);
        assert!(
            suggestion.is_empty() || squash(&err).contains(&format!("did you mean {suggestion}")),
            "{src}: {err}"
        );
    }
}

// Name resolution happens once, in the checker; type flow reads what it
// decided. A parameter shadows a function of the same name, so a call of the
// parameter is not checked against the function's signature.
#[test]
fn s7_a_parameter_shadows_a_function_for_type_flow_too() {
    let src = "fn f(n: Int) -> Int = n + 1\nlet apply = f => f(\"x\")\napply(s => upper(s))";
    assert_eq!(eval1(src), "\"X\"");
    let src = "fn f(n: Int) -> Int = n + 1\nfn g(f) = f(\"x\")\ng(s => upper(s))";
    assert_eq!(eval1(src), "\"X\"");
    // Where the name is the function, its signature holds.
    let err = static_error(
        "fn f(n: Int) -> Int = n + 1\nlet apply = g => f(\"x\")\n1",
        "hql::argument_type",
    );
    assert!(
        squash(&err).contains("`f` expects an Int, not a String"),
        "{err}"
    );
}

#[test]
fn s7_a_parameter_shadows_a_builtin_for_type_flow_too() {
    assert_eq!(eval1("let twice = count => count * 2\ntwice(21)"), "42");
    assert_eq!(eval1("fn up(len) = upper(len)\nup(\"a\")"), "\"A\"");
}

#[test]
fn s7_a_let_is_typed_as_the_declaration_a_use_sees() {
    // The use on line 2 sees the first `x`, an Int; the last sees the String.
    assert_eq!(
        eval1("let x = 1\nlet y = x + 1\nlet x = \"s\"\n[y, x]"),
        "[2, \"s\"]"
    );
    let err = static_error("let x = 1\nlet x = \"s\"\nx + 1", "hql::");
    assert!(err.contains("String"), "{err}");
}

#[test]
fn s7_function_annotations_are_types_the_checker_knows() {
    let err = static_error("fn f(n: Amount) -> Int = 1\nf(1)", "hql::unknown_name");
    assert!(err.contains("Amount"), "{err}");
    // An annotated record-typed parameter is followed into the body.
    let src = "type P : TypeContract = { name: String }\nfn f(p: P) = p.nmae\n1";
    let err = static_error(src, "hql::unknown_field");
    assert!(squash(&err).contains("did you mean `name`"), "{err}");
    // A union with a map is a type the checker compiles: the program runs.
    assert_eq!(eval1("fn f(m: Map[Int] | Null) = m\nf(null)"), "null");
}

#[test]
fn s7_unknown_type_names_suggest_what_other_languages_call_them() {
    let cases = [
        ("type T : Data = { a: Integer }\n1", "`Int`"),
        ("type T : Data = { a: Boolean }\n1", "`Bool`"),
        ("type T : Data = { a: Array[Int] }\n1", "`List`"),
        ("type T : Data = { a: Dict[Int] }\n1", "`Map`"),
        ("source(file(\"x.jsonl\"), JSON)", "`Json`"),
        ("source(file(\"x.jsonl\"), jsonl)", "`Json`"),
        ("type T : Data = { a: Int }\n[{a: 1}] | validate(Tt)", "`T`"),
    ];
    for (src, meant) in cases {
        let err = static_error(src, "hql::unknown_name");
        assert!(
            squash(&err).contains(&format!("did you mean {meant}")),
            "{src}: {err}"
        );
    }
}

#[test]
fn s7_an_unknown_type_name_is_one_error_not_two() {
    // Its field is not taken to admit null (as `Any` would), so the rule
    // reading it without `?` is not a second error.
    let src = "type T : DataContract = {\n  a: Strng\n  require a != \"x\"\n}\n1";
    let err = static_error(src, "hql::unknown_name");
    assert_eq!(err.matches("hql::").count(), 1, "{err}");
}

// ======================================================================
// §8 Printing
// ======================================================================

#[test]
fn s8_floats() {
    assert_eq!(eval1("2.0"), "2.0");
    assert_eq!(eval1("2.50"), "2.5");
    assert_eq!(eval1("0.001"), "0.001");
    assert_eq!(eval1("0.0001"), "0.0001");
    assert_eq!(eval1("0.00001"), "1e-5");
    assert_eq!(eval1("1e16"), "1e16");
    assert_eq!(eval1("1e15"), "1000000000000000.0");
    assert_eq!(eval1("1.5e300"), "1.5e300");
    assert_eq!(eval1("0.1 + 0.2"), "0.30000000000000004");
    assert_eq!(eval1("[0.0] | map(z => z * (-1.0)) | first()"), "-0.0");
    assert_eq!(eval1("(-0.0)"), "-0.0");
    assert_eq!(eval1("(-2.5)"), "-2.5");
    assert_eq!(eval1("1.0 / 3"), "0.3333333333333333");
}

#[test]
fn s8_strings_json_escapes() {
    assert_eq!(eval1(r#""tab\there""#), r#""tab\there""#);
    assert_eq!(eval1(r#""q\"uote""#), r#""q\"uote""#);
    assert_eq!(eval1(r#""\u{1}""#), r#""\u0001""#);
    assert_eq!(eval1(r#""é😀""#), r#""é😀""#);
}

#[test]
fn s8_lists_records_quoted_keys() {
    assert_eq!(
        eval1("[1, [2, 3], {a: null, b: true}, false]"),
        "[1, [2, 3], {a: null, b: true}, false]"
    );
    assert_eq!(
        eval1("{\"b c\": 1, a: 2, \"1x\": 3, _ok: 4, \"\": 5}"),
        "{\"b c\": 1, a: 2, \"1x\": 3, _ok: 4, \"\": 5}"
    );
    assert_eq!(eval1("[]"), "[]");
    assert_eq!(eval1("{}"), "{}");
}

#[test]
fn s8_results_functions_types() {
    assert_eq!(eval1("ok({a: 1})"), "ok({a: 1})");
    assert_eq!(eval1("err([1])"), "err([1])");
    assert_eq!(eval1("fn describe(x) = x\ndescribe"), "<fn describe>");
    assert_eq!(eval1("count"), "<fn count>");
    assert_eq!(
        eval1("type Sighting : Data = { a: Int }\nSighting"),
        "Sighting"
    );
    assert_eq!(eval1("null"), "null");
    assert_eq!(eval1("[true, false]"), "[true, false]");
}

#[test]
fn s8_stream_prints_as_list() {
    assert_eq!(
        ok_out(
            "source(file(\"s.jsonl\"), Json)",
            &[("s.jsonl", "{\"a\": 1}\n{\"a\": 2}\n")]
        ),
        "[{a: 1}, {a: 2}]\n"
    );
    assert_eq!(
        ok_out("source(file(\"s.jsonl\"), Json)", &[("s.jsonl", "")]),
        "[]\n"
    );
}

fn json_lines(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

#[test]
fn s8_format_json_stream_as_json_lines() {
    let (out, err, status) = run_json(
        "source(file(\"s.jsonl\"), Json) | map(r => r.a)\n",
        &[("s.jsonl", "{\"a\": 1}\n{\"a\": \"x\"}\n{\"a\": [true]}\n")],
    );
    assert_eq!(status, 0, "{err}");
    assert_eq!(
        json_lines(&out),
        vec![
            serde_json::json!(1),
            serde_json::json!("x"),
            serde_json::json!([true])
        ]
    );
}

#[test]
fn s8_format_json_results_and_values() {
    let (out, err, status) = run_json("ok({a: 1})\nerr(2)\n[1, null]\n{\"b c\": 1.5}\n\"s\"", &[]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(
        json_lines(&out),
        vec![
            serde_json::json!({"ok": {"a": 1}}),
            serde_json::json!({"err": 2}),
            serde_json::json!([1, null]),
            serde_json::json!({"b c": 1.5}),
            serde_json::json!("s"),
        ]
    );
}

#[test]
fn s8_format_json_validate_stream() {
    let (out, err, status) = run_json(
        "type T : Data = { a: Int }\nsource(file(\"s.jsonl\"), Json) | validate(T)",
        &[("s.jsonl", "{\"a\": 1}\n{\"a\": \"x\"}\n")],
    );
    assert_eq!(status, 0, "{err}");
    let v = json_lines(&out);
    assert_eq!(v.len(), 2, "{out}");
    assert_eq!(v[0], serde_json::json!({"ok": {"a": 1}}));
    assert_eq!(v[1]["err"]["type"], serde_json::json!("T"));
    assert_eq!(
        v[1]["err"]["origin"],
        serde_json::json!({"source": "s.jsonl", "line": 2})
    );
    assert_eq!(
        v[1]["err"]["failures"][0]["rule"],
        serde_json::json!("T.a.type")
    );
}

#[test]
fn s3_data_numbers_keep_text_through_builtins() {
    let data = "{\"a\": 1.50, \"b\": 12345678901234567890123, \"c\": 12345678901234567890122}\n";
    let src = "let s = source(file(\"d.jsonl\"), Json)\ns | map(r => fmt(\"{} {}\", r.a, r.b))\ns | map(r => [r.b, r.c] | max())\ns | map(r => [r.b, r.c] | sort())";
    assert_eq!(
        ok_out(src, &[("d.jsonl", data)]),
        "[\"1.50 12345678901234567890123\"]\n[12345678901234567890123]\n[[12345678901234567890122, 12345678901234567890123]]\n"
    );
    runtime_error(
        "source(file(\"d.jsonl\"), Json) | map(r => [r.b, r.c] | sum())",
        &[("d.jsonl", data)],
    );
}

// ======================================================================
// Beyond the core (later issue: full type system). Ignored when failing.
// ======================================================================

#[test]
fn s4_8_rule_using_self_reads_every_field() {
    let t = "type T : DataContract = {\n a: Int\n b: Int\n require r: len(keys(self)) > 100\n}";
    let src = format!("{t}\n[{{a: \"x\", b: 1}}, {{b: 2, a: 1}}] | validate(T) | errs() | map(e => e.failures | map(f => [f.rule, f.fields | sort()]))");
    // First value: `a` failed, so the rule (which reads every field) is skipped.
    assert_eq!(
        ok_out(&src, &[]),
        "[[[\"T.a.type\", [\"a\"]]], [[\"T.r\", [\"a\", \"b\"]]]]\n"
    );
}

#[test]
fn s4_9_self_index_reads_one_field() {
    let t = "type T : DataContract = {\n b: Int\n \"US Gross\": Int\n require self[\"US Gross\"] > b\n}";
    let src = format!("{t}\n[{{\"US Gross\": 1, b: 2}}] | validate(T) | errs() | map(e => e.failures | map(f => f.fields))");
    assert_eq!(ok_out(&src, &[]), "[[[\"US Gross\", \"b\"]]]\n");
}

#[test]
fn s4_8_rule_reading_failed_nested_field_not_evaluated() {
    let t =
        "type T : DataContract = {\n address: { city: String }\n require address.city != \"\"\n}";
    let src = format!("{t}\n[{{address: {{}}}}, {{address: {{city: \"\"}}}}] | validate(T) | errs() | map(e => e.failures | map(f => f.rule))");
    assert_eq!(
        ok_out(&src, &[]),
        "[[\"T.address.city.missing\"], [\"T.address.city != \\\"\\\"\"]]\n"
    );
}

#[test]
fn s2_more_continuations() {
    assert_eq!(eval1("let f = x\n=> x * 3\nf(2)"), "6");
    assert_eq!(eval1("7\n% 4"), "3");
    assert_eq!(eval1("let x =\n5\nx"), "5");
    assert_eq!(eval1("{a: 1}.b? ??\n3"), "3");
    let (_, err, status) = run("check c:\n1 > 2", &[]);
    assert_eq!(status, 1, "{err}");
}

#[test]
fn s6_streams_are_lazy() {
    let data = "1\n0\n";
    assert_eq!(
        ok_out(
            "source(file(\"z.jsonl\"), Json) | map(x => 1 / x) | take(1)",
            &[("z.jsonl", data)]
        ),
        "[1.0]\n"
    );
    assert_eq!(
        ok_out(
            "source(file(\"z.jsonl\"), Json) | map(x => 1 / x) | first()",
            &[("z.jsonl", data)]
        ),
        "1.0\n"
    );
}

#[test]
fn s6_check_reports_string_operands_in_hql_form() {
    let (_, err, status) = run("check c: \"a\" == \"b\"", &[]);
    assert_eq!(status, 1);
    assert!(err.contains("left \"a\", right \"b\""), "{err}");
}

#[test]
fn s6_1_json_values_are_never_converted() {
    let src = "type T : Data = { n: Int, b: Bool, f: Float }\nsource(file(\"c.jsonl\"), Json) | validate(T) | errs() | map(e => e.failures | map(f => f.rule))";
    assert_eq!(
        ok_out(
            src,
            &[(
                "c.jsonl",
                "{\"n\": \"5\", \"b\": \"true\", \"f\": \"1.5\"}\n"
            )]
        ),
        "[[\"T.n.type\", \"T.b.type\", \"T.f.type\"]]\n"
    );
}

#[test]
fn s4_9_json_array_element_lines_same_line_as_bracket() {
    let src = "type T : Data = { a: Int }\nsource(file(\"arr.json\"), Json) | validate(T) | errs() | map(e => e.origin.line)";
    assert_eq!(
        ok_out(src, &[("arr.json", "[{\"a\": \"x\"},\n{\"a\": \"y\"}]")]),
        "[1, 2]\n"
    );
}

#[test]
fn s3_data_negative_zero_and_huge_float_keep_text() {
    let out = ok_out(
        "source(file(\"nz.jsonl\"), Json)",
        &[("nz.jsonl", "{\"a\": -0.0, \"b\": 1e400, \"c\": 2.50e1}\n")],
    );
    assert_eq!(out, "[{a: -0.0, b: 1e400, c: 2.50e1}]\n");
}

#[test]
fn s6_1_conversion_errors_are_runtime_errors() {
    runtime_error("int(\"abc\")", &[]);
    runtime_error("round(1e300)", &[]);
}

// ======================================================================
// Beyond the core: imports, inheritance, refinement types & stdlib, unique
// keys, construction, CSV, write/route, configured sources, type flow.
// These belong to the "full type system" issue; a failing one is ignored.
// ======================================================================

#[test]
fn ext_s4_6_inheritance_rules_and_fields() {
    let src = "type Sighting : DataContract = {\n species: String\n seen: String\n require seen != \"noon\"\n}\ntype OwlSighting : Sighting = {\n wingspan?: Float\n require owl: contains(species, \"owl\")\n}\n[{species: \"wren\", seen: \"noon\", extra: 1}, {species: \"owl\", seen: \"dusk\"}] | validate(OwlSighting) | map(r => if is_ok(r) then \"ok\" else [[r] | errs() | first() | get(\"type\"), [r] | errs() | first() | get(\"failures\") | map(f => f.rule)])";
    assert_eq!(
        ok_out(src, &[]),
        "[[\"OwlSighting\", [\"Sighting.seen != \\\"noon\\\"\", \"OwlSighting.owl\"]], \"ok\"]\n"
    );
}

#[test]
fn ext_s4_6_inheritance_keeps_parent_kind() {
    let src = "type P : Type = { a: Int }\ntype C : P = { b?: Int }\n[{a: 1, z: 2}] | validate(C) | errs() | map(e => e.failures | map(f => f.rule))";
    assert_eq!(ok_out(src, &[]), "[[\"C.z.extra\"]]\n");
}

#[test]
fn ext_s4_6_redeclared_field_cycle_and_rules_under_plain_parent_are_static() {
    static_error(
        "type P : DataContract = { a: Int }\ntype C : P = { a: String }\n1",
        "hql::redeclared_field",
    );
    static_error(
        "type A : B = { a: Int }\ntype B : A = { b: Int }\n1",
        "hql::inheritance_cycle",
    );
    static_error(
        "type P : Data = { a: Int }\ntype C : P = { b: Int\n require b > 0 }\n1",
        "hql::member_not_allowed",
    );
}

#[test]
fn ext_s4_5_refinement_type_rule_identity_and_path() {
    let src = "type Email = String require well_formed: matches(self, r\"^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$\")\ntype T : Data = { email: Email }\n[{email: \"a@b.ch\"}, {email: \"nope\"}, {email: 5}] | validate(T) | map(r => [r] | errs() | map(e => e.failures | map(f => [f.rule, f.kind, f.path])))";
    assert_eq!(
        ok_out(src, &[]),
        "[[], [[[\"Email.well_formed\", \"require\", \"email\"]]], [[[\"T.email.type\", \"type\", \"email\"]]]]\n"
    );
}

/// A field of a refinement or alias type whose value has the wrong base
/// type fails as the field, on every path: a value built by the program,
/// the line check of a file, and the counting of `report()`.
#[test]
fn s4_7_a_field_of_a_refinement_with_the_wrong_base_type_fails_as_the_field() {
    let types = "type Sku = String require well_formed: starts_with(self, \"S-\")\ntype Code = String\ntype T : Data = { sku: Sku, alt?: List[Sku], code?: Code }";
    let rules = "map(e => e.failures | map(f => [f.rule, f.path, f.message]))";
    let expected = "[[[\"T.sku.type\", \"sku\", \"field sku must be Sku (String)\"]], [[\"T.alt.type\", \"alt[1]\", \"field alt[1] must be Sku (String)\"]], [[\"T.code.type\", \"code\", \"field code must be String\"]]]\n";
    let values = "[{sku: 5}, {sku: \"S-1\", alt: [\"S-2\", 3]}, {sku: \"S-1\", code: 4}]";
    assert_eq!(
        ok_out(
            &format!("{types}\n{values} | validate(T) | errs() | {rules}"),
            &[]
        ),
        expected
    );
    let lines = "{\"sku\": 5}\n{\"sku\": \"S-1\", \"alt\": [\"S-2\", 3]}\n{\"sku\": \"S-1\", \"code\": 4}\n";
    let files = [("in.jsonl", lines)];
    assert_eq!(
        ok_out(
            &format!("{types}\nsource(file(\"in.jsonl\"), Json) | validate(T) | errs() | {rules}"),
            &files
        ),
        expected
    );
    assert_eq!(
        ok_out(&format!("{types}\nsource(file(\"in.jsonl\"), Json) | validate(T) | report() | get(\"by_rule\") | map(r => r.rule)"), &files),
        "[\"T.alt.type\", \"T.code.type\", \"T.sku.type\"]\n"
    );
    // Validated on its own, the value fails as the refinement.
    assert_eq!(
        ok_out("type Sku = String require starts_with(self, \"S-\")\n[5] | validate(Sku) | errs() | map(e => e.failures[0].rule)", &[]),
        "[\"Sku.type\"]\n"
    );
}

#[test]
fn s4_9_a_broken_rule_message_is_exactly_rule_identity_does_not_hold() {
    let src = "type Sku = String require well_formed: starts_with(self, \"S-\")\ntype T : DataContract = {\n sku: Sku\n n: Int\n require n > 0\n require named: n < 10 else \"n is too big\"\n}\n[{sku: \"x\", n: 0}, {sku: \"S-1\", n: 20}] | validate(T) | errs() | map(e => e.failures | map(f => f.message))";
    assert_eq!(
        ok_out(src, &[]),
        "[[\"rule Sku.well_formed does not hold\", \"rule T.n > 0 does not hold\"], [\"n is too big\"]]\n"
    );
}

#[test]
fn s4_7_an_and_inside_an_or_is_parenthesised_in_identities() {
    let t = "type T : DataContract = {\n a: Int\n b: Int\n require a > 0 or a < -5 and b > 0\n require (a > 1 and b > 1) or b == 7\n}";
    assert_eq!(
        rules_of(t, "[{a: -1, b: 1}]"),
        "[[\"T.a > 0 or (a < -5 and b > 0)\", \"T.(a > 1 and b > 1) or b == 7\"]]\n"
    );
}

#[test]
fn ext_s4_5_refinement_with_newline_before_require() {
    let src = "type Percent = Float\n  require self >= 0\n  require self <= 100\n[5, 150.0, (-1)] | validate(Percent) | map(r => is_ok(r))";
    assert_eq!(ok_out(src, &[]), "[true, false, false]\n");
}

#[test]
fn ext_s4_5_stdlib_types_and_functions() {
    let src = "type T : Data = { e: Email, d: Date, c: CountryCode, cur: CurrencyCode, u: Uuid, n: NonEmpty }\n[{e: \"a@b.ch\", d: \"2024-02-29\", c: \"CH\", cur: \"CHF\", u: \"123e4567-e89b-12d3-a456-426614174000\", n: \"x\"}, {e: \"x\", d: \"2023-02-30\", c: \"ZZ\", cur: \"ZZZ\", u: \"nope\", n: \"\"}] | validate(T) | map(r => is_ok(r))\n[is_country_code(\"CH\"), is_country_code(\"XX\")]";
    assert_eq!(ok_out(src, &[]), "[true, false]\n[true, false]\n");
}

#[test]
fn ext_s4_3_unique_keys() {
    let src = "type T : DataContract = {\n id: Int\n a: Int\n require a > 0\n unique id\n}\n[{id: 1, a: 0}, {id: 1, a: 1}, {id: 1, a: 2}, {id: 2, a: 1}] | validate(T) | map(r => [r] | errs() | map(e => e.failures | map(f => [f.rule, f.kind])))";
    assert_eq!(
        ok_out(src, &[]),
        "[[[[\"T.a > 0\", \"require\"]]], [], [[[\"T.id.unique\", \"unique\"]]], []]\n"
    );
}

#[test]
fn ext_s4_3_compound_unique_key_and_absent_keys() {
    let src = "type T : DataContract = {\n a?: Int\n b: Int\n unique (a, b)\n}\n[{a: 1, b: 1}, {a: 1, b: 2}, {a: 1, b: 1}, {b: 1}, {b: 1}] | validate(T) | map(r => [r] | errs() | map(e => e.failures | map(f => f.rule)))";
    assert_eq!(ok_out(src, &[]), "[[], [], [[\"T.a+b.unique\"]], [], []]\n");
}

#[test]
fn ext_s4_10_construction() {
    let src = "type Sighting : DataContract = {\n species: String\n seen: String\n require seen != \"noon\"\n}\nSighting { species: \"owl\", seen: \"dusk\" }";
    assert_eq!(ok_out(src, &[]), "{species: \"owl\", seen: \"dusk\"}\n");
}

#[test]
fn ext_s4_10_construction_breaking_rule_is_runtime_error() {
    let src = "type Sighting : DataContract = {\n species: String\n seen: String\n require not_noon: seen != \"noon\"\n}\n\"before\"\nSighting { species: \"owl\", seen: \"noon\" }";
    let (out, err) = runtime_error(src, &[]);
    assert_eq!(out, "\"before\"\n");
    assert!(err.contains("Sighting.not_noon"), "{err}");
}

#[test]
fn ext_s6_1_csv_decoding() {
    let csv = "n,f,b,s,o\n7,7,true,x,\n-3,2.5e1,false,,1\n";
    let src = "type T : Data = { n: Int, f: Float, b: Bool, s?: String, o?: Int }\nsource(file(\"a.csv\"), Csv) | validate(T)";
    assert_eq!(
        ok_out(src, &[("a.csv", csv)]),
        "[ok({n: 7, f: 7.0, b: true, s: \"x\"}), ok({n: -3, f: 25.0, b: false, o: 1})]\n"
    );
}

#[test]
fn ext_s6_1_csv_origin_header_is_line_1() {
    let csv = "n\n1\nx\n";
    let src = "type T : Data = { n: Int }\nsource(file(\"a.csv\"), Csv) | validate(T) | errs() | map(e => e.origin)";
    assert_eq!(
        ok_out(src, &[("a.csv", csv)]),
        "[{source: \"a.csv\", line: 3}]\n"
    );
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hql-spec-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn ext_s6_1_write_returns_count_and_writes_jsonl() {
    let (run, files) = run_writing("[{a: 1}, {a: 2}] | write(file(\"out.jsonl\"))", &[]);
    assert_eq!((run.out.as_str(), run.status), ("2\n", 0), "{}", run.err);
    let written = &files["out.jsonl"];
    let v: Vec<serde_json::Value> = written
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        v,
        vec![serde_json::json!({"a": 1}), serde_json::json!({"a": 2})]
    );
}

#[test]
fn ext_s6_1_route_ok_and_err() {
    let src = "type T : Data = { a: Int }\n[{a: 1}, {a: \"x\"}, {a: 3}] | validate(T) | route(ok: file(\"ok.jsonl\"), err: file(\"dlq.jsonl\"))";
    let (run, files) = run_writing(src, &[]);
    assert_eq!(
        (run.out.as_str(), run.status),
        ("{total: 3, ok: 2, err: 1, warned: 0, by_rule: [{rule: \"T.a.type\", kind: \"type\", count: 1}]}\n", 0),
        "{}",
        run.err
    );
    assert_eq!(files["ok.jsonl"].lines().count(), 2);
    let dlq = &files["dlq.jsonl"];
    let rec: serde_json::Value = serde_json::from_str(dlq.lines().next().unwrap()).unwrap();
    assert_eq!(rec["type"], serde_json::json!("T"));
}

#[test]
fn ext_s5_named_args_route_repeated_is_static() {
    static_error(
        "[1] | route(ok: file(\"a\"), ok: file(\"b\"))",
        "hql::repeated_named_argument",
    );
}

#[test]
fn ext_s6_1_configured_source_by_id() {
    let dir = temp_dir("config");
    std::fs::write(
        dir.join("hql.toml"),
        "[sources.orders]\nfile = \"orders.jsonl\"\nformat = \"json\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("orders.jsonl"), "{\"a\": 1}\n{\"a\": 2}\n").unwrap();
    std::fs::write(dir.join("p.hql"), "source(\"orders\") | count()\n").unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", "p.hql"])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("hql runs");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "2\n",
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn ext_s6_import() {
    let files = [("contracts/orders.hql", "type Order : Data = { a: Int }\n")];
    let src = "import \"contracts/orders.hql\"\n{a: 1} | validate(Order)\n";
    assert_eq!(ok_out(src, &files), "ok({a: 1})\n");
}

#[test]
fn ext_s7_types_flow_through_pipelines() {
    let src = "type Sighting : TypeContract = { species: String, seen: String }\n\"runs?\"\nsource(file(\"s.jsonl\"), Json) | validate(Sighting) | oks() | map(s => s.speceis)";
    let (out, err, status) = run(src, &[("s.jsonl", "")]);
    assert_eq!(status, 2, "{err}");
    assert_eq!(out, "");
    assert!(squash(&err).contains("species"), "did you mean hint: {err}");
}

#[test]
fn ext_s5_missing_field_on_closed_type_is_static() {
    let src = "type T : Type = { species: String }\n[{species: \"x\"}] | validate(T) | unwrap() | map(s => s.speceis)";
    let (_, err, status) = run(src, &[]);
    assert_eq!(status, 2, "{err}");
    assert!(squash(&err).contains("did you mean `species`"), "{err}");
}

#[test]
fn ext_s7_static_type_error_in_comparison() {
    static_error("\"runs?\"\n1 < \"a\"", "hql::");
}

// §4.8 step 2 also holds for nested records: a nested type's defaults are
// filled in the value that `validate` gives back, at every depth.
#[test]
fn s4_8_nested_defaults_are_filled() {
    let src = r#"type Address : DataContract = { city: String, country: String = "CH" }
type Item : TypeContract = { sku: String, qty: Int = 1 }
type Cart : DataContract = {
    address: Address
    items: List[Item]
    meta: { source: String = "web" }
}
[{address: {city: "Bern"}, items: [{sku: "a"}, {sku: "b", qty: 3}], meta: {}}] | validate(Cart) | oks()
"#;
    assert_eq!(
        ok_out(src, &[]),
        "[{address: {city: \"Bern\", country: \"CH\"}, items: [{sku: \"a\", qty: 1}, {sku: \"b\", qty: 3}], meta: {source: \"web\"}}]\n"
    );
}

// §4.9 paths: a map's value under a key that is not a name is written with
// brackets, as a record literal would quote it.
#[test]
fn s4_9_map_paths_quote_odd_keys() {
    let src = r#"type T : Data = { m: Map[Int] }
[{m: {"odd key": "x", fine: "y"}}] | validate(T) | errs() | map(e => e.failures | map(f => f.path) | collect())
"#;
    assert_eq!(ok_out(src, &[]), "[[\"m[\\\"odd key\\\"]\", \"m.fine\"]]\n");
}

// §6.1 writing, through the in-memory host: the core writes through the
// host it is handed and commits when the run ends.

#[test]
fn s6_1_write_and_route_commit_through_the_host_when_the_run_ends() {
    let data = "{\"id\": 1}\n{\"id\": -2}\nnot json\n";
    let src = "type R : DataContract = { id: Int, require id > 0 }\n\
               let rs = source(file(\"orders.jsonl\"), Json) | validate(R)\n\
               rs | oks() | write(file(\"ok.json\"))\n\
               rs | route(ok: file(\"ok.jsonl\"), err: file(\"dead.jsonl\"))\n";
    let (run, written) = run_writing(src, &[("orders.jsonl", data)]);
    assert_eq!(
        (run.status, run.out.as_str()),
        (0, "1\n{total: 3, ok: 1, err: 2, warned: 0, by_rule: [{rule: \"R.id > 0\", kind: \"require\", count: 1}, {rule: \"decode\", kind: \"decode\", count: 1}]}\n"),
        "{}",
        run.err
    );
    assert_eq!(written["ok.json"], "[\n{\"id\":1}\n]\n");
    assert_eq!(written["ok.jsonl"], "{\"id\":1}\n");
    let dead: Vec<&str> = written["dead.jsonl"].lines().collect();
    assert_eq!(dead.len(), 2);
    assert!(dead[0].starts_with(
        "{\"type\":\"R\",\"version\":null,\"origin\":{\"source\":\"orders.jsonl\",\"line\":2}"
    ));
    assert!(dead[1].contains("\"rule\":\"decode\""));
}

#[test]
fn s6_1_a_runtime_error_abandons_every_target_of_the_run() {
    let src = "[{a: 1}] | write(file(\"a.jsonl\"))\n1 / 0\n";
    let (run, written) = run_writing(src, &[]);
    assert_eq!(run.status, 1);
    assert!(written.is_empty(), "{written:?}");
}

#[test]
fn s6_1_a_failed_check_still_commits() {
    let src = "[{a: 1}] | write(file(\"a.jsonl\"))\ncheck \"never\": 1 > 2\n";
    let (run, written) = run_writing(src, &[]);
    assert_eq!(run.status, 1);
    assert_eq!(written["a.jsonl"], "{\"a\":1}\n");
}
