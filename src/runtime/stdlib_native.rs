//! Native twins of the standard library's hot functions.
//!
//! The HQL definitions in `stdlib/*.hql` are the reference. The checker
//! gives a standard-library `fn` whose name has a twin here a `Native`
//! (`FnDef::native`), once, when it lowers the declaration; a program's own
//! function of the same name never gets one. A call then runs the twin in
//! place of the body when the arguments have the types the twin handles
//! (`Native::call` gives `None` otherwise, and the body runs, with its own
//! errors). `tests/stdlib_native.rs` holds every twin to its definition.

use std::cell::Cell;
use std::sync::LazyLock;

use rustc_hash::FxHashSet;

use crate::runtime::value::Value;

/// A standard-library function with a native implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Native {
    IsLeapYear,
    DaysInMonth,
    IsValidYmd,
    IsDate,
    IsTimestamp,
    IsNonEmpty,
    IsEmail,
    IsUrl,
    IsUuid,
    IsCountryCode,
    IsCurrencyCode,
}

thread_local! {
    /// Whether the checker on this thread gives standard-library functions
    /// their twins (see `run_reference`).
    static ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// Run `f` with the twins switched off on this thread: programs checked
/// inside it run the standard library's HQL bodies. The differential test
/// compares the two.
pub fn run_reference<R>(f: impl FnOnce() -> R) -> R {
    let outer = ENABLED.with(|e| e.replace(false));
    let result = f();
    ENABLED.with(|e| e.set(outer));
    result
}

impl Native {
    pub const ALL: [Native; 11] = [
        Native::IsLeapYear,
        Native::DaysInMonth,
        Native::IsValidYmd,
        Native::IsDate,
        Native::IsTimestamp,
        Native::IsNonEmpty,
        Native::IsEmail,
        Native::IsUrl,
        Native::IsUuid,
        Native::IsCountryCode,
        Native::IsCurrencyCode,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Native::IsLeapYear => "is_leap_year",
            Native::DaysInMonth => "days_in_month",
            Native::IsValidYmd => "is_valid_ymd",
            Native::IsDate => "is_date",
            Native::IsTimestamp => "is_timestamp",
            Native::IsNonEmpty => "is_non_empty",
            Native::IsEmail => "is_email",
            Native::IsUrl => "is_url",
            Native::IsUuid => "is_uuid",
            Native::IsCountryCode => "is_country_code",
            Native::IsCurrencyCode => "is_currency_code",
        }
    }

    /// The twin of the standard library's function `name`, if it has one
    /// and twins are on. Called by the checker, once per declaration.
    pub fn for_library_fn(name: &str) -> Option<Native> {
        if !ENABLED.with(Cell::get) {
            return None;
        }
        Native::ALL.into_iter().find(|n| n.name() == name)
    }

    /// The result for `args`, or `None` when an argument is not of the
    /// type the twin handles (the HQL body then runs).
    pub fn call(self, args: &[Value]) -> Option<Value> {
        let ok = match (self, args) {
            (Native::IsLeapYear, [Value::Int(y)]) => is_leap_year(*y),
            (Native::DaysInMonth, [Value::Int(y), Value::Int(m)]) => {
                return Some(Value::Int(days_in_month(*y, *m)))
            }
            (Native::IsValidYmd, [Value::Int(y), Value::Int(m), Value::Int(d)]) => {
                is_valid_ymd(*y, *m, *d)
            }
            (native, [Value::Str(s)]) => native.test_text(s)?,
            _ => return None,
        };
        Some(Value::Bool(ok))
    }

    /// The twins of one String argument: `None` for a twin that takes
    /// something else.
    pub fn test_text(self, s: &str) -> Option<bool> {
        Some(match self {
            Native::IsDate => is_date(s.as_bytes()),
            Native::IsTimestamp => is_timestamp(s.as_bytes()),
            Native::IsNonEmpty => !s.trim().is_empty(),
            Native::IsEmail => is_email(s),
            Native::IsUrl => is_url(s),
            Native::IsUuid => is_uuid(s.as_bytes()),
            Native::IsCountryCode => COUNTRY_CODES.contains(s),
            Native::IsCurrencyCode => CURRENCY_CODES.contains(s),
            Native::IsLeapYear | Native::DaysInMonth | Native::IsValidYmd => return None,
        })
    }
}

fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && year % 100 != 0 || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => 0,
    }
}

fn is_valid_ymd(year: i64, month: i64, day: i64) -> bool {
    day >= 1 && day <= days_in_month(year, month)
}

/// The number written by the ASCII digits `b`, or `None` if one is not.
fn digits(b: &[u8]) -> Option<i64> {
    b.iter().try_fold(0, |n: i64, c| {
        c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
    })
}

/// Two ASCII digits whose number is at most `max`.
fn two_digits_to(b: &[u8], max: i64) -> bool {
    b.len() == 2 && digits(b).is_some_and(|n| n <= max)
}

/// `YYYY-MM-DD`, exactly, naming a day that exists.
fn is_date(b: &[u8]) -> bool {
    let [y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1] = *b else {
        return false;
    };
    match (
        digits(&[y0, y1, y2, y3]),
        digits(&[m0, m1]),
        digits(&[d0, d1]),
    ) {
        (Some(y), Some(m), Some(d)) => is_valid_ymd(y, m, d),
        _ => false,
    }
}

/// An RFC 3339 date-time: a date, `T`/`t`/space, `hh:mm:ss`, optional
/// fraction, then `Z`/`z` or `±hh:mm`.
fn is_timestamp(b: &[u8]) -> bool {
    if b.len() < 20 || !matches!(b[10], b'T' | b't' | b' ') || !is_date(&b[..10]) {
        return false;
    }
    let time = &b[11..];
    if !(two_digits_to(&time[0..2], 23)
        && time[2] == b':'
        && two_digits_to(&time[3..5], 59)
        && time[5] == b':'
        && two_digits_to(&time[6..8], 60))
    {
        return false;
    }
    let mut rest = &time[8..];
    if let [b'.', fraction @ ..] = rest {
        let n = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    match rest {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h0, h1, b':', m0, m1] => {
            two_digits_to(&[*h0, *h1], 23) && two_digits_to(&[*m0, *m1], 59)
        }
        _ => false,
    }
}

/// The instant a `Date` (taken as 00:00 UTC, with `date`) or a
/// `Timestamp` names, in nanoseconds since 1970-01-01T00:00:00Z; `None`
/// for text that is not one. A leap second counts as the second before.
pub fn instant(text: &str, date: bool) -> Option<i128> {
    let b = text.as_bytes();
    let valid = if date { is_date(b) } else { is_timestamp(b) };
    if !valid {
        return None;
    }
    let day = days_from_civil(digits(&b[0..4])?, digits(&b[5..7])?, digits(&b[8..10])?);
    let mut nanos = i128::from(day) * 86_400 * 1_000_000_000;
    if date {
        return Some(nanos);
    }
    let (h, m, s) = (
        digits(&b[11..13])?,
        digits(&b[14..16])?,
        digits(&b[17..19])?,
    );
    nanos += i128::from(h * 3600 + m * 60 + s.min(59)) * 1_000_000_000;
    let mut rest = &b[19..];
    if let [b'.', fraction @ ..] = rest {
        let n = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        let mut scale = 100_000_000i128;
        for &c in &fraction[..n] {
            nanos += i128::from(c - b'0') * scale;
            scale /= 10;
        }
        rest = &fraction[n..];
    }
    if let [sign @ (b'+' | b'-'), h0, h1, b':', m0, m1] = *rest {
        let offset = digits(&[h0, h1])? * 3600 + digits(&[m0, m1])? * 60;
        let offset = i128::from(offset) * 1_000_000_000;
        // `+02:00` is two hours ahead of UTC: the same instant is earlier in UTC.
        nanos += if sign == b'+' { -offset } else { offset };
    }
    Some(nanos)
}

/// The days from 1970-01-01 to the proleptic Gregorian date, counting
/// whole 400-year eras of 146,097 days from 0000-03-01.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    // Years start in March, so that the leap day ends the year.
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// 8-4-4-4-12 hexadecimal digits.
fn is_uuid(b: &[u8]) -> bool {
    // Every digit is tested, without a branch on its value: the digits of
    // a UUID are random, and a branch a digit would be mispredicted.
    let hex = |part: &[u8]| part.iter().fold(true, |ok, c| ok & c.is_ascii_hexdigit());
    b.len() == 36
        && b[8] == b'-'
        && b[13] == b'-'
        && b[18] == b'-'
        && b[23] == b'-'
        && hex(&b[..8]) & hex(&b[9..13]) & hex(&b[14..18]) & hex(&b[19..23]) & hex(&b[24..])
}

/// Is there a character with the Unicode White_Space property (`\s` in a
/// regex, `char::is_whitespace`)? ASCII text is tested byte by byte.
fn has_whitespace(s: &str) -> bool {
    if s.is_ascii() {
        s.bytes().any(|c| matches!(c, b' ' | b'\t'..=b'\r'))
    } else {
        s.chars().any(char::is_whitespace)
    }
}

/// `local@domain.tld`: one `@`, no whitespace, a local part, and a domain
/// with a dot that neither starts nor ends it.
fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && domain.contains('.')
        && !has_whitespace(s)
}

/// An absolute `http`/`https` URL with a host (see `Url` in stdlib/text.hql).
fn is_url(s: &str) -> bool {
    let Some(rest) = url_scheme(s) else {
        return false;
    };
    if has_whitespace(rest) {
        return false;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host_port = match authority.split_once('@') {
        Some((user, host_port)) => {
            if user.is_empty() || user.contains(['[', ']']) {
                return false;
            }
            host_port
        }
        None => authority,
    };
    if host_port.contains('@') {
        return false;
    }
    let port = match host_port.strip_prefix('[') {
        Some(bracketed) => {
            let Some((address, port)) = bracketed.split_once(']') else {
                return false;
            };
            let hex = |c: char| c.is_ascii_hexdigit() || c == ':' || c == '.';
            if address.is_empty() || !address.chars().all(hex) {
                return false;
            }
            port
        }
        None => {
            let (host, port) = host_port.split_at(host_port.find(':').unwrap_or(host_port.len()));
            if host.is_empty() || host.contains(['[', ']']) {
                return false;
            }
            port
        }
    };
    match port.strip_prefix(':') {
        Some(n) => (1..=5).contains(&n.len()) && n.bytes().all(|c| c.is_ascii_digit()),
        None => port.is_empty(),
    }
}

/// The text after `http://` or `https://`, the scheme in any case (the
/// regex's `(?i)` folds `s` with `ſ`, U+017F, too).
fn url_scheme(s: &str) -> Option<&str> {
    let head = s.get(..4)?;
    if !head.eq_ignore_ascii_case("http") {
        return None;
    }
    let rest = &s[4..];
    let rest = ["s", "S", "\u{17f}"]
        .into_iter()
        .find_map(|p| rest.strip_prefix(p))
        .unwrap_or(rest);
    rest.strip_prefix("://")
}

/// The quoted strings of `let <name> = [ … ]` in the library's own text,
/// so that the list is written once, in HQL.
fn listed(text: &'static str, name: &str) -> FxHashSet<&'static str> {
    let start = text.find(&format!("let {name} = [")).unwrap_or(text.len());
    let list = &text[start..];
    let list = &list[..list.find(']').unwrap_or(list.len())];
    list.split('"').skip(1).step_by(2).collect()
}

const CODES: &str = include_str!("../../stdlib/codes.hql");

static COUNTRY_CODES: LazyLock<FxHashSet<&str>> = LazyLock::new(|| listed(CODES, "COUNTRY_CODES"));
static CURRENCY_CODES: LazyLock<FxHashSet<&str>> =
    LazyLock::new(|| listed(CODES, "CURRENCY_CODES"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_lists_are_read_whole() {
        assert_eq!(COUNTRY_CODES.len(), 249);
        assert_eq!(CURRENCY_CODES.len(), 178);
    }

    #[test]
    fn every_twin_is_found_by_its_name_and_none_when_off() {
        for n in Native::ALL {
            assert_eq!(Native::for_library_fn(n.name()), Some(n));
        }
        run_reference(|| assert_eq!(Native::for_library_fn("is_email"), None));
        assert_eq!(Native::for_library_fn("is_email"), Some(Native::IsEmail));
    }

    #[test]
    fn instants_count_from_the_epoch_in_utc() {
        let second = 1_000_000_000i128;
        assert_eq!(instant("1970-01-01", true), Some(0));
        assert_eq!(instant("1970-01-02", true), Some(86_400 * second));
        assert_eq!(instant("2000-03-01", true), Some(11_017 * 86_400 * second));
        assert_eq!(instant("1969-12-31", true), Some(-86_400 * second));
        assert_eq!(instant("1970-01-01T00:00:01Z", false), Some(second));
        assert_eq!(instant("1970-01-01T02:00:00+02:00", false), Some(0));
        assert_eq!(instant("1970-01-01T00:00:00.25Z", false), Some(second / 4));
        assert_eq!(
            instant("2024-02-29T13:45:00Z", false),
            Some(1_709_214_300 * second)
        );
        assert_eq!(instant("2023-02-29", true), None);
        assert_eq!(instant("2024-02-29", false), None);
    }
}
