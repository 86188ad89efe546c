//! napi-rs binding of netloop: the `#[napi]` classes and functions JS calls, the conversions
//! between JS values and the engine's plain data, and the libuv bridge that drives attached
//! loops ([`bridge`]) and calls into JS ([`dispatch`], the hub's deliveries). The mapping of
//! core errors to JS error codes is [`error`]. The engine of the boundary (the protocol, the
//! per-loop channel hub with its outbox, ops and batched delivery, the byte layouts, the
//! registries) is `netloop_wire`, which has no napi in it (docs/decisions/0018). The binding
//! prints nothing unless `NETLOOP_DEBUG=1`; test hooks work only on loops made with
//! `NETLOOP_TEST_HOOKS=1`.
#![deny(clippy::undocumented_unsafe_blocks)]
// One unsafe operation per block, each with its SAFETY comment; a function whose block is one
// protocol of FFI calls under one precondition says so in an `allow` with its reason.
#![deny(clippy::multiple_unsafe_ops_per_block)]
#![warn(missing_docs)]
#![warn(missing_debug_implementations)]
// The #[napi] exports are called from JS. In builds of the test targets napi-derive is `noop`
// (the dev-dependency in Cargo.toml; `--all-targets` unifies it into the lib's build too), so
// nothing registers them and the compiler sees them unused.
#![allow(dead_code)]

mod bridge;
mod channel;
mod dispatch;
mod error;
mod event_loop;
mod registry;
mod thread_context;
mod tls;

/// The boundary protocol (defined in `netloop_wire`; exported to JS from there).
pub use netloop_wire::protocol;

pub use channel::NativeChannels;
pub use event_loop::NativeEventLoop;
pub use tls::NativeSslContext;
