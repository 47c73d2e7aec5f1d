//! Tab completion: `complete(&mut Session, line, pos) -> (start, candidates)`.
//!
//! What is offered depends on where the cursor is: `:` commands at the
//! start of an entry (and their arguments), file paths inside `file("…`,
//! `import "…` and after `:load` (a file's name closes its string, and
//! `file(`'s bracket), the fields of the expression before a `.` (its
//! static type, from the checker's type flow; where that has no fields, as
//! for data read as `Json`, the fields of the value in hand: a bound
//! record's, or the first record of a bound stream or list, read one record
//! only), inside the condition of an `expect` the measures of §4.11 (and
//! in a measure's brackets the fields declared above it), and otherwise the
//! keywords, builtins, types and names in scope.

use std::path::Path;

use crate::check::MEASURES;
use crate::runtime::builtins::Builtin;
use crate::runtime::exec::stages::items;
use crate::runtime::value::Value;
use crate::session::{Session, Sinks};
use crate::syntax::input::continues_entry;

/// One candidate: what the list shows, and what replaces the text from
/// the start position to the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub display: String,
    pub replacement: String,
}

const KEYWORDS: &[&str] = &[
    "type", "require", "warn", "expect", "validate", "with", "unique", "fn", "let", "check",
    "import", "if", "then", "else", "and", "or", "not", "in", "true", "false", "null", "self",
];

/// Stages whose output records are some of their input's, unchanged.
const KEEPS_RECORDS: &[&str] = &[
    "filter", "take", "skip", "sort", "sort_by", "distinct", "first", "oks", "unwrap",
];

/// Types that are not declared anywhere but always there (the formats a
/// program names come from the registry).
const BUILTIN_TYPES: &[&str] = &["Int", "Float", "String", "Bool", "Null", "List"];

/// The candidates for the text before `pos` in `line` (the whole entry so
/// far, newlines included), and where the text they replace starts.
pub fn complete(session: &mut Session, line: &str, pos: usize) -> (usize, Vec<Candidate>) {
    let before = &line[..pos.min(line.len())];
    let lead = before.len() - before.trim_start().len();
    if let Some(command) = before[lead..].strip_prefix(':') {
        return complete_command(session, command, lead + 1);
    }
    complete_code(session, before, &line[before.len()..], 0)
}

/// After `:`: a command's name, or its argument.
fn complete_command(session: &mut Session, text: &str, base: usize) -> (usize, Vec<Candidate>) {
    let Some((name, rest)) = text.split_once(char::is_whitespace) else {
        let names = super::COMMANDS.iter().map(|(n, _, _)| *n);
        return (base, words(text, names));
    };
    let arg_base = base + name.len() + 1 + (rest.len() - rest.trim_start().len());
    let arg = rest.trim_start();
    match name {
        "help" | "h" | "?" => {
            let names = super::COMMANDS.iter().map(|(n, _, _)| *n);
            (arg_base, words(arg, names))
        }
        "contract" | "c" => {
            let types: Vec<String> = session.types().iter().map(|c| c.name.clone()).collect();
            (arg_base, words(arg, types.iter().map(String::as_str)))
        }
        "load" | "l" => (arg_base, paths(arg)),
        "type" | "t" | "infer" | "i" | "describe" | "d" | "hist" | "bar" => {
            complete_code(session, arg, "", arg_base)
        }
        "set" => match arg.split_once(char::is_whitespace) {
            None => (arg_base, words(arg, ["format"])),
            Some((_, value)) => {
                let value = value.trim_start();
                (
                    arg_base + arg.len() - value.len(),
                    words(value, ["hql", "json"]),
                )
            }
        },
        _ => (base, vec![]),
    }
}

/// Completion inside HQL code; `base` is where `before` starts in the
/// line, `after` is what follows the cursor.
fn complete_code(
    session: &mut Session,
    before: &str,
    after: &str,
    base: usize,
) -> (usize, Vec<Candidate>) {
    match position(before) {
        Position::Comment => (base + before.len(), vec![]),
        Position::Str(quote) => {
            let partial = &before[quote + 1..];
            if takes_path(&before[..quote]) {
                // A file's name ends the string, and `file(`'s call, unless
                // they are closed already.
                let close = match before[..quote].trim_end().ends_with('(') {
                    _ if after.starts_with('"') => "",
                    true => "\")",
                    false => "\"",
                };
                let mut found = paths(partial);
                for c in &mut found {
                    if !c.replacement.ends_with('/') {
                        c.replacement.push_str(close);
                    }
                }
                (base + quote + 1, found)
            } else {
                (base + before.len(), vec![])
            }
        }
        Position::Code => {
            let start = word_start(before);
            let word = &before[start..];
            if let Some(receiver_end) = before[..start].strip_suffix('.').map(str::len) {
                let fields = fields_of(session, &before[..receiver_end]);
                return field_candidates(base, receiver_end, start, word, &fields);
            }
            if word.is_empty() || word.starts_with(|c: char| c.is_ascii_digit()) {
                return (base + start, vec![]);
            }
            if let Some(offered) = expect_candidates(&before[..start], word) {
                return (base + start, offered);
            }
            let names = session.names();
            let all = KEYWORDS
                .iter()
                .copied()
                .chain(Builtin::ALL.iter().map(|b| b.name()))
                .chain(BUILTIN_TYPES.iter().copied())
                .chain(crate::formats::FORMATS.in_programs().map(|f| f.name()))
                .chain(names.iter().map(String::as_str));
            (base + start, words(word, all))
        }
    }
}

/// Inside an `expect` condition (the text from `expect` to the word being
/// typed, on one line): the measures, `rows` and `failures` as they are
/// and the others with their opening bracket, and the words a condition
/// joins them with; in a measure's brackets, the fields declared above in
/// the same entry. None elsewhere.
fn expect_candidates(head: &str, word: &str) -> Option<Vec<Candidate>> {
    let line = &head[head.rfind('\n').map_or(0, |i| i + 1)..];
    let condition = line.trim_start().strip_prefix("expect")?;
    if !condition.starts_with(char::is_whitespace) {
        return None;
    }
    if let Some(open) = open_bracket(condition) {
        let measure = &condition[word_start(&condition[..open])..open];
        if MEASURES.contains(&measure) {
            return Some(words(
                word,
                declared_fields(head).iter().map(String::as_str),
            ));
        }
    }
    let joins: &[&str] = match condition.trim().is_empty() {
        true => &["warn", "not"],
        false => &["and", "or", "not"],
    };
    let mut offered = words(word, joins.iter().copied());
    for m in MEASURES.iter().filter(|m| m.starts_with(word)) {
        let bare = matches!(*m, "rows" | "failures");
        offered.push(Candidate {
            display: m.to_string(),
            replacement: if bare { m.to_string() } else { format!("{m}(") },
        });
    }
    offered.sort_by(|a, b| a.display.cmp(&b.display));
    Some(offered)
}

/// The names of the fields declared in `text`, one `name: Type` (or
/// `name?: Type`) a line, rules, checks and expectations aside.
fn declared_fields(text: &str) -> Vec<String> {
    let declared = |line: &str| {
        let (name, _) = line.trim().split_once(':')?;
        let name = name.trim_end().trim_end_matches('?');
        let keyword = KEYWORDS.contains(&name.split_whitespace().next()?);
        (is_ident(name) && !keyword).then(|| name.to_string())
    };
    text.lines().filter_map(declared).collect()
}

/// The fields among `fields` that start with `word`, typed after the `.`
/// at `dot`. A field whose name is not an identifier is offered as
/// `["US Gross"]`, in the place of the `.`; the others then with theirs.
fn field_candidates(
    base: usize,
    dot: usize,
    start: usize,
    word: &str,
    fields: &[String],
) -> (usize, Vec<Candidate>) {
    let mut found: Vec<&str> = (fields.iter())
        .map(String::as_str)
        .filter(|f| f.starts_with(word))
        .collect();
    if found.iter().all(|f| is_ident(f)) {
        return (base + start, words(word, found));
    }
    found.sort_unstable();
    found.dedup();
    let offered = found
        .into_iter()
        .map(|f| {
            let replacement = match is_ident(f) {
                true => format!(".{f}"),
                false => {
                    let mut quoted = String::from("[");
                    crate::syntax::canonical::write_json_string(&mut quoted, f);
                    quoted.push(']');
                    quoted
                }
            };
            Candidate {
                display: f.to_string(),
                replacement,
            }
        })
        .collect();
    (base + dot, offered)
}

/// The candidates among `all` that start with `word`, sorted, once each.
fn words<'a>(word: &str, all: impl IntoIterator<Item = &'a str>) -> Vec<Candidate> {
    let mut found: Vec<&str> = all
        .into_iter()
        .filter(|w| w.starts_with(word) && is_ident(w))
        .collect();
    found.sort_unstable();
    found.dedup();
    found
        .into_iter()
        .map(|w| Candidate {
            display: w.to_string(),
            replacement: w.to_string(),
        })
        .collect()
}

fn is_ident(w: &str) -> bool {
    let mut chars = w.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Where the identifier being typed starts.
fn word_start(before: &str) -> usize {
    before
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_ident_char(*c))
        .last()
        .map(|(i, _)| i)
        .unwrap_or(before.len())
}

/// What the cursor is in.
#[derive(Debug, PartialEq)]
enum Position {
    Code,
    Comment,
    /// An unfinished string literal, opened by the quote at this offset.
    Str(usize),
}

fn position(before: &str) -> Position {
    let bytes = before.as_bytes();
    let mut i = 0;
    let mut state = Position::Code;
    while i < bytes.len() {
        match (&state, bytes[i]) {
            (Position::Code, b'/') if bytes.get(i + 1) == Some(&b'/') => state = Position::Comment,
            (Position::Code, b'"') => state = Position::Str(i),
            (Position::Comment, b'\n') => state = Position::Code,
            (Position::Str(open), b'\\') if !is_raw(bytes, *open) => i += 1,
            (Position::Str(_), b'"' | b'\n') => state = Position::Code,
            _ => {}
        }
        i += 1;
    }
    state
}

fn is_raw(bytes: &[u8], quote: usize) -> bool {
    quote > 0 && bytes[quote - 1] == b'r'
}

/// Does a string opened right after `head` name a file: `file("`,
/// `import "`?
fn takes_path(head: &str) -> bool {
    let head = head.trim_end();
    if let Some(call) = head.strip_suffix('(') {
        let call = call.trim_end();
        return call.ends_with("file") && !call[..call.len() - 4].ends_with(is_ident_char);
    }
    head.ends_with("import") && !head[..head.len() - 6].ends_with(is_ident_char)
}

/// The files and directories that `partial` may name: those in its
/// directory whose names start with its last part. A directory ends in `/`.
fn paths(partial: &str) -> Vec<Candidate> {
    let (dir, prefix) = match partial.rfind('/') {
        Some(i) => (&partial[..=i], &partial[i + 1..]),
        None => ("", partial),
    };
    let listed = if dir.is_empty() { "." } else { dir };
    let Ok(entries) = std::fs::read_dir(Path::new(listed)) else {
        return vec![];
    };
    let mut found: Vec<Candidate> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            if !name.starts_with(prefix) || (name.starts_with('.') && !prefix.starts_with('.')) {
                return None;
            }
            let slash = if e.path().is_dir() { "/" } else { "" };
            Some(Candidate {
                display: format!("{name}{slash}"),
                replacement: format!("{dir}{name}{slash}"),
            })
        })
        .collect();
    found.sort_by(|a, b| a.display.cmp(&b.display));
    found
}

// ------------------------------------------------------------------ fields

/// The fields of the expression that ends `before` (the text up to a `.`),
/// from its static type; empty where the type is not known.
fn fields_of(session: &mut Session, before: &str) -> Vec<String> {
    let start = receiver_start(before);
    let receiver = before[start..].trim();
    if receiver.is_empty() || receiver.starts_with(|c: char| c.is_ascii_digit()) {
        return vec![];
    }
    let root: String = receiver.chars().take_while(|c| is_ident_char(*c)).collect();
    let probe = lambda_probe(&before[..start], &root, receiver);
    let fields = type_fields(session, probe.as_ref().map_or(receiver, |p| &p.expr));
    if !fields.is_empty() {
        return fields;
    }
    let bound = match &probe {
        Some(p) => p.input.as_str(),
        None => root.as_str(),
    };
    value_fields(session, bound, &receiver[root.len()..])
}

/// The fields of the value in hand: `bound` names a value of the session
/// (a record, or a stream or list whose first record stands for all), and
/// `path` (`.a.b`, maybe empty) leads into it. Only names and fields are
/// followed, so nothing is run; a stream is read one item only.
fn value_fields(session: &Session, bound: &str, path: &str) -> Vec<String> {
    // `xs | take(2) | filter(…)`: stages that keep the records as they
    // are leave `xs`'s first record standing for them.
    let mut stages = bound.split('|').map(str::trim);
    let bound = stages.next().unwrap_or("");
    let keeps = |stage: &str| {
        let name: String = stage.chars().take_while(|c| is_ident_char(*c)).collect();
        KEEPS_RECORDS.contains(&name.as_str()) && stage[name.len()..].trim_start().starts_with('(')
    };
    if !is_ident(bound) || !stages.all(keeps) {
        return vec![];
    }
    let Some((_, mut value)) = session.vars().into_iter().find(|(n, _)| n == bound) else {
        return vec![];
    };
    if matches!(value, Value::Stream(_) | Value::List(_)) {
        let first = items(&value).ok().and_then(|mut i| i.next()?.ok());
        value = match first {
            Some(item) => item.value,
            None => return vec![],
        };
    }
    for step in path.split('.').skip(1) {
        let step = step.trim_end_matches('?');
        value = match value {
            Value::Record(r) if is_ident(step) => match r.get(step) {
                Some(v) => v.clone(),
                None => return vec![],
            },
            Value::Ok(okay) => return value_fields_of(&okay.value),
            _ => return vec![],
        };
    }
    value_fields_of(&value)
}

fn value_fields_of(value: &Value) -> Vec<String> {
    match value {
        Value::Record(r) => r.keys().map(|k| k.to_string()).collect(),
        Value::Ok(okay) => value_fields_of(&okay.value),
        _ => vec![],
    }
}

/// Check `expr` against the session, quietly, and list its type's fields.
fn type_fields(session: &mut Session, expr: &str) -> Vec<String> {
    let mut out = std::io::sink();
    let mut err = std::io::sink();
    let mut quiet = Sinks::plain(&mut out, &mut err);
    match session.check("<completion>", expr, &mut quiet) {
        Ok(checked) => checked.last_type.map(|t| t.fields()).unwrap_or_default(),
        Err(_) => vec![],
    }
}

/// Where the expression before a `.` starts: names, `.`, `?`, and bracketed
/// groups such as `first(xs)` or `xs[0]`.
fn receiver_start(before: &str) -> usize {
    let bytes = before.as_bytes();
    let mut i = before.len();
    while i > 0 {
        let c = bytes[i - 1];
        if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'?') {
            i -= 1;
        } else if matches!(c, b')' | b']') {
            match opener(before, i - 1) {
                Some(o) => i = o,
                None => return i,
            }
        } else {
            break;
        }
    }
    i
}

/// The offset of the bracket that opens the one closing at `close`.
fn opener(text: &str, close: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in text[..=close].char_indices().rev() {
        match c {
            ')' | ']' | '}' => depth += 1,
            '(' | '[' | '{' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The innermost bracket still open at the end of `text`.
fn open_bracket(text: &str) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in text.char_indices().rev() {
        match c {
            ')' | ']' | '}' => depth += 1,
            '(' | '[' | '{' if depth == 0 => return Some(i),
            '(' | '[' | '{' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Is the bracket at `open` still unclosed at the end of `text`?
fn still_open(text: &str, open: usize) -> bool {
    let mut depth = 0;
    for c in text[open..].chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

/// An expression standing for a lambda's parameter, and the input the
/// lambda is run over.
struct Probe {
    expr: String,
    input: String,
}

/// When `root` is the parameter of a lambda still open in `head` (as in
/// `xs | filter(s => s.`), an expression whose type is the receiver's:
/// `(xs) | map(s => RECEIVER) | first()`, and the input (`xs`).
fn lambda_probe(head: &str, root: &str, receiver: &str) -> Option<Probe> {
    if root.is_empty() {
        return None;
    }
    let arrow = lambda_of(head, root)?;
    // The call the lambda is an argument of, still open.
    let paren = open_bracket(&head[..arrow])?;
    if head.as_bytes()[paren] != b'(' || !still_open(head, paren) {
        return None;
    }
    let callee_end = head[..paren].trim_end().len();
    let callee_start = word_start(&head[..callee_end]);
    if callee_start == callee_end {
        return None;
    }
    let lead = head[..callee_start].trim_end();
    if let Some(pipe) = lead.strip_suffix('|') {
        let input = operand(pipe).trim();
        if input.is_empty() {
            return None;
        }
        return Some(Probe {
            expr: format!("({input}) | map({root} => {receiver}) | first()"),
            input: input.to_string(),
        });
    }
    // Not piped: the input is the call's first argument.
    let args = &head[paren + 1..arrow];
    let first = first_argument(args)?;
    Some(Probe {
        expr: format!("map({first}, {root} => {receiver}) | first()"),
        input: first.to_string(),
    })
}

/// The offset of `root =>` (a lambda binding `root`) last in `head`.
fn lambda_of(head: &str, root: &str) -> Option<usize> {
    let mut found = None;
    for (i, _) in head.match_indices(root) {
        let clear_before = !head[..i].ends_with(is_ident_char);
        let after = head[i + root.len()..].trim_start();
        if clear_before && after.starts_with("=>") {
            found = Some(i);
        }
    }
    found
}

/// The argument before the first top-level `,` in `args`, when there is one.
fn first_argument(args: &str) -> Option<&str> {
    let mut depth = 0;
    for (i, c) in args.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                let first = args[..i].trim();
                return (!first.is_empty()).then_some(first);
            }
            _ => {}
        }
    }
    None
}

/// The pipeline operand that ends `text`: back to an open bracket, a `,`,
/// a `let … =`, a statement keyword, or the end of an earlier statement.
fn operand(text: &str) -> &str {
    let mut depth = 0;
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate().rev() {
        let prev = k.checked_sub(1).map(|p| chars[p].1);
        let next = chars.get(k + 1).map(|n| n.1);
        match c {
            ')' | ']' | '}' => depth += 1,
            '(' | '[' | '{' if depth == 0 => {
                start = i + 1;
                break;
            }
            '(' | '[' | '{' => depth -= 1,
            ',' if depth == 0 => {
                start = i + 1;
                break;
            }
            '=' if depth == 0
                && !matches!(prev, Some('=' | '!' | '<' | '>'))
                && !matches!(next, Some('=' | '>')) =>
            {
                start = i + 1;
                break;
            }
            // A line break ends the operand unless the next line continues
            // it (nothing after it: the `|` this operand comes before).
            '\n' if depth == 0
                && !text[i + 1..].trim().is_empty()
                && !continues_entry(&text[i + 1..]) =>
            {
                start = i + 1;
                break;
            }
            _ => {}
        }
    }
    let operand = text[start..].trim_start();
    for keyword in ["check ", "require ", "warn "] {
        if let Some(rest) = operand.strip_prefix(keyword) {
            return rest;
        }
    }
    operand
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::memory::MemHost;
    use std::rc::Rc;

    fn session(entries: &[&str]) -> Session {
        let mut s = Session::new(Rc::new(MemHost::new(&[], None)));
        let mut out = Vec::new();
        let mut err = Vec::new();
        let mut sinks = Sinks::plain(&mut out, &mut err);
        for (i, e) in entries.iter().enumerate() {
            let status = s.submit(&format!("<t{i}>"), e, &mut sinks, &mut |_, _| Ok(()));
            assert_eq!(status, 0, "{e}: {}", String::from_utf8_lossy(&err));
        }
        s
    }

    fn offered(s: &mut Session, line: &str) -> (usize, Vec<String>) {
        let (start, found) = complete(s, line, line.len());
        (start, found.into_iter().map(|c| c.replacement).collect())
    }

    const SIGHTING: &str = "type Sighting : Data = {\n species: String\n seen: String\n}";

    #[test]
    fn keywords_builtins_and_names() {
        let mut s = session(&["let sightings_seen = 3"]);
        assert_eq!(offered(&mut s, "coun").1, vec!["count", "count_by"]);
        assert_eq!(offered(&mut s, "1 + sightings_").1, vec!["sightings_seen"]);
        assert_eq!(offered(&mut s, "le"), (0, vec!["len".into(), "let".into()]));
        assert_eq!(offered(&mut s, "Flo").1, vec!["Float"]);
        assert!(offered(&mut s, "1 + ").1.is_empty());
    }

    #[test]
    fn measures_inside_an_expect_condition() {
        let mut s = session(&[]);
        let head = "type T : DataContract = {\n  email?: String\n  placed: Timestamp\n";
        let at = |line: &str| format!("{head}{line}");
        let mut offered = |line: &str| offered(&mut s, &at(line)).1;
        assert_eq!(offered("  expect ro"), vec!["rows"]);
        assert_eq!(offered("  expect fai"), vec!["failures"]);
        assert_eq!(offered("  expect mi"), vec!["min(", "missing("]);
        assert_eq!(offered("  expect w"), vec!["warn"]);
        assert_eq!(offered("  expect warn du"), vec!["duplicates("]);
        assert_eq!(offered("  expect budget: a"), vec!["age(", "and", "avg("]);
        assert_eq!(offered("  expect rows >= 1 o"), vec!["or", "orphans("]);
        assert_eq!(offered("  expect missing(em"), vec!["email"]);
        assert_eq!(offered("  expect fresh: age(p"), vec!["placed"]);
        // Outside an expectation, measures are no words of their own.
        assert_eq!(offered("  require ro"), vec!["round", "route"]);
        assert_eq!(offered("  expected_rows: I"), vec!["Int"]);
    }

    #[test]
    fn declared_types_are_names() {
        let mut s = session(&[SIGHTING]);
        assert_eq!(offered(&mut s, "validate(Sig").1, vec!["Sighting"]);
        assert_eq!(
            offered(&mut s, ":contract Si"),
            (10, vec!["Sighting".into()])
        );
    }

    #[test]
    fn commands() {
        let mut s = session(&[]);
        assert_eq!(
            offered(&mut s, ":h"),
            (1, vec!["help".into(), "hist".into()])
        );
        assert_eq!(offered(&mut s, ":help lo"), (6, vec!["load".into()]));
        assert_eq!(offered(&mut s, ":set format j"), (12, vec!["json".into()]));
        assert_eq!(offered(&mut s, ":type cou").1, vec!["count", "count_by"]);
    }

    #[test]
    fn fields_after_a_dot() {
        let mut s = session(&[
            SIGHTING,
            "let one = Sighting { species: \"wren\", seen: \"dusk\" }",
            "let point = { x: 1, y: 2 }",
        ]);
        assert_eq!(offered(&mut s, "one.").1, vec!["seen", "species"]);
        assert_eq!(offered(&mut s, "one.sp"), (4, vec!["species".into()]));
        assert_eq!(offered(&mut s, "[point.").1, vec!["x", "y"]);
        assert_eq!(offered(&mut s, ":type one.s").1, vec!["seen", "species"]);
        assert!(offered(&mut s, "nothing_here.").1.is_empty());
        assert!(offered(&mut s, "1.").1.is_empty());
    }

    #[test]
    fn completion_offers_a_field_that_is_no_identifier_in_brackets() {
        let mut s = session(&["let movie = {title: \"Heat\", \"US Gross\": 67, \"US Rank\": 3}"]);
        assert_eq!(
            offered(&mut s, "movie."),
            (
                5,
                vec![
                    "[\"US Gross\"]".into(),
                    "[\"US Rank\"]".into(),
                    ".title".into()
                ]
            )
        );
        assert_eq!(
            offered(&mut s, "1 + movie.U"),
            (9, vec!["[\"US Gross\"]".into(), "[\"US Rank\"]".into()])
        );
        assert_eq!(offered(&mut s, "movie.ti"), (6, vec!["title".into()]));
    }

    #[test]
    fn fields_of_a_lambda_parameter() {
        let mut s = session(&[
            SIGHTING,
            "let xs = [{ species: \"wren\", seen: \"dusk\" }] | validate(Sighting) | oks()",
        ]);
        assert_eq!(
            offered(&mut s, "xs | filter(s => s.").1,
            vec!["seen", "species"]
        );
        assert_eq!(
            offered(&mut s, "let n = xs\n| map(s => len(s.sp").1,
            vec!["species"]
        );
        // The README's example.
        assert_eq!(
            offered(
                &mut s,
                "source(file(\"a.jsonl\"), Json) | validate(Sighting) | oks() | count_by(s => s."
            )
            .1,
            vec!["seen", "species"]
        );
        assert_eq!(
            offered(&mut s, "count_by(xs, s => s.").1,
            vec!["seen", "species"]
        );
        assert_eq!(
            offered(
                &mut s,
                "[{ species: \"a\", seen: \"b\" }] | validate(Sighting) | map(r => r.se"
            )
            .1,
            vec!["seen"]
        );
    }

    #[test]
    fn fields_of_the_value_in_hand() {
        let host = MemHost::new(
            &[(
                "cars.json",
                "{\"Name\": \"a\", \"Origin\": {\"country\": \"US\"}}\n{\"Other\": 1}\n",
            )],
            None,
        );
        let mut s = Session::new(Rc::new(host));
        let mut quiet = (Vec::new(), Vec::new());
        let mut sinks = Sinks::plain(&mut quiet.0, &mut quiet.1);
        for entry in [
            "let cars = source(file(\"cars.json\"), Json)",
            "let one = cars | first()",
        ] {
            assert_eq!(s.submit("<t>", entry, &mut sinks, &mut |_, _| Ok(())), 0);
        }
        assert_eq!(offered(&mut s, "one.").1, vec!["Name", "Origin"]);
        assert_eq!(offered(&mut s, "one.Origin.").1, vec!["country"]);
        assert_eq!(offered(&mut s, "cars.N").1, vec!["Name"]);
        assert_eq!(
            offered(&mut s, "cars | filter(c => c.Origin.").1,
            vec!["country"]
        );
        assert!(offered(&mut s, "one.Name.").1.is_empty());
        assert_eq!(
            offered(&mut s, "cars | take(1) | map(c => c.Na").1,
            vec!["Name"]
        );
        assert!(offered(&mut s, "cars | map(c => c.Origin) | map(c => c.Na")
            .1
            .is_empty());
    }

    #[test]
    fn strings_and_comments() {
        let mut s = session(&[]);
        assert!(offered(&mut s, "\"cou").1.is_empty());
        assert!(offered(&mut s, "1 // cou").1.is_empty());
        assert!(offered(&mut s, "lower(\"sr").1.is_empty());
        let (start, found) = offered(&mut s, "source(file(\"sr");
        assert_eq!((start, found), (13, vec!["src/".to_string()]));
        assert!(offered(&mut s, "file(\"src/cli/repl/comp")
            .1
            .contains(&"src/cli/repl/complete.rs\")".to_string()));
        assert_eq!(offered(&mut s, ":load Cargo.t").1, vec!["Cargo.toml"]);
        assert_eq!(offered(&mut s, "import \"Cargo.t").1, vec!["Cargo.toml\""]);
        // What is closed already is not closed again.
        let line = "source(file(\"Cargo.t\"), Json)";
        let (_, found) = complete(&mut s, line, line.find('\"').unwrap() + 8);
        assert_eq!(found[0].replacement, "Cargo.toml");
    }

    #[test]
    fn where_the_cursor_is() {
        assert_eq!(position("a // b"), Position::Comment);
        assert_eq!(position("a // b\nc"), Position::Code);
        assert_eq!(position("f(\"a\\\"b"), Position::Str(2));
        assert_eq!(position("f(\"a\") + \"x\""), Position::Code);
        assert_eq!(operand("let a = xs | oks() "), " xs | oks() ".trim_start());
        assert_eq!(operand("f(1, xs\n| oks()"), "xs\n| oks()");
        assert_eq!(operand("let a = 1\nys"), "ys");
    }
}
