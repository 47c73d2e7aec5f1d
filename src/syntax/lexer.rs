//! Lexing and layout: `lex(&str) -> Result<Vec<Spanned>, Vec<LexError>>`.
//!
//! `logos` turns text into raw tokens; the layout pass then applies the
//! newline rules of language.md §2 (dropping the newlines that do not end a
//! statement or member), attaches `///` docs only where a declaration
//! follows, and marks `name =>` at the start of a call argument or a `let`
//! value as a lambda parameter, so the grammar stays LR(1).
//! `lex_with_comments` also returns every comment, with its span, as
//! trivia beside the tokens (for the formatter); `lex` skips them.

use logos::Logos;

use crate::syntax::ast::Span;

#[derive(Logos, Debug, Clone, PartialEq)]
#[logos(skip r"[ \t\r\f]+")]
#[logos(skip r"//([^/\n][^\n]*)?")]
#[logos(error = LexErrorKind)]
pub enum Token {
    #[regex(r"///[^\n]*", |lex| lex.slice()[3..].trim().to_string())]
    Doc(String),
    #[token("\n")]
    Newline,

    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice().to_string(), priority = 1)]
    Ident(String),
    #[regex(r"[0-9][0-9_]*", |lex| lex.slice().to_string())]
    Int(String),
    #[regex(r"[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9]+)?", |lex| lex.slice().to_string())]
    #[regex(r"[0-9][0-9_]*[eE][+-]?[0-9]+", |lex| lex.slice().to_string())]
    Float(String),
    /// A duration as written, `30s`, `15m`, `12h`, `3d` (language.md
    /// §4.11): only `age(…)` in an expectation is compared with one.
    #[regex(r"[0-9][0-9_]*[smhd]", |lex| lex.slice().to_string())]
    Duration(String),
    /// A share of the rows, `5%` or `0.5%`, its number as written: made by
    /// the layout pass from a number directly followed by `%` inside an
    /// `expect` member, where there is no remainder operator (§4.11).
    Share(String),
    /// A string literal: its value and its text as written.
    #[token("\"", lex_string)]
    Str(StrLit),
    #[token("r\"", lex_raw_string)]
    #[token("r#", lex_raw_string)]
    RawStr(StrLit),

    #[token("type")]
    Type,
    #[token("require")]
    Require,
    #[token("warn")]
    Warn,
    #[token("validate")]
    Validate,
    #[token("with")]
    With,
    #[token("unique")]
    Unique,
    #[token("expect")]
    Expect,
    #[token("fn")]
    Fn,
    #[token("let")]
    Let,
    #[token("check")]
    Check,
    #[token("import")]
    Import,
    #[token("if")]
    If,
    #[token("then")]
    Then,
    #[token("else")]
    Else,
    #[token("and")]
    And,
    #[token("or")]
    Or,
    #[token("not")]
    Not,
    #[token("in")]
    In,
    #[token("true")]
    True,
    #[token("false")]
    False,
    #[token("null")]
    Null,
    #[token("self")]
    SelfKw,

    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    #[token("=")]
    Assign,
    #[token("=>")]
    FatArrow,
    #[token("->")]
    Arrow,
    #[token(".")]
    Dot,
    #[token("?")]
    Question,
    #[token("??")]
    Coalesce,
    #[token("|")]
    Pipe,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("@")]
    At,

    /// `name =>` where a lambda may start (made by the layout pass).
    LambdaParam(String),

    /// Another language's spelling, never a token: `&&`, `||`, `!` and a
    /// single-quoted string (quotes and all, one error) are lexical errors
    /// that name HQL's spelling.
    #[token("&&", |_| spelled("&&", "and"))]
    #[token("||", |_| spelled("||", "or"))]
    #[token("!", |_| spelled("!", "not"))]
    #[regex(r"'[^'\n]*'?", single_quoted)]
    Foreign,
}

/// The error of a single-quoted string.
fn single_quoted(_: &mut logos::Lexer<Token>) -> Result<(), LexErrorKind> {
    Err(LexErrorKind::SingleQuoted)
}

/// The error of `written`, which HQL spells `meant`.
fn spelled(written: &'static str, meant: &'static str) -> Result<(), LexErrorKind> {
    Err(LexErrorKind::Spelled { written, meant })
}

/// A string literal's value and its exact source text (for canonical form).
#[derive(Debug, Clone, PartialEq)]
pub struct StrLit {
    pub value: String,
    pub text: String,
}

pub type Spanned = (usize, Token, usize);

#[derive(Debug, Clone, PartialEq, Default)]
pub enum LexErrorKind {
    #[default]
    UnexpectedChar,
    UnterminatedString,
    /// An unknown escape, and where it starts in its string literal (the
    /// literal is still read to its closing quote, so it costs one error).
    BadEscape {
        escape: String,
        at: usize,
    },
    /// `a && b`, `a || b`, `!a`: an operator HQL spells as a word.
    Spelled {
        written: &'static str,
        meant: &'static str,
    },
    /// `'text'`: strings use double quotes.
    SingleQuoted,
}

/// A lexical error: the text at `span` is not a token.
///
/// ```hql
/// let x = 1 # 2
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LexError {
    pub kind: LexErrorKind,
    pub span: Span,
}

fn lex_string(lex: &mut logos::Lexer<Token>) -> Result<StrLit, LexErrorKind> {
    let rest = lex.remainder();
    let mut value = String::new();
    let mut bad_escape = None;
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                lex.bump(i + 1);
                if let Some(bad) = bad_escape {
                    return Err(bad);
                }
                let text = lex.slice().to_string();
                return Ok(StrLit { value, text });
            }
            '\\' => match read_escape(&mut chars) {
                Ok(escaped) => value.push(escaped),
                Err(LexErrorKind::BadEscape { escape, .. }) => {
                    // The opening quote is one byte before `rest`.
                    let at = i + 1;
                    bad_escape.get_or_insert(LexErrorKind::BadEscape { escape, at });
                }
                Err(other) => {
                    lex.bump(rest.len());
                    return Err(other);
                }
            },
            '\n' => break,
            c => value.push(c),
        }
    }
    lex.bump(rest.find('\n').unwrap_or(rest.len()));
    Err(LexErrorKind::UnterminatedString)
}

/// Reads the escape after a `\`. An unknown escape consumes at most its
/// one letter, never a quote or a line end, so the literal is still read to
/// its closing quote.
fn read_escape(chars: &mut std::str::CharIndices) -> Result<char, LexErrorKind> {
    let bad = |s: &str| LexErrorKind::BadEscape {
        escape: s.to_string(),
        at: 0,
    };
    let mut look = chars.clone();
    let letter = match look.next() {
        Some((_, c)) => c,
        None => return Err(LexErrorKind::UnterminatedString),
    };
    let simple = match letter {
        '"' => Some('"'),
        '\\' => Some('\\'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        '0' => Some('\0'),
        '\n' => return Err(bad("\\")),
        'u' => None,
        other => {
            *chars = look;
            return Err(bad(&format!("\\{other}")));
        }
    };
    *chars = look.clone();
    if let Some(c) = simple {
        return Ok(c);
    }
    if look.next().map(|(_, c)| c) != Some('{') {
        return Err(bad("\\u"));
    }
    let mut hex = String::new();
    for (_, c) in look.by_ref() {
        if c == '}' {
            let code = u32::from_str_radix(&hex, 16).ok();
            let decoded = code.and_then(char::from_u32).ok_or_else(|| bad("\\u{…}"));
            if decoded.is_ok() {
                *chars = look;
            }
            return decoded;
        }
        if !c.is_ascii_hexdigit() || hex.len() == 6 {
            break;
        }
        hex.push(c);
    }
    Err(bad("\\u{…}"))
}

fn lex_raw_string(lex: &mut logos::Lexer<Token>) -> Result<StrLit, LexErrorKind> {
    // The token so far is `r"` or `r#`; count the hashes that open it.
    let rest = lex.remainder();
    let (hashes, body_start) = if lex.slice() == "r\"" {
        (0, 0)
    } else {
        let extra = rest.bytes().take_while(|&b| b == b'#').count();
        if rest.as_bytes().get(extra) != Some(&b'"') {
            return Err(LexErrorKind::UnexpectedChar);
        }
        (extra + 1, extra + 1)
    };
    let close = format!("\"{}", "#".repeat(hashes));
    match rest[body_start..].find(&close) {
        Some(end) => {
            let value = rest[body_start..body_start + end].to_string();
            lex.bump(body_start + end + close.len());
            let text = lex.slice().to_string();
            Ok(StrLit { value, text })
        }
        None => {
            lex.bump(rest.len());
            Err(LexErrorKind::UnterminatedString)
        }
    }
}

/// Lex `src` and apply the layout rules. All lexical errors are collected.
pub fn lex(src: &str) -> Result<Vec<Spanned>, Vec<LexError>> {
    lex_at(src, 0)
}

/// Lex a source whose spans start at offset `base`.
pub fn lex_at(src: &str, base: usize) -> Result<Vec<Spanned>, Vec<LexError>> {
    raw_tokens(src, base).map(layout)
}

/// A comment: `// …` or `/// …`, its span taking in the slashes.
#[derive(Debug, Clone, PartialEq)]
pub struct Comment {
    pub span: Span,
    pub kind: CommentKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommentKind {
    /// `// …`, which the tokens skip.
    Line,
    /// `/// …`, a documentation comment, whether or not a declaration
    /// follows it to be described.
    Doc,
}

/// Lex `src` as [`lex`] does, and also return every comment in source
/// order: the trivia a formatter puts back beside the tokens.
pub fn lex_with_comments(src: &str) -> Result<(Vec<Spanned>, Vec<Comment>), Vec<LexError>> {
    let raw = raw_tokens(src, 0)?;
    let mut comments = Vec::new();
    let mut gap_start = preamble_len(src);
    for (l, tok, r) in &raw {
        line_comments(src, gap_start..*l, &mut comments);
        if let Token::Doc(_) = tok {
            comments.push(Comment {
                span: *l..*r,
                kind: CommentKind::Doc,
            });
        }
        gap_start = *r;
    }
    line_comments(src, gap_start..src.len(), &mut comments);
    Ok((layout(raw), comments))
}

/// The `//` comments in `gap`, text between two tokens: the lexer skipped
/// it, so it holds only blanks and comments.
fn line_comments(src: &str, gap: Span, out: &mut Vec<Comment>) {
    let mut at = gap.start;
    while let Some(found) = src[at..gap.end].find("//") {
        let start = at + found;
        let end = src[start..gap.end]
            .find('\n')
            .map_or(gap.end, |n| start + n);
        out.push(Comment {
            span: start..end,
            kind: CommentKind::Line,
        });
        at = end;
    }
}

/// The tokens before layout; every lexical error collected.
fn raw_tokens(src: &str, base: usize) -> Result<Vec<Spanned>, Vec<LexError>> {
    let skip = preamble_len(src) + base;
    let mut raw = Vec::new();
    let mut errors = Vec::new();
    let mut lexer = Token::lexer(&src[skip - base..]);
    while let Some(tok) = lexer.next() {
        let span = lexer.span();
        let span = span.start + skip..span.end + skip;
        match tok {
            Ok(t) => raw.push((span.start, t, span.end)),
            Err(kind) => {
                // An unknown escape is pointed at, not its whole literal.
                let span = match &kind {
                    LexErrorKind::BadEscape { escape, at } => {
                        // The backslash and the letter after it.
                        let letter = escape[1..].chars().next().map_or(0, char::len_utf8);
                        let start = (span.start + at).min(span.end);
                        start..(start + 1 + letter).min(span.end)
                    }
                    _ => span,
                };
                errors.push(LexError { kind, span })
            }
        }
    }
    if errors.is_empty() {
        Ok(raw)
    } else {
        Err(errors)
    }
}

/// What comes before the first token and is not HQL: a UTF-8 byte order
/// mark, then a `#!` line.
pub fn preamble_len(src: &str) -> usize {
    let bom = if src.starts_with('\u{feff}') { 3 } else { 0 };
    let rest = &src[bom..];
    let shebang = if rest.starts_with("#!") {
        rest.find('\n').unwrap_or(rest.len())
    } else {
        0
    };
    bom + shebang
}

/// Does a line continue the previous one when it starts with `t`?
pub fn continues_line(t: &Token) -> bool {
    use Token::*;
    matches!(
        t,
        Pipe | Plus
            | Minus
            | Star
            | Slash
            | Percent
            | EqEq
            | NotEq
            | Lt
            | Le
            | Gt
            | Ge
            | Coalesce
            | And
            | Or
            | FatArrow
            | In
            | Dot
            | Then
            | Else
            | RParen
            | RBracket
            | RBrace
            | With
    )
}

/// Can an expression (or a member) end with `t`?
pub fn can_end(t: &Token) -> bool {
    use Token::*;
    matches!(
        t,
        Ident(_)
            | Int(_)
            | Float(_)
            | Duration(_)
            | Share(_)
            | Str(_)
            | RawStr(_)
            | True
            | False
            | Null
            | SelfKw
            | RParen
            | RBracket
            | RBrace
            | Question
    )
}

fn is_open(t: &Token) -> bool {
    matches!(t, Token::LParen | Token::LBracket | Token::LBrace)
}

fn is_close(t: &Token) -> bool {
    matches!(t, Token::RParen | Token::RBracket | Token::RBrace)
}

/// An open bracket, and whether it opened a call's argument list.
type Open = (Token, bool);

/// The layout pass (language.md §2).
fn layout(mut raw: Vec<Spanned>) -> Vec<Spanned> {
    let mut out: Vec<Spanned> = Vec::with_capacity(raw.len());
    let mut brackets: Vec<Open> = Vec::new();
    let mut pending_newline: Option<(usize, usize)> = None;
    // Between `@attr(…)` and its `type`, newlines do not end the statement.
    let mut in_attributes = false;
    // Inside an `expect` member: the bracket depth it stands at.
    let mut expect_at: Option<usize> = None;
    // For each place, the first token from there on that is neither a
    // newline nor a doc comment: what a doc comment would describe.
    let mut described = vec![None; raw.len() + 1];
    for i in (0..raw.len()).rev() {
        described[i] = match raw[i].1 {
            Token::Newline | Token::Doc(_) => described[i + 1],
            _ => Some(i),
        };
    }
    for i in 0..raw.len() {
        let (l, r) = (raw[i].0, raw[i].2);
        // The token is taken out; the ones after it stay for looking ahead.
        let tok = std::mem::replace(&mut raw[i].1, Token::Newline);
        let after = &raw[i + 1..];
        match tok {
            Token::Newline => {
                pending_newline.get_or_insert((l, r));
                continue;
            }
            Token::Doc(_) => {
                let next = described[i + 1].map(|j| &raw[j].1);
                if !doc_is_attached(next, &brackets) {
                    continue;
                }
            }
            _ => {}
        }
        if let Some((nl, nr)) = pending_newline.take() {
            let prev = out.last().map(|s| &s.1);
            if !in_attributes && newline_counts(prev, &tok, after, &brackets) {
                out.push((nl, Token::Newline, nr));
                expect_at = expect_at.filter(|&d| d < brackets.len());
            }
        }
        match tok {
            Token::Expect if starts_expectation(out.last(), after) => {
                expect_at = Some(brackets.len())
            }
            Token::Comma => expect_at = expect_at.filter(|&d| d < brackets.len()),
            Token::Percent if expect_at.is_some() => {
                if let Some(share) = share_before(&mut out, l) {
                    out.push(share);
                    continue;
                }
            }
            _ => {}
        }
        match tok {
            Token::At if brackets.is_empty() => in_attributes = true,
            Token::Type => in_attributes = false,
            _ => {}
        }
        if is_open(&tok) {
            let is_call = tok == Token::LParen && out.last().is_some_and(|s| can_end(&s.1));
            brackets.push((tok.clone(), is_call));
        } else if is_close(&tok) {
            brackets.pop();
            expect_at = expect_at.filter(|&d| d <= brackets.len());
        }
        if tok == Token::FatArrow && lambda_may_start(&out, &brackets) {
            if let Some((pl, Token::Ident(name), _)) = out.pop() {
                out.push((pl, Token::LambdaParam(name), r));
                continue;
            }
        }
        // After `.` a keyword is a field name (`e.type`), and a name can
        // end a line.
        let tok = match (out.last().map(|t| &t.1), keyword_text(&tok)) {
            (Some(Token::Dot), Some(word)) => Token::Ident(word.to_string()),
            _ => tok,
        };
        out.push((l, tok, r));
    }
    out
}

/// Is `expect` here the start of an expectation, not a name (`r.expect`,
/// a key or a field `expect: …`)?
fn starts_expectation(prev: Option<&Spanned>, after: &[Spanned]) -> bool {
    let name_after_dot = matches!(prev, Some((_, Token::Dot, _)));
    let key = matches!(after.first(), Some((_, Token::Colon | Token::Question, _)));
    !name_after_dot && !key
}

/// A number that ends where a `%` at `at` starts, taken off `out` and
/// made a share (`5%`): in an expectation, the only reading of `%` after
/// a number written against it.
fn share_before(out: &mut Vec<Spanned>, at: usize) -> Option<Spanned> {
    match out.last() {
        Some((_, Token::Int(_) | Token::Float(_), r)) if *r == at => {}
        _ => return None,
    }
    let (l, number, _) = out.pop()?;
    let (Token::Int(text) | Token::Float(text)) = number else {
        return None;
    };
    Some((l, Token::Share(text), at + 1))
}

/// The text of a keyword token.
pub fn keyword_text(t: &Token) -> Option<&'static str> {
    use Token::*;
    Some(match t {
        Type => "type",
        Require => "require",
        Warn => "warn",
        Validate => "validate",
        With => "with",
        Unique => "unique",
        Expect => "expect",
        Fn => "fn",
        Let => "let",
        Check => "check",
        Import => "import",
        If => "if",
        Then => "then",
        Else => "else",
        And => "and",
        Or => "or",
        Not => "not",
        In => "in",
        True => "true",
        False => "false",
        Null => "null",
        SelfKw => "self",
        _ => return None,
    })
}

fn innermost(brackets: &[Open]) -> Option<&Token> {
    brackets.last().map(|b| &b.0)
}

/// Does the newline before `next` (followed by `after`) end a statement or
/// member?
fn newline_counts(
    prev: Option<&Token>,
    next: &Token,
    after: &[Spanned],
    brackets: &[Open],
) -> bool {
    let Some(prev) = prev else { return false };
    let inner = innermost(brackets);
    if matches!(inner, Some(Token::LParen | Token::LBracket)) {
        return false;
    }
    let refinement_rule = brackets.is_empty() && matches!(next, Token::Require | Token::Warn);
    // Inside braces, `in: Int` or `and?: Bool` starts a field: a keyword
    // that would continue the line is a name there.
    let keyword_field = inner == Some(&Token::LBrace) && starts_keyword_field(next, after);
    can_end(prev) && (!continues_line(next) || keyword_field) && !refinement_rule
}

/// Is `next` a keyword followed by `:` or `?:`?
fn starts_keyword_field(next: &Token, after: &[Spanned]) -> bool {
    let colon = matches!(
        after,
        [(_, Token::Colon, _), ..] | [(_, Token::Question, _), (_, Token::Colon, _), ..]
    );
    colon && keyword_text(next).is_some()
}

/// A `///` comment is kept only before something it can describe.
fn doc_is_attached(next: Option<&Token>, brackets: &[Open]) -> bool {
    let in_body = matches!(innermost(brackets), Some(Token::LBrace));
    match next {
        Some(Token::Type | Token::Fn | Token::At) => true,
        Some(Token::Require | Token::Warn | Token::Expect | Token::Ident(_) | Token::Str(_)) => {
            in_body
        }
        _ => false,
    }
}

/// `x =>` starts a lambda right after `(` or `,` in a call's arguments, as
/// a named argument's value (`key: x =>`), after `let name =`, or as the
/// body of another lambda.
fn lambda_may_start(out: &[Spanned], brackets: &[Open]) -> bool {
    let n = out.len();
    if n == 0 || !matches!(out[n - 1].1, Token::Ident(_)) {
        return false;
    }
    match out.get(n.wrapping_sub(2)).map(|s| &s.1) {
        Some(Token::LParen | Token::Comma) => {
            matches!(brackets.last(), Some((Token::LParen, true)))
        }
        Some(Token::Colon) => {
            let named = matches!(
                out.get(n.wrapping_sub(3)).map(|s| &s.1),
                Some(Token::Ident(_))
            ) && matches!(
                out.get(n.wrapping_sub(4)).map(|s| &s.1),
                Some(Token::LParen | Token::Comma)
            );
            named && matches!(brackets.last(), Some((Token::LParen, true)))
        }
        Some(Token::LambdaParam(_)) => true,
        Some(Token::Assign) => matches!(
            (
                out.get(n.wrapping_sub(4)).map(|s| &s.1),
                brackets.is_empty()
            ),
            (Some(Token::Let), true)
        ),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Token> {
        lex(src).unwrap().into_iter().map(|(_, t, _)| t).collect()
    }

    #[test]
    fn pipe_at_line_start_continues() {
        let toks = kinds("xs\n| count()\n");
        assert!(!toks.contains(&Token::Newline));
    }

    #[test]
    fn newline_inside_braces_separates() {
        let toks = kinds("type T : Data = {\n a: Int\n b: Int\n}\nx");
        let n = toks.iter().filter(|t| **t == Token::Newline).count();
        assert_eq!(n, 2, "{toks:?}");
    }

    #[test]
    fn newline_in_parens_is_dropped() {
        assert!(!kinds("f(1,\n2\n)").contains(&Token::Newline));
    }

    #[test]
    fn lambda_params_are_marked() {
        let toks = kinds("map(s => s.a)");
        assert_eq!(toks[2], Token::LambdaParam("s".into()));
        let toks = kinds("require a => b");
        assert!(toks.contains(&Token::FatArrow));
        let toks = kinds("f(1, key: r => r.a)");
        assert_eq!(toks[6], Token::LambdaParam("r".into()));
        let toks = kinds("f({key: r => r.a})");
        assert!(toks.contains(&Token::FatArrow));
    }

    #[test]
    fn strings_and_escapes() {
        let toks = kinds(r##""a\n\u{1F600}" r"\d+" r#"say "hi""#"##);
        match &toks[0] {
            Token::Str(s) => assert_eq!(s.value, "a\n😀"),
            t => panic!("{t:?}"),
        }
        match &toks[1] {
            Token::RawStr(s) => {
                assert_eq!((s.value.as_str(), s.text.as_str()), (r"\d+", r#"r"\d+""#))
            }
            t => panic!("{t:?}"),
        }
        match &toks[2] {
            Token::RawStr(s) => assert_eq!(s.value, r#"say "hi""#),
            t => panic!("{t:?}"),
        }
    }

    #[test]
    fn errors_are_collected() {
        let errs = lex("let x = 1 # 2 \"open").unwrap_err();
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[1].kind, LexErrorKind::UnterminatedString);
    }

    #[test]
    fn comments_and_shebang() {
        assert_eq!(
            kinds("#!/usr/bin/env hql\n1 // one\n"),
            vec![Token::Int("1".into())]
        );
        assert_eq!(kinds("/// lone doc\n1"), vec![Token::Int("1".into())]);
    }

    #[test]
    fn comments_are_kept_as_trivia() {
        let src = "#!/bin/hql\n// head\nlet s = \"a // b\" // tail\n/// doc\n/// lone\n1\n//";
        let (tokens, comments) = lex_with_comments(src).unwrap();
        assert_eq!(tokens, lex(src).unwrap());
        let texts: Vec<(&str, CommentKind)> = comments
            .iter()
            .map(|c| (&src[c.span.clone()], c.kind))
            .collect();
        assert_eq!(
            texts,
            vec![
                ("// head", CommentKind::Line),
                ("// tail", CommentKind::Line),
                ("/// doc", CommentKind::Doc),
                ("/// lone", CommentKind::Doc),
                ("//", CommentKind::Line),
            ]
        );
    }

    #[test]
    fn keywords_after_a_dot_are_names() {
        let toks = kinds("r.type\n\"x\"");
        assert_eq!(toks[2], Token::Ident("type".into()));
        assert_eq!(toks[3], Token::Newline);
    }

    #[test]
    fn a_number_against_percent_is_a_share_inside_expect_only() {
        let src = "type T : DataContract = {\n expect failures <= 1% and missing(e) < 0.5%\n expect rows % 2 == 0\n}\nlet r = 10%3";
        let toks = kinds(src);
        let shares: Vec<&Token> = toks
            .iter()
            .filter(|t| matches!(t, Token::Share(_)))
            .collect();
        assert_eq!(
            shares,
            [&Token::Share("1".into()), &Token::Share("0.5".into())]
        );
        // With a space, and outside `expect`, `%` is the operator.
        assert_eq!(toks.iter().filter(|t| **t == Token::Percent).count(), 2);
        assert!(toks.ends_with(&[
            Token::Int("10".into()),
            Token::Percent,
            Token::Int("3".into())
        ]));
    }

    #[test]
    fn expect_as_a_name_starts_no_expectation() {
        for src in [
            "type T : Data = {\n expect: Int\n}\nlet x = 10%3",
            "let r = {expect: 1}\nlet x = 10%3",
            "r.expect + 10%3",
        ] {
            let toks = kinds(src);
            assert!(toks.contains(&Token::Percent), "{src}: {toks:?}");
            assert!(!toks.iter().any(|t| matches!(t, Token::Share(_))), "{src}");
        }
        assert_eq!(kinds("r.expect")[2], Token::Ident("expect".into()));
    }

    #[test]
    fn durations_are_tokens() {
        assert_eq!(
            kinds("30s 15m 12h 3d 1_000d 3"),
            [
                Token::Duration("30s".into()),
                Token::Duration("15m".into()),
                Token::Duration("12h".into()),
                Token::Duration("3d".into()),
                Token::Duration("1_000d".into()),
                Token::Int("3".into()),
            ]
        );
    }

    #[test]
    fn refinement_rules_continue() {
        let toks = kinds("type E = String\n  require self != \"\"\nx");
        assert_eq!(toks.iter().filter(|t| **t == Token::Newline).count(), 1);
    }
}
