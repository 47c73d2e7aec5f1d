//! Floor 5, contract tooling: what `hql export`, `hql diff`, `hql contract`
//! and `hql infer` compute, as pure functions of compiled declarations
//! (`runtime::contract::Contract`) and values. Nothing here reads a file or
//! prints: the commands in `cli/` do that, and the REPL's `:export` and
//! `:infer` call the same functions.

pub mod diff;
pub mod export;
pub mod infer;
pub mod sql;
