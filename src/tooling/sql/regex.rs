//! A regex of HQL (the Rust `regex` crate's syntax and meaning) written for
//! an engine: RE2 in DuckDB, Java's `java.util.regex` in Spark and Trino.
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

use super::dialect::{Dialect, WHITE_SPACE};

/// `pattern` in the engine's syntax with HQL's meaning, or why not.
pub fn translate(pattern: &str, dialect: Dialect) -> Result<String, String> {
    let java = dialect != Dialect::DuckDb;
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
                    'w' | 'W' | 'b' | 'B' => {
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
                out.push('[');
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                // A `]` first in a class is a literal.
                if chars.peek() == Some(&']') {
                    out.push_str("\\]");
                    chars.next();
                }
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
}
