//! One test per static error kind (src/check/mod.rs `CheckError`, src/syntax/parser.rs
//! `ParseError`, src/syntax/lexer.rs `LexErrorKind`): exit status 2, nothing runs
//! (no stdout), the diagnostic code, and the help line where one exists.
//! Each program starts with a statement that would print if anything ran.

mod common;
use common::*;

/// Assert exit 2 / no stdout / `code`, and that the help line contains `help`.
#[track_caller]
fn static_with_help(src: &str, code: &str, help: &str) -> String {
    let err = static_error(src, code);
    let flat = squash(&err);
    assert!(flat.contains("help:"), "a help line is expected: {err}");
    assert!(flat.contains(help), "help should contain {help:?}: {err}");
    err
}

// ------------------------------------------------------------ lexer (hql::lex)

#[test]
fn lex_unexpected_char() {
    static_with_help(
        "\"runs?\"\nlet x = 1 # 2",
        "hql::lex",
        "comments start with `//`",
    );
}

#[test]
fn lex_unterminated_string() {
    static_with_help("\"runs?\"\nlet s = \"abc\n1", "hql::lex", "close it with");
}

#[test]
fn lex_bad_escape() {
    static_with_help("\"runs?\"\nlet s = \"\\d+\"", "hql::lex", "raw strings");
}

#[test]
fn lex_bad_escape_is_one_error_pointing_at_the_escape() {
    // The literal is still read to its closing quote: no second,
    // "unterminated string" error after the unknown escape.
    for (src, escape) in [
        ("\"runs?\"\nlet s = \"a\\qb\"\n1", "\\q"),
        ("\"runs?\"\nlet s = \"a\\u{zz\"\n1", "\\u{…}"),
        ("\"runs?\"\nlet s = \"a\\q\\w\"\n1", "\\q"),
    ] {
        let err = static_error(src, "hql::lex");
        assert_eq!(err.matches("hql::lex").count(), 1, "{err}");
        assert!(err.contains(&format!("unknown escape `{escape}`")), "{err}");
        assert!(!err.contains("unterminated"), "{err}");
        // The label sits under the backslash (column 11 of line 2).
        assert!(err.contains("test.hql:2:11"), "{err}");
    }
    // A backslash at the end of a line leaves the string unterminated: one
    // error, that one.
    let err = static_error("\"runs?\"\nlet s = \"a\\\n1", "hql::lex");
    assert_eq!(err.matches("hql::lex").count(), 1, "{err}");
    assert!(err.contains("unterminated string"), "{err}");
}

// ----------------------------------------------------------- parser

#[test]
fn parse_unexpected_token() {
    static_error("\"runs?\"\nlet = 3", "hql::parse");
}

#[test]
fn parse_unexpected_end() {
    static_error("\"runs?\"\ncount([1],", "hql::parse");
}

#[test]
fn parse_chained_comparison_help() {
    static_with_help("\"runs?\"\n1 < 2 < 3", "hql::parse", "chain");
}

#[test]
fn parse_pipe_not_call_arithmetic() {
    static_with_help(
        "\"runs?\"\n[1, 2] | count() + 1",
        "hql::pipe",
        "([1, 2] | count()) + 1",
    );
}

#[test]
fn parse_pipe_into_type() {
    static_with_help(
        "type Sighting : Data = { a: Int }\n\"runs?\"\n[{a: 1}] | Sighting",
        "hql::pipe",
        "validate(Sighting)",
    );
}

#[test]
fn parse_every_recoverable_error_reported() {
    let err = static_error("let = 1\n\"runs?\"\nlet = 2", "hql::parse");
    assert_eq!(err.matches("hql::parse").count(), 2, "{err}");
}

// ----------------------------------------------------------- checker

#[test]
fn check_unknown_name_did_you_mean() {
    let err = static_with_help(
        "\"runs?\"\ncount_x([1])",
        "hql::unknown_name",
        "did you mean",
    );
    assert!(squash(&err).contains("`count`"), "{err}");
}

#[test]
fn check_unknown_name_field_in_rule() {
    static_with_help(
        "type T : DataContract = {\n species: String\n require speceis != \"\"\n}\n\"runs?\"",
        "hql::unknown_name",
        "`species`",
    );
}

#[test]
fn check_member_not_allowed_data() {
    static_with_help(
        "type T : Data = {\n a: Int\n require a > 0\n}\n\"runs?\"",
        "hql::member_not_allowed",
        "DataContract",
    );
}

#[test]
fn check_member_not_allowed_type() {
    let err = static_with_help(
        "type T : Type = {\n a: Int = 1\n}\n\"runs?\"",
        "hql::member_not_allowed",
        "TypeContract",
    );
    assert!(!squash(&err).contains("DataContract"), "{err}");
}

#[test]
fn check_member_not_allowed_unique_and_check() {
    static_with_help(
        "fn pos(n) = n > 0\ntype T : Type = {\n a: Int\n validate a with pos\n unique a\n}\n\"runs?\"",
        "hql::member_not_allowed",
        "TypeContract",
    );
}

#[test]
fn check_optional_without_mark() {
    static_with_help(
        "type T : DataContract = {\n age?: Int\n require age > 3\n}\n\"runs?\"",
        "hql::optional_without_mark",
        "age?",
    );
}

#[test]
fn check_optional_without_mark_in_warn_and_nullable() {
    static_with_help(
        "type T : DataContract = {\n note: String | Null\n warn len(note) > 3\n}\n\"runs?\"",
        "hql::optional_without_mark",
        "note?",
    );
}

#[test]
fn check_default_type() {
    static_error(
        "type T : DataContract = {\n n: Int = \"x\"\n}\n\"runs?\"",
        "hql::default_type",
    );
}

#[test]
fn check_default_type_of_computed_default() {
    // §4.3: "a default must match its field's type (static)"; the checker
    // knows `"a" + "b"` is a String.
    static_error(
        "type T : DataContract = {\n n: Int = \"a\" + \"b\"\n}\n\"runs?\"",
        "hql::default_type",
    );
}

#[test]
fn check_default_type_nullable_ok() {
    let out = ok_out(
        "type T : DataContract = {\n n: Int | Null = null\n}\n{} | validate(T)",
        &[],
    );
    assert_eq!(out, "ok({n: null})\n");
}

#[test]
fn check_arity_builtin() {
    static_with_help("\"runs?\"\ncount([1], 2)", "hql::arity", "xs | f(a)");
}

#[test]
fn check_arity_pipe_counts_left_side() {
    static_error("\"runs?\"\n[1] | count([2])", "hql::arity");
}

#[test]
fn check_arity_user_function() {
    static_error("fn f(a, b) = a + b\n\"runs?\"\nf(1)", "hql::arity");
}

#[test]
fn check_unknown_named_argument() {
    static_error(
        "\"runs?\"\ncount([1], by: 1)",
        "hql::unknown_named_argument",
    );
}

#[test]
fn check_repeated_named_argument() {
    static_error(
        "\"runs?\"\ncount([1], by: 1, by: 2)",
        "hql::repeated_named_argument",
    );
}

#[test]
fn check_int_out_of_range() {
    static_with_help(
        "\"runs?\"\n9223372036854775808",
        "hql::int_out_of_range",
        "64 bits",
    );
    static_error(
        "\"runs?\"\n99999999999999999999999",
        "hql::int_out_of_range",
    );
}

#[test]
fn check_invalid_regex() {
    let err = static_error("\"runs?\"\nmatches(\"a\", \"(\")", "hql::invalid_regex");
    assert!(squash(&err).contains("help:"), "{err}");
}

#[test]
fn check_invalid_regex_in_rule() {
    static_error(
        "type T : DataContract = {\n s: String\n require matches(s, r\"[a-\")\n}\n\"runs?\"",
        "hql::invalid_regex",
    );
}

#[test]
fn check_duplicate_type() {
    static_with_help(
        "type A : Data = { a: Int }\ntype A : Data = { b: Int }\n\"runs?\"",
        "hql::duplicate",
        "another name",
    );
}

#[test]
fn check_duplicate_function() {
    static_error("fn f(x) = x\nfn f(y) = y\n\"runs?\"", "hql::duplicate");
}

#[test]
fn check_duplicate_field() {
    static_error(
        "type A : Data = {\n a: Int\n a: String\n}\n\"runs?\"",
        "hql::duplicate",
    );
}

#[test]
fn check_not_a_type() {
    static_with_help(
        "\"runs?\"\n[1] | validate(count)",
        "hql::not_a_type",
        "type",
    );
}

#[test]
fn check_inheritance_cycle() {
    static_error(
        "type A : B = { a: Int }\ntype B : A = { b: Int }\n\"runs?\"",
        "hql::inheritance_cycle",
    );
}

#[test]
fn check_redeclared_field() {
    static_with_help(
        "type P : DataContract = { a: Int }\ntype C : P = { a: String }\n\"runs?\"",
        "hql::redeclared_field",
        "inherits",
    );
}

#[test]
fn check_unknown_field_in_member() {
    static_with_help(
        "fn f(x) = true\ntype T : DataContract = {\n name: String\n validate nme with f\n}\n\"runs?\"",
        "hql::unknown_field",
        "did you mean `name`",
    );
}

#[test]
fn check_unknown_field_in_unique() {
    static_with_help(
        "type T : DataContract = {\n name: String\n unique nme\n}\n\"runs?\"",
        "hql::unknown_field",
        "`name`",
    );
}

#[test]
fn check_not_a_record_parent() {
    static_error(
        "type L = List[Int]\ntype A : L = { a: Int }\n\"runs?\"",
        "hql::not_a_record",
    );
}

#[test]
fn check_unknown_kind_or_parent() {
    static_with_help(
        "type A : DataContrat = { a: Int }\n\"runs?\"",
        "hql::unknown_name",
        "DataContract",
    );
}

#[test]
fn check_used_before_let() {
    static_with_help(
        "\"runs?\"\nlet y = x\nlet x = 1",
        "hql::used_before_let",
        "move the `let` above",
    );
}

#[test]
fn check_import_of_missing_file() {
    // `Unsupported` was the stopgap for `import`; whatever the kind, an
    // import that cannot be resolved is a static error and nothing runs.
    let (out, err, status) = run("import \"does/not/exist.hql\"\n\"runs?\"", &[]);
    assert_eq!(status, 2, "{err}");
    assert_eq!(out, "");
    assert!(err.contains("hql::"), "{err}");
}

#[test]
fn check_all_errors_reported_together() {
    let err = static_error(
        "type T : Data = {\n a: Int\n require a > 0\n}\n\"runs?\"\ncount_x([1])\ncount([1], 2)",
        "hql::member_not_allowed",
    );
    assert!(
        err.contains("hql::unknown_name") && err.contains("hql::arity"),
        "{err}"
    );
}

#[test]
fn warnings_alone_are_not_static_errors() {
    let (out, err, status) = run(
        "type T : DataContract = {\n a: Int\n f?: Bool\n require a? > 0\n require f?\n}\n\"runs\"",
        &[],
    );
    assert_eq!(status, 0, "{err}");
    assert_eq!(out, "\"runs\"\n");
    assert!(
        err.contains("hql::needless_mark") && err.contains("hql::presence_of_bool"),
        "{err}"
    );
}

// §7: a builtin given an argument of a type it cannot take is caught
// before running when the type is known.
#[test]
fn check_len_of_a_number_is_static() {
    let err = static_error("\"runs?\"\nlen(42)\n", "hql::argument_type");
    assert!(
        err.contains("`len` expects a String, a list or a record, not an Int"),
        "{err}"
    );
}

#[test]
fn check_optional_without_mark_nested() {
    static_with_help(
        "type T : DataContract = {\n addr: { city?: String }\n require addr.city != \"\"\n}\n\"runs?\"",
        "hql::optional_without_mark",
        "addr.city?",
    );
}

#[test]
fn check_duplicate_rule() {
    static_with_help(
        "type M : DataContract = {\n a: Int\n require r: a > 0\n require r: a > 1\n}\n\"runs?\"",
        "hql::duplicate_rule",
        "its own name",
    );
}

#[test]
fn check_duplicate_unnamed_rule() {
    static_with_help(
        "type M : DataContract = {\n a: Int\n require a > 0\n require a  >  0\n}\n\"runs?\"",
        "hql::duplicate_rule",
        "`require a > 0` is written twice",
    );
}

#[test]
fn check_operand_types_of_lists() {
    static_with_help(
        "\"runs?\"\n[[1] < [2]]",
        "hql::operand_types",
        "two numbers or two strings",
    );
}

#[test]
fn check_operand_types_of_in() {
    static_with_help("\"runs?\"\n[1 in 5]", "hql::operand_types", "membership");
}

#[test]
fn check_argument_type_of_a_record_builtin() {
    static_with_help("\"runs?\"\nkeys([1])", "hql::argument_type", "a record");
}

#[test]
fn check_argument_type_of_a_named_check() {
    static_with_help(
        "fn f(s: String) = s != \"\"\ntype T : DataContract = {\n e: Int\n validate e with f\n}\n\"runs?\"",
        "hql::argument_type",
        "give `f` a String",
    );
}

#[test]
fn check_arity_of_a_named_check() {
    static_error(
        "fn f(a, b) = a == b\ntype T : DataContract = {\n e: Int\n validate e with f\n}\n\"runs?\"",
        "hql::arity",
    );
}

#[test]
fn check_not_a_type_value() {
    let err = static_with_help(
        "let t = 5\n\"runs?\"\n[1] | validate(t)",
        "hql::not_a_type",
        "validate(T)",
    );
    assert!(squash(&err).contains("`t` is not a type"), "{err}");
}

#[test]
fn check_call_of_type() {
    static_with_help(
        "type T : Data = { a: Int }\n\"runs?\"\n[1, 2] | T()",
        "hql::call_of_type",
        "write `validate(T)`",
    );
}

#[test]
fn check_condition_type() {
    static_with_help("\"runs?\"\ncheck \"x\": 5", "hql::condition_type", "x?");
    static_with_help(
        "type T : DataContract = {\n a: Int\n require a\n}\n\"runs?\"",
        "hql::condition_type",
        "compare it",
    );
}

#[test]
fn check_default_breaks_a_rule() {
    static_with_help(
        "type T : DataContract = {\n e: Email = \"nope\"\n}\n\"runs?\"",
        "hql::default_type",
        "one that passes",
    );
}

#[test]
fn check_unknown_annotation() {
    static_with_help(
        "@foo(\"x\")\ntype T : Data = { a: Int }\n\"runs?\"",
        "hql::unknown_annotation",
        "@version",
    );
}

#[test]
fn check_repeated_annotation() {
    static_with_help(
        "@version(\"1\")\n@version(\"2\")\ntype T : Data = { a: Int }\n\"runs?\"",
        "hql::repeated_annotation",
        "keep one `@version(…)`",
    );
}

#[test]
fn check_type_cycle() {
    let err = static_with_help(
        "type A = B\ntype B = A\n\"runs?\"",
        "hql::type_cycle",
        "through a record's field",
    );
    assert!(squash(&err).contains("A → B → A"), "{err}");
}

#[test]
fn check_float_out_of_range() {
    static_with_help("\"runs?\"\n1e999", "hql::float_out_of_range", "1.8e308");
}

// ------------------------------------------- what a newcomer types (issue 31)

/// A program's stderr with miette's drawing squashed away.
fn squashed_err(src: &str) -> (String, String, i32) {
    let (out, err, status) = run(src, &[]);
    (out, squash(&err), status)
}

#[test]
fn lex_and_or_not_as_other_languages_spell_them_name_the_word() {
    let (out, err, status) = squashed_err("\"runs?\"\nlet ok = 1 && 2 || !3\n");
    assert_eq!((out.as_str(), status), ("", 2));
    assert_eq!(
        err,
        "hql::lex × `&&` is not an HQL operator [test.hql:2:12] 1 \"runs?\" 2 let ok = 1 && 2 || !3 write `and` help: use `and`: HQL writes `and`, `or` and `not` as words \
         hql::lex × `||` is not an HQL operator [test.hql:2:17] 1 \"runs?\" 2 let ok = 1 && 2 || !3 write `or` help: use `or`: HQL writes `and`, `or` and `not` as words \
         hql::lex × `!` is not an HQL operator [test.hql:2:20] 1 \"runs?\" 2 let ok = 1 && 2 || !3 write `not` help: use `not`: HQL writes `and`, `or` and `not` as words"
    );
}

#[test]
fn lex_a_single_quoted_string_is_one_error_saying_strings_use_double_quotes() {
    let (out, err, status) = squashed_err("\"runs?\"\nlet s = 'it is'\n");
    assert_eq!((out.as_str(), status), ("", 2));
    assert_eq!(
        err,
        "hql::lex × strings use double quotes [test.hql:2:9] 1 \"runs?\" 2 let s = 'it is' single-quoted help: write \"text\" (and r\"…\" for a regex)"
    );
}

#[test]
fn parse_a_missing_brace_points_at_the_brace_it_leaves_open() {
    let (out, err, status) = squashed_err("\"runs?\"\ntype T : Data = {\n a: Int\n\nlet x = 1\n");
    assert_eq!((out.as_str(), status), ("", 2));
    assert_eq!(
        err,
        "hql::parse × this `{` is never closed [test.hql:2:17] 1 \"runs?\" 2 type T : Data = { `}` missing for this `{` 3 a: Int help: close it with `}`; until then the statement runs on into the lines after it"
    );
    // A closer of another kind skips an open bracket: that one is shown.
    let (_, err, _) = squashed_err("\"runs?\"\nlet x = f(a[1)\n");
    assert!(
        err.starts_with("hql::parse × this `[` is never closed [test.hql:2:12]"),
        "{err}"
    );
}

#[test]
fn check_write_of_a_literal_list_of_results_is_static() {
    let err = static_with_help(
        "\"runs?\"\n[ok(1), err(2)] | write(file(\"x.jsonl\"))\n",
        "hql::write_results",
        "keep the valid records with `oks()`, stop at the first failure with `unwrap()`, or send both to files with `route(ok: …, err: …)`",
    );
    assert!(
        squash(&err).contains("× `write` takes values, not results [test.hql:2:1]"),
        "{err}"
    );
    // Results built by the program are not failure records: reading them
    // is no static error.
    assert_eq!(
        ok_out("[ok(1), err({a: 2})] | errs() | map(e => e.a)", &[]),
        "[2]\n"
    );
}

#[test]
fn check_comparing_a_union_member_that_cannot_be_compared_warns() {
    let (out, err, status) = squashed_err(
        "type Flight : Data = { delay: Int | \"NA\" }\n[{delay: 5}, {delay: \"NA\"}] | validate(Flight) | oks() | filter(f => f.delay > 60) | count()\n[{delay: 5}] | validate(Flight) | oks() | filter(f => f.delay != \"NA\" and f.delay > 60) | count()\n",
    );
    assert_eq!((out.as_str(), status), ("", 1));
    assert_eq!(
        err,
        "hql::uncomparable_member ⚠ `delay` may be \"NA\", which cannot be compared with a number [test.hql:2:70] 1 type Flight : Data = { delay: Int | \"NA\" } 2 [{delay: 5}, {delay: \"NA\"}] | validate(Flight) | oks() | filter(f => f.delay > 60) | count() \"NA\" here is an error at run time 3 [{delay: 5}] | validate(Flight) | oks() | filter(f => f.delay != \"NA\" and f.delay > 60) | count() help: guard it: `delay != \"NA\" and …`, or read \"NA\" as null: the format option `nulls: [\"NA\"]` with the field declared `… | Null` \
         hql::type × `>` cannot take a String and an Int [test.hql:2:70] 1 type Flight : Data = { delay: Int | \"NA\" } 2 [{delay: 5}, {delay: \"NA\"}] | validate(Flight) | oks() | filter(f => f.delay > 60) | count() here 3 [{delay: 5}] | validate(Flight) | oks() | filter(f => f.delay != \"NA\" and f.delay > 60) | count()"
    );
    // In a rule too; a guard (`== "NA" or`, `!= "NA" =>`) silences it.
    let (_, err, status) = run(
        "type F : DataContract = {\n d: Int | \"NA\"\n require d == \"NA\" or d > 0\n require d != \"NA\" => d < 9\n require big: d > 100\n}\n1",
        &[],
    );
    assert_eq!(status, 0);
    assert_eq!(err.matches("hql::uncomparable_member").count(), 1, "{err}");
    assert!(err.contains("require big: d > 100"), "{err}");
}

#[test]
fn check_an_undeclared_field_one_edit_from_a_declared_one_warns() {
    let (out, err, status) = squashed_err(
        "type Car : Data = { Origin: String }\n[{Origin: \"US\"}] | validate(Car) | oks() | map(c => c.Orgin?)\n[{Origin: \"US\"}] | validate(Car) | oks() | map(c => c.Make?)\n",
    );
    assert_eq!((out.as_str(), status), ("[null]\n[null]\n", 0));
    assert_eq!(
        err,
        "hql::undeclared_field ⚠ `Car` does not declare `Orgin`: did you mean `Origin`? [test.hql:2:55] 1 type Car : Data = { Origin: String } 2 [{Origin: \"US\"}] | validate(Car) | oks() | map(c => c.Orgin?) not declared 3 [{Origin: \"US\"}] | validate(Car) | oks() | map(c => c.Make?) help: `Car` is open, so `Orgin` is read as received (missing where a record has no `Orgin`); write `Origin`, or declare `Orgin`"
    );
}

#[test]
fn check_unique_in_a_nested_contract_type_warns() {
    let (out, err, status) = squashed_err(
        "type Item : DataContract = {\n sku: String\n unique sku\n}\ntype Cart : DataContract = { items: List[Item] }\n[{items: [{sku: \"a\"}, {sku: \"a\"}]}] | validate(Cart) | map(r => is_ok(r))\n",
    );
    assert_eq!((out.as_str(), status), ("[true]\n", 0));
    assert_eq!(
        err,
        "hql::nested_unique ⚠ `unique` in `Item` applies only to a stream validated as `Item`, not where `Item` is a field's type [test.hql:3:2] 2 sku: String 3 unique sku not checked inside a field 4 } help: declare the key on the type whose records the stream holds"
    );
}

// ------------------------------------------------ expectations (§4.11)

/// A contract with one field of each sort an expectation's measures read,
/// then `members`.
fn order_with(members: &str) -> String {
    format!(
        "\"runs?\"\ntype Order : DataContract = {{\n id: String\n email?: String\n amount: Float\n placed: Timestamp\n day: Date\n address?: {{ city: String }}\n {members}\n}}\n"
    )
}

#[test]
fn expect_in_a_plain_kind_names_the_contract_kind() {
    for (kind, contract) in [("Data", "DataContract"), ("Type", "TypeContract")] {
        let src = format!("\"runs?\"\ntype T : {kind} = {{\n a: Int\n expect rows > 0\n}}\n");
        let err = static_with_help(&src, "hql::member_not_allowed", &format!("`{contract}`"));
        assert!(squash(&err).contains("[test.hql:4:2]"), "{err}");
    }
    // A contract kind's child may add them; a plain parent's may not.
    let src = "\"runs?\"\ntype P : Data = { a: Int }\ntype C : P = {\n expect rows > 0\n}\n";
    static_with_help(src, "hql::member_not_allowed", "`DataContract`");
}

#[test]
fn expect_of_an_unknown_field_suggests_the_nearest() {
    let err = static_with_help(
        &order_with("expect missing(emial) <= 5%"),
        "hql::unknown_field",
        "did you mean `email`?",
    );
    assert!(
        squash(&err).contains("`Order` has no field `emial`"),
        "{err}"
    );
    assert!(squash(&err).contains("[test.hql:9:17]"), "{err}");
    // Along a path, the nested record's fields are the candidates.
    static_with_help(
        &order_with("expect nulls(address.cty) == 0"),
        "hql::unknown_field",
        "did you mean `city`?",
    );
}

#[test]
fn expect_of_an_unknown_measure_suggests_the_nearest() {
    static_with_help(
        &order_with("expect rwos >= 10"),
        "hql::unknown_measure",
        "did you mean `rows`?",
    );
    static_with_help(
        &order_with("expect dupliates(id) == 0"),
        "hql::unknown_measure",
        "did you mean `duplicates`?",
    );
    static_with_help(
        &order_with("expect len(id) > 0"),
        "hql::unknown_measure",
        "an expectation combines measures",
    );
}

#[test]
fn expect_reading_a_field_points_to_rules_and_measures() {
    let err = static_with_help(
        &order_with("expect amount > 0"),
        "hql::expect_form",
        "`min(amount)`",
    );
    assert!(squash(&err).contains("require"), "{err}");
    static_with_help(
        &order_with("expect rows in [1, 2]"),
        "hql::expect_form",
        "an expectation combines measures",
    );
    static_with_help(
        &order_with("expect rows > 0 => failures == 0"),
        "hql::expect_form",
        "`and`/`or`/`not`",
    );
}

#[test]
fn expect_share_against_a_non_count() {
    for member in [
        "expect sum(amount) <= 5%",
        "expect 5% > min(amount)",
        "expect (rows > 1) == 5%",
    ] {
        let err = static_with_help(&order_with(member), "hql::expect_share", "share of `rows`");
        assert!(squash(&err).contains("[test.hql:9:"), "{err}");
    }
    // A share standing alone, or in arithmetic, is no comparison with a count.
    static_with_help(
        &order_with("expect rows + 5% > 0"),
        "hql::expect_share",
        "compare a count with it",
    );
}

#[test]
fn expect_has_no_modulo() {
    let err = static_with_help(
        &order_with("expect rows % 2 == 0"),
        "hql::expect_modulo",
        "a share of `rows`",
    );
    assert!(squash(&err).contains("[test.hql:9:9]"), "{err}");
    // Outside `expect`, `%` is the remainder it always was.
    assert_eq!(eval1("10%3 + 7 % 4"), "4");
}

#[test]
fn age_of_a_field_that_is_not_a_date_or_timestamp() {
    let err = static_with_help(
        &order_with("expect age(amount) <= 3d"),
        "hql::measure_type",
        "`Date` or a `Timestamp`",
    );
    assert!(
        squash(&err).contains("`age` measures a Date or a Timestamp, and `amount` is a Float"),
        "{err}"
    );
    // A Date, a Timestamp, an optional or nullable one, and a refinement
    // of one are measured.
    let (out, err, status) = run(
        &format!(
            "type Day = Date require self >= \"2000-01-01\"\n{}1",
            order_with(
                "late?: Timestamp | Null\n d2: Day\n expect age(placed) <= 3d and age(day) < 12h and age(late) < 30s and age(d2) <= 15m"
            )
        ),
        &[],
    );
    assert_eq!(
        (out.as_str(), err.as_str(), status),
        ("\"runs?\"\n1\n", "", 0)
    );
}

#[test]
fn min_max_sum_avg_of_a_field_that_is_not_a_number() {
    for m in ["min", "max", "sum", "avg"] {
        static_with_help(
            &order_with(&format!("expect {m}(id) > 0")),
            "hql::measure_type",
            &format!("`{m}` is over a numeric field"),
        );
    }
}

#[test]
fn durations_go_with_ages_only() {
    static_with_help(
        &order_with("expect rows > 3d"),
        "hql::expect_duration",
        "`expect age(placed) <= 3d`",
    );
    static_with_help(
        &order_with("expect age(placed) <= 3"),
        "hql::expect_duration",
        "write the bound as a duration",
    );
    static_with_help(
        "\"runs?\"\nlet d = 3d\n",
        "hql::expect_duration",
        "expectations of freshness",
    );
}

#[test]
fn measures_take_the_arguments_section_4_11_gives() {
    for (member, help) in [
        ("expect rows() > 0", "without parentheses"),
        ("expect missing == 0", "one field"),
        ("expect missing(id, email) == 0", "one field"),
        ("expect duplicates() == 0", "one or more fields"),
        ("expect orphans(id) == 0", "a field and its keys"),
        ("expect nulls(len(id)) == 0", "a dotted path"),
        ("expect distinct(id: 1) > 0", "one field"),
    ] {
        static_with_help(&order_with(member), "hql::measure_arguments", help);
    }
}

#[test]
fn a_measure_path_goes_into_records_only() {
    static_with_help(
        &order_with("expect missing(id.x) == 0"),
        "hql::measure_path",
        "nested records only",
    );
}

#[test]
fn orphans_keys_only_in_the_listed_forms() {
    for keys in [
        "ids",
        "[id]",
        "source(\"customers\")",
        "source(\"customers\") | map(c => len(c.id))",
        "source(\"customers\") | filter(c => c.ok)",
        "[1, 2] | map(c => c.id)",
    ] {
        static_with_help(
            &order_with(&format!("expect orphans(id, {keys}) == 0")),
            "hql::orphan_keys",
            "`source(\"customers\") | map(c => c.id)`",
        );
    }
}

#[test]
fn expect_operands_and_conditions() {
    static_with_help(
        &order_with("expect (rows > 1) + 1 > 0"),
        "hql::expect_operands",
        "arithmetic and ordering take counts and numbers",
    );
    static_with_help(
        &order_with("expect rows and failures"),
        "hql::condition_type",
        "compare it",
    );
    static_with_help(
        &order_with("expect rows"),
        "hql::condition_type",
        "compare it",
    );
}

#[test]
fn two_expectations_with_one_identity() {
    static_with_help(
        &order_with("expect fresh: age(placed) <= 3d\n expect fresh: age(placed) <= 1d"),
        "hql::duplicate_rule",
        "give each rule its own name",
    );
    static_with_help(
        &order_with("expect rows > 0\n expect rows  >  0"),
        "hql::duplicate_rule",
        "is written twice",
    );
}

#[test]
fn every_form_of_section_4_11_is_accepted_and_a_program_with_it_runs() {
    let src = "type Order : DataContract = {\n order_id: String\n customer_id: String\n email?: String\n placed: Timestamp\n amount: Float\n\n expect rows >= 1000\n expect budget: failures <= 1%\n expect missing(email) <= 5%\n expect nulls(amount) == 0\n expect duplicates(customer_id, placed) == 0\n expect fresh: age(placed) <= 3d\n expect known_customers: orphans(customer_id, source(file(\"customers.jsonl\"), Json) | map(c => c.id)) == 0\n expect warn distinct(customer_id) >= 10\n expect listed: orphans(customer_id, [\"c\", \"c2\"]) == 0\n expect 0.5% >= invalid(amount) and not (max(amount) > 10_000 or avg(amount) < -sum(amount) / rows)\n expect rows - failures >= 99.5%\n}\n[{order_id: \"a\", customer_id: \"c\", placed: \"2024-01-01T00:00:00Z\", amount: 1.5}] | validate(Order) | report()\n";
    // Every form checks and runs; on one record, `rows >= 1000` fails and
    // stops the run once the report is printed.
    let (out, err, status) = run(src, &[("customers.jsonl", "{\"id\": \"c\"}\n")]);
    assert_eq!(status, 1, "{err}");
    assert_eq!(
        out,
        "{total: 1, ok: 1, err: 0, warned: 0, by_rule: [\
{rule: \"Order.distinct(customer_id) >= 10\", kind: \"expect_warn\", count: 1}, \
{rule: \"Order.fresh\", kind: \"expect\", count: 1}, \
{rule: \"Order.missing(email) <= 5%\", kind: \"expect\", count: 1}, \
{rule: \"Order.rows >= 1000\", kind: \"expect\", count: 1}]}\n"
    );
    assert!(
        squash(&err).contains("× expectation Order.rows >= 1000 failed: rows >= 1000 (rows is 1)"),
        "{err}"
    );
}

#[test]
fn check_expect_in_a_nested_contract_type_warns() {
    let (out, err, status) = squashed_err(
        "type Item : DataContract = {\n sku: String\n expect rows > 0\n}\ntype Cart : DataContract = { items: List[Item] }\n[{items: [{sku: \"a\"}]}] | validate(Cart) | map(r => is_ok(r))\n",
    );
    assert_eq!((out.as_str(), status), ("[true]\n", 0));
    assert_eq!(
        err,
        "hql::nested_expect ⚠ `expect` in `Item` is judged only over a stream validated as `Item`, not where `Item` is a field's type [test.hql:3:2] 2 sku: String 3 expect rows > 0 not judged inside a field 4 } help: declare the expectation on the type whose records the stream holds"
    );
}
