//! Sniffing hints (tooling.md, "Sniffing, never guessing silently"): what
//! a source's first bytes suggest when they look like another format or
//! another dialect of the one named. A hint never changes the reading; it
//! is a warning with a help line naming the fix, in the program's words
//! for a file and in `hql.toml`'s for a configured source.

use crate::runtime::eval::io::{Encoding, Hint, SourceSpec};
use crate::runtime::json::{is_json_space, BOM};

/// The delimiters a hint may suggest, in the order they are tried.
const DELIMITERS: [u8; 3] = [b',', b';', b'\t'];

/// How many lines at most are looked at.
const LINES: usize = 10;

/// A `Json` source's hint: lines that are no JSON but split evenly into
/// cells (CSV), or one object holding one array of records (`at`).
pub fn json(spec: &SourceSpec, first: &[u8], complete: bool) -> Option<Hint> {
    if spec.boundary.json.at.is_some() {
        return None;
    }
    let first = first.strip_prefix(BOM).unwrap_or(first);
    // A file named as JSON Lines (an extension of the format that is not
    // one of a whole document) that holds one object is a file of one
    // record, however that record is shaped.
    let lines = spec
        .path()
        .is_some_and(|p| spec.format.is_format_of(p) && !spec.format.writes_whole(p));
    match first.iter().find(|&&b| !is_json_space(b))? {
        b'{' if lines => None,
        b'{' => enveloped(first, complete),
        b'[' => None,
        _ => like_csv(first, complete),
    }
}

/// Every one of the first lines fails to decode as JSON, and they split
/// evenly on one delimiter.
fn like_csv(first: &[u8], complete: bool) -> Option<Hint> {
    let lines = first_lines(first, complete);
    if lines.is_empty()
        || (lines.iter()).any(|l| serde_json::from_slice::<serde_json::Value>(l).is_ok())
    {
        return None;
    }
    let (d, n) = even_split(&lines, b'"')?;
    let options = match d {
        b',' => vec![],
        d => vec![("delimiter", char::from(d).to_string())],
    };
    Some(Hint {
        seen: format!(
            "the first {} are not JSON, and each splits into {n} cells on {}",
            count(lines.len(), "line"),
            delimiter_name(d)
        ),
        looks: "it looks like CSV".to_string(),
        format: "Csv",
        options,
    })
}

/// The source is one object one of whose members, and only one, is an
/// array of records: the pointer that reads them. A document larger than
/// `first` is judged by its first member.
fn enveloped(first: &[u8], complete: bool) -> Option<Hint> {
    let (key, records) = match complete {
        true => {
            let serde_json::Value::Object(members) = serde_json::from_slice(first).ok()? else {
                return None;
            };
            let mut arrays = members.into_iter().filter_map(|(k, v)| match v {
                serde_json::Value::Array(items)
                    if !items.is_empty() && items.iter().all(|i| i.is_object()) =>
                {
                    Some((k, Some(items.len())))
                }
                _ => None,
            });
            let found = arrays.next()?;
            if arrays.next().is_some() {
                return None;
            }
            found
        }
        false => (first_member_of_records(first)?, None),
    };
    let pointer = format!("/{}", key.replace('~', "~0").replace('/', "~1"));
    let held = match records {
        Some(n) => format!("an array of {}", count(n, "record")),
        None => "an array of records".to_string(),
    };
    Some(Hint {
        seen: format!("the file is one object, and its member {key:?} holds {held}"),
        looks: "it looks like an envelope around the records".to_string(),
        format: "Json",
        options: vec![("at", pointer)],
    })
}

/// The key of a document's first member when its value opens an array
/// of objects: `{"data": [{`.
fn first_member_of_records(text: &[u8]) -> Option<String> {
    let mut at = 0;
    let skip_space = |at: &mut usize| {
        while text.get(*at).is_some_and(|&b| is_json_space(b)) {
            *at += 1;
        }
    };
    let expect = |at: &mut usize, byte: u8| {
        skip_space(at);
        let found = text.get(*at) == Some(&byte);
        *at += 1;
        found
    };
    if !expect(&mut at, b'{') || !expect(&mut at, b'"') {
        return None;
    }
    let end = at + text[at..].iter().position(|&b| b == b'"' || b == b'\\')?;
    let key = std::str::from_utf8(&text[at..end]).ok()?.to_string();
    at = end;
    (expect(&mut at, b'"')
        && expect(&mut at, b':')
        && expect(&mut at, b'[')
        && expect(&mut at, b'{'))
    .then_some(key)
}

/// A CSV source's hint: a header of one column that holds another
/// delimiter.
pub fn csv(spec: &SourceSpec, first: &[u8], complete: bool) -> Option<Hint> {
    let options = &spec.boundary.csv;
    if !options.header || options.encoding == Encoding::Utf16 {
        return None;
    }
    let first = first.strip_prefix(BOM).unwrap_or(first);
    let lines = first_lines(first, complete);
    let header = lines.first()?;
    let (delimiter, quote) = (options.delimiter_for(spec.path()), options.quote);
    if cells(header, delimiter, quote) != 1 {
        return None;
    }
    let (d, n) = (DELIMITERS.into_iter())
        .filter(|&d| d != delimiter)
        .map(|d| (d, cells(header, d, quote)))
        .filter(|&(_, n)| n > 1)
        .max_by_key(|&(_, n)| n)?;
    Some(Hint {
        seen: format!(
            "the header is one column, and splits into {n} on {}",
            delimiter_name(d)
        ),
        looks: format!("it looks {}-separated", delimiter_name(d)),
        format: "Csv",
        options: vec![("delimiter", char::from(d).to_string())],
    })
}

/// `n` of a noun, with its plural.
fn count(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// The whole lines among `first` (the last one only if the file ends
/// there), blank ones left out, at most `LINES`.
fn first_lines(first: &[u8], complete: bool) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = first.split(|&b| b == b'\n').collect();
    if !complete {
        lines.pop();
    }
    lines
        .into_iter()
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .take(LINES)
        .collect()
}

/// The cells `line` splits into on `delimiter`, cells quoted with
/// `quote` kept whole.
fn cells(line: &[u8], delimiter: u8, quote: u8) -> usize {
    let mut quoted = false;
    let mut n = 1;
    for &b in line {
        match b {
            b if b == quote => quoted = !quoted,
            b if b == delimiter && !quoted => n += 1,
            _ => {}
        }
    }
    n
}

/// The delimiter every one of `lines` splits on into the same number of
/// cells, more than one: the one giving the most cells.
fn even_split(lines: &[&[u8]], quote: u8) -> Option<(u8, usize)> {
    DELIMITERS
        .into_iter()
        .filter_map(|d| {
            let n = cells(lines.first()?, d, quote);
            (n > 1 && lines.iter().all(|l| cells(l, d, quote) == n)).then_some((d, n))
        })
        .max_by_key(|&(_, n)| n)
}

/// A delimiter as prose names it.
fn delimiter_name(d: u8) -> &'static str {
    match d {
        b',' => "`,`",
        b';' => "`;`",
        _ => "tab",
    }
}
