//! Floor 6, the command line's library half: one file a command, around a
//! `session::Session` — `hql run` (`run`), the REPL (`repl/`), `hql test`
//! (`notebook`), the notebook kernel (`kernel`), `hql vet` (`vet`), `hql fmt`
//! (`fmt`), the contract commands (`contracts`, `contract`, `diff`,
//! `export`, `infer`), `hql recover` (`recover`), the progress line
//! (`progress`) and standard
//! output's failures (`output`).
//! The arguments (`args`) and the commands that run them (`commands`);
//! `src/main.rs` only calls them.

pub mod args;
pub mod commands;
pub mod contract;
pub mod contracts;
pub mod diff;
pub mod engine;
pub mod export;
pub mod fmt;
pub mod infer;
pub mod kernel;
pub mod notebook;
pub mod output;
pub mod progress;
pub mod recover;
pub mod repl;
pub mod run;
pub mod vet;
