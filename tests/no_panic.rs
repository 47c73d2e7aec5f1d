//! Arbitrary text through lex → parse → check never panics: every prefix of
//! every example, and every example with one byte removed or doubled.

use std::path::Path;

fn programs(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            programs(&path, out);
        } else if path.extension().is_some_and(|e| e == "hql") {
            out.push(std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
}

fn front_end(src: &str) {
    if let Ok(module) = hql::syntax::parser::parse(src) {
        let _ = hql::check::check(&module, hql::formats::FORMATS);
    }
}

fn variants(src: &str) -> Vec<String> {
    let bounds: Vec<usize> = (0..=src.len())
        .filter(|&i| src.is_char_boundary(i))
        .collect();
    let mut out = Vec::new();
    for w in bounds.windows(2) {
        let (i, j) = (w[0], w[1]);
        out.push(src[..i].to_string());
        out.push(format!("{}{}", &src[..i], &src[j..]));
        out.push(format!("{}{}", &src[..j], &src[i..]));
    }
    out
}

#[test]
fn the_front_end_never_panics() {
    let mut found = Vec::new();
    programs(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"),
        &mut found,
    );
    assert!(!found.is_empty());
    for src in &found {
        for v in variants(src) {
            front_end(&v);
        }
    }
}
