//! Rendering every phase's errors as `miette` diagnostics — the one place
//! where errors become text. Each error keeps its data; here it gets a code,
//! a message, a labelled span and a help line where the fix is known.

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, MietteError,
    MietteSpanContents, Report, Severity, SourceCode, SourceSpan, SpanContents,
};

use crate::check::{CheckError, CheckWarning};
use crate::runtime::eval::RuntimeError;
use crate::runtime::value::article;
use crate::session::config::ConfigError;
use crate::session::Sinks;
use crate::syntax::ast::Span;
use crate::syntax::lexer::LexErrorKind;
use crate::syntax::parser::ParseError;
use crate::syntax::source::SourceMap;

/// A diagnostic, ready to render.
#[derive(Debug, Clone, PartialEq)]
pub struct Diag {
    pub code: &'static str,
    pub message: String,
    pub span: Option<Span>,
    pub label: String,
    pub help: Option<String>,
    pub warning: bool,
}

impl Diag {
    fn error(
        code: &'static str,
        message: impl Into<String>,
        span: Span,
        label: impl Into<String>,
    ) -> Diag {
        Diag {
            code,
            message: message.into(),
            span: Some(span),
            label: label.into(),
            help: None,
            warning: false,
        }
    }

    fn help(mut self, help: impl Into<String>) -> Diag {
        self.help = Some(help.into());
        self
    }

    fn help_opt(mut self, help: Option<String>) -> Diag {
        self.help = help;
        self
    }
}

impl Diag {
    /// A failed expectation told on a line of its own (language.md §4.11):
    /// an `expect warn`, or an error one beside the first, whose
    /// diagnostic stops the run.
    pub fn expectation(message: String, warning: bool) -> Diag {
        Diag {
            code: "hql::expectation",
            message,
            span: None,
            label: String::new(),
            help: None,
            warning,
        }
    }

    /// `import "x.hql"` of a file that cannot be read.
    pub fn import_missing(path: &str, resolved: &str, reason: &str, span: Span) -> Diag {
        Diag::error(
            "hql::import",
            format!("cannot import `{path}`: {reason}"),
            span,
            format!("looked for {resolved}"),
        )
        .help("an import's path is relative to the file that imports it")
    }

    /// A file that imports itself, directly or through others.
    pub fn import_cycle(path: &str, span: Span) -> Diag {
        Diag::error(
            "hql::import_cycle",
            format!("importing `{path}` makes a cycle"),
            span,
            "imported again here",
        )
        .help("move the declarations both files need into a third file that both import")
    }

    /// A `let` that a declaration needs but that reads or writes the world
    /// outside, met by a command that reads declarations only.
    pub fn impure_let(name: &str, by: &str, builtin: &str, span: Span) -> Diag {
        Diag::error(
            "hql::impure_let",
            format!(
                "`{name}` is needed by type `{by}` but calls `{builtin}`, which reads or \
                 writes outside the program"
            ),
            span,
            format!("`{name}` calls `{builtin}`"),
        )
        .help(
            "`hql check`, `diff`, `export`, `contract`, `vet`, `infer` and `fmt` read \
             declarations only and never run such a `let`: give it a constant value, or \
             pass the value to the rule or default another way",
        )
    }

    /// A bad `hql.toml`, an id it does not configure, or a path `--confine`
    /// refuses: `hql::config`, at the key's line and column when they are
    /// known — then the file's text is added to `map`, for the excerpt.
    pub fn config(e: &ConfigError, map: &mut SourceMap) -> Diag {
        let key = match e.key.as_str() {
            "" => String::new(),
            key => format!("`{key}`: "),
        };
        match &e.at {
            Some(at) => {
                let base = map.add(&e.file.to_string_lossy(), &at.text);
                let span = base + at.span.start..base + at.span.end;
                Diag::error("hql::config", format!("{key}{}", e.message), span, "here")
                    .help_opt(e.help.clone())
            }
            None => Diag {
                code: "hql::config",
                message: format!("{}: {key}{}", e.file.display(), e.message),
                span: None,
                label: String::new(),
                help: e.help.clone(),
                warning: false,
            },
        }
    }

    /// A `check` whose condition was false or absent (exit status 1).
    pub fn check_failed(label: &str, span: Span, operands: Option<String>) -> Diag {
        let detail = operands.unwrap_or_else(|| NO_OPERANDS.into());
        Diag::error(
            "hql::check_failed",
            format!("check failed: {label}"),
            span,
            detail,
        )
    }
}

/// The detail of a failed `check` that compared no two operands.
const NO_OPERANDS: &str = "the condition does not hold";

/// The message as the JSON form writes it: a failed `check`'s keeps its
/// operands, which a report for people shows under the line instead
/// (`check failed: few bad orders (left 12, right 10)`).
fn json_message(diag: &Diag) -> String {
    if diag.code == "hql::check_failed" && diag.label != NO_OPERANDS {
        format!("{} ({})", diag.message, diag.label)
    } else {
        diag.message.clone()
    }
}

fn did_you_mean(candidates: &[String]) -> Option<String> {
    match candidates {
        [] => None,
        [one] => Some(format!("did you mean `{one}`?")),
        many => Some(format!(
            "did you mean one of {}?",
            many.iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

impl From<&ParseError> for Diag {
    fn from(e: &ParseError) -> Diag {
        match e {
            ParseError::Lex(l) => match &l.kind {
                LexErrorKind::UnexpectedChar => Diag::error("hql::lex", "unexpected character", l.span.clone(), "not part of any token")
                    .help("comments start with `//`"),
                LexErrorKind::UnterminatedString => Diag::error("hql::lex", "unterminated string", l.span.clone(), "this string is never closed")
                    .help("close it with `\"` on the same line"),
                LexErrorKind::BadEscape { escape, .. } => Diag::error("hql::lex", format!("unknown escape `{escape}`"), l.span.clone(), "here")
                    .help("the escapes are \\\" \\\\ \\n \\r \\t \\0 \\u{…}; write regexes as raw strings: r\"\\d+\""),
                LexErrorKind::Spelled { written, meant } => Diag::error("hql::lex", format!("`{written}` is not an HQL operator"), l.span.clone(), format!("write `{meant}`"))
                    .help(format!("use `{meant}`: HQL writes `and`, `or` and `not` as words")),
                LexErrorKind::SingleQuoted => Diag::error("hql::lex", "strings use double quotes", l.span.clone(), "single-quoted")
                    .help("write \"text\" (and r\"…\" for a regex)"),
            },
            ParseError::Unexpected { found, expected, span, help } => {
                let label = expected_text(expected);
                Diag::error("hql::parse", format!("unexpected {found}"), span.clone(), label).help_opt(help.clone())
            }
            ParseError::UnexpectedEnd { expected, span } => {
                Diag::error("hql::parse", "the statement ends too early", span.clone(), expected_text(expected))
            }
            ParseError::TooDeep { span } => {
                let limit = crate::syntax::limits::MAX_DEPTH;
                Diag::error("hql::too_deep", format!("this statement nests deeper than {limit} levels"), span.clone(), format!("level {} starts here", limit + 1))
                    .help(format!("a statement may nest {limit} levels: each bracket, operator, call, field access, pipeline stage, `if`, lambda and type argument inside another is one; name inner parts with `let` or `fn`"))
            }
            ParseError::Unclosed { span, open, close } => {
                Diag::error("hql::parse", format!("this `{open}` is never closed"), span.clone(), format!("`{close}` missing for this `{open}`"))
                    .help(format!("close it with `{close}`; until then the statement runs on into the lines after it"))
            }
            ParseError::PipeNotCall { span, help } => {
                Diag::error("hql::pipe", "the right side of `|` must be a call", span.clone(), "not a call").help(help.clone())
            }
        }
    }
}

fn expected_text(expected: &[String]) -> String {
    match expected.len() {
        0 => "here".into(),
        1..=6 => format!("expected {}", expected.join(", ")),
        _ => format!("expected {}, …", expected[..6].join(", ")),
    }
}

impl From<&CheckError> for Diag {
    fn from(e: &CheckError) -> Diag {
        use CheckError::*;
        match e {
            UnknownName { name, span, candidates } => {
                Diag::error("hql::unknown_name", format!("unknown name `{name}`"), span.clone(), "not declared").help_opt(did_you_mean(candidates))
            }
            MemberNotAllowed { member, kind, span } => Diag::error(
                "hql::member_not_allowed",
                format!("a `{}` type cannot have {member}", kind.name()),
                span.clone(),
                format!("{member} needs a contract kind"),
            )
            .help(format!("declare the type as `{}` to give it rules, defaults, checks, unique keys and expectations", kind.as_contract().name())),
            OptionalWithoutMark { field, span } => Diag::error(
                "hql::optional_without_mark",
                format!("field `{field}` may be absent or null, and this reads it without `?`"),
                span.clone(),
                "may be absent",
            )
            .help(format!("write `{field}?`: the rule then holds when `{field}` is absent, or test presence with `{field}? and …`")),
            DefaultType { field, expected, span } => Diag::error(
                "hql::default_type",
                format!("the default of `{field}` does not match its type {expected}"),
                span.clone(),
                format!("expected {expected}"),
            )
            .help(format!("give `{field}` a default of type {expected}, or change the field's type")),
            DefaultBreaks { field, rule, span } => Diag::error(
                "hql::default_type",
                format!("the default of `{field}` breaks `{rule}`"),
                span.clone(),
                format!("fails {rule}"),
            )
            .help(format!("a default is checked like any value of its field each time it is filled: give `{field}` one that passes")),
            Arity { name, min, max, found, span } => {
                let takes = if min == max { format!("{min}") } else { format!("{min} to {max}") };
                let d = Diag::error(
                    "hql::arity",
                    format!("`{name}` takes {takes} argument{}, got {found}", if *max == 1 { "" } else { "s" }),
                    span.clone(),
                    "in this call",
                );
                d.help("in a pipeline `xs | f(a)` the left side is the first argument: it is `f(xs, a)`")
            }
            UnknownNamedArg { name, func, span, candidates } => Diag::error(
                "hql::unknown_named_argument",
                format!("`{func}` has no parameter named `{name}`"),
                span.clone(),
                "unknown",
            )
            .help_opt(did_you_mean(candidates)),
            FormatOption { message, help, span } => Diag::error(
                "hql::format_option",
                message.clone(),
                span.clone(),
                "here",
            )
            .help(help.clone()),
            MissingNamedArg { name, func, span } => Diag::error(
                "hql::missing_named_argument",
                format!("`{func}` needs the named argument `{name}`"),
                span.clone(),
                "missing",
            )
            .help(format!("pass it by name: `{func}(…, {name}: …)`")),
            WriteResults { span } => Diag::error(
                "hql::write_results",
                "`write` takes values, not results",
                span.clone(),
                "a stream of `ok`/`err`",
            )
            .help(crate::runtime::builtins::WRITE_RESULTS_HELP),
            RepeatedNamedArg { name, span } => {
                Diag::error("hql::repeated_named_argument", format!("`{name}` is given twice"), span.clone(), "again here")
            }
            IntOutOfRange { span } => Diag::error("hql::int_out_of_range", "integer literal out of range", span.clone(), "beyond 64 bits")
                .help("an Int is 64 bits; write a Float (`1e20`) for larger numbers"),
            InvalidRegex { message, span } => {
                Diag::error("hql::invalid_regex", "invalid regular expression", span.clone(), "does not compile").help(first_line(message))
            }
            Duplicate { what, name, span, .. } => {
                Diag::error("hql::duplicate", format!("{what} `{name}` is declared twice"), span.clone(), "declared again here")
                    .help("give one of them another name")
            }
            NotAType { name, span, found: None } => Diag::error("hql::not_a_type", format!("`{name}` is not a declared type"), span.clone(), "expected a type name")
                .help("declare it first: `type T : DataContract = { … }`, or an alias `type T = String | Null`"),
            NotAType { name, span, found: Some(found) } => Diag::error("hql::not_a_type", format!("`{name}` is not a type: it is {}", article(found)), span.clone(), "expected a type name")
                .help("`validate` takes the name of a declared type: `validate(T)`"),
            InheritanceCycle { name, span } => {
                Diag::error("hql::inheritance_cycle", format!("type `{name}` inherits from itself"), span.clone(), "in this cycle")
            }
            RedeclaredField { field, parent, span } => Diag::error(
                "hql::redeclared_field",
                format!("field `{field}` is already declared by `{parent}`"),
                span.clone(),
                "declared again",
            )
            .help("a type inherits its parent's fields; remove this one or rename it"),
            UnknownField { field, ty, span, candidates } => {
                let owner = if ty.starts_with(char::is_lowercase) { ty.clone() } else { format!("`{ty}`") };
                Diag::error("hql::unknown_field", format!("{owner} has no field `{field}`"), span.clone(), "not a field").help_opt(did_you_mean(candidates))
            }
            NotARecordParent { name, span } => {
                Diag::error("hql::not_a_record", format!("`{name}` is not a record type"), span.clone(), "cannot inherit from this")
            }
            OperandTypes { op, left, right, span } => Diag::error(
                "hql::operand_types",
                format!("`{op}` cannot take {} and {}", article(left), article(right)),
                span.clone(),
                format!("{left} {op} {right}"),
            )
            .help(operand_help(op)),
            ArgumentType { func, expected, found, span } => Diag::error(
                "hql::argument_type",
                format!("`{func}` expects {expected}, not {}", article(found)),
                span.clone(),
                format!("{found} here"),
            )
            .help(format!("give `{func}` {expected} here (convert with `string(x)`, `int(s)` or `float(s)` where that is meant)")),
            UsedBeforeLet { name, span, .. } => Diag::error("hql::used_before_let", format!("`{name}` is used before its `let`"), span.clone(), "used here")
                .help("move the `let` above this line"),
            TypeCycle { cycle, span } => {
                let path = cycle.iter().chain(cycle.first()).map(String::as_str).collect::<Vec<_>>().join(" → ");
                let head = cycle.first().map(String::as_str).unwrap_or_default();
                Diag::error("hql::type_cycle", format!("type `{head}` is defined in terms of itself: {path}"), span.clone(), "in this cycle")
                    .help("a type may refer to itself only through a record's field, as in `type Tree = { children: List[Tree] }`")
            }
            DuplicateIdentity { id, first, second, span } => {
                let help = if first == second {
                    format!("`{first}` is written twice: remove one")
                } else {
                    "give each rule its own name (`require other_name: …`): a failure names its check by its identity".into()
                };
                Diag::error("hql::duplicate_rule", format!("two checks have the identity `{id}`: `{first}` and `{second}`"), span.clone(), "same identity as an earlier check")
                    .help(help)
            }
            FloatOutOfRange { span } => Diag::error("hql::float_out_of_range", "float literal out of range", span.clone(), "beyond the largest Float")
                .help("a Float is a 64-bit floating-point number: at most about 1.8e308"),
            UnknownAnnotation { name, span, candidates } => {
                let marked: Vec<String> = candidates.iter().map(|c| format!("@{c}")).collect();
                Diag::error("hql::unknown_annotation", format!("unknown annotation `@{name}`"), span.clone(), "not an annotation")
                    .help(did_you_mean(&marked).unwrap_or_else(|| "a type takes `@version(\"…\")` and `@owner(\"…\")`".into()))
            }
            RepeatedAnnotation { name, span } => Diag::error("hql::repeated_annotation", format!("`@{name}` is given twice"), span.clone(), "again here")
                .help(format!("keep one `@{name}(…)` on the type")),
            CallOfType { name, span } => Diag::error("hql::call_of_type", format!("`{name}` is a type, not a function"), span.clone(), "called here")
                .help(format!("to check values against it, write `validate({name})`; to build a value, `{name} {{ … }}`")),
            ConditionType { found, span } => Diag::error("hql::condition_type", format!("a condition must be a Bool, not {}", article(found)), span.clone(), format!("{found} here"))
                .help("compare it (`x > 0`, `x != \"\"`), or test presence with `x?`"),
            NotInExpectation { what, field, span } => {
                let d = Diag::error("hql::expect_form", format!("an expectation cannot hold {what}"), span.clone(), "not a measure, a literal or an operator of an expectation");
                match field {
                    Some(f) => d.help(format!("an expectation judges the whole stream through measures (`missing({f})`, `nulls({f})`, `min({f})`, …); a condition on each record is a rule: `require …`")),
                    None => d.help(EXPECT_FORM_HELP),
                }
            }
            UnknownMeasure { name, span, candidates } => Diag::error("hql::unknown_measure", format!("`{name}` is not a measure"), span.clone(), "not a measure")
                .help(did_you_mean(candidates).unwrap_or_else(|| EXPECT_FORM_HELP.into())),
            MeasureArguments { measure, takes, span } => {
                Diag::error("hql::measure_arguments", format!("`{measure}` is given arguments it does not take"), span.clone(), "here").help(format!("`{measure}` takes {takes}"))
            }
            MeasureFieldType { measure, field, found, expected, span } => Diag::error(
                "hql::measure_type",
                format!("`{measure}` measures {expected}, and `{field}` is {}", article(found)),
                span.clone(),
                format!("{found} here"),
            )
            .help(if *measure == "age" {
                format!("declare `{field}` as a `Date` or a `Timestamp`, or measure a field that is one")
            } else {
                format!("`{measure}` is over a numeric field; a count of values is `distinct({field})`, of missing ones `missing({field})`")
            }),
            MeasurePath { path, found, span } => Diag::error("hql::measure_path", format!("`{path}` is {}, not a record", article(found)), span.clone(), "no field here")
                .help("a measure's path goes into nested records only (`address.city`), not into lists or other values"),
            ShareOfNonCount { found, span } => {
                let message = match found {
                    Some(other) => format!("a share of the rows is compared with {other}, not a count"),
                    None => "a share of the rows stands outside a comparison with a count".into(),
                };
                Diag::error("hql::expect_share", message, span.clone(), "a share of `rows`")
                    .help("`5%` is a share of `rows`: compare a count with it (`rows`, `failures`, `missing`, `nulls`, `invalid`, `duplicates`, `distinct`, `orphans`), as in `missing(email) <= 5%`")
            }
            DurationOutsideAge { span } => Diag::error("hql::expect_duration", "a duration is compared with `age(…)` only", span.clone(), "a duration")
                .help("durations (`30s`, `15m`, `12h`, `3d`) are for expectations of freshness: `expect age(placed) <= 3d`"),
            AgeWithoutDuration { span } => Diag::error("hql::expect_duration", "an age is compared with a duration only", span.clone(), "an age")
                .help("write the bound as a duration: `age(placed) <= 3d` (`30s`, `15m`, `12h`, `3d`)"),
            ModuloInExpectation { span } => Diag::error("hql::expect_modulo", "an expectation has no remainder `%`", span.clone(), "not a remainder here")
                .help("inside `expect`, a number written against `%` is a share of `rows` (`failures <= 1%`)"),
            OrphanKeys { span } => Diag::error("hql::orphan_keys", "the keys of `orphans` are a list of literals or a source's field", span.clone(), "not keys `orphans` takes")
                .help("write a list literal (`[\"a\", \"b\"]`) or a source mapped to one field: `source(\"customers\") | map(c => c.id)`"),
            ExpectOperands { op, left, right, span } => Diag::error(
                "hql::expect_operands",
                format!("`{op}` cannot take {left} and {right} in an expectation"),
                span.clone(),
                format!("{left} {op} {right}"),
            )
            .help("arithmetic and ordering take counts and numbers; `and`, `or` and `not` take comparisons"),
        }
    }
}

/// What an expectation is made of, for the help of its errors.
const EXPECT_FORM_HELP: &str = "an expectation combines measures (`rows`, `failures`, `missing(f)`, `nulls(f)`, `invalid(f)`, `duplicates(f, …)`, `distinct(f)`, `orphans(f, keys)`, `min(f)`, `max(f)`, `sum(f)`, `avg(f)`, `age(f)`) with literals, arithmetic, comparisons and `and`/`or`/`not`";

fn operand_help(op: &str) -> String {
    match op {
        "+" => "`+` adds numbers and joins two strings or two lists; convert with `string(x)` or `int(s)`".into(),
        "%" => "`%` takes two Ints".into(),
        "in" | "not in" => "`x in list` tests membership, `s in text` a substring, `\"key\" in record` a key".into(),
        "<" | "<=" | ">" | ">=" => "comparisons order two numbers or two strings; convert one side first: `int(s)`, `float(s)` or `string(x)`".into(),
        _ => "convert one side first: `int(s)`, `float(s)` or `string(x)`".into(),
    }
}

fn first_line(s: &str) -> String {
    s.lines().last().unwrap_or(s).trim().to_string()
}

impl From<&CheckWarning> for Diag {
    fn from(w: &CheckWarning) -> Diag {
        let d = match w {
            CheckWarning::NeedlessMark { field, span } => Diag::error(
                "hql::needless_mark",
                format!("`{field}` is required and not nullable: `?` is not needed"),
                span.clone(),
                "always present",
            )
            .help(format!("write `{field}`")),
            CheckWarning::PresenceOfBool { field, span } => Diag::error(
                "hql::presence_of_bool",
                format!("`{field}?` tests whether `{field}` is present, not whether it is true"),
                span.clone(),
                "a presence test",
            )
            .help(format!("to test the value, write `{field}? == true`")),
            CheckWarning::UncomparableMember { field, member, other, span } => Diag::error(
                "hql::uncomparable_member",
                format!("`{field}` may be {member}, which cannot be compared with {other}"),
                span.clone(),
                format!("{member} here is an error at run time"),
            )
            .help(if member.starts_with('"') {
                format!("guard it: `{field} != {member} and …`, or read {member} as null: the format option `nulls: [{member}]` with the field declared `… | Null`")
            } else {
                format!("guard it, so that only values that can be compared with {other} are compared: `if … then … else …`, or declare `{field}` without {member}")
            }),
            CheckWarning::UndeclaredNearField { field, ty, meant, span } => Diag::error(
                "hql::undeclared_field",
                format!("`{ty}` does not declare `{field}`: did you mean `{meant}`?"),
                span.clone(),
                "not declared",
            )
            .help(format!("`{ty}` is open, so `{field}` is read as received (missing where a record has no `{field}`); write `{meant}`, or declare `{field}`")),
            CheckWarning::NestedUnique { ty, span } => Diag::error(
                "hql::nested_unique",
                format!("`unique` in `{ty}` applies only to a stream validated as `{ty}`, not where `{ty}` is a field's type"),
                span.clone(),
                "not checked inside a field",
            )
            .help("declare the key on the type whose records the stream holds"),
            CheckWarning::NestedExpect { ty, span } => Diag::error(
                "hql::nested_expect",
                format!("`expect` in `{ty}` is judged only over a stream validated as `{ty}`, not where `{ty}` is a field's type"),
                span.clone(),
                "not judged inside a field",
            )
            .help("declare the expectation on the type whose records the stream holds"),
        };
        Diag { warning: true, ..d }
    }
}

impl From<&RuntimeError> for Diag {
    fn from(e: &RuntimeError) -> Diag {
        let message = match &e.origin {
            Some(o) => format!("{} (record at {}:{})", e.message, o.source, o.line),
            None => e.message.clone(),
        };
        Diag {
            code: e.code,
            message,
            span: e.span.clone(),
            label: "here".into(),
            help: e.help.clone(),
            warning: false,
        }
    }
}

/// At most this many diagnostics are shown for one entry's syntax and
/// static checks; the rest are counted in one closing line.
pub const MAX_SHOWN: usize = 100;

/// Write an entry's static diagnostics: the first [`MAX_SHOWN`], then a
/// line saying how many more there are.
pub fn emit(sinks: &mut Sinks, map: &SourceMap, diags: impl IntoIterator<Item = Diag>) {
    let (mut shown, mut errors, mut warnings) = (0, 0, 0);
    for d in diags {
        if shown < MAX_SHOWN {
            sinks.diag(map, &d);
            shown += 1;
        } else if d.warning {
            warnings += 1;
        } else {
            errors += 1;
        }
    }
    let count = |n: usize, what: &str| match n {
        0 => None,
        1 => Some(format!("1 more {what}")),
        n => Some(format!("{n} more {what}s")),
    };
    let more: Vec<String> = [count(errors, "error"), count(warnings, "warning")]
        .into_iter()
        .flatten()
        .collect();
    if !more.is_empty() {
        let _ = writeln!(
            sinks.err,
            "… and {}, not shown (only the first {MAX_SHOWN} are)",
            more.join(" and ")
        );
    }
}

/// Render a diagnostic against the file its span points into. `color`
/// only on terminals.
/// One diagnostic as one line of JSON (`--diagnostics json`, tooling.md
/// "Diagnostics"): `code, severity, message, file, line, column, end_line,
/// end_column, help`, positions 1-based (columns in characters, the end
/// exclusive), `null` where a diagnostic has no place or no help.
pub fn json_line(diag: &Diag, map: &SourceMap) -> String {
    use serde_json::Value as J;
    let located = diag.span.as_ref().and_then(|s| map.locate(s));
    let (file, start, end) = match located {
        Some((file, span)) => {
            let at = |offset: usize| {
                let offset = offset.min(file.text.len());
                let before = &file.text[..floor_char_boundary(&file.text, offset)];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                (J::from(line), J::from(column))
            };
            (J::from(file.name.clone()), at(span.start), at(span.end))
        }
        None => (J::Null, (J::Null, J::Null), (J::Null, J::Null)),
    };
    // Written field by field: the keys in the order tooling.md lists them.
    let fields: [(&str, J); 9] = [
        ("code", J::from(diag.code)),
        (
            "severity",
            J::from(if diag.warning { "warning" } else { "error" }),
        ),
        ("message", J::from(json_message(diag))),
        ("file", file),
        ("line", start.0),
        ("column", start.1),
        ("end_line", end.0),
        ("end_column", end.1),
        ("help", diag.help.as_deref().map_or(J::Null, J::from)),
    ];
    let body: Vec<String> = fields
        .iter()
        .map(|(key, value)| format!("\"{key}\":{value}"))
        .collect();
    format!("{{{}}}\n", body.join(","))
}

/// The largest char boundary of `text` at or before `at`.
fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

pub fn render(diag: &Diag, map: &SourceMap, color: bool) -> String {
    let located = diag.span.as_ref().and_then(|s| map.locate(s));
    let mut d = MietteDiagnostic::new(shorten(&diag.message))
        .with_code(diag.code)
        .with_severity(if diag.warning {
            Severity::Warning
        } else {
            Severity::Error
        });
    let excerpt = located.map(|(file, span)| Excerpt::new(&file.name, &file.text, &span));
    if let Some(excerpt) = &excerpt {
        d = d.with_label(LabeledSpan::new(
            Some(shorten(&diag.label)),
            excerpt.label.start,
            excerpt.label.len(),
        ));
    }
    if let Some(help) = &diag.help {
        d = d.with_help(shorten(help));
    }
    let report = match excerpt {
        Some(excerpt) => Report::new(d).with_source_code(excerpt),
        None => Report::new(d),
    };
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_wrap_lines(false)
        .with_links(false)
        .with_context_lines(CONTEXT_LINES);
    let mut out = String::new();
    if handler.render_report(&mut out, report.as_ref()).is_err() {
        out = format!("error[{}]: {}\n", diag.code, diag.message);
    }
    out
}

/// A message, label or help longer than this many bytes (a name or a value
/// the program wrote can be any length) is cut, and ends with `…`.
const LONG_TEXT: usize = 300;

fn shorten(text: &str) -> String {
    if text.len() <= LONG_TEXT {
        return text.to_string();
    }
    let cut = (0..=LONG_TEXT - 20)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}…", &text[..cut])
}

/// Lines shown above and below the labelled ones.
const CONTEXT_LINES: usize = 1;
/// A line longer than this many bytes is shown as a window of it…
const LONG_LINE: usize = 160;
/// …this wide, starting this far before the label.
const WINDOW: usize = 120;
const LEAD: usize = 40;
/// A label over more lines than this is shown on its first line only.
const MAX_LABEL_LINES: usize = 40;

/// The lines of a file a diagnostic shows, with long lines cut down to a
/// window around the label, and the label's place in them. `miette` reads
/// this instead of the whole file: a report costs the size of what it
/// shows, and no column it draws is ever wide (its layout breaks on columns
/// beyond 65,535). Line numbers and the column in the header are the
/// file's own.
#[derive(Debug)]
struct Excerpt {
    name: String,
    text: String,
    /// The file's line number (0-based) of the excerpt's first line.
    first_line: usize,
    /// The label, as offsets into `text`.
    label: Span,
    /// The label's column in the file (bytes from its line's start).
    column: usize,
}

impl Excerpt {
    fn new(name: &str, file: &str, span: &Span) -> Excerpt {
        let span = clamp(span, file.len());
        let start_line = line_start(file, span.start);
        let lines_over = memchr::memchr_iter(b'\n', &file.as_bytes()[span.clone()]).count();
        let end = if lines_over > MAX_LABEL_LINES {
            line_end(file, span.start)
        } else {
            span.end
        };
        // One line of context on each side.
        let first = match start_line {
            0 => 0,
            at => line_start(file, at - 1),
        };
        let last = match line_end(file, end) {
            stop if stop < file.len() => line_end(file, stop + 1),
            stop => stop,
        };
        let mut text = String::new();
        let mut label = 0..0;
        let mut at = first;
        loop {
            let stop = line_end(file, at);
            let line = &file[at..stop];
            let line = line.strip_suffix('\r').unwrap_or(line);
            let keep = window(line, at, &(span.start..end));
            if keep.start > 0 {
                text.push('…');
            }
            // Where an offset on this line lands in the excerpt.
            let kept_at = text.len();
            let place = |o: usize| kept_at + (o - at).clamp(keep.start, keep.end) - keep.start;
            if (at..=stop).contains(&span.start) {
                label.start = place(span.start);
            }
            if (at..=stop).contains(&end) {
                label.end = place(end).max(label.start);
            }
            text.push_str(&line[keep.clone()]);
            if keep.end < line.len() {
                text.push('…');
            }
            if stop >= last {
                // An empty last line shows only if its newline is kept.
                if stop < file.len() {
                    text.push('\n');
                }
                break;
            }
            text.push('\n');
            at = stop + 1;
        }
        Excerpt {
            name: name.to_string(),
            text,
            first_line: memchr::memchr_iter(b'\n', &file.as_bytes()[..first]).count(),
            label,
            column: span.start - start_line,
        }
    }
}

/// The part of `line` (which starts at offset `at` of its file) to show: all
/// of a line of ordinary length, else a window around where `label` starts
/// on it, or ends on it, or its beginning.
fn window(line: &str, at: usize, label: &Span) -> Span {
    if line.len() <= LONG_LINE {
        return 0..line.len();
    }
    let on_line = |o: usize| (at..=at + line.len()).contains(&o).then(|| o - at);
    let from = match (on_line(label.start), on_line(label.end)) {
        (Some(start), _) => start.saturating_sub(LEAD),
        (None, Some(end)) => end.saturating_sub(WINDOW - LEAD),
        (None, None) => 0,
    };
    let to = (from + WINDOW).min(line.len());
    let from = to.saturating_sub(WINDOW);
    let from = (0..=from)
        .rev()
        .find(|&i| line.is_char_boundary(i))
        .unwrap_or(0);
    let to = (to..=line.len())
        .find(|&i| line.is_char_boundary(i))
        .unwrap_or(line.len());
    from..to
}

/// Where the line holding offset `at` starts.
fn line_start(file: &str, at: usize) -> usize {
    memchr::memrchr(b'\n', &file.as_bytes()[..at]).map_or(0, |i| i + 1)
}

/// Where the line holding offset `at` ends (its `\n`, or the end of the file).
fn line_end(file: &str, at: usize) -> usize {
    memchr::memchr(b'\n', &file.as_bytes()[at..]).map_or(file.len(), |i| at + i)
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner = self.text.as_str().read_span(span, before, after)?;
        // The header names the label's column in the file, not in the excerpt.
        let column = if (before, after) == (0, 0) && span.offset() == self.label.start {
            self.column
        } else {
            inner.column()
        };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            self.first_line + inner.line(),
            column,
            inner.line_count(),
        )))
    }
}

fn clamp(span: &Span, len: usize) -> Span {
    let start = span.start.min(len);
    start..span.end.clamp(start, len)
}
