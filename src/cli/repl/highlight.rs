//! Syntax highlighting for the line editor, from the real lexer: keywords,
//! type names, strings, numbers and comments in colour, the bracket that
//! matches the one at the cursor in bold, a closing bracket with no partner
//! in red. `closers` gives the hint of what the entry still has open.

use logos::Logos;

use crate::syntax::lexer::Token;

const KEYWORD: &str = "\x1b[35m";
const TYPE: &str = "\x1b[36m";
const STRING: &str = "\x1b[32m";
const NUMBER: &str = "\x1b[33m";
const COMMENT: &str = "\x1b[90m";
const COMMAND: &str = "\x1b[1;34m";
const MATCH: &str = "\x1b[1;4m";
const BAD: &str = "\x1b[31m";
const RESET: &str = "\x1b[0m";

/// A token of the raw text (before layout), or a lexical error.
struct Piece {
    start: usize,
    end: usize,
    token: Option<Token>,
}

fn pieces(line: &str) -> Vec<Piece> {
    let mut lexer = Token::lexer(line);
    let mut out = Vec::new();
    while let Some(t) = lexer.next() {
        let span = lexer.span();
        out.push(Piece {
            start: span.start,
            end: span.end,
            token: t.ok(),
        });
    }
    out
}

/// The colour of a token, if it has one.
fn colour(token: &Token) -> Option<&'static str> {
    use Token::*;
    Some(match token {
        Type | Require | Warn | Validate | With | Unique | Fn | Let | Check | Import | If
        | Then | Else | And | Or | Not | In | SelfKw => KEYWORD,
        True | False | Null | Int(_) | Float(_) => NUMBER,
        Str(_) | RawStr(_) => STRING,
        Doc(_) => COMMENT,
        Ident(name) if name.starts_with(|c: char| c.is_ascii_uppercase()) => TYPE,
        _ => return None,
    })
}

fn is_bracket(token: &Option<Token>) -> Option<bool> {
    use Token::*;
    match token {
        Some(LParen | LBracket | LBrace) => Some(true),
        Some(RParen | RBracket | RBrace) => Some(false),
        _ => None,
    }
}

/// Pairs of matching brackets (offsets), and the closers that match none.
fn brackets(pieces: &[Piece]) -> (Vec<(usize, usize)>, Vec<usize>) {
    let mut open = Vec::new();
    let mut pairs = Vec::new();
    let mut stray = Vec::new();
    for p in pieces {
        match is_bracket(&p.token) {
            Some(true) => open.push(p.start),
            Some(false) => match open.pop() {
                Some(o) => pairs.push((o, p.start)),
                None => stray.push(p.start),
            },
            None => {}
        }
    }
    (pairs, stray)
}

/// The bracket that matches the one under the cursor (or just before it).
pub fn matching_bracket(line: &str, pos: usize) -> Option<usize> {
    let (pairs, _) = brackets(&pieces(line));
    let partner = |at: usize| {
        pairs.iter().find_map(|&(o, c)| {
            if o == at {
                Some(c)
            } else if c == at {
                Some(o)
            } else {
                None
            }
        })
    };
    partner(pos).or_else(|| pos.checked_sub(1).and_then(partner))
}

/// `line` with ANSI colours; `bracket` is an offset to show in bold.
pub fn highlight(line: &str, bracket: Option<usize>) -> String {
    if line.trim_start().starts_with(':') {
        return command(line);
    }
    let pieces = pieces(line);
    let (_, stray) = brackets(&pieces);
    let mut out = String::with_capacity(line.len() * 2);
    let mut done = 0;
    for p in &pieces {
        gap(&mut out, &line[done..p.start]);
        let text = &line[p.start..p.end];
        let style = match &p.token {
            _ if Some(p.start) == bracket => Some(MATCH),
            _ if stray.contains(&p.start) => Some(BAD),
            Some(t) => colour(t),
            // An unfinished string is still a string.
            None if text.starts_with('"') || text.starts_with("r\"") || text.starts_with("r#") => {
                Some(STRING)
            }
            None => Some(BAD),
        };
        paint(&mut out, style, text);
        done = p.end;
    }
    gap(&mut out, &line[done..]);
    out
}

/// Text between tokens: spaces, and perhaps a `//` comment.
fn gap(out: &mut String, text: &str) {
    match text.find("//") {
        Some(i) => {
            out.push_str(&text[..i]);
            paint(out, Some(COMMENT), &text[i..]);
        }
        None => out.push_str(text),
    }
}

fn paint(out: &mut String, style: Option<&str>, text: &str) {
    match style {
        Some(s) if !text.is_empty() => {
            out.push_str(s);
            out.push_str(text);
            out.push_str(RESET);
        }
        _ => out.push_str(text),
    }
}

/// A `:command`: its name in colour, the argument as code where it is one.
fn command(line: &str) -> String {
    let lead = line.len() - line.trim_start().len();
    let name_end = line[lead..]
        .find(char::is_whitespace)
        .map_or(line.len(), |i| lead + i);
    let mut out = String::new();
    out.push_str(&line[..lead]);
    paint(&mut out, Some(COMMAND), &line[lead..name_end]);
    let rest = &line[name_end..];
    let name = line[..name_end].trim_start().trim_start_matches(':');
    if matches!(name, "type" | "t") {
        out.push_str(&highlight(rest, None));
    } else {
        out.push_str(rest);
    }
    out
}

/// The closing brackets (and quote) that the entry still needs, innermost
/// first: the hint shown after the cursor.
pub fn closers(line: &str) -> String {
    let pieces = pieces(line);
    let mut open = Vec::new();
    let mut string = false;
    for p in &pieces {
        match &p.token {
            Some(Token::LParen) => open.push(')'),
            Some(Token::LBracket) => open.push(']'),
            Some(Token::LBrace) => open.push('}'),
            Some(Token::RParen | Token::RBracket | Token::RBrace) => {
                open.pop();
            }
            None => string = line[p.start..p.end].starts_with('"') && p.end == line.len(),
            _ => {}
        }
    }
    let mut hint: String = if string { "\"".into() } else { String::new() };
    hint.extend(open.iter().rev());
    hint
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn colours_tokens_and_keeps_the_text() {
        let line = "let n = count(xs) + 1.5 // how many\n\"wren\" Sighting r\"raw\"";
        let h = highlight(line, None);
        assert_eq!(plain(&h), line);
        assert!(h.contains("\x1b[35mlet\x1b[0m"));
        assert!(h.contains("\x1b[33m1.5\x1b[0m"));
        assert!(h.contains("\x1b[90m// how many\x1b[0m"));
        assert!(h.contains("\x1b[32m\"wren\"\x1b[0m"));
        assert!(h.contains("\x1b[36mSighting\x1b[0m"));
        assert!(h.contains("\x1b[32mr\"raw\"\x1b[0m"));
        assert!(!h.contains("\x1b[36mcount"));
    }

    #[test]
    fn unfinished_strings_and_stray_brackets() {
        let h = highlight("f(\"wre", None);
        assert!(h.contains("\x1b[32m\"wre\x1b[0m"));
        let h = highlight("1)", None);
        assert!(h.contains("\x1b[31m)\x1b[0m"));
        assert_eq!(plain(&highlight("a # b", None)), "a # b");
    }

    #[test]
    fn the_matching_bracket() {
        let line = "f([1, \")\"], (2))";
        assert_eq!(matching_bracket(line, 0), None);
        assert_eq!(matching_bracket(line, 1), Some(15));
        assert_eq!(matching_bracket(line, line.len()), Some(1));
        assert_eq!(matching_bracket(line, 2), Some(9));
        assert!(highlight(line, Some(15)).contains("\x1b[1;4m)\x1b[0m"));
    }

    #[test]
    fn commands_are_highlighted_too() {
        let h = highlight(":type count(1)", None);
        assert!(h.starts_with("\x1b[1;34m:type\x1b[0m"));
        assert_eq!(plain(&h), ":type count(1)");
        assert_eq!(plain(&highlight("  :vars", None)), "  :vars");
    }

    #[test]
    fn what_is_still_open() {
        assert_eq!(closers("f([1, {a: 2"), "}])");
        assert_eq!(closers("source(file(\"a.js"), "\"))");
        assert_eq!(closers("f(1)"), "");
        assert_eq!(closers("type T = {\n a: Int"), "}");
    }
}
