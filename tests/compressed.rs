//! Compressed sources and targets (tooling.md, "Compressed files"): a
//! source whose bytes start as gzip or zstd reads decompressed — files,
//! `hql.toml` sources and standard input alike — and its format comes
//! from the name without the compression's extension; a target named
//! `….gz` or `….zst` is written compressed, atomically. The bytes are made
//! and checked with the `flate2` and `zstd` crates, not with HQL.

mod common;

use std::io::{Read, Write};

use common::Scratch;

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    out.write_all(bytes).unwrap();
    out.finish().unwrap()
}

/// A zstd frame with its checksum, as the `zstd` command writes it.
fn zstd(bytes: &[u8]) -> Vec<u8> {
    let mut out = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    out.include_checksum(true).unwrap();
    out.write_all(bytes).unwrap();
    out.finish().unwrap()
}

/// Every member of a gzip file, decompressed.
fn gunzip(bytes: &[u8]) -> String {
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_string(&mut text)
        .unwrap();
    text
}

fn unzstd(bytes: &[u8]) -> String {
    String::from_utf8(zstd::decode_all(bytes).unwrap()).unwrap()
}

const ROW: &str =
    "type Row : DataContract = {\n    id: String\n    n: Int\n    require n >= 0\n}\n";

const LINES: &str =
    "{\"id\": \"a\", \"n\": 1}\n{\"id\": \"b\", \"n\": -2}\n{\"id\": \"c\", \"n\": 3}\n";

/// Many records, some invalid: over a megabyte, so that two threads would
/// split it were it not compressed.
fn many() -> String {
    (0..40_000i64)
        .map(|i| {
            let n = if i % 7 == 0 { -i } else { i };
            format!(
                "{{\"id\": \"r{i}\", \"n\": {n}, \"note\": \"{}\"}}\n",
                "x".repeat((i % 13) as usize)
            )
        })
        .collect()
}

#[track_caller]
fn ok(run: &common::Run) -> &str {
    assert_eq!((run.status, run.err.as_str()), (0, ""), "{}", run.out);
    &run.out
}

#[test]
fn gzip_and_zstd_sources_read_as_the_plain_file_reads() {
    let dir = Scratch::new("compressed-read");
    dir.write("rows.jsonl", LINES);
    dir.write("rows.jsonl.gz", gzip(LINES.as_bytes()));
    dir.write("rows.json.zst", zstd(LINES.as_bytes()));
    let csv = "id,n\na,1\nb,-2\nc,3\n";
    dir.write("rows.csv.gz", gzip(csv.as_bytes()));
    dir.write("rows.csv.zst", zstd(csv.as_bytes()));
    let program = |file: &str, format: &str| {
        format!(
            "{ROW}let rows = source(file(\"{file}\"), {format}) | validate(Row)\n\
             rows | report()\nrows | oks() | count()\nrows | oks() | map(r => r.id) | collect()\n"
        )
    };
    let plain = ok(&dir.run(&program("rows.jsonl", "Json"), &[])).to_string();
    assert!(plain.starts_with("{total: 3, ok: 2, err: 1"), "{plain}");
    for (file, format) in [
        ("rows.jsonl.gz", "Json"),
        ("rows.json.zst", "Json"),
        ("rows.csv.gz", "Csv"),
        ("rows.csv.zst", "Csv"),
    ] {
        assert_eq!(ok(&dir.run(&program(file, format), &[])), plain, "{file}");
    }
}

#[test]
fn every_member_of_a_concatenated_gzip_file_is_read() {
    let dir = Scratch::new("compressed-members");
    let members = [
        gzip(b"{\"id\": \"a\", \"n\": 1}\n"),
        gzip(b"{\"id\": \"b\", \"n\": 2}\n"),
    ]
    .concat();
    dir.write("two.jsonl.gz", members);
    let run = dir.run(
        &format!("{ROW}source(file(\"two.jsonl.gz\"), Json) | validate(Row) | oks() | count()\nsource(file(\"two.jsonl.gz\"), Json) | map(r => r.id) | collect()\n"),
        &[],
    );
    assert_eq!(ok(&run), "2\n[\"a\", \"b\"]\n");
}

/// A stream cut short or damaged: the records before it read as they
/// are, and reading past them is an `hql::io` error naming the source
/// (exit 1), on the ordinary and the counting path alike.
#[test]
fn a_truncated_gzip_or_corrupt_zstd_is_an_io_error_naming_the_source() {
    let dir = Scratch::new("compressed-broken");
    let text = many();
    let mut cut = gzip(text.as_bytes());
    cut.truncate(cut.len() * 2 / 3);
    dir.write("cut.jsonl.gz", cut);
    let mut bad = zstd(text.as_bytes());
    let middle = bad.len() / 2;
    bad[middle..middle + 200].fill(0x5a);
    dir.write("bad.jsonl.zst", bad);
    for file in ["cut.jsonl.gz", "bad.jsonl.zst"] {
        let printed = dir.run(&format!("source(file(\"{file}\"), Json) | count()\n"), &[]);
        assert_eq!(printed.status, 1, "{}", printed.err);
        assert!(printed.err.contains("hql::io"), "{}", printed.err);
        assert!(
            printed.err.contains(&format!("cannot read {file}")),
            "{}",
            printed.err
        );
        assert_eq!(printed.out, "");
        // The records before the break read as they are.
        let first = dir.run(
            &format!("source(file(\"{file}\"), Json) | map(r => r.id) | take(2)\n"),
            &[],
        );
        assert_eq!(ok(&first), "[\"r0\", \"r1\"]\n");
        let counted = dir.run(
            &format!("{ROW}source(file(\"{file}\"), Json) | validate(Row) | report()\n"),
            &[],
        );
        assert_eq!(counted.status, 1, "{}", counted.out);
        assert!(
            counted.err.contains(&format!("cannot read {file}")),
            "{}",
            counted.err
        );
    }
    let gz = dir.run("source(file(\"cut.jsonl.gz\"), Json) | count()\n", &[]);
    assert!(
        gz.err.contains("gzip stream ends before it is complete"),
        "{}",
        gz.err
    );
}

#[test]
fn standard_input_is_read_decompressed() {
    let dir = Scratch::new("compressed-stdin");
    dir.write(
        "main.hql",
        format!("{ROW}source(stdin(), Json) | validate(Row) | report()\n"),
    );
    let plain = dir.hql_stdin(&["run", "main.hql"], LINES);
    let gz = dir.hql_stdin(&["run", "main.hql"], gzip(LINES.as_bytes()));
    let zst = dir.hql_stdin(&["run", "main.hql"], zstd(LINES.as_bytes()));
    assert!(
        ok(&plain).starts_with("{total: 3, ok: 2, err: 1"),
        "{}",
        plain.out
    );
    assert_eq!(ok(&gz), plain.out);
    assert_eq!(ok(&zst), plain.out);
    let mut cut = gzip(many().as_bytes());
    cut.truncate(cut.len() / 2);
    let broken = dir.hql_stdin(&["run", "main.hql"], cut);
    assert_eq!(broken.status, 1);
    assert!(
        broken.err.contains("cannot read <stdin>: its gzip stream"),
        "{}",
        broken.err
    );
}

/// Detection is by the bytes, never the name: a `.gz` file holding plain
/// JSON Lines reads as it is.
#[test]
fn a_gz_named_plain_file_is_read_as_its_bytes() {
    let dir = Scratch::new("compressed-plain-gz");
    dir.write("rows.jsonl.gz", LINES);
    let run = dir.run(
        &format!("{ROW}source(file(\"rows.jsonl.gz\"), Json) | validate(Row) | oks() | count()\n"),
        &[],
    );
    assert_eq!(ok(&run), "2\n");
}

#[test]
fn targets_named_gz_or_zst_are_written_compressed() {
    let dir = Scratch::new("compressed-write");
    dir.write("rows.jsonl", LINES);
    let run = dir.run(
        &format!(
            "{ROW}let rows = source(file(\"rows.jsonl\"), Json) | validate(Row)\n\
             rows | oks() | write(file(\"ok.jsonl.gz\"))\n\
             rows | oks() | write(file(\"ok.json.zst\"))\n\
             rows | oks() | write(file(\"ok.csv.gz\"))\n\
             rows | route(ok: file(\"routed.jsonl.zst\"), err: file(\"bad.jsonl.gz\"))\n"
        ),
        &[],
    );
    ok(&run);
    let jsonl = "{\"id\":\"a\",\"n\":1}\n{\"id\":\"c\",\"n\":3}\n";
    assert_eq!(gunzip(&dir.bytes("ok.jsonl.gz")), jsonl);
    // `.json` under the compression: one array.
    assert_eq!(
        unzstd(&dir.bytes("ok.json.zst")),
        "[\n{\"id\":\"a\",\"n\":1},\n{\"id\":\"c\",\"n\":3}\n]\n"
    );
    assert_eq!(gunzip(&dir.bytes("ok.csv.gz")), "id,n\na,1\nc,3\n");
    assert_eq!(unzstd(&dir.bytes("routed.jsonl.zst")), jsonl);
    let failures = gunzip(&dir.bytes("bad.jsonl.gz"));
    assert_eq!(failures.lines().count(), 1);
    assert!(failures.contains("\"rule\":\"Row.n >= 0\""), "{failures}");
    assert!(dir.temporaries().is_empty(), "{:?}", dir.files());
    // What was written reads back in the next run.
    let back = dir.run(
        "source(file(\"ok.json.zst\"), Json) | map(r => r.id) | collect()\n\
         source(file(\"ok.csv.gz\"), Csv) | count()\n",
        &[],
    );
    assert_eq!(ok(&back), "[\"a\", \"c\"]\n2\n");
}

/// A failed run leaves the old compressed target as it was, byte for
/// byte, and no temporary.
#[test]
fn a_failed_run_leaves_a_compressed_target_as_it_was() {
    let dir = Scratch::new("compressed-abandon");
    dir.write("rows.jsonl", LINES);
    let old = gzip(b"old\n");
    dir.write("out.jsonl.gz", &old);
    let run = dir.run(
        &format!(
            "{ROW}source(file(\"rows.jsonl\"), Json) | validate(Row) | oks() | write(file(\"out.jsonl.gz\"))\n\
             source(file(\"rows.jsonl\"), Json) | validate(Row) | unwrap() | count()\n"
        ),
        &[],
    );
    assert_eq!(run.status, 1, "{}", run.err);
    assert_eq!(dir.bytes("out.jsonl.gz"), old);
    assert!(dir.temporaries().is_empty(), "{:?}", dir.files());
}

/// A compressed target's end is written at commit, so a later statement
/// of the run cannot read it: an error naming it, and nothing committed.
#[test]
fn a_compressed_target_cannot_be_read_in_the_run_that_writes_it() {
    let dir = Scratch::new("compressed-reread");
    dir.write("rows.jsonl", LINES);
    let run = dir.run(
        "source(file(\"rows.jsonl\"), Json) | write(file(\"out.jsonl.gz\"))\n\
         source(file(\"out.jsonl.gz\"), Json) | count()\n",
        &[],
    );
    assert_eq!(run.status, 1, "{}", run.out);
    assert!(run.err.contains("hql::io"), "{}", run.err);
    assert!(
        run.err
            .contains("cannot read out.jsonl.gz: it is a gzip target this run writes"),
        "{}",
        run.err
    );
    assert!(!dir.exists("out.jsonl.gz"));
    assert!(dir.temporaries().is_empty(), "{:?}", dir.files());
    // An uncompressed target is read back as the run wrote it.
    let plain = dir.run(
        "source(file(\"rows.jsonl\"), Json) | write(file(\"out.jsonl\"))\n\
         source(file(\"out.jsonl\"), Json) | count()\n",
        &[],
    );
    assert_eq!(ok(&plain), "3\n3\n");
}

/// Two threads cannot split a compressed file: they print what one
/// prints, and `--explain` says why the file is read front to back.
#[test]
fn a_compressed_source_on_two_threads_runs_as_on_one() {
    let dir = Scratch::new("compressed-threads");
    let text = many();
    dir.write("rows.jsonl", &text);
    dir.write("rows.jsonl.gz", gzip(text.as_bytes()));
    let program = |file: &str| {
        format!(
            "{ROW}let rows = source(file(\"{file}\"), Json) | validate(Row)\n\
             rows | oks() | count()\nrows | report()\n\
             rows | oks() | map(r => r.n) | sum()\n\
             rows | route(ok: file(\"ok.jsonl\"), err: file(\"err.jsonl\"))\n"
        )
    };
    let one = dir.run(&program("rows.jsonl.gz"), &["--threads", "1"]);
    let written = (dir.read("ok.jsonl"), dir.read("err.jsonl"));
    let two = dir.run(&program("rows.jsonl.gz"), &["--threads", "2"]);
    assert_eq!(ok(&two), ok(&one));
    assert_eq!((dir.read("ok.jsonl"), dir.read("err.jsonl")), written);
    let plain = dir.run(&program("rows.jsonl"), &["--threads", "2"]);
    assert_eq!(ok(&plain), one.out);
    let explained = dir.run(&program("rows.jsonl.gz"), &["--explain", "--threads", "2"]);
    let why = "not chunks: the file is compressed, and a compressed stream cannot be cut at byte \
               offsets: it is decompressed on a thread of its own and read front to back";
    assert!(
        ok(&explained).contains(&format!(
            "main.hql:7: count(): counting: line check, one thread\n    {why}\n"
        )),
        "{}",
        explained.out
    );
    assert!(
        explained.out.contains(&format!(
            "main.hql:10: route: copier: valid lines copied as they are, one thread\n    {why}\n"
        )),
        "{}",
        explained.out
    );
    let plain = dir.run(&program("rows.jsonl"), &["--explain", "--threads", "2"]);
    assert!(plain
        .out
        .contains("main.hql:7: count(): counting: line check, chunks on 2 threads\n"));
    assert!(!plain.out.contains("compressed"));
}

/// The format of a path comes from the extension before the
/// compression's: `write`, `hql.toml`, `hql vet` and `hql infer`.
#[test]
fn the_format_comes_from_the_name_without_the_compression() {
    let dir = Scratch::new("compressed-names");
    dir.write("rows.csv.gz", gzip(b"id,n\na,1\nb,-2\n"));
    dir.write("rows.jsonl.zst", zstd(LINES.as_bytes()));
    dir.write("contracts.hql", ROW);
    dir.write(
        "hql.toml",
        "[sources.rows]\nfile = \"rows.csv.gz\"\n\n[targets.out]\nfile = \"out.json.gz\"\n",
    );
    let run = dir.run(
        &format!("{ROW}source(\"rows\") | validate(Row) | oks() | write(\"out\")\n"),
        &[],
    );
    assert_eq!(ok(&run), "1\n");
    assert_eq!(
        gunzip(&dir.bytes("out.json.gz")),
        "[\n{\"id\":\"a\",\"n\":1}\n]\n"
    );
    let vet = dir.hql(&["vet", "contracts.hql", "rows.csv.gz", "rows.jsonl.zst"]);
    assert_eq!(vet.status, 1, "{}\n{}", vet.out, vet.err);
    assert!(
        vet.out.contains("rows.csv.gz") && vet.out.contains("rows.jsonl.zst"),
        "{}",
        vet.out
    );
    assert!(!vet.err.contains("cannot tell the format"), "{}", vet.err);
    let infer = dir.hql(&["infer", "rows.csv.gz"]);
    assert!(ok(&infer).contains("n: Int"), "{}", infer.out);
    let infer = dir.hql(&["infer", "rows.jsonl.zst"]);
    assert!(ok(&infer).contains("id: String"), "{}", infer.out);
    // `write` without a format: the extension before `.zst`.
    let written = dir.run(
        "source(file(\"rows.jsonl.zst\"), Json) | write(file(\"copy.csv.zst\"))\n",
        &[],
    );
    assert_eq!(ok(&written), "3\n");
    assert_eq!(unzstd(&dir.bytes("copy.csv.zst")), "id,n\na,1\nb,-2\nc,3\n");
    let unknown = dir.run(
        "source(file(\"rows.jsonl.zst\"), Json) | write(file(\"copy.gz\"))\n",
        &[],
    );
    assert!(
        unknown.err.contains("cannot tell the format of copy.gz"),
        "{}",
        unknown.err
    );
}
