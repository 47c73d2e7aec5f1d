//! `hql diff OLD NEW [--format hql|json]`: compare the types two files
//! declare (tooling.md, "Contract tooling").
//!
//! Input: two contracts files, each imported into its own session.
//! Output: a report of every change, grouped by type, with each type's
//! version verdict and a summary line — or, with `--format json`, one JSON
//! document — and the exit status: 1 when a breaking change comes without
//! the version bump it needs, 2 when either file has a static error.

use crate::cli::contracts::load;
use crate::runtime::json::to_json;
use crate::runtime::value::{Record, Value};
use crate::session::{Session, Sinks, EXIT_FAILED, EXIT_OK};
use crate::tooling::diff::{counts, diff as compare, Presence, TypeDiff};

/// Compare `old` and `new`, print the report, and give the exit status.
pub fn diff(old: &str, new: &str, json: bool, sessions: [Session; 2], sinks: &mut Sinks) -> i32 {
    let [mut before, mut after] = sessions;
    // Both files are loaded first, so that the errors of both are shown.
    let (old_types, new_types) = match (load(&mut before, old, sinks), load(&mut after, new, sinks))
    {
        (Ok(a), Ok(b)) => (a, b),
        (Err(status), _) | (_, Err(status)) => return status,
    };
    let diffs = compare(&old_types.types, &new_types.types);
    let text = if json {
        json_report(old, new, &diffs)
    } else {
        report(&diffs)
    };
    let _ = sinks.out.write_all(text.as_bytes());
    if diffs.iter().all(|d| d.verdict.ok()) {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// The readable report: each changed type with its versions, a line a
/// change (class, then what), its verdict; then a summary line.
pub fn report(diffs: &[TypeDiff]) -> String {
    let mut out = String::new();
    for d in diffs {
        out.push_str(&format!("{}{}\n", d.name, versions(d)));
        for c in &d.changes {
            out.push_str(&format!("  {:<9} {}\n", c.class().name(), c.text()));
        }
        out.push_str(&format!("  verdict: {}\n\n", d.verdict_text()));
    }
    out.push_str(&summary(diffs));
    out.push('\n');
    out
}

fn versions(d: &TypeDiff) -> String {
    match (&d.old_version, &d.new_version) {
        (Some(a), Some(b)) if a == b => format!(" ({a})"),
        (None, None) => String::new(),
        (a, b) if d.presence == Presence::Both => {
            let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "no version".into());
            format!(" ({} → {})", shown(a), shown(b))
        }
        (a, b) => format!(" ({})", a.as_ref().or(b.as_ref()).map_or("", |v| v)),
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn summary(diffs: &[TypeDiff]) -> String {
    if diffs.is_empty() {
        return "no changes".into();
    }
    let [breaking, additive, cosmetic] = counts(diffs);
    let failing: Vec<&str> = (diffs.iter())
        .filter(|d| !d.verdict.ok())
        .map(|d| d.name.as_str())
        .collect();
    let verdict = if failing.is_empty() {
        "versions ok".to_string()
    } else {
        format!("version bump missing for {}", failing.join(", "))
    };
    format!(
        "{} changed: {breaking} breaking, {additive} additive, {cosmetic} cosmetic; {verdict}",
        plural(diffs.len(), "type", "types")
    )
}

fn record(fields: Vec<(&str, Value)>) -> Value {
    Value::record(
        fields
            .into_iter()
            .map(|(k, v)| (k.into(), v))
            .collect::<Record>(),
    )
}

fn text_or_null(s: Option<&str>) -> Value {
    s.map_or(Value::Null, Value::str)
}

/// One JSON document: `{old, new, types: [{type, presence, old_version,
/// new_version, changes: [{class, change, subject, old, new, text}],
/// verdict: {ok, needed, least, text}}], summary: {types, breaking, additive,
/// cosmetic, ok}}` (docs/reference.md describes each field).
pub fn json_report(old: &str, new: &str, diffs: &[TypeDiff]) -> String {
    let types = diffs.iter().map(type_json).collect();
    let [breaking, additive, cosmetic] = counts(diffs);
    let count = |n: usize| Value::Int(n as i64);
    let summary = record(vec![
        ("types", count(diffs.len())),
        ("breaking", count(breaking)),
        ("additive", count(additive)),
        ("cosmetic", count(cosmetic)),
        ("ok", Value::Bool(diffs.iter().all(|d| d.verdict.ok()))),
    ]);
    let doc = record(vec![
        ("old", Value::str(old)),
        ("new", Value::str(new)),
        ("types", Value::list(types)),
        ("summary", summary),
    ]);
    format!("{}\n", to_json(&doc))
}

fn type_json(d: &TypeDiff) -> Value {
    let changes = (d.changes.iter())
        .map(|c| {
            record(vec![
                ("class", Value::str(c.class().name())),
                ("change", Value::str(c.what.name())),
                ("subject", Value::str(c.subject.as_str())),
                ("old", text_or_null(c.old.as_deref())),
                ("new", text_or_null(c.new.as_deref())),
                ("text", Value::str(c.text())),
            ])
        })
        .collect();
    let presence = match d.presence {
        Presence::Both => "changed",
        Presence::Added => "added",
        Presence::Removed => "removed",
    };
    record(vec![
        ("type", Value::str(d.name.as_str())),
        ("presence", Value::str(presence)),
        ("old_version", text_or_null(d.old_version.as_deref())),
        ("new_version", text_or_null(d.new_version.as_deref())),
        ("changes", Value::list(changes)),
        (
            "verdict",
            record(vec![
                ("ok", Value::Bool(d.verdict.ok())),
                ("needed", text_or_null(d.verdict.needed())),
                ("least", text_or_null(d.verdict.least())),
                ("text", Value::str(d.verdict_text())),
            ]),
        ),
    ])
}
