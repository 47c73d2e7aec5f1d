//! Floors, arrows one way: every file under `src/` sits on a floor — its
//! top folder — and names only its own floor or lower ones.
//!
//! The floors, lowest first: `syntax` → `runtime` → `check` → `formats` →
//! `tooling` → `session` → `cli` (`src/main.rs` is on `cli`; `src/lib.rs` only lists the
//! floors). Each file's code, comments left out, is searched for paths into
//! the crate — `crate::floor::…`, `crate::{floor::…, …}`, `super::` chains
//! that climb to the crate root, and `hql::floor::…` in `main.rs` — and any
//! that names a higher floor fails the test, with the file and line.

use std::fs;
use std::path::{Path, PathBuf};

const FLOORS: [&str; 7] = [
    "syntax", "runtime", "check", "formats", "tooling", "session", "cli",
];

fn floor_of(name: &str) -> Option<usize> {
    FLOORS.iter().position(|f| *f == name)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's text with comments blanked out (string literals kept), line
/// breaks kept so that line numbers stay right.
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            if c == b'\\' && i + 1 < bytes.len() {
                out.push(' ');
                out.push(if bytes[i + 1] == b'\n' { '\n' } else { ' ' });
                i += 2;
                continue;
            }
            in_string = c != b'"';
            out.push(if c == b'\n' { '\n' } else { ' ' });
            i += 1;
        } else if let Some(len) = raw_string_len(&text[i..]).filter(|_| starts_path(text, i)) {
            out.extend(
                text[i..i + len]
                    .chars()
                    .map(|c| if c == '\n' { '\n' } else { ' ' }),
            );
            i += len;
        } else if c == b'"' && (i == 0 || bytes[i - 1] != b'\'') {
            in_string = true;
            out.push(' ');
            i += 1;
        } else if text[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if text[i..].starts_with("/*") {
            let end = text[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |e| i + 2 + e + 2);
            out.extend(text[i..end].chars().filter(|&c| c == '\n'));
            i = end;
        } else {
            let ch = text[i..].chars().next().expect("inside the text");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The length of the raw string literal (`r"…"`, `br#"…"#`) at the start
/// of `s`, if one starts there.
fn raw_string_len(s: &str) -> Option<usize> {
    let after_r = s.strip_prefix("br").or_else(|| s.strip_prefix('r'))?;
    let hashes = after_r.len() - after_r.trim_start_matches('#').len();
    let body = after_r[hashes..].strip_prefix('"')?;
    let close = format!("\"{}", "#".repeat(hashes));
    let end = body.find(&close)?;
    Some(s.len() - body.len() + end + close.len())
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

fn starts_path(code: &str, at: usize) -> bool {
    at == 0 || {
        let before = code[..at].chars().next_back().expect("not at the start");
        !(before.is_alphanumeric() || before == '_' || before == ':')
    }
}

/// The top-level modules a piece of code names through `root::` (`crate`
/// or `hql`), with the byte offset of each.
fn rooted(code: &str, root: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let prefix = format!("{root}::");
    for (at, _) in code.match_indices(&prefix) {
        if !starts_path(code, at) {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a::b, c}`: the first name of each top-level item.
            let mut depth = 0;
            let mut item_start = true;
            for (k, ch) in group.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        found.push((at, ident_at(&group[k..]).to_string()));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            found.push((at, ident_at(rest).to_string()));
        }
    }
    found
}

/// Every `super::` path: where it starts, how many modules it climbs, and
/// the name after the climb.
fn supers(code: &str) -> Vec<(usize, usize, String)> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("super::") {
        if !starts_path(code, at) {
            continue;
        }
        let mut rest = &code[at..];
        let mut ups = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            ups += 1;
            rest = r;
        }
        found.push((at, ups, ident_at(rest).to_string()));
    }
    found
}

/// Paths that climb with `super::` to the crate root and name a floor from
/// there. `depth` is how many modules the file sits below the root.
fn climbing(code: &str, depth: usize) -> Vec<(usize, String)> {
    // Inline modules (`mod tests`) sit deeper than their file, so only a
    // floor's name after the climb counts.
    (supers(code).into_iter())
        .filter(|(_, ups, name)| *ups >= depth && floor_of(name).is_some())
        .map(|(at, _, name)| (at, name))
        .collect()
}

#[test]
fn every_import_points_to_its_own_floor_or_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut back_edges = Vec::new();
    let mut seen = 0;
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src/");
        let parts: Vec<&str> = rel.iter().map(|p| p.to_str().expect("UTF-8")).collect();
        let name = rel.display().to_string();
        if name == "lib.rs" {
            continue;
        }
        let (floor, root) = if name == "main.rs" {
            (floor_of("cli").expect("a floor"), "hql")
        } else {
            let floor = floor_of(parts[0]).unwrap_or_else(|| {
                panic!("src/{name} is on no floor: put it in one of {FLOORS:?}")
            });
            (floor, "crate")
        };
        // Modules below the crate root: `runtime/eval/mod.rs` is
        // `runtime::eval`, two; `runtime/json.rs` is two as well.
        let depth = parts.len() - usize::from(parts.last() == Some(&"mod.rs"));
        let code = code_only(&fs::read_to_string(file).expect("a readable file"));
        let mut named = rooted(&code, root);
        named.extend(climbing(&code, depth));
        for (at, module) in named {
            seen += 1;
            let Some(to) = floor_of(&module) else {
                back_edges.push(format!(
                    "src/{name}:{}: `{module}` is on no floor",
                    code[..at].lines().count().max(1)
                ));
                continue;
            };
            if to > floor {
                back_edges.push(format!(
                    "src/{name}:{}: {} imports `{module}`, a higher floor",
                    code[..at].lines().count().max(1),
                    FLOORS[floor],
                ));
            }
        }
    }
    assert!(
        seen > 100,
        "only {seen} paths into the crate found: is the scan broken?"
    );
    assert!(
        back_edges.is_empty(),
        "arrows pointing up:\n{}",
        back_edges.join("\n")
    );
}

#[test]
fn the_scan_sees_paths_and_skips_comments() {
    let code = code_only(
        "use crate::{syntax::ast, cli::run};\n// crate::session::Session\nlet s = \"crate::cli\";\nlet r = r#\"a \"crate::cli\" b\"#;\nsuper::super::check::x();\nsuper::super::*;",
    );
    let names: Vec<String> = rooted(&code, "crate").into_iter().map(|(_, m)| m).collect();
    assert_eq!(names, ["syntax", "cli"]);
    let up: Vec<String> = climbing(&code, 2).into_iter().map(|(_, m)| m).collect();
    assert_eq!(up, ["check"]);
}

/// The runtime's layers, lowest first: values, the values that run
/// (functions, streams, the runtime error), compiled declarations, the
/// builtins table, printing, the JSON decoder and the key sets; the
/// interpreter; validation; execution (stages, the planner, threads,
/// route, counting). Each module of the runtime is on one, and names only
/// its own layer or lower ones; the interpreter reaches up only through
/// `eval::Engine`, which it is handed.
const RUNTIME_LAYERS: [&[&str]; 4] = [
    &[
        "builtins",
        "contract",
        "hir",
        "json",
        "keyset",
        "limits",
        "print",
        "stdlib_native",
        "stream",
        "value",
        "varint",
    ],
    &["eval"],
    &["decide", "kernel", "measures", "plan", "scan", "validate"],
    &["exec"],
];

const LAYER_NAMES: [&str; 4] = [
    "values and declarations",
    "interpreter",
    "validation",
    "execution",
];

fn runtime_layer(module: &str) -> Option<usize> {
    RUNTIME_LAYERS.iter().position(|l| l.contains(&module))
}

#[test]
fn each_runtime_layer_names_only_its_own_or_lower_ones() {
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/runtime");
    let mut files = Vec::new();
    rust_files(&runtime, &mut files);
    files.sort();
    let mut up = Vec::new();
    let mut seen = [0; 4];
    for file in &files {
        let rel = file.strip_prefix(&runtime).expect("under src/runtime/");
        let parts: Vec<&str> = rel.iter().map(|p| p.to_str().expect("UTF-8")).collect();
        if parts == ["mod.rs"] {
            continue;
        }
        let module = parts[0].trim_end_matches(".rs");
        let layer = runtime_layer(module).unwrap_or_else(|| {
            panic!(
                "src/runtime/{}: place `{module}` in a layer of RUNTIME_LAYERS",
                rel.display()
            )
        });
        seen[layer] += 1;
        // `runtime/json.rs` is `runtime::json`: one `super::` names a
        // module of the runtime; `runtime/keyset/run.rs` needs two.
        let ups = parts.len() - usize::from(parts.last() == Some(&"mod.rs"));
        let code = code_only(&fs::read_to_string(file).expect("a readable file"));
        let mut named = rooted(&code, "crate::runtime");
        named.extend(
            (supers(&code).into_iter())
                .filter(|(_, n, _)| *n == ups)
                .map(|(at, _, name)| (at, name)),
        );
        for (at, name) in named {
            let Some(to) = runtime_layer(&name) else {
                continue;
            };
            if to > layer {
                up.push(format!(
                    "src/runtime/{}:{}: the {} names `runtime::{name}`, of the {}",
                    rel.display(),
                    code[..at].lines().count().max(1),
                    LAYER_NAMES[layer],
                    LAYER_NAMES[to],
                ));
            }
        }
    }
    assert!(
        seen.iter().all(|&n| n > 0),
        "a layer with no file: {seen:?}"
    );
    assert!(up.is_empty(), "arrows pointing up:\n{}", up.join("\n"));
}
