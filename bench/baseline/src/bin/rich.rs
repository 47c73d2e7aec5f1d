//! Rich baseline: the checks of `bench/rich/event.hql`, written by hand. Each
//! line is parsed into a `serde_json::Value`; the regexes are the standard
//! library's (`Email`, `Timestamp`) and the contract's; the date is checked
//! against the calendar; the country codes are the standard library's list,
//! read from `stdlib/codes.hql` when the program is built.

use regex::Regex;
use serde_json::{Map, Value};

const CODES: &str = include_str!("../../../../stdlib/codes.hql");
const EMAIL: &str = r"^[^@\s]+@[^@\s.][^@\s]*\.[^@\s]+$";
const TIMESTAMP: &str = r"^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$";
const SKU: &str = r"^[A-Z]{3}-[0-9]{4}$";
const EVENT_ID: &str = r"^ev-[0-9]{9}$";

struct Checks {
    email: Regex,
    timestamp: Regex,
    sku: Regex,
    event_id: Regex,
    /// `countries[a][b]`: the code made of letters `a` and `b` is assigned.
    countries: [[bool; 26]; 26],
}

impl Checks {
    fn new() -> Self {
        let start = CODES
            .find("let COUNTRY_CODES = [")
            .expect("the country list");
        let list = &CODES[start..];
        let list = &list[..list.find(']').expect("the end of the country list")];
        let mut countries = [[false; 26]; 26];
        for code in list.split('"').skip(1).step_by(2) {
            let b = code.as_bytes();
            assert!(
                b.len() == 2 && b.iter().all(u8::is_ascii_uppercase),
                "{code}"
            );
            countries[usize::from(b[0] - b'A')][usize::from(b[1] - b'A')] = true;
        }
        Checks {
            email: Regex::new(EMAIL).unwrap(),
            timestamp: Regex::new(TIMESTAMP).unwrap(),
            sku: Regex::new(SKU).unwrap(),
            event_id: Regex::new(EVENT_ID).unwrap(),
            countries,
        }
    }

    fn country(&self, c: &str) -> bool {
        match c.as_bytes() {
            [a, b] if a.is_ascii_uppercase() && b.is_ascii_uppercase() => {
                self.countries[usize::from(a - b'A')][usize::from(b - b'A')]
            }
            _ => false,
        }
    }

    fn email(&self, s: &str) -> bool {
        self.email.is_match(s) && !s.ends_with('.')
    }

    /// An RFC 3339 date-time whose date is in the Gregorian calendar.
    fn timestamp(&self, s: &str) -> bool {
        let Some(c) = self.timestamp.captures(s) else {
            return false;
        };
        let num = |i: usize| c[i].parse::<u32>().unwrap();
        let (year, month, day) = (num(1), num(2), num(3));
        day >= 1 && day <= days_in_month(year, month)
    }
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && !year.is_multiple_of(100) || year.is_multiple_of(400) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => 0,
    }
}

/// An Int as HQL reads JSON: a number written without fraction or exponent.
fn int(v: Option<&Value>) -> Option<i64> {
    match v {
        Some(Value::Number(n)) => n.as_i64(),
        _ => None,
    }
}

fn string(v: Option<&Value>) -> Option<&str> {
    match v {
        Some(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// A closed record with exactly the fields `names` (each present: every
/// field of these records is required).
fn closed<'a>(v: &'a Value, names: &[&str]) -> Option<&'a Map<String, Value>> {
    match v {
        Value::Object(o) if o.len() == names.len() && names.iter().all(|n| o.contains_key(*n)) => {
            Some(o)
        }
        _ => None,
    }
}

/// The item's `qty * price`, when the item is valid.
fn item(v: &Value, checks: &Checks) -> Option<i64> {
    let o = closed(v, &["sku", "qty", "price"])?;
    let sku = string(o.get("sku"))?;
    let qty = int(o.get("qty"))?;
    let price = int(o.get("price"))?;
    (checks.sku.is_match(sku) && qty >= 1 && price >= 0).then(|| qty.checked_mul(price))?
}

fn valid(line: &str, checks: &Checks) -> bool {
    let Ok(Value::Object(o)) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    let Some(event_id) = string(o.get("event_id")) else {
        return false;
    };
    let Some(user) = o.get("user").and_then(|u| closed(u, &["email", "country"])) else {
        return false;
    };
    match (string(user.get("email")), string(user.get("country"))) {
        (Some(email), Some(country)) if checks.email(email) && checks.country(country) => {}
        _ => return false,
    }
    match string(o.get("ts")) {
        Some(ts) if checks.timestamp(ts) => {}
        _ => return false,
    }
    let kind = match string(o.get("type")) {
        Some(k @ ("click" | "view" | "cart" | "purchase")) => k,
        _ => return false,
    };
    let Some(Value::Array(items)) = o.get("items") else {
        return false;
    };
    let Some(total) = int(o.get("total")) else {
        return false;
    };
    let mut sum = 0i64;
    for i in items {
        match item(i, checks).and_then(|n| sum.checked_add(n)) {
            Some(s) => sum = s,
            None => return false,
        }
    }
    checks.event_id.is_match(event_id) && (kind != "purchase" || !items.is_empty()) && total == sum
}

fn main() -> std::io::Result<()> {
    let path = hql_bench_baseline::path_arg();
    let checks = Checks::new();
    let n = hql_bench_baseline::count_valid(&path, |line| valid(line, &checks))?;
    println!("{n}");
    Ok(())
}
