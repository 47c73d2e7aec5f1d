//! Arbitrary bytes as a CSV file, converted and validated against fixed
//! contracts: the counting path and the ordinary path must agree, and
//! nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod shared;

fuzz_target!(|data: &[u8]| {
    shared::data_file(data, "Csv");
});
