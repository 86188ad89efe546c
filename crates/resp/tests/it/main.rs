//! The crate's integration tests, one module a file, linked into one test binary (linking one
//! binary instead of one a file keeps CI inside its time budget). Files that need a process
//! of their own (a global allocator, process limits or descriptor counts) stay in `tests/`.
//! Each test file of this folder must be declared below: netloop-eventloop's
//! `every_crates_test_files_are_declared` checks it for every crate.

#[path = "../support/split_check.rs"]
mod split_check;

mod backpressure;
mod encoding;
mod held_reads;
mod pipeline;
mod recorder;
mod seeded_splits;
