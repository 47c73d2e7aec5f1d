//! Text in another encoding read as UTF-8 as it streams (tooling.md,
//! "Format options": `encoding`).
//!
//! Input: a byte stream and the encoding its source is configured with.
//! Output: a byte stream of UTF-8, decoded a buffer at a time (never the
//! whole file), a byte-order mark deciding over the configured encoding.
//! A byte sequence the encoding has no character for becomes a byte that
//! is not UTF-8, so the row holding it is a `decode` failure as any row
//! that is not text is.

use std::io::{self, BufRead, Read};

use crate::runtime::eval::io::Encoding;

/// `input` as UTF-8: as it is when it is UTF-8 already (a UTF-8 mark is
/// left for the reader to skip), else decoded.
pub fn utf8(mut input: Box<dyn BufRead>, encoding: Encoding) -> io::Result<Box<dyn BufRead>> {
    if input.fill_buf()?.len() < 3 {
        // Too few bytes to see a mark in: its first bytes read ahead.
        let mut start = Vec::with_capacity(3);
        (&mut input).take(3).read_to_end(&mut start)?;
        input = Box::new(io::BufReader::new(io::Cursor::new(start).chain(input)));
    }
    let start = input.fill_buf()?;
    let marked = encoding_rs::Encoding::for_bom(start).map(|(e, _)| e);
    let decoder = match (marked, encoding) {
        (Some(e), _) if e == encoding_rs::UTF_8 => return Ok(input),
        (Some(e), _) => Transcode::Decoder(e.new_decoder_with_bom_removal()),
        (None, Encoding::Utf8) => return Ok(input),
        (None, Encoding::Latin1) => Transcode::Latin1,
        (None, Encoding::Windows1252) => {
            Transcode::Decoder(encoding_rs::WINDOWS_1252.new_decoder_without_bom_handling())
        }
        (None, Encoding::Utf16) => {
            Transcode::Decoder(encoding_rs::UTF_16LE.new_decoder_without_bom_handling())
        }
    };
    Ok(Box::new(Decoding {
        input,
        transcode: decoder,
        out: Vec::new(),
        at: 0,
        ended: false,
    }))
}

/// How bytes become characters.
enum Transcode {
    /// ISO 8859-1: each byte is the code point of its value.
    Latin1,
    Decoder(encoding_rs::Decoder),
}

/// A byte stream decoded to UTF-8 a buffer at a time.
struct Decoding {
    input: Box<dyn BufRead>,
    transcode: Transcode,
    /// What the last buffer decoded to, and how much of it was read.
    out: Vec<u8>,
    at: usize,
    ended: bool,
}

/// The byte put where the input held no character of its encoding.
const NOT_TEXT: u8 = 0xFF;

impl Decoding {
    /// Decode the input's next buffer into `out`.
    fn refill(&mut self) -> io::Result<()> {
        self.out.clear();
        self.at = 0;
        let src = self.input.fill_buf()?;
        let last = src.is_empty();
        let n = src.len();
        match &mut self.transcode {
            Transcode::Latin1 => {
                for &b in src {
                    let mut utf8 = [0; 2];
                    self.out
                        .extend_from_slice(char::from(b).encode_utf8(&mut utf8).as_bytes());
                }
            }
            Transcode::Decoder(decoder) => decode(decoder, src, last, &mut self.out),
        }
        self.input.consume(n);
        self.ended = last;
        Ok(())
    }
}

/// `src` decoded by `decoder` onto `out`.
fn decode(decoder: &mut encoding_rs::Decoder, src: &[u8], last: bool, out: &mut Vec<u8>) {
    let mut read = 0;
    loop {
        let room = (decoder.max_utf8_buffer_length_without_replacement(src.len() - read))
            .unwrap_or(3 * (src.len() - read) + 16);
        let start = out.len();
        out.resize(start + room.max(4), 0);
        let (result, taken, written) =
            decoder.decode_to_utf8_without_replacement(&src[read..], &mut out[start..], last);
        out.truncate(start + written);
        read += taken;
        match result {
            encoding_rs::DecoderResult::InputEmpty => return,
            encoding_rs::DecoderResult::OutputFull => {}
            encoding_rs::DecoderResult::Malformed(..) => out.push(NOT_TEXT),
        }
    }
}

impl Read for Decoding {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Decoding {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.at == self.out.len() && !self.ended {
            self.refill()?;
        }
        Ok(&self.out[self.at..])
    }

    fn consume(&mut self, amt: usize) {
        self.at = (self.at + amt).min(self.out.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(bytes: &[u8], encoding: Encoding) -> Vec<u8> {
        // Two bytes a read, so that characters split across buffers.
        let input = io::BufReader::with_capacity(2, io::Cursor::new(bytes.to_vec()));
        let mut out = Vec::new();
        utf8(Box::new(input), encoding)
            .and_then(|mut r| r.read_to_end(&mut out))
            .expect("read from memory");
        out
    }

    #[test]
    fn each_encoding_reads_as_utf8() {
        assert_eq!(
            decoded(b"caf\xe9,\x80", Encoding::Latin1),
            "café,\u{80}".as_bytes()
        );
        assert_eq!(
            decoded(b"caf\xe9,\x80", Encoding::Windows1252),
            "café,€".as_bytes()
        );
        let utf16: Vec<u8> = "né,ü\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
        assert_eq!(decoded(&utf16, Encoding::Utf16), "né,ü\n".as_bytes());
        assert_eq!(decoded("née".as_bytes(), Encoding::Utf8), "née".as_bytes());
    }

    /// A byte-order mark decides over the configured encoding; a UTF-8
    /// one is left for the reader.
    #[test]
    fn a_byte_order_mark_decides() {
        let mut be = vec![0xFE, 0xFF];
        be.extend("a,é".encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(decoded(&be, Encoding::Latin1), "a,é".as_bytes());
        let mut le = vec![0xFF, 0xFE];
        le.extend("a,é".encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(decoded(&le, Encoding::Utf8), "a,é".as_bytes());
        let marked = "\u{feff}a,é".as_bytes();
        assert_eq!(decoded(marked, Encoding::Latin1), marked);
    }

    /// A lone surrogate is no character: a byte that is not UTF-8 stands
    /// for it, and the rest reads on.
    #[test]
    fn what_is_no_character_is_not_text() {
        let bytes = [0x00, 0xD8, b'a', 0x00];
        let out = decoded(&bytes, Encoding::Utf16);
        assert!(std::str::from_utf8(&out).is_err());
        assert!(out.ends_with(b"a"));
    }
}
