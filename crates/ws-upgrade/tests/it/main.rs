//! The crate's integration tests, one module a file, linked into one test binary (linking one
//! binary instead of one a file keeps CI inside its time budget). Files that need a process
//! of their own (a global allocator, process limits or descriptor counts) stay in `tests/`.
//! Each test file of this folder must be declared below: netloop-eventloop's
//! `every_crates_test_files_are_declared` checks it for every crate.

#[path = "../../examples/ws_echo_server.rs"]
mod server;

mod client;
mod client_deflate;
mod deflate_upgrade;
mod peers;
mod upgrade;
