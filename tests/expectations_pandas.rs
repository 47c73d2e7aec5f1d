//! The expectations of `examples/delivery/airports.hql` held to counts
//! pandas computes on its own from the same CSV file (language.md §4.11):
//! a contract stating each count exactly passes, and one off by one fails
//! naming the count.
//!
//! pandas is installed on first use (pip, into `target/sql-venv`), so the
//! test is ignored by a plain `cargo test`; `.ci/run` runs it with
//! `--include-ignored`.

use std::process::Command;

use serde_json::Value as Json;

mod common;
mod sql;

use common::*;

const DATA: &str = "examples/delivery/airports.csv";

/// The measures, as pandas counts them: the CSV read as text (so `NA`
/// stays `NA`, as HQL reads it), latitudes and longitudes as exact floats.
const PANDAS: &str = r#"
import json, sys
import pandas as pd
df = pd.read_csv(sys.argv[1], dtype=str, keep_default_na=False)
lat = pd.to_numeric(df["latitude"], errors="coerce")
lon = pd.read_csv(sys.argv[1], usecols=["longitude"], float_precision="round_trip")["longitude"]
lat_exact = pd.read_csv(sys.argv[1], usecols=["latitude"], float_precision="round_trip")["latitude"]
on_earth = lat.between(-90, 90) & lon.between(-180, 180)
fails = ~on_earth | (df["country"] != "USA")
print(json.dumps({
    "rows": len(df),
    "failures": int(fails.sum()),
    "duplicate_codes": int(df["iata"].duplicated().sum()),
    "duplicate_names": int(df["name"].duplicated().sum()),
    "states": int(df["state"].nunique()),
    "countries": int(df["country"].nunique()),
    "missing_cities": int((df["city"] == "").sum()),
    "min_latitude": repr(float(lat_exact.min())),
    "max_latitude": repr(float(lat_exact.max())),
}))
"#;

/// The Airport contract of the example, with `expectations` in place of
/// its own.
fn program(expectations: &str) -> String {
    let example = std::fs::read_to_string(sql::root().join("examples/delivery/airports.hql"))
        .expect("the example");
    let head = example
        .split("    expect rows")
        .next()
        .expect("the example's expectations");
    format!(
        "{head}{expectations}}}\n\nsource(file(\"{DATA}\"), Csv) | validate(Airport) | count()\n"
    )
}

#[test]
#[ignore = "installs pandas with pip"]
fn airports_expectations_agree_with_pandas() {
    let root = sql::root();
    let python = sql::python_with("pandas", "pandas");
    let out = Command::new(&python)
        .args(["-c", PANDAS, DATA])
        .current_dir(root)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let counted: Json = serde_json::from_slice(&out.stdout).expect("pandas prints JSON");
    let n = |k: &str| {
        counted[k]
            .as_i64()
            .unwrap_or_else(|| panic!("{k} in {counted}"))
    };
    let f = |k: &str| {
        counted[k]
            .as_str()
            .unwrap_or_else(|| panic!("{k} in {counted}"))
            .to_string()
    };
    // The figures are not trivial: the check would pass on anything if
    // they were all zero.
    assert_eq!((n("rows"), n("failures")), (3376, 4));
    assert!(n("duplicate_names") > 0 && n("states") > 50);
    let exact = |off: i64| {
        format!(
            "    expect rows == {}\n    expect failures == {}\n    expect duplicates(iata) == {}\n    expect duplicates(name) == {}\n    expect distinct(state) == {}\n    expect distinct(country) == {}\n    expect missing(city) == {}\n    expect min(latitude) == {} and max(latitude) == {}\n",
            n("rows") + off,
            n("failures"),
            n("duplicate_codes"),
            n("duplicate_names"),
            n("states"),
            n("countries"),
            n("missing_cities"),
            f("min_latitude"),
            f("max_latitude"),
        )
    };
    let dir = Scratch::new("expect-pandas");
    let data = std::fs::read(root.join(DATA)).expect("the data");
    std::fs::create_dir_all(dir.path.join("examples/delivery")).expect("a folder");
    dir.write(DATA, data);
    let agreed = dir.run(&program(&exact(0)), &[]);
    assert_eq!(
        (agreed.out.as_str(), agreed.err.as_str(), agreed.status),
        ("3376\n", "", 0),
        "pandas counted {counted}"
    );
    // One off: the run fails, naming what it counted.
    let off = dir.run(&program(&exact(1)), &[]);
    assert_eq!(off.status, 1);
    assert!(
        squash(&off.err).contains("failed: rows == 3377 (rows is 3376)"),
        "{}",
        off.err
    );
}
