//! Equality and order of values (language.md §3), and a hash that agrees
//! with equality, for `distinct`, `count_by`, `group_by` and `unique`.
//!
//! A number's value is the decimal it prints as: an Int's digits, a Float's
//! shortest form that reads back to it (all the digits of a whole number
//! beyond 2^53, which that form rounds), a number from data its source text
//! (`1.50`, `12345678901234567890123`). Two numbers are equal when those
//! decimals are, and order by them — exactly, so Ints beyond 2^53 or i64
//! never round into one another. Most comparisons are settled by the
//! numbers' nearest doubles alone; only when those tie and one side may
//! hold more than a double does the comparison read the decimals.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use rustc_hash::FxHasher;
use smallvec::SmallVec;

use crate::runtime::value::{NumKind, Record, Value};
use crate::runtime::varint;

/// Structural equality: `1 == 1.0`, records equal whatever their order.
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) | (Value::Absent, Value::Absent) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| equal(p, q))
        }
        (Value::Record(x), Value::Record(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        (Value::Ok(x), Value::Ok(y)) => equal(&x.value, &y.value),
        (Value::Err(x), Value::Err(y)) => equal(x, y),
        (Value::Type(x), Value::Type(y)) => std::rc::Rc::ptr_eq(x, y),
        (Value::Format(x), Value::Format(y)) => x == y,
        (Value::Func(x), Value::Func(y)) => std::rc::Rc::ptr_eq(x, y),
        _ => compare_numbers(a, b) == Some(Ordering::Equal),
    }
}

/// `<` and friends: two numbers (exactly) or two strings (by code point).
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Some(x.as_str().cmp(y.as_str())),
        _ => compare_numbers(a, b),
    }
}

/// Total order for sorting (language.md §6.1): `null` < `false` < `true`
/// < numbers < strings < lists < records; lists element by element (a
/// prefix first), records by their sorted keys, then their values in that
/// order; anything else (results, types, functions) last, by its printed
/// form.
pub fn sort_order(a: &Value, b: &Value) -> Ordering {
    let rank = |v: &Value| match v {
        Value::Null | Value::Absent => 0,
        Value::Bool(_) => 1,
        v if v.is_number() => 2,
        Value::Str(_) => 3,
        Value::List(_) => 4,
        Value::Record(_) => 5,
        _ => 6,
    };
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::List(x), Value::List(y)) => in_order(x.iter(), y.iter()),
        (Value::Record(x), Value::Record(y)) => {
            let (xk, yk) = (sorted_keys(x), sorted_keys(y));
            xk.cmp(&yk).then_with(|| {
                // The same keys: their values, in the keys' order.
                in_order(
                    xk.iter().filter_map(|k| x.get(k)),
                    yk.iter().filter_map(|k| y.get(k)),
                )
            })
        }
        _ => match compare(a, b) {
            Some(o) => o,
            None => rank(a).cmp(&rank(b)).then_with(|| {
                crate::runtime::print::to_hql(a).cmp(&crate::runtime::print::to_hql(b))
            }),
        },
    }
}

fn sorted_keys(r: &Record) -> Vec<&str> {
    let mut keys: Vec<&str> = r.keys().map(|k| &**k).collect();
    keys.sort_unstable();
    keys
}

/// Two sequences of values element by element, by `sort_order`; a prefix
/// comes first.
fn in_order<'v>(
    mut a: impl Iterator<Item = &'v Value>,
    mut b: impl Iterator<Item = &'v Value>,
) -> Ordering {
    loop {
        match (a.next(), b.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => match sort_order(x, y) {
                Ordering::Equal => {}
                other => return other,
            },
        }
    }
}

/// Two numbers by exact value; `None` unless both are numbers.
pub fn compare_numbers(a: &Value, b: &Value) -> Option<Ordering> {
    if let (Some(x), Some(y)) = (a.small_int(), b.small_int()) {
        return Some(x.cmp(&y));
    }
    // Rounding to the nearest double never reverses an order, so doubles
    // that differ order their numbers; equal ones prove equality only when
    // neither number holds more than its double's shortest form.
    match nearest(a)?.partial_cmp(&nearest(b)?) {
        Some(Ordering::Equal) if is_short(a) && is_short(b) => return Some(Ordering::Equal),
        Some(Ordering::Equal) | None => {}
        order => return order,
    }
    Some(Decimal::of(a)?.cmp(&Decimal::of(b)?))
}

/// The double nearest a number (each kind's conversion rounds to nearest).
fn nearest(v: &Value) -> Option<f64> {
    Some(match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Num(n) => match n.kind {
            NumKind::Int(i) => i as f64,
            NumKind::Float(f) => f,
            NumKind::BigInt => n.text.parse().unwrap_or(f64::NAN),
        },
        _ => return None,
    })
}

/// Is a number's value its nearest double's shortest form, so that equal
/// doubles mean equal numbers? A Float's is unless it is a whole number
/// beyond 2^53 (`Decimal::of_f64`); an integer's when it
/// is at most 2^53; a decimal's when it has at most 15 significant digits
/// and is in the range of normal doubles (distinct such decimals are
/// distinct doubles).
fn is_short(v: &Value) -> bool {
    match v {
        Value::Int(i) => i.unsigned_abs() <= 1 << 53,
        Value::Float(f) => !is_wide_whole(*f),
        Value::Num(n) => match n.kind {
            NumKind::Int(i) => i.unsigned_abs() <= 1 << 53,
            NumKind::Float(f) => f.is_normal() && significant_digits(&n.text) <= 15,
            NumKind::BigInt => false,
        },
        _ => false,
    }
}

/// Is a double a whole number beyond 2^53, whose value has more digits
/// than its shortest form?
fn is_wide_whole(f: f64) -> bool {
    f.is_finite() && f.fract() == 0.0 && f.abs() >= 9_007_199_254_740_992.0
}

/// The digits of a number's text from its first non-zero one to its last.
fn significant_digits(text: &str) -> usize {
    let mantissa = text.split(['e', 'E']).next().unwrap_or(text).as_bytes();
    let nonzero = |d: &u8| d.is_ascii_digit() && *d != b'0';
    let (Some(first), Some(last)) = (
        mantissa.iter().position(nonzero),
        mantissa.iter().rposition(nonzero),
    ) else {
        return 0;
    };
    let points = usize::from(mantissa[first..last].contains(&b'.'));
    last + 1 - first - points
}

/// A number's exact value: `0.DIGITS × 10^point`, digits without leading
/// or trailing zeros (none for zero), so equal values are equal `Decimal`s.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    point: i64,
}

impl Decimal {
    /// The value of a number as it prints.
    fn of(v: &Value) -> Option<Decimal> {
        Some(match v {
            Value::Int(i) => Decimal::parse(&i.to_string()),
            Value::Float(f) => Decimal::of_f64(*f),
            Value::Num(n) => Decimal::parse(&n.text),
            _ => return None,
        })
    }

    /// A double's value: its shortest form that reads back to it, or, for
    /// a whole number beyond 2^53, every digit of it (§3: an Int beyond
    /// a double's exact range equals a Float only when their values are
    /// exactly equal, and such a double's value is a whole number whose
    /// shortest form rounds its last digits).
    fn of_f64(f: f64) -> Decimal {
        if is_wide_whole(f) {
            return Decimal::parse(&format!("{f:.0}"));
        }
        Decimal::parse(&format!("{f:e}"))
    }

    /// The value of a number's text: JSON's grammar, or Rust's `{:e}`.
    fn parse(text: &str) -> Decimal {
        let (negative, text) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = match text.split_once(['e', 'E']) {
            Some((m, e)) => (m, parse_exponent(e)),
            None => (text, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let mut point = (int.len() as i64).saturating_add(exponent);
        let mut digits: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
        let leading = digits.iter().take_while(|&&d| d == b'0').count();
        digits.drain(..leading);
        point = point.saturating_sub(leading as i64);
        while digits.last() == Some(&b'0') {
            digits.pop();
        }
        if digits.is_empty() {
            return Decimal {
                negative: false,
                digits,
                point: 0,
            };
        }
        Decimal {
            negative,
            digits,
            point,
        }
    }

    fn sign(&self) -> i8 {
        match (self.digits.is_empty(), self.negative) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        }
    }

    /// The value as an i64, when it is an integer that fits.
    fn to_i64(&self) -> Option<i64> {
        if self.point > 19 || (self.digits.len() as i64) > self.point.max(0) {
            return None;
        }
        let mut n: i128 = 0;
        for d in &self.digits {
            n = n * 10 + i128::from(d - b'0');
        }
        for _ in self.digits.len() as i64..self.point {
            n *= 10;
        }
        i64::try_from(if self.negative { -n } else { n }).ok()
    }
}

fn parse_exponent(text: &str) -> i64 {
    // An exponent too long for i64 only says "very large" or "very small".
    let clamp = i64::MAX / 4;
    match text.parse::<i64>() {
        Ok(e) => e.clamp(-clamp, clamp),
        Err(_) if text.starts_with('-') => -clamp,
        Err(_) => clamp,
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Decimal) -> Ordering {
        let sign = self.sign().cmp(&other.sign());
        if sign != Ordering::Equal || self.sign() == 0 {
            return sign;
        }
        let magnitude = self
            .point
            .cmp(&other.point)
            .then_with(|| self.digits.cmp(&other.digits));
        if self.negative {
            magnitude.reverse()
        } else {
            magnitude
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// What a number hashes as: one form for each value, whatever its kind or
/// text, so that numbers `equal` calls equal hash alike.
#[derive(Hash)]
enum NumberKey {
    /// An integer within i64.
    Int(i64),
    /// The shortest form of a double (not an integer within i64).
    Double(u64),
    /// Any other value.
    Exact(Decimal),
}

fn number_key(v: &Value) -> Option<NumberKey> {
    if let Some(i) = v.small_int() {
        return Some(NumberKey::Int(i));
    }
    let f = nearest(v)?;
    if is_short(v) {
        return Some(double_key(f));
    }
    let exact = Decimal::of(v)?;
    if let Some(i) = exact.to_i64() {
        return Some(NumberKey::Int(i));
    }
    if f.is_finite() && exact == Decimal::of_f64(f) {
        return Some(double_key(f));
    }
    Some(NumberKey::Exact(exact))
}

fn double_key(f: f64) -> NumberKey {
    if f.fract() == 0.0 {
        if f.abs() < 9_007_199_254_740_992.0 {
            return NumberKey::Int(f as i64);
        }
        if let Some(i) = Decimal::of_f64(f).to_i64() {
            return NumberKey::Int(i);
        }
    }
    NumberKey::Double(f.to_bits())
}

/// Hash a value so that values `equal` calls equal hash alike.
pub fn hash_value<H: Hasher>(v: &Value, h: &mut H) {
    if let Some(key) = number_key(v) {
        2u8.hash(h);
        key.hash(h);
        return;
    }
    match v {
        Value::Null | Value::Absent => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Str(s) => (3u8, s.as_str()).hash(h),
        Value::List(items) => {
            (4u8, items.len()).hash(h);
            items.iter().for_each(|i| hash_value(i, h));
        }
        Value::Record(r) => {
            // Fields in any order: their hashes are summed.
            let fields = r.iter().fold(0u64, |sum, (k, v)| {
                let mut field = FxHasher::default();
                k.hash(&mut field);
                hash_value(v, &mut field);
                sum.wrapping_add(field.finish())
            });
            (5u8, r.len(), fields).hash(h);
        }
        Value::Ok(ok) => {
            6u8.hash(h);
            hash_value(&ok.value, h);
        }
        Value::Err(e) => {
            7u8.hash(h);
            hash_value(e, h);
        }
        Value::Type(c) => (8u8, std::rc::Rc::as_ptr(c)).hash(h),
        Value::Format(f) => (9u8, f).hash(h),
        Value::Func(f) => (10u8, std::rc::Rc::as_ptr(f)).hash(h),
        Value::Stream(s) => (11u8, std::rc::Rc::as_ptr(s)).hash(h),
        Value::Int(_) | Value::Float(_) | Value::Num(_) => {}
    }
}

/// Write `v` as bytes that are the same exactly for values `equal` calls
/// equal: a compact key that holds none of the value (a `unique` key's
/// fields are kept this way, and no record they came from). Records are
/// written with their fields in key order. Integers take as few bytes as
/// their size needs, and their keys sort as they do, so that a set of keys
/// can tell ids that count up at a glance (`crate::runtime::keyset`), as
/// it can strings of one length that do. Lengths take seven bits a byte.
/// Every value's bytes say where they end, so no key of one or more values
/// is the start of another key of as many values.
pub fn write_key(v: &Value, out: &mut Vec<u8>) {
    let len = |n: usize, out: &mut Vec<u8>| varint::write(n as u64, out);
    if let Some(key) = number_key(v) {
        out.push(2);
        match key {
            NumberKey::Int(i) => {
                out.push(0);
                write_ordered_int(i, out);
            }
            NumberKey::Double(bits) => {
                out.push(1);
                out.extend_from_slice(&bits.to_le_bytes());
            }
            NumberKey::Exact(d) => {
                out.extend_from_slice(&[2, u8::from(d.negative)]);
                varint::write(zigzag(d.point), out);
                len(d.digits.len(), out);
                out.extend_from_slice(&d.digits);
            }
        }
        return;
    }
    let address = |p: usize, out: &mut Vec<u8>| out.extend_from_slice(&p.to_le_bytes());
    match v {
        Value::Null | Value::Absent => out.push(0),
        Value::Bool(b) => out.extend_from_slice(&[1, u8::from(*b)]),
        Value::Str(s) => write_key_text(s, out),
        Value::List(items) => {
            out.push(4);
            len(items.len(), out);
            items.iter().for_each(|i| write_key(i, out));
        }
        Value::Record(r) => {
            out.push(5);
            len(r.len(), out);
            let mut fields: Vec<_> = r.iter().collect();
            fields.sort_by(|a, b| a.0.cmp(b.0));
            for (k, v) in fields {
                len(k.len(), out);
                out.extend_from_slice(k.as_bytes());
                write_key(v, out);
            }
        }
        Value::Ok(ok) => {
            out.push(6);
            write_key(&ok.value, out);
        }
        Value::Err(e) => {
            out.push(7);
            write_key(e, out);
        }
        Value::Type(c) => {
            out.push(8);
            address(std::rc::Rc::as_ptr(c) as usize, out);
        }
        Value::Format(f) => {
            out.push(9);
            len(f.name().len(), out);
            out.extend_from_slice(f.name().as_bytes());
        }
        Value::Func(f) => {
            out.push(10);
            address(std::rc::Rc::as_ptr(f) as usize, out);
        }
        Value::Stream(s) => {
            out.push(11);
            address(std::rc::Rc::as_ptr(s) as usize, out);
        }
        Value::Int(_) | Value::Float(_) | Value::Num(_) => {}
    }
}

/// `write_key` of a `Str` holding `s`, from its text: a string key
/// claimed without building its value.
pub fn write_key_text(s: &str, out: &mut Vec<u8>) {
    out.push(3);
    varint::write(s.len() as u64, out);
    out.extend_from_slice(s.as_bytes());
}

/// `i` as bytes that sort as the integers do: a byte that gives its sign
/// and how many bytes follow (a greater magnitude sorts further from the
/// middle), then those bytes, high first, complemented for a negative
/// number. `0` is `[0x80]`, `1` is `[0x81, 1]`, `-1` is `[0x7f]`.
fn write_ordered_int(i: i64, out: &mut Vec<u8>) {
    // A negative `i` as its complement, `-i - 1`, which is not negative.
    let magnitude = if i < 0 { !(i as u64) } else { i as u64 };
    let len = 8 - magnitude.leading_zeros() as usize / 8;
    let bytes = if i < 0 { !magnitude } else { magnitude }.to_be_bytes();
    out.push(match i < 0 {
        true => 0x7f - len as u8,
        false => 0x80 + len as u8,
    });
    out.extend_from_slice(&bytes[8 - len..]);
}

/// A signed integer as an unsigned one that is small when it is near zero.
fn zigzag(i: i64) -> u64 {
    ((i << 1) ^ (i >> 63)) as u64
}

/// One or more values as a key of a hash map, compared with `==`: a key
/// of `distinct`, `count_by` or `group_by`.
#[derive(Debug, Clone)]
pub struct ValueKey(pub SmallVec<[Value; 2]>);

impl ValueKey {
    pub fn one(v: Value) -> ValueKey {
        ValueKey(smallvec::smallvec![v])
    }
}

impl Hash for ValueKey {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.iter().for_each(|v| hash_value(v, h));
    }
}

impl PartialEq for ValueKey {
    fn eq(&self, other: &ValueKey) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| equal(a, b))
    }
}

impl Eq for ValueKey {}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(text: &str) -> Value {
        Value::from_number_text(text)
    }

    fn hash(v: &Value) -> u64 {
        let mut h = FxHasher::default();
        hash_value(v, &mut h);
        h.finish()
    }

    #[test]
    fn numbers_compare_exactly() {
        assert!(equal(&Value::Int(1), &Value::Float(1.0)));
        assert_eq!(
            compare(&n("12345678901234567890123"), &Value::Int(i64::MAX)),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare(&n("-12345678901234567890123"), &Value::Int(i64::MIN)),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare(&n("1.50"), &Value::Float(1.5)),
            Some(Ordering::Equal)
        );
        assert_eq!(
            compare(
                &Value::Int(9007199254740993),
                &Value::Float(9007199254740992.0)
            ),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare(
                &n("12345678901234567890123"),
                &n("12345678901234567890124.0")
            ),
            Some(Ordering::Less)
        );
        assert!(!equal(
            &Value::Int(i64::MAX),
            &Value::Float(9223372036854775808.0)
        ));
        assert!(equal(&n("0.10"), &Value::Float(0.1)));
        assert!(equal(&n("1e2"), &Value::Int(100)));
        assert!(equal(&n("-0"), &Value::Float(-0.0)));
        assert_eq!(compare(&n("1e400"), &n("2e400")), Some(Ordering::Less));
        assert_eq!(
            compare(&n("1e-400"), &Value::Int(0)),
            Some(Ordering::Greater)
        );
        // A whole double beyond 2^53 is worth every digit of it, not the
        // digits of its shortest form (1.152921504606847e18).
        let two_60 = Value::Float(1152921504606846976.0);
        assert!(equal(&two_60, &Value::Int(1 << 60)));
        assert!(equal(&two_60, &n("1152921504606846976")));
        assert!(!equal(&two_60, &n("1152921504606847000")));
        assert_eq!(hash(&two_60), hash(&Value::Int(1 << 60)));
        let two_70 = Value::Float(1180591620717411303424.0);
        assert!(equal(&two_70, &n("1180591620717411303424")));
        assert_eq!(hash(&two_70), hash(&n("1180591620717411303424")));
        assert_eq!(
            compare(&two_70, &n("1180591620717411303425")),
            Some(Ordering::Less)
        );
    }

    #[test]
    fn significant_digits_skip_zeros_and_the_point() {
        for (text, n) in [
            ("1.50", 2),
            ("0.0012", 2),
            ("100.001", 6),
            ("-0.0", 0),
            ("12.5e7", 3),
            ("1234567890.12345", 15),
        ] {
            assert_eq!(significant_digits(text), n, "{text}");
        }
    }

    #[test]
    fn equal_numbers_hash_alike() {
        let same = [
            vec![
                Value::Int(1),
                Value::Float(1.0),
                n("1.0"),
                n("1.00"),
                n("1e0"),
            ],
            vec![Value::Float(0.1), n("0.10"), n("1e-1")],
            vec![
                Value::Float(9223372036854775808.0),
                n("9223372036854775808"),
                n("9.223372036854775808e18"),
            ],
            vec![
                Value::Float(1152921504606846976.0),
                Value::Int(1152921504606846976),
            ],
            vec![n("12345678901234567890123"), n("12345678901234567890123.0")],
            vec![Value::Int(0), n("-0"), Value::Float(-0.0), n("0.0e5")],
        ];
        for group in &same {
            for v in group {
                assert!(equal(v, &group[0]), "{v:?} == {:?}", group[0]);
                assert_eq!(hash(v), hash(&group[0]), "{v:?} and {:?}", group[0]);
            }
        }
        // The shortest form of a whole double beyond 2^53 is not its value.
        assert!(!equal(
            &Value::Float(9223372036854775808.0),
            &n("9223372036854776000")
        ));
        assert!(!equal(
            &Value::Int(9223372036854775807),
            &Value::Int(9223372036854775806)
        ));
        assert_ne!(
            hash(&Value::Int(9223372036854775807)),
            hash(&Value::Int(9223372036854775806))
        );
    }

    /// Numbers of every kind, many of them equal to one another in another
    /// form: the fast comparison must agree with the exact one, and equal
    /// numbers must hash alike.
    #[test]
    fn comparison_and_hash_agree_with_exact_decimals() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut numbers = Vec::new();
        for _ in 0..400 {
            let r = next();
            let i = match r % 4 {
                0 => (r >> 8) as i64 % 1000,
                1 => (1i64 << 53) + ((r >> 8) as i64 % 8) - 4,
                2 => i64::MAX - ((r >> 8) as i64 % 4),
                _ => (r >> 2) as i64,
            };
            let f = match r % 3 {
                0 => i as f64,
                1 => f64::from_bits(next() >> 2),
                _ => (i as f64) / 8.0,
            };
            numbers.push(Value::Int(i));
            numbers.push(n(&format!("{i}.0")));
            numbers.push(n(&format!("{i}.000e0")));
            numbers.push(n(&format!("{i}0")));
            if f.is_finite() {
                numbers.push(Value::Float(f));
                numbers.push(n(&format!("{f:e}")));
                numbers.push(n(&format!("{f:.3e}")));
                numbers.push(n(&format!("{f:.20e}")));
            }
        }
        for a in &numbers {
            for b in numbers.iter().step_by(7) {
                let exact = Decimal::of(a).unwrap().cmp(&Decimal::of(b).unwrap());
                assert_eq!(compare_numbers(a, b), Some(exact), "{a:?} vs {b:?}");
                let mut keys = (Vec::new(), Vec::new());
                write_key(a, &mut keys.0);
                write_key(b, &mut keys.1);
                assert_eq!(keys.0 == keys.1, exact == Ordering::Equal, "{a:?} vs {b:?}");
                if exact == Ordering::Equal {
                    assert_eq!(hash(a), hash(b), "{a:?} and {b:?}");
                }
            }
        }
    }

    /// Integer keys sort as the integers do, across every change of
    /// length and of sign, and none is the start of another.
    #[test]
    fn integer_keys_sort_as_the_integers() {
        let mut ints: Vec<i64> = vec![i64::MIN, i64::MAX, 0];
        for shift in 0..63 {
            for d in [-1, 0, 1] {
                ints.push((1i64 << shift) + d);
                ints.push(-(1i64 << shift) + d);
            }
        }
        ints.sort_unstable();
        ints.dedup();
        let key = |i: i64| {
            let mut out = Vec::new();
            write_key(&Value::Int(i), &mut out);
            out
        };
        let keys: Vec<Vec<u8>> = ints.iter().map(|&i| key(i)).collect();
        for (pair, ints) in keys.windows(2).zip(ints.windows(2)) {
            assert!(pair[0] < pair[1], "{} and {}", ints[0], ints[1]);
            assert!(
                !pair[1].starts_with(&pair[0]),
                "{} and {}",
                ints[0],
                ints[1]
            );
        }
        assert_eq!(key(0)[2..], [0x80]);
        assert_eq!(key(1)[2..], [0x81, 1]);
        assert_eq!(key(-1)[2..], [0x7f]);
        assert_eq!(key(-256)[2..], [0x7e, 0]);
        assert_eq!(key(256)[2..], [0x82, 1, 0]);
    }

    #[test]
    fn records_hash_whatever_their_order() {
        let r = |fields: &[(&str, i64)]| {
            Value::record(
                fields
                    .iter()
                    .map(|(k, v)| ((*k).into(), Value::Int(*v)))
                    .collect(),
            )
        };
        let a = r(&[("x", 1), ("y", 2)]);
        let b = r(&[("y", 2), ("x", 1)]);
        assert!(equal(&a, &b));
        assert_eq!(hash(&a), hash(&b));
        let key = |v: &Value| {
            let mut out = Vec::new();
            write_key(v, &mut out);
            out
        };
        assert_eq!(key(&a), key(&b));
        assert_ne!(key(&a), key(&r(&[("x", 1), ("y", 3)])));
        assert_ne!(
            key(&Value::str("ab")),
            key(&Value::list(vec![Value::str("ab")]))
        );
        assert!(ValueKey::one(a) == ValueKey::one(b));
    }
}
