//! The differential tests of rule kernels (`runtime::kernel`): a rule's
//! kernel and the evaluator, run in the same frame, give the same value,
//! or both fail (the kernel's `Bail` where the evaluator raises). Frames
//! are made from many records, valid ones and each of them broken the
//! ways `scan_agreement` breaks lines, so fields come absent, null and of
//! every wrong type.

use super::scan_agreement::tests::{mutate, session, Dice};
use crate::runtime::eval::{push_frame, Slots};
use crate::runtime::json::Decoder;
use crate::runtime::kernel::InFrame;
use crate::runtime::print::to_hql;
use crate::runtime::value::Value;

/// Check every rule and warning of `name` against the evaluator in the
/// frames of `lines` and their broken copies; returns how many rule runs
/// gave a value (not an error) on both sides.
fn agree(declarations: &str, name: &str, lines: &[&str]) -> usize {
    let session = session(declarations);
    let interp = session.interp().clone();
    let contract = session.contract(name).expect("declared");
    let record = contract.record().expect("a record type");
    let mut dice = Dice(0x2545_F491_4F6C_DD1D);
    let mut cases: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    for _ in 0..4_000 {
        let base = lines[dice.below(lines.len())];
        cases.push(mutate(base, &mut dice));
    }
    let mut valued = 0;
    for line in &cases {
        let Ok(Value::Record(r)) = Decoder::new().decode(line.as_bytes()) else {
            continue;
        };
        // The frame `validate` makes: `self`, then each declared field
        // (absent when missing), here as the line has them.
        let mut slots: Slots = Slots::new();
        slots.push(Value::Record(r.clone()));
        for f in &record.fields {
            slots.push(r.get(&f.name).cloned().unwrap_or(Value::Absent));
        }
        let env = push_frame(&None, slots);
        for rule in record.rules.iter().chain(&record.warns) {
            let by_kernel = rule.kernel(Some(record)).run(&interp, &env, &InFrame);
            let by_eval = interp.eval(&rule.cond, &env);
            match (&by_kernel, &by_eval) {
                (Ok(k), Ok(e)) => {
                    assert_eq!(
                        (to_hql(k), k.is_absent()),
                        (to_hql(e), e.is_absent()),
                        "{}: {line}",
                        rule.id
                    );
                    valued += 1;
                }
                (Err(_), Err(_)) => {}
                _ => panic!(
                    "{}: kernel {:?}, evaluator {:?}: {line}",
                    rule.id,
                    by_kernel.map(|v| to_hql(&v)),
                    by_eval.map(|v| to_hql(&v))
                ),
            }
        }
    }
    valued
}

/// Every construct a kernel compiles, and some it hands to the evaluator:
/// folds over lists of records and of scalars, with `map`, `filter`,
/// `sum`, `count`, `len`, `all` and `any`; soft reads, `??`, `in`, `=>`,
/// `if`, `not`, negation, `matches`, builtins over single values, a
/// declared function, indexing and a record literal.
#[test]
fn kernels_give_what_the_evaluator_gives() {
    let valued = agree(
        r#"fn double(n) = n * 2
type Line : DataContract = {
    sku: String
    qty: Int
    price: Int | Float
    gift?: Bool
}
type Order : DataContract = {
    id: String
    kind: "buy" | "gift"
    lines: List[Line]
    tags: List[String]
    scores?: List[Int]
    total: Int
    note?: String
    require total_is_sum: total == lines | map(l => l.qty * l.price) | sum()
    require few_big: lines | filter(l => l.qty > 5) | count() <= 1
    require named: all(lines, l => len(l.sku) > 0 and not (l.sku in ["x", "y"]))
    require gift_kind: kind == "gift" => any(lines, l => l.gift?)
    require gifts: lines | filter(l => l.gift? ?? false) | map(l => -l.price) | sum() <= 0
    require chained: lines | map(l => l.qty) | filter(q => q > 2) | map(q => q + 1) | count() < 3
    require tagged: len(tags) <= len(lines) + 2 and all(tags, t => t != "")
    require scored: (scores? | map(s => s * 2) | sum()) ?? 0 < 100
    require lower_id: lower(id) == id or starts_with(id, "X")
    require shaped: matches(id, r"^[a-zA-Z][0-9]*$")
    require picked: if kind == "buy" then total >= 0 else double(total) >= 0
    require noted: note? == null or len(trim(note?)) > 0
    require first_ok: len(lines) == 0 or lines[0].qty > 0
    require literal: {a: total}.a == total
    require within_total: all(lines, l => l.qty <= total or kind == "gift")
    warn many: len(lines) < 4
    warn avg: len(lines) == 0 or total / len(lines) < 1000
}"#,
        "Order",
        &[
            r#"{"id": "o1", "kind": "buy", "lines": [{"sku": "a", "qty": 2, "price": 300}, {"sku": "b", "qty": 1, "price": 50}], "tags": ["t"], "total": 650}"#,
            r#"{"id": "o2", "kind": "gift", "lines": [{"sku": "c", "qty": 7, "price": 1.5, "gift": true}], "tags": [], "scores": [1, 2], "total": 10, "note": " n "}"#,
            r#"{"id": "X3", "kind": "buy", "lines": [], "tags": ["a", ""], "total": 0}"#,
            r#"{"id": "o4", "kind": "buy", "lines": [{"sku": "x", "qty": 4611686018427387904, "price": 4}], "tags": [], "total": 1}"#,
            r#"{"id": "o5", "kind": "gift", "lines": [{"sku": "", "qty": 6, "price": 1, "gift": null}, {"sku": "e", "qty": "9", "price": 2}, null], "tags": [], "total": 24, "note": ""}"#,
        ],
    );
    assert!(valued > 10_000, "{valued}");
}
