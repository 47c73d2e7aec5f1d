//! `hql export` and `hql contract` (tooling.md, "Commands" and "Contract
//! tooling"): snapshots of every format, the JSON Schema checked by the
//! `jsonschema` crate against the 2020-12 meta-schema and against the
//! example data, and the commands' usage errors.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value as Json;

const FORMATS: [&str; 3] = ["json-schema", "openlineage", "contract"];

fn hql(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hql"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
        .expect("hql runs")
}

fn hql_stdin(args: &[&str], input: &str) -> Output {
    common::hql_with_input(args, input.as_bytes())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8")
}

/// `hql export FILE TYPE --format F`, which must succeed.
fn export(file: &str, ty: &str, format: &str) -> String {
    let out = hql(&["export", file, ty, "--format", format]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{file} {ty} {format}: {}",
        text(&out.stderr)
    );
    assert_eq!(text(&out.stderr), "");
    text(&out.stdout)
}

fn export_json(file: &str, ty: &str, format: &str) -> Json {
    serde_json::from_str(&export(file, ty, format)).expect("an export is JSON")
}

/// Every example program that checks, with the record types it declares
/// and the JSON Lines files it reads.
fn example_programs() -> Vec<(String, Vec<String>, Vec<String>)> {
    let mut out = common::example_contracts();
    // A contract using every part an export writes out, with data.
    out.push((
        "tests/snapshots/export/orders.hql".into(),
        vec!["Order".into(), "Line".into()],
        vec![
            "tests/snapshots/export/orders.jsonl".into(),
            "tests/snapshots/export/lines.jsonl".into(),
        ],
    ));
    out
}

// ---------------------------------------------------------------------------
// Snapshots

/// The contracts whose exports are kept under tests/snapshots/export/.
const SNAPSHOTS: &[(&str, &str)] = &[
    ("examples/contracts/movies.hql", "Movie"),
    ("examples/contracts/movies.hql", "Classic"),
    ("examples/contracts/nested.hql", "Cart"),
    ("examples/contracts/defaults.hql", "Address"),
    ("examples/contracts/open_and_closed.hql", "Stored"),
    ("examples/types/refinements.hql", "Movement"),
    ("examples/types/refinements.hql", "Sku"),
    ("examples/stdlib/signups.hql", "Signup"),
    ("tests/snapshots/export/orders.hql", "Order"),
    ("tests/snapshots/export/orders.hql", "Line"),
];

/// Each snapshot is the exact output; `HQL_UPDATE_SNAPSHOTS=1` rewrites them.
#[test]
fn exports_match_their_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/export");
    let update = std::env::var_os("HQL_UPDATE_SNAPSHOTS").is_some();
    for (file, ty) in SNAPSHOTS {
        for format in FORMATS {
            let stem = Path::new(file).file_stem().unwrap().to_string_lossy();
            let path = dir.join(format!("{stem}.{ty}.{format}.json"));
            let actual = export(file, ty, format);
            if update {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &actual).unwrap();
                continue;
            }
            let expected = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(actual, expected, "{}", path.display());
        }
    }
}

#[test]
fn exports_are_the_same_on_every_run() {
    for (file, types, _) in example_programs() {
        for ty in &types {
            for format in FORMATS {
                assert_eq!(
                    export(&file, ty, format),
                    export(&file, ty, format),
                    "{file} {ty} {format}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------
// JSON Schema

/// Every `x-hql-rules` and `x-hql-expectations` entry anywhere in the
/// schema.
fn notes(schema: &Json, out: &mut Vec<Json>) {
    match schema {
        Json::Object(map) => {
            for (key, value) in map {
                if key == "x-hql-rules" || key == "x-hql-expectations" {
                    out.extend(value.as_array().unwrap().iter().cloned());
                } else {
                    notes(value, out);
                }
            }
        }
        Json::Array(items) => items.iter().for_each(|i| notes(i, out)),
        _ => {}
    }
}

/// The identities a type's canonical export names: rules, named checks,
/// unique keys, expectations.
fn identities(contract: &Json) -> Vec<String> {
    let ids = |key: &str| -> Vec<String> {
        contract[key]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .map(|i| i["id"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = ids("rules");
    out.extend(ids("unique"));
    out.extend(ids("expectations"));
    for field in contract["fields"].as_array().into_iter().flatten() {
        for check in field["checks"].as_array().unwrap() {
            out.push(check["id"].as_str().unwrap().to_string());
        }
    }
    out
}

#[test]
fn every_schema_is_a_valid_2020_12_schema_listing_every_rule() {
    let mut exported = 0;
    for (file, types, _) in example_programs() {
        for ty in &types {
            let schema = export_json(&file, ty, "json-schema");
            assert_eq!(
                schema["$schema"],
                "https://json-schema.org/draft/2020-12/schema"
            );
            if let Err(e) = jsonschema::meta::validate(&schema) {
                panic!("{file} {ty}: not a valid schema: {e}");
            }
            jsonschema::draft202012::new(&schema)
                .unwrap_or_else(|e| panic!("{file} {ty}: does not compile: {e}"));
            let mut listed = Vec::new();
            notes(&schema, &mut listed);
            let listed: Vec<&str> = listed.iter().map(|n| n["id"].as_str().unwrap()).collect();
            let contract = export_json(&file, ty, "contract");
            for id in identities(&contract) {
                assert!(
                    listed.contains(&id.as_str()),
                    "{file} {ty}: {id} not listed"
                );
            }
            exported += 1;
        }
    }
    assert!(exported >= 20, "only {exported} types exported");
}

/// HQL's verdict on each non-blank line of `data` against `ty`, one record
/// at a time (a unique key spans records, which a schema cannot see):
/// `Some(accepted)`, or None for a line that does not decode.
fn hql_verdicts(file: &str, ty: &str, data: &str) -> Vec<Option<bool>> {
    let program = format!(
        "import \"{file}\"\nsource(file(\"{data}\"), Json) | map(r => validate(r, {ty})) \
         | map(v => if is_ok(v) then \"ok\" else [v] | errs() | map(e => e.failures[0].kind) | first())\n"
    );
    let out = hql_stdin(&["run", "-", "--format", "json"], &program);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|l| match l {
            "\"ok\"" => Some(true),
            "\"decode\"" => None,
            _ => Some(false),
        })
        .collect()
}

/// Does the value hold a number written with a fraction or exponent whose
/// value is whole (`1.0`)?
fn integral_float(v: &Json) -> bool {
    match v {
        Json::Number(n) => {
            n.as_f64().is_some_and(|f| f.fract() == 0.0) && !n.is_i64() && !n.is_u64()
        }
        Json::Array(items) => items.iter().any(integral_float),
        Json::Object(map) => map.values().any(integral_float),
        _ => false,
    }
}

/// For every example type and every JSON Lines file its program reads:
/// a record HQL accepts is accepted by the exported schema; where every
/// rule of the type has an exact equivalent (`"exact": true` in
/// `x-hql-rules`; `Int`'s note and unique keys aside), a record HQL
/// rejects is rejected too.
#[test]
fn the_schema_accepts_and_rejects_the_records_the_contract_does() {
    let (mut compared, mut both_ways) = (0, 0);
    for (file, types, data) in example_programs() {
        for ty in &types {
            let schema = export_json(&file, ty, "json-schema");
            let validator = jsonschema::draft202012::new(&schema).unwrap();
            let mut listed = Vec::new();
            notes(&schema, &mut listed);
            let exact = listed.iter().all(|n| {
                n["exact"] == true
                    || n["kind"] == "type"
                    || n["kind"] == "unique"
                    || n["kind"] == "warn"
            });
            // `1.0` is not an HQL Int but is a JSON Schema integer: the
            // difference is listed, and such records are not compared.
            let int_noted = listed.iter().any(|n| n["kind"] == "type");
            for data in &data {
                let verdicts = hql_verdicts(&file, ty, data);
                let lines: Vec<String> =
                    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(data))
                        .unwrap()
                        .lines()
                        .filter(|l| !l.trim().is_empty())
                        .map(String::from)
                        .collect();
                assert_eq!(lines.len(), verdicts.len(), "{file} {ty} {data}");
                for (line, verdict) in lines.iter().zip(verdicts) {
                    let Some(accepted) = verdict else { continue };
                    let record: Json = serde_json::from_str(line).unwrap();
                    let schema_accepts = validator.is_valid(&record);
                    if accepted {
                        assert!(schema_accepts, "{file} {ty}: schema refuses {line}");
                    } else if exact && !(int_noted && integral_float(&record)) {
                        assert!(!schema_accepts, "{file} {ty}: schema accepts {line}");
                        both_ways += 1;
                    }
                    compared += 1;
                }
            }
        }
    }
    assert!(compared >= 100, "only {compared} records compared");
    assert!(both_ways >= 20, "only {both_ways} rejections compared");
}

#[test]
fn rules_with_an_exact_equivalent_get_the_keyword() {
    let movie = export_json("examples/contracts/movies.hql", "Movie", "json-schema");
    assert_eq!(movie["properties"]["year"]["minimum"], 1888);
    assert_eq!(movie["properties"]["US Gross"]["minimum"], 0);
    assert_eq!(
        movie["properties"]["rating"]["enum"],
        serde_json::json!(["G", "PG", "PG-13", "R"])
    );
    assert_eq!(
        movie["required"],
        serde_json::json!(["title", "rating", "year"])
    );
    // A pattern with the same meaning in ECMA-262 is translated.
    let sku = export_json("examples/types/refinements.hql", "Sku", "json-schema");
    assert_eq!(sku["pattern"], "^[A-Z]{3}-[0-9]{4}$");
    // Fields with defaults are not required; a rule reading one is listed only.
    let address = export_json("examples/contracts/defaults.hql", "Address", "json-schema");
    assert_eq!(address["required"], serde_json::json!(["street", "city"]));
    assert_eq!(address["properties"]["country"]["default"], "CH");
    let mut listed = Vec::new();
    notes(&address, &mut listed);
    let swiss = listed
        .iter()
        .find(|n| n["id"] == "Address.swiss_zip")
        .expect("listed");
    assert_eq!(swiss["exact"], false);
}

// ---------------------------------------------------------------------------
// The commands

#[test]
fn an_unknown_type_or_format_is_a_usage_error() {
    let out = hql(&[
        "export",
        "examples/contracts/movies.hql",
        "Film",
        "--format",
        "contract",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "hql: examples/contracts/movies.hql declares no type `Film` (it declares Movie, Classic)\n"
    );
    let out = hql(&[
        "export",
        "examples/contracts/movies.hql",
        "Movie",
        "--format",
        "sql",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "hql: --format sql needs --dialect duckdb, spark, trino or postgres\n"
    );
    let out = hql(&[
        "export",
        "examples/contracts/movies.hql",
        "Movie",
        "--format",
        "avro",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "error: invalid value 'avro' for '--format <F>'\n  \
         [possible values: json-schema, openlineage, contract, sql]\n\n\
         For more information, try '--help'.\n"
    );
    // Dialects and engines are closed sets too, refused with their members.
    let movies = "examples/contracts/movies.hql";
    for (args, members) in [
        (
            &[
                "export",
                movies,
                "Movie",
                "--format",
                "sql",
                "--dialect",
                "oracle",
            ][..],
            "[possible values: duckdb, spark, trino, postgres]",
        ),
        (
            &["vet", movies, "m.jsonl", "--engine", "spark"][..],
            "[possible values: duckdb, postgres]",
        ),
        (
            &[
                "vet", movies, "m.jsonl", "--type", "Movie", "--engine", "duckdb", "--nulls", "NA",
            ][..],
            "--engine duckdb reads each JSON Lines file as it is: --nulls is for hql itself",
        ),
        (
            &[
                "vet", movies, "m.jsonl", "--type", "Movie", "--engine", "duckdb", "--at", "/data",
            ][..],
            "--at is for hql itself",
        ),
    ] {
        let out = hql(args);
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out.stderr).contains(members), "{args:?}");
    }
    let out = hql(&["contract", "examples/contracts/movies.hql", "Film"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "hql: examples/contracts/movies.hql declares no type `Film` (it declares Movie, Classic)\n"
    );
    let out = hql(&["contract", "no/such.hql"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("hql: cannot read no/such.hql: "));
}

const MOVIES_SUMMARY: &str = "\
type Movie: DataContract (open)
  fields:
    title: String
    rating: \"G\" | \"PG\" | \"PG-13\" | \"R\"
    year: Int  (read by Movie.year >= 1888)
    US Gross?: Int  (read by Movie.self[\"US Gross\"]? >= 0)
  rules:
    require Movie.year >= 1888: year >= 1888
    require Movie.self[\"US Gross\"]? >= 0: self[\"US Gross\"]? >= 0
    unique Movie.title+year.unique
";

#[test]
fn contract_summarises_each_type_of_a_file() {
    let out = hql(&["contract", "examples/contracts/movies.hql"]);
    assert_eq!(out.status.code(), Some(0));
    let classic = "\
type Classic: DataContract (open)
  fields:
    title: String
    rating: \"G\" | \"PG\" | \"PG-13\" | \"R\"
    year: Int  (read by Movie.year >= 1888, Classic.classic)
    US Gross?: Int  (read by Movie.self[\"US Gross\"]? >= 0)
    director?: String
  rules:
    require Movie.year >= 1888: year >= 1888
    require Movie.self[\"US Gross\"]? >= 0: self[\"US Gross\"]? >= 0
    require Classic.classic: year < 1990
    unique Movie.title+year.unique
";
    assert_eq!(text(&out.stdout), format!("{MOVIES_SUMMARY}\n{classic}"));
    let out = hql(&["contract", "examples/contracts/movies.hql", "Movie"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), MOVIES_SUMMARY.to_string())
    );
}

#[test]
fn the_repl_prints_the_same_as_the_commands() {
    let out = hql_stdin(
        &["repl"],
        "import \"examples/contracts/movies.hql\"\n:contract Movie\n:export Movie json-schema\n:export Movie contract\n",
    );
    let expected = format!(
        "{MOVIES_SUMMARY}{}{}",
        export("examples/contracts/movies.hql", "Movie", "json-schema"),
        export("examples/contracts/movies.hql", "Movie", "contract")
    );
    assert_eq!(text(&out.stdout), expected);
    assert_eq!(out.status.code(), Some(0));
    let out = hql_stdin(
        &["repl"],
        ":export Movie\n:export Nope contract\n:export Movie sql\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "usage: :export TYPE json-schema|openlineage|contract\n\
         no type named `Nope`; `:vars` and Tab list what is declared\n\
         the `sql` export needs a dialect and an input: `hql export FILE TYPE --format sql --dialect duckdb --from INPUT`\n"
    );
}

/// The README's and the reference's `hql export` and `hql contract`
/// examples print what they show.
#[test]
fn the_docs_examples_print_what_they_show() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut shown = 0;
    for doc in ["README.md", "docs/reference.md"] {
        let text_of_doc = std::fs::read_to_string(root.join(doc)).unwrap();
        for block in text_of_doc.split("```sh\n").skip(1) {
            let Some((command, rest)) = block.split_once("\n```\n\n```text\n") else {
                continue;
            };
            if !(command.starts_with("hql export ") || command.starts_with("hql contract ")) {
                continue;
            }
            let expected = &rest[..rest.find("```").expect("the output block ends")];
            let args: Vec<&str> = command.split(' ').skip(1).collect();
            let out = hql(&args);
            assert_eq!(out.status.code(), Some(0), "{doc}: {command}");
            assert_eq!(text(&out.stdout), expected, "{doc}: {command}");
            shown += 1;
        }
    }
    assert_eq!(shown, 3);
}

/// A type that refers to itself refers to the schema's root, which every
/// validator resolves (`#`; the root has no `$defs` entry of its own).
#[test]
fn a_recursive_type_refers_to_the_root() {
    let dir = std::env::temp_dir().join(format!("hql-export-tree-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tree.hql");
    std::fs::write(
        &file,
        "type Node : TypeContract = {\n    name: String\n    children: List[Node]\n    parent?: Node | Null\n}\n",
    )
    .unwrap();
    let schema = export_json(file.to_str().unwrap(), "Node", "json-schema");
    assert_eq!(schema["properties"]["children"]["items"]["$ref"], "#");
    let validator = jsonschema::draft202012::new(&schema).expect("it compiles");
    let good = serde_json::json!({"name": "a", "children": [{"name": "b", "children": []}]});
    let bad = serde_json::json!({"name": "a", "children": [{"name": 1, "children": []}]});
    assert!(validator.is_valid(&good));
    assert!(!validator.is_valid(&bad));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn openlineage_omits_an_empty_description() {
    let s = common::Scratch::new("ol-empty");
    s.write(
        "t.hql",
        "type T : Data = {\n    ///\n    a: Int\n    /// example: 1\n    b: Int\n    /// The c.\n    c: Int\n}\n",
    );
    let run = s.hql(&["export", "t.hql", "T", "--format", "openlineage"]);
    assert_eq!(run.status, 0, "{}", run.err);
    let facet: Json = serde_json::from_str(&run.out).expect("JSON");
    assert_eq!(
        facet["fields"],
        serde_json::json!([
            {"name": "a", "type": "Int"},
            {"name": "b", "type": "Int"},
            {"name": "c", "type": "Int", "description": "The c."},
        ])
    );
}

#[test]
fn rule_doc_comments_reach_the_json_schemas_rule_notes() {
    let s = common::Scratch::new("rule-docs");
    s.write(
        "t.hql",
        "type T : DataContract = {\n    qty: Int\n    /// Quantities count from one.\n    require positive: qty >= 1\n    require small: qty < 100\n}\n",
    );
    let run = s.hql(&["export", "t.hql", "T", "--format", "json-schema"]);
    assert_eq!(run.status, 0, "{}", run.err);
    let schema: Json = serde_json::from_str(&run.out).expect("JSON");
    let rules = schema["x-hql-rules"].as_array().expect("x-hql-rules");
    let note = |id: &str| rules.iter().find(|r| r["id"] == id).cloned();
    assert_eq!(
        note("T.positive").map(|r| r["description"].clone()),
        Some(Json::from("Quantities count from one.")),
        "{rules:?}"
    );
    assert_eq!(
        note("T.small").map(|r| r.get("description").is_none()),
        Some(true),
        "{rules:?}"
    );
}

#[test]
fn contract_shows_inline_records_fields_nested_and_indented() {
    let s = common::Scratch::new("contract-inline");
    s.write(
        "o.hql",
        "type Order : DataContract = {\n    id: Int\n    ship: { street: String, zip?: String, geo: { lat: Float, lon: Float } }\n    lines: List[{ sku: String, qty: Int }]\n}\n",
    );
    let run = s.hql(&["contract", "o.hql"]);
    assert_eq!(
        (run.out.as_str(), run.err.as_str(), run.status),
        (
            "type Order: DataContract (open)\n  fields:\n    id: Int\n    ship: a record\n      \
             street: String\n      zip?: String\n      geo: a record\n        lat: Float\n        \
             lon: Float\n    lines: List[a record]\n      sku: String\n      qty: Int\n",
            "",
            0
        )
    );
}

#[test]
fn expectations_are_listed_in_the_schema_and_the_contract_export() {
    let s = common::Scratch::new("expect-export");
    s.write(
        "t.hql",
        "type T : DataContract = {\n    qty: Int\n    email?: String\n    expect rows >= 10\n    /// Few broken records.\n    expect budget: failures <= 1%\n    expect warn missing(email) <= 5%\n}\n",
    );
    let exported = |format: &str| -> Json {
        let run = s.hql(&["export", "t.hql", "T", "--format", format]);
        assert_eq!(run.status, 0, "{}", run.err);
        serde_json::from_str(&run.out).expect("JSON")
    };
    assert_eq!(
        exported("json-schema")["x-hql-expectations"],
        serde_json::json!([
            {"id": "T.rows >= 10", "kind": "expect", "text": "rows >= 10", "exact": false},
            {"id": "T.budget", "kind": "expect", "text": "failures <= 1%", "exact": false,
             "description": "Few broken records."},
            {"id": "T.missing(email) <= 5%", "kind": "expect_warn", "text": "missing(email) <= 5%",
             "exact": false},
        ])
    );
    assert_eq!(
        exported("contract")["expectations"],
        serde_json::json!([
            {"id": "T.rows >= 10", "kind": "expect", "text": "rows >= 10", "fields": [],
             "measures": ["rows"], "description": null},
            {"id": "T.budget", "kind": "expect", "text": "failures <= 1%", "fields": [],
             "measures": ["failures"], "description": "Few broken records."},
            {"id": "T.missing(email) <= 5%", "kind": "expect_warn", "text": "missing(email) <= 5%",
             "fields": ["email"], "measures": ["missing(email)"], "description": null},
        ])
    );
}
