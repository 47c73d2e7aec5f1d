//! Execution: how pipelines run — the stages of streams (`stages`), the
//! planner that picks a path (`planner`), the counting path (`counting`),
//! the threads (`chunks`, `staged`), `route` and its copier, and table
//! targets (`tables`). It sits
//! above the interpreter (`eval`), which is handed it through
//! `eval::Engine`.

pub mod chunks;
pub mod counting;
pub mod planner;
pub mod route;
pub mod staged;
pub mod stages;
pub mod tables;
