//! CSV sources on real files (language.md §6.1, §4.9; tooling.md "Sources,
//! targets and the schema boundary"): the header, quoting, BOM, line ends,
//! rows that do not decode, and the conversion of text cells to a
//! contract's declared types under `validate(T)`.

mod common;
use common::*;

/// Run `program` in `scratch`; it must succeed with nothing on stderr.
#[track_caller]
fn ok_run(scratch: &Scratch, program: &str) -> String {
    let r = scratch.run(program, &[]);
    assert_eq!(
        r.status, 0,
        "expected status 0\nprogram:\n{program}\nstdout:\n{}\nstderr:\n{}",
        r.out, r.err
    );
    assert!(r.err.is_empty(), "expected empty stderr, got:\n{}", r.err);
    r.out
}

/// A contract whose rule fails for every row with a non-empty `id`: its
/// failure records show each row's origin line and cells as received.
const LINES: &str = r#"type Seen : DataContract = {
    id: String
    require id == ""
}
"#;

/// The program printing `{line, input}` for each row of `file`, and the
/// decode failures with their line and raw input.
fn lines_program(file: &str) -> String {
    format!(
        "{LINES}source(file({file:?}), Csv) | validate(Seen) | errs() \
         | map(e => {{line: e.origin.line, kind: e.failures[0].kind, input: e.input}})\n"
    )
}

// ------------------------------------------------------------ layout

#[test]
fn header_row_names_the_fields_and_cells_are_text() {
    let s = Scratch::new("csv-header");
    s.write("a.csv", "id,name,qty\n1,ann,3\n2,bob,-4\n");
    let out = ok_run(&s, "source(file(\"a.csv\"), Csv)\n");
    assert_eq!(
        out,
        "[{id: \"1\", name: \"ann\", qty: \"3\"}, {id: \"2\", name: \"bob\", qty: \"-4\"}]\n"
    );
}

#[test]
fn empty_cells_are_absent_without_a_contract() {
    let s = Scratch::new("csv-empty-cells");
    s.write("a.csv", "id,name,note\n1,,\n,b,\n");
    let out = ok_run(&s, "source(file(\"a.csv\"), Csv)\n");
    assert_eq!(out, "[{id: \"1\"}, {name: \"b\"}]\n");
}

#[test]
fn quoted_fields_keep_commas_doubled_quotes_and_newlines() {
    let s = Scratch::new("csv-quoted");
    s.write(
        "a.csv",
        "id,text\n1,\"a, b\"\n2,\"say \"\"hi\"\"\"\n3,\"two\nlines\"\n4,\"x\"\n",
    );
    let out = ok_run(&s, "source(file(\"a.csv\"), Csv) | map(r => r.text)\n");
    assert_eq!(
        out,
        "[\"a, b\", \"say \\\"hi\\\"\", \"two\\nlines\", \"x\"]\n"
    );
}

#[test]
fn origin_line_is_where_the_record_starts_header_is_line_1() {
    let s = Scratch::new("csv-origin");
    // Line 1 header; record 2 spans lines 3-5; the next starts on line 6.
    s.write(
        "a.csv",
        "id,text\nr2,plain\nr3,\"multi\nline\ncell\"\nr6,\"a,b\"\nr7,x\n",
    );
    let out = ok_run(&s, &lines_program("a.csv"));
    assert_eq!(
        out,
        "[{line: 2, kind: \"require\", input: {id: \"r2\", text: \"plain\"}}, \
         {line: 3, kind: \"require\", input: {id: \"r3\", text: \"multi\\nline\\ncell\"}}, \
         {line: 6, kind: \"require\", input: {id: \"r6\", text: \"a,b\"}}, \
         {line: 7, kind: \"require\", input: {id: \"r7\", text: \"x\"}}]\n"
    );
}

#[test]
fn a_utf8_bom_is_not_part_of_the_first_column_name() {
    let s = Scratch::new("csv-bom");
    s.write("a.csv", "\u{feff}id,name\n1,a\n");
    s.write("q.csv", "\u{feff}\"id\",\"name\"\n2,b\n");
    let out = ok_run(
        &s,
        "source(file(\"a.csv\"), Csv) | map(r => keys(r))\n\
         source(file(\"q.csv\"), Csv)\n\
         type T : DataContract = { id: Int }\n\
         source(file(\"a.csv\"), Csv) | validate(T)\n",
    );
    assert_eq!(
        out,
        "[[\"id\", \"name\"]]\n[{id: \"2\", name: \"b\"}]\n[ok({id: 1, name: \"a\"})]\n"
    );
}

#[test]
fn crlf_line_ends_leave_no_carriage_return_in_cells() {
    let s = Scratch::new("csv-crlf");
    s.write("a.csv", "id,name\r\n1,ann\r\n2,\"b\r\nc\"\r\n3,d\r\n");
    let out = ok_run(&s, "source(file(\"a.csv\"), Csv)\n");
    assert_eq!(
        out,
        "[{id: \"1\", name: \"ann\"}, {id: \"2\", name: \"b\\r\\nc\"}, {id: \"3\", name: \"d\"}]\n"
    );
}

#[test]
fn crlf_origin_lines_are_the_lines_where_records_start() {
    let s = Scratch::new("csv-crlf-lines");
    s.write("a.csv", "id\r\nr2\r\nr3\r\nr4\r\n");
    let out = ok_run(&s, &lines_program("a.csv"));
    assert_eq!(
        out,
        "[{line: 2, kind: \"require\", input: {id: \"r2\"}}, \
         {line: 3, kind: \"require\", input: {id: \"r3\"}}, \
         {line: 4, kind: \"require\", input: {id: \"r4\"}}]\n"
    );
}

#[test]
fn blank_lines_are_skipped() {
    let s = Scratch::new("csv-blank");
    s.write("a.csv", "id,name\n1,a\n\n\n2,b\n\n");
    let out = ok_run(
        &s,
        "source(file(\"a.csv\"), Csv)\nsource(file(\"a.csv\"), Csv) | count()\n",
    );
    assert_eq!(
        out,
        "[{id: \"1\", name: \"a\"}, {id: \"2\", name: \"b\"}]\n2\n"
    );
}

#[test]
fn origin_line_after_blank_lines_is_where_the_record_starts() {
    let s = Scratch::new("csv-blank-lines");
    s.write("a.csv", "id\nr2\n\n\nr5\nr6\n");
    let out = ok_run(&s, &lines_program("a.csv"));
    assert_eq!(
        out,
        "[{line: 2, kind: \"require\", input: {id: \"r2\"}}, \
         {line: 5, kind: \"require\", input: {id: \"r5\"}}, \
         {line: 6, kind: \"require\", input: {id: \"r6\"}}]\n"
    );
}

#[test]
fn a_ragged_row_is_a_decode_err_with_its_line_and_reading_goes_on() {
    let s = Scratch::new("csv-ragged");
    s.write("a.csv", "id,name\n1,a\n2\n3,c,extra\n4,d\n");
    let out = ok_run(&s, "source(file(\"a.csv\"), Csv)\n");
    assert_eq!(
        out,
        "[{id: \"1\", name: \"a\"}, \
         err({type: null, version: null, origin: {source: \"a.csv\", line: 3}, input: \"2\", \
         failures: [{rule: \"decode\", kind: \"decode\", path: null, fields: [], severity: \"error\", \
         message: \"line 3 has 1 cells where the header has 2\"}]}), \
         err({type: null, version: null, origin: {source: \"a.csv\", line: 4}, input: \"3,c,extra\", \
         failures: [{rule: \"decode\", kind: \"decode\", path: null, fields: [], severity: \"error\", \
         message: \"line 4 has 3 cells where the header has 2\"}]}), \
         {id: \"4\", name: \"d\"}]\n"
    );
}

#[test]
fn a_ragged_rows_decode_input_is_the_raw_line() {
    let s = Scratch::new("csv-ragged-raw");
    s.write("a.csv", "a,b\n\"x,y\",z,w\n");
    let out = ok_run(
        &s,
        "source(file(\"a.csv\"), Csv) | errs() | map(e => e.input)\n",
    );
    assert_eq!(out, "[\"\\\"x,y\\\",z,w\"]\n");
}

#[test]
fn an_invalid_utf8_row_is_a_decode_err_with_its_line_and_reading_goes_on() {
    let s = Scratch::new("csv-utf8");
    let mut bytes = b"id,name\n1,a\n2,".to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe]);
    bytes.extend_from_slice(b"\n3,c\n");
    s.write("a.csv", bytes);
    let out = ok_run(&s, "source(file(\"a.csv\"), Csv)\n");
    assert_eq!(
        out,
        "[{id: \"1\", name: \"a\"}, \
         err({type: null, version: null, origin: {source: \"a.csv\", line: 3}, input: \"2,\u{fffd}\u{fffd}\", \
         failures: [{rule: \"decode\", kind: \"decode\", path: null, fields: [], severity: \"error\", \
         message: \"line 3 is not valid UTF-8 (column name)\"}]}), \
         {id: \"3\", name: \"c\"}]\n"
    );
}

#[test]
fn a_quoted_empty_cell_is_the_empty_string_and_the_writer_quotes_empty_strings() {
    let s = Scratch::new("csv-quoted-empty");
    s.write("a.csv", "s,n\n\"\",1\n,2\n");
    let out = ok_run(
        &s,
        "type T : DataContract = { s: String, n: Int }\n\
         source(file(\"a.csv\"), Csv)\n\
         source(file(\"a.csv\"), Csv) | validate(T) | report()\n",
    );
    assert_eq!(
        out,
        "[{s: \"\", n: \"1\"}, {n: \"2\"}]\n\
         {total: 2, ok: 1, err: 1, warned: 0, by_rule: [{rule: \"T.s.missing\", kind: \"missing\", count: 1}]}\n"
    );
    // Written, an empty string is quoted; an absent or null cell is not;
    // read back, each is what was written.
    let contract = "type T : DataContract = { s: String, t?: String, u: String | Null }\n";
    let out = ok_run(
        &s,
        &format!("{contract}[{{s: \"\", u: null}}, {{s: \"x\", t: \"\", u: \"\"}}] | validate(T) | oks() | write(file(\"o.csv\"))\n"),
    );
    assert_eq!(out, "2\n");
    assert_eq!(s.read("o.csv"), "s,t,u\n\"\",,\nx,\"\",\"\"\n");
    let out = ok_run(
        &s,
        &format!("{contract}source(file(\"o.csv\"), Csv) | validate(T)\n"),
    );
    assert_eq!(
        out,
        "[ok({s: \"\", u: null}), ok({s: \"x\", t: \"\", u: \"\"})]\n"
    );
}

#[test]
fn a_one_column_row_of_a_quoted_empty_cell_is_a_record_not_a_blank_line() {
    let s = Scratch::new("csv-one-column-empty");
    s.write("a.csv", "s\n\"\"\n\nx\n\"\"\n");
    let out = ok_run(
        &s,
        "source(file(\"a.csv\"), Csv)\nsource(file(\"a.csv\"), Csv) | count()\n\
         [{s: \"\"}, {s: \"y\"}] | write(file(\"o.csv\"))\n",
    );
    assert_eq!(out, "[{s: \"\"}, {s: \"x\"}, {s: \"\"}]\n3\n2\n");
    assert_eq!(s.read("o.csv"), "s\n\"\"\ny\n");
}

#[test]
fn cr_only_line_ends_read_as_rows() {
    let s = Scratch::new("csv-cr-only");
    // Excel for Mac: every line ends with a lone `\r`, also inside quotes.
    s.write("a.csv", "id\rr2\rr3\r\"r4\rcell\"\rr6\r");
    s.write("b.csv", "id,qty\r1,2\r2,0\r");
    s.write(
        "contracts.hql",
        "type Q : DataContract = { id: Int, qty: Int, require qty > 0 }\n",
    );
    let out = ok_run(&s, &lines_program("a.csv"));
    assert_eq!(
        out,
        "[{line: 2, kind: \"require\", input: {id: \"r2\"}}, \
         {line: 3, kind: \"require\", input: {id: \"r3\"}}, \
         {line: 4, kind: \"require\", input: {id: \"r4\\rcell\"}}, \
         {line: 6, kind: \"require\", input: {id: \"r6\"}}]\n"
    );
    let r = s.hql(&["vet", "contracts.hql", "b.csv"]);
    assert_eq!(r.status, 1, "{}", r.err);
    assert_eq!(
        r.out,
        "b.csv: {total: 2, ok: 1, err: 1, warned: 0, by_rule: [{rule: \"Q.qty > 0\", kind: \"require\", count: 1}]}\n"
    );
}

#[test]
fn an_unterminated_quote_is_a_decode_err_for_its_record_and_later_rows_are_read() {
    let s = Scratch::new("csv-unterminated");
    s.write("a.csv", "id,name\n1,a\n2,\"b\n3,c\n4,d\n");
    s.write("truncated.csv", "id,name\n1,a\n2,\"cut off\r\n");
    let out = ok_run(
        &s,
        "source(file(\"a.csv\"), Csv)\n\
         type T : DataContract = { id: Int, name: String }\n\
         source(file(\"truncated.csv\"), Csv) | validate(T) | report()\n\
         source(file(\"truncated.csv\"), Csv) | validate(T) | filter(r => true) | report()\n",
    );
    assert_eq!(
        out,
        "[{id: \"1\", name: \"a\"}, \
         err({type: null, version: null, origin: {source: \"a.csv\", line: 3}, input: \"2,\\\"b\", \
         failures: [{rule: \"decode\", kind: \"decode\", path: null, fields: [], severity: \"error\", \
         message: \"line 3 opens a quote that is never closed\"}]}), \
         {id: \"3\", name: \"c\"}, {id: \"4\", name: \"d\"}]\n\
         {total: 2, ok: 1, err: 1, warned: 0, by_rule: [{rule: \"decode\", kind: \"decode\", count: 1}]}\n\
         {total: 2, ok: 1, err: 1, warned: 0, by_rule: [{rule: \"decode\", kind: \"decode\", count: 1}]}\n"
    );
    s.write(
        "contracts.hql",
        "type T : DataContract = { id: Int, name: String }\n",
    );
    let r = s.hql(&["vet", "contracts.hql", "truncated.csv"]);
    assert_eq!(r.status, 1, "a truncated file fails: {}", r.err);
}

#[test]
fn a_nul_in_a_header_name_is_an_io_error_naming_the_column() {
    let s = Scratch::new("csv-nul-header");
    s.write("a.csv", "id,na\0me\n1,a\n");
    let r = s.run("source(file(\"a.csv\"), Csv) | count()\n", &[]);
    assert_eq!(r.status, 1, "{}", r.err);
    assert!(r.err.contains("hql::io"), "{}", r.err);
    assert!(
        r.err
            .contains("column `na\\0me` of the header (line 1) has a NUL character"),
        "{}",
        r.err
    );
}

#[test]
fn a_header_only_file_and_an_empty_file_give_no_records() {
    let s = Scratch::new("csv-no-records");
    s.write("header.csv", "id,name\n");
    s.write("header-no-newline.csv", "id,name");
    s.write("empty.csv", "");
    let out = ok_run(
        &s,
        "type T : DataContract = { id: Int }\n\
         source(file(\"header.csv\"), Csv)\n\
         source(file(\"header-no-newline.csv\"), Csv)\n\
         source(file(\"empty.csv\"), Csv)\n\
         source(file(\"header.csv\"), Csv) | validate(T) | report()\n\
         source(file(\"empty.csv\"), Csv) | validate(T) | report()\n",
    );
    assert_eq!(
        out,
        "[]\n[]\n[]\n\
         {total: 0, ok: 0, err: 0, warned: 0, by_rule: []}\n\
         {total: 0, ok: 0, err: 0, warned: 0, by_rule: []}\n"
    );
}

#[test]
fn a_one_megabyte_cell_is_read_whole() {
    let s = Scratch::new("csv-long-line");
    let big = "x".repeat(1 << 20);
    s.write("a.csv", format!("id,big\n1,{big}\n2,\"{big}\"\n3,y\n"));
    let out = ok_run(
        &s,
        "type T : DataContract = { id: Int, big: String }\n\
         source(file(\"a.csv\"), Csv) | validate(T) | oks() | map(r => {id: r.id, n: len(r.big)})\n",
    );
    assert_eq!(
        out,
        "[{id: 1, n: 1048576}, {id: 2, n: 1048576}, {id: 3, n: 1}]\n"
    );
}

#[test]
fn stdin_as_a_csv_source() {
    let s = Scratch::new("csv-stdin");
    s.write(
        "main.hql",
        "type T : DataContract = { id: Int, require id > 0 }\n\
         source(stdin(), Csv) | validate(T)\n",
    );
    let r = s.hql_stdin(&["run", "main.hql"], "id,name\n1,a\n-2,b\n");
    assert_eq!(r.status, 0, "stderr:\n{}", r.err);
    assert_eq!(
        r.out,
        "[ok({id: 1, name: \"a\"}), err({type: \"T\", version: null, \
         origin: {source: \"<stdin>\", line: 3}, input: {id: \"-2\", name: \"b\"}, \
         failures: [{rule: \"T.id > 0\", kind: \"require\", path: null, fields: [\"id\"], \
         severity: \"error\", message: \"rule T.id > 0 does not hold\"}]})]\n"
    );
}

// ------------------------------------------------------------ conversion

/// The oks' values and, for each err, its line and `rule` list.
fn outcomes(contract: &str, ty: &str) -> String {
    format!(
        "{contract}\nlet v = source(file(\"a.csv\"), Csv) | validate({ty})\n\
         v | oks()\n\
         v | errs() | map(e => {{line: e.origin.line, rules: e.failures | map(f => f.rule)}})\n"
    )
}

#[test]
fn int_is_an_optional_sign_and_digits() {
    let s = Scratch::new("csv-int");
    s.write(
        "a.csv",
        "n\n5\n+5\n-3\n007\n99999999999999999999\n5.0\n1e3\n 5\nabc\n",
    );
    let out = ok_run(&s, &outcomes("type I : DataContract = { n: Int }", "I"));
    assert_eq!(
        out,
        "[{n: 5}, {n: 5}, {n: -3}, {n: 7}, {n: 99999999999999999999}]\n\
         [{line: 7, rules: [\"I.n.type\"]}, {line: 8, rules: [\"I.n.type\"]}, \
         {line: 9, rules: [\"I.n.type\"]}, {line: 10, rules: [\"I.n.type\"]}]\n"
    );
}

#[test]
fn float_is_a_decimal_or_exponent_number_and_words_stay_text() {
    let s = Scratch::new("csv-float");
    s.write(
        "a.csv",
        "x\n7\n1e3\n-0.5\n2.50\n+1.5E-2\ninf\nNaN\n1,5\n-inf\n\"1,5\"\n",
    );
    let out = ok_run(&s, &outcomes("type F : DataContract = { x: Float }", "F"));
    // `1,5` unquoted is two cells: a ragged row (decode); quoted it is text.
    assert_eq!(
        out,
        "[{x: 7.0}, {x: 1000.0}, {x: -0.5}, {x: 2.5}, {x: 0.015}]\n\
         [{line: 7, rules: [\"F.x.type\"]}, {line: 8, rules: [\"F.x.type\"]}, \
         {line: 9, rules: [\"decode\"]}, {line: 10, rules: [\"F.x.type\"]}, \
         {line: 11, rules: [\"F.x.type\"]}]\n"
    );
}

#[test]
fn bool_is_true_or_false_only() {
    let s = Scratch::new("csv-bool");
    s.write("a.csv", "b\ntrue\nfalse\nTRUE\n1\nyes\n");
    let out = ok_run(&s, &outcomes("type B : DataContract = { b: Bool }", "B"));
    assert_eq!(
        out,
        "[{b: true}, {b: false}]\n\
         [{line: 4, rules: [\"B.b.type\"]}, {line: 5, rules: [\"B.b.type\"]}, \
         {line: 6, rules: [\"B.b.type\"]}]\n"
    );
}

#[test]
fn empty_cells_are_missing_null_or_absent_by_the_fields_type() {
    let s = Scratch::new("csv-empty-typed");
    s.write("a.csv", "id,note,opt,n\n1,,,\n,hi,2,3\n");
    let out = ok_run(
        &s,
        &outcomes(
            "type T : DataContract = { id: Int, note: String | Null, opt?: Int, n: Int | Null }",
            "T",
        ),
    );
    assert_eq!(
        out,
        "[{id: 1, note: null, n: null}]\n[{line: 3, rules: [\"T.id.missing\"]}]\n"
    );
}

#[test]
fn a_union_converts_by_its_first_member_that_converts() {
    let s = Scratch::new("csv-union");
    s.write("a.csv", "is,si,fi,if_\n5,5,5,5.5\nx,y,z,w\n");
    let out = ok_run(
        &s,
        &outcomes(
            "type U : DataContract = { is: Int | String, si: String | Int, fi: Float | Int, if_: Int | Float }",
            "U",
        ),
    );
    assert_eq!(
        out,
        "[{is: 5, si: \"5\", fi: 5.0, if_: 5.5}]\n\
         [{line: 3, rules: [\"U.fi.type\", \"U.if_.type\"]}]\n"
    );
}

#[test]
fn a_union_converts_by_the_first_member_that_admits_the_converted_value() {
    let s = Scratch::new("csv-union-admits");
    s.write("a.csv", "xi,lit,li\n1,2,[1]\nx,a,5\ny,3,x\n");
    let out = ok_run(
        &s,
        &outcomes(
            "type U : DataContract = { xi: \"x\" | Int, lit: 1 | 2 | \"a\", li: List[Int] | Int }",
            "U",
        ),
    );
    // `1` is the Int 1 (not the text `"x"` refuses); `3` is no member.
    assert_eq!(
        out,
        "[{xi: 1, lit: 2, li: [1]}, {xi: \"x\", lit: \"a\", li: 5}]\n\
         [{line: 4, rules: [\"U.xi.type\", \"U.lit.type\", \"U.li.type\"]}]\n"
    );
}

#[test]
fn a_cell_that_underflows_a_double_keeps_its_exact_value_on_every_path() {
    let s = Scratch::new("csv-underflow");
    let tiny = format!("0.{}1", "0".repeat(330));
    s.write(
        "a.csv",
        format!("id,x\n1,1e-400\n2,{tiny}\n3,+1E-400\n4,.5e-400\n5,0.0\n6,-1e-400\n7,0.5\n8,1.00000000000000000001\n"),
    );
    let contract = "type T : DataContract = { id: Int, x: Float, require x > 0 }";
    s.write("contracts.hql", format!("{contract}\n"));
    let program = |tail: &str| {
        format!(
            "{contract}\nlet v = source(file(\"a.csv\"), Csv) | validate(T){tail}\n\
             v | oks() | map(r => r.id)\nv | errs() | map(e => e.input.id)\nv | report()\nv | count()\n"
        )
    };
    // The counting path (`report()`, `count()`: the line check) and the
    // ordinary path (a `filter` keeps no plan) agree, and with `vet`.
    let expected = "[1, 2, 3, 4, 7, 8]\n[\"5\", \"6\"]\n\
                    {total: 8, ok: 6, err: 2, warned: 0, by_rule: [{rule: \"T.x > 0\", kind: \"require\", count: 2}]}\n8\n";
    assert_eq!(ok_run(&s, &program("")), expected);
    assert_eq!(ok_run(&s, &program(" | filter(r => true)")), expected);
    let r = s.hql(&["vet", "contracts.hql", "a.csv"]);
    assert_eq!(
        r.out,
        "a.csv: {total: 8, ok: 6, err: 2, warned: 0, by_rule: [{rule: \"T.x > 0\", kind: \"require\", count: 2}]}\n",
        "{}",
        r.err
    );
    // The value is kept digit for digit, in JSON form.
    let out = ok_run(
        &s,
        &format!("{contract}\nsource(file(\"a.csv\"), Csv) | validate(T) | oks() | filter(r => r.id != 2) | map(r => r.x)\n"),
    );
    assert_eq!(
        out,
        "[1e-400, 1e-400, 0.5e-400, 0.5, 1.00000000000000000001]\n"
    );
}

#[test]
fn literal_alias_and_refinement_types_convert_by_their_base_type() {
    let s = Scratch::new("csv-literal");
    s.write("a.csv", "lit,lvl,word,pct,ok\n2,3,a,50,true\n4,x,c,-1,1\n");
    let out = ok_run(
        &s,
        &outcomes(
            "type Level = 1 | 2 | 3\n\
             type Pct = Float require self >= 0\n\
             type L : DataContract = { lit: 1 | 2, lvl: Level, word: \"a\" | \"b\", pct: Pct, ok: true }",
            "L",
        ),
    );
    assert_eq!(
        out,
        "[{lit: 2, lvl: 3, word: \"a\", pct: 50.0, ok: true}]\n\
         [{line: 3, rules: [\"L.lit.type\", \"L.lvl.type\", \"L.word.type\", \"Pct.self >= 0\", \"L.ok.type\"]}]\n"
    );
}

#[test]
fn list_record_and_map_fields_are_decoded_from_json_text() {
    let s = Scratch::new("csv-json-cells");
    s.write(
        "a.csv",
        "items,addr,tags\n\"[1,2]\",\"{\"\"city\"\":\"\"Bern\"\"}\",\"{\"\"a\"\":1}\"\n\
         \"[1,\",\"{\"\"city\"\":5}\",\"[\"\"1\"\"]\"\n\
         \"[\"\"1\"\"]\",{},{}\n",
    );
    let out = ok_run(
        &s,
        &outcomes(
            "type Addr : DataContract = { city?: String }\n\
             type J : DataContract = { items: List[Int], addr: Addr, tags: Map[Int] }",
            "J",
        ),
    );
    assert_eq!(
        out,
        "[{items: [1, 2], addr: {city: \"Bern\"}, tags: {a: 1}}]\n\
         [{line: 3, rules: [\"J.items.type\", \"Addr.city.type\", \"J.tags.type\"]}, \
         {line: 4, rules: [\"J.items.type\"]}]\n"
    );
}

#[test]
fn any_and_undeclared_columns_stay_text() {
    let s = Scratch::new("csv-any");
    s.write("a.csv", "id,any,extra\n1,12,true\n");
    let out = ok_run(
        &s,
        "type T : DataContract = { id: Int, any: Any }\n\
         source(file(\"a.csv\"), Csv) | validate(T)\n",
    );
    assert_eq!(out, "[ok({id: 1, any: \"12\", extra: \"true\"})]\n");
}

#[test]
fn a_failure_records_input_holds_the_cells_as_text() {
    let s = Scratch::new("csv-input-text");
    s.write(
        "a.csv",
        "id,amount,flag,items,extra\n+7,1e3,true,\"[1]\",x\n",
    );
    let out = ok_run(
        &s,
        "type T : DataContract = { id: Int, amount: Float, flag: Bool, items: List[Int], require id > 100 }\n\
         source(file(\"a.csv\"), Csv) | validate(T)\n",
    );
    assert_eq!(
        out,
        "[err({type: \"T\", version: null, origin: {source: \"a.csv\", line: 2}, \
         input: {id: \"+7\", amount: \"1e3\", flag: \"true\", items: \"[1]\", extra: \"x\"}, \
         failures: [{rule: \"T.id > 100\", kind: \"require\", path: null, fields: [\"id\"], \
         severity: \"error\", message: \"rule T.id > 100 does not hold\"}]})]\n"
    );
}

#[test]
fn nothing_is_lost_records_read_equal_oks_plus_errs() {
    let s = Scratch::new("csv-nothing-lost");
    let mut bytes = b"\xef\xbb\xbfid,qty,note\r\n".to_vec();
    bytes.extend_from_slice(b"1,2,fine\n");
    bytes.extend_from_slice(b"2,0,\"bad qty\"\n");
    bytes.extend_from_slice(b"x,1,\n");
    bytes.extend_from_slice(b"4\n");
    bytes.extend_from_slice(b"\n");
    bytes.extend_from_slice(b"5,1,\"multi\nline\"\n");
    bytes.extend_from_slice(b"6,1,\xff\n");
    bytes.extend_from_slice(b",1,missing id\n");
    bytes.extend_from_slice(b"8,3,a,b\n");
    bytes.extend_from_slice(b"9,+4,\n");
    s.write("a.csv", bytes);
    let out = ok_run(
        &s,
        "type T : DataContract = { id: Int, qty: Int, note?: String, require qty > 0 }\n\
         let v = source(file(\"a.csv\"), Csv) | validate(T)\n\
         source(file(\"a.csv\"), Csv) | count()\n\
         v | oks() | count()\n\
         v | errs() | count()\n\
         v | report()\n\
         v | oks() | map(r => r.id)\n",
    );
    assert_eq!(
        out,
        "9\n3\n6\n\
         {total: 9, ok: 3, err: 6, warned: 0, by_rule: [{rule: \"decode\", kind: \"decode\", count: 3}, \
         {rule: \"T.id.missing\", kind: \"missing\", count: 1}, \
         {rule: \"T.id.type\", kind: \"type\", count: 1}, \
         {rule: \"T.qty > 0\", kind: \"require\", count: 1}]}\n\
         [1, 5, 9]\n"
    );
}

/// `count()` and `report()` over a validated CSV file give each row's
/// converted cells the line check's verdict (and a row it cannot judge
/// that way, as the JSON text of the record it converts to); the ordinary path (forced by a `filter`, which keeps no plan)
/// builds and validates every record. Both must count the same, for open
/// and closed contracts, rules, unions, nullable and nested fields, and
/// every kind of cell and broken row.
#[test]
fn the_counting_path_over_csv_counts_what_the_ordinary_path_counts() {
    let s = Scratch::new("csv-count-agreement");
    let mut text = String::from("id,name,amount,flag,tags,kind,note,extra\n");
    let cells = [
        ["1", "a", "2.5", "true", "[1,2]", "open", "", "x"],
        ["+5", "b", "7", "false", "[]", "shut", "n", ""],
        ["007", "c", "-0", "true", "[1,\"x\"]", "open", "", "y"],
        [
            "123456789012345678901234",
            "d",
            "1e3",
            "true",
            "",
            "open",
            "m",
            "",
        ],
        ["x", "e", "1,5", "maybe", "[1", "other", "", ""],
        ["-3", "", "inf", "true", "[3]", "open", "", ""],
        ["4", "f\"q", "1e999", "true", "[4]", "shut", "", "z"],
        ["", "g", "", "", "", "", "", ""],
        ["9", "h, i", "0.5", "false", "[9, 10]", "open", "l\nm", "w"],
    ];
    for i in 0..600 {
        let row = &cells[i % cells.len()];
        let quoted: Vec<String> = row
            .iter()
            .map(|c| {
                if c.contains([',', '"', '\n']) {
                    format!("\"{}\"", c.replace('"', "\"\""))
                } else {
                    c.to_string()
                }
            })
            .collect();
        text.push_str(&quoted.join(","));
        text.push('\n');
        match i % 97 {
            5 => text.push_str("1,2,3\n"),
            7 => text.push('\n'),
            _ => {}
        }
    }
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(b"8,\xff\xfe,1.0,true,[],open,,\n");
    s.write("rows.csv", bytes);
    let contracts = [
        "type T : DataContract = { id: Int, name: String, amount: Float, flag?: Bool, tags?: List[Int], kind: \"open\" | \"shut\", note?: String | Null\n    require id > 0\n    require amount >= 0 }",
        "type T : TypeContract = { id: Int, name: String, amount: Float, flag: Bool, tags: List[Int], kind: String, note: String | Null, extra?: String }",
        "type T : DataContract = { id: Int | String, amount: Float | Null, flag: Bool = false\n    warn amount? < 100 }",
        "type T : DataContract = { name: NonEmpty, id: Int\n    require len(name) < 3 }",
        "type Word = String require matches(self, r\"^[a-z]+$\")\ntype T : DataContract = { id: Int, name: Word, amount: Float | Int, kind?: \"open\" | Null\n    unique id }",
        "type T : TypeContract = { id: Int, name: String, amount: Any, flag: Bool = true, tags?: Any, kind: String, note?: String, extra?: String\n    require flag or id > 3 }",
        "type T : TypeContract = { id: Int, name: String, amount: Float, flag?: Bool, tags?: String, kind: String, note?: String }",
    ];
    for contract in contracts {
        let fast = format!(
            "{contract}\nlet v = source(file(\"rows.csv\"), Csv) | validate(T)\nv | oks() | count()\nv | report()\n"
        );
        let ordinary = format!(
            "{contract}\nlet v = source(file(\"rows.csv\"), Csv) | validate(T) | filter(r => true)\nv | oks() | count()\nv | report()\n"
        );
        let (a, b) = (s.run(&fast, &[]), s.run(&ordinary, &[]));
        assert_eq!(
            (a.status, b.status),
            (0, 0),
            "{contract}\n{}{}",
            a.err,
            b.err
        );
        assert_eq!(a.out, b.out, "{contract}");
        assert!(a.out.contains("total: 608"), "{contract}: {}", a.out);
    }
}

// ------------------------------------------------------------ writing

#[test]
fn a_csv_target_escapes_formula_cells_only_when_configured() {
    let s = Scratch::new("csv-formulas");
    s.write(
        "hql.toml",
        "[targets.sheet]\nfile = \"sheet.csv\"\ncsv = { escape_formulas = true }\n\n\
         [targets.plain]\nfile = \"plain.csv\"\n",
    );
    let records = "[{a: \"=1+2\", b: \"+x\", c: \"-3\", d: \"@sum(A1)\", e: \"\\tx\", f: \"a=b\", g: -5, h: \"=\\\"q\\\",1\"}]";
    let out = ok_run(
        &s,
        &format!("{records} | write(\"sheet\")\n{records} | write(\"plain\")\n"),
    );
    assert_eq!(out, "1\n1\n");
    assert_eq!(
        s.read("sheet.csv"),
        "a,b,c,d,e,f,g,h\n'=1+2,'+x,'-3,'@sum(A1),'\tx,a=b,'-5,\"'=\"\"q\"\",1\"\n"
    );
    assert_eq!(
        s.read("plain.csv"),
        "a,b,c,d,e,f,g,h\n=1+2,+x,-3,@sum(A1),\tx,a=b,-5,\"=\"\"q\"\",1\"\n"
    );
    // A source has no formulas to escape: the option is refused there.
    s.write(
        "hql.toml",
        "[sources.in]\nfile = \"plain.csv\"\ncsv = { escape_formulas = true }\n",
    );
    let r = s.run("source(\"in\") | count()\n", &[]);
    assert_eq!(r.status, 2, "{}", r.err);
    assert!(r.err.contains("unknown key `escape_formulas`"), "{}", r.err);
}
