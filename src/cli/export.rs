//! `hql export FILE TYPE --format F` (tooling.md, "Commands"): one type of
//! a contracts file as a JSON Schema, an OpenLineage facet or HQL's
//! canonical JSON, pretty-printed on standard output.

use crate::cli::contracts::load;
use crate::session::{Session, Sinks, EXIT_OK, EXIT_STATIC};
use crate::tooling::export::{export_text, Format};

/// Export `ty` of `file` in the format named `format`; the exit status
/// (2 for an unknown format or type, or a file that does not check).
pub fn export(mut session: Session, file: &str, ty: &str, format: &str, sinks: &mut Sinks) -> i32 {
    let format = match Format::lookup(format) {
        Ok(format) => format,
        Err(message) => return usage(sinks, &message),
    };
    let declared = match load(&mut session, file, sinks) {
        Ok(declared) => declared,
        Err(status) => return status,
    };
    match declared.get(ty) {
        Ok(contract) => {
            let _ = sinks
                .out
                .write_all(export_text(contract, format).as_bytes());
            EXIT_OK
        }
        Err(message) => usage(sinks, &message),
    }
}

fn usage(sinks: &mut Sinks, message: &str) -> i32 {
    let _ = writeln!(sinks.err, "hql: {message}");
    EXIT_STATIC
}
