//! Arbitrary bytes as JSON Lines, repeated into a file large enough to be
//! split across threads: the counting path on two and three threads must
//! print what it prints on one, unique keys repeated from chunk to chunk
//! included. (`json_lines` holds one thread to the ordinary path.)
#![no_main]

use libfuzzer_sys::fuzz_target;

mod shared;

/// Just over the size from which a file is split (`MIN_SPLIT_BYTES`).
const LARGE: usize = (1 << 20) + 1;

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    // Each copy on lines of its own, so that a copy's last line is whole.
    let mut text = Vec::with_capacity(LARGE + data.len() + 1);
    while text.len() < LARGE {
        text.extend_from_slice(data);
        text.push(b'\n');
    }
    let path = shared::scratch("threads.jsonl");
    std::fs::write(&path, &text).expect("scratch file");
    let source = format!("source(file({:?}), Json)", path.display().to_string());
    shared::agree_across_threads(&source);
});
