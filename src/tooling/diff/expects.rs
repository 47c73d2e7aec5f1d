//! Expectations (language.md §4.11) in `hql diff`: matched by identity —
//! named ones by name, unnamed ones by canonical text — and classified
//! from the consumer's view: an `expect` added or changed is breaking, one
//! removed or with its numeric bounds loosened is additive, and any change
//! to an `expect warn` is additive.
//!
//! Where the list is silent:
//! - an unnamed expectation whose bound changed has a new identity; when
//!   exactly one unnamed expectation over a given set of measures is
//!   removed and one is added, the pair is reported as one expectation
//!   changed (so `rows >= 1000` → `rows >= 500` reads as a loosened bound);
//! - "loosened" means every literal that changed is a bound of a
//!   comparison with a measure side, and each now admits more: a larger
//!   upper bound (`<=`, `<`), a smaller lower bound (`>=`, `>`), under
//!   `not` the reverse; a bound of `==` or `!=`, a changed operator or
//!   measure, or a literal inside arithmetic is a change;
//! - the same bounds written otherwise (`1_000` → `1000`) are cosmetic.

use std::cmp::Ordering;

use super::{Changes, What};
use crate::runtime::contract::{ExpectCond, ExpectSpec, Share};
use crate::runtime::eval::equality::compare_numbers;
use crate::runtime::eval::ops;
use crate::runtime::value::Value;
use crate::syntax::ast::BinOp;

/// Compare the expectations of a record type, old and new.
pub(super) fn compare(out: &mut Changes, old: &[ExpectSpec], new: &[ExpectSpec]) {
    for e in old {
        if let Some(f) = find(new, &e.id) {
            compare_pair(out, &e.id, e, f);
        }
    }
    let removed: Vec<&ExpectSpec> = old.iter().filter(|e| find(new, &e.id).is_none()).collect();
    let added: Vec<&ExpectSpec> = new.iter().filter(|e| find(old, &e.id).is_none()).collect();
    let partners: Vec<Option<&ExpectSpec>> = removed
        .iter()
        .map(|e| partner(e, &removed, &added))
        .collect();
    for (e, partner) in removed.iter().zip(&partners) {
        match partner {
            Some(f) => compare_pair(out, "", e, f),
            None => {
                let what = pick(e.warn, What::ExpectWarnRemoved, What::ExpectRemoved);
                out.push(what, &e.id, named_text(e), None);
            }
        }
    }
    let paired = |f: &ExpectSpec| partners.iter().flatten().any(|p| std::ptr::eq(*p, f));
    for f in added.iter().filter(|f| !paired(f)) {
        let what = pick(f.warn, What::ExpectWarnAdded, What::ExpectAdded);
        out.push(what, &f.id, None, named_text(f));
    }
}

fn find<'a>(list: &'a [ExpectSpec], id: &str) -> Option<&'a ExpectSpec> {
    list.iter().find(|e| &*e.id == id)
}

fn pick(warn: bool, if_warn: What, if_not: What) -> What {
    if warn {
        if_warn
    } else {
        if_not
    }
}

/// An unnamed expectation's identity is its text, which changes with it.
fn is_named(e: &ExpectSpec) -> bool {
    !e.id.ends_with(&format!(".{}", e.text))
}

/// A named expectation's condition (an unnamed one's identity shows it).
fn named_text(e: &ExpectSpec) -> Option<String> {
    is_named(e).then(|| e.text.clone())
}

/// What pairs a removed unnamed expectation with an added one: the
/// measures it reads.
fn key(e: &ExpectSpec) -> Vec<&str> {
    let mut texts: Vec<&str> = e.measures.iter().map(|m| m.text.as_str()).collect();
    texts.sort_unstable();
    texts
}

/// The added expectation a removed one became: both unnamed, reading the
/// same measures, and alone of their kind on both sides.
fn partner<'a>(
    e: &ExpectSpec,
    removed: &[&ExpectSpec],
    added: &[&'a ExpectSpec],
) -> Option<&'a ExpectSpec> {
    let like = |list: &[&ExpectSpec]| -> Vec<usize> {
        (0..list.len())
            .filter(|&i| !is_named(list[i]) && key(list[i]) == key(e))
            .collect()
    };
    match (&like(removed)[..], &like(added)[..]) {
        ([_], [i]) if !is_named(e) => Some(added[*i]),
        _ => None,
    }
}

/// One expectation in both files: `subject` is its identity, or empty when
/// the identity itself changed (an unnamed pair, shown old → new).
fn compare_pair(out: &mut Changes, subject: &str, old: &ExpectSpec, new: &ExpectSpec) {
    let (shown_old, shown_new) = match subject {
        "" => (Some(old.id.to_string()), Some(new.id.to_string())),
        _ => (Some(old.text.clone()), Some(new.text.clone())),
    };
    let what = match (old.warn, new.warn) {
        (false, true) => Some(What::ExpectMadeWarn),
        (true, false) => Some(What::WarnMadeExpect),
        _ if old.text == new.text => None,
        (true, true) => Some(What::ExpectWarnChanged),
        (false, false) => Some(match (Pair { old, new }).cond(&old.cond, &new.cond) {
            Bounds::Same => What::ExpectRewritten,
            Bounds::Looser => What::ExpectLoosened,
            Bounds::Tighter | Bounds::Other => What::ExpectChanged,
        }),
    };
    match what {
        Some(w @ (What::ExpectMadeWarn | What::WarnMadeExpect)) if old.text == new.text => {
            out.push(w, &old.id, None, None)
        }
        Some(w) => out.push(w, subject, shown_old, shown_new),
        None => {}
    }
    let subject = if subject.is_empty() { &new.id } else { subject };
    out.differ_quietly(What::Description, subject, &old.doc, &new.doc);
}

/// How a condition's bounds moved between two versions of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bounds {
    Same,
    /// Some bound admits more, none admits less.
    Looser,
    /// Some bound admits less, none admits more.
    Tighter,
    /// Anything else: another shape, operator, measure, or bounds moved
    /// both ways.
    Other,
}

impl Bounds {
    fn with(self, other: Bounds) -> Bounds {
        match (self, other) {
            (Bounds::Same, x) | (x, Bounds::Same) => x,
            (a, b) if a == b => a,
            _ => Bounds::Other,
        }
    }

    /// Under `not`, a looser bound makes the condition tighter.
    fn negated(self) -> Bounds {
        match self {
            Bounds::Looser => Bounds::Tighter,
            Bounds::Tighter => Bounds::Looser,
            b => b,
        }
    }

    fn same_if(equal: bool) -> Bounds {
        if equal {
            Bounds::Same
        } else {
            Bounds::Other
        }
    }

    /// A bound of `measure op bound` that moved from `old` to `new`
    /// (`order` is old's against new's).
    fn moved(op: BinOp, order: Option<Ordering>) -> Bounds {
        match (op, order) {
            (_, Some(Ordering::Equal)) => Bounds::Same,
            (BinOp::Le | BinOp::Lt, Some(Ordering::Less))
            | (BinOp::Ge | BinOp::Gt, Some(Ordering::Greater)) => Bounds::Looser,
            (BinOp::Le | BinOp::Lt, Some(Ordering::Greater))
            | (BinOp::Ge | BinOp::Gt, Some(Ordering::Less)) => Bounds::Tighter,
            _ => Bounds::Other,
        }
    }
}

/// The two versions of an expectation, whose conditions point into their
/// own measures.
struct Pair<'a> {
    old: &'a ExpectSpec,
    new: &'a ExpectSpec,
}

impl Pair<'_> {
    fn measure(&self, a: u32, b: u32) -> Bounds {
        let text = |e: &ExpectSpec, i: u32| e.measures[i as usize].text.clone();
        Bounds::same_if(text(self.old, a) == text(self.new, b))
    }

    fn cond(&self, a: &ExpectCond, b: &ExpectCond) -> Bounds {
        use ExpectCond as C;
        match (a, b) {
            (C::Measure(x), C::Measure(y)) => self.measure(*x, *y),
            (C::Number(x), C::Number(y)) => {
                Bounds::same_if(compare_numbers(x, y) == Some(Ordering::Equal))
            }
            (C::Bool(x), C::Bool(y)) => Bounds::same_if(x == y),
            (C::Neg(x), C::Neg(y)) => self.exact(x, y),
            (C::Arith(o, x1, y1), C::Arith(p, x2, y2)) if o == p => {
                self.exact(x1, x2).with(self.exact(y1, y2))
            }
            (C::Compare(o, x1, y1), C::Compare(p, x2, y2)) if o == p => {
                self.compare(*o, (x1, y1), (x2, y2))
            }
            (
                C::Share {
                    op: o,
                    count: c1,
                    share: s1,
                },
                C::Share {
                    op: p,
                    count: c2,
                    share: s2,
                },
            ) if o == p => self
                .exact(c1, c2)
                .with(Bounds::moved(*o, share_order(*s1, *s2))),
            (
                C::Age {
                    op: o,
                    measure: m1,
                    seconds: s1,
                },
                C::Age {
                    op: p,
                    measure: m2,
                    seconds: s2,
                },
            ) if o == p => self
                .measure(*m1, *m2)
                .with(Bounds::moved(*o, Some(s1.cmp(s2)))),
            (C::Not(x), C::Not(y)) => self.cond(x, y).negated(),
            (C::And(x1, y1), C::And(x2, y2)) | (C::Or(x1, y1), C::Or(x2, y2)) => {
                self.cond(x1, x2).with(self.cond(y1, y2))
            }
            _ => Bounds::Other,
        }
    }

    /// Parts that are no bound: equal, or a change.
    fn exact(&self, a: &ExpectCond, b: &ExpectCond) -> Bounds {
        match self.cond(a, b) {
            Bounds::Same => Bounds::Same,
            _ => Bounds::Other,
        }
    }

    /// `x op y`: a literal on one side facing anything else is a bound.
    fn compare(
        &self,
        op: BinOp,
        (x1, y1): (&ExpectCond, &ExpectCond),
        (x2, y2): (&ExpectCond, &ExpectCond),
    ) -> Bounds {
        let bound = |a: &ExpectCond, b: &ExpectCond| literal(a)?.cmp_with(&literal(b)?);
        match (literal(x1), literal(y1)) {
            (None, Some(_)) => self.exact(x1, x2).with(Bounds::moved(op, bound(y1, y2))),
            (Some(_), None) => {
                (self.exact(y1, y2)).with(Bounds::moved(op.flipped(), bound(x1, x2)))
            }
            _ => self.exact(x1, x2).with(self.exact(y1, y2)),
        }
    }
}

/// A number as written, negated or not.
struct Literal(Value);

impl Literal {
    fn cmp_with(&self, other: &Literal) -> Option<Ordering> {
        compare_numbers(&self.0, &other.0)
    }
}

fn literal(c: &ExpectCond) -> Option<Literal> {
    match c {
        ExpectCond::Number(v) => Some(Literal(v.clone())),
        ExpectCond::Neg(x) => ops::negate(literal(x)?.0).ok().map(Literal),
        _ => None,
    }
}

fn share_order(a: Share, b: Share) -> Option<Ordering> {
    Some((a.numer.checked_mul(b.denom)?).cmp(&b.numer.checked_mul(a.denom)?))
}
