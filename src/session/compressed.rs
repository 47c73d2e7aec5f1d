//! Compressed files (tooling.md, "Compressed files"): a source's bytes
//! that start as gzip or zstd are read decompressed, and a target named
//! `….gz` or `….zst` is written compressed.
//!
//! `sniffed(bytes) -> Box<dyn BufRead>`: the bytes of a file or standard
//! input as its format reads them, decompressed on a thread of their own
//! when their first bytes say they are compressed (never their name), so
//! that decoding the records and inflating the bytes run side by side.
//! `Encoded`: a target's bytes as they are, or compressed.

use std::io::{self, BufRead, Read, Write};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};

use crate::runtime::builtins::Compression;
use crate::runtime::eval::io::Unreadable;

/// How many decompressed bytes one block handed to the reader holds.
const BLOCK: usize = 256 << 10;

/// How many blocks may wait for the reader: the decompressing thread
/// stays this far ahead, and no further, so memory stays bounded.
const BLOCKS_AHEAD: usize = 4;

/// The bytes `reader` holds as a format reads them: decompressed when
/// they start as a compressed stream, else as they are.
pub fn sniffed<R: BufRead + Send + 'static>(mut reader: R) -> io::Result<Box<dyn BufRead>> {
    let first = reader.fill_buf()?.len();
    if first == 0 || first >= Compression::MAGIC_LEN {
        return Ok(match Compression::of_bytes(reader.fill_buf()?) {
            Some(compression) => decompressed(reader, compression),
            None => Box::new(reader),
        });
    }
    // A short first read (a pipe): the first bytes gathered, then read
    // again before the rest.
    let mut start = Vec::with_capacity(Compression::MAGIC_LEN);
    (&mut reader)
        .take(Compression::MAGIC_LEN as u64)
        .read_to_end(&mut start)?;
    let compression = Compression::of_bytes(&start);
    let whole = io::Cursor::new(start).chain(reader);
    Ok(match compression {
        Some(compression) => decompressed(whole, compression),
        None => Box::new(whole),
    })
}

/// The decompressed bytes of `reader`, made by a thread of their own that
/// hands them over in blocks.
fn decompressed<R: BufRead + Send + 'static>(
    reader: R,
    compression: Compression,
) -> Box<dyn BufRead> {
    let (send, blocks) = mpsc::sync_channel(BLOCKS_AHEAD);
    let (spare, spares) = mpsc::channel();
    let started = std::thread::Builder::new()
        .name(format!("hql-{}", compression.name()))
        .spawn(move || match decoder(reader, compression) {
            Ok(decoder) => inflate(decoder, compression, &send, &spares),
            Err(e) => {
                let _ = send.send(Err(broken(compression, &e)));
            }
        });
    match started {
        Ok(_) => Box::new(Blocks {
            blocks,
            spare,
            block: Vec::new(),
            at: 0,
            ended: false,
        }),
        Err(e) => Box::new(Failed(Some(e))),
    }
}

/// The reader of `compression`'s stream over `reader`: every member of a
/// gzip file (concatenated `.gz` files are one), every frame of a zstd one.
fn decoder<R: BufRead + 'static>(reader: R, compression: Compression) -> io::Result<Box<dyn Read>> {
    Ok(match compression {
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(reader)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(reader)?),
    })
}

/// Decompress `decoder`'s stream into blocks sent to the reader, until it
/// ends, fails (the error is the last thing sent) or the reader is gone.
fn inflate(
    mut decoder: Box<dyn Read>,
    compression: Compression,
    send: &SyncSender<io::Result<Vec<u8>>>,
    spares: &Receiver<Vec<u8>>,
) {
    loop {
        let mut block = spares.try_recv().unwrap_or_default();
        block.resize(BLOCK, 0);
        let (filled, failed) = fill(&mut decoder, &mut block);
        block.truncate(filled);
        if filled > 0 && send.send(Ok(block)).is_err() {
            return;
        }
        if let Some(e) = failed {
            let _ = send.send(Err(broken(compression, &e)));
            return;
        }
        if filled < BLOCK {
            return;
        }
    }
}

/// Fill `block` from `decoder`: how much it holds (short only at the end
/// of the stream or at an error), and the error.
fn fill(decoder: &mut dyn Read, block: &mut [u8]) -> (usize, Option<io::Error>) {
    let mut filled = 0;
    while filled < block.len() {
        match decoder.read(&mut block[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (filled, Some(e)),
        }
    }
    (filled, None)
}

/// The error of a compressed stream that cannot be read on: it ends the
/// source, naming it (`Unreadable`).
fn broken(compression: Compression, e: &io::Error) -> io::Error {
    let name = compression.name();
    let message = match e.kind() {
        io::ErrorKind::UnexpectedEof => format!("its {name} stream ends before it is complete"),
        _ => format!("its {name} stream cannot be decompressed ({e})"),
    };
    let help = format!(
        "the file is cut short or damaged (`{name} -t FILE` tests it); the records before \
         this point were read"
    );
    Unreadable {
        message,
        help: Some(help),
    }
    .into_io()
}

/// Decompressed bytes as the decompressing thread hands them over.
struct Blocks {
    blocks: Receiver<io::Result<Vec<u8>>>,
    /// Read blocks go back to the thread to be filled again.
    spare: Sender<Vec<u8>>,
    block: Vec<u8>,
    at: usize,
    ended: bool,
}

impl BufRead for Blocks {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.at == self.block.len() && !self.ended {
            match self.blocks.recv() {
                Ok(Ok(block)) => {
                    let read = std::mem::replace(&mut self.block, block);
                    let _ = self.spare.send(read);
                    self.at = 0;
                }
                Ok(Err(e)) => {
                    self.ended = true;
                    return Err(e);
                }
                // The thread is done: the stream ended.
                Err(_) => self.ended = true,
            }
        }
        Ok(&self.block[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.block.len());
    }
}

impl Read for Blocks {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

/// A reader whose first read fails (the decompressing thread could not
/// start), and which is at its end after.
struct Failed(Option<io::Error>);

impl Read for Failed {
    fn read(&mut self, _buf: &mut [u8]) -> io::Result<usize> {
        self.0.take().map_or(Ok(0), Err)
    }
}

impl BufRead for Failed {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.0.take().map_or(Ok(&[]), Err)
    }

    fn consume(&mut self, _n: usize) {}
}

/// The bytes of standard input as its format reads them (`sniffed`); an
/// error while looking at its first bytes is given by its first read.
pub fn sniffed_or_failing<R: BufRead + Send + 'static>(reader: R) -> Box<dyn BufRead> {
    sniffed(reader).unwrap_or_else(|e| Box::new(Failed(Some(e))))
}

/// The whole of `reader`, decompressed, in a temporary file that is
/// already unlinked (gone when closed), read from its start: for a format
/// that reads at any offset (Parquet reads its footer first), which a
/// decompressing stream cannot give.
pub fn unpacked<R: BufRead + Send + 'static>(reader: R) -> io::Result<std::fs::File> {
    let mut bytes = sniffed(reader)?;
    let dir = std::env::temp_dir();
    let (mut file, path) = (0u32..)
        .map(|n| dir.join(format!(".hql-unpacked-{}-{n}", std::process::id())))
        .find_map(|path| {
            let made = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path);
            match made {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => None,
                made => Some(made.map(|file| (file, path))),
            }
        })
        .expect("an unused name")?;
    let _ = std::fs::remove_file(&path);
    io::copy(&mut bytes, &mut file)?;
    io::Seek::rewind(&mut file)?;
    Ok(file)
}

/// A target's bytes written into `W`: as they are, or compressed as its
/// name asks.
pub enum Encoded<W: Write> {
    Plain(W),
    Gzip(flate2::write::GzEncoder<W>),
    Zstd(zstd::stream::write::Encoder<'static, W>),
}

impl<W: Write> Encoded<W> {
    /// The bytes of a target named `path` into `out`: compressed when its
    /// name ends with a compression's extension (`out.jsonl.gz`).
    pub fn for_name(path: &str, out: W) -> io::Result<Encoded<W>> {
        Ok(match Compression::of_name(path) {
            None => Encoded::Plain(out),
            Some(Compression::Gzip) => Encoded::Gzip(flate2::write::GzEncoder::new(
                out,
                flate2::Compression::default(),
            )),
            Some(Compression::Zstd) => {
                let mut encoder =
                    zstd::stream::write::Encoder::new(out, zstd::DEFAULT_COMPRESSION_LEVEL)?;
                // As the `zstd` command writes it: a reader can tell a
                // damaged frame.
                encoder.include_checksum(true)?;
                Encoded::Zstd(encoder)
            }
        })
    }

    /// The compression written, if any.
    pub fn compression(&self) -> Option<Compression> {
        match self {
            Encoded::Plain(_) => None,
            Encoded::Gzip(_) => Some(Compression::Gzip),
            Encoded::Zstd(_) => Some(Compression::Zstd),
        }
    }

    /// The output, where the bytes go as they are.
    pub fn plain(&self) -> Option<&W> {
        match self {
            Encoded::Plain(out) => Some(out),
            _ => None,
        }
    }

    /// Write the end of a compressed stream (its trailer), and give the
    /// output back.
    pub fn finish(self) -> io::Result<W> {
        match self {
            Encoded::Plain(out) => Ok(out),
            Encoded::Gzip(encoder) => encoder.finish(),
            Encoded::Zstd(encoder) => encoder.finish(),
        }
    }
}

impl<W: Write> Write for Encoded<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Encoded::Plain(out) => out.write(buf),
            Encoded::Gzip(encoder) => encoder.write(buf),
            Encoded::Zstd(encoder) => encoder.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Encoded::Plain(out) => out.flush(),
            Encoded::Gzip(encoder) => encoder.flush(),
            Encoded::Zstd(encoder) => encoder.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(text: &[u8]) -> Vec<u8> {
        let mut out = Encoded::for_name("x.gz", Vec::new()).unwrap();
        out.write_all(text).unwrap();
        out.finish().unwrap()
    }

    fn zstd(text: &[u8]) -> Vec<u8> {
        let mut out = Encoded::for_name("x.ZST", Vec::new()).unwrap();
        out.write_all(text).unwrap();
        out.finish().unwrap()
    }

    fn read_all(bytes: Vec<u8>) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        sniffed(io::Cursor::new(bytes))?.read_to_end(&mut out)?;
        Ok(out)
    }

    /// A reader that gives one byte a read, as a slow pipe may.
    struct Trickle(io::Cursor<Vec<u8>>);

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(1);
            self.0.read(&mut buf[..n])
        }
    }

    /// More than a few blocks, so that the thread waits on the reader.
    fn lines() -> Vec<u8> {
        (0..200_000)
            .flat_map(|i| format!("{{\"id\": {i}}}\n").into_bytes())
            .collect()
    }

    #[test]
    fn compressed_bytes_read_back_as_written() {
        let text = lines();
        assert!(text.len() > BLOCK * (BLOCKS_AHEAD + 2));
        assert_ne!(gzip(&text), text);
        assert_eq!(read_all(gzip(&text)).unwrap(), text);
        assert_eq!(read_all(zstd(&text)).unwrap(), text);
        assert_eq!(read_all(text.clone()).unwrap(), text);
        assert_eq!(read_all(Vec::new()).unwrap(), b"");
        assert_eq!(read_all(gzip(b"")).unwrap(), b"");
    }

    /// Concatenated gzip files (and zstd frames) read as one stream.
    #[test]
    fn every_member_and_frame_is_read() {
        let gz = [gzip(b"{\"a\":1}\n"), gzip(b"{\"a\":2}\n")].concat();
        assert_eq!(read_all(gz).unwrap(), b"{\"a\":1}\n{\"a\":2}\n");
        let zst = [zstd(b"1\n"), zstd(b"2\n")].concat();
        assert_eq!(read_all(zst).unwrap(), b"1\n2\n");
    }

    /// The first bytes are gathered when they come one at a time: short
    /// plain input is read whole, compressed input is still told.
    #[test]
    fn a_short_first_read_is_gathered() {
        for text in [&b"{}\n"[..], b"{\"a\":1}\n", b"1"] {
            let reader = io::BufReader::new(Trickle(io::Cursor::new(text.to_vec())));
            let mut out = Vec::new();
            sniffed(reader).unwrap().read_to_end(&mut out).unwrap();
            assert_eq!(out, text);
        }
        let reader = io::BufReader::new(Trickle(io::Cursor::new(gzip(b"x\n"))));
        let mut out = Vec::new();
        sniffed(reader).unwrap().read_to_end(&mut out).unwrap();
        assert_eq!(out, b"x\n");
    }

    /// A stream cut short or damaged gives what came before it, then an
    /// error that ends the source.
    #[test]
    fn a_broken_stream_is_unreadable_after_what_it_held() {
        let text = lines();
        for (name, mut bytes) in [("gzip", gzip(&text)), ("zstd", zstd(&text))] {
            bytes.truncate(bytes.len() / 2);
            let mut reader = sniffed(io::Cursor::new(bytes)).unwrap();
            let mut out = Vec::new();
            let e = reader.read_to_end(&mut out).unwrap_err();
            let unreadable = Unreadable::of(&e).expect("an unreadable stream");
            assert!(unreadable.message.contains(name), "{}", unreadable.message);
            assert!(!out.is_empty() && text.starts_with(&out));
        }
        let mut bytes = zstd(&text);
        let middle = bytes.len() / 2;
        bytes[middle..middle + 64].fill(0xa5);
        let e = read_all(bytes).unwrap_err();
        assert!(Unreadable::of(&e).is_some(), "{e}");
    }

    /// A name's last extension chooses a target's compression.
    #[test]
    fn a_target_is_compressed_as_its_name_says() {
        let plain = Encoded::for_name("x.jsonl", Vec::new()).unwrap();
        assert_eq!(plain.compression(), None);
        assert!(plain.plain().is_some());
        let gz = Encoded::for_name("x.jsonl.gz", Vec::new()).unwrap();
        assert_eq!(gz.compression(), Some(Compression::Gzip));
        assert_eq!(gz.finish().unwrap()[..2], [0x1f, 0x8b]);
    }
}
