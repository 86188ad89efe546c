//! The crate's integration tests, one module a file, linked into one test binary (linking one
//! binary instead of one a file keeps CI inside its time budget). Files that need a process
//! of their own (a global allocator, process limits or descriptor counts) stay in `tests/`.
//! Each test file of this folder must be declared below: `every_test_file_is_declared` checks it.

#[path = "../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod fuzz;
#[path = "../support/stable_fuzz.rs"]
mod stable_fuzz;
#[path = "../support/mod.rs"]
mod support;

mod backpressure;
mod close_handshake;
mod deflate;
mod deflate_negotiation;
mod frame_rules;
mod fuzz_cases;
mod handshake;
mod messages;
mod topics;

#[test]
fn every_test_file_is_declared() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let main = include_str!("main.rs");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "rs") && stem != "main" {
            let declared = format!("\nmod {stem};\n");
            assert!(
                main.contains(&declared),
                "tests/it/{stem}.rs is not declared in tests/it/main.rs"
            );
        }
    }
}
