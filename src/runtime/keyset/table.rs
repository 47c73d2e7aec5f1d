//! The set's table: every key that did not come above all before it
//! (`super`), each key's bytes written once, followed by its claimer,
//! into an arena of 2 MiB chunks that never move. The table holds one `u64` a key: 28 bits of
//! the key's hash beside the 36-bit place of its bytes. It is split by
//! hash into 16 shards, each an open-addressing table with linear
//! probing that grows by half when four fifths full, so a key costs its
//! bytes, a byte or two of type and length, its claimer (a few bytes),
//! and 10 to 15 bytes of table.
//! A shard grows in place: nothing is held twice, and only the added
//! half is new memory.
//!
//! A slot's home is its 28 hash bits scaled to the shard's size: growing
//! reads no key again, and a probe compares bytes only when those bits
//! agree. Nothing is ever dropped or guessed: a key is in the table
//! exactly when equal bytes were inserted.
//!
//! With millions of keys nearly every lookup lands on a page no other
//! recent lookup touched. A shard's table, once 2 MiB, is therefore
//! mapped on its own, aligned to 2 MiB and asked onto huge pages (Linux),
//! so that a slot fetched ahead needs no page walk of its own.
//!
//! The length of a key is not kept. The keys of one set must be
//! prefix-free — no key a proper prefix of another — as a fixed number of
//! values written by `write_key` are: the bytes at a place are compared
//! over the length of the key looked up, and only an equal key can match.

use std::ptr::NonNull;

use super::Hashed;
use crate::runtime::varint;

/// The most bytes a claimer takes after its key.
const CLAIMER: usize = 10;

/// Shards a table is split into (the top bits of a key's hash choose
/// one): few enough that a shard of a large table spans many huge pages,
/// enough that growing one moves a 16th of the table at a time.
const SHARD_BITS: u32 = 4;
/// Bits of a key's hash kept in its slot.
const TAG_BITS: u32 = 28;
/// Bits of a key's place in the arena: chunk number, then offset.
const PLACE_BITS: u32 = 36;
const CHUNK_BITS: u32 = 21;
/// The size of an ordinary chunk; a longer key gets a chunk of its own.
const CHUNK: usize = 1 << CHUNK_BITS;
/// The size of a huge page, and of the blocks that go on huge pages.
const HUGE: usize = 1 << 21;

/// A hash table of byte strings; see the module comment.
#[derive(Default)]
pub(super) struct Table {
    /// Empty until the first insertion, then `1 << SHARD_BITS` shards.
    shards: Vec<Shard>,
    arena: Arena,
}

impl Table {
    /// Is `key`, whose hash is `h`, in the table?
    pub(super) fn holds(&self, h: Hashed, key: &[u8]) -> bool {
        self.shards
            .get(shard_of(h.0))
            .is_some_and(|shard| shard.holds(tag_of(h.0), key, &self.arena))
    }

    /// Who claimed `key`, whose hash is `h`, if the table holds it.
    pub(super) fn claimer(&self, h: Hashed, key: &[u8]) -> Option<u64> {
        let shard = self.shards.get(shard_of(h.0))?;
        if shard.slots.words().is_empty() {
            return None;
        }
        let place = shard.find(tag_of(h.0), key, &self.arena).err()?;
        Some(self.arena.claimer(place, key.len()))
    }

    /// Insert `key`, claimed by `by`, whose hash is `h` and which the
    /// table does not hold.
    pub(super) fn insert(&mut self, h: Hashed, key: &[u8], by: u64) {
        if self.shards.is_empty() {
            self.shards.resize_with(1 << SHARD_BITS, Shard::default);
        }
        let place = self.arena.push(key, by);
        self.shards[shard_of(h.0)].insert(tag_of(h.0), place);
    }

    /// Start loading the slot where a lookup of the key whose hash is `h`
    /// begins, so that the lookup, a little later, finds it in the cache:
    /// with many keys nearly every lookup would otherwise wait on memory.
    pub(super) fn prefetch(&self, h: Hashed) {
        let Some(shard) = self.shards.get(shard_of(h.0)) else {
            return;
        };
        let slots = shard.slots.words();
        if slots.is_empty() {
            return;
        }
        let slot = &slots[Shard::home(tag_of(h.0), slots.len())];
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

    /// Insert `key`, claimed by `by`, whose hash is `h`, unless it is
    /// there; was it new? One probe both looks and finds the empty slot
    /// to fill.
    pub(super) fn claim(&mut self, h: Hashed, key: &[u8], by: u64) -> bool {
        if self.shards.is_empty() {
            self.shards.resize_with(1 << SHARD_BITS, Shard::default);
        }
        let shard = &mut self.shards[shard_of(h.0)];
        let tag = tag_of(h.0);
        // Room is made first, so that the empty slot found stays so.
        shard.make_room();
        let Ok(i) = shard.find(tag, key, &self.arena) else {
            return false;
        };
        let place = self.arena.push(key, by);
        shard.slots.words_mut()[i] = (tag << PLACE_BITS) | (place + 1);
        shard.len += 1;
        true
    }

    /// Has nothing ever been inserted?
    pub(super) fn is_empty(&self) -> bool {
        self.shards.is_empty()
    }

    /// How many keys the table holds.
    pub(super) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.len).sum()
    }
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
    slots: Block,
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
        !self.slots.words().is_empty() && self.find(tag, key, arena).is_err()
    }

    /// The empty slot where `key`, whose hash has `tag`, would go; when
    /// the shard holds it, the place of its bytes instead. The table must
    /// not be empty.
    fn find(&self, tag: u64, key: &[u8], arena: &Arena) -> Result<usize, u64> {
        let slots = self.slots.words();
        let mut i = Self::home(tag, slots.len());
        loop {
            let slot = slots[i];
            if slot == 0 {
                return Ok(i);
            }
            if slot >> PLACE_BITS == tag && arena.holds(slot_place(slot), key) {
                return Err(slot_place(slot));
            }
            i += 1;
            if i == slots.len() {
                i = 0;
            }
        }
    }

    fn insert(&mut self, tag: u64, place: u64) {
        self.make_room();
        put(self.slots.words_mut(), (tag << PLACE_BITS) | (place + 1));
        self.len += 1;
    }

    /// Grow when one more key would fill more than four fifths.
    fn make_room(&mut self) {
        if (self.len + 1) * 5 > self.slots.words().len() * 4 {
            self.grow();
        }
    }

    /// Grow by half, in place: the block is extended (its pages kept, not
    /// copied) and each slot moved from the back to its new home, which
    /// lies at or after its old place but for a few slots near the front
    /// and those that wrapped past the end, put last. Nothing is held
    /// twice, and only the added half is new memory.
    fn grow(&mut self) {
        let old = self.slots.words().len();
        let mut capacity = (old + old / 2).max(8);
        // A table on huge pages fills them: its size is rounded up to one.
        if capacity * 8 >= HUGE {
            capacity = (capacity * 8).next_multiple_of(HUGE) / 8;
        }
        self.slots.extend(capacity * 8);
        let slots = self.slots.words_mut();
        let mut later = Vec::new();
        // The slots at the front whose home is further on wrapped.
        for (i, slot) in slots[..old].iter_mut().enumerate() {
            if *slot == 0 {
                break;
            }
            if Shard::home(*slot >> PLACE_BITS, old) > i {
                later.push(std::mem::take(slot));
            }
        }
        // From the back, every slot behind `at` is placed anew: a probe
        // from a home at or after `at` meets only placed slots.
        for at in (0..old).rev() {
            let slot = std::mem::take(&mut slots[at]);
            if slot == 0 {
                continue;
            }
            let mut i = Shard::home(slot >> PLACE_BITS, capacity);
            while i >= at && i < capacity && slots[i] != 0 {
                i += 1;
            }
            if i >= at && i < capacity {
                slots[i] = slot;
            } else {
                later.push(slot);
            }
        }
        for slot in later {
            put(slots, slot);
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

/// Key bytes, each key's followed by its claimer, back to back in chunks
/// that never move; a place is a chunk's number above an offset in it.
#[derive(Default)]
struct Arena {
    chunks: Vec<Chunk>,
}

/// A block of key bytes and how much of it is written.
struct Chunk {
    block: Block,
    used: usize,
}

impl Arena {
    /// Write `key` and its claimer `by`; the place of the key.
    fn push(&mut self, key: &[u8], by: u64) -> u64 {
        let len = key.len() + CLAIMER;
        let fits = self
            .chunks
            .last()
            .is_some_and(|c| c.block.len() - c.used >= len && c.used < CHUNK);
        if !fits {
            // Chunk numbers (and a slot's place plus one) run out only
            // near 2^15 chunks, 64 GiB of keys: memory runs out first.
            assert!(
                self.chunks.len() + 1 < 1 << (PLACE_BITS - CHUNK_BITS),
                "more unique keys than a set can place"
            );
            // Chunks stay on small pages, taken as they are written: key
            // bytes are written and read in order but for a few
            // comparisons, and fresh huge pages can cost more to clear.
            let block = Block::small(len.max(CHUNK));
            self.chunks.push(Chunk { block, used: 0 });
        }
        let number = self.chunks.len() - 1;
        let chunk = &mut self.chunks[number];
        let offset = chunk.used;
        let bytes = chunk.block.bytes_mut();
        bytes[offset..offset + key.len()].copy_from_slice(key);
        chunk.used = offset + key.len();
        chunk.used += varint::put(by, &mut bytes[chunk.used..]);
        ((number as u64) << CHUNK_BITS) | offset as u64
    }

    /// The claimer written after the key of `len` bytes at `place`.
    fn claimer(&self, place: u64, len: usize) -> u64 {
        let chunk = &self.chunks[(place >> CHUNK_BITS) as usize];
        let mut at = (place & (CHUNK as u64 - 1)) as usize + len;
        varint::read(chunk.block.bytes(), &mut at)
    }

    /// Do the bytes at `place` begin with `key`?
    fn holds(&self, place: u64, key: &[u8]) -> bool {
        let chunk = &self.chunks[(place >> CHUNK_BITS) as usize];
        let offset = (place & (CHUNK as u64 - 1)) as usize;
        chunk.block.bytes()[..chunk.used].get(offset..offset + key.len()) == Some(key)
    }
}

/// Zeroed memory of a fixed size, 8-byte aligned: a table's slots or a
/// chunk's bytes. From `HUGE` bytes on it is mapped apart on huge pages
/// where the system has them; below, it comes from the allocator.
struct Block {
    ptr: NonNull<u8>,
    len: usize,
    mapped: bool,
}

// SAFETY: a block owns its memory alone, as a `Box<[u8]>` does; shared,
// it is only read.
unsafe impl Send for Block {}
// SAFETY: as for `Send`.
unsafe impl Sync for Block {}

impl Default for Block {
    fn default() -> Block {
        Block {
            ptr: NonNull::<u64>::dangling().cast(),
            len: 0,
            mapped: false,
        }
    }
}

impl Block {
    /// `len` zero bytes; `len` is a multiple of 8.
    fn zeroed(len: usize) -> Block {
        if len >= HUGE && len.is_multiple_of(HUGE) {
            if let Some(ptr) = huge::map(len) {
                return Block {
                    ptr,
                    len,
                    mapped: true,
                };
            }
        }
        Block::small(len)
    }

    /// `len` zero bytes from the allocator, which maps large blocks
    /// lazily: only the pages written take memory.
    fn small(len: usize) -> Block {
        if len == 0 {
            return Block::default();
        }
        let layout = Self::layout(len);
        // SAFETY: the layout's size is not zero.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(ptr) else {
            std::alloc::handle_alloc_error(layout)
        };
        Block {
            ptr,
            len,
            mapped: false,
        }
    }

    /// Make the block `len` bytes long (no shorter than it is), its bytes
    /// kept and the new ones zero.
    fn extend(&mut self, len: usize) {
        if self.mapped && len.is_multiple_of(HUGE) {
            if let Some(ptr) = huge::remap(self.ptr, self.len, len) {
                self.ptr = ptr;
                self.len = len;
                return;
            }
        }
        let mut bigger = Block::zeroed(len);
        bigger.bytes_mut()[..self.len].copy_from_slice(self.bytes());
        *self = bigger;
    }

    fn layout(len: usize) -> std::alloc::Layout {
        std::alloc::Layout::from_size_align(len, 8).expect("a block's size fits a layout")
    }

    fn len(&self) -> usize {
        self.len
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` points at `len` initialised bytes owned by the
        // block (or dangles, aligned, with `len` 0).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    fn words(&self) -> &[u64] {
        // SAFETY: `ptr` is 8-byte aligned and `len` a multiple of 8; any
        // bytes are a valid `u64`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast(), self.len / 8) }
    }

    fn words_mut(&mut self) -> &mut [u64] {
        // SAFETY: as in `words`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast(), self.len / 8) }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if self.mapped {
            huge::unmap(self.ptr, self.len);
        } else if self.len > 0 {
            // SAFETY: `small` allocated `ptr` with this layout.
            unsafe { std::alloc::dealloc(self.ptr.as_ptr(), Self::layout(self.len)) }
        }
    }
}

/// Anonymous mappings aligned to `HUGE` and advised onto huge pages.
#[cfg(target_os = "linux")]
mod huge {
    use std::ptr::NonNull;

    use super::HUGE;

    /// `len` (a multiple of `HUGE`) zero bytes at an address that is a
    /// multiple of `HUGE`; `None` when the system refuses.
    pub fn map(len: usize) -> Option<NonNull<u8>> {
        let span = len + HUGE;
        // SAFETY: a fresh private anonymous mapping aliases nothing.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                span,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if at == libc::MAP_FAILED {
            return None;
        }
        let start = at as usize;
        let aligned = start.next_multiple_of(HUGE);
        let end = start + span;
        // SAFETY: the ranges given back lie in the mapping just made, and
        // outside the aligned `len` bytes kept; the advice changes no
        // content (a kernel without huge pages ignores it).
        unsafe {
            if aligned > start {
                libc::munmap(at, aligned - start);
            }
            if end > aligned + len {
                libc::munmap((aligned + len) as *mut libc::c_void, end - aligned - len);
            }
            libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
        NonNull::new(aligned as *mut u8)
    }

    /// The `len` bytes `map` mapped at `ptr`, moved without copying to
    /// the front of a fresh mapping of `bigger` bytes (a multiple of
    /// `HUGE`) and so aligned; the rest is zero. `None` (the old mapping
    /// left as it was) when the system refuses.
    pub fn remap(ptr: NonNull<u8>, len: usize, bigger: usize) -> Option<NonNull<u8>> {
        let to = map(bigger)?;
        // SAFETY: both ranges are mappings this module made; the fixed
        // move replaces the fresh one, whose pages nobody has seen.
        let moved = unsafe {
            libc::mremap(
                ptr.as_ptr().cast(),
                len,
                bigger,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                to.as_ptr().cast::<libc::c_void>(),
            )
        };
        if moved == libc::MAP_FAILED {
            unmap(to, bigger);
            return None;
        }
        Some(to)
    }

    pub fn unmap(ptr: NonNull<u8>, len: usize) {
        // SAFETY: `map` mapped these `len` bytes, and the block that held
        // them is gone.
        unsafe {
            libc::munmap(ptr.as_ptr().cast(), len);
        }
    }
}

/// Elsewhere every block comes from the allocator.
#[cfg(not(target_os = "linux"))]
mod huge {
    use std::ptr::NonNull;

    pub fn map(_len: usize) -> Option<NonNull<u8>> {
        None
    }

    pub fn remap(_ptr: NonNull<u8>, _len: usize, _bigger: usize) -> Option<NonNull<u8>> {
        None
    }

    pub fn unmap(_ptr: NonNull<u8>, _len: usize) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Claim `key`: was it new?
    fn insert_new(table: &mut Table, key: &[u8]) -> bool {
        table.claim(Hashed::of(key), key, by(key))
    }

    /// The claimer the tests give `key`: numbers of every size.
    fn by(key: &[u8]) -> u64 {
        super::super::hash(key) >> (key.len() % 64)
    }

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
        let mut set = Table::default();
        for n in 0..200_000 {
            assert!(insert_new(&mut set, &key(n)), "{n} is new");
        }
        assert_eq!(set.len(), 200_000);
        for n in 0..200_000 {
            assert!(!insert_new(&mut set, &key(n)), "{n} is there");
            let k = key(n);
            assert_eq!(set.claimer(Hashed::of(&k), &k), Some(by(&k)));
        }
        for n in 200_000..210_000 {
            assert!(
                !set.holds(Hashed::of(&key(n)), &key(n)),
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
            let mut set = Table::default();
            for n in 0..3_000 {
                let k = key(n);
                let shard = set.shards.get(shard_of(hash));
                assert!(!shard.is_some_and(|s| s.holds(tag_of(hash), &k, &set.arena)));
                set.insert(Hashed(hash), &k, by(&k));
            }
            let shard = &set.shards[shard_of(hash)];
            assert_eq!(shard.len, 3_000);
            for n in 0..3_000 {
                assert!(shard.holds(tag_of(hash), &key(n), &set.arena), "{n}");
            }
            assert!(!shard.holds(tag_of(hash), &key(3_000), &set.arena));
        }
    }

    /// `claim` finds and fills the empty slot in one probe: a key is new
    /// once, across growth, and a repeated key leaves the set as it was.
    #[test]
    fn claim_takes_a_key_once() {
        let mut set = Table::default();
        for n in 0..50_000 {
            let k = key(n);
            assert!(set.claim(Hashed::of(&k), &k, n), "{n} is new");
            assert!(!set.claim(Hashed::of(&k), &k, 0), "{n} is there");
            let earlier = key(n / 2);
            assert!(!set.claim(Hashed::of(&earlier), &earlier, 0), "{n}");
            assert_eq!(set.claimer(Hashed::of(&earlier), &earlier), Some(n / 2));
        }
        assert_eq!(set.len(), 50_000);
        assert!((0..50_000).all(|n| set.holds(Hashed::of(&key(n)), &key(n))));
    }

    /// A hash in shard 0 whose tag is `tag`.
    fn in_shard_zero(tag: u64) -> Hashed {
        Hashed(tag << (64 - SHARD_BITS - TAG_BITS))
    }

    /// One shard grown in place well past the size at which its table is
    /// mapped on its own (and then moved, not copied, to grow): every key
    /// is found after every growth.
    #[test]
    fn a_shard_grows_in_place_past_a_mapped_table() {
        let mut set = Table::default();
        let tag = |n: u64| (n.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20) & ((1 << TAG_BITS) - 1);
        let (mut capacity, mut remapped) = (0, 0);
        for n in 0..500_000 {
            let mapped = set.shards.first().is_some_and(|s| s.slots.mapped);
            set.insert(in_shard_zero(tag(n)), &key(n), by(&key(n)));
            let now = set.shards[0].slots.words().len();
            if now != capacity {
                capacity = now;
                remapped += usize::from(mapped);
                let step = (n / 50).max(1) as usize;
                for m in (0..=n).step_by(step) {
                    assert!(set.holds(in_shard_zero(tag(m)), &key(m)), "{m} of {n}");
                }
            }
        }
        let shard = &set.shards[0];
        assert!(shard.slots.mapped && remapped > 0, "{capacity}");
        assert_eq!(shard.len, 500_000);
        for n in 0..500_000 {
            let k = key(n);
            assert_eq!(set.claimer(in_shard_zero(tag(n)), &k), Some(by(&k)));
        }
        for n in 500_000..510_000 {
            assert!(!set.holds(in_shard_zero(tag(n)), &key(n)), "{n}");
        }
    }

    /// Tags crowded at the end of the table: their slots wrap to its
    /// front, and growing must put them back after the others.
    #[test]
    fn slots_that_wrapped_survive_growth() {
        let mut set = Table::default();
        let top = (1 << TAG_BITS) - 1;
        for n in 0..5_000 {
            set.insert(in_shard_zero(top - n % 64), &key(n), by(&key(n)));
            if n % 97 == 0 {
                for m in 0..=n {
                    assert!(
                        set.holds(in_shard_zero(top - m % 64), &key(m)),
                        "{m} of {n}"
                    );
                }
            }
        }
        for n in 0..5_000 {
            assert!(set.holds(in_shard_zero(top - n % 64), &key(n)), "{n}");
            assert!(
                !set.holds(in_shard_zero(top - n % 64), &key(n + 5_000)),
                "{n}"
            );
        }
    }

    #[test]
    fn long_keys_get_chunks_of_their_own() {
        let mut set = Table::default();
        let long = |n: u8| {
            let mut k = vec![n; CHUNK + 10];
            k[0] = 0;
            k
        };
        assert!(insert_new(&mut set, &key(1)));
        assert!(insert_new(&mut set, &long(1)));
        assert!(insert_new(&mut set, &key(2)));
        assert!(insert_new(&mut set, &long(2)));
        for k in [key(1), long(1), key(2), long(2)] {
            assert!(!insert_new(&mut set, &k));
            assert_eq!(set.claimer(Hashed::of(&k), &k), Some(by(&k)));
        }
        assert!(insert_new(&mut set, &long(3)));
        assert_eq!(set.len(), 5);
    }
}
