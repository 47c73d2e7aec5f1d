//! An exact set of byte strings in little memory: the keys a `unique`
//! has seen over one pass of a stream (language.md §4.4).
//!
//! Each key's bytes are written once into an arena of 1 MiB chunks that
//! never move. The table holds one `u64` a key: 24 bits of the key's hash
//! beside the 40-bit place of its bytes. It is split by hash into 256
//! shards, each an open-addressing table with linear probing that grows
//! by half when four fifths full, so a key costs its bytes, a byte or two
//! of type and length, and 10 to 15 bytes of table; and since a shard
//! grows alone, what is briefly held twice while growing is a 256th of
//! the table, not all of it.
//!
//! A slot's home is its 24 hash bits scaled to the shard's size: growing
//! reads no key again, and a probe compares bytes only when those bits
//! agree. Nothing is ever dropped or guessed: a key is in the set exactly
//! when equal bytes were inserted.
//!
//! The length of a key is not kept. The keys of one set must be
//! prefix-free — no key a proper prefix of another — as a fixed number of
//! values written by `write_key` are: the bytes at a place are compared
//! over the length of the key looked up, and only an equal key can match.

use std::hash::Hasher;

use rustc_hash::FxHasher;

/// Shards a set is split into (the top bits of a key's hash choose one).
const SHARD_BITS: u32 = 8;
/// Bits of a key's hash kept in its slot.
const TAG_BITS: u32 = 24;
/// Bits of a key's place in the arena: chunk number, then offset.
const PLACE_BITS: u32 = 40;
const CHUNK_BITS: u32 = 20;
/// The size of an ordinary chunk; a longer key gets a chunk of its own.
const CHUNK: usize = 1 << CHUNK_BITS;

/// A set of byte strings; see the module comment.
#[derive(Default)]
pub struct KeySet {
    /// Empty until the first insertion, then `1 << SHARD_BITS` shards.
    shards: Vec<Shard>,
    arena: Arena,
}

/// A key's hash, computed once for looking the key up, fetching its
/// slot ahead and inserting it.
#[derive(Clone, Copy)]
pub struct Hashed(u64);

impl KeySet {
    pub fn hash(key: &[u8]) -> Hashed {
        Hashed(hash(key))
    }

    /// Is `key`, whose hash is `h`, in the set?
    pub fn holds(&self, h: Hashed, key: &[u8]) -> bool {
        self.shards
            .get(shard_of(h.0))
            .is_some_and(|shard| shard.holds(tag_of(h.0), key, &self.arena))
    }

    /// Insert `key`, whose hash is `h` and which the set does not hold.
    pub fn insert(&mut self, h: Hashed, key: &[u8]) {
        if self.shards.is_empty() {
            self.shards.resize_with(1 << SHARD_BITS, Shard::default);
        }
        let place = self.arena.push(key);
        self.shards[shard_of(h.0)].insert(tag_of(h.0), place);
    }

    /// Start loading the slot where a lookup of the key whose hash is `h`
    /// begins, so that the lookup, a little later, finds it in the cache:
    /// with many keys nearly every lookup would otherwise wait on memory.
    pub fn prefetch(&self, h: Hashed) {
        let Some(shard) = self.shards.get(shard_of(h.0)) else {
            return;
        };
        if shard.slots.is_empty() {
            return;
        }
        let slot = &shard.slots[Shard::home(tag_of(h.0), shard.slots.len())];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch reads nothing and writes nothing; the address
        // is that of a live slot.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(slot).cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    /// Insert `key` unless it is there; was it new?
    pub fn insert_new(&mut self, key: &[u8]) -> bool {
        let h = Self::hash(key);
        let new = !self.holds(h, key);
        if new {
            self.insert(h, key);
        }
        new
    }

    /// How many keys the set holds.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A hash of `key` whose every bit depends on every byte (the shard, the
/// tag and the home all come from it).
fn hash(key: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(key);
    let mut x = h.finish();
    // Spread the high bits down and the low bits up, twice.
    x ^= x >> 32;
    x = x.wrapping_mul(0xd6e8_feb8_6659_fd93);
    x ^= x >> 32;
    x = x.wrapping_mul(0xd6e8_feb8_6659_fd93);
    x ^ (x >> 32)
}

fn shard_of(hash: u64) -> usize {
    (hash >> (64 - SHARD_BITS)) as usize
}

fn tag_of(hash: u64) -> u64 {
    (hash >> (64 - SHARD_BITS - TAG_BITS)) & ((1 << TAG_BITS) - 1)
}

/// One open-addressing table. A slot is 0 when empty, else the key's tag
/// above its place plus one.
#[derive(Default)]
struct Shard {
    slots: Box<[u64]>,
    len: usize,
}

impl Shard {
    /// The first slot to try for `tag`: the tags' order is the homes'
    /// order, so a grown table is filled front to back.
    fn home(tag: u64, capacity: usize) -> usize {
        ((tag * capacity as u64) >> TAG_BITS) as usize
    }

    /// Does the shard hold `key`, whose hash has `tag`?
    fn holds(&self, tag: u64, key: &[u8], arena: &Arena) -> bool {
        let capacity = self.slots.len();
        if capacity == 0 {
            return false;
        }
        let mut i = Self::home(tag, capacity);
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return false;
            }
            if slot >> PLACE_BITS == tag && arena.holds(slot_place(slot), key) {
                return true;
            }
            i += 1;
            if i == capacity {
                i = 0;
            }
        }
    }

    fn insert(&mut self, tag: u64, place: u64) {
        let capacity = self.slots.len();
        if (self.len + 1) * 5 > capacity * 4 {
            self.grow();
        }
        put(&mut self.slots, (tag << PLACE_BITS) | (place + 1));
        self.len += 1;
    }

    fn grow(&mut self) {
        let capacity = self.slots.len();
        let bigger = (capacity + capacity / 2).max(8);
        let old = std::mem::replace(&mut self.slots, vec![0; bigger].into_boxed_slice());
        for &slot in old.iter().filter(|&&s| s != 0) {
            put(&mut self.slots, slot);
        }
    }
}

/// Put `slot` in the first empty slot from its home on.
fn put(slots: &mut [u64], slot: u64) {
    let mut i = Shard::home(slot >> PLACE_BITS, slots.len());
    while slots[i] != 0 {
        i += 1;
        if i == slots.len() {
            i = 0;
        }
    }
    slots[i] = slot;
}

fn slot_place(slot: u64) -> u64 {
    (slot & ((1 << PLACE_BITS) - 1)) - 1
}

/// Key bytes, back to back in chunks that never move; a place is a
/// chunk's number above an offset in it.
#[derive(Default)]
struct Arena {
    chunks: Vec<Vec<u8>>,
}

impl Arena {
    fn push(&mut self, key: &[u8]) -> u64 {
        let fits = self
            .chunks
            .last()
            .is_some_and(|c| c.capacity() - c.len() >= key.len() && c.len() < CHUNK);
        if !fits {
            // Chunk numbers (and a slot's place plus one) run out only
            // near 2^20 chunks, a terabyte of keys: memory runs out first.
            assert!(
                self.chunks.len() + 1 < 1 << (PLACE_BITS - CHUNK_BITS),
                "more unique keys than a set can place"
            );
            self.chunks.push(Vec::with_capacity(CHUNK.max(key.len())));
        }
        let number = self.chunks.len() - 1;
        let chunk = &mut self.chunks[number];
        let offset = chunk.len();
        chunk.extend_from_slice(key);
        ((number as u64) << CHUNK_BITS) | offset as u64
    }

    /// Do the bytes at `place` begin with `key`?
    fn holds(&self, place: u64, key: &[u8]) -> bool {
        let chunk = &self.chunks[(place >> CHUNK_BITS) as usize];
        let offset = (place & (CHUNK as u64 - 1)) as usize;
        chunk.get(offset..offset + key.len()) == Some(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys of several lengths, none a prefix of another (a length byte
    /// first).
    fn key(n: u64) -> Vec<u8> {
        let body = format!("k{n}");
        let mut k = vec![body.len() as u8];
        k.extend_from_slice(body.as_bytes());
        k
    }

    #[test]
    fn holds_exactly_the_keys_inserted() {
        let mut set = KeySet::default();
        for n in 0..200_000 {
            assert!(set.insert_new(&key(n)), "{n} is new");
        }
        assert_eq!(set.len(), 200_000);
        for n in 0..200_000 {
            assert!(!set.insert_new(&key(n)), "{n} is there");
        }
        for n in 200_000..210_000 {
            assert!(
                !set.holds(KeySet::hash(&key(n)), &key(n)),
                "{n} was never inserted"
            );
        }
        assert_eq!(set.len(), 200_000);
    }

    /// Keys whose hashes are all one: every key in one shard under one
    /// tag, found only by comparing bytes, across growth and the wrap
    /// from the table's end to its start.
    #[test]
    fn colliding_hashes_are_told_apart_by_bytes() {
        for hash in [0, u64::MAX, 0x1234_5678_9abc_def0] {
            let mut set = KeySet::default();
            for n in 0..3_000 {
                let k = key(n);
                let shard = set.shards.get(shard_of(hash));
                assert!(!shard.is_some_and(|s| s.holds(tag_of(hash), &k, &set.arena)));
                set.insert(Hashed(hash), &k);
            }
            let shard = &set.shards[shard_of(hash)];
            assert_eq!(shard.len, 3_000);
            for n in 0..3_000 {
                assert!(shard.holds(tag_of(hash), &key(n), &set.arena), "{n}");
            }
            assert!(!shard.holds(tag_of(hash), &key(3_000), &set.arena));
        }
    }

    #[test]
    fn long_keys_get_chunks_of_their_own() {
        let mut set = KeySet::default();
        let long = |n: u8| {
            let mut k = vec![n; CHUNK + 10];
            k[0] = 0;
            k
        };
        assert!(set.insert_new(&key(1)));
        assert!(set.insert_new(&long(1)));
        assert!(set.insert_new(&key(2)));
        assert!(set.insert_new(&long(2)));
        for k in [key(1), long(1), key(2), long(2)] {
            assert!(!set.insert_new(&k));
        }
        assert!(set.insert_new(&long(3)));
        assert_eq!(set.len(), 5);
    }

    #[test]
    fn the_empty_set_finds_nothing() {
        let set = KeySet::default();
        assert!(!set.holds(KeySet::hash(b""), b""));
        assert!(set.is_empty());
    }
}
