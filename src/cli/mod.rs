//! Floor 6, the command line's library half: one file a command, around a
//! `session::Session` — `hql run` (`run`), the REPL (`repl/`), `hql test`
//! (`notebook`), the notebook kernel (`kernel`), `hql vet` (`vet`) and the
//! progress line (`progress`). `src/main.rs` parses the arguments.

pub mod kernel;
pub mod notebook;
pub mod progress;
pub mod repl;
pub mod run;
pub mod vet;
