//! The benchmark's tools count the same valid orders: HQL (the count path
//! on one and two threads, and `report()`), the two hand-written Rust
//! baselines and the peers, over orders from the benchmark's generator,
//! against the count the generator wrote down. Nothing here is timed;
//! `bench/run.sh` times the same commands on a million records.
//!
//! The peers are installed where missing (`bench/peers/install.sh`: ajv with
//! npm, the Python peers with pip in `bench/.venv`); jq is checked when it
//! is on the machine.

use std::path::{Path, PathBuf};
use std::process::Command;

const RECORDS: &str = "20000";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
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

/// Install the peers once: the two tests would otherwise run the installer
/// side by side into one virtual environment.
fn install_peers() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        stdout_of(Command::new("bash").arg(root().join("bench/peers/install.sh")));
    });
}

/// The count a tool printed: the last line that is a whole number.
fn count_in(text: &str) -> Option<u64> {
    text.lines().rev().find_map(|l| l.trim().parse().ok())
}

fn hql(dir: &Path, name: &str, program: &str, threads: &str) -> String {
    let file = dir.join(name);
    std::fs::write(&file, program).unwrap();
    stdout_of(
        Command::new(env!("CARGO_BIN_EXE_hql"))
            .args(["run", "--threads", threads])
            .arg(&file),
    )
}

#[test]
fn every_tool_counts_the_valid_orders_the_generator_wrote() {
    let dir = std::env::temp_dir().join(format!("hql-bench-counts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("orders.jsonl");
    let bench = root().join("bench");
    stdout_of(
        Command::new("python3")
            .arg(bench.join("gen.py"))
            .args(["--records", RECORDS, "--quiet", "--out"])
            .arg(&data),
    );
    let meta = std::fs::read_to_string(dir.join("orders.jsonl.meta.json")).unwrap();
    let meta: serde_json::Value = serde_json::from_str(&meta).unwrap();
    let expected = meta["valid"].as_u64().expect("the generator's valid count");
    assert!(expected > 0 && expected < 20_000, "{meta}");

    // HQL, with the benchmark's own contract.
    let contract = std::fs::read_to_string(bench.join("orders_contract.hql")).unwrap();
    let source = format!("source(file({:?}), Json) | validate(Order)", data);
    let count = format!("{contract}\n{source} | oks() | count()\n");
    let report = format!("{contract}\n{source} | report()\n");
    let mut counts = vec![
        ("hql count", count_in(&hql(&dir, "count.hql", &count, "1"))),
        (
            "hql --threads 2",
            count_in(&hql(&dir, "count.hql", &count, "2")),
        ),
    ];
    let reported = hql(&dir, "report.hql", &report, "1");
    let ok = reported
        .split("ok: ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok());
    counts.push(("hql report() ok", ok));

    // The hand-written Rust baselines.
    // Their own target directory, whatever CARGO_TARGET_DIR says.
    let baseline = bench.join("baseline");
    stdout_of(
        Command::new(env!("CARGO"))
            .args(["build", "--release", "--quiet", "--manifest-path"])
            .arg(baseline.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(baseline.join("target")),
    );
    for name in ["value", "typed"] {
        let exe = baseline.join("target/release").join(name);
        counts.push((name, count_in(&stdout_of(Command::new(exe).arg(&data)))));
    }

    // The peers.
    install_peers();
    let ajv = Command::new("node")
        .arg(bench.join("peers/ajv/validate.js"))
        .arg(&data)
        .output();
    let ajv = ajv.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    counts.push(("ajv", ajv.ok().as_deref().and_then(count_in)));
    let python = bench.join(".venv/bin/python");
    for script in [
        "pydantic_count.py",
        "jsonschema_rs_count.py",
        "fastjsonschema_count.py",
    ] {
        let out = stdout_of(
            Command::new(&python)
                .arg(bench.join("peers/python").join(script))
                .arg(&data),
        );
        counts.push((script, count_in(&out)));
    }
    let jq = Command::new("jq")
        .arg("-n")
        .arg("-f")
        .arg(bench.join("peers/jq/count.jq"))
        .arg(&data)
        .output();
    if let Ok(out) = jq {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        counts.push(("jq", count_in(&String::from_utf8_lossy(&out.stdout))));
    }

    // `route` writes every valid order to one file and every other to the
    // other, in one pass.
    let route = format!(
        "{contract}\n{source} | route(ok: file({:?}), err: file({:?}))\n",
        dir.join("clean.jsonl"),
        dir.join("dead.jsonl")
    );
    let routed = hql(&dir, "route.hql", &route, "1");
    let lines = |name: &str| {
        std::fs::read_to_string(dir.join(name))
            .unwrap()
            .lines()
            .count()
    };
    counts.push(("hql route ok", Some(lines("clean.jsonl") as u64)));
    let total: u64 = meta["records"]
        .as_u64()
        .expect("the generator's record count");
    assert_eq!(lines("dead.jsonl") as u64, total - expected, "{routed}");
    assert_eq!(
        routed.trim(),
        format!("{{ok: {expected}, err: {}}}", total - expected)
    );

    for (tool, got) in &counts {
        assert_eq!(
            *got,
            Some(expected),
            "{tool} counted {got:?}, not {expected}"
        );
    }
}

/// The same orders as CSV: HQL's CSV source and the CSV peers (Python's
/// `csv` with pydantic, pandas with pandera) count the valid orders the
/// generator wrote down for the CSV file.
#[test]
fn every_csv_tool_counts_the_valid_orders_the_generator_wrote() {
    let dir = std::env::temp_dir().join(format!("hql-bench-csv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("orders.csv");
    let bench = root().join("bench");
    stdout_of(
        Command::new("python3")
            .arg(bench.join("gen.py"))
            .args(["--records", RECORDS, "--quiet", "--format", "csv", "--out"])
            .arg(&data),
    );
    let meta = std::fs::read_to_string(dir.join("orders.csv.meta.json")).unwrap();
    let meta: serde_json::Value = serde_json::from_str(&meta).unwrap();
    let expected = meta["valid"].as_u64().expect("the generator's valid count");
    assert!(expected > 0 && expected < 20_000, "{meta}");

    let contract = std::fs::read_to_string(bench.join("orders_contract.hql")).unwrap();
    let count = format!(
        "{contract}\nsource(file({:?}), Csv) | validate(Order) | oks() | count()\n",
        data
    );
    let mut counts = vec![("hql csv", count_in(&hql(&dir, "csv.hql", &count, "1")))];
    install_peers();
    let python = bench.join(".venv/bin/python");
    for script in ["pydantic_csv_count.py", "pandera_count.py"] {
        let out = stdout_of(
            Command::new(&python)
                .arg(bench.join("peers/python").join(script))
                .arg(&data),
        );
        counts.push((script, count_in(&out)));
    }
    let _ = std::fs::remove_dir_all(&dir);
    for (tool, got) in &counts {
        assert_eq!(
            *got,
            Some(expected),
            "{tool} counted {got:?}, not {expected}"
        );
    }
}
