//! Baseline 2: serde derive into a typed struct, check by hand. Extra fields
//! are allowed, so `deny_unknown_fields` is not used.

use regex::Regex;
use serde::Deserialize;
use std::borrow::Cow;

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Open,
    Shipped,
    Cancelled,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Order<'a> {
    #[serde(borrow)]
    order_id: Cow<'a, str>,
    status: Status,
    amount: f64,
    #[serde(borrow, default)]
    customer_email: Option<Cow<'a, str>>,
    low: i64,
    high: i64,
}

fn valid(line: &str, email: &Regex) -> bool {
    let Ok(o) = serde_json::from_str::<Order>(line) else {
        return false;
    };
    o.amount >= 0.0 && o.low <= o.high && o.customer_email.as_deref().map_or(true, |e| email.is_match(e))
}

fn main() -> std::io::Result<()> {
    let path = hql_bench_baseline::path_arg();
    let email = Regex::new(hql_bench_baseline::EMAIL).unwrap();
    let n = hql_bench_baseline::count_valid(&path, |line| valid(line, &email))?;
    println!("{n}");
    Ok(())
}
