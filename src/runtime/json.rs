//! JSON for HQL: reading data that arrives from outside, writing values back.
//!
//! Input: the bytes of one JSON value ([`Decoder::decode`]); how a source's
//! bytes are framed into such values (JSON Lines, one array) is the JSON
//! format's (`crate::formats`), which the runtime reaches through
//! `eval::io::JsonText`.
//! Output: [`Value`]s. Objects become records in field order, arrays become
//! lists, numbers keep their source text ([`Value::from_number_text`]).
//!
//! [`write_json`] goes the other way: a value to compact standard JSON text.

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::io::{self, BufRead};
use std::ops::Range;
use std::rc::Rc;

use rustc_hash::FxHashSet;
use smallvec::SmallVec;

use crate::runtime::value::{Key, Record, Value};

/// How deeply arrays and objects may nest before decoding gives up.
const MAX_DEPTH: usize = 512;
/// How many distinct record keys one decoder shares between records.
const KEY_CACHE_LIMIT: usize = 4096;
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

const END_OF_INPUT: &str = "unexpected end of input";

// ---------------------------------------------------------------------------
// Decoding one value
// ---------------------------------------------------------------------------

/// Why a JSON text did not decode, and where (1-based character column
/// within the bytes given to [`Decoder::decode`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    pub message: String,
    pub column: usize,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at column {}", self.message, self.column)
    }
}

impl std::error::Error for JsonError {}

/// Decodes JSON texts into values. Record keys seen before are shared, so
/// every record of a stream points at the same key strings.
#[derive(Default)]
pub struct Decoder {
    keys: FxHashSet<Key>,
    /// The keys of the last record, by position: the next record of a
    /// stream usually has the same ones in the same order, and comparing
    /// bytes is cheaper than hashing them.
    recent: Vec<Key>,
    /// Fields of the records being decoded, innermost last; each record
    /// is built at its final size once its `}` is reached.
    fields: Vec<(Key, Value)>,
    /// Elements of the lists being decoded, likewise.
    items: Vec<Value>,
}

impl Decoder {
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Decodes exactly one JSON value; whitespace may surround it, nothing
    /// else may follow it.
    pub fn decode(&mut self, bytes: &[u8]) -> Result<Value, JsonError> {
        let mut parser = Parser::new(bytes, self);
        parser.document().map_err(|fault| fault.at(bytes))
    }

    /// Decodes the first `len` bytes of `text` as `decode` does, taking
    /// `text`'s buffer for the value's string when one string without
    /// escapes is most of it: the string's bytes are moved to the front
    /// and the rest let go, so a huge line costs about its size once
    /// rather than twice. On an error `text` is given back.
    pub fn decode_owned(
        &mut self,
        mut text: Vec<u8>,
        len: usize,
    ) -> Result<Value, (JsonError, Vec<u8>)> {
        let bytes = &text[..len];
        let mut parser = Parser::new(bytes, self);
        parser.defer_at_least = len / 2;
        let decoded = parser.document();
        let deferred = parser.deferred.take();
        let mut value = match decoded {
            Ok(value) => value,
            Err(fault) => return Err((fault.at(bytes), text)),
        };
        let Some((range, placeholder)) = deferred else {
            return Ok(value);
        };
        text.copy_within(range.clone(), 0);
        text.truncate(range.len());
        text.shrink_to_fit();
        // The parser checked the string's UTF-8.
        let string = String::from_utf8(text)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        put_string(&mut value, &placeholder, &mut Some(string));
        Ok(value)
    }
}

/// Put `string` where `value` holds `placeholder`; `false` when it holds
/// it nowhere (a later field of the same name took its place). The value
/// was just decoded, so its records and lists have no other owner.
fn put_string(value: &mut Value, placeholder: &Rc<String>, string: &mut Option<String>) -> bool {
    match value {
        Value::Str(s) if Rc::ptr_eq(s, placeholder) => {
            *value = Value::Str(Rc::new(string.take().unwrap_or_default()));
            true
        }
        Value::Record(r) => Rc::get_mut(r)
            .is_some_and(|r| r.values_mut().any(|v| put_string(v, placeholder, string))),
        Value::List(l) => {
            Rc::get_mut(l).is_some_and(|l| l.iter_mut().any(|v| put_string(v, placeholder, string)))
        }
        _ => false,
    }
}

/// The 1-based character column of byte offset `pos`.
fn char_column(bytes: &[u8], pos: usize) -> usize {
    let before = bytes.get(..pos).unwrap_or(bytes);
    let chars = before.iter().filter(|&&b| b & 0xC0 != 0x80).count();
    chars + 1
}

/// A decoding error at a byte offset.
pub(crate) struct Fault {
    message: &'static str,
    pos: usize,
}

impl Fault {
    /// The error as the decoder reports it, in `bytes`, the text parsed.
    fn at(self, bytes: &[u8]) -> JsonError {
        JsonError {
            message: self.message.to_string(),
            column: char_column(bytes, self.pos),
        }
    }
}

pub(crate) type Parsed<T> = Result<T, Fault>;

/// A place in the input, with its nesting depth (`Parser::mark`).
#[derive(Clone, Copy)]
pub(crate) struct Mark {
    pos: usize,
    depth: usize,
}

/// A recursive-descent parser over one JSON text. Besides decoding whole
/// values, it reads tokens one at a time for a caller that checks a record
/// as it goes (`crate::runtime::scan`).
pub(crate) struct Parser<'a, 'k> {
    bytes: &'a [u8],
    /// The same input as text, when it is valid UTF-8 as a whole (strings
    /// are then sliced from it with no further check).
    text: Option<&'a str>,
    pos: usize,
    depth: usize,
    decoder: &'k mut Decoder,
    /// Were the keys of some object passed over without being told apart
    /// (an object decoded or skipped whole, or a key its reader did not
    /// compare)? A repeated key there would decode to one field, so the
    /// text could not stand for the value as it is.
    pub(crate) keys_unchecked: bool,
    /// A string without escapes at least this long is left in the input
    /// (`Decoder::decode_owned`): its place there, and the placeholder
    /// the value holds instead, go to `deferred`. One at most.
    defer_at_least: usize,
    deferred: Option<(Range<usize>, Rc<String>)>,
}

pub(crate) fn is_json_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

impl<'a, 'k> Parser<'a, 'k> {
    pub(crate) fn new(bytes: &'a [u8], decoder: &'k mut Decoder) -> Parser<'a, 'k> {
        decoder.fields.clear();
        decoder.items.clear();
        Parser {
            bytes,
            text: std::str::from_utf8(bytes).ok(),
            pos: 0,
            depth: 0,
            decoder,
            keys_unchecked: false,
            defer_at_least: usize::MAX,
            deferred: None,
        }
    }

    fn document(&mut self) -> Parsed<Value> {
        let value = self.value()?;
        self.skip_space();
        if self.pos < self.bytes.len() {
            return Err(self.fault("trailing characters after the value"));
        }
        Ok(value)
    }

    fn fault(&self, message: &'static str) -> Fault {
        Fault {
            message,
            pos: self.pos,
        }
    }

    /// `message` where there is input left, the end-of-input error otherwise.
    fn fault_or_end(&self, message: &'static str) -> Fault {
        if self.pos < self.bytes.len() {
            self.fault(message)
        } else {
            self.fault(END_OF_INPUT)
        }
    }

    fn current(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn rest(&self) -> &'a [u8] {
        self.bytes.get(self.pos..).unwrap_or_default()
    }

    pub(crate) fn skip_space(&mut self) {
        while self.current().is_some_and(is_json_space) {
            self.pos += 1;
        }
    }

    /// The next significant byte, left unconsumed.
    pub(crate) fn peek_token(&mut self) -> Parsed<u8> {
        self.skip_space();
        self.current().ok_or_else(|| self.fault(END_OF_INPUT))
    }

    /// Consumes the byte `peek_token` returned.
    pub(crate) fn bump(&mut self) {
        self.pos += 1;
    }

    /// A fault that means "not decided here" to a caller reading on its
    /// own terms (`crate::runtime::scan`).
    pub(crate) fn give_up(&self) -> Fault {
        self.fault("left to the ordinary path")
    }

    /// Consumes the `{` or `[` `peek_token` returned, counting one level of
    /// nesting as `value` does.
    pub(crate) fn open(&mut self) -> Parsed<()> {
        self.descend()?;
        self.pos += 1;
        Ok(())
    }

    /// One level deeper, within the depth limit.
    fn descend(&mut self) -> Parsed<()> {
        if self.depth == MAX_DEPTH {
            return Err(self.fault("arrays and objects nested deeper than 512 levels"));
        }
        self.depth += 1;
        Ok(())
    }

    /// Consumes `"text"` when the input goes on with exactly that: a string
    /// whose raw bytes are `text`, so it has no escapes to decode.
    pub(crate) fn eat_plain_string(&mut self, text: &[u8]) -> bool {
        let rest = self.rest();
        let n = text.len();
        let found = rest.get(n + 1) == Some(&b'"')
            && rest.first() == Some(&b'"')
            && rest.get(1..=n) == Some(text);
        if found {
            self.pos += text.len() + 2;
        }
        found
    }

    /// Where the parser stands, to come back to with `rewind`.
    pub(crate) fn mark(&self) -> Mark {
        Mark {
            pos: self.pos,
            depth: self.depth,
        }
    }

    pub(crate) fn rewind(&mut self, mark: Mark) {
        self.pos = mark.pos;
        self.depth = mark.depth;
    }

    /// Consumes the `}` or `]` `peek_token` returned, leaving the level
    /// `open` entered.
    pub(crate) fn close(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        self.pos += 1;
    }

    /// Is nothing but whitespace left?
    pub(crate) fn at_end(&mut self) -> bool {
        self.skip_space();
        self.pos == self.bytes.len()
    }

    pub(crate) fn value(&mut self) -> Parsed<Value> {
        match self.peek_token()? {
            b'{' => self.nested(Self::record),
            b'[' => self.nested(Self::list),
            b'"' => self.string_value(),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(self.fault("expected a value")),
        }
    }

    /// A string value; one long enough is deferred (`defer_at_least`).
    fn string_value(&mut self) -> Parsed<Value> {
        let start = self.pos + 1;
        let text = self.string()?;
        if let Cow::Borrowed(run) = text {
            if run.len() >= self.defer_at_least && self.deferred.is_none() {
                let placeholder = Rc::new(String::new());
                self.deferred = Some((start..start + run.len(), placeholder.clone()));
                return Ok(Value::Str(placeholder));
            }
        }
        Ok(Value::str(text))
    }

    /// Reads one value as `value` does, building nothing: for fields whose
    /// value no one will look at.
    pub(crate) fn skip_value(&mut self) -> Parsed<()> {
        match self.peek_token()? {
            b'{' => self.nested(Self::skip_record),
            b'[' => self.nested(Self::skip_list),
            b'"' => self.string().map(drop),
            b't' => self.literal("true", ()),
            b'f' => self.literal("false", ()),
            b'n' => self.literal("null", ()),
            b'-' | b'0'..=b'9' => self.number_text().map(drop),
            _ => Err(self.fault("expected a value")),
        }
    }

    fn skip_record(&mut self) -> Parsed<()> {
        self.keys_unchecked = true;
        self.members(b'}', |p| {
            if p.peek_token()? != b'"' {
                return Err(p.fault("expected a string as object key"));
            }
            p.string()?;
            p.colon()?;
            p.skip_value()
        })
    }

    fn skip_list(&mut self) -> Parsed<()> {
        self.members(b']', Self::skip_value)
    }

    /// The members of an object or array, each read by `member`, up to
    /// `close`; the parser stands on the opening bracket.
    fn members(
        &mut self,
        close: u8,
        mut member: impl FnMut(&mut Self) -> Parsed<()>,
    ) -> Parsed<()> {
        self.pos += 1;
        if self.peek_token()? != close {
            loop {
                member(self)?;
                match self.peek_token()? {
                    b',' => self.pos += 1,
                    b if b == close => break,
                    _ if close == b'}' => {
                        return Err(self.fault("expected ',' or '}' after an object field"))
                    }
                    _ => return Err(self.fault("expected ',' or ']' after a list element")),
                }
            }
        }
        self.pos += 1;
        Ok(())
    }

    /// The `:` after an object key.
    pub(crate) fn colon(&mut self) -> Parsed<()> {
        if self.peek_token()? != b':' {
            return Err(self.fault("expected ':' after an object key"));
        }
        self.pos += 1;
        Ok(())
    }

    /// Parses a record or list one level deeper, within the depth limit.
    fn nested<T>(&mut self, parse: fn(&mut Self) -> Parsed<T>) -> Parsed<T> {
        self.descend()?;
        let value = parse(self);
        self.depth -= 1;
        value
    }

    /// An object; the parser stands on its `{`.
    fn record(&mut self) -> Parsed<Value> {
        self.keys_unchecked = true;
        let base = self.decoder.fields.len();
        self.members(b'}', |p| {
            let key = p.key()?;
            p.colon()?;
            let value = p.value()?;
            p.decoder.fields.push((key, value));
            Ok(())
        })?;
        // Collecting inserts in order: a repeated key keeps its first
        // position and takes the last value.
        let record: Record = self.decoder.fields.drain(base..).collect();
        Ok(Value::record(record))
    }

    fn key(&mut self) -> Parsed<Key> {
        if self.peek_token()? != b'"' {
            return Err(self.fault("expected a string as object key"));
        }
        let name = self.string()?;
        let position = self.decoder.fields.len();
        if let Some(key) = self.decoder.recent.get(position) {
            if **key == *name {
                return Ok(key.clone());
            }
        }
        let key = self.intern(&name);
        let recent = &mut self.decoder.recent;
        if position < 64 {
            recent.truncate(position);
            if recent.len() == position {
                recent.push(key.clone());
            }
        }
        Ok(key)
    }

    /// The shared key for `name`, remembered while the cache has room.
    fn intern(&mut self, name: &str) -> Key {
        let keys = &mut self.decoder.keys;
        if let Some(key) = keys.get(name) {
            return key.clone();
        }
        let key: Key = Rc::from(name);
        if keys.len() < KEY_CACHE_LIMIT {
            keys.insert(key.clone());
        }
        key
    }

    /// An array; the parser stands on its `[`.
    fn list(&mut self) -> Parsed<Value> {
        let base = self.decoder.items.len();
        self.members(b']', |p| {
            let item = p.value()?;
            p.decoder.items.push(item);
            Ok(())
        })?;
        Ok(Value::list(self.decoder.items.drain(base..).collect()))
    }

    pub(crate) fn literal<T>(&mut self, word: &'static str, value: T) -> Parsed<T> {
        let rest = self.rest();
        if rest.starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else if word.as_bytes().starts_with(rest) {
            Err(self.fault(END_OF_INPUT))
        } else {
            Err(self.fault("invalid literal"))
        }
    }

    /// A number, checked against the JSON grammar
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Parsed<Value> {
        self.number_text().map(Value::from_number_text)
    }

    /// A number's text, checked as `number` checks it.
    pub(crate) fn number_text(&mut self) -> Parsed<&'a str> {
        let start = self.pos;
        self.eat(b'-');
        match self.current() {
            Some(b'0') => {
                self.pos += 1;
                if self.at_digit() {
                    return Err(self.fault("leading zeros are not allowed in a number"));
                }
            }
            Some(b'1'..=b'9') => self.skip_digits(),
            _ => return Err(self.fault_or_end("expected a digit after '-'")),
        }
        if self.eat(b'.') {
            self.expect_digits("expected a digit after the decimal point")?;
        }
        if self.eat(b'e') || self.eat(b'E') {
            let _sign = self.eat(b'+') || self.eat(b'-');
            self.expect_digits("expected a digit in the exponent")?;
        }
        let text = self.bytes.get(start..self.pos).unwrap_or_default();
        // Only ASCII digits, signs, '.', 'e' and 'E' were accepted above.
        std::str::from_utf8(text).map_err(|_| self.fault("invalid number"))
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.current() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    fn at_digit(&self) -> bool {
        self.current().is_some_and(|b| b.is_ascii_digit())
    }

    fn skip_digits(&mut self) {
        while self.at_digit() {
            self.pos += 1;
        }
    }

    fn expect_digits(&mut self, message: &'static str) -> Parsed<()> {
        if !self.at_digit() {
            return Err(self.fault_or_end(message));
        }
        self.skip_digits();
        Ok(())
    }

    /// A string's contents; the parser stands on its opening quote. Borrows
    /// from the input unless the string has escapes.
    pub(crate) fn string(&mut self) -> Parsed<Cow<'a, str>> {
        self.pos += 1;
        let mut unescaped: Option<String> = None;
        loop {
            let run_start = self.pos;
            let Some(run_len) = string_run_len(self.rest()) else {
                self.pos = self.bytes.len();
                return Err(self.fault(END_OF_INPUT));
            };
            self.pos += run_len;
            let run = self.utf8_since(run_start)?;
            match self.current() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(match unescaped {
                        None => Cow::Borrowed(run),
                        Some(mut text) => {
                            text.push_str(run);
                            Cow::Owned(text)
                        }
                    });
                }
                Some(b'\\') => {
                    let text = unescaped.get_or_insert_with(String::new);
                    text.push_str(run);
                    text.push(self.escape()?);
                }
                _ => return Err(self.fault("control character in a string")),
            }
        }
    }

    /// The input from `start` to the current position, which must be UTF-8.
    fn utf8_since(&self, start: usize) -> Parsed<&'a str> {
        // `start` and `pos` stand next to ASCII bytes (quotes, backslashes),
        // so they are character boundaries of a valid text.
        if let Some(run) = self.text.and_then(|t| t.get(start..self.pos)) {
            return Ok(run);
        }
        let bytes = self.bytes.get(start..self.pos).unwrap_or_default();
        std::str::from_utf8(bytes).map_err(|e| Fault {
            message: "invalid UTF-8 in a string",
            pos: start + e.valid_up_to(),
        })
    }

    /// One escape sequence; the parser stands on its backslash.
    fn escape(&mut self) -> Parsed<char> {
        let at = self.pos;
        self.pos += 1;
        let Some(letter) = self.current() else {
            return Err(self.fault(END_OF_INPUT));
        };
        self.pos += 1;
        Ok(match letter {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(at),
            _ => {
                return Err(Fault {
                    message: "invalid escape",
                    pos: at,
                })
            }
        })
    }

    /// The character of a `\uXXXX` escape (two of them for a surrogate
    /// pair); the parser stands after the `u`.
    fn unicode_escape(&mut self, at: usize) -> Parsed<char> {
        let unpaired = Fault {
            message: "unpaired surrogate in a \\u escape",
            pos: at,
        };
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if !self.rest().starts_with(b"\\u") {
                    return Err(unpaired);
                }
                self.pos += 2;
                let low = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(unpaired);
                }
                0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(unpaired),
            _ => first,
        };
        // Surrogates are excluded above, so every code here is a char.
        char::from_u32(code).ok_or(Fault {
            message: "invalid \\u escape",
            pos: at,
        })
    }

    fn hex4(&mut self) -> Parsed<u32> {
        let mut code = 0;
        for _ in 0..4 {
            let digit = self.current().and_then(|b| char::from(b).to_digit(16));
            let Some(digit) = digit else {
                return Err(self.fault_or_end("invalid \\u escape: expected four hex digits"));
            };
            code = code * 16 + digit;
            self.pos += 1;
        }
        Ok(code)
    }
}

// ---------------------------------------------------------------------------
// What the framing of JSON texts shares with the decoder
// ---------------------------------------------------------------------------

/// A line at least this long is decoded from its own buffer
/// (`Decoder::decode_owned`), so that its longest string need not be
/// copied; shorter ones share one buffer and the line reader.
pub(crate) const HUGE_LINE: usize = 16 << 20;

/// The reader's buffered bytes, reading more if there are none; empty at
/// the end of the input. Retries reads interrupted by a signal.
pub(crate) fn fill<R: BufRead>(reader: &mut R) -> io::Result<&[u8]> {
    loop {
        match reader.fill_buf() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
            Ok([]) => return Ok(&[]),
            Ok(_) => break,
        }
    }
    // The buffer is non-empty now, so this returns it without reading.
    reader.fill_buf()
}

/// A line of JSON Lines without its `\n` or `\r\n`.
pub(crate) fn strip_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Bytes that end a run of plain characters in a string being decoded:
/// the quote, a backslash, and control characters.
const ENDS_STRING_RUN: [bool; 256] = {
    let mut set = byte_set(b"\"\\");
    let mut b = 0;
    while b < 0x20 {
        set[b] = true;
        b += 1;
    }
    set
};

/// How many bytes before the first that ends a run of plain string
/// characters (`ENDS_STRING_RUN`); `None` when none does. Eight bytes are
/// tested at a time: a lane is flagged when it is a quote, a backslash or
/// below 0x20. Borrows can flag lanes above a true match, never below it,
/// so the lowest flag is exact.
fn string_run_len(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_lane = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut chunks = bytes.chunks_exact(8);
    let mut done = 0;
    for chunk in &mut chunks {
        let mut lanes = [0; 8];
        lanes.copy_from_slice(chunk);
        let x = u64::from_le_bytes(lanes);
        let flags = zero_lane(x ^ (ONES * u64::from(b'"')))
            | zero_lane(x ^ (ONES * u64::from(b'\\')))
            | (x.wrapping_sub(ONES * 0x20) & !x & HIGHS);
        if flags != 0 {
            return Some(done + flags.trailing_zeros() as usize / 8);
        }
        done += 8;
    }
    let tail = chunks.remainder();
    let special = |b: &u8| ENDS_STRING_RUN[*b as usize];
    tail.iter().position(special).map(|i| done + i)
}

pub(crate) const fn byte_set(members: &[u8]) -> [bool; 256] {
    let mut set = [false; 256];
    let mut i = 0;
    while i < members.len() {
        set[members[i] as usize] = true;
        i += 1;
    }
    set
}

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

/// Appends the JSON text `line` to `out` as [`write_json`] would write the
/// value it decodes to, without decoding it: whitespace between tokens is
/// dropped, everything else copied. Only for text known to decode; gives
/// `false` (leaving `out` partly written) where copying could differ from
/// `write_json` — a backslash (an escape `write_json` may spell otherwise)
/// or an object with a key twice (which decodes to one field).
pub fn write_compact(line: &[u8], out: &mut Vec<u8>) -> bool {
    if memchr::memchr(b'\\', line).is_some() {
        return false;
    }
    // The keys of the open objects (byte ranges of `line`), and for each
    // open bracket where its keys start — `None` for an array — and
    // whether a key comes next.
    let mut keys: SmallVec<[(usize, usize); 32]> = SmallVec::new();
    let mut open: SmallVec<[(Option<usize>, bool); 8]> = SmallVec::new();
    let mut i = 0;
    while let Some(&b) = line.get(i) {
        match b {
            b'"' => {
                let Some(len) = memchr::memchr(b'"', &line[i + 1..]) else {
                    return false;
                };
                let end = i + 1 + len;
                if let Some((Some(first), key_next @ true)) = open.last_mut() {
                    let key = &line[i + 1..end];
                    if keys[*first..].iter().any(|&(s, e)| &line[s..e] == key) {
                        return false;
                    }
                    keys.push((i + 1, end));
                    *key_next = false;
                }
                out.extend_from_slice(&line[i..=end]);
                i = end + 1;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'{' => {
                open.push((Some(keys.len()), true));
                out.push(b);
            }
            b'[' => {
                open.push((None, false));
                out.push(b);
            }
            b'}' | b']' => {
                if let Some((Some(first), _)) = open.pop() {
                    keys.truncate(first);
                }
                out.push(b);
            }
            b',' => {
                if let Some((Some(_), key_next)) = open.last_mut() {
                    *key_next = true;
                }
                out.push(b);
            }
            b':' => out.push(b),
            _ => {
                // A number or a literal: copied up to the byte that ends it.
                let run = line[i..]
                    .iter()
                    .position(|&c| ENDS_RUN[usize::from(c)])
                    .unwrap_or(line.len() - i);
                out.extend_from_slice(&line[i..i + run]);
                i += run;
                continue;
            }
        }
        i += 1;
    }
    true
}

/// The bytes `write_compact` treats one by one: structure, quotes, space.
const ENDS_RUN: [bool; 256] = {
    let mut table = [false; 256];
    let ends = b"\"{}[],: \t\r\n";
    let mut i = 0;
    while i < ends.len() {
        table[ends[i] as usize] = true;
        i += 1;
    }
    table
};

/// Appends `v` as compact JSON: `{"a":1,"b":[1,2]}`. Numbers from data keep
/// their source text; `ok(v)` is `{"ok":v}`, `err(e)` is `{"err":e}`; a
/// function or type is written as the string it prints as. Streams are the
/// caller's to expand; one reaching here is written as `null`.
pub fn write_json(out: &mut String, v: &Value) {
    crate::runtime::print::write_value::<crate::runtime::print::Json>(out, v);
}

/// `v` as compact JSON text.
pub fn to_json(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v);
    out
}

/// Appends an integer in decimal digits.
pub fn write_int(out: &mut String, n: i64) {
    // Writing to a String cannot fail.
    let _ = write!(out, "{n}");
}

/// Appends a float as Rust's `{:?}` prints it: `2.0`, `0.001`, `1e16`.
pub fn write_float(out: &mut String, f: f64) {
    // Writing to a String cannot fail.
    let _ = write!(out, "{f:?}");
}

/// Is `text` a number as JSON writes one (no `+`, no leading zero, digits
/// on both sides of a point)?
pub fn is_json_number(text: &str) -> bool {
    let body = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (mantissa, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    digits(whole)
        && (whole == "0" || !whole.starts_with('0'))
        && fraction.is_none_or(digits)
        && exponent_ok
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::runtime::print::to_hql;
    use crate::syntax::canonical::write_json_string;

    fn decode(text: &str) -> Result<Value, JsonError> {
        Decoder::new().decode(text.as_bytes())
    }

    #[test]
    fn string_runs_end_where_a_byte_by_byte_scan_ends_them() {
        let naive = |bytes: &[u8]| bytes.iter().position(|b| ENDS_STRING_RUN[*b as usize]);
        // Every special byte at every offset of runs up to 40 long, after
        // plain ASCII, multi-byte UTF-8 and bytes just above the specials.
        for filler in [b'a', 0xC3, 0x21, 0x5D, 0x23, 0xFF] {
            for len in 0..40 {
                for special in [b'"', b'\\', 0x00, 0x1F, 0x0A] {
                    for at in 0..=len {
                        let mut bytes = vec![filler; len];
                        if at < len {
                            bytes[at] = special;
                        }
                        assert_eq!(string_run_len(&bytes), naive(&bytes), "{bytes:?}");
                    }
                }
            }
        }
    }

    /// The decoded value in printed form.
    fn hql(text: &str) -> String {
        match decode(text) {
            Ok(v) => to_hql(&v),
            Err(e) => panic!("{text:?} did not decode: {e}"),
        }
    }

    /// Decoded, then encoded again.
    fn round_trip(text: &str) -> String {
        match decode(text) {
            Ok(v) => to_json(&v),
            Err(e) => panic!("{text:?} did not decode: {e}"),
        }
    }

    fn error(text: &[u8]) -> JsonError {
        match Decoder::new().decode(text) {
            Ok(v) => panic!("{text:?} decoded to {v:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn numbers_keep_their_text() {
        for text in [
            "1.50",
            "-0",
            "12345678901234567890123",
            "1e400",
            "0",
            "-12",
            "2.5",
            "1E5",
            "1e+5",
            "-0.0e-0",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
        ] {
            assert_eq!(round_trip(text), text);
            assert_eq!(hql(text), text);
        }
    }

    #[test]
    fn number_grammar_is_strict() {
        let cases: [(&[u8], &str); 9] = [
            (b"01", "leading zeros are not allowed in a number"),
            (b"-01", "leading zeros are not allowed in a number"),
            (b"+1", "expected a value"),
            (b".5", "expected a value"),
            (b"1.", END_OF_INPUT),
            (b"1.e5", "expected a digit after the decimal point"),
            (b"1e", END_OF_INPUT),
            (b"1e+x", "expected a digit in the exponent"),
            (b"-x", "expected a digit after '-'"),
        ];
        for (text, message) in cases {
            assert_eq!(error(text).message, message, "{text:?}");
        }
        assert_eq!(
            error(b"1.5.2").message,
            "trailing characters after the value"
        );
    }

    #[test]
    fn structures_decode_in_order() {
        let text = r#" {"b": [1, 2.0, true, false, null], "a": {}, "c": [], "d": "x"} "#;
        assert_eq!(
            hql(text),
            r#"{b: [1, 2.0, true, false, null], a: {}, c: [], d: "x"}"#
        );
        assert_eq!(
            round_trip(text),
            r#"{"b":[1,2.0,true,false,null],"a":{},"c":[],"d":"x"}"#
        );
    }

    #[test]
    fn repeated_key_keeps_first_position_and_last_value() {
        assert_eq!(hql(r#"{"a": 1, "b": 2, "a": 3}"#), "{a: 3, b: 2}");
    }

    #[test]
    fn keys_are_shared_between_records() {
        let v = decode(r#"[{"name": 1}, {"name": 2}]"#).unwrap();
        let Value::List(items) = v else { panic!() };
        let keys: Vec<&Key> = items
            .iter()
            .map(|item| match item {
                Value::Record(r) => r.keys().next().unwrap(),
                _ => panic!(),
            })
            .collect();
        assert!(Rc::ptr_eq(keys[0], keys[1]));
    }

    #[test]
    fn key_cache_is_bounded() {
        let mut decoder = Decoder::new();
        for i in 0..(KEY_CACHE_LIMIT + 100) {
            let text = format!(r#"{{"k{i}": 1}}"#);
            decoder.decode(text.as_bytes()).unwrap();
        }
        assert_eq!(decoder.keys.len(), KEY_CACHE_LIMIT);
    }

    /// `decode_owned` gives what `decode` gives, the long string taken
    /// from the text's buffer where it can be: at the top, in a record, in
    /// a list; not when a later field of its name replaces it, nor when it
    /// has escapes; and the text back on an error.
    #[test]
    fn decoding_an_owned_text_gives_what_decoding_it_gives() {
        let long = "ab".repeat(5_000);
        let texts = [
            format!("\"{long}\""),
            format!("{{\"a\": 1, \"s\": \"{long}\", \"t\": [true]}}  \r\n"),
            format!("[1, [\"x\", \"{long}\"], null]\n"),
            format!("{{\"s\": \"{long}\", \"s\": \"\"}}"),
            format!("{{\"s\": \"{long}\\n\"}}"),
            format!("{{\"s\": \"{long}\", \"u\": \"short\"}}"),
        ];
        for text in texts {
            let len = strip_line_end(text.as_bytes()).len();
            let want = Decoder::new().decode(&text.as_bytes()[..len]).unwrap();
            let got = Decoder::new().decode_owned(text.clone().into_bytes(), len);
            let got = got.ok().map(|v| to_hql(&v));
            assert_eq!(got, Some(to_hql(&want)), "{}", &text[..40]);
        }
        let bad = format!("{{\"s\": \"{long}\", }}\n").into_bytes();
        let len = bad.len() - 1;
        let (error, back) = Decoder::new().decode_owned(bad.clone(), len).unwrap_err();
        assert_eq!(back, bad);
        assert_eq!(error, Decoder::new().decode(&bad[..len]).unwrap_err());
    }

    #[test]
    fn string_escapes_decode() {
        let v = decode(r#""a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\u20ac""#).unwrap();
        assert_eq!(v.as_str(), Some("a\"b\\c/d\u{8}\u{c}\n\r\tAé€"));
        let v = decode(r#""\ud83d\ude00 and \uD834\uDD1E""#).unwrap();
        assert_eq!(v.as_str(), Some("😀 and 𝄞"));
        let v = decode("\"héllo wörld ✓\"").unwrap();
        assert_eq!(v.as_str(), Some("héllo wörld ✓"));
    }

    #[test]
    fn string_errors() {
        let cases: [(&[u8], &str, usize); 10] = [
            (br#""a\x""#, "invalid escape", 3),
            (
                br#""\u12G4""#,
                "invalid \\u escape: expected four hex digits",
                6,
            ),
            (br#""\ud83d""#, "unpaired surrogate in a \\u escape", 2),
            (br#""\ud83dx""#, "unpaired surrogate in a \\u escape", 2),
            (
                br#""\ud83d\u0041""#,
                "unpaired surrogate in a \\u escape",
                2,
            ),
            (br#""\ude00""#, "unpaired surrogate in a \\u escape", 2),
            (b"\"a\nb\"", "control character in a string", 3),
            (b"\"ab", END_OF_INPUT, 4),
            (b"\"ab\\", END_OF_INPUT, 5),
            (b"\"a\xffb\"", "invalid UTF-8 in a string", 3),
        ];
        for (text, message, column) in cases {
            let e = error(text);
            assert_eq!(
                (e.message.as_str(), e.column),
                (message, column),
                "{text:?}"
            );
        }
        assert_eq!(error(b"\"\xc3\"").message, "invalid UTF-8 in a string");
        assert_eq!(error(b"\"\\u12").message, END_OF_INPUT);
    }

    #[test]
    fn structure_errors() {
        let cases: [(&str, &str, usize); 14] = [
            ("", END_OF_INPUT, 1),
            ("   ", END_OF_INPUT, 4),
            ("{", END_OF_INPUT, 2),
            (r#"{"a" 1}"#, "expected ':' after an object key", 6),
            (
                r#"{"a": 1 "b": 2}"#,
                "expected ',' or '}' after an object field",
                9,
            ),
            (r#"{"a": 1,}"#, "expected a string as object key", 9),
            ("{a: 1}", "expected a string as object key", 2),
            ("[1 2]", "expected ',' or ']' after a list element", 4),
            ("[1,]", "expected a value", 4),
            ("[1", END_OF_INPUT, 3),
            ("tru", END_OF_INPUT, 1),
            ("trux", "invalid literal", 1),
            ("nul l", "invalid literal", 1),
            ("[] []", "trailing characters after the value", 4),
        ];
        for (text, message, column) in cases {
            let e = error(text.as_bytes());
            assert_eq!(
                (e.message.as_str(), e.column),
                (message, column),
                "{text:?}"
            );
        }
    }

    #[test]
    fn column_counts_characters() {
        let e = error("{\"é€\": x}".as_bytes());
        assert_eq!(e.column, 8);
        assert_eq!(e.to_string(), "expected a value at column 8");
    }

    #[test]
    fn nesting_is_limited() {
        let deep_ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(decode(&deep_ok).is_ok());
        let too_deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(error(too_deep.as_bytes()).message.contains("nested deeper"));
        let hostile = "[{\"a\":".repeat(100_000);
        assert!(error(hostile.as_bytes()).message.contains("nested deeper"));
    }

    /// A small deterministic generator for the no-panic tests.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    const SAMPLE: &str = r#"[{"id": 1, "name": "a\"b\u00e9\ud83d\ude00", "tags": ["x", "y"],
        "n": -12.5e-3, "ok": true, "none": null, "nested": {"deep": [[{}], []]}}, 0, "é"]"#;

    /// Hostile inputs for the no-panic tests: random bytes of JSON's
    /// alphabet, every prefix of `SAMPLE`, and `SAMPLE` with one byte
    /// changed, each handed to `each`.
    pub(crate) fn hostile_inputs(mut each: impl FnMut(&[u8])) {
        let alphabet = b"{}[]\",:\\/u0123456789abcdefnrtlsE.-+ \n\r\t\xff\xc3\xa9\xed\xa0\x80";
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let len = rng.below(40);
            let bytes: Vec<u8> = (0..len)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            each(&bytes);
        }
        let sample = SAMPLE.as_bytes();
        for end in 0..sample.len() {
            each(&sample[..end]);
        }
        for _ in 0..20_000 {
            let mut bytes = sample.to_vec();
            let at = rng.below(bytes.len());
            bytes[at] = alphabet[rng.below(alphabet.len())];
            each(&bytes);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut decoder = Decoder::new();
        hostile_inputs(|bytes| {
            let _ = decoder.decode(bytes);
        });
        let sample = SAMPLE.as_bytes();
        assert!(decoder.decode(sample).is_ok());
        for end in 0..sample.len() {
            assert!(decoder.decode(&sample[..end]).is_err());
        }
    }

    #[test]
    fn agrees_with_serde_json_on_validity() {
        let mut rng = XorShift(42);
        let sample = SAMPLE.as_bytes();
        for _ in 0..5_000 {
            let mut bytes = sample.to_vec();
            let at = rng.below(bytes.len());
            bytes.remove(at);
            let ours = Decoder::new().decode(&bytes).is_ok();
            let theirs = serde_json::from_slice::<serde_json::Value>(&bytes).is_ok();
            assert_eq!(ours, theirs, "{}", String::from_utf8_lossy(&bytes));
        }
    }

    #[test]
    fn strings_encode_with_json_escapes() {
        let mut out = String::new();
        write_json_string(&mut out, "q\"b\\n\nr\rt\t\u{1}\u{1f}é😀\u{7f}");
        assert_eq!(out, "\"q\\\"b\\\\n\\nr\\rt\\t\\u0001\\u001fé😀\u{7f}\"");
        let back: String = serde_json::from_str(&out).unwrap();
        assert_eq!(back, "q\"b\\n\nr\rt\t\u{1}\u{1f}é😀\u{7f}");
    }

    #[test]
    fn results_functions_and_types_encode() {
        use crate::runtime::contract::Contract;
        let mut record = Record::default();
        record.insert(
            Rc::from("f"),
            Value::Func(Rc::new(crate::runtime::stream::test_fn("g"))),
        );
        record.insert(
            Rc::from("l"),
            Value::Func(Rc::new(crate::runtime::stream::test_fn(""))),
        );
        record.insert(
            Rc::from("t"),
            Value::Type(Rc::new(Contract::alias(
                "Order",
                crate::runtime::contract::TypeSpec::Any,
            ))),
        );
        record.insert(Rc::from("a"), Value::Absent);
        record.insert(Rc::from("x"), Value::Float(1e16));
        let v = Value::list(vec![
            Value::ok(Value::record(record)),
            Value::err(Value::str("bad")),
            Value::Stream(Rc::new(crate::runtime::stream::Stream::new(|| {
                Ok(Box::new(std::iter::empty()))
            }))),
        ]);
        assert_eq!(
            to_json(&v),
            r#"[{"ok":{"f":"<fn g>","l":"<fn>","t":"Order","a":null,"x":1e16}},{"err":"bad"},null]"#
        );
    }
}

#[cfg(test)]
mod compact_tests {
    //! `write_compact` against the ordinary path: whenever it copies a line,
    //! the bytes are exactly `write_json` of the decoded value.
    use super::*;

    const LINES: &[&str] = &[
        r#"{"a": 1, "b": "x y", "c": [1, 2.50, -0, 1e5, 12345678901234567890123]}"#,
        r#"  { "a" :	true , "b":null,"c" : { "d" : [ ] , "e" : { } } }  "#,
        r#"{"é": "ü ✓ 😀", "": "", "k": "a,b:c{d}[e]"}"#,
        r#"{"a": 1, "a": 2}"#,
        r#"{"a": {"x": 1, "x": 2}}"#,
        r#"{"a": [{"x": 1}, {"x": 2}], "x": 3}"#,
        r#"{"a": "tab\there"}"#,
        r#"{"a": "\u00e9"}"#,
        r#"{"a": "q\"uote"}"#,
        r#"{"a": 1.0, "b": 1.50, "c": -1.5E-3, "d": 0.1}"#,
        r#"{"a": [true, false, null, "s", {"k": [1, {"k": 2}]}]}"#,
        r#"{"": 1, "": 2}"#,
        r#"{"a": {}, "b": {}, "c": {"a": 1}}"#,
    ];

    #[test]
    fn a_copied_line_is_what_write_json_writes() {
        let mut copied = 0;
        for line in LINES {
            let value = Decoder::new()
                .decode(line.as_bytes())
                .expect("the corpus decodes");
            let mut expected = String::new();
            write_json(&mut expected, &value);
            let mut out = Vec::new();
            if write_compact(line.as_bytes(), &mut out) {
                copied += 1;
                assert_eq!(String::from_utf8(out).unwrap(), expected, "{line}");
            }
        }
        assert_eq!(
            copied, 7,
            "lines without escapes or repeated keys are copied"
        );
    }

    #[test]
    fn escapes_and_repeated_keys_are_left_to_the_ordinary_path() {
        for line in [
            r#"{"a": 1, "a": 2}"#,
            r#"{"a": {"x": 1, "x": 2}}"#,
            r#"{"a": "\u00e9"}"#,
            r#"{"": 1, "": 2}"#,
        ] {
            assert!(!write_compact(line.as_bytes(), &mut Vec::new()), "{line}");
        }
    }
}
