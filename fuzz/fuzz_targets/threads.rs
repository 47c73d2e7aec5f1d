//! Arbitrary bytes as JSON Lines, repeated into a file large enough to be
//! split across threads: the counting path on two and three threads must
//! print what it prints on one, unique keys repeated from chunk to chunk
//! included. (`json_lines` holds one thread to the ordinary path.)
#![no_main]

use libfuzzer_sys::fuzz_target;

mod shared;

fuzz_target!(|data: &[u8]| {
    shared::threads(data);
});
