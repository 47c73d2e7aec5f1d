//! The command line as a person or a CI job meets it: options shared by
//! the commands, run through the built binary.

use std::process::Command;

mod common;
use common::Scratch;

/// Run `hql ARGS…` in a scratch directory holding `files`: (stdout,
/// stderr, status).
fn hql(name: &str, files: &[(&str, &str)], args: &[&str]) -> (String, String, i32) {
    let dir = std::env::temp_dir().join(format!("hql-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (path, text) in files {
        std::fs::write(dir.join(path), text).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(args)
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("hql runs");
    let _ = std::fs::remove_dir_all(&dir);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

const BROKEN: &str = "let x = 1\nfoo_bar + \"é\"\ntype T : Data = { a: Integer }\n";

#[test]
fn diagnostics_as_json_lines_for_editors_and_ci() {
    let expected = "{\"code\":\"hql::unknown_name\",\"severity\":\"error\",\"message\":\"unknown name `foo_bar`\",\"file\":\"p.hql\",\"line\":2,\"column\":1,\"end_line\":2,\"end_column\":8,\"help\":null}\n\
                    {\"code\":\"hql::unknown_name\",\"severity\":\"error\",\"message\":\"unknown name `Integer`\",\"file\":\"p.hql\",\"line\":3,\"column\":22,\"end_line\":3,\"end_column\":29,\"help\":\"did you mean `Int`?\"}\n";
    for command in ["check", "run"] {
        let (out, err, status) = hql(
            command,
            &[("p.hql", BROKEN)],
            &[command, "--diagnostics", "json", "p.hql"],
        );
        assert_eq!(
            (out.as_str(), err.as_str(), status),
            ("", expected, 2),
            "{command}"
        );
    }
    // `vet` reports its contracts file's errors the same way.
    let (_, err, status) = hql(
        "vet",
        &[("p.hql", BROKEN), ("d.jsonl", "{}\n")],
        &[
            "vet",
            "--diagnostics",
            "json",
            "p.hql",
            "d.jsonl",
            "--type",
            "T",
        ],
    );
    assert_eq!(status, 2, "{err}");
    for line in err.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("each line is JSON");
        assert_eq!(v["severity"], "error", "{line}");
    }
    // An import checks declarations: the type's error is the one there.
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("unknown name `Integer`"), "{err}");
}

#[test]
fn warnings_as_json_say_so() {
    let (_, err, status) = hql(
        "warn",
        &[(
            "w.hql",
            "type T : DataContract = { a: Int\n require a? > 0 }\n1\n",
        )],
        &["run", "--diagnostics", "json", "w.hql"],
    );
    assert_eq!(status, 0, "{err}");
    let v: serde_json::Value =
        serde_json::from_str(err.lines().next().expect("a warning")).unwrap();
    assert_eq!(v["severity"], "warning", "{err}");
    assert_eq!(
        (v["line"].as_u64(), v["file"].as_str()),
        (Some(2), Some("w.hql")),
        "{err}"
    );
}

#[test]
fn data_given_to_run_gets_pointed_at_vet_and_infer() {
    for file in ["orders.jsonl", "orders.json", "orders.csv"] {
        let (out, err, status) = hql("data", &[(file, "{}\n")], &["run", file]);
        assert_eq!((out.as_str(), status), ("", 2), "{err}");
        assert!(
            err.contains("looks like data")
                && err.contains(&format!("hql vet CONTRACTS {file}"))
                && err.contains(&format!("hql infer {file}")),
            "{err}"
        );
    }
    let (_, err, _) = hql("data-check", &[("o.csv", "a\n1\n")], &["check", "o.csv"]);
    assert!(err.contains("source(file(\"o.csv\"), Csv)"), "{err}");
}

#[test]
fn every_commands_help_shows_examples_and_exit_statuses() {
    let commands = [
        "run", "repl", "test", "vet", "check", "fmt", "diff", "infer", "export", "contract",
        "recover",
    ];
    for command in commands {
        let (out, err, status) = hql("help", &[], &[command, "--help"]);
        assert_eq!(status, 0, "{command}: {err}");
        assert!(out.contains("Examples:"), "{command}:\n{out}");
        assert!(out.contains("Exit status"), "{command}:\n{out}");
    }
    let (out, _, _) = hql("help-top", &[], &["--help"]);
    for variable in ["NO_COLOR", "HQL_PROGRESS", "HQL_HISTORY"] {
        assert!(out.contains(variable), "{out}");
    }
}

#[test]
fn hql_test_writes_json_diagnostics_to_standard_error() {
    let (out, err, status) = hql(
        "test-json",
        &[("n.md", "# n\n\n```hql\nzz_top\n```\n")],
        &["test", "--diagnostics", "json", "n.md"],
    );
    assert_eq!(
        out,
        "FAIL cell 1: zz_top (n.md:3)\n     (diagnostics on standard error)\n0 passed, 1 failed\n"
    );
    assert_eq!(
        err,
        "{\"code\":\"hql::unknown_name\",\"severity\":\"error\",\"message\":\"unknown name `zz_top`\",\"file\":\"n.md\",\"line\":4,\"column\":1,\"end_line\":4,\"end_column\":7,\"help\":null}\n"
    );
    assert_eq!(status, 1);
}

/// A contracts file from an untrusted pull request: a `let` no declaration
/// needs, that would read the environment and write a file if it ran.
const HOSTILE: &str = "\
type Order : DataContract = { id: Int, qty: Int, require qty >= 1 }
let pwned = [{secret: env(\"HQL_TEST_SECRET\")}] | write(file(\"pwned.jsonl\"))
";

/// Every command that reads declarations only, as run on `c.hql` beside
/// `d.jsonl`, with the exit status each gives for `HOSTILE`.
const READERS: &[(&[&str], i32)] = &[
    (&["diff", "c.hql", "c.hql"], 0),
    (&["export", "c.hql", "Order", "--format", "json-schema"], 0),
    (&["contract", "c.hql"], 0),
    (&["vet", "c.hql", "d.jsonl"], 0),
    (&["infer", "d.jsonl"], 0),
    (&["fmt", "c.hql"], 0),
    (&["check", "c.hql"], 0),
];

fn hostile_folder(contracts: &str) -> Scratch {
    let dir = Scratch::new("hostile");
    dir.write("c.hql", contracts);
    dir.write(
        "d.jsonl",
        "{\"id\": 1, \"qty\": 0}\n{\"id\": 2, \"qty\": 3}\n",
    );
    dir
}

fn hql_with_secret(dir: &Scratch, args: &[&str]) -> (String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(args)
        .current_dir(&dir.path)
        .env("NO_COLOR", "1")
        .env("HQL_PROGRESS", "0")
        .env("HQL_TEST_SECRET", "s3cret")
        .output()
        .expect("hql runs");
    (
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn commands_that_read_declarations_never_run_a_contracts_lets() {
    for (args, expected) in READERS {
        let dir = hostile_folder(HOSTILE);
        let (err, status) = hql_with_secret(&dir, args);
        let vet_fails = args[0] == "vet";
        assert_eq!(
            status,
            if vet_fails { 1 } else { *expected },
            "hql {}: {err}",
            args.join(" ")
        );
        assert!(
            !dir.exists("pwned.jsonl"),
            "hql {} wrote the file",
            args.join(" ")
        );
        assert_eq!(dir.files(), ["c.hql", "d.jsonl"], "hql {}", args.join(" "));
    }
    // `hql run` is running the program: it does write.
    let dir = hostile_folder(HOSTILE);
    let (err, status) = hql_with_secret(&dir, &["run", "c.hql"]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(dir.read("pwned.jsonl"), "{\"secret\":\"s3cret\"}\n");
}

#[test]
fn a_let_a_declaration_needs_that_reads_the_environment_is_a_static_error_there() {
    let contracts = "\
let least = env(\"HQL_TEST_SECRET\") | len()
type Order : DataContract = { id: Int, qty: Int, require qty >= least }
";
    for (args, _) in READERS {
        let dir = hostile_folder(contracts);
        let (err, status) = hql_with_secret(&dir, args);
        let reads_types = !matches!(args[0], "fmt" | "infer");
        if reads_types {
            assert_eq!(status, 2, "hql {}: {err}", args.join(" "));
            assert!(
                err.contains("hql::impure_let")
                    && err.contains(
                        "`least` is needed by type `Order` but calls `env`, which reads or \
                         writes outside the program"
                    ),
                "hql {}: {err}",
                args.join(" ")
            );
        } else {
            assert_eq!(status, 0, "hql {}: {err}", args.join(" "));
        }
    }
}

#[test]
fn a_pure_let_a_declaration_needs_is_evaluated_for_vet() {
    let contracts = "\
let least = 1 + 1
type Order : DataContract = { id: Int, qty: Int, require qty >= least }
";
    let dir = hostile_folder(contracts);
    let run = dir.hql(&["vet", "c.hql", "d.jsonl"]);
    assert_eq!(
        (run.out.as_str(), run.status),
        (
            "d.jsonl: {total: 2, ok: 1, err: 1, warned: 0, by_rule: [{rule: \"Order.qty >= least\", kind: \"require\", count: 1}]}\n",
            1
        ),
        "{}",
        run.err
    );
}

#[test]
fn a_failed_checks_json_message_keeps_its_operands() {
    let (out, err, status) = hql(
        "check-operands",
        &[(
            "p.hql",
            "let bad = 12\ncheck \"few bad orders\": bad <= 10\n",
        )],
        &["run", "--diagnostics", "json", "p.hql"],
    );
    assert_eq!((out.as_str(), status), ("", 1), "{err}");
    assert_eq!(
        err,
        "{\"code\":\"hql::check_failed\",\"severity\":\"error\",\"message\":\"check failed: few bad orders (left 12, right 10)\",\"file\":\"p.hql\",\"line\":2,\"column\":1,\"end_line\":2,\"end_column\":34,\"help\":null}\n"
    );
}
