//! `hql test` over notebooks and `.hql` files, and the project's own docs
//! run as notebooks.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Run `hql test ARGS…` from the repository root: (stdout, status).
fn hql_test(args: &[&str]) -> (String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_hql"))
        .arg("test")
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .expect("hql runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn the_readme_and_the_guides_are_notebooks_that_pass() {
    let (out, status) = hql_test(&["--allow-empty", "README.md", "docs"]);
    assert_eq!(status, 0, "{out}");
    // The cells that need a server are skipped (`--with postgres` runs
    // them, in tests/postgres_targets.rs).
    assert!(out.ends_with(" passed, 0 failed, 5 skipped\n"), "{out}");
    let passed: usize = out.lines().filter(|l| l.starts_with("PASS ")).count();
    assert!(
        passed >= 10,
        "the docs hold at least ten cells, found {passed}:\n{out}"
    );
}

#[test]
fn a_passing_notebook() {
    let (out, status) = hql_test(&["tests/notebooks/pass.md"]);
    assert_eq!(
        out,
        "PASS cell 1: type Reading : DataContract = { (tests/notebooks/pass.md:5)\n\
         PASS cell 2: readings | oks() | map(r => r.sensor) (tests/notebooks/pass.md:15)\n\
         2 passed, 0 failed\n"
    );
    assert_eq!(status, 0);
}

#[test]
fn a_mismatching_output_shows_a_located_diff() {
    let (out, status) = hql_test(&["tests/notebooks/mismatch.md"]);
    assert_eq!(
        out,
        "FAIL cell 1: [1, 2, 3] | map(x => x * 2) (tests/notebooks/mismatch.md:3)\n\
         \x20    output differs (tests/notebooks/mismatch.md:7), expected → actual:\n\
         \x20    [2]: 7 → 6\n\
         0 passed, 1 failed\n"
    );
    assert_eq!(status, 1);
}

#[test]
fn a_failing_check_shows_its_operands() {
    let (out, status) = hql_test(&["tests/notebooks/failing_check.md"]);
    assert_eq!(
        out,
        "FAIL cell 1: let xs = [1, 2, 3] (tests/notebooks/failing_check.md:3)\n\
         \x20    check \"at most two\" failed: (xs | count()) <= 2\n\
         \x20    left 3, right 2\n\
         0 passed, 1 failed\n"
    );
    assert_eq!(status, 1);
}

#[test]
fn error_cells_pass_on_a_diagnostic_and_later_cells_run() {
    let (out, status) = hql_test(&["tests/notebooks/error_cells.md"]);
    let verdicts: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("PASS") || l.starts_with("FAIL"))
        .collect();
    assert_eq!(
        verdicts,
        [
            "PASS cell 1: let = 3 (tests/notebooks/error_cells.md:5)",
            "FAIL cell 2: 1 + 1 (tests/notebooks/error_cells.md:11)",
            "PASS cell 3: \"still here\" (tests/notebooks/error_cells.md:17)",
        ]
    );
    assert!(out.contains("expected a diagnostic, but the cell ran without one"));
    assert_eq!(status, 1);
}

#[test]
fn update_rewrites_output_blocks() {
    let dir = std::env::temp_dir().join(format!("hql-notebook-update-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mismatch.md");
    std::fs::copy(root().join("tests/notebooks/mismatch.md"), &file).unwrap();
    let path = file.to_string_lossy().to_string();
    let (out, status) = hql_test(&["--update", &path]);
    assert_eq!(status, 1, "the run that updates still reports the mismatch");
    assert!(out.contains(&format!("updated {path}")), "{out}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("```output\n[2, 4, 6]\n```"), "{text}");
    let (out, status) = hql_test(&[&path]);
    assert_eq!(
        (status, out.ends_with("1 passed, 0 failed\n")),
        (0, true),
        "{out}"
    );
}

#[test]
fn checks_of_hql_files_are_cases() {
    let (out, status) = hql_test(&["examples/checks/failing_checks.hql"]);
    assert_eq!(
        out,
        "FAIL at most two bad batches (examples/checks/failing_checks.hql:14)\n\
         \x20    check batches | errs() | count() <= 2\n\
         \x20    left 3, right 2\n\
         PASS this one holds (examples/checks/failing_checks.hql:15)\n\
         FAIL total_units (examples/checks/failing_checks.hql:16)\n\
         \x20    check batches | oks() | map(b => b.units) | sum() > 1_000\n\
         \x20    left 240, right 1000\n\
         1 passed, 2 failed\n"
    );
    assert_eq!(status, 1);
}

#[test]
fn a_static_error_in_a_hql_file_exits_2() {
    let (out, status) = hql_test(&["examples/errors/unknown_name.hql"]);
    assert!(
        out.contains("FAIL static check (examples/errors/unknown_name.hql)"),
        "{out}"
    );
    assert_eq!(status, 2);
}

/// A scratch directory holding `files`.
fn scratch(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hql-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (path, text) in files {
        std::fs::write(dir.join(path), text).unwrap();
    }
    dir
}

#[test]
fn a_named_file_with_nothing_to_run_is_one_failed_case_unless_allowed() {
    let dir = scratch(
        "empty",
        &[
            ("plain.hql", "let x = 1\nx + 1\n"),
            ("notes.md", "# Notes\n\nNo code.\n"),
        ],
    );
    let plain = dir.join("plain.hql").display().to_string();
    let notes = dir.join("notes.md").display().to_string();
    let (out, status) = hql_test(&[&plain, &notes]);
    assert_eq!(
        out,
        format!(
            "FAIL {plain}: no checks to run (--allow-empty accepts a file with none)\n\
             FAIL {notes}: no hql cells to run (--allow-empty accepts a file with none)\n\
             0 passed, 2 failed\n"
        )
    );
    assert_eq!(status, 1);
    let (out, status) = hql_test(&["--allow-empty", &plain]);
    assert_eq!(
        out,
        format!("NONE {plain}: no checks to run\n0 passed, 0 failed\n")
    );
    assert_eq!(status, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_directory_walk_skips_files_with_nothing_to_run_silently() {
    let dir = scratch(
        "walk-empty",
        &[
            ("plain.hql", "let x = 1\nx + 1\n"),
            ("notes.md", "# Notes\n\nNo code.\n"),
            ("cases.hql", "check \"holds\": 1 < 2\n"),
        ],
    );
    let cases = dir.join("cases.hql").display().to_string();
    let (out, status) = hql_test(&[&dir.display().to_string()]);
    assert_eq!(out, format!("PASS holds ({cases}:1)\n1 passed, 0 failed\n"));
    assert_eq!(status, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_static_error_in_a_notebook_cell_fails_that_cell_and_later_cells_run() {
    let dir = scratch(
        "cell-static",
        &[(
            "nb.md",
            "# A\n\n```hql\nlet x = undefined_name + 1\n```\n\n```hql\ncheck \"later\": 1 < 2\n```\n",
        )],
    );
    let nb = dir.join("nb.md").display().to_string();
    let (out, status) = hql_test(&[&nb]);
    assert_eq!(status, 1, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some(format!("FAIL cell 1: let x = undefined_name + 1 ({nb}:3)").as_str()),
        "{out}"
    );
    assert!(out.contains("hql::unknown_name"), "{out}");
    assert!(
        out.contains(&format!("PASS cell 2: check \"later\": 1 < 2 ({nb}:7)\n")),
        "{out}"
    );
    assert!(out.ends_with("1 passed, 1 failed\n"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_static_error_in_an_hql_file_given_to_test_is_exit_2() {
    let dir = scratch(
        "hql-static",
        &[("bad.hql", "check \"c\": undefined_name < 2\n")],
    );
    let bad = dir.join("bad.hql").display().to_string();
    let (out, status) = hql_test(&[&bad]);
    assert_eq!(status, 2, "{out}");
    assert!(
        out.starts_with(&format!("FAIL static check ({bad})\n")),
        "{out}"
    );
    assert!(out.ends_with("0 passed, 1 failed\n"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn junit_reports_every_case_for_ci_systems() {
    let dir = scratch(
        "junit",
        &[(
            "cases.hql",
            "check \"holds\": 1 < 2\ncheck \"a < b & c\": 2 < 1\n",
        )],
    );
    let cases = dir.join("cases.hql").display().to_string();
    let (out, status) = hql_test(&["--format", "junit", &cases]);
    assert_eq!(status, 1);
    assert_eq!(
        out,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <testsuites name=\"hql test\" tests=\"2\" failures=\"1\">\n\
             \x20 <testsuite name=\"{cases}\" tests=\"2\" failures=\"1\">\n\
             \x20   <testcase name=\"holds\" classname=\"{cases}\" file=\"{cases}:1\"/>\n\
             \x20   <testcase name=\"a &lt; b &amp; c\" classname=\"{cases}\" file=\"{cases}:2\">\n\
             \x20     <failure message=\"check 2 &lt; 1\">check 2 &lt; 1\n\
             left 2, right 1</failure>\n\
             \x20   </testcase>\n\
             \x20 </testsuite>\n\
             </testsuites>\n"
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Cells marked ` ```hql needs=postgres ` are skipped unless `--with
/// postgres` names the need; skipped, they neither pass nor fail.
#[test]
fn cells_that_need_a_server_are_skipped_unless_asked_for() {
    let (out, status) = hql_test(&["docs/postgres/loading.md"]);
    assert_eq!(status, 0, "{out}");
    assert!(out.ends_with("1 passed, 0 failed, 5 skipped\n"), "{out}");
    assert!(
        out.contains(
            "SKIP cell 2: orders | route(ok: \"warehouse\", err: \"rejected\") \
             (docs/postgres/loading.md:62)\n     needs postgres: `hql test --with postgres` runs it\n"
        ),
        "{out}"
    );
    let (out, status) = hql_test(&["--format", "junit", "docs/postgres/loading.md"]);
    assert_eq!(status, 0, "{out}");
    assert_eq!(
        out.matches("<skipped message=\"needs postgres").count(),
        5,
        "{out}"
    );
    // Asked for, they run: without a server to reach, they fail.
    let out = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["test", "--with", "postgres", "docs/postgres/loading.md"])
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env_remove("HQL_TUTORIAL_PG")
        .output()
        .expect("hql runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("FAIL cell 2"), "{text}");
    assert!(text.contains("HQL_TUTORIAL_PG"), "{text}");
}
