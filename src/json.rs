//! placeholder
pub fn write_json_string(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).unwrap());
}
