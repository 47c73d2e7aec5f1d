//! What both baselines share: the e-mail regex and the line loop.

use std::io::{BufRead, BufReader};

pub const EMAIL: &str = r"^[^@\s]+@[^@\s]+\.[^@\s]+$";

/// Read `path` line by line (one reused buffer), skip blank lines, and count
/// the lines for which `valid` holds. A line that is not UTF-8 is not valid.
pub fn count_valid(path: &str, mut valid: impl FnMut(&str) -> bool) -> std::io::Result<u64> {
    let file = std::fs::File::open(path)?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut line = Vec::new();
    let mut count = 0u64;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            continue;
        };
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        if valid(text) {
            count += 1;
        }
    }
    Ok(count)
}

/// The path argument, or a usage message and exit status 2.
pub fn path_arg() -> String {
    match std::env::args().nth(1) {
        Some(p) => p,
        None => {
            eprintln!(
                "usage: {} ORDERS.jsonl",
                std::env::args().next().unwrap_or_default()
            );
            std::process::exit(2);
        }
    }
}
