//! Arbitrary bytes as a JSON file, validated against fixed contracts: the
//! line check (`report()`, `oks() | count()`) and the ordinary path must
//! agree, and nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod shared;

fuzz_target!(|data: &[u8]| {
    shared::data_file(data, "Json");
});
