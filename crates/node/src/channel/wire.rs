//! The wire between the channel hub and its JS side: how records travel. The codes themselves
//! are defined once in [`crate::protocol`]; the constants here are short aliases of them for
//! the binding's older code (derived, never written twice); new code names the enum
//! variant (`WireKind::TlsHandshake as u32`).
//!
//! Both directions use `Float64Array`s shared with JS (no napi call per record):
//! - events (native → JS): `[kind, channel, ctx, a, b, c] × n`, delivered in one dispatch call
//!   per batch together with one `Buffer` (the byte arena the records' offsets point into) and
//!   an array of strings (error codes and messages) when a batch carries native errors;
//! - ops (JS → native): `[count, (kind, channel, ctx, a, b, c) × n]` plus a byte arena
//!   (`Uint8Array`) that JS fills with the bytes of small writes. JS writes ops during a
//!   dispatch call and the hub applies them when the call returns; outside a dispatch JS
//!   calls `applyOps` (once per microtask checkpoint).
//!
//! `ctx` is the id of the JS context an event is for (or comes from); 0 means the pipeline's
//! head (inbound ops fired by `pipeline.fire*`) or its tail (outbound ops of `channel.write`).
//! Each kind's payload (`a`, `b`, `c`) is documented on its [`WireKind`] variant.

use super::outbox::ErrorRef;
use crate::protocol::{
    ErrorIndex, Outcome, PromiseId, RecordField, ServerId, UserEventKind, WireKind,
};

/// f64 fields per record.
pub const RECORD: usize = RecordField::Length as usize;

pub const REGISTERED: u32 = WireKind::Registered as u32;
pub const UNREGISTERED: u32 = WireKind::Unregistered as u32;
pub const ACTIVE: u32 = WireKind::Active as u32;
pub const INACTIVE: u32 = WireKind::Inactive as u32;
pub const READ_BYTES: u32 = WireKind::ReadBytes as u32;
pub const READ_VALUE: u32 = WireKind::ReadValue as u32;
pub const READ_COMPLETE: u32 = WireKind::ReadComplete as u32;
pub const USER_EVENT: u32 = WireKind::UserEvent as u32;
pub const EXCEPTION: u32 = WireKind::Exception as u32;
pub const WRITABILITY: u32 = WireKind::WritabilityChanged as u32;
pub const READ_BIG: u32 = WireKind::ReadBig as u32;
pub const READ_RESP: u32 = WireKind::ReadResp as u32;
pub const READ_HTTP: u32 = WireKind::ReadHttp as u32;
pub const READ_WS: u32 = WireKind::ReadWs as u32;
pub const WRITE_BYTES: u32 = WireKind::WriteBytes as u32;
pub const WRITE_VALUE: u32 = WireKind::WriteValue as u32;
pub const FLUSH: u32 = WireKind::Flush as u32;
pub const READ: u32 = WireKind::Read as u32;
pub const CLOSE: u32 = WireKind::Close as u32;
pub const WRITE_BIG: u32 = WireKind::WriteBig as u32;
pub const WRITE_RESP: u32 = WireKind::WriteResp as u32;
pub const WRITE_HTTP: u32 = WireKind::WriteHttp as u32;
pub const WRITE_FILE: u32 = WireKind::WriteFile as u32;
pub const WRITE_WS: u32 = WireKind::WriteWs as u32;
pub const WRITE_BYTES_FLUSH: u32 = WireKind::WriteBytesFlush as u32;
pub const PROMISE_DONE: u32 = WireKind::PromiseDone as u32;
pub const NEW_CHANNEL: u32 = WireKind::NewChannel as u32;
pub const CLOSED: u32 = WireKind::Closed as u32;
pub const RELEASE: u32 = WireKind::Release as u32;
pub const FORGET: u32 = WireKind::Forget as u32;
pub const UNHANDLED: u32 = WireKind::Unhandled as u32;
pub const COMPLETE_PROMISE: u32 = WireKind::CompletePromise as u32;
pub const REGISTER: u32 = WireKind::Register as u32;

/// `USER_EVENT`'s `b` for a JS value (token in `a`).
pub const USER_TOKEN: f64 = UserEventKind::Token as i32 as f64;
/// `USER_EVENT`'s `b` for an idle event (`a` = state * 2 + first).
pub const USER_IDLE: f64 = UserEventKind::Idle as i32 as f64;
/// `USER_EVENT`'s `b` for `ChannelInputShutdownEvent`.
pub const USER_INPUT_SHUTDOWN: f64 = UserEventKind::InputShutdown as i32 as f64;
/// `USER_EVENT`'s `b` for a TLS handshake's completion.
pub const USER_TLS_HANDSHAKE: f64 = UserEventKind::TlsHandshake as i32 as f64;
/// `USER_EVENT`'s `b` for the peer's close_notify.
pub const USER_TLS_CLOSE: f64 = UserEventKind::TlsClose as i32 as f64;
/// [`UserEventKind::HAProxy`].
pub const USER_HAPROXY: f64 = UserEventKind::HAProxy as i32 as f64;
/// [`UserEventKind::WebSocketHandshake`].
pub const USER_WS_HANDSHAKE: f64 = UserEventKind::WebSocketHandshake as i32 as f64;

/// The channel's `voidPromise()` id ([`PromiseId::VoidFiring`]); ids below it name native
/// promises the hub holds for JS.
pub const VOID_FIRING: f64 = PromiseId::VoidFiring as i32 as f64;

/// `NEW_CHANNEL`'s server id for a channel handed over from another thread.
pub const REMOTE_SERVER: f64 = ServerId::Remote as i32 as f64;
/// The string index of "no error" (a TLS handshake that succeeded).
pub const NO_ERROR: f64 = ErrorIndex::None as i32 as f64;
/// `b` of a record that reports success.
pub const SUCCESS: f64 = Outcome::Success as i32 as f64;
/// `b` of a record that carries a native error at string index `a` (or `c`).
pub const NATIVE_ERROR: f64 = Outcome::NativeError as i32 as f64;
/// `b` of a record that carries a JS error token.
pub const JS_ERROR: f64 = Outcome::JsError as i32 as f64;

/// A record's error fields: the error's string index or token, and its [`Outcome`].
pub fn error_fields(r: ErrorRef) -> (f64, f64) {
    match r {
        ErrorRef::Native(i) => (i, NATIVE_ERROR),
        ErrorRef::Js(t) => (t, JS_ERROR),
    }
}
