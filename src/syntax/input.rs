//! Is an entry finished? `input_status(&str) -> InputStatus`.
//!
//! The REPL and notebooks ask this before submitting text: an open bracket,
//! a trailing operator or `|`, or a statement the parser sees stop short
//! means more lines are coming.

use crate::syntax::lexer::{can_end, continues_line, lex, Token};
use crate::syntax::parser::{parse, ParseError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputStatus {
    /// Ready to run (or to report its errors).
    Complete,
    /// More lines are needed.
    Incomplete,
}

pub fn input_status(src: &str) -> InputStatus {
    let Ok(tokens) = lex(src) else {
        // A lexical error will not go away with more lines.
        return InputStatus::Complete;
    };
    let mut depth = 0i64;
    for (_, t, _) in &tokens {
        match t {
            Token::LParen | Token::LBracket | Token::LBrace => depth += 1,
            Token::RParen | Token::RBracket | Token::RBrace => depth -= 1,
            _ => {}
        }
    }
    let last = tokens.iter().rev().find(|(_, t, _)| *t != Token::Newline);
    let dangling = last.is_some_and(|(_, t, _)| !can_end(t));
    if depth > 0 || dangling {
        return InputStatus::Incomplete;
    }
    match parse(src) {
        Err(errors)
            if errors
                .iter()
                .any(|e| matches!(e, ParseError::UnexpectedEnd { .. })) =>
        {
            InputStatus::Incomplete
        }
        _ => InputStatus::Complete,
    }
}

/// Does `line` continue the entry before it, as a file's next line would
/// (it starts with `|`, a binary operator, `.`, `then`, `else`, a closing
/// bracket)?
pub fn continues_entry(line: &str) -> bool {
    match lex(line.trim_start()) {
        Ok(tokens) => tokens.first().is_some_and(|(_, t, _)| {
            continues_line(t) || matches!(t, Token::Require | Token::Warn)
        }),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use InputStatus::*;

    #[test]
    fn open_brackets_and_trailing_operators_continue() {
        assert_eq!(input_status("type T : Data = {"), Incomplete);
        assert_eq!(input_status("[1, 2"), Incomplete);
        assert_eq!(input_status("xs |"), Incomplete);
        assert_eq!(input_status("1 +"), Incomplete);
        assert_eq!(input_status("let x ="), Incomplete);
        assert_eq!(input_status("if a then"), Incomplete);
    }

    #[test]
    fn finished_entries_are_complete() {
        assert_eq!(input_status("1 + 2"), Complete);
        assert_eq!(input_status("type T : Data = {\n a: Int\n}"), Complete);
        assert_eq!(input_status("let x = 1 # 2"), Complete);
        assert_eq!(input_status("let = 3"), Complete);
    }

    #[test]
    fn continuation_lines() {
        assert!(continues_entry("| count()"));
        assert!(continues_entry("  .field"));
        assert!(!continues_entry("count([1])"));
    }
}
