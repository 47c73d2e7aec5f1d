//! An exact set of byte strings in little memory: the keys a `unique`
//! has seen over one pass of a stream (language.md §4.4), each with the
//! number of the record that claimed it (its line, for the message of a
//! later record that repeats it).
//!
//! Keys of real data often come in order: ids that count up, timestamps,
//! time-ordered ids. A key greater than every key before it cannot be in
//! the set, so it needs no lookup at all: it is appended to the set's run
//! ([`run`]), which stores ascending keys front-coded, usually in a few
//! bytes each. Every other key goes to a hash table ([`table`]), after a
//! lookup in the run when it falls within the run's keys.
//!
//! Every key in the table is below the greatest key in the set, which is
//! the run's last. When keys come out of order often, the searches of
//! the run would cost more than a table lookup each: once they have cost
//! about as much as moving the run's keys into the table, the run is
//! emptied into it, and starts again above the greatest key.
//!
//! Keys are compared as bytes. `write_key` writes integers so that their
//! bytes sort as the integers do, and strings by length and then bytes,
//! so integer ids that count up and strings of one width that do both
//! come in order here. The keys of one set must be prefix-free — no key
//! a proper prefix of another — as a fixed number of values written by
//! `write_key` are (the table does not keep a key's length).

mod run;
mod table;

use std::hash::Hasher;
use std::sync::atomic::{AtomicUsize, Ordering};

use rustc_hash::FxHasher;

use run::Run;
use table::Table;

/// A set of byte strings; see the module comment.
#[derive(Default)]
pub struct KeySet {
    run: Run,
    table: Table,
    /// Searches of the run for keys below its last since it last started.
    /// Counted by `holds` too, which reads the set only.
    searches: AtomicUsize,
}

/// Keys in ascending order, each greater than the one before, gathered
/// away from a set (by a worker, say) for a set to take whole: stored as
/// a set's run stores them, so that taking them is a copy of their bytes
/// when they all lie above the set's keys (`KeySet::append`).
pub struct Ascending {
    keys: Run,
}

impl Default for Ascending {
    fn default() -> Ascending {
        Ascending { keys: Run::batch() }
    }
}

impl Ascending {
    /// Add `key`, claimed by `by`, if it is greater than every key added
    /// before; was it? The batch may keep `key`'s buffer, giving one of
    /// its own in its place (what `key` then holds is no key).
    pub fn push_above_taking(&mut self, key: &mut Vec<u8>, by: u64) -> bool {
        self.keys.push_above_taking(key, by)
    }

    /// How many keys are held.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.len() == 0
    }

    /// Let go of every key, the memory kept.
    pub fn clear(&mut self) {
        self.keys.clear();
    }

    /// Every key, in order, with its claimer, to `f`; then there are none.
    pub fn drain(&mut self, f: impl FnMut(&[u8], u64)) {
        self.keys.drain(f);
    }
}

/// A key's hash, computed for a key the table looks up or inserts.
#[derive(Clone, Copy)]
struct Hashed(u64);

impl Hashed {
    fn of(key: &[u8]) -> Hashed {
        Hashed(hash(key))
    }
}

impl KeySet {
    /// Is `key` in the set?
    pub fn holds(&self, key: &[u8]) -> bool {
        !self.above_all(key) && (self.in_run(key) || self.table.holds(Hashed::of(key), key))
    }

    /// Who claimed `key`, if the set holds it. Read only for the message
    /// of a record that repeats a key: lookups that decide use `holds`.
    pub fn claimer(&self, key: &[u8]) -> Option<u64> {
        if self.above_all(key) {
            return None;
        }
        self.run
            .claimer(key)
            .or_else(|| self.table.claimer(Hashed::of(key), key))
    }

    /// Insert `key`, claimed by `by`, which the set does not hold.
    pub fn insert(&mut self, key: &[u8], by: u64) {
        if !self.run.push_above(key, by) {
            self.table.insert(Hashed::of(key), key, by);
            self.retire_if_searched();
        }
    }

    /// Start loading what a lookup of `key` will read first, so that the
    /// lookup, a little later, finds it in the cache: with many keys
    /// nearly every table lookup would otherwise wait on memory. A key
    /// above every key now needs no lookup, nor does a key while the
    /// table is empty.
    pub fn prefetch(&self, key: &[u8]) {
        if self.fetches_ahead() && !self.above_all(key) {
            self.table.prefetch(Hashed::of(key));
        }
    }

    /// Would `prefetch` do anything? Not before the table has a key.
    pub fn fetches_ahead(&self) -> bool {
        !self.table.is_empty()
    }

    /// Insert `key`, claimed by `by`, unless it is there; was it new? In
    /// the table, one probe both looks and finds the empty slot to fill.
    pub fn claim(&mut self, key: &[u8], by: u64) -> bool {
        if self.run.push_above(key, by) {
            return true;
        }
        if self.in_run(key) {
            return false;
        }
        let new = self.table.claim(Hashed::of(key), key, by);
        self.retire_if_searched();
        new
    }

    /// Take every key of `keys` when the least of them is greater than
    /// every key here, so that all are new: their bytes are copied into
    /// the run, with no key looked at. Were they taken? (`keys` is then
    /// empty, its memory kept.)
    pub fn append(&mut self, keys: &mut Ascending) -> bool {
        let above = keys.keys.first().is_some_and(|first| self.above_all(first));
        if above {
            self.run.append(&mut keys.keys);
        }
        above
    }

    /// How many keys the set holds.
    pub fn len(&self) -> usize {
        self.run.len() + self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Is `key` greater than every key in the set?
    fn above_all(&self, key: &[u8]) -> bool {
        self.run.last().is_none_or(|last| key > last)
    }

    /// Is `key`, not above all, in the run? A key below the run's first
    /// cannot be: only one within its keys costs a search.
    fn in_run(&self, key: &[u8]) -> bool {
        if self.run.first().is_none_or(|first| key < first) {
            return false;
        }
        self.searches.fetch_add(1, Ordering::Relaxed);
        self.run.holds(key)
    }

    /// Empty the run into the table once its searches have cost about
    /// what moving its keys would: a search reads about log2(n) places
    /// of the run, as moving a key writes one slot.
    fn retire_if_searched(&mut self) {
        let n = self.run.len();
        let searches = *self.searches.get_mut();
        if n == 0 || searches * (n.ilog2() as usize + 1) < n + RETIRE_SLACK {
            return;
        }
        let table = &mut self.table;
        self.run
            .drain(|key, by| table.insert(Hashed::of(key), key, by));
        *self.searches.get_mut() = 0;
    }
}

/// Searches a run may take before the rule of `retire_if_searched`
/// applies, so that a short run is not moved for the first few keys out
/// of order.
const RETIRE_SLACK: usize = 1 << 12;

/// A hash of `key` whose every bit depends on every byte (the table's
/// shard, tag and home all come from it).
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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// Keys of several lengths, none a prefix of another (a length byte
    /// first).
    fn key(n: u64) -> Vec<u8> {
        let body = format!("k{n}");
        let mut k = vec![body.len() as u8];
        k.extend_from_slice(body.as_bytes());
        k
    }

    /// A small generator of numbers, so that orders are the same each run.
    fn mix(n: u64) -> u64 {
        let mut x = n.wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }

    /// The set against `HashMap` over `keys` offered in turn, each
    /// claimed by its position: each looked up and fetched ahead, then
    /// inserted (every third, when new) or claimed; the same answer every
    /// time, and the same keys and claimers at the end.
    fn agrees_with_a_hash_map(keys: impl IntoIterator<Item = Vec<u8>>) -> KeySet {
        let mut set = KeySet::default();
        let mut model = HashMap::new();
        for (i, k) in keys.into_iter().enumerate() {
            assert_eq!(set.holds(&k), model.contains_key(&k), "{i}");
            assert_eq!(set.claimer(&k), model.get(&k).copied(), "{i}");
            set.prefetch(&k);
            let by = i as u64;
            match i % 3 {
                0 if !model.contains_key(&k) => set.insert(&k, by),
                _ => assert_eq!(set.claim(&k, by), !model.contains_key(&k), "{i}"),
            }
            model.entry(k).or_insert(by);
        }
        assert_eq!(set.len(), model.len());
        for (k, &by) in &model {
            assert_eq!(set.claimer(k), Some(by));
        }
        set
    }

    #[test]
    fn keys_in_order_stay_in_the_run() {
        let set = agrees_with_a_hash_map((0..50_000).map(|n| format!("ev-{n:09}").into_bytes()));
        assert_eq!((set.run.len(), set.table.len()), (50_000, 0));
    }

    /// Random keys, with repeats: the run is emptied into the table early,
    /// and every later key that is not the greatest goes to the table.
    #[test]
    fn keys_out_of_order_end_in_the_table() {
        let set = agrees_with_a_hash_map((0..60_000).map(|n| key(mix(n) % 40_000)));
        assert!(set.table.len() > set.run.len() * 100, "{}", set.run.len());
    }

    /// Keys in order with a few late ones, a repeat of a recent key now
    /// and then, and runs of keys that go down: lookups in the run, in the
    /// table and in both.
    #[test]
    fn keys_mostly_in_order() {
        let keys = (0..80_000u64).map(|n| {
            let m = match mix(n) % 100 {
                0..=4 => n.saturating_sub(mix(n) % 500),
                5 => n - n % 7,
                _ if (20_000..21_000).contains(&n) => 21_000 - (n - 20_000),
                _ => n,
            };
            format!("ev-{m:09}").into_bytes()
        });
        let set = agrees_with_a_hash_map(keys);
        assert!(set.run.len() > 0 && !set.table.is_empty());
    }

    /// Runs that start over and over: keys in order, then a stretch out
    /// of order long enough to empty the run, again and again.
    #[test]
    fn a_run_emptied_starts_again_above_the_greatest_key() {
        let keys = (0..5u64).flat_map(|round| {
            let base = round * 100_000;
            let up = (0..20_000).map(move |n| base + 50_000 + n);
            let down = (0..20_000).map(move |n| base + 49_999 - n);
            up.chain(down).map(key)
        });
        let set = agrees_with_a_hash_map(keys);
        // Half the keys went down; more than those are in the table.
        assert!(set.table.len() > 100_000, "{}", set.table.len());
    }

    #[test]
    fn a_set_may_move_to_another_thread() {
        fn movable<T: Send + Sync>(_: &T) {}
        let mut set = KeySet::default();
        set.claim(&key(1), 1);
        movable(&set);
        let set = std::thread::spawn(move || {
            assert!(!set.holds(&key(2)));
            set
        })
        .join()
        .expect("the thread ends");
        assert_eq!(set.claimer(&key(1)), Some(1));
    }

    #[test]
    fn the_empty_set_finds_nothing() {
        let set = KeySet::default();
        assert!(!set.holds(b""));
        assert!(set.is_empty());
    }
}
