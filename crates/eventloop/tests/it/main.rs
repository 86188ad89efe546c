//! The crate's integration tests, one module a file, linked into one test binary (linking one
//! binary instead of one a file keeps CI inside its time budget). Files that need a process
//! of their own (a global allocator, process limits or descriptor counts) stay in `tests/`.
//! Each test file of this folder must be declared below: netloop-eventloop's
//! `every_crates_test_files_are_declared` checks it for every crate.

#[path = "../common/mod.rs"]
mod common;

mod bounded;
mod expedite;
mod group;
mod io_time;
mod lifecycle;
mod log;
mod netty_conformance;
mod promise;
mod selector;
mod spin;
mod tasks;
mod timers;
mod utilization;
mod wake_model;

/// Checks every crate of the workspace: each `crates/<crate>/tests/it/*.rs` is a `mod` of its
/// `main.rs` (a file left out would silently not run).
#[test]
fn every_crates_test_files_are_declared() {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut checked = 0;
    for krate in std::fs::read_dir(crates).unwrap() {
        let dir = krate.unwrap().path().join("tests/it");
        let Ok(main) = std::fs::read_to_string(dir.join("main.rs")) else {
            continue;
        };
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            if path.extension().is_some_and(|e| e == "rs") && stem != "main" {
                assert!(
                    main.contains(&format!("\nmod {stem};\n")),
                    "{} is not declared in its tests/it/main.rs",
                    path.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 80, "only {checked} test files found");
}
