//! The wire between the channel hub and its JS side: record layouts and kind codes.
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
//! The same constants are exported to JS (`channelWire()`) and checked there at load time.

/// f64 fields per record.
pub const RECORD: usize = 6;

// ---- inbound events (native → JS at a JS context; JS → native fired from a JS context) ----
pub const REGISTERED: u32 = 1;
pub const UNREGISTERED: u32 = 2;
pub const ACTIVE: u32 = 3;
pub const INACTIVE: u32 = 4;
/// `a` = offset, `b` = length in the byte arena.
pub const READ_BYTES: u32 = 5;
/// `a` = value token.
pub const READ_VALUE: u32 = 6;
pub const READ_COMPLETE: u32 = 7;
/// `b` = what: 0 value token in `a`, 1 idle (`a` = state * 2 + first), 2 input shutdown.
pub const USER_EVENT: u32 = 8;
/// `USER_EVENT`'s `b` for a TLS handshake's completion (`a` = -1 success, else error index).
pub const USER_TLS_HANDSHAKE: f64 = 3.0;
/// `USER_EVENT`'s `b` for the peer's close_notify.
pub const USER_TLS_CLOSE: f64 = 4.0;
/// `b` = 1: native error at string index `a` (code, message); 2: JS error token in `a`.
pub const EXCEPTION: u32 = 9;
pub const WRITABILITY: u32 = 10;
/// JS → native only: `a` = index into the big-chunk array of the `applyOps` call.
pub const READ_BIG: u32 = 11;
/// A decoded RESP value: `a` = offset, `b` = length of its tag form (resp_wire.rs) in the arena.
pub const READ_RESP: u32 = 12;
/// A decoded HTTP request or body piece: `a` = offset, `b` = length of its layout (http_wire.rs,
/// a kind byte first) in the arena.
pub const READ_HTTP: u32 = 13;

// ---- outbound operations (native → JS at a JS context; JS → native passed on from one) ----
/// `a` = offset, `b` = length, `c` = promise.
pub const WRITE_BYTES: u32 = 20;
/// `a` = value token, `c` = promise.
pub const WRITE_VALUE: u32 = 21;
pub const FLUSH: u32 = 22;
pub const READ: u32 = 23;
/// `c` = promise.
pub const CLOSE: u32 = 24;
/// JS → native only: `a` = big-chunk index, `c` = promise.
pub const WRITE_BIG: u32 = 25;
/// JS → native only: RESP replies in tag form at `a`, `b` bytes in the op arena; `c` = promise.
pub const WRITE_RESP: u32 = 26;
/// JS → native only: an HTTP response or body chunk (http_wire.rs) at `a`, `b` bytes in the op
/// arena (`b` < 0: big-chunk index `a`); `c` = promise.
pub const WRITE_HTTP: u32 = 27;

// ---- hub events (native → JS) ----
/// `a` = promise id, `b` = 0 success, 1 native error at string index `c`, 2 JS error token `c`.
pub const PROMISE_DONE: u32 = 30;
/// `channel` = the new channel, `a` = its server channel.
pub const NEW_CHANNEL: u32 = 31;
/// The channel closed (its close future completed).
pub const CLOSED: u32 = 32;
/// `a` = a token native code dropped without handing it back.
pub const RELEASE: u32 = 33;
/// The channel is closed and unregistered: it left the hub (JS tears its pipeline down).
pub const FORGET: u32 = 34;
/// An exception reached the native tail of the channel's pipeline (`b`/`a` as `EXCEPTION`).
pub const UNHANDLED: u32 = 35;
/// The channel's `SslHandler` finished its handshake: `a` = -1 on success, else the string
/// index of the error (whatever handlers sit behind the TLS handler).
pub const TLS_HANDSHAKE: u32 = 36;

// ---- hub ops (JS → native) ----
/// `a` = a native promise id, `b` = 0 success or 2 JS error token in `c`.
pub const COMPLETE_PROMISE: u32 = 40;
/// Registers the channel on its loop (after JS ran its initializer).
pub const REGISTER: u32 = 41;

/// Promise ids: 0 is the silent void promise (a write made without a promise: its failure is
/// not reported, Netty's `write(msg)`); `VOID_FIRING` is the channel's `voidPromise()` (a
/// failure goes to `exceptionCaught`); positive ids are JS's; ids below `VOID_FIRING` name
/// native promises the hub holds for JS.
pub const VOID_FIRING: f64 = -1.0;

/// Every constant by name, for the JS side's load-time check.
pub const ALL: &[(&str, u32)] = &[
    ("RECORD", RECORD as u32),
    ("REGISTERED", REGISTERED),
    ("UNREGISTERED", UNREGISTERED),
    ("ACTIVE", ACTIVE),
    ("INACTIVE", INACTIVE),
    ("READ_BYTES", READ_BYTES),
    ("READ_VALUE", READ_VALUE),
    ("READ_COMPLETE", READ_COMPLETE),
    ("USER_EVENT", USER_EVENT),
    ("EXCEPTION", EXCEPTION),
    ("WRITABILITY", WRITABILITY),
    ("READ_BIG", READ_BIG),
    ("READ_RESP", READ_RESP),
    ("READ_HTTP", READ_HTTP),
    ("WRITE_BYTES", WRITE_BYTES),
    ("WRITE_VALUE", WRITE_VALUE),
    ("FLUSH", FLUSH),
    ("READ", READ),
    ("CLOSE", CLOSE),
    ("WRITE_BIG", WRITE_BIG),
    ("WRITE_RESP", WRITE_RESP),
    ("WRITE_HTTP", WRITE_HTTP),
    ("PROMISE_DONE", PROMISE_DONE),
    ("NEW_CHANNEL", NEW_CHANNEL),
    ("CLOSED", CLOSED),
    ("RELEASE", RELEASE),
    ("FORGET", FORGET),
    ("UNHANDLED", UNHANDLED),
    ("TLS_HANDSHAKE", TLS_HANDSHAKE),
    ("COMPLETE_PROMISE", COMPLETE_PROMISE),
    ("REGISTER", REGISTER),
];
