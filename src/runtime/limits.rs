//! What a source may hold, set once for the process (`--max-line`) and
//! read by every reader of every thread.

use std::sync::atomic::{AtomicU64, Ordering};

/// The longest line a source may hold by default: a JSON line, an element
/// of a JSON array, or a CSV record (tooling.md, "Hostile input stays
/// bounded").
pub const DEFAULT_MAX_LINE: u64 = 256 << 20;

/// The longest line a source may hold (`--max-line`); one of every thread.
static MAX_LINE: AtomicU64 = AtomicU64::new(DEFAULT_MAX_LINE);

/// Set the longest line a source may hold, in bytes.
pub fn set_max_line(bytes: u64) {
    MAX_LINE.store(bytes, Ordering::Relaxed);
}

/// The longest line a source may hold, in bytes: a reader that has
/// gathered more of one line stops with [`line_too_long`] rather than grow
/// its buffer on.
pub fn max_line() -> usize {
    usize::try_from(MAX_LINE.load(Ordering::Relaxed)).unwrap_or(usize::MAX)
}
