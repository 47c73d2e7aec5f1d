//! Identities of a type's own checks (§4.7): `rule_id`, `check_id`,
//! `unique_id` and `expect_id` name them, and `duplicate_identities` finds
//! two checks of one declaration that would share one — `require r: a > 0` and `require
//! r: a > 1`, or one unnamed rule written twice — since a failure must say
//! which check broke.

use rustc_hash::FxHashMap;

use crate::check::CheckError;
use crate::syntax::ast::{Expectation, Member, Name, Rule, Severity, Span, TypeBody};
use crate::syntax::canonical::{expectation_text, expr_text};

/// `Order.ordered_bounds` for a named rule, `Order.` and the condition in
/// canonical form for an unnamed one.
pub fn rule_id(owner: &str, r: &Rule) -> String {
    match &r.name {
        Some(n) => format!("{owner}.{}", n.text),
        None => format!("{owner}.{}", expr_text(&r.cond)),
    }
}

/// `Order.fresh` for `expect fresh: …`, `Order.` and the condition in
/// canonical form for an unnamed expectation (§4.7), as for a rule.
pub fn expect_id(owner: &str, e: &Expectation) -> String {
    match &e.name {
        Some(n) => format!("{owner}.{}", n.text),
        None => format!("{owner}.{}", expr_text(&e.cond)),
    }
}

/// `Order.country.is_country_code` for `validate country with is_country_code`.
pub fn check_id(owner: &str, field: &Name, func: &Name) -> String {
    format!("{owner}.{}.{}", field.text, func.text)
}

/// `Order.order_id.unique`, `Order.a+b.unique`.
pub fn unique_id(owner: &str, fields: &[Name]) -> String {
    let names: Vec<&str> = fields.iter().map(|f| f.text.as_str()).collect();
    format!("{owner}.{}.unique", names.join("+"))
}

/// One error for each check of `body` whose identity an earlier one has.
pub fn duplicate_identities(owner: &str, body: &TypeBody) -> Vec<CheckError> {
    let mut first: FxHashMap<String, String> = FxHashMap::default();
    let mut errors = Vec::new();
    for (id, text, span) in identities(owner, body) {
        match first.get(&id) {
            Some(earlier) => errors.push(CheckError::DuplicateIdentity {
                id,
                first: earlier.clone(),
                second: text,
                span,
            }),
            None => {
                first.insert(id, text);
            }
        }
    }
    errors
}

/// Each check a declaration makes itself: its identity, how it reads, where.
fn identities(owner: &str, body: &TypeBody) -> Vec<(String, String, Span)> {
    let rule = |r: &Rule| (rule_id(owner, r), rule_text(r), r.span.clone());
    match body {
        TypeBody::Refine { rules, .. } => rules.iter().map(rule).collect(),
        TypeBody::Record(members) => members
            .iter()
            .filter_map(|m| match m {
                Member::Field(_) => None,
                Member::Rule(r) => Some(rule(r)),
                Member::Expect(e) => {
                    Some((expect_id(owner, e), expectation_text(e), e.span.clone()))
                }
                Member::Check { field, func, span } => Some((
                    check_id(owner, field, func),
                    format!("validate {} with {}", field.text, func.text),
                    span.clone(),
                )),
                Member::Unique { fields, span } => {
                    let names: Vec<&str> = fields.iter().map(|f| f.text.as_str()).collect();
                    let text = match names.as_slice() {
                        [one] => format!("unique {one}"),
                        many => format!("unique ({})", many.join(", ")),
                    };
                    Some((unique_id(owner, fields), text, span.clone()))
                }
            })
            .collect(),
    }
}

fn rule_text(r: &Rule) -> String {
    let severity = match r.severity {
        Severity::Require => "require",
        Severity::Warn => "warn",
    };
    let name = r
        .name
        .as_ref()
        .map(|n| format!("{}: ", n.text))
        .unwrap_or_default();
    format!("{severity} {name}{}", expr_text(&r.cond))
}
