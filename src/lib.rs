//! HQL: a small language for data that arrives from outside.
//!
//! The phases, each a module with one entry point:
//! `lexer::lex` → `parser::parse` → `check::check` → `eval::run`.
//! See ARCHITECTURE.md for the types on each arrow.

pub mod ast;
pub mod canonical;
pub mod lexer;
pub mod parser;
pub mod json;
