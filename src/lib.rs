//! HQL: a small language for data that arrives from outside.
//!
//! The phases, each a module with one entry point:
//! `syntax::lexer::lex` → `syntax::parser::parse` → `check::check` →
//! `runtime::eval::Interp`. The folders are floors, lowest first; a module
//! imports only from its own floor or a lower one (`tests/floors.rs`
//! holds the code to that). See ARCHITECTURE.md for the types on each arrow.

pub mod syntax;

pub mod runtime;

pub mod check;

pub mod formats;

pub mod tooling;

pub mod session;

pub mod cli;
