//! Baseline 1: parse each line into a `serde_json::Value`, check by hand.

use regex::Regex;
use serde_json::Value;

fn is_int(v: &Value) -> Option<i128> {
    match v {
        Value::Number(n) => n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from)),
        _ => None,
    }
}

fn valid(line: &str, email: &Regex) -> bool {
    let Ok(Value::Object(o)) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    if !matches!(o.get("order_id"), Some(Value::String(_))) {
        return false;
    }
    match o.get("status") {
        Some(Value::String(s)) if s == "open" || s == "shipped" || s == "cancelled" => {}
        _ => return false,
    }
    match o.get("amount") {
        Some(Value::Number(n)) if n.as_f64().is_some_and(|a| a >= 0.0) => {}
        _ => return false,
    }
    match o.get("customer_email") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if email.is_match(s) => {}
        _ => return false,
    }
    match (o.get("low").and_then(is_int), o.get("high").and_then(is_int)) {
        (Some(low), Some(high)) => low <= high,
        _ => false,
    }
}

fn main() -> std::io::Result<()> {
    let path = hql_bench_baseline::path_arg();
    let email = Regex::new(hql_bench_baseline::EMAIL).unwrap();
    let n = hql_bench_baseline::count_valid(&path, |line| valid(line, &email))?;
    println!("{n}");
    Ok(())
}
