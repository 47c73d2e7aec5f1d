//! The formats of sources and targets, one module each, each one
//! [`Codec`], and the registry of them: [`FORMATS`].
//!
//! A codec frames and decodes what it reads into records with their
//! origins — bytes the host hands it, or a place it opens itself (a SQLite
//! table) — and encodes records into bytes; where the bytes come from and
//! go to — files, standard input, the temporaries of atomic writes — is
//! the host's business. Each module gives its entry (`FORMAT`: what the
//! format is — its name in programs, its extensions — and its codec); the
//! session hands [`FORMATS`] to the checker (the names programs write)
//! and to the evaluator (codecs, a path's format), which name no format
//! themselves. A format is a module here and one line in [`FORMATS`].

pub mod catalog;
pub mod csv;
mod encoding;
pub mod json;
pub mod parquet;
pub mod postgres;
mod rows;
mod sniff;
pub mod sqlite;
mod table;

/// How CSV decoding reads a cell as a declared type: `hql infer` reads
/// cells the same way, so what it infers is what decoding will accept.
pub use crate::runtime::eval::io::Cell as CsvCell;
pub use csv::convert as convert_csv_cell;

use crate::runtime::builtins::Format;
use crate::runtime::eval::io::{Codec, Formats};
use crate::runtime::eval::RuntimeError;

/// Every format, in the order help texts list them.
pub static FORMATS: Formats = Formats(&[
    json::FORMAT,
    csv::FORMAT,
    parquet::FORMAT,
    sqlite::FORMAT,
    postgres::FORMAT,
]);

/// The codec of a format.
pub fn codec(format: Format) -> &'static dyn Codec {
    FORMATS.codec(format)
}

/// A target that could not take more bytes (a full disk, say); the
/// evaluator names the target.
fn write_error(e: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::new(crate::runtime::eval::io::WRITE_FAILED, e.to_string())
}

/// Bytes as base64 text (RFC 4648, padded): how a SQLite BLOB's cell shows
/// in a failure's `input`, and a Parquet binary column read as `String`.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                text.push(DIGITS[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                text.push('=');
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::{codec, csv, json, parquet, sqlite, FORMATS};
    use crate::runtime::builtins::Format;
    use crate::runtime::eval::io::{
        Database, DatabaseAt, Input, Place, Select, SourceSpec, TargetSpec,
    };

    #[test]
    fn base64_pads_to_whole_quads() {
        use super::base64;
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
    }

    /// What each format can give beyond its records is asked of it by
    /// capability.
    #[test]
    fn each_format_gives_the_capabilities_it_has() {
        let target = TargetSpec::file("out.jsonl", json::FORMAT.format);
        let has = |f: Format| {
            let c = codec(f);
            let writes = c.writer(&target, None).is_some();
            let tables = c.tables().is_some();
            (c.json_text().is_some(), c.cells().is_some(), writes, tables)
        };
        assert_eq!(has(json::FORMAT.format), (true, false, true, false));
        assert_eq!(has(csv::FORMAT.format), (false, true, true, false));
        assert_eq!(has(sqlite::FORMAT.format), (false, false, false, true));
        assert_eq!(has(parquet::FORMAT.format), (false, true, true, false));
        assert!(codec(parquet::FORMAT.format).reads_files());
        assert!(codec(sqlite::FORMAT.format).reads_by_shape());
    }

    /// The host hands bytes only to a format of bytes, and a database only
    /// to a format that opens one; a mismatch is an error, not a guess.
    #[test]
    fn a_format_reads_only_what_it_is_made_for() {
        let database = Database {
            written: "db.sqlite".into(),
            at: DatabaseAt::File("db.sqlite".into()),
            select: Select::Table("t".into()),
        };
        let spec = SourceSpec::new(
            "src",
            Place::Database(database.clone()),
            json::FORMAT.format,
        );
        let refused = codec(json::FORMAT.format).read(Input::Database(&database), &spec, None);
        assert_eq!(refused.err().map(|e| e.code), Some("hql::format"));
        let spec = SourceSpec::new("src", Place::Stdin, sqlite::FORMAT.format);
        let bytes = Input::Bytes(Box::new(Cursor::new(b"{}".to_vec())));
        let refused = codec(sqlite::FORMAT.format).read(bytes, &spec, None);
        assert_eq!(refused.err().map(|e| e.code), Some("hql::format"));
    }

    /// What the checker, `write`, `hql.toml`, `hql vet` and `hql infer`
    /// ask of the registry.
    #[test]
    fn the_registry_answers_for_names_and_extensions() {
        let (json, csv) = (json::FORMAT.format, csv::FORMAT.format);
        assert_eq!(FORMATS.named("Json"), Some(json));
        assert_eq!(FORMATS.named("Sqlite"), None);
        assert_eq!(FORMATS.of_path("data/B.NDJSON"), Some(json));
        assert_eq!(FORMATS.of_path("x.csv"), Some(csv));
        assert_eq!(FORMATS.of_path("x.tsv"), Some(csv));
        assert_eq!(FORMATS.meant_by("x.jsonlines"), Some(json));
        assert_eq!(FORMATS.synonym("JSONL"), Some("Json"));
        assert_eq!(FORMATS.synonym("Json"), None);
        let listed = FORMATS.names_listed(|n| format!("`{n}`"), "and");
        assert_eq!(listed, "`Json`, `Csv` and `Parquet`");
        assert_eq!(
            FORMATS.extensions_listed(),
            ".jsonl, .json, .csv or .parquet"
        );
        assert_eq!(FORMATS.of_path("x.PARQUET"), Some(parquet::FORMAT.format));
        assert!(json.writes_whole("a.JSON") && !json.writes_whole("a.jsonl"));
        // A compression's extension is passed over: the one before it tells.
        assert_eq!(FORMATS.of_path("o.JSONL.GZ"), Some(json));
        assert_eq!(FORMATS.of_path("x.csv.zst"), Some(csv));
        assert_eq!(FORMATS.of_path("x.gz"), None);
        assert_eq!(FORMATS.meant_by("x.tsv.gz"), Some(csv));
        assert!(json.writes_whole("a.json.gz") && !json.writes_whole("a.jsonl.zst"));
    }

    /// A format added to the registry can take no name or extension
    /// another has.
    #[test]
    fn no_two_formats_share_a_name_or_an_extension() {
        let mut names = std::collections::HashSet::new();
        let mut extensions = std::collections::HashSet::new();
        for r in FORMATS.0 {
            let def = r.format.def();
            assert!(names.insert(def.name.to_ascii_lowercase()), "{}", def.name);
            for e in def.extensions.iter().chain(def.more_extensions) {
                assert!(extensions.insert(*e), "{e} of {}", def.name);
            }
        }
    }
}
