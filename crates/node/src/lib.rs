//! napi-rs binding of netloop. Thin by design: the libuv bridge that drives attached loops
//! ([`bridge`]), the JS-facing handles, and the mapping of core errors to JS error codes
//! ([`error`]). No engine logic lives here. The binding prints nothing unless
//! `NETLOOP_DEBUG=1`; test hooks work only on loops made with `NETLOOP_TEST_HOOKS=1`.
#![deny(clippy::undocumented_unsafe_blocks)]
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
