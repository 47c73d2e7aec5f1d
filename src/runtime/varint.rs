//! Unsigned integers in groups of seven bits, low first, each byte but
//! the last with its top bit set: the lengths inside unique keys
//! (`eval::write_key`), and the lengths and claimers inside the key set
//! (`keyset`).

/// Append `n`.
pub fn write(mut n: u64, out: &mut Vec<u8>) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Write `n` at the start of `out`, which has room for it (ten bytes
/// hold any); how many bytes it took.
pub fn put(mut n: u64, out: &mut [u8]) -> usize {
    let mut i = 0;
    while n >= 0x80 {
        out[i] = n as u8 | 0x80;
        n >>= 7;
        i += 1;
    }
    out[i] = n as u8;
    i + 1
}

/// The number `write` (or `put`) put at `*at`, moving `*at` past it.
pub fn read(bytes: &[u8], at: &mut usize) -> u64 {
    let mut n = 0;
    let mut shift = 0;
    loop {
        let b = bytes[*at];
        *at += 1;
        n |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return n;
        }
        shift += 7;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_what_it_writes() {
        let numbers = [0, 1, 0x7f, 0x80, 300, 1 << 35, u64::MAX];
        let mut out = Vec::new();
        numbers.iter().for_each(|&n| super::write(n, &mut out));
        let mut at = 0;
        for n in numbers {
            assert_eq!(super::read(&out, &mut at), n);
        }
        assert_eq!(at, out.len());
        let mut put = [0u8; 10 * 7];
        let mut end = 0;
        numbers
            .iter()
            .for_each(|&n| end += super::put(n, &mut put[end..]));
        assert_eq!(&put[..end], &out[..]);
    }
}
