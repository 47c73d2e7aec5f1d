//! A regex of HQL (the Rust `regex` crate's syntax and meaning) written for
//! an engine: RE2 in DuckDB, Java's `java.util.regex` in Spark and Trino,
//! and PostgreSQL's "advanced" regexes (written as for RE2, then rewritten
//! by `postgres`).
//! What means the same is kept; what is spelt differently is rewritten;
//! what would mean something else and has no faithful rewriting is refused
//! with the reason, never guessed.
//!
//! - `\d` is any Unicode decimal digit in Rust: `\p{Nd}` in both engines.
//! - `\s` is Unicode white space in Rust, ASCII in both engines: the class
//!   is spelt out (`\S` too, outside a class).
//! - `$` is the end of the text in Rust (without `m`); Java's also matches
//!   before a final line break: written `\z`.
//! - `.` stops only at `\n` in Rust; Java also stops at `\r` and others
//!   unless `(?d)` is given, which Java patterns start with.
//! - `(?i)` folds Unicode case in Rust and RE2; Java needs `u` beside it.
//! - `\w`, `\b` (and capitals) have Unicode meanings neither engine
//!   matches, nested classes and class set operations differ: refused.
//! - PostgreSQL has no Unicode classes: `\p{Nd}` and the other general
//!   categories are spelt out as the code points they hold (from
//!   `regex-syntax`, the tables Rust's regexes use); it reads flags only at
//!   the start of a pattern (a flag set later is refused), `$` is its
//!   `\Z`, and its `.` matches a line break unless told otherwise.

use super::dialect::{Dialect, WHITE_SPACE};

/// `pattern` in the engine's syntax with HQL's meaning, or why not.
pub fn translate(pattern: &str, dialect: Dialect) -> Result<String, String> {
    let java = !matches!(dialect, Dialect::DuckDb | Dialect::Postgres);
    let multi_line = has_flag(pattern, 'm');
    let mut out = String::with_capacity(pattern.len() + 8);
    if java {
        out.push_str("(?d)");
    }
    let mut in_class = false;
    let mut class_start = false;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        let at_class_start = std::mem::take(&mut class_start);
        match c {
            '\\' => {
                let Some(k) = chars.next() else {
                    return Err("its regex ends with a lone `\\`".into());
                };
                match k {
                    'd' => out.push_str("\\p{Nd}"),
                    'D' => out.push_str("\\P{Nd}"),
                    's' if in_class => out.push_str(WHITE_SPACE),
                    's' => {
                        out.push('[');
                        out.push_str(WHITE_SPACE);
                        out.push(']');
                    }
                    'S' if in_class => {
                        return Err(
                            "its regex has `\\S` inside a class, which the engine cannot spell the way Rust means it"
                                .into(),
                        )
                    }
                    'S' => {
                        out.push_str("[^");
                        out.push_str(WHITE_SPACE);
                        out.push(']');
                    }
                    'w' | 'W' | 'b' | 'B' | '<' | '>' => {
                        return Err(format!(
                            "its regex uses `\\{k}`, whose meaning in Unicode differs between Rust and the engine"
                        ))
                    }
                    'p' | 'P' => {
                        out.push('\\');
                        out.push(k);
                        let name = if chars.peek() == Some(&'{') {
                            let mut name = String::new();
                            for n in chars.by_ref() {
                                name.push(n);
                                if n == '}' {
                                    break;
                                }
                            }
                            name
                        } else {
                            chars.next().map(String::from).unwrap_or_default()
                        };
                        let bare = name.trim_start_matches('{').trim_end_matches('}');
                        if !(bare.len() <= 2 && bare.chars().all(|c| c.is_ascii_alphabetic())) {
                            return Err(format!(
                                "its regex uses the class `\\{k}{name}`; only general categories (`\\p{{L}}`, `\\p{{Nd}}`) are named alike in the engine"
                            ));
                        }
                        out.push_str(&name);
                    }
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                }
            }
            '[' if in_class => {
                return Err("its regex nests a class inside a class".into());
            }
            '[' => {
                in_class = true;
                class_start = true;
                open_class(&mut chars, &mut out);
            }
            ']' if in_class && !at_class_start => {
                in_class = false;
                out.push(']');
            }
            '-' | '~' if in_class && chars.peek() == Some(&c) => {
                return Err(format!(
                    "its regex uses the class operation `{c}{c}`, which the engine does not have"
                ));
            }
            '$' if !in_class && !multi_line => out.push_str("\\z"),
            '(' if !in_class && chars.peek() == Some(&'?') => {
                chars.next();
                out.push_str("(?");
                if chars.peek() == Some(&'P') {
                    chars.next();
                    if java {
                        // Java names a group `(?<name>…)`.
                        continue;
                    }
                    out.push('P');
                    continue;
                }
                let mut flags = String::new();
                while let Some(&f) = chars.peek() {
                    if f == ':' || f == ')' || f == '<' || f == '=' || f == '!' {
                        break;
                    }
                    flags.push(f);
                    chars.next();
                }
                let leading = out == "(?" && chars.peek() == Some(&')');
                if dialect == Dialect::Postgres && !flags.is_empty() && !leading {
                    return Err(format!(
                        "its regex sets flags (`{flags}`) after its start, where PostgreSQL does not read them"
                    ));
                }
                if let Some(bad) = flags.chars().find(|f| !matches!(f, 'i' | 'm' | 's' | '-')) {
                    return Err(format!(
                        "its regex sets the flag `{bad}`, which means something else in the engine"
                    ));
                }
                out.push_str(&flags);
                if java && flags.contains('i') {
                    out.push('u');
                }
            }
            other => out.push(other),
        }
    }
    Ok(out)
}

/// `pattern`, in the syntax `translate` writes for DuckDB (or one of the
/// compiler's own patterns, written so), in PostgreSQL's with the same
/// meaning; and whether it folds case (`(?i)`, which PostgreSQL does as
/// Unicode does only under an ICU collation).
pub fn postgres(pattern: &str) -> (String, bool) {
    let (flags, rest) = leading_flags(pattern);
    let mut out = String::with_capacity(rest.len() + 8);
    // Rust's `m` is PostgreSQL's `w` (`^` and `$` at line breaks, and
    // nothing else); its `.` matches a line break without `s`.
    let own: String = flags
        .chars()
        .filter_map(|f| match f {
            'i' => Some('i'),
            'm' => Some('w'),
            _ => None,
        })
        .collect();
    if !own.is_empty() {
        out.push_str(&format!("(?{own})"));
    }
    let dot_all = flags.contains('s');
    let mut in_class = false;
    let mut class_start = false;
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        let at_class_start = std::mem::take(&mut class_start);
        match c {
            '\\' => match chars.next() {
                Some('z') => out.push_str("\\Z"),
                Some(k @ ('x' | 'u' | 'U')) => {
                    let digits = match k {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let hex: String = if chars.peek() == Some(&'{') {
                        chars.next();
                        chars.by_ref().take_while(|&h| h != '}').collect()
                    } else {
                        let mut hex = String::new();
                        while hex.len() < digits {
                            match chars.peek() {
                                Some(h) if h.is_ascii_hexdigit() => hex.push(*h),
                                _ => break,
                            }
                            chars.next();
                        }
                        hex
                    };
                    match u32::from_str_radix(&hex, 16) {
                        Ok(code) => out.push_str(&code_point(code)),
                        Err(_) => {
                            out.push('\\');
                            out.push(k);
                            out.push_str(&hex);
                        }
                    }
                }
                Some(k @ ('p' | 'P')) => {
                    let name: String = if chars.peek() == Some(&'{') {
                        chars
                            .by_ref()
                            .take_while(|&n| n != '}')
                            .chain(['}'])
                            .collect()
                    } else {
                        chars.next().map(String::from).unwrap_or_default()
                    };
                    let ranges = class_ranges(&format!("\\{k}{name}"));
                    match in_class {
                        true => out.push_str(&ranges),
                        false => out.push_str(&format!("[{ranges}]")),
                    }
                }
                Some(k) => {
                    out.push('\\');
                    out.push(k);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                class_start = true;
                open_class(&mut chars, &mut out);
            }
            ']' if in_class && !at_class_start => {
                in_class = false;
                out.push(']');
            }
            '.' if !in_class && !dot_all => out.push_str("[^\\n]"),
            // A group's name (`(?P<name>…)`) is not PostgreSQL's syntax, and
            // matching needs none.
            '(' if !in_class && chars.peek() == Some(&'?') => {
                let mut ahead = chars.clone();
                ahead.next();
                if ahead.next() == Some('P') && ahead.next() == Some('<') {
                    chars = ahead;
                    chars.by_ref().take_while(|&n| n != '>').for_each(drop);
                    out.push('(');
                } else {
                    out.push('(');
                }
            }
            other => out.push(other),
        }
    }
    (out, flags.contains('i'))
}

/// A class's opening, its `[` read: `[`, then `^` where it is negated, and
/// a `]` first in it as the literal it is.
fn open_class(chars: &mut std::iter::Peekable<std::str::Chars>, out: &mut String) {
    out.push('[');
    if chars.peek() == Some(&'^') {
        out.push('^');
        chars.next();
    }
    if chars.peek() == Some(&']') {
        out.push_str("\\]");
        chars.next();
    }
}

/// The flags of a group at the start of a pattern (`(?is)`), and the rest.
fn leading_flags(pattern: &str) -> (&str, &str) {
    let Some(after) = pattern.strip_prefix("(?") else {
        return ("", pattern);
    };
    match after.split_once(')') {
        Some((flags, rest))
            if !flags.is_empty() && flags.chars().all(|f| matches!(f, 'i' | 'm' | 's')) =>
        {
            (flags, rest)
        }
        _ => ("", pattern),
    }
}

/// A code point as PostgreSQL's escape for it.
fn code_point(code: u32) -> String {
    match code {
        0..=0xFFFF => format!("\\u{code:04X}"),
        _ => format!("\\U{code:08X}"),
    }
}

/// The inside of a bracket class holding what the class `class` (`\p{Nd}`,
/// `\PL`) holds, as Rust's regexes have it.
fn class_ranges(class: &str) -> String {
    use regex_syntax::hir::{Class, HirKind};
    let Ok(hir) = regex_syntax::Parser::new().parse(class) else {
        return String::new();
    };
    let HirKind::Class(Class::Unicode(ranges)) = hir.kind() else {
        return String::new();
    };
    ranges
        .ranges()
        .iter()
        .map(|r| match r.start() == r.end() {
            true => code_point(u32::from(r.start())),
            false => format!(
                "{}-{}",
                code_point(u32::from(r.start())),
                code_point(u32::from(r.end()))
            ),
        })
        .collect()
}

/// Does the pattern set flag `f` in a group such as `(?im)`?
fn has_flag(pattern: &str, f: char) -> bool {
    pattern.match_indices("(?").any(|(i, _)| {
        pattern[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphabetic() || *c == '-')
            .any(|c| c == f)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_anchors_keep_rusts_meaning() {
        assert_eq!(
            translate(r"^ord-\d{3}$", Dialect::DuckDb).unwrap(),
            r"^ord-\p{Nd}{3}\z"
        );
        assert_eq!(
            translate(r"(?i)^a[^@\s]b$", Dialect::Spark).unwrap(),
            format!(r"(?d)(?iu)^a[^@{WHITE_SPACE}]b\z")
        );
        assert!(translate(r"\w+", Dialect::Spark).is_err());
        assert!(translate(r"[^\S]", Dialect::DuckDb).is_err());
        assert!(translate(r"[a[b]]", Dialect::DuckDb).is_err());
        assert_eq!(translate(r"[]a]", Dialect::DuckDb).unwrap(), r"[\]a]");
    }

    #[test]
    fn postgres_reads_the_same_regexes_in_its_own_words() {
        let pg = |p: &str| postgres(&translate(p, Dialect::Postgres).unwrap());
        assert_eq!(pg(r"^a.b$"), (r"^a[^\n]b\Z".to_string(), false));
        assert_eq!(pg(r"(?is)^a.b$"), (r"(?i)^a.b\Z".to_string(), true));
        assert_eq!(pg(r"(?m)^a$"), (r"(?w)^a$".to_string(), false));
        assert_eq!(
            pg(r"(?P<y>x)\x41\x{1F600}"),
            (r"(x)\u0041\U0001F600".to_string(), false)
        );
        let (digits, _) = pg(r"\d");
        assert!(
            digits.starts_with(r"[\u0030-\u0039\u0660-\u0669"),
            "{digits}"
        );
        let (not_digit, _) = pg(r"[^\D]");
        assert!(
            not_digit.starts_with(r"[^\u0000-\u002F\u003A-"),
            "{not_digit}"
        );
        assert!(translate(r"a(?i)b", Dialect::Postgres)
            .unwrap_err()
            .contains("after its start"));
        assert!(translate(r"(?i:a)", Dialect::Postgres).is_err());
        // The compiler's own patterns, written for DuckDB.
        assert_eq!(
            postgres(r"^[ \t]*\z|\x{FEFF}").0,
            r"^[ \t]*\Z|\uFEFF".to_string()
        );
    }
}
