//! napi-rs binding of netloop: the libuv bridge that drives attached loops ([`bridge`]), the
//! JS-facing handles, the mapping of core errors to JS error codes ([`error`]), and (not thin)
//! the engine of the JS boundary: the per-loop channel hub with its outbox, ops and batched
//! delivery (with its time budget), the registries, and the byte layouts of the records JS
//! reads ([`channel`], [`protocol`]). Moving that engine into a napi-free crate, tested with
//! plain `cargo test`, is open work (docs/decisions/0018-binding-structure.md). The binding
//! prints nothing unless `NETLOOP_DEBUG=1`; test hooks work only on loops made with
//! `NETLOOP_TEST_HOOKS=1`.
#![deny(clippy::undocumented_unsafe_blocks)]
// One unsafe operation per block, each with its SAFETY comment; a function whose block is one
// protocol of FFI calls under one precondition says so in an `allow` with its reason.
#![deny(clippy::multiple_unsafe_ops_per_block)]
#![warn(missing_docs)]
#![warn(missing_debug_implementations)]
// The #[napi] exports are called from JS, not from this crate's unit tests.
#![cfg_attr(test, allow(dead_code))]

mod bridge;
mod channel;
mod dispatch;
mod error;
mod event_loop;
pub mod protocol;
mod registry;
mod thread_context;
mod timers;
mod tls;

pub use channel::NativeChannels;
pub use event_loop::NativeEventLoop;
pub use tls::NativeSslContext;
