//! The benchmark's tools count the same valid records as the generators
//! wrote down: the flat orders (JSON Lines and CSV) of `bench/gen.py` and
//! the nested events of `bench/rich/gen.py`. Nothing here is timed;
//! `bench/run.sh` times the same commands on the full files.
//!
//! HQL against the generators needs only Python 3 and runs with every
//! `cargo test`. The hand-written Rust baselines (a release build of
//! `bench/baseline`, whose crates come from the registry) and the peers
//! (`bench/peers/install.sh`: ajv with npm, the Python peers with pip in
//! `bench/.venv`) need the network and minutes: those tests are ignored by a
//! plain `cargo test`, and `.ci/run` runs them with
//! `cargo test --test bench_counts -- --include-ignored`.

use std::path::{Path, PathBuf};
use std::process::Command;

const RECORDS: &str = "20000";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bench() -> PathBuf {
    root().join("bench")
}

/// What `cmd` printed; it must succeed.
fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?} did not start: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The count a tool printed: the last line that is a whole number.
fn count_in(text: &str) -> Option<u64> {
    text.lines().rev().find_map(|l| l.trim().parse().ok())
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hql-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A generated data file and what its generator wrote down about it.
struct Data {
    path: PathBuf,
    records: u64,
    valid: u64,
}

/// Run `generator` (a Python script under `bench/`) with `args`, writing
/// `file` in `dir`; the generator's sidecar is `file` + `sidecar`.
fn generate(dir: &Path, generator: &str, args: &[&str], file: &str, sidecar: &str) -> Data {
    let path = dir.join(file);
    stdout_of(
        Command::new("python3")
            .arg(bench().join(generator))
            .args(args)
            .args(["--quiet", "--out"])
            .arg(&path),
    );
    let meta = std::fs::read_to_string(dir.join(format!("{file}{sidecar}"))).unwrap();
    let meta: serde_json::Value = serde_json::from_str(&meta).unwrap();
    let records = meta["records"].as_u64().expect("the record count");
    let valid = meta["valid"].as_u64().expect("the valid count");
    assert!(valid > 0 && valid < records, "{meta}");
    Data {
        path,
        records,
        valid,
    }
}

fn orders(dir: &Path, format: &str) -> Data {
    let file = format!("orders.{}", if format == "csv" { "csv" } else { "jsonl" });
    let args = ["--records", RECORDS, "--format", format];
    generate(dir, "gen.py", &args, &file, ".meta.json")
}

fn events(dir: &Path) -> Data {
    let args = ["--count", RECORDS];
    generate(dir, "rich/gen.py", &args, "events.jsonl", ".counts.json")
}

/// Run an HQL program written to `dir/name` on `threads` threads.
fn hql(dir: &Path, name: &str, program: &str, threads: &str) -> String {
    let file = dir.join(name);
    std::fs::write(&file, program).unwrap();
    stdout_of(
        Command::new(env!("CARGO_BIN_EXE_hql"))
            .args(["run", "--threads", threads])
            .arg(&file),
    )
}

/// The `ok` and `err` counts of a printed `report()` (or `route`) record.
fn ok_err(printed: &str) -> (Option<u64>, Option<u64>) {
    let field = |name: &str| {
        printed
            .split(&format!("{name}: "))
            .nth(1)
            .and_then(|rest| rest.split([',', '}']).next())
            .and_then(|n| n.parse().ok())
    };
    (field("ok"), field("err"))
}

/// HQL's count path on one and two threads and `report()`, with `contract`
/// over `source`, count what `data`'s generator wrote down.
fn hql_agrees(dir: &Path, contract: &str, source: &str, data: &Data) {
    let count = format!("{contract}\n{source} | oks() | count()\n");
    let report = format!("{contract}\n{source} | report()\n");
    for threads in ["1", "2"] {
        let got = count_in(&hql(dir, "count.hql", &count, threads));
        assert_eq!(got, Some(data.valid), "count() on {threads} thread(s)");
    }
    let reported = hql(dir, "report.hql", &report, "1");
    let invalid = data.records - data.valid;
    assert_eq!(
        ok_err(&reported),
        (Some(data.valid), Some(invalid)),
        "{reported}"
    );
}

/// Build the hand-written Rust baselines once, in their own target
/// directory whatever CARGO_TARGET_DIR says; the path of binary `name`.
fn baseline(name: &str) -> PathBuf {
    static BUILD: std::sync::Once = std::sync::Once::new();
    let dir = bench().join("baseline");
    BUILD.call_once(|| {
        stdout_of(
            Command::new(env!("CARGO"))
                .args(["build", "--release", "--quiet", "--manifest-path"])
                .arg(dir.join("Cargo.toml"))
                .arg("--target-dir")
                .arg(dir.join("target")),
        );
    });
    dir.join("target/release").join(name)
}

/// Install the peers once: the tests would otherwise run the installer
/// side by side into one virtual environment.
fn install_peers() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        stdout_of(Command::new("bash").arg(bench().join("peers/install.sh")));
    });
}

/// The count a Python peer (a script in `bench/peers/python`) printed.
fn python_peer(script: &str, data: &Data) -> Option<u64> {
    install_peers();
    count_in(&stdout_of(
        Command::new(bench().join(".venv/bin/python"))
            .arg(bench().join("peers/python").join(script))
            .arg(&data.path),
    ))
}

/// The count an ajv peer (a script in `bench/peers/ajv`) printed.
fn node_peer(script: &str, data: &Data) -> Option<u64> {
    install_peers();
    count_in(&stdout_of(
        Command::new("node")
            .arg(bench().join("peers/ajv").join(script))
            .arg(&data.path),
    ))
}

fn assert_all_count(counts: &[(&str, Option<u64>)], expected: u64) {
    for (tool, got) in counts {
        assert_eq!(
            *got,
            Some(expected),
            "{tool} counted {got:?}, not {expected}"
        );
    }
}

fn orders_contract() -> String {
    std::fs::read_to_string(bench().join("orders_contract.hql")).unwrap()
}

#[test]
fn hql_counts_the_valid_orders_the_generator_wrote() {
    let dir = scratch("orders");
    let data = orders(&dir, "json");
    let contract = orders_contract();
    let source = format!("source(file({:?}), Json) | validate(Order)", data.path);
    hql_agrees(&dir, &contract, &source, &data);

    // `route` writes every valid order to one file and every other to the
    // other, in one pass.
    let route = format!(
        "{contract}\n{source} | route(ok: file({:?}), err: file({:?}))\n",
        dir.join("clean.jsonl"),
        dir.join("dead.jsonl")
    );
    let routed = hql(&dir, "route.hql", &route, "1");
    let lines = |name: &str| {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        text.lines().count() as u64
    };
    let invalid = data.records - data.valid;
    // What it returns is `report()` of the same results.
    let report = hql(
        &dir,
        "report.hql",
        &format!("{contract}\n{source} | report()\n"),
        "1",
    );
    assert_eq!(routed, report);
    assert!(
        routed.starts_with(&format!(
            "{{total: {}, ok: {}, err: {invalid}, ",
            data.records, data.valid
        )),
        "{routed}"
    );
    assert_eq!(lines("clean.jsonl"), data.valid, "{routed}");
    assert_eq!(lines("dead.jsonl"), invalid, "{routed}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "builds bench/baseline and installs the peers (network); .ci/run runs it"]
fn the_baselines_and_peers_count_the_valid_orders_the_generator_wrote() {
    let dir = scratch("orders-peers");
    let data = orders(&dir, "json");
    let mut counts = Vec::new();
    for name in ["value", "typed"] {
        let out = stdout_of(Command::new(baseline(name)).arg(&data.path));
        counts.push((name, count_in(&out)));
    }
    counts.push(("ajv", node_peer("validate.js", &data)));
    for script in [
        "pydantic_count.py",
        "jsonschema_rs_count.py",
        "fastjsonschema_count.py",
    ] {
        counts.push((script, python_peer(script, &data)));
    }
    // jq is checked when it is on the machine.
    let jq = Command::new("jq")
        .arg("-n")
        .arg("-f")
        .arg(bench().join("peers/jq/count.jq"))
        .arg(&data.path)
        .output();
    if let Ok(out) = jq {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        counts.push(("jq", count_in(&String::from_utf8_lossy(&out.stdout))));
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_all_count(&counts, data.valid);
}

/// The same orders as CSV: HQL's CSV source counts the valid orders the
/// generator wrote down for the CSV file.
#[test]
fn hql_counts_the_valid_csv_orders_the_generator_wrote() {
    let dir = scratch("csv");
    let data = orders(&dir, "csv");
    let source = format!("source(file({:?}), Csv) | validate(Order)", data.path);
    hql_agrees(&dir, &orders_contract(), &source, &data);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The CSV peers (Python's `csv` with pydantic, pandas with pandera) count
/// the same valid orders.
#[test]
#[ignore = "installs the Python peers with pip (network); .ci/run runs it"]
fn the_csv_peers_count_the_valid_orders_the_generator_wrote() {
    let dir = scratch("csv-peers");
    let data = orders(&dir, "csv");
    let counts: Vec<_> = ["pydantic_csv_count.py", "pandera_count.py"]
        .into_iter()
        .map(|script| (script, python_peer(script, &data)))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert_all_count(&counts, data.valid);
}

fn event_contract() -> String {
    std::fs::read_to_string(bench().join("rich/event.hql")).unwrap()
}

/// The rich benchmark: nested events checked with the standard library's
/// `Email`, `CountryCode` and `Timestamp`.
#[test]
fn hql_counts_the_valid_events_the_rich_generator_wrote() {
    let dir = scratch("events");
    let data = events(&dir);
    let source = format!("source(file({:?}), Json) | validate(Event)", data.path);
    hql_agrees(&dir, &event_contract(), &source, &data);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The schema the rich benchmark's schema peers read is the contract as
/// `hql export` writes it, with what `bench/rich/schema.py` adds: a change
/// to the contract must be carried into the committed schema.
#[test]
fn the_rich_peers_schema_is_the_exported_contract() {
    let export = Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(["export", "bench/rich/event.hql", "Event"])
        .args(["--format", "json-schema"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(export.status.success(), "{export:?}");
    let mut complete = Command::new("python3")
        .arg(bench().join("rich/schema.py"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    complete
        .stdin
        .take()
        .unwrap()
        .write_all(&export.stdout)
        .unwrap();
    let out = complete.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let committed = std::fs::read_to_string(bench().join("peers/event.schema.json")).unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout) == committed,
        "bench/peers/event.schema.json is out of date: regenerate it with \
         `hql export bench/rich/event.hql Event --format json-schema | \
         python3 bench/rich/schema.py > bench/peers/event.schema.json`"
    );
}

#[test]
#[ignore = "builds bench/baseline and installs the peers (network); .ci/run runs it"]
fn the_rich_baseline_and_peers_count_the_valid_events() {
    let dir = scratch("events-peers");
    let data = events(&dir);
    let rich = stdout_of(Command::new(baseline("rich")).arg(&data.path));
    let counts = [
        ("rich (serde_json::Value)", count_in(&rich)),
        ("ajv", node_peer("validate_rich.js", &data)),
        ("pydantic", python_peer("pydantic_rich_count.py", &data)),
        (
            "jsonschema-rs",
            python_peer("jsonschema_rs_rich_count.py", &data),
        ),
    ];
    let _ = std::fs::remove_dir_all(&dir);
    assert_all_count(&counts, data.valid);
}
