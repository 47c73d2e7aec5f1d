//! `hql infer DATA [--name T] [--closed] [--limit N]`: a contract that every
//! sampled record satisfies (tooling.md, "Commands").
//!
//! The data is read as `hql vet` reads it — a file whose format its
//! extension names, `-` for standard input as JSON, or a configured
//! source id — through a session, so decoding is `hql run`'s. The records
//! are folded by `tooling::infer`; what it left out (lines that do not
//! decode, values that are not records) is counted on standard error, and
//! the contract is printed on standard output.

use crate::session::{Session, Sinks, EXIT_FAILED, EXIT_OK, EXIT_STATIC};
use crate::syntax::canonical::is_identifier;
use crate::tooling::infer::{default_name, infer_items, Inference};

/// What `hql infer` was asked to do.
pub struct InferJob {
    pub data: String,
    /// The type's name (default: the data file's stem, capitalised).
    pub name: Option<String>,
    /// `TypeContract` rather than `DataContract`.
    pub closed: bool,
    /// Read at most this many records.
    pub limit: Option<u64>,
    /// The data's format options.
    pub options: crate::cli::args::FormatFlags,
}

/// Run the job; the exit status.
pub fn infer(job: &InferJob, mut session: Session, sinks: &mut Sinks) -> i32 {
    let name = match &job.name {
        Some(name) if !is_identifier(name) => {
            return usage(sinks, &format!("`{name}` is not a type name (letters, digits and `_`, not starting with a digit)"));
        }
        Some(name) => name.clone(),
        None => default_name(&job.data),
    };
    let source = match crate::cli::vet::source_expr(&session, &job.data, &job.options) {
        Ok(source) => source,
        Err(message) => return usage(sinks, &message),
    };
    session.interp().name_sources_by_flags();
    let mut inferred: Option<Inference> = None;
    let status = session.submit("<infer>", &source, sinks, &mut |v, _| {
        inferred = Some(infer_items(&v, job.limit)?);
        Ok(())
    });
    let Some(inferred) = inferred.filter(|_| status == EXIT_OK) else {
        return status.max(EXIT_FAILED);
    };
    if let Some(skipped) = inferred.skipped() {
        let _ = writeln!(sinks.err, "hql infer: {}: {skipped}", job.data);
    }
    if inferred.records() == 0 {
        let _ = writeln!(
            sinks.err,
            "hql infer: {} holds no record to infer from",
            job.data
        );
        return EXIT_FAILED;
    }
    let _ = sinks
        .out
        .write_all(inferred.contract(&name, job.closed).as_bytes());
    EXIT_OK
}

fn usage(sinks: &mut Sinks, message: &str) -> i32 {
    let _ = writeln!(sinks.err, "hql infer: {message}");
    EXIT_STATIC
}
