//! Every `examples/**/*.hql` is a test: it runs from the repository root and
//! its stdout must equal the sibling `.out`, its stderr the `.err` (empty
//! when there is none), and its exit status the number in `.status` (0 when
//! there is none). Adding a test means adding files. They run with
//! `HQL_NOW=2026-12-01T00:00:00Z`, the time `age(f)` measures to. The SQLite databases
//! in an example's `out/` folder are removed before it runs, so that each
//! run starts from no table, as a file target starts from no file.

use std::path::{Path, PathBuf};
use std::process::Command;

fn examples(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            examples(&path, found);
        } else if path.extension().is_some_and(|e| e == "hql") {
            found.push(path);
        }
    }
}

fn expected(path: &Path, ext: &str) -> Option<String> {
    std::fs::read_to_string(path.with_extension(ext)).ok()
}

fn relative(path: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

fn remove_databases(out: &Path) {
    let Ok(entries) = std::fs::read_dir(out) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.path().extension().is_some_and(|e| e == "db") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Run one example; a description of each mismatch.
fn run_example(path: &Path) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let name = relative(path);
    remove_databases(&path.with_file_name("out"));
    let output = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["run", &name])
        .current_dir(root)
        .env("NO_COLOR", "1")
        // `age(f)` measures to this time, so that expectations do not age.
        .env("HQL_NOW", "2026-12-01T00:00:00Z")
        .output()
        .expect("the hql binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let status = output.status.code().unwrap_or(-1);
    let mut problems = Vec::new();
    let want_out = expected(path, "out");
    let want_err = expected(path, "err").unwrap_or_default();
    let want_status: i32 = expected(path, "status")
        .map(|s| s.trim().parse().expect("a .status file holds a number"))
        .unwrap_or(0);
    match want_out {
        None => problems.push(format!(
            "{name}: no .out file (every example needs its expected output)"
        )),
        Some(want) if want != stdout => problems.push(format!(
            "{name}: stdout differs\n--- expected\n{want}--- actual\n{stdout}"
        )),
        _ => {}
    }
    if want_err != stderr {
        problems.push(format!(
            "{name}: stderr differs\n--- expected\n{want_err}--- actual\n{stderr}"
        ));
    }
    if want_status != status {
        problems.push(format!(
            "{name}: exit status {status}, expected {want_status}"
        ));
    }
    problems
}

#[test]
fn every_example_produces_its_expected_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut found = Vec::new();
    examples(&root, &mut found);
    found.sort();
    assert!(
        found.len() >= 9,
        "expected the examples folder to hold at least 9 programs, found {}",
        found.len()
    );
    let problems: Vec<String> = found.iter().flat_map(|p| run_example(p)).collect();
    assert!(
        problems.is_empty(),
        "{} example mismatches:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}
