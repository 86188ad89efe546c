//! The crate's integration tests, one module a file, linked into one test binary (linking one
//! binary instead of one a file keeps CI inside its time budget). Files that need a process
//! of their own (a global allocator, process limits or descriptor counts) stay in `tests/`.
//! Each test file of this folder must be declared below: `every_test_file_is_declared` checks it.

// The fuzz crate's two roots (`lib.rs`, `response.rs`) each include its `support` module, and
// the server and client harnesses each include `embedded`: loaded twice, as before the merge.
#![allow(clippy::duplicate_mod)]

#[path = "../client_support/mod.rs"]
mod client_support;
#[path = "../common/mod.rs"]
mod common;
#[path = "../corpus_file/mod.rs"]
mod corpus_file;
#[path = "../../fuzz/src/response.rs"]
mod fuzz;
#[path = "../../fuzz/src/lib.rs"]
mod fuzz_lib;

mod backpressure;
mod bodies;
mod client;
mod client_errors;
mod client_requests;
mod client_split;
mod client_upgrade;
mod continue_and_head;
mod corpus;
mod file_body;
mod header_timeout;
mod held_requests;
mod keep_alive;
mod limits;
mod linger;
mod pipelining;
mod pipelining_limit;
mod request_timeout;
mod response_corpus;
mod responses;
mod socket;
mod split_invariance;
mod upgrade;

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
