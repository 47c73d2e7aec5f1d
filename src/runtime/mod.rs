//! Floor 2, the runtime: what a checked program is made of and how it runs.
//! The builtins table, values, the checked program (`hir`) and compiled
//! contracts — which embed one another, so they share this floor — their
//! printed and JSON forms, the evaluator (`eval`), validation, and the
//! line check and counting path over JSON Lines. Four layers, each naming
//! only its own or lower ones (`tests/floors.rs`): values and declarations
//! (`value`, `stream`, `hir`, `contract`, `builtins`, `print`, `json`,
//! `limits`, `keyset`, `varint`, `stdlib_native`); the interpreter
//! (`eval`); validation (`validate`, `kernel`, `decide`, `scan`); execution
//! (`exec`), which the interpreter is handed (`eval::Engine`).
//! Imports only `syntax`;
//! what it needs from above (files, formats, rebuilding a program on a
//! worker thread) it is handed through traits it owns (`eval::Host`,
//! `eval::Codec`, `eval::Rebuild`) and data (`eval::Formats`, the registry
//! of formats: a `builtins::Format` is a handle on one of its entries).

pub mod builtins;
pub mod contract;
pub mod decide;
pub mod eval;
pub mod exec;
pub mod hir;
pub mod json;
pub mod kernel;
pub mod keyset;
pub mod limits;
pub mod measures;
pub mod plan;
pub mod print;
pub mod scan;
pub mod stdlib_native;
pub mod stream;
pub mod validate;
pub mod value;
pub mod varint;
