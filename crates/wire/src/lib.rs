//! The engine of netloop's JS boundary, without napi: everything the binding (crates/node)
//! does that needs no JS value, so that it runs and is tested with plain `cargo test`.
//!
//! - [`protocol`]: every number that crosses the boundary, defined once (the `napi` feature,
//!   which only crates/node turns on, exports the enums to JS; scripts/gen-protocol.mjs copies
//!   them into `src/generated/`).
//! - The per-loop channel hub ([`hub`]): its channels, the records it owes JS ([`outbox`]),
//!   the ops JS sent ([`ops`]), the batched delivery with its time budget ([`delivery`]), the
//!   native handlers that stand in for JS handlers ([`adapter`]), the reads JS gives back
//!   ([`held`]), the Buffers of large writes ([`big`]), the typed arrays shared with JS as
//!   plain memory ([`shared`]); what JS calls on it directly: channel operations
//!   ([`direct`]), pipeline changes ([`pipelines`], with the built-in handlers of [`codecs`]
//!   and the channel [`options`]), TLS answers ([`tls_info`]) and the TLS contexts by id
//!   ([`tls_contexts`]), WebSocket topics ([`topics`]).
//! - The byte layouts JS reads and writes: HTTP ([`http_wire`], [`http_client_wire`]), RESP
//!   ([`resp_wire`]), WebSocket ([`ws_wire`]), file regions ([`file_wire`]), PROXY headers
//!   ([`haproxy_wire`]), and the record layout itself ([`record`]); fixed samples of them for
//!   the TS round-trip spec ([`samples`]).
//! - The native side of the JS timers: one loop timer for the earliest JS deadline
//!   ([`timers`]); the options of a loop attached to JS, with the binding's defaults
//!   ([`loop_options`]).
//! - The registries: process-wide ([`registry`], [`remote`]) and per thread
//!   ([`thread_context`], [`token`]).
//! - Logging in a Node process (off unless `NETLOOP_DEBUG`) and the test hooks' switch
//!   ([`logging`]).
//!
//! The JS side reaches this crate only through a [`delivery::Surface`] (one call per batch),
//! the timers' `on_fire` callback, and the plain data crates/node converts: numbers, byte
//! slices, strings, [`error::WireError`].
//! Why the split: docs/decisions/0018-binding-structure.md.
#![deny(clippy::undocumented_unsafe_blocks)]
#![deny(clippy::multiple_unsafe_ops_per_block)]

pub mod acceptor;
pub mod adapter;
pub mod big;
pub mod codecs;
pub mod delivery;
pub mod direct;
pub mod error;
pub mod file_wire;
pub mod haproxy_wire;
pub mod held;
pub mod http_client_wire;
pub mod http_wire;
pub mod hub;
pub(crate) mod ids;
pub mod logging;
pub mod loop_options;
mod op_messages;
pub mod ops;
pub mod options;
pub mod outbox;
pub mod pipelines;
pub mod protocol;
pub mod record;
pub mod registry;
pub mod remote;
pub mod resp_wire;
pub mod samples;
pub mod shared;
mod slots;
mod start;
pub mod thread_context;
pub mod timers;
pub mod tls_contexts;
pub mod tls_info;
pub mod token;
pub mod topics;
mod user_event_wire;
pub mod ws_wire;

pub use delivery::Surface;
pub use error::{WireError, WireResult};
pub use hub::Hub;
