//! `hql contract FILE [TYPE]` (tooling.md, "Commands"): the human summary
//! of each type the file declares, or of the one named — the REPL's
//! `:contract` text, types apart by a blank line.

use crate::cli::contracts::load;
use crate::session::{Session, Sinks, EXIT_OK, EXIT_STATIC};

/// Print the summaries; the exit status (2 for an unknown type or a file
/// that does not check).
pub fn contract(mut session: Session, file: &str, ty: Option<&str>, sinks: &mut Sinks) -> i32 {
    let declared = match load(&mut session, file, sinks) {
        Ok(declared) => declared,
        Err(status) => return status,
    };
    let chosen = match ty {
        Some(name) => match declared.get(name) {
            Ok(contract) => vec![contract.clone()],
            Err(message) => {
                let _ = writeln!(sinks.err, "hql: {message}");
                return EXIT_STATIC;
            }
        },
        None => declared.types.clone(),
    };
    let text: Vec<String> = chosen.iter().map(|c| c.summary()).collect();
    let _ = sinks.out.write_all(text.join("\n").as_bytes());
    EXIT_OK
}
