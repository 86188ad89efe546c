//! The crate's integration tests, one module a file, linked into one test binary (linking one
//! binary instead of one a file keeps CI inside its time budget). Files that need a process
//! of their own (a global allocator, process limits or descriptor counts) stay in `tests/`.
//! Each test file of this folder must be declared below: netloop-eventloop's
//! `every_crates_test_files_are_declared` checks it for every crate.

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
mod frozen_with_flush;
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
