//! napi-rs binding of netloop. Thin by design: the libuv bridge that drives attached loops
//! ([`bridge`]), the JS-facing handles, and the mapping of core errors to JS error codes
//! ([`error`]). No engine logic lives here.
#![deny(clippy::undocumented_unsafe_blocks)]

mod bridge;
mod channel;
mod dispatch;
mod error;
mod event_loop;
mod timers;

pub use channel::NativeChannels;
pub use event_loop::NativeEventLoop;
