//! The crate's integration tests, one module a file, linked into one test binary (linking one
//! binary instead of one a file keeps CI inside its time budget). Files that need a process
//! of their own (a global allocator, process limits or descriptor counts) stay in `tests/`.
//! Each test file of this folder must be declared below: netloop-eventloop's
//! `every_crates_test_files_are_declared` checks it for every crate.

#[path = "../common/mod.rs"]
mod common;
#[path = "../../../transport/tests/common/net.rs"]
mod net;
#[path = "../pair/mod.rs"]
mod pair;
#[path = "../rustls_peer/mod.rs"]
mod rustls_peer;

mod differential;
mod faults;
mod file_region;
mod half_close;
mod handshake;
mod handshake_alerts;
mod options;
mod own_records;
mod pfx;
mod protocol_choice;
mod records;
mod server_identity;
mod server_name;
mod session_data;
mod sessions;
