//! Floor 1, syntax: program text to `ast::Module` and back. Text in
//! (`lexer::lex`, `parser::parse`), the syntax tree, the canonical printer
//! and the formatter built on it (`format`),
//! the span space of a program's files, whether an entry is finished, and
//! how deep a program may nest.
//! Imports nothing else of the crate.

pub mod ast;
pub mod canonical;
pub mod format;
pub mod input;
pub mod lexer;
pub mod limits;
pub mod parser;
pub mod source;
