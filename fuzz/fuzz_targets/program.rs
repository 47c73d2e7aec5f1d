//! Arbitrary text as a program, through lex → parse → check → run on an
//! in-memory host with a few data files: a diagnostic or a result, never a
//! panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod shared;

fuzz_target!(|data: &[u8]| {
    shared::program(data);
});
