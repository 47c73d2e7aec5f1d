//! The way to the array a JSON pointer names inside one enclosing
//! document (`at`, tooling.md "Format options"), walked token by token
//! without building a value: what lies before the array and after it is
//! only checked to be well-formed, so the document may be larger than
//! memory. The array's elements are read by the framing's element
//! scanner (`framing.rs`).

use crate::runtime::eval::io::Pointer;
use crate::runtime::json::{is_json_number, is_json_space};

/// What the walk met.
#[derive(Debug, PartialEq, Eq)]
pub enum Met {
    /// The `[` of the array the pointer names (taken).
    Array,
    /// The pointer names nothing, or names a value that is not an array:
    /// why, in words.
    Missing(String),
    /// The document is not well-formed JSON: why.
    Malformed(String),
}

/// A container the walk is inside.
#[derive(Debug, Clone, Copy)]
enum Frame {
    Object,
    Array { index: usize },
}

/// What the walk expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Value,
    /// A value or, right after `[`, the `]` of an empty array.
    FirstValue,
    /// A key or, right after `{`, the `}` of an empty object.
    FirstKey,
    Key,
    Colon,
    CommaOrEnd,
    /// Only blank space, after the document.
    End,
}

/// Where the walk stands inside a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lex {
    Between,
    /// In a string (a key when `key`), after a `\` when `escaped`.
    String {
        key: bool,
        escaped: bool,
    },
    /// In a number or `true`, `false`, `null`.
    Scalar,
}

/// Walks a JSON document to the array `pointer` names, then (once the
/// array is read and `resume` called) over the rest of it.
pub struct Walk {
    steps: Vec<String>,
    pub pointer: String,
    stack: Vec<Frame>,
    /// How many of the frames from the root are on the pointer's path:
    /// the value being read is on it when this is the stack's depth.
    matched: usize,
    expect: Expect,
    lex: Lex,
    /// The key or scalar being read, when it is needed (a key on the
    /// path, every scalar), up to `MAX_TOKEN` bytes.
    token: Vec<u8>,
    found: bool,
    started: bool,
}

/// The longest key compared with a pointer's step, or scalar checked.
const MAX_TOKEN: usize = 4096;

impl Walk {
    pub fn new(pointer: &Pointer) -> Walk {
        Walk {
            steps: pointer.steps.clone(),
            pointer: pointer.text.clone(),
            stack: Vec::new(),
            matched: 0,
            expect: Expect::Value,
            lex: Lex::Between,
            token: Vec::new(),
            found: false,
            started: false,
        }
    }

    /// Take bytes of `bytes` until something is met: how many were taken.
    pub fn feed(&mut self, bytes: &[u8]) -> (usize, Option<Met>) {
        let mut i = 0;
        while i < bytes.len() {
            if let Lex::String {
                key,
                escaped: false,
            } = self.lex
            {
                // Runs of a string's plain bytes pass at once.
                let n = memchr::memchr3(b'"', b'\\', b'\n', &bytes[i..]).unwrap_or(bytes.len() - i);
                if key && self.keeps_key() {
                    self.push_token(&bytes[i..i + n]);
                }
                i += n;
                if i == bytes.len() {
                    break;
                }
            }
            let byte = bytes[i];
            i += 1;
            if let Some(met) = self.byte(byte) {
                return (i, Some(met));
            }
        }
        (i, None)
    }

    /// Has the document's first value begun?
    pub fn begun(&self) -> bool {
        self.started
    }

    /// The document ended.
    pub fn at_end(&mut self) -> Option<Met> {
        if self.lex == Lex::Scalar {
            if let Some(met) = self.end_scalar() {
                return Some(met);
            }
        }
        if !self.started {
            return Some(Met::Missing("the input holds no JSON document".into()));
        }
        if self.expect != Expect::End {
            return Some(Met::Malformed(
                "the document ends before it is closed".into(),
            ));
        }
        (!self.found).then(|| self.missing())
    }

    /// The array the pointer names has been read to its `]`: the walk goes
    /// on after it.
    pub fn resume(&mut self) {
        self.value_done();
    }

    fn keeps_key(&self) -> bool {
        !self.found && self.matched + 1 == self.stack.len()
    }

    fn push_token(&mut self, bytes: &[u8]) {
        let room = MAX_TOKEN.saturating_sub(self.token.len());
        self.token
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn missing(&self) -> Met {
        Met::Missing("names nothing in it".into())
    }

    fn byte(&mut self, byte: u8) -> Option<Met> {
        match self.lex {
            Lex::String { key, escaped } => self.string_byte(byte, key, escaped),
            Lex::Scalar if is_scalar_byte(byte) => {
                self.push_token(&[byte]);
                None
            }
            Lex::Scalar => self.end_scalar().or_else(|| self.structural(byte)),
            Lex::Between => self.structural(byte),
        }
    }

    fn string_byte(&mut self, byte: u8, key: bool, escaped: bool) -> Option<Met> {
        let keep = key && self.keeps_key();
        if keep {
            self.push_token(&[byte]);
        }
        match (escaped, byte) {
            (_, b'\n') => return Some(Met::Malformed("a string holds a line break".into())),
            (true, _) => {
                self.lex = Lex::String {
                    key,
                    escaped: false,
                }
            }
            (false, b'\\') => self.lex = Lex::String { key, escaped: true },
            (false, b'"') => {
                self.lex = Lex::Between;
                if key {
                    self.key_done();
                } else {
                    self.value_done();
                }
            }
            _ => {}
        }
        None
    }

    /// A byte outside strings and scalars.
    fn structural(&mut self, byte: u8) -> Option<Met> {
        if is_json_space(byte) {
            return None;
        }
        match (self.expect, byte) {
            (Expect::FirstValue, b']') | (Expect::CommaOrEnd, b']') => self.close(false),
            (Expect::FirstKey, b'}') | (Expect::CommaOrEnd, b'}') => self.close(true),
            (Expect::Value | Expect::FirstValue, _) => self.value_start(byte),
            (Expect::FirstKey | Expect::Key, b'"') => {
                let depth = self.stack.len();
                if !self.found && self.matched >= depth {
                    // The object is on the path: is this key its next step?
                    self.matched = depth - 1;
                }
                self.token.clear();
                self.token.push(b'"');
                self.lex = Lex::String {
                    key: true,
                    escaped: false,
                };
                None
            }
            (Expect::Colon, b':') => {
                self.expect = Expect::Value;
                None
            }
            (Expect::CommaOrEnd, b',') => {
                match self.stack.last_mut() {
                    Some(Frame::Object) => self.expect = Expect::Key,
                    Some(Frame::Array { index }) => {
                        *index += 1;
                        self.expect = Expect::Value;
                    }
                    None => {}
                }
                None
            }
            _ => Some(Met::Malformed(format!(
                "unexpected `{}`",
                char::from(byte).escape_default()
            ))),
        }
    }

    /// A value starts with `byte`.
    fn value_start(&mut self, byte: u8) -> Option<Met> {
        self.started = true;
        let depth = self.stack.len();
        if let Some(Frame::Array { index }) = self.stack.last() {
            if self.matched + 1 >= depth && !self.found {
                let on = self.steps.get(depth - 1) == Some(&index.to_string());
                self.matched = if on { depth } else { depth - 1 };
            }
        }
        let on_path = !self.found && self.matched == depth;
        if on_path && depth == self.steps.len() {
            if byte == b'[' {
                self.found = true;
                return Some(Met::Array);
            }
            return Some(Met::Missing(format!(
                "names {}, not an array",
                kind_of(byte)
            )));
        }
        match byte {
            b'{' => {
                self.stack.push(Frame::Object);
                self.expect = Expect::FirstKey;
            }
            b'[' => {
                self.stack.push(Frame::Array { index: 0 });
                self.expect = Expect::FirstValue;
            }
            b'"' => {
                self.lex = Lex::String {
                    key: false,
                    escaped: false,
                }
            }
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                self.token.clear();
                self.token.push(byte);
                self.lex = Lex::Scalar;
            }
            _ => {
                return Some(Met::Malformed(format!(
                    "unexpected `{}`",
                    char::from(byte).escape_default()
                )))
            }
        }
        if on_path && matches!(byte, b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n') {
            // A scalar on the way: nothing is inside it.
            return Some(self.missing());
        }
        None
    }

    fn end_scalar(&mut self) -> Option<Met> {
        self.lex = Lex::Between;
        let text = std::mem::take(&mut self.token);
        let ok = matches!(&text[..], b"true" | b"false" | b"null")
            || std::str::from_utf8(&text).is_ok_and(is_json_number);
        if !ok {
            let shown = String::from_utf8_lossy(&text[..text.len().min(32)]).into_owned();
            return Some(Met::Malformed(format!("`{shown}` is not a JSON value")));
        }
        self.value_done();
        None
    }

    fn key_done(&mut self) {
        let depth = self.stack.len();
        if self.keeps_key() {
            let key = crate::runtime::json::Decoder::new().decode(&self.token);
            let on = match key {
                Ok(v) => v.as_str() == self.steps.get(depth - 1).map(String::as_str),
                Err(_) => false,
            };
            self.matched = if on { depth } else { depth - 1 };
        }
        self.token.clear();
        self.expect = Expect::Colon;
    }

    fn close(&mut self, object: bool) -> Option<Met> {
        let frame = self.stack.pop();
        if matches!(frame, Some(Frame::Object)) != object {
            return Some(Met::Malformed(
                "a bracket closes what it did not open".into(),
            ));
        }
        let depth = self.stack.len();
        if !self.found && self.matched >= depth {
            // The path went through this container without finding it.
            return Some(self.missing());
        }
        self.matched = self.matched.min(depth);
        self.value_done();
        None
    }

    fn value_done(&mut self) {
        self.expect = match self.stack.is_empty() {
            true => Expect::End,
            false => Expect::CommaOrEnd,
        };
        let depth = self.stack.len();
        if self.matched > depth {
            self.matched = depth;
        }
    }
}

fn is_scalar_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'+' | b'.')
}

/// "an object", "a string", … by a value's first byte.
fn kind_of(byte: u8) -> &'static str {
    match byte {
        b'{' => "an object",
        b'"' => "a string",
        b't' | b'f' => "a Bool",
        b'n' => "null",
        _ => "a number",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(pointer: &str, doc: &str) -> (usize, Option<Met>) {
        let mut w = Walk::new(&Pointer::parse(pointer).expect("a pointer"));
        let (n, met) = w.feed(doc.as_bytes());
        match met {
            Some(met) => (n, Some(met)),
            None => (n, w.at_end()),
        }
    }

    #[test]
    fn the_walk_stops_after_the_arrays_bracket() {
        let doc = r#"{"a": {"x": [1, {"y": "]"}], "b~/": [7]}, "data": [1]}"#;
        assert_eq!(walk("/data", doc), (doc.len() - 3, Some(Met::Array)));
        let at = doc.find("[7]").unwrap() + 1;
        assert_eq!(walk("/a/b~0~1", doc), (at, Some(Met::Array)));
        assert_eq!(walk("", "[1]"), (1, Some(Met::Array)));
        assert_eq!(walk("/1/k", r#"[{}, {"k": []}]"#).1, Some(Met::Array));
    }

    #[test]
    fn a_pointer_to_nothing_or_no_array_is_missing() {
        let missing = |p, d| matches!(walk(p, d).1, Some(Met::Missing(_)));
        assert!(missing("/data", r#"{"other": [1]}"#));
        assert!(missing("/data", r#"{"data": {"x": 1}}"#));
        assert!(missing("/data/x", r#"{"data": "text"}"#));
        assert!(missing("/2", "[1, 2]"));
        assert!(missing("/data", ""));
        let (_, met) = walk("/data", r#"{"data": 3}"#);
        assert_eq!(
            met,
            Some(Met::Missing("names a number, not an array".into()))
        );
    }

    #[test]
    fn a_malformed_document_is_named() {
        let malformed = |d| matches!(walk("/data", d).1, Some(Met::Malformed(_)));
        assert!(malformed(r#"{"a": tru, "data": []}"#));
        assert!(malformed(r#"{"a" 1, "data": []}"#));
        assert!(malformed(r#"{"a": [1}, "data": []}"#));
        assert!(malformed(r#"{"a": 1"#));
    }
}
