//! The crate's integration tests, one module a file, linked into one test binary (linking one
//! binary instead of one a file keeps CI inside its time budget). Files that need a process
//! of their own (a global allocator, process limits or descriptor counts) stay in `tests/`.
//! Each test file of this folder must be declared below: netloop-eventloop's
//! `every_crates_test_files_are_declared` checks it for every crate.

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
mod topic_batches;
mod topics;
