//! Every `/// example:` line of the standard library holds: each is a
//! Boolean expression that must print `true` with the library loaded.

use std::path::Path;
use std::process::Command;

#[test]
fn every_stdlib_example_holds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut examples = Vec::new();
    for (name, text) in hql::session::prelude::FILES {
        for (n, line) in text.lines().enumerate() {
            if let Some(expr) = line.trim().strip_prefix("/// example:") {
                examples.push((format!("{name}:{}", n + 1), expr.trim().to_string()));
            }
        }
    }
    assert!(
        examples.len() >= 20,
        "the standard library documents its types with examples"
    );
    let program: String = examples.iter().map(|(_, e)| format!("{e}\n")).collect();
    let path = std::env::temp_dir().join(format!("hql-stdlib-examples-{}.hql", std::process::id()));
    std::fs::write(&path, program).expect("temp file");
    let out = Command::new(env!("CARGO_BIN_EXE_hql"))
        .arg("run")
        .arg(&path)
        .current_dir(root)
        .output()
        .expect("hql runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), examples.len());
    let failing: Vec<String> = examples
        .iter()
        .zip(&lines)
        .filter(|(_, got)| **got != "true")
        .map(|((at, e), got)| format!("{at}: {e} gave {got}"))
        .collect();
    assert!(failing.is_empty(), "{}", failing.join("\n"));
}
