//! The formats of sources and targets, one module each, each one
//! [`Codec`]: `codec(Format) -> &'static dyn Codec`.
//!
//! A codec frames and decodes what it reads into records with their
//! origins — bytes the host hands it, or a place it opens itself (a SQLite
//! table) — and encodes records into bytes; where the bytes come from and
//! go to — files, standard input, the temporaries of atomic writes — is
//! the host's business. The session hands [`codec`] to the evaluator,
//! which names no format itself. A format is a module here and one line
//! in [`codec`].

mod csv;
mod json;
pub mod sqlite;

/// How CSV decoding reads a cell as a declared type: `hql infer` reads
/// cells the same way, so what it infers is what decoding will accept.
pub use crate::runtime::eval::io::Cell as CsvCell;
pub use csv::convert as convert_csv_cell;

use crate::runtime::builtins::Format;
use crate::runtime::eval::io::Codec;
use crate::runtime::eval::RuntimeError;

/// The codec of a format.
pub fn codec(format: Format) -> &'static dyn Codec {
    match format {
        Format::Json => &json::JSON,
        Format::Csv => &csv::CSV,
        Format::Sqlite => &sqlite::SQLITE,
    }
}

/// A target that could not take more bytes (a full disk, say); the
/// evaluator names the target.
fn write_error(e: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::new(crate::runtime::eval::io::WRITE_FAILED, e.to_string())
}
