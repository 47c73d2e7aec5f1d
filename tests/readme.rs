//! The README's code runs: each ```hql block is a whole program, run from
//! the repository root. A following ```output block is its exact standard
//! output; a following ```error block names the diagnostic code it must
//! report (exit status 2).

use std::path::Path;
use std::process::Command;

struct Block {
    program: String,
    expect: Option<(String, String)>,
    line: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let body: Vec<&str> = lines
            .by_ref()
            .map(|(_, l)| l)
            .take_while(|l| !l.starts_with("```"))
            .collect();
        let body = body.join("\n") + "\n";
        match info.trim() {
            "hql" => out.push(Block {
                program: body,
                expect: None,
                line: n + 1,
            }),
            kind @ ("output" | "error") => {
                if let Some(last) = out.last_mut() {
                    last.expect = Some((kind.to_string(), body));
                }
            }
            _ => {}
        }
    }
    out
}

#[test]
fn readme_examples_run_as_shown() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("README.md")).expect("README.md exists");
    let blocks = blocks(&text);
    assert!(blocks.len() >= 3, "the README's tour has its programs");
    let mut problems = Vec::new();
    for b in &blocks {
        let dir = tempdir(b.line);
        let path = dir.join("block.hql");
        std::fs::write(&path, &b.program).expect("temp file");
        let out = Command::new(env!("CARGO_BIN_EXE_hql"))
            .arg("run")
            .arg(&path)
            .current_dir(root)
            .env("NO_COLOR", "1")
            .output()
            .expect("hql runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        match &b.expect {
            Some((kind, want)) if kind == "output" && *want != stdout => problems.push(format!(
                "README.md:{}: output differs\n--- expected\n{want}--- actual\n{stdout}{stderr}",
                b.line
            )),
            Some((kind, want))
                if kind == "error"
                    && (out.status.code() != Some(2) || !stderr.contains(want.trim())) =>
            {
                problems.push(format!(
                    "README.md:{}: expected diagnostic {want}got:\n{stderr}",
                    b.line
                ))
            }
            None if !out.status.success() => {
                problems.push(format!("README.md:{}: failed:\n{stderr}", b.line))
            }
            _ => {}
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

fn tempdir(line: usize) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hql-readme-{}-{line}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}
