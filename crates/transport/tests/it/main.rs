//! The crate's integration tests, one module a file, linked into one test binary (linking one
//! binary instead of one a file keeps CI inside its time budget). Files that need a process
//! of their own (a global allocator, process limits or descriptor counts) stay in `tests/`.
//! Each test file of this folder must be declared below: netloop-eventloop's
//! `every_crates_test_files_are_declared` checks it for every crate.

#[path = "../common/mod.rs"]
mod common;

mod cancelled_promises;
mod close_cause;
mod file_region;
mod half_closure;
mod local_listeners;
mod max_connections;
mod netty_conformance;
mod pipeline_channel;
mod pipeline_errors;
mod pipeline_flow;
mod pipeline_names;
mod ready_order;
mod reregister;
mod selector_rebuild;
mod tcp_close;
mod tcp_connect;
mod tcp_read;
mod tcp_server;
mod tcp_transfer;
mod write_and_flush;
mod write_now;
