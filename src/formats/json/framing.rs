//! The framing of JSON sources (language.md §6): a reader holding either
//! one JSON array of records or JSON Lines, cut into the texts of its
//! records, each decoded by `crate::runtime::json::Decoder` with the line
//! it starts on.

use std::io::{self, BufRead};

use super::pointer::{Met, Walk};
use crate::runtime::eval::io::{LineReader, Pointer, Unreadable};
use crate::runtime::json::{
    byte_set, fill, is_json_space, strip_line_end, Decoder, BOM, HUGE_LINE,
};
use crate::runtime::value::Value;

/// How much of the text after a closed top-level array a failure quotes.
const TRAILING_QUOTE_LIMIT: usize = 256;

/// One record read by a [`JsonSource`], with the line it starts on.
#[derive(Debug)]
pub struct Decoded {
    pub line: u64,
    pub result: Result<Value, DecodeFailure>,
}

/// A record that did not decode: why, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeFailure {
    pub message: String,
    pub raw: String,
    /// Not a record's failure but the end of the reading, an error; and
    /// why.
    pub ending: Option<Ending>,
}

/// Why a JSON source cannot be read on: each ends the reading with an
/// error of its own rather than a failure record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// A line longer than the longest allowed (`eval::io::max_line`).
    TooLong,
    /// The bytes could not be read on, as the host explains (a compressed
    /// stream cut short).
    Unreadable(Unreadable),
    /// The pointer `at`, given here, names nothing, or no array.
    Pointer(String),
}

impl DecodeFailure {
    fn new(message: impl Into<String>, raw: &[u8]) -> DecodeFailure {
        DecodeFailure {
            message: message.into(),
            raw: String::from_utf8_lossy(raw).into_owned(),
            ending: None,
        }
    }

    /// `new` of the first `len` bytes of `text`, taking its buffer.
    fn owned(message: impl Into<String>, mut text: Vec<u8>, len: usize) -> DecodeFailure {
        text.truncate(len);
        let raw = String::from_utf8(text)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        DecodeFailure {
            message: message.into(),
            raw,
            ending: None,
        }
    }

    /// The failure of a line longer than the longest allowed.
    fn too_long() -> DecodeFailure {
        DecodeFailure {
            ending: Some(Ending::TooLong),
            ..DecodeFailure::new("too long", b"")
        }
    }
}

/// Records from a reader holding either one JSON array (when its first
/// non-whitespace byte is `[`) or JSON Lines. A record that does not decode
/// is yielded as a failure and reading goes on; an I/O error ends the
/// iteration after one failure. Memory use is bounded by the largest
/// record, never the whole input.
pub struct JsonSource<R: BufRead> {
    reader: R,
    decoder: Decoder,
    /// Newlines consumed so far; the current line is `lines_read + 1`.
    lines_read: u64,
    /// The JSON line being read, reused from line to line.
    line: Vec<u8>,
    /// Does `line` hold a whole line, not read from `reader`
    /// (`with_first_line`)?
    preloaded: bool,
    layout: Layout,
    /// Turns a JSON line straight into the value to yield, when it can.
    line_reader: Option<LineReader>,
    /// The longest line (or array element) read, in bytes.
    max_line: usize,
    /// The walk to the array `at` names, and over the rest of its document.
    walk: Option<Walk>,
}

enum Layout {
    Unknown,
    /// Walking the document outside the array `at` names.
    Seek,
    Lines,
    Array(ElementScanner),
    Finished,
}

impl<R: BufRead> JsonSource<R> {
    pub fn new(reader: R) -> JsonSource<R> {
        JsonSource {
            reader,
            decoder: Decoder::new(),
            lines_read: 0,
            line: Vec::new(),
            preloaded: false,
            layout: Layout::Unknown,
            line_reader: None,
            max_line: crate::runtime::limits::max_line(),
            walk: None,
        }
    }

    /// The elements of the array `pointer` names inside the one document
    /// `reader` holds.
    pub fn at(reader: R, pointer: &Pointer) -> JsonSource<R> {
        JsonSource {
            layout: Layout::Seek,
            walk: Some(Walk::new(pointer)),
            ..JsonSource::new(reader)
        }
    }

    /// Walk on to the array `at` names (its elements then read by the
    /// element scanner), or over the rest of the document after it.
    fn seek(&mut self) -> Option<Decoded> {
        if self.lines_read == 0 && !self.walk.as_ref()?.begun() {
            if let Err(e) = self.skip_bom() {
                return Some(self.io_failure(&e));
            }
        }
        loop {
            let walk = self.walk.as_mut()?;
            let buf = match fill(&mut self.reader) {
                Ok(buf) => buf,
                Err(e) => return Some(self.io_failure(&e)),
            };
            let (used, met) = match buf.is_empty() {
                true => (0, Some(walk.at_end())),
                false => {
                    let (used, met) = walk.feed(buf);
                    (used, met.map(Some))
                }
            };
            self.lines_read += count_newlines(&buf[..used]);
            self.reader.consume(used);
            match met {
                None => continue,
                Some(Some(Met::Array)) => {
                    let mut scanner = ElementScanner::new();
                    scanner.max_line = self.max_line;
                    scanner.nested = true;
                    self.layout = Layout::Array(scanner);
                    return self.next_element();
                }
                Some(met) => {
                    self.layout = Layout::Finished;
                    return met.map(|met| self.met(met));
                }
            }
        }
    }

    /// What the walk met, as a failure on the line it stands on.
    fn met(&self, met: Met) -> Decoded {
        let pointer = self.walk.as_ref().map(|w| w.pointer.clone());
        let failure = match met {
            Met::Missing(why) => DecodeFailure {
                ending: pointer.map(Ending::Pointer),
                ..DecodeFailure::new(why, b"")
            },
            Met::Malformed(why) => {
                DecodeFailure::new(format!("the document is not well-formed: {why}"), b"")
            }
            Met::Array => DecodeFailure::new("a second array where `at` points", b""),
        };
        Decoded {
            line: self.lines_read + 1,
            result: Err(failure),
        }
    }

    /// A reader of JSON Lines only (a part of a file cut at a newline):
    /// every line is a record, whatever its first byte, and no byte-order
    /// mark is looked for.
    pub fn lines(reader: R) -> JsonSource<R> {
        JsonSource {
            layout: Layout::Lines,
            ..JsonSource::new(reader)
        }
    }

    /// JSON Lines whose first line, with its newline, is `line` (its
    /// buffer, which a huge line's string then takes), the rest from the
    /// reader.
    pub fn with_first_line(mut self, line: Vec<u8>) -> JsonSource<R> {
        self.line = line;
        self.preloaded = true;
        self
    }

    /// Offer each line of JSON Lines input to `reader` before decoding it
    /// (elements of an array are always decoded).
    pub fn with_line_reader(mut self, reader: LineReader) -> JsonSource<R> {
        self.line_reader = Some(reader);
        self
    }

    /// A line (starting on `line`) longer than the longest allowed: the
    /// reading ends.
    fn too_long(&mut self, line: u64) -> Decoded {
        self.layout = Layout::Finished;
        self.line = Vec::new();
        Decoded {
            line,
            result: Err(DecodeFailure::too_long()),
        }
    }

    fn io_failure(&mut self, error: &io::Error) -> Decoded {
        self.layout = Layout::Finished;
        let failure = DecodeFailure {
            ending: Unreadable::of(error).cloned().map(Ending::Unreadable),
            ..DecodeFailure::new(format!("read error: {error}"), b"")
        };
        Decoded {
            line: self.lines_read + 1,
            result: Err(failure),
        }
    }

    /// Skips a byte-order mark and blank space, then picks the layout by
    /// the first significant byte. Leaves that byte unread for JSON Lines,
    /// with the current line's leading space kept in `self.line`.
    fn detect_layout(&mut self) -> Result<(), Decoded> {
        self.skip_bom().map_err(|e| self.io_failure(&e))?;
        loop {
            let buf = match fill(&mut self.reader) {
                Ok(buf) => buf,
                Err(e) => return Err(self.io_failure(&e)),
            };
            if buf.is_empty() {
                self.layout = Layout::Finished;
                return Ok(());
            }
            let first = buf.iter().position(|&b| !is_json_space(b));
            let blank = &buf[..first.unwrap_or(buf.len())];
            for &byte in blank {
                self.line.push(byte);
                if byte == b'\n' {
                    self.lines_read += 1;
                    self.line.clear();
                }
            }
            let blank_len = blank.len();
            let opens_array = first.map(|i| buf[i] == b'[');
            self.reader.consume(blank_len);
            match opens_array {
                None => continue,
                Some(true) => {
                    self.reader.consume(1);
                    self.line.clear();
                    let mut scanner = ElementScanner::new();
                    scanner.max_line = self.max_line;
                    self.layout = Layout::Array(scanner);
                }
                Some(false) => self.layout = Layout::Lines,
            }
            return Ok(());
        }
    }

    /// Skips a UTF-8 byte-order mark at the start of the input. (A mark
    /// split across the reader's first two reads is not recognised; it then
    /// fails to decode like any other stray bytes.)
    fn skip_bom(&mut self) -> io::Result<()> {
        if fill(&mut self.reader)?.starts_with(BOM) {
            self.reader.consume(BOM.len());
        }
        Ok(())
    }

    /// The next non-blank line, decoded.
    fn next_line(&mut self) -> Option<Decoded> {
        loop {
            let read = match std::mem::take(&mut self.preloaded) {
                true => Ok(self.line.len()),
                false => read_line_into(&mut self.reader, &mut self.line, self.max_line),
            };
            match read {
                Err(e) => return Some(self.io_failure(&e)),
                Ok(0) if self.line.is_empty() => {
                    self.layout = Layout::Finished;
                    return None;
                }
                Ok(_) => {}
            }
            self.lines_read += 1;
            if strip_line_end(&self.line).len() > self.max_line {
                return Some(self.too_long(self.lines_read));
            }
            let text = strip_line_end(&self.line);
            if text.iter().all(|&b| is_json_space(b)) {
                self.line.clear();
                continue;
            }
            if text.len() >= HUGE_LINE {
                // The line's buffer goes with it, to the value or the
                // failure: the next line has a buffer of its own.
                let len = text.len();
                let line = std::mem::take(&mut self.line);
                let result = self
                    .decoder
                    .decode_owned(line, len)
                    .map_err(|(e, line)| DecodeFailure::owned(e.to_string(), line, len));
                return Some(Decoded {
                    line: self.lines_read,
                    result,
                });
            }
            let direct = self.line_reader.as_mut().and_then(|read| read(text));
            let result = match direct {
                Some(v) => Ok(v),
                None => self
                    .decoder
                    .decode(text)
                    .map_err(|e| DecodeFailure::new(e.to_string(), text)),
            };
            self.line.clear();
            return Some(Decoded {
                line: self.lines_read,
                result,
            });
        }
    }

    /// The next element of the top-level array, decoded.
    fn next_element(&mut self) -> Option<Decoded> {
        let Layout::Array(scanner) = &mut self.layout else {
            return None;
        };
        while scanner.phase != Phase::Done {
            let buf = match fill(&mut self.reader) {
                Ok(buf) => buf,
                Err(e) => return Some(self.io_failure(&e)),
            };
            if buf.is_empty() {
                return scanner.at_end(self.lines_read + 1);
            }
            let (used, found) = scanner.feed(buf, self.lines_read + 1, &mut self.decoder);
            self.lines_read += count_newlines(&buf[..used]);
            self.reader.consume(used);
            if found.is_some() {
                return found;
            }
            if scanner.text.len() > self.max_line {
                let line = match scanner.phase {
                    Phase::InElement => scanner.start_line,
                    _ => self.lines_read + 1,
                };
                return Some(self.too_long(line));
            }
        }
        if let Some(walk) = &mut self.walk {
            walk.resume();
            self.layout = Layout::Seek;
            return self.seek();
        }
        self.layout = Layout::Finished;
        None
    }
}

impl<R: BufRead> Iterator for JsonSource<R> {
    type Item = Decoded;

    fn next(&mut self) -> Option<Decoded> {
        if let Layout::Unknown = self.layout {
            if let Err(failure) = self.detect_layout() {
                return Some(failure);
            }
        }
        match self.layout {
            Layout::Lines => self.next_line(),
            Layout::Array(_) => self.next_element(),
            Layout::Seek => self.seek(),
            Layout::Unknown | Layout::Finished => None,
        }
    }
}
/// Append the next line of `reader`, its newline included, to `line`
/// (as `BufRead::read_until` does, finding the newline with `memchr`);
/// how many bytes were read. Stops early, the line unfinished, once `line`
/// holds more than `limit` bytes.
fn read_line_into<R: BufRead>(
    reader: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
) -> io::Result<usize> {
    let mut read = 0;
    loop {
        let buf = fill(reader)?;
        if buf.is_empty() {
            return Ok(read);
        }
        let (used, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        line.extend_from_slice(&buf[..used]);
        reader.consume(used);
        read += used;
        if done || line.len() > limit {
            return Ok(read);
        }
    }
}

fn count_newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

fn trim_json_space(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|&b| !is_json_space(b));
    let end = bytes.iter().rposition(|&b| !is_json_space(b));
    match (start, end) {
        (Some(start), Some(end)) => &bytes[start..=end],
        _ => &[],
    }
}

/// The bytes that matter to an element scanner inside a string...
const SPECIAL_IN_STRING: [bool; 256] = byte_set(b"\"\\\n");
/// ...and outside one.
const SPECIAL_IN_ELEMENT: [bool; 256] = byte_set(b"\"[]{},\n");

/// Where the scanner of a top-level array stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// After the `[`.
    BeforeFirst,
    /// After a `,` between elements.
    BeforeNext,
    InElement,
    /// After the closing `]`.
    AfterArray,
    /// In a line of text after the closing `]` (each such line is one
    /// failure).
    Trailing,
    Done,
}

/// Splits a top-level JSON array into its elements byte by byte, tracking
/// strings and bracket depth, so each element decodes on its own and a
/// malformed one does not take the rest of the array with it.
struct ElementScanner {
    phase: Phase,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The current element's text (or the trailing text being quoted).
    text: Vec<u8>,
    start_line: u64,
    /// The longest element allowed, in bytes.
    max_line: usize,
    /// Is the array inside a document (`at`)? Its `]` ends the scanning.
    nested: bool,
}

impl ElementScanner {
    fn new() -> ElementScanner {
        ElementScanner {
            phase: Phase::BeforeFirst,
            depth: 0,
            in_string: false,
            escaped: false,
            text: Vec::new(),
            start_line: 0,
            max_line: usize::MAX,
            nested: false,
        }
    }

    /// Takes input that starts on `line` until a record is complete or the
    /// input runs out. Returns how many bytes it took and the record.
    fn feed(
        &mut self,
        bytes: &[u8],
        mut line: u64,
        decoder: &mut Decoder,
    ) -> (usize, Option<Decoded>) {
        let mut taken = 0;
        while let Some(rest) = bytes.get(taken..).filter(|rest| !rest.is_empty()) {
            if self.phase == Phase::Done {
                break;
            }
            let passed = match self.phase {
                Phase::Trailing => self.trailing_run(rest),
                _ => self.plain_run(rest),
            };
            if passed > 0 {
                taken += passed;
                continue;
            }
            let byte = rest[0];
            taken += 1;
            let record = self.feed_byte(byte, line, decoder);
            if byte == b'\n' {
                line += 1;
            }
            if record.is_some() {
                return (taken, record);
            }
        }
        (taken, None)
    }

    /// How many bytes at the start of `bytes` belong to the current element
    /// without affecting where it ends or which line it is on: they are
    /// added to its text.
    fn plain_run(&mut self, bytes: &[u8]) -> usize {
        if self.phase != Phase::InElement || self.escaped {
            return 0;
        }
        let special = if self.in_string {
            &SPECIAL_IN_STRING
        } else {
            &SPECIAL_IN_ELEMENT
        };
        let found = bytes.iter().position(|&b| special[usize::from(b)]);
        let n = found.unwrap_or(bytes.len());
        self.text.extend_from_slice(&bytes[..n]);
        n
    }

    /// Takes the next input byte, found on `line`; returns a record when
    /// the byte completes one.
    fn feed_byte(&mut self, byte: u8, line: u64, decoder: &mut Decoder) -> Option<Decoded> {
        match self.phase {
            Phase::BeforeFirst | Phase::BeforeNext => self.before_element(byte, line, decoder),
            Phase::InElement => self.in_element(byte, decoder),
            Phase::AfterArray => {
                if !is_json_space(byte) {
                    self.phase = Phase::Trailing;
                    self.start_line = line;
                    self.text.clear();
                    self.text.push(byte);
                }
                None
            }
            Phase::Trailing => self.trailing(byte),
            Phase::Done => None,
        }
    }

    fn before_element(&mut self, byte: u8, line: u64, decoder: &mut Decoder) -> Option<Decoded> {
        if is_json_space(byte) {
            return None;
        }
        self.start_line = line;
        match byte {
            b']' if self.phase == Phase::BeforeFirst => {
                self.phase = self.after_array();
                None
            }
            b']' => {
                self.phase = self.after_array();
                Some(self.missing_element())
            }
            b',' => {
                self.phase = Phase::BeforeNext;
                Some(self.missing_element())
            }
            _ => {
                self.phase = Phase::InElement;
                self.text.clear();
                self.in_element(byte, decoder)
            }
        }
    }

    fn in_element(&mut self, byte: u8, decoder: &mut Decoder) -> Option<Decoded> {
        if self.in_string {
            if byte == b'\n' {
                return Some(self.broken_string(decoder));
            }
            self.string_byte(byte);
        } else {
            match byte {
                b'"' => self.in_string = true,
                b'[' | b'{' => self.depth += 1,
                b']' | b'}' if self.depth > 0 => self.depth -= 1,
                b',' | b']' if self.depth == 0 => {
                    self.phase = match byte {
                        b',' => Phase::BeforeNext,
                        _ => self.after_array(),
                    };
                    return Some(self.decode_element(decoder));
                }
                _ => {}
            }
        }
        self.text.push(byte);
        None
    }

    /// Where the scanner stands after the array's `]`: done, when the
    /// array is inside a document whose walk goes on.
    fn after_array(&self) -> Phase {
        match self.nested {
            true => Phase::Done,
            false => Phase::AfterArray,
        }
    }

    /// Follows a string inside an element.
    fn string_byte(&mut self, byte: u8) {
        if self.escaped {
            self.escaped = false;
        } else if byte == b'\\' {
            self.escaped = true;
        } else if byte == b'"' {
            self.in_string = false;
        }
    }

    /// JSON strings cannot hold a raw newline: one inside a string means the
    /// element is broken. It fails as it stands, and scanning picks up again
    /// on the next line as if after a `,`, so a stray quote spoils one
    /// element rather than the rest of the input.
    fn broken_string(&mut self, decoder: &mut Decoder) -> Decoded {
        self.phase = Phase::BeforeNext;
        self.decode_element(decoder)
    }

    fn decode_element(&mut self, decoder: &mut Decoder) -> Decoded {
        if self.text.len() > self.max_line {
            // Ended within the bytes that took it past the limit.
            self.text = Vec::new();
            self.phase = Phase::Done;
            return Decoded {
                line: self.start_line,
                result: Err(DecodeFailure::too_long()),
            };
        }
        let text = trim_json_space(&self.text);
        let result = decoder
            .decode(text)
            .map_err(|e| DecodeFailure::new(e.to_string(), text));
        self.text.clear();
        self.depth = 0;
        self.in_string = false;
        self.escaped = false;
        Decoded {
            line: self.start_line,
            result,
        }
    }

    fn missing_element(&self) -> Decoded {
        Decoded {
            line: self.start_line,
            result: Err(DecodeFailure::new(
                "expected a value before ',' or ']'",
                b"",
            )),
        }
    }

    /// Each line of text after the array is one failure; the lines after
    /// it are read on, so nothing in the input goes uncounted.
    fn trailing(&mut self, byte: u8) -> Option<Decoded> {
        if byte == b'\n' {
            self.phase = Phase::AfterArray;
            return Some(self.trailing_failure());
        }
        if self.text.len() < TRAILING_QUOTE_LIMIT {
            self.text.push(byte);
        }
        None
    }

    /// How many bytes of a trailing line, up to its newline, can be passed
    /// over at once: the first `TRAILING_QUOTE_LIMIT` are kept to quote.
    fn trailing_run(&mut self, bytes: &[u8]) -> usize {
        let n = memchr::memchr(b'\n', bytes).unwrap_or(bytes.len());
        let room = TRAILING_QUOTE_LIMIT.saturating_sub(self.text.len());
        self.text.extend_from_slice(&bytes[..n.min(room)]);
        n
    }

    fn trailing_failure(&mut self) -> Decoded {
        let raw = trim_json_space(&self.text);
        Decoded {
            line: self.start_line,
            result: Err(DecodeFailure::new(
                "trailing characters after the array",
                raw,
            )),
        }
    }

    /// What the end of the input means where the scanner stands.
    fn at_end(&mut self, line: u64) -> Option<Decoded> {
        let phase = std::mem::replace(&mut self.phase, Phase::Done);
        let line = match phase {
            Phase::InElement => self.start_line,
            Phase::BeforeFirst | Phase::BeforeNext => line,
            Phase::Trailing => return Some(self.trailing_failure()),
            Phase::AfterArray | Phase::Done => return None,
        };
        let raw = trim_json_space(&self.text);
        let failure = DecodeFailure::new("unterminated array: the input ends before ']'", raw);
        Some(Decoded {
            line,
            result: Err(failure),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::json::tests::hostile_inputs;
    use crate::runtime::json::to_json;

    #[test]
    fn arbitrary_bytes_never_panic() {
        hostile_inputs(|bytes| {
            let _ = JsonSource::new(bytes).count();
        });
    }

    fn read_all(input: &[u8]) -> Vec<(u64, Result<String, DecodeFailure>)> {
        JsonSource::new(input)
            .map(|d| (d.line, d.result.map(|v| to_json(&v))))
            .collect()
    }

    fn ok(line: u64, json: &str) -> (u64, Result<String, DecodeFailure>) {
        (line, Ok(json.to_string()))
    }

    #[test]
    fn json_lines_skip_blank_lines_and_go_on_after_a_bad_one() {
        let input = b"{\"a\": 1}\n\n   \n{\"a\": oops}\n[2, 3]\n\t\n\"last\"";
        let records = read_all(input);
        assert_eq!(records.len(), 4);
        assert_eq!(records[0], ok(1, r#"{"a":1}"#));
        let (line, Err(failure)) = &records[1] else {
            panic!()
        };
        assert_eq!(*line, 4);
        assert_eq!(failure.raw, r#"{"a": oops}"#);
        assert_eq!(failure.message, "expected a value at column 7");
        assert_eq!(records[2], ok(5, "[2,3]"));
        assert_eq!(records[3], ok(7, r#""last""#));
    }

    #[test]
    fn json_lines_with_crlf_bom_and_leading_blank_lines() {
        let input = b"\xEF\xBB\xBF\r\n  \r\n  {\"a\": 1}\r\n{\"b\": 2}\r\nnope\r\n";
        let records = read_all(input);
        assert_eq!(records[0], ok(3, r#"{"a":1}"#));
        assert_eq!(records[1], ok(4, r#"{"b":2}"#));
        let (5, Err(failure)) = &records[2] else {
            panic!("{records:?}")
        };
        assert_eq!(failure.raw, "nope");
        assert_eq!(records.len(), 3);
    }

    #[test]
    fn json_lines_report_the_whole_line_with_its_leading_space() {
        let records = read_all(b"\n   {bad\n");
        let (2, Err(failure)) = &records[0] else {
            panic!("{records:?}")
        };
        assert_eq!(failure.raw, "   {bad");
    }

    #[test]
    fn array_elements_carry_their_start_lines() {
        let input = b"\xEF\xBB\xBF\r\n[\r\n  {\"a\": 1},\r\n  {\"b\":\r\n    [1, \"],\"]},\r\n  3, \"s\"\r\n]\r\n";
        let records = read_all(input);
        assert_eq!(
            records,
            vec![
                ok(3, r#"{"a":1}"#),
                ok(4, r#"{"b":[1,"],"]}"#),
                ok(6, "3"),
                ok(6, r#""s""#),
            ]
        );
    }

    #[test]
    fn array_on_one_line_and_empty_array() {
        assert_eq!(
            read_all(br#"[1,"a\"]",[2],{}]"#),
            vec![ok(1, "1"), ok(1, r#""a\"]""#), ok(1, "[2]"), ok(1, "{}")]
        );
        assert!(read_all(b"  [ ]  \n").is_empty());
        assert!(read_all(b"").is_empty());
        assert!(read_all(b" \n \n").is_empty());
    }

    #[test]
    fn malformed_array_element_does_not_stop_the_rest() {
        let input = b"[\n{\"a\": 1},\n{\"a\": tru},\n{\"a\" 3},\n{\"a\": 4}\n]";
        let records = read_all(input);
        assert_eq!(records.len(), 4);
        assert_eq!(records[0], ok(2, r#"{"a":1}"#));
        let (3, Err(failure)) = &records[1] else {
            panic!("{records:?}")
        };
        assert_eq!(failure.raw, r#"{"a": tru}"#);
        assert_eq!(failure.message, "invalid literal at column 7");
        let (4, Err(_)) = &records[2] else {
            panic!("{records:?}")
        };
        assert_eq!(records[3], ok(5, r#"{"a":4}"#));
    }

    #[test]
    fn array_with_missing_elements() {
        let records = read_all(b"[1,,2,]");
        assert_eq!(records.len(), 4);
        assert_eq!(records[0], ok(1, "1"));
        assert!(records[1].1.is_err());
        assert_eq!(records[2], ok(1, "2"));
        assert!(records[3].1.is_err());
    }

    #[test]
    fn unclosed_quote_in_array_spoils_one_line_only() {
        let records = read_all(b"[\n{\"a\": \"x},\n{\"a\": 2}\n]");
        assert!(records[0].1.is_err());
        assert_eq!(records.last(), Some(&ok(3, r#"{"a":2}"#)));
    }

    #[test]
    fn unterminated_array_ends_with_a_failure() {
        let records = read_all(b"[1,\n {\"a\": 2");
        assert_eq!(records[0], ok(1, "1"));
        let (2, Err(failure)) = &records[1] else {
            panic!("{records:?}")
        };
        assert_eq!(failure.raw, r#"{"a": 2"#);
        assert!(failure.message.starts_with("unterminated array"));
        assert_eq!(records.len(), 2);

        let records = read_all(b"[1,\n\n");
        assert_eq!(records.len(), 2);
        assert_eq!(records[1].0, 3);
        assert!(records[1].1.is_err());
    }

    #[test]
    fn each_line_after_the_array_is_one_failure() {
        let records = read_all(b"[1, 2]\n\n  [3, 4]\n5\n");
        assert_eq!(records.len(), 4);
        let (3, Err(failure)) = &records[2] else {
            panic!("{records:?}")
        };
        assert_eq!(failure.raw, "[3, 4]");
        assert_eq!(failure.message, "trailing characters after the array");
        let (4, Err(failure)) = &records[3] else {
            panic!("{records:?}")
        };
        assert_eq!(failure.raw, "5");
        let records = read_all(b"[1] x");
        assert_eq!(records.len(), 2);
        assert_eq!(records[1].1.as_ref().unwrap_err().raw, "x");
        // Text on the line of the `]`, then JSON Lines: one failure a line.
        let records = read_all(b"[1] x\r\n{\"a\": 1}\n\n{\"a\": 2}");
        let lines: Vec<u64> = records.iter().map(|r| r.0).collect();
        assert_eq!(lines, [1, 1, 2, 4]);
        assert!(records[1..].iter().all(|r| r.1.is_err()));
        assert_eq!(records[2].1.as_ref().unwrap_err().raw, r#"{"a": 1}"#);
    }

    #[test]
    fn a_long_line_after_the_array_is_quoted_in_part() {
        let mut input = b"[1]\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 100_000));
        input.extend_from_slice(b"\ny\n");
        let records: Vec<_> = JsonSource::new(trickle(&input, false)).collect();
        assert_eq!(records.len(), 3);
        let raw = &records[1].result.as_ref().unwrap_err().raw;
        assert_eq!(raw.len(), TRAILING_QUOTE_LIMIT);
        assert_eq!((records[1].line, records[2].line), (2, 3));
    }

    /// A reader that hands out its input a few bytes at a time, then fails.
    struct Trickle {
        data: Vec<u8>,
        pos: usize,
        fail_at_end: bool,
    }

    impl io::Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.pos == self.data.len() && self.fail_at_end {
                return Err(io::Error::other("disk on fire"));
            }
            let n = buf.len().min(3).min(self.data.len() - self.pos);
            buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    fn trickle(data: &[u8], fail_at_end: bool) -> io::BufReader<Trickle> {
        io::BufReader::with_capacity(
            4,
            Trickle {
                data: data.to_vec(),
                pos: 0,
                fail_at_end,
            },
        )
    }

    #[test]
    fn small_reads_give_the_same_records() {
        let input = b"\xEF\xBB\xBF \n [ {\"k\": \"v\\\"]\"},\n 12345678901234567890123 ]";
        let direct = read_all(input);
        let trickled: Vec<_> = JsonSource::new(trickle(input, false))
            .map(|d| (d.line, d.result.map(|v| to_json(&v))))
            .collect();
        assert_eq!(direct, trickled);
        assert_eq!(direct[1], ok(3, "12345678901234567890123"));
    }

    #[test]
    fn io_error_gives_one_failure_and_ends() {
        let records: Vec<_> = JsonSource::new(trickle(b"{\"a\": 1}\n", true)).collect();
        assert_eq!(records.len(), 2);
        assert!(records[0].result.is_ok());
        let failure = records[1].result.as_ref().unwrap_err();
        assert!(failure.message.contains("disk on fire"));

        let records: Vec<_> = JsonSource::new(trickle(b"[1, 2", true)).collect();
        assert_eq!(records.len(), 2);
        assert!(records[1].result.is_err());
    }
}
