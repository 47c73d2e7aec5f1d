//! HQL: a small language for data that arrives from outside.
//!
//! The phases, each a module with one entry point:
//! `lexer::lex` → `parser::parse` → `check::check` → `eval::Interp`.
//! See ARCHITECTURE.md for the types on each arrow.

pub mod ast;
pub mod builtins;
pub mod canonical;
pub mod check;
pub mod config;
pub mod contract;
pub mod counting;
pub mod diagnostic;
pub mod eval;
pub mod formats;
pub mod hir;
pub mod host;
pub mod input;
pub mod json;
pub mod kernel;
pub mod lexer;
pub mod notebook;
pub mod parser;
pub mod prelude;
pub mod print;
pub mod progress;
pub mod repl;
pub mod run;
pub mod scan;
pub mod session;
pub mod source;
pub mod typeflow;
pub mod validate;
pub mod value;
pub mod vet;
