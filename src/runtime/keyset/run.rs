//! The set's run: keys that each came above every key before them, in
//! their order, front-coded. A key is stored as the length of the prefix
//! it shares with the key before it, the length of the rest, and the
//! rest; every `BLOCK` keys (and at the start of each chunk) a key is
//! stored whole, so that a lookup can find its block by binary search
//! over those and then read at most `BLOCK` keys.
//!
//! Beside each key the run keeps who claimed it (`super`), as the
//! difference from the claimer of the key before it in its block: records
//! that come one after another cost a byte for it.
//!
//! Ids that count up, timestamps and time-ordered ids share most of
//! their bytes with the id before them: `ev-000000002` after
//! `ev-000000001` costs five bytes here, not twelve and a slot. Appending
//! is all a key costs while keys keep coming in order.

use smallvec::SmallVec;

use crate::runtime::varint;

/// Keys between two keys stored whole.
const BLOCK: usize = 16;
/// The size of a chunk of a set's run; an entry never spans two.
const CHUNK: usize = 1 << 20;
/// The size of a chunk of a batch of keys on its way to a set
/// (`Run::batch`), a few thousand keys.
const BATCH_CHUNK: usize = 1 << 16;
/// The most bytes an entry's two lengths and its claimer take.
const HEAD: usize = 30;

/// A place in the run's chunks.
#[derive(Clone, Copy, PartialEq)]
struct Place {
    chunk: u32,
    offset: u32,
}

impl Place {
    /// A block starts within a chunk's first MiB (a longer key has a
    /// chunk of its own), and 2^32 chunks are 4 PiB of keys.
    fn new(chunk: usize, offset: usize) -> Place {
        Place {
            chunk: u32::try_from(chunk).expect("a chunk number fits 32 bits"),
            offset: u32::try_from(offset).expect("an offset fits 32 bits"),
        }
    }
}

/// Ascending keys, front-coded; see the module comment.
pub(super) struct Run {
    /// The entries, in chunks that never move or grow past their
    /// capacity.
    chunks: Vec<Vec<u8>>,
    /// Where each block's first entry (a key stored whole) lies.
    blocks: Vec<Place>,
    /// The last key appended, whole; kept when the run is emptied.
    last: Vec<u8>,
    /// The claimer of the last key appended.
    last_by: u64,
    /// Keys in the current (last) block.
    in_block: usize,
    len: usize,
    /// Has a key ever been appended?
    started: bool,
    /// The size of a new chunk.
    chunk_bytes: usize,
}

impl Default for Run {
    fn default() -> Run {
        Run::with_chunks(CHUNK)
    }
}

impl Run {
    fn with_chunks(chunk_bytes: usize) -> Run {
        Run {
            chunks: Vec::new(),
            blocks: Vec::new(),
            last: Vec::new(),
            last_by: 0,
            in_block: 0,
            len: 0,
            started: false,
            chunk_bytes,
        }
    }

    /// A run for a batch of keys that a set's run will take whole
    /// (`append`): in smaller chunks, since it holds a few thousand keys.
    pub fn batch() -> Run {
        Run::with_chunks(BATCH_CHUNK)
    }

    /// How many keys the run holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The greatest key ever appended (the run's last, or the last of a
    /// run since emptied); `None` before the first.
    pub fn last(&self) -> Option<&[u8]> {
        self.started.then_some(self.last.as_slice())
    }

    /// Append `key`, claimed by `by`, if it is greater than every key
    /// appended before; was it? One pass over the last key both compares
    /// and finds the prefix the two share.
    pub fn push_above(&mut self, key: &[u8], by: u64) -> bool {
        let Some(shared) = self.shared_below(key) else {
            return false;
        };
        self.push(key, shared, by);
        self.last.truncate(shared);
        self.last.extend_from_slice(&key[shared..]);
        true
    }

    /// `push_above` of the key in `key`, which then holds what it will: the
    /// run keeps the buffer as its last key, rather than copy the key.
    pub fn push_above_taking(&mut self, key: &mut Vec<u8>, by: u64) -> bool {
        let Some(shared) = self.shared_below(key) else {
            return false;
        };
        self.push(key, shared, by);
        std::mem::swap(&mut self.last, key);
        true
    }

    /// If `key` is above every key appended before, the length of the
    /// prefix it shares with the last.
    fn shared_below(&self, key: &[u8]) -> Option<usize> {
        if !self.started {
            return Some(0);
        }
        let shared = common_prefix(&self.last, key);
        match (self.last.get(shared), key.get(shared)) {
            (Some(l), Some(k)) if k > l => Some(shared),
            (None, Some(_)) => Some(shared),
            _ => None,
        }
    }

    /// Append `key`, claimed by `by`, which shares `shared` bytes with
    /// the last key and is greater than it (the last key is the caller's
    /// to set).
    fn push(&mut self, key: &[u8], mut shared: usize, by: u64) {
        if self.in_block == 0 || self.in_block == BLOCK {
            shared = 0;
        }
        let room = self.chunks.last().map_or(0, |c| c.capacity() - c.len());
        if room < HEAD + key.len() - shared {
            // A new chunk opens a new block, whose first key is whole.
            let capacity = self.chunk_bytes.max(HEAD + key.len());
            self.chunks.push(Vec::with_capacity(capacity));
            shared = 0;
        }
        let number = self.chunks.len() - 1;
        let chunk = self.chunks.last_mut().expect("a chunk is open");
        // A block's first claimer is written whole, the others as the
        // difference from the one before.
        let mut before = self.last_by;
        if shared == 0 {
            self.blocks.push(Place::new(number, chunk.len()));
            self.in_block = 0;
            before = 0;
        }
        let rest = &key[shared..];
        match (u8::try_from(shared), u8::try_from(rest.len())) {
            // Both lengths in a byte each, as nearly always; a rest of a
            // few bytes (an id that counts up) a byte at a time, cheaper
            // than a call to copy it, in room the chunk has.
            (Ok(s @ 0..0x80), Ok(r @ 0..=4)) => {
                chunk.extend_from_slice(&[s, r]);
                rest.iter().for_each(|&b| chunk.push(b));
            }
            (Ok(s @ 0..0x80), Ok(r @ 0..0x80)) => {
                chunk.extend_from_slice(&[s, r]);
                chunk.extend_from_slice(rest);
            }
            _ => {
                varint::write(shared as u64, chunk);
                varint::write(rest.len() as u64, chunk);
                chunk.extend_from_slice(rest);
            }
        }
        match zigzag(by.wrapping_sub(before)) {
            d @ 0..0x80 => chunk.push(d as u8),
            d => varint::write(d, chunk),
        }
        self.last_by = by;
        self.in_block += 1;
        self.len += 1;
        self.started = true;
    }

    /// The run's first key; `None` when it is empty.
    pub fn first(&self) -> Option<&[u8]> {
        self.blocks.first().map(|&at| self.first_of(at))
    }

    /// Is `key` in the run?
    pub fn holds(&self, key: &[u8]) -> bool {
        self.claimer(key).is_some()
    }

    /// Who claimed `key`, if the run holds it.
    pub fn claimer(&self, key: &[u8]) -> Option<u64> {
        if self.len == 0 || key > self.last.as_slice() {
            return None;
        }
        // The last block whose first key is at most `key`.
        let after = self.blocks.partition_point(|&at| self.first_of(at) <= key);
        let block = after.checked_sub(1)?;
        let mut found = None;
        self.each_in_block(block, |k, by| {
            found = (k == key).then_some(by);
            k < key
        });
        found
    }

    /// Every key of the run, in order, with its claimer, to `f`; the run
    /// is then emptied (its last key kept, as `clear` keeps it).
    pub fn drain(&mut self, mut f: impl FnMut(&[u8], u64)) {
        for block in 0..self.blocks.len() {
            self.each_in_block(block, |k, by| {
                f(k, by);
                true
            });
        }
        // The first chunk and a few block places are kept for the keys
        // to come; a long run's other memory is let go.
        self.clear();
        self.blocks.shrink_to(1 << 10);
    }

    /// Append every key of `batch`, whose first key is greater than every
    /// key appended here before, and empty it (its chunks kept for its
    /// next keys). Each chunk of the batch opens with a key stored whole,
    /// so its bytes are copied as they are; only the places of its blocks
    /// move. The batch's first block may follow a block shorter than
    /// `BLOCK`, which a lookup reads as any other.
    pub fn append(&mut self, batch: &mut Run) {
        debug_assert!(batch
            .first()
            .is_some_and(|k| self.last().is_none_or(|l| k > l)));
        let mut blocks = batch.blocks.iter().peekable();
        for (number, bytes) in batch.chunks.iter().enumerate() {
            if bytes.is_empty() {
                continue;
            }
            let room = self.chunks.last().map_or(0, |c| c.capacity() - c.len());
            if room < bytes.len() {
                let capacity = self.chunk_bytes.max(bytes.len());
                self.chunks.push(Vec::with_capacity(capacity));
            }
            let at = self.chunks.len() - 1;
            let chunk = &mut self.chunks[at];
            let base = chunk.len();
            chunk.extend_from_slice(bytes);
            while let Some(place) = blocks.next_if(|p| p.chunk as usize == number) {
                self.blocks
                    .push(Place::new(at, base + place.offset as usize));
            }
        }
        self.in_block = batch.in_block;
        self.len += batch.len;
        self.last.clone_from(&batch.last);
        self.last_by = batch.last_by;
        self.started = true;
        batch.clear();
    }

    /// Empty the run, its last key and its first chunk's memory kept.
    pub fn clear(&mut self) {
        for chunk in &mut self.chunks {
            chunk.clear();
        }
        // Only the first chunk is kept, so that a batch stays small.
        self.chunks.truncate(1);
        self.blocks.clear();
        self.in_block = 0;
        self.len = 0;
    }

    /// The first key of the block at `at`, stored whole.
    fn first_of(&self, at: Place) -> &[u8] {
        let chunk = &self.chunks[at.chunk as usize];
        let mut i = at.offset as usize;
        let shared = read_len(chunk, &mut i);
        debug_assert_eq!(shared, 0, "a block opens with a whole key");
        let len = read_len(chunk, &mut i);
        &chunk[i..i + len]
    }

    /// The keys of block `block`, in order, each with its claimer, to `f`
    /// while it returns true.
    fn each_in_block(&self, block: usize, mut f: impl FnMut(&[u8], u64) -> bool) {
        let at = self.blocks[block];
        let chunk = &self.chunks[at.chunk as usize];
        // The block ends where the next begins, or with its chunk.
        let end = match self.blocks.get(block + 1) {
            Some(next) if next.chunk == at.chunk => next.offset as usize,
            _ => chunk.len(),
        };
        let mut i = at.offset as usize;
        let mut key: SmallVec<[u8; 64]> = SmallVec::new();
        let mut by = 0u64;
        while i < end {
            let shared = read_len(chunk, &mut i);
            let len = read_len(chunk, &mut i);
            key.truncate(shared);
            key.extend_from_slice(&chunk[i..i + len]);
            i += len;
            by = by.wrapping_add(unzigzag(varint::read(chunk, &mut i)));
            if !f(&key, by) {
                return;
            }
        }
    }
}

/// A difference of claimers as a small number whatever its sign: 0, -1,
/// 1, -2, … become 0, 1, 2, 3, …
fn zigzag(d: u64) -> u64 {
    let d = d as i64;
    ((d << 1) ^ (d >> 63)) as u64
}

fn unzigzag(z: u64) -> u64 {
    (z >> 1) ^ (z & 1).wrapping_neg()
}

/// A length the run wrote at `*at`.
fn read_len(bytes: &[u8], at: &mut usize) -> usize {
    varint::read(bytes, at) as usize
}

/// How many bytes `a` and `b` share at their start, compared eight at a
/// time (the last eight of the shorter one's length at once).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_le_bytes(a[i..i + 8].try_into().expect("eight bytes"));
        let y = u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
        if x != y {
            return i + ((x ^ y).trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    if n >= 8 && i < n {
        // The last eight bytes, overlapping some compared already.
        let x = u64::from_le_bytes(a[n - 8..n].try_into().expect("eight bytes"));
        let y = u64::from_le_bytes(b[n - 8..n].try_into().expect("eight bytes"));
        return n - 8 + ((x ^ y).trailing_zeros() / 8).min(8) as usize;
    }
    i + a[i..n]
        .iter()
        .zip(&b[i..n])
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> Vec<u8> {
        format!("ev-{n:09}").into_bytes()
    }

    #[test]
    fn a_key_taken_whole_is_stored_as_a_key_copied() {
        // Rests of every length around the few bytes pushed one by one,
        // keys out of order refused, and blocks and chunks filled.
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for n in 0..40_000u64 {
            keys.push(id(n * 7));
            if n % 5 == 0 {
                keys.push(format!("ev-{:09}{}", n * 7, "z".repeat((n % 23) as usize)).into_bytes());
            }
            if n % 11 == 0 {
                keys.push(id(n));
            }
        }
        let (mut copied, mut taken) = (Run::with_chunks(4096), Run::with_chunks(4096));
        let mut buffer = Vec::new();
        let mut held = std::collections::HashMap::new();
        for (by, key) in keys.iter().enumerate() {
            buffer.clear();
            buffer.extend_from_slice(key);
            let by = by as u64;
            let above = copied.push_above(key, by);
            assert_eq!(above, taken.push_above_taking(&mut buffer, by));
            if above {
                held.insert(key.clone(), by);
            }
        }
        assert!(held.len() > 40_000 && held.len() < keys.len());
        assert_eq!((copied.len(), copied.last()), (taken.len(), taken.last()));
        assert!(copied.chunks == taken.chunks && copied.blocks == taken.blocks);
        for key in &keys {
            let shown = String::from_utf8_lossy(key);
            assert_eq!(taken.claimer(key), held.get(key).copied(), "{shown}");
        }
    }

    #[test]
    fn common_prefix_counts_the_bytes_shared() {
        let base = b"abcdefghijklmnopqrst";
        for len in 0..=base.len() {
            let a = &base[..len];
            assert_eq!(common_prefix(a, a), len);
            for at in 0..len {
                let mut b = a.to_vec();
                b[at] ^= 1;
                assert_eq!(common_prefix(a, &b), at, "{len} {at}");
                assert_eq!(common_prefix(&b, a), at, "{len} {at}");
            }
            assert_eq!(common_prefix(a, base), len);
        }
    }

    #[test]
    fn holds_exactly_the_keys_appended() {
        let mut run = Run::default();
        assert_eq!(run.last(), None);
        for n in (0..100_000).map(|n| n * 2) {
            assert!(run.push_above(&id(n), n));
        }
        assert_eq!(run.len(), 100_000);
        assert_eq!(run.last(), Some(id(199_998).as_slice()));
        for n in 0..200_000 {
            assert_eq!(run.claimer(&id(n)), (n % 2 == 0).then_some(n), "{n}");
        }
        assert!(!run.holds(b"ev"));
        assert!(!run.holds(b"ev-999999999"));
        assert!(!run.holds(b""));
    }

    /// Batches of every size appended whole, some holding a key longer
    /// than a batch's chunk: the run holds exactly their keys, in order,
    /// and takes single keys after them as before.
    #[test]
    fn batches_appended_whole() {
        let mut run = Run::default();
        let mut batch = Run::batch();
        let (mut keys, mut bys) = (Vec::new(), Vec::new());
        let mut n = 0;
        for size in (1..40).map(|b| (b * b * 7) % 3_000 + 1) {
            for i in 0..size {
                n += 1 + i % 3;
                let mut k = id(n);
                if n % 997 == 0 {
                    k.extend(std::iter::repeat_n(b'~', BATCH_CHUNK + 3));
                }
                // Claimers that go down now and then, and far apart.
                assert!(batch.push_above(&k, n ^ 0x5555_0000_0000));
                keys.push(k);
                bys.push(n ^ 0x5555_0000_0000);
            }
            run.append(&mut batch);
            assert_eq!((batch.len(), run.len()), (0, keys.len()));
            assert_eq!(run.last(), keys.last().map(Vec::as_slice));
        }
        n += 1;
        assert!(run.push_above(&id(n), n ^ 0x5555_0000_0000));
        keys.push(id(n));
        bys.push(n ^ 0x5555_0000_0000);
        assert!(run.chunks.len() > 1 && run.blocks.len() > keys.len() / BLOCK);
        for (k, &by) in keys.iter().zip(&bys) {
            assert_eq!(run.claimer(k), Some(by));
        }
        let held: std::collections::HashSet<&Vec<u8>> = keys.iter().collect();
        for m in 0..n + 2 {
            assert_eq!(run.holds(&id(m)), held.contains(&id(m)), "{m}");
        }
        let mut drained = Vec::new();
        run.drain(|k, _| drained.push(k.to_vec()));
        assert_eq!(drained, keys);
    }

    /// A batch emptied keeps its first chunk, empty; a key too long for
    /// it opens another, and a run with no chunk yet takes the batch.
    #[test]
    fn a_batch_with_an_empty_chunk() {
        let mut batch = Run::batch();
        assert!(batch.push_above(&id(1), 1));
        Run::default().append(&mut batch);
        let mut long = id(2);
        long.extend(std::iter::repeat_n(b'~', BATCH_CHUNK + 3));
        assert!(batch.push_above(&long, 2));
        assert_eq!(batch.chunks.first().map(Vec::len), Some(0));
        let mut fresh = Run::default();
        fresh.append(&mut batch);
        assert!(fresh.claimer(&long) == Some(2) && !fresh.holds(&id(1)));
        assert_eq!(fresh.first(), Some(long.as_slice()));
    }

    /// Keys of every length, some much longer than a chunk, and keys that
    /// share nothing with the one before.
    #[test]
    fn long_keys_and_new_chunks() {
        let keys: Vec<Vec<u8>> = (0..3_000u32)
            .map(|n| {
                let mut k = n.to_be_bytes().to_vec();
                let len = match n % 500 {
                    0 => CHUNK + 7,
                    m => (m as usize * 37) % 300,
                };
                k.extend(std::iter::repeat_n(b'x', len));
                k
            })
            .collect();
        let mut run = Run::default();
        for (by, k) in keys.iter().enumerate() {
            assert!(run.push_above(k, u64::MAX - by as u64));
            assert!(!run.push_above(k, 0));
        }
        assert!(run.chunks.len() > 1);
        for k in &keys {
            assert!(run.holds(k));
            // Every key's first four bytes are its own.
            assert!(!run.holds(&k[..k.len() - 1]));
        }
        let mut drained = Vec::new();
        run.drain(|k, by| {
            assert_eq!(by, u64::MAX - drained.len() as u64);
            drained.push(k.to_vec());
        });
        assert_eq!(drained, keys);
        assert_eq!(run.len(), 0);
        assert!(!run.holds(&keys[0]));
        assert_eq!(run.last(), keys.last().map(Vec::as_slice));
    }
}
