//! `hql fmt`: files rewritten in the canonical layout of
//! `syntax::format` — an HQL file whole, a Markdown file's ` ```hql `
//! blocks one by one (` ```hql error ` blocks and every other block are
//! left as they are). A file that does not parse is reported and left
//! untouched; the others are still formatted.

use std::io::{self, Read, Write};

use crate::cli::notebook::fence;
use crate::runtime::eval::Host;
use crate::session::diagnostic::{emit, Diag};
use crate::session::host::FsHost;
use crate::session::{Sinks, EXIT_FAILED, EXIT_OK, EXIT_STATIC};
use crate::syntax::format::format_source;
use crate::syntax::parser::parse_at;
use crate::syntax::source::SourceMap;

/// What `hql fmt` was asked to do.
pub struct FmtJob {
    /// Files to format; `-` is standard input, formatted to standard output.
    pub files: Vec<String>,
    /// Rewrite nothing; name each file that would change.
    pub check: bool,
}

/// Format every file; the exit status (tooling.md, "Exit status").
pub fn fmt(job: &FmtJob, sinks: &mut Sinks) -> i32 {
    job.files.iter().fold(EXIT_OK, |status, file| {
        status.max(fmt_file(file, job.check, sinks))
    })
}

fn fmt_file(file: &str, check: bool, sinks: &mut Sinks) -> i32 {
    let stdin = file == "-";
    let name = if stdin { "<stdin>" } else { file };
    let text = match read(file) {
        Ok(text) => text,
        Err(e) => {
            let _ = writeln!(sinks.err, "hql: cannot read {name}: {e}");
            return EXIT_STATIC;
        }
    };
    let formatted = if file.ends_with(".md") {
        format_markdown(&text)
    } else {
        format_source(&text).map_err(|_| 0..text.len())
    };
    let formatted = match formatted {
        Ok(formatted) => formatted,
        Err(block) => {
            report(name, &text, block, sinks);
            return EXIT_STATIC;
        }
    };
    if check {
        if formatted == text {
            return EXIT_OK;
        }
        let _ = writeln!(sinks.out, "{name}");
        return EXIT_FAILED;
    }
    if stdin {
        let _ = sinks.out.write_all(formatted.as_bytes());
    } else if formatted != text {
        if let Err(e) = save(file, &formatted) {
            let _ = writeln!(sinks.err, "hql: cannot write {file}: {e}");
            return EXIT_FAILED;
        }
    }
    EXIT_OK
}

fn read(file: &str) -> io::Result<String> {
    if file == "-" {
        let mut text = String::new();
        io::stdin().read_to_string(&mut text)?;
        return Ok(text);
    }
    std::fs::read_to_string(file)
}

/// Replace the file at once: a temporary file renamed over it.
fn save(file: &str, text: &str) -> io::Result<()> {
    let mut pending = FsHost::new().create_file(file)?;
    pending.write_all(text.as_bytes())?;
    pending.commit()
}

/// The syntax errors of the program at `block` of the file's text, shown
/// against the file.
fn report(name: &str, text: &str, block: std::ops::Range<usize>, sinks: &mut Sinks) {
    let mut map = SourceMap::default();
    let base = map.add(name, text);
    let errors = parse_at(&text[block.clone()], base + block.start).err();
    let diags: Vec<Diag> = errors.iter().flatten().map(Diag::from).collect();
    emit(sinks, &map, diags);
}

/// A Markdown text with each ` ```hql ` block formatted, except a block
/// right after a `<!-- fmt: off -->` line (one that shows a layout on
/// purpose); a block that does not parse gives its byte range instead.
pub fn format_markdown(text: &str) -> Result<String, std::ops::Range<usize>> {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split_inclusive('\n');
    let mut at = 0;
    let mut previous = "";
    while let Some(line) = lines.next() {
        out.push_str(line);
        at += line.len();
        let off = previous.trim() == "<!-- fmt: off -->";
        previous = line;
        if line.starts_with("```") && fence(line) == Some("hql") && !off {
            let start = at;
            let mut end = start;
            let mut closing = None;
            for body in lines.by_ref() {
                if fence(body) == Some("") {
                    closing = Some(body);
                    break;
                }
                end += body.len();
            }
            let block = &text[start..end];
            let formatted = format_source(block).map_err(|_| start..end)?;
            out.push_str(&formatted);
            at = end;
            if let Some(close) = closing {
                out.push_str(close);
                at += close.len();
            }
        }
    }
    Ok(out)
}
