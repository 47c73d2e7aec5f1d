//! Checking one line of JSON against a compiled record contract as it is
//! read, without building the record.
//!
//! Where a pipeline drops the records it validates — `count()` of
//! `validate(T) | oks()`, `report()` of `validate(T)` — all it needs per
//! line is whether the record is valid. [`LineCheck::passes`] answers that
//! in one pass over the bytes: each key is matched to its field by
//! position, scalars are checked on the token (no string is copied, no
//! number parsed unless a rule reads it), fields nobody declared are
//! skipped, and the rules run in one reused frame holding only the fields
//! they read.
//!
//! The answer is one-sided: `true` means `validate` would give `ok` with no
//! warnings; `false` means "not certain", and the caller decodes the line
//! and validates it the ordinary way, which builds every failure exactly.
//! Lines that fail are the minority, so the ordinary path runs seldom.

use std::rc::Rc;

use regex::Regex;

use crate::ast::Severity;
use crate::contract::{Contract, FieldSpec, RecordShape, RuleSpec, Shape, TypeSpec};
use crate::eval::{push_frame, Env, Interp, Slots};
use crate::hir::Expr;
use crate::json::{Decoder, Parser};
use crate::validate::{check_field, Checked};
use crate::value::Value;

/// A record contract compiled for checking lines.
pub struct LineCheck {
    contract: Rc<Contract>,
    fields: Vec<FieldCheck>,
    /// Per field, the line it was last seen on (to spot repeated keys).
    seen: Vec<u32>,
    line: u32,
    /// Undeclared keys seen so far (see `key`).
    extras: Vec<Box<str>>,
    /// Is a line that fails certainly an `err` (see `cannot_raise`)?
    certain: bool,
    decoder: Decoder,
    /// The rules' frame: slot 0 is `self` (never read: see `new`), then
    /// each field. Reused from line to line while nothing else holds it.
    env: Env,
}

/// How one declared field is checked.
struct FieldCheck {
    /// The field's token kinds, when its type is decided by them alone.
    tokens: Option<Tokens>,
    /// Does a rule read the field (its value goes into the frame)?
    read: bool,
    admits_null: bool,
    /// Can the name be compared with a key's bytes (`is_plain`)?
    plain_name: bool,
}

/// The JSON tokens a scalar type admits (null is `FieldCheck::admits_null`):
/// its union members in order, since a value is checked against the first
/// member whose type it has (language.md §4.8).
struct Tokens {
    members: Vec<Member>,
}

enum Member {
    Any,
    Bool,
    Int,
    Number,
    String,
    /// A string literal type: `"open"`.
    Literal(Box<str>),
    /// A `String` refined by `require matches(self, r"…")` rules only.
    Matching(Vec<Rc<Regex>>),
}

impl Tokens {
    /// The tokens of `spec`, when checking the token is all its validation
    /// does: no rules but patterns, no nested records or lists.
    fn of(spec: &TypeSpec) -> Option<Tokens> {
        let mut members = Vec::new();
        flatten(spec, &mut members).then_some(Tokens { members })
    }

    fn admits_string(&self, s: &str) -> bool {
        self.members.iter().find_map(|m| match m {
            Member::Any | Member::String => Some(true),
            Member::Literal(l) if **l == *s => Some(true),
            Member::Matching(patterns) => Some(patterns.iter().all(|r| r.is_match(s))),
            _ => None,
        }) == Some(true)
    }

    fn admits_number(&self, text: &str) -> bool {
        let int = !text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'));
        self.members
            .iter()
            .any(|m| matches!(m, Member::Any | Member::Number) || matches!(m, Member::Int if int))
    }

    fn admits_bool(&self) -> bool {
        self.members
            .iter()
            .any(|m| matches!(m, Member::Any | Member::Bool))
    }

    fn admits_any(&self) -> bool {
        self.members.iter().any(|m| matches!(m, Member::Any))
    }
}

/// Appends the members of `spec` in order; false when one is not decided
/// by its token.
fn flatten(spec: &TypeSpec, members: &mut Vec<Member>) -> bool {
    let member = match spec {
        TypeSpec::Null => return true,
        TypeSpec::Any => Member::Any,
        TypeSpec::Bool => Member::Bool,
        TypeSpec::Int => Member::Int,
        TypeSpec::Float => Member::Number,
        TypeSpec::String => Member::String,
        TypeSpec::Literal(Value::Str(s)) => Member::Literal(s.as_str().into()),
        TypeSpec::Union(ms) => return ms.iter().all(|m| flatten(m, members)),
        TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
            Some(Shape::Refined { base, rules, .. }) if rules.is_empty() => {
                return flatten(base, members)
            }
            Some(Shape::Refined {
                base: TypeSpec::String,
                rules,
                ..
            }) => match rules.iter().map(pattern).collect() {
                Some(patterns) => Member::Matching(patterns),
                None => return false,
            },
            _ => return false,
        },
        TypeSpec::Literal(_) | TypeSpec::List(_) | TypeSpec::Map(_) | TypeSpec::Record(_) => {
            return false
        }
    };
    members.push(member);
    true
}

/// The pattern of a `require matches(self, r"…")` rule.
fn pattern(rule: &RuleSpec) -> Option<Rc<Regex>> {
    match &rule.cond {
        Expr::Matches { subject, regex, .. }
            if rule.severity == Severity::Require
                && matches!(**subject, Expr::Local { depth: 0, slot: 0 }) =>
        {
            Some(regex.clone())
        }
        _ => None,
    }
}

impl LineCheck {
    /// The check for `contract`, when it is a record type whose rules do
    /// not read `self` whole and which claims no unique keys (those depend
    /// on the records before).
    pub fn new(contract: &Rc<Contract>) -> Option<LineCheck> {
        let record = contract.record()?;
        let rules = || record.rules.iter().chain(&record.warns);
        if !record.uniques.is_empty() || rules().any(|r| r.reads_self) {
            return None;
        }
        let mut read = vec![false; record.fields.len()];
        for &slot in rules().flat_map(|r| &r.slots) {
            read[slot as usize] = true;
        }
        let fields = record
            .fields
            .iter()
            .zip(read)
            .map(|(f, read)| FieldCheck {
                tokens: Tokens::of(&f.ty).filter(|_| f.checks.is_empty()),
                read,
                admits_null: f.ty.admits_null(),
                plain_name: is_plain(&f.name),
            })
            .collect();
        let slots: Slots = std::iter::repeat_n(Value::Absent, record.fields.len() + 1).collect();
        Some(LineCheck {
            contract: contract.clone(),
            fields,
            seen: vec![0; record.fields.len()],
            line: 0,
            extras: Vec::new(),
            certain: cannot_raise(record, 0),
            decoder: Decoder::new(),
            env: push_frame(&None, slots),
        })
    }

    /// What `validate` would make of `line`, when that can be told without
    /// building the record.
    pub fn verdict(&mut self, interp: &Rc<Interp>, line: &[u8]) -> Verdict {
        let contract = self.contract.clone();
        let Some(record) = contract.record() else {
            return Verdict::Unsure;
        };
        self.line = self.line.wrapping_add(1);
        if self.line == 0 {
            self.seen.fill(0);
            self.line = 1;
        }
        let outcome = self
            .read(interp, record, line)
            .and_then(|()| self.rules(interp, record));
        match outcome {
            Ok(()) => Verdict::Valid,
            Err(Miss::Invalid) if self.certain => Verdict::Invalid,
            Err(_) => Verdict::Unsure,
        }
    }

    /// Steps 2–4 of §4.8 over the line's bytes: every field present is
    /// checked and those the rules read are put in the frame.
    fn read(&mut self, interp: &Rc<Interp>, record: &RecordShape, line: &[u8]) -> Checking {
        let Some(frame) = self.env.as_mut() else {
            return Err(Miss::Unsure);
        };
        let slots = &mut Rc::make_mut(frame).slots;
        for (i, f) in self.fields.iter().enumerate() {
            if f.read {
                slots[i + 1] = Value::Absent;
            }
        }
        let mut p = Parser::new(line, &mut self.decoder);
        // Not an object: `validate` fails it, or it does not decode.
        if p.peek_token().ok() != Some(b'{') {
            return Err(Miss::Invalid);
        }
        p.open()?;
        let mut next = 0;
        if p.peek_token()? != b'}' {
            loop {
                match key(&mut p, record, &self.fields, &mut self.extras, next)? {
                    Some(i) => {
                        if self.seen[i] == self.line {
                            // A repeated key: the last value counts.
                            return Err(Miss::Unsure);
                        }
                        self.seen[i] = self.line;
                        let spec = &record.fields[i];
                        field(interp, &self.fields[i], spec, &mut p, &mut slots[i + 1])
                            .map_err(|miss| unless_repeated(miss, line, &spec.name))?;
                        next = i + 1;
                    }
                    None if record.open => p.skip_value()?,
                    None => return Err(Miss::Invalid),
                }
                match p.peek_token()? {
                    b',' => p.bump(),
                    b'}' => break,
                    _ => return Err(Miss::Invalid),
                }
            }
        }
        p.bump();
        if !p.at_end() {
            return Err(Miss::Invalid);
        }
        // Fields the line left out: optional ones stay absent, defaults
        // are filled and checked as `validate` does.
        for (i, spec) in record.fields.iter().enumerate() {
            if self.seen[i] == self.line {
                continue;
            }
            match &spec.default {
                Some(d) => {
                    let v = interp.eval(d, &None).map_err(|_| Miss::Unsure)?;
                    let v = checked(interp, spec, v.stored())?;
                    if self.fields[i].read {
                        slots[i + 1] = v;
                    }
                }
                None if spec.optional => {}
                None => return Err(Miss::Invalid),
            }
        }
        Ok(())
    }

    /// Steps 5 and 7: the rules, in the frame `read` filled. A warning
    /// is left to the ordinary path, which names it.
    fn rules(&self, interp: &Rc<Interp>, record: &RecordShape) -> Checking {
        let holds = |r: &RuleSpec| {
            matches!(
                interp.eval(&r.cond, &self.env),
                Ok(Value::Bool(true) | Value::Absent)
            )
        };
        if !record.rules.iter().all(holds) {
            return Err(Miss::Invalid);
        }
        if !record.warns.iter().all(holds) {
            return Err(Miss::Unsure);
        }
        Ok(())
    }
}

/// What `validate` would make of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// `ok`, with no warnings.
    Valid,
    /// `err`.
    Invalid,
    /// Only the ordinary path can tell (a warning, a repeated key, a
    /// default or check that may raise an error).
    Unsure,
}

/// Why a line is not (yet) known to be valid.
enum Miss {
    /// `validate` fails it: it breaks a rule, has a field of the wrong
    /// type, or is not JSON. Certain when nothing in the contract can
    /// raise a runtime error instead (see `cannot_raise`).
    Invalid,
    Unsure,
}

type Checking = Result<(), Miss>;

/// A field that fails makes the line fail unless the key comes again
/// later, whose value would count instead: when the line may hold the key
/// twice (it names it twice, or has an escape that could spell it), only
/// the ordinary path can tell.
fn unless_repeated(miss: Miss, line: &[u8], name: &str) -> Miss {
    let quoted = format!("\"{name}\"");
    let mentions = line
        .windows(quoted.len())
        .filter(|w| *w == quoted.as_bytes())
        .count();
    match miss {
        Miss::Invalid if mentions < 2 && !line.contains(&b'\\') => Miss::Invalid,
        _ => Miss::Unsure,
    }
}

/// JSON that does not decode fails validation.
impl From<crate::json::Fault> for Miss {
    fn from(_: crate::json::Fault) -> Miss {
        Miss::Invalid
    }
}

/// Can validating against `record` only ever give `ok` or `err`? Defaults
/// and `validate … with` checks evaluate code that may raise a runtime
/// error, which stops the program instead; a type nested deeper than a
/// few levels (or recursive) is not looked into.
fn cannot_raise(record: &RecordShape, depth: usize) -> bool {
    depth < 8
        && record.fields.iter().all(|f| {
            f.default.is_none() && f.checks.is_empty() && type_cannot_raise(&f.ty, depth + 1)
        })
}

fn type_cannot_raise(spec: &TypeSpec, depth: usize) -> bool {
    match spec {
        TypeSpec::List(t) | TypeSpec::Map(t) => type_cannot_raise(t, depth),
        TypeSpec::Record(shape) => cannot_raise(shape, depth),
        TypeSpec::Union(ms) => ms.iter().all(|m| type_cannot_raise(m, depth)),
        TypeSpec::Named(cell) => match cell.get().map(|c| &c.shape) {
            Some(Shape::Record { record, .. }) => cannot_raise(record, depth),
            Some(Shape::Refined { base, .. }) => depth < 8 && type_cannot_raise(base, depth + 1),
            None => false,
        },
        _ => true,
    }
}

/// The key at the parser and its `:`, as the position of its declared
/// field (`None` for an undeclared one). The field after the one before
/// (`next`) is tried first, then the undeclared keys seen before: lines of
/// one file tend to keep one order and one set of extra fields, and
/// comparing bytes is cheaper than hashing them.
fn key(
    p: &mut Parser,
    record: &RecordShape,
    checks: &[FieldCheck],
    extras: &mut Vec<Box<str>>,
    next: usize,
) -> Result<Option<usize>, Miss> {
    if p.peek_token()? != b'"' {
        return Err(Miss::Invalid);
    }
    // Written with no escapes, a key is found by its bytes: first the field
    // after the one before, then the undeclared keys seen before, then any
    // field of a small record.
    let plain = |p: &mut Parser, i: usize| match (record.fields.get(i), checks.get(i)) {
        (Some(f), Some(c)) => c.plain_name && p.eat_plain_string(f.name.as_bytes()),
        _ => false,
    };
    let few = record.fields.len() <= FEW_FIELDS;
    let i = if plain(p, next) {
        Some(next)
    } else if extras.iter().any(|e| p.eat_plain_string(e.as_bytes())) {
        None
    } else if let Some(i) = (0..record.fields.len()).find(|&i| few && plain(p, i)) {
        Some(i)
    } else {
        let name = p.string()?;
        let i = record.index.get(&*name).map(|&i| i as usize);
        if i.is_none() && extras.len() < MAX_EXTRAS && is_plain(&name) {
            extras.push(name.into());
        }
        i
    };
    p.colon()?;
    Ok(i)
}

/// Is `name` written in JSON as itself between quotes (no character in
/// it needs an escape)? Only then can its bytes be compared with a key's.
fn is_plain(name: &str) -> bool {
    !name.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20)
}

/// Up to how many fields a key is looked for by its bytes in every
/// field before it is hashed.
const FEW_FIELDS: usize = 16;

/// How many undeclared keys a check remembers.
const MAX_EXTRAS: usize = 32;

/// The value of a field after `check_field`, when it is clean.
fn checked(interp: &Rc<Interp>, spec: &FieldSpec, v: Value) -> Result<Value, Miss> {
    match check_field(interp, spec, v) {
        Ok(Checked::Clean(v)) => Ok(v),
        Ok(Checked::Failed) => Err(Miss::Invalid),
        Ok(Checked::Warned) | Err(_) => Err(Miss::Unsure),
    }
}

/// Step 3 for one field's value: null and type, then its checks. Writes
/// the value to `slot` when a rule reads it.
fn field(
    interp: &Rc<Interp>,
    check: &FieldCheck,
    spec: &FieldSpec,
    p: &mut Parser,
    slot: &mut Value,
) -> Checking {
    let byte = p.peek_token()?;
    if byte == b'n' {
        p.literal("null", ())?;
        if !check.admits_null {
            return Err(Miss::Invalid);
        }
        if check.read {
            *slot = Value::Null;
        }
        return Ok(());
    }
    let Some(tokens) = &check.tokens else {
        // Rules, nested records, lists: decode the value, check it as
        // `validate` does.
        let v = checked(interp, spec, p.value()?)?;
        if check.read {
            *slot = v;
        }
        return Ok(());
    };
    let value = match byte {
        b'"' => {
            let s = p.string()?;
            if !tokens.admits_string(&s) {
                return Err(Miss::Invalid);
            }
            check.read.then(|| Value::str(s))
        }
        b'-' | b'0'..=b'9' => {
            let text = p.number_text()?;
            if !tokens.admits_number(text) {
                return Err(Miss::Invalid);
            }
            check.read.then(|| Value::from_number_text(text))
        }
        b't' | b'f' if tokens.admits_bool() => {
            let truth = byte == b't';
            p.literal(if truth { "true" } else { "false" }, ())?;
            Some(Value::Bool(truth))
        }
        _ if tokens.admits_any() && check.read => Some(p.value()?),
        _ if tokens.admits_any() => {
            p.skip_value()?;
            None
        }
        _ => return Err(Miss::Invalid),
    };
    if let Some(v) = value {
        *slot = v;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The line check against the ordinary path, over many lines: valid
    //! ones, and each of them broken in the ways data arrives broken.

    use std::io::BufRead;

    use super::*;
    use crate::eval::{Host, Tally};
    use crate::session::{Session, Sinks};
    use crate::validate::{findings, validate_value};

    struct NoFiles;

    impl Host for NoFiles {
        fn open_file(&self, path: &str) -> std::io::Result<Box<dyn BufRead>> {
            Err(std::io::Error::other(format!("no file {path} here")))
        }

        fn stdin(&self) -> Option<Box<dyn BufRead>> {
            None
        }
    }

    fn session(declarations: &str) -> Session {
        let mut session = Session::new(Rc::new(NoFiles));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut sinks = Sinks {
            out: &mut out,
            err: &mut err,
            color: false,
        };
        let status = session.submit("decl.hql", declarations, &mut sinks, &mut |_, _| Ok(()));
        assert_eq!(status, 0, "{}", String::from_utf8_lossy(&err));
        session
    }

    /// What the ordinary path makes of a line.
    #[derive(Debug, PartialEq)]
    enum Outcome {
        Clean,
        Warned,
        Failed,
        Raised,
    }

    fn ordinary(interp: &Rc<Interp>, c: &Rc<Contract>, line: &str) -> Outcome {
        let Ok(v) = Decoder::new().decode(line.as_bytes()) else {
            return Outcome::Failed;
        };
        match validate_value(interp, c, v, None, None) {
            Ok(Value::Ok(ok)) if ok.warnings.is_empty() => Outcome::Clean,
            Ok(Value::Ok(_)) => Outcome::Warned,
            Ok(_) => Outcome::Failed,
            Err(_) => Outcome::Raised,
        }
    }

    /// A small deterministic generator (xorshift).
    struct Dice(u64);

    impl Dice {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Values that stand in for a field's value when a line is broken.
    const ODD_VALUES: &[&str] = &[
        "null",
        "true",
        "false",
        "0",
        "-0",
        "7",
        "-3",
        "1.50",
        "2.5e3",
        "99999999999999999999",
        "\"\"",
        "\"open\"",
        "\"op\\u0065n\"",
        "\"a@b.co\"",
        "\"not an email\"",
        "\"tab\\there\"",
        "\"\u{e9}t\u{e9}\"",
        "[]",
        "[1, 2]",
        "[\"x\", null]",
        "{}",
        "{\"city\": \"Oslo\", \"zip\": 1}",
        "{\"city\": 3}",
        "tru",
        "01",
        "\"unterminated",
        "[1,",
    ];

    /// Break `line` (a JSON object written with `", "` between fields) in
    /// one of several ways.
    fn mutate(line: &str, dice: &mut Dice) -> String {
        let Some(inner) = line.strip_prefix('{').and_then(|l| l.strip_suffix('}')) else {
            return format!("{line}}}");
        };
        let mut fields: Vec<String> = if inner.is_empty() {
            vec![]
        } else {
            inner.split(", ").map(str::to_string).collect()
        };
        let n = fields.len().max(1);
        match dice.below(9) {
            0 if !fields.is_empty() => {
                fields.remove(dice.below(n));
            }
            1 if !fields.is_empty() => {
                let f = fields[dice.below(n)].clone();
                fields.push(f);
            }
            2 | 3 if !fields.is_empty() => {
                let i = dice.below(n);
                let key = fields[i].split(':').next().unwrap_or("\"k\"").to_string();
                let value = ODD_VALUES[dice.below(ODD_VALUES.len())];
                fields[i] = format!("{key}: {value}");
            }
            4 => fields.push(format!(
                "\"extra{}\": {}",
                dice.below(3),
                ODD_VALUES[dice.below(ODD_VALUES.len())]
            )),
            5 if fields.len() > 1 => fields.swap(0, n - 1),
            6 => return line[..dice.below(line.len())].to_string(),
            7 => return format!("  {line}\t "),
            8 if !fields.is_empty() => {
                // The same key, its first letter written as an escape.
                let i = dice.below(n);
                let first = fields[i].chars().nth(1).unwrap_or('k');
                fields[i] = format!("\"\\u{:04x}{}", first as u32, &fields[i][2..]);
            }
            _ => return format!("[{line}]"),
        }
        format!("{{{}}}", fields.join(", "))
    }

    /// Does the line's top-level object have a key twice?
    fn repeats_a_key(line: &str) -> bool {
        let mut decoder = Decoder::new();
        let mut p = Parser::new(line.as_bytes(), &mut decoder);
        let mut keys = Vec::new();
        if p.peek_token().ok() != Some(b'{') || p.open().is_err() {
            return false;
        }
        while let Ok(b'"') = p.peek_token() {
            let Ok(key) = p.string() else { break };
            if keys.contains(&key) {
                return true;
            }
            keys.push(key);
            if p.colon().is_err() || p.skip_value().is_err() || p.peek_token().ok() != Some(b',') {
                break;
            }
            p.bump();
        }
        false
    }

    /// Check `lines` and broken copies of them against `name`: the line
    /// check never claims what the ordinary path denies, decides every line
    /// it can, and `report()`'s findings count as the results do.
    pub(super) fn agree(declarations: &str, name: &str, lines: &[&str]) {
        let session = session(declarations);
        let interp = session.interp().clone();
        let contract = session.contract(name).expect("declared");
        let mut check = LineCheck::new(&contract).expect("a line check");
        let mut dice = Dice(0x9E37_79B9_7F4A_7C15);
        let mut cases: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        for _ in 0..10_000 {
            let base = lines[dice.below(lines.len())];
            let once = mutate(base, &mut dice);
            cases.push(if once.starts_with('{') && dice.below(2) == 0 {
                mutate(&once, &mut dice)
            } else {
                once
            });
        }
        let (mut by_value, mut by_findings) = (Tally::default(), Tally::default());
        let mut decided = [0; 3];
        for line in &cases {
            let expected = ordinary(&interp, &contract, line);
            let verdict = check.verdict(&interp, line.as_bytes());
            match verdict {
                Verdict::Valid => assert_eq!(expected, Outcome::Clean, "{line}"),
                Verdict::Invalid => assert_eq!(expected, Outcome::Failed, "{line}"),
                Verdict::Unsure => {}
            }
            decided[verdict as usize] += 1;
            // Only a repeated key, a warning or a contract that may raise
            // leaves a clean or failing line undecided.
            let named_twice = contract.record().is_some_and(|r| {
                r.fields
                    .iter()
                    .any(|f| line.matches(&format!("\"{}\"", f.name)).count() > 1)
            });
            if !repeats_a_key(line) && !named_twice {
                match expected {
                    Outcome::Clean => assert_eq!(verdict, Verdict::Valid, "{line}"),
                    // A failing field is taken as final only when the
                    // line cannot name it again (`unless_repeated`).
                    Outcome::Failed if check.certain && !line.contains('\\') => {
                        assert_eq!(verdict, Verdict::Invalid, "{line}")
                    }
                    _ => {}
                }
            }
            if let Ok(v) = Decoder::new().decode(line.as_bytes()) {
                if let Ok(result) = validate_value(&interp, &contract, v.clone(), None, None) {
                    by_value.add(&result);
                    by_findings.add_findings(&findings(&interp, &contract, &v).expect("same run"));
                }
            }
        }
        eprintln!("{name}: valid, invalid, unsure = {decided:?}");
        assert!(decided[Verdict::Valid as usize] > 100, "{decided:?}");
        assert_eq!(
            crate::print::to_hql(&by_value.into_value()),
            crate::print::to_hql(&by_findings.into_value())
        );
    }
}

#[cfg(test)]
mod agreement {
    use super::tests::agree;

    #[test]
    fn orders() {
        agree(
            r#"type OrderEmail = String require well_formed: matches(self, r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
type Order : DataContract = {
    order_id: String
    status: "open" | "shipped" | "cancelled"
    amount: Float
    customer_email?: OrderEmail | Null
    low: Int
    high: Int
    require non_negative_amount: amount >= 0
    require ordered_bounds: low <= high
}"#,
            "Order",
            &[
                r#"{"order_id": "A1", "status": "open", "amount": 12.5, "customer_email": "a@b.co", "low": 1, "high": 2}"#,
                r#"{"order_id": "A2", "status": "shipped", "amount": 0, "low": 5, "high": 5, "channel": "web"}"#,
                r#"{"order_id": "A3", "status": "cancelled", "amount": 1e2, "customer_email": null, "low": -1, "high": 9}"#,
            ],
        );
    }
}

#[cfg(test)]
mod agreement_more {
    use super::tests::agree;

    /// Closed, with a nested record, a list, a map, a default, a check, a
    /// warning and an optional field a rule reads: the contract may raise,
    /// so failures are left to the ordinary path.
    #[test]
    fn closed_nested_defaults_checks_and_warnings() {
        agree(
            r#"fn short(s) = len(s) < 12
type Place : Type = { city: String, zip?: Int }
type Visit : TypeContract = {
    id: Int | String
    flag: Bool = false
    place: Place
    tags: List[String]
    scores?: Map[Float]
    note?: String
    anything?: Any
    validate id with short
    require tagged: len(tags) > 0 or flag
    warn noted: note? != "todo"
}"#,
            "Visit",
            &[
                r#"{"id": 1, "flag": true, "place": {"city": "Oslo"}, "tags": [], "note": "x"}"#,
                r#"{"id": "v-2", "place": {"city": "Rome", "zip": 100}, "tags": ["a", "b"], "scores": {"x": 1.5}}"#,
                r#"{"id": 3, "place": {"city": "Lima"}, "tags": ["c"], "anything": [1, {"k": null}], "note": "todo"}"#,
            ],
        );
    }

    /// Open, unions of scalars and literals, an alias, `Any`, and rules
    /// over optional fields.
    #[test]
    fn unions_aliases_and_optional_reads() {
        agree(
            r#"type Code = String
type Reading : DataContract = {
    sensor: Code
    kind: "temp" | "wind" | 3
    value: Int | Float | Null
    ok?: Bool
    raw?: Any
    require when_ok: not ok? or value? != null
    require bounded: value? == null or value? < 1000
}"#,
            "Reading",
            &[
                r#"{"sensor": "s1", "kind": "temp", "value": 12, "ok": true}"#,
                r#"{"sensor": "s2", "kind": 3, "value": null, "raw": {"a": [1, 2]}}"#,
                r#"{"sensor": "s3", "kind": "wind", "value": 7.25, "ok": false, "raw": "x"}"#,
            ],
        );
    }
}
