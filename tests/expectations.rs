//! Expectations over a whole stream (language.md §4.11) as far as they are
//! built: declared, checked, compiled with their identities (§4.7) and
//! listed by `hql contract`. A program that declares them runs; they are
//! not judged yet. Their static errors are in `static_errors.rs`, their
//! layout in `fmt.rs`.

mod common;
use common::*;

const ORDERS: &str = "\
/// Orders as delivered.
@version(\"1.0.0\")
type Order : DataContract = {
    order_id: String
    customer_id: String
    email?: String
    placed: Timestamp
    amount: Float
    address?: { city: String }

    expect rows >= 1000
    expect budget: failures <= 1%
    expect missing(email) <= 5%
    expect warn distinct(customer_id) >= 10
    expect fresh: age(placed) <= 3d
    expect 0.5% >= missing(address.city)
}

type BigOrder : Order = {
    expect big: min(amount) >= 100
}
";

/// `hql contract FILE [TYPE]` of `text`.
fn contract(text: &str, ty: &[&str]) -> Run {
    let dir = Scratch::new("expect-contract");
    dir.write("c.hql", text);
    let mut args = vec!["contract", "c.hql"];
    args.extend(ty);
    dir.hql(&args)
}

#[test]
fn contract_lists_each_expectation_with_its_identity_and_canonical_text() {
    let run = contract(ORDERS, &["Order"]);
    assert_eq!((run.err.as_str(), run.status), ("", 0));
    assert_eq!(
        run.out,
        "\
type Order: DataContract (open)
  version: 1.0.0
  about: Orders as delivered.
  fields:
    order_id: String
    customer_id: String  (read by Order.distinct(customer_id) >= 10)
    email?: String  (read by Order.missing(email) <= 5%)
    placed: Timestamp  (read by Order.fresh)
    amount: Float
    address?: a record  (read by Order.0.5% >= missing(address.city))
      city: String
  expectations:
    expect Order.rows >= 1000: rows >= 1000
    expect Order.budget: failures <= 1%
    expect Order.missing(email) <= 5%: missing(email) <= 5%
    expect warn Order.distinct(customer_id) >= 10: distinct(customer_id) >= 10
    expect Order.fresh: age(placed) <= 3d
    expect Order.0.5% >= missing(address.city): 0.5% >= missing(address.city)
"
    );
}

#[test]
fn inherited_expectations_keep_their_identities_and_come_first() {
    let run = contract(ORDERS, &["BigOrder"]);
    assert_eq!(run.status, 0, "{}", run.err);
    let listed: Vec<&str> = run
        .out
        .lines()
        .skip_while(|l| *l != "  expectations:")
        .skip(1)
        .map(|l| l.split(':').next().unwrap_or_default().trim())
        .collect();
    assert_eq!(
        listed,
        [
            "expect Order.rows >= 1000",
            "expect Order.budget",
            "expect Order.missing(email) <= 5%",
            "expect warn Order.distinct(customer_id) >= 10",
            "expect Order.fresh",
            "expect Order.0.5% >= missing(address.city)",
            "expect BigOrder.big",
        ]
    );
}

#[test]
fn reformatting_or_reordering_never_changes_an_identity() {
    let one = "type T : DataContract = {\n a?: Int\n b: Float\n expect missing(a)<=5% and   sum(b)>0\n expect warn rows>0\n}\n";
    let other = "type T : DataContract = {\n b: Float\n expect warn rows\n   > 0\n\n expect (missing( a ) <= 5%)\n   and (sum(b) > 0)\n a?: Int\n}\n";
    let ids = |text: &str| -> Vec<String> {
        let run = contract(text, &[]);
        assert_eq!(run.status, 0, "{}", run.err);
        let mut ids: Vec<String> = run
            .out
            .lines()
            .filter(|l| l.starts_with("    expect"))
            .map(str::to_string)
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(
        ids(one),
        [
            "    expect T.missing(a) <= 5% and sum(b) > 0: missing(a) <= 5% and sum(b) > 0",
            "    expect warn T.rows > 0: rows > 0",
        ]
    );
    assert_eq!(ids(one), ids(other));
}

#[test]
fn a_program_with_expectations_runs_and_they_are_not_yet_judged() {
    // `rows >= 1000` fails on two records once expectations are judged;
    // until then the run goes as it would without them.
    let src = format!(
        "{ORDERS}[{{order_id: \"a\", customer_id: \"c\", placed: \"2024-01-01T00:00:00Z\", amount: 1.5}}, {{order_id: \"b\"}}] | validate(Order) | report()\n"
    );
    let (out, err, status) = run(&src, &[]);
    assert_eq!(err, "");
    assert_eq!(status, 0);
    assert!(
        out.starts_with("{total: 2, ok: 1, err: 1, warned: 0, by_rule: ["),
        "{out}"
    );
    assert!(!out.contains("expect"), "{out}");
}

#[test]
fn expect_is_a_name_after_a_dot_as_a_key_and_as_a_field() {
    let src = "type T : DataContract = {\n expect: Int\n expect?: Int\n}\n";
    let (_, err, status) = run(src, &[]);
    // A field declared twice, by name: `expect` is a field's name here.
    assert_eq!(status, 2);
    assert!(err.contains("field `expect` is declared twice"), "{err}");
    let src = "type T : DataContract = {\n expect: Int\n require self.expect % 2 == 0\n}\nlet r = {expect: 10}\n[r.expect % 3, r[\"expect\"]]\n[{expect: 4}] | validate(T) | oks() | map(t => t.expect % 3)\n";
    assert_eq!(ok_out(src, &[]), "[1, 10]\n[1]\n");
}
