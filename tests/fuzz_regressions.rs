//! Every input a fuzz target once failed on (`fuzz/regressions/TARGET/`),
//! replayed through the target's own code (`fuzz/fuzz_targets/shared.rs`)
//! in an ordinary test, so that a plain `cargo test` holds them without
//! building the fuzz crate.

#[path = "../fuzz/fuzz_targets/shared.rs"]
mod shared;

/// The kept inputs of `target`, each with its name.
fn kept(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut inputs: Vec<(String, Vec<u8>)> = entries
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).expect("a kept input reads"))
        })
        .collect();
    inputs.sort();
    inputs
}

/// Run `replay` on every kept input of `target`, on a thread with the
/// stack `hql` itself runs on; the number replayed.
fn replay_all(target: &str, replay: fn(&[u8])) -> usize {
    let inputs = kept(target);
    let n = inputs.len();
    for (name, data) in inputs {
        let replayed = hql::syntax::limits::with_stack(move || {
            std::panic::catch_unwind(|| replay(&data)).is_ok()
        });
        assert!(replayed, "fuzz/regressions/{target}/{name} fails again");
    }
    n
}

#[test]
fn every_kept_program_input_gives_a_diagnostic_or_a_result() {
    assert!(
        replay_all("program", shared::program) > 0,
        "inputs are kept"
    );
}

#[test]
fn every_kept_json_lines_input_agrees_on_both_paths() {
    replay_all("json_lines", |data| shared::data_file(data, "Json"));
}

#[test]
fn every_kept_csv_input_agrees_on_both_paths() {
    replay_all("csv", |data| shared::data_file(data, "Csv"));
}

#[test]
fn every_kept_threads_input_counts_alike_on_any_number_of_threads() {
    replay_all("threads", shared::threads);
}
