//! The wire between the channel hub and its JS side: how records travel. The codes themselves
//! are defined once in [`crate::protocol`] and named there by every use (`WireKind::Active as
//! u32`, `Outcome::Success.value()`, [`RecordValue`]); nothing here repeats them.
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

use crate::outbox::ErrorRef;
use crate::protocol::{Outcome, RecordField, RecordValue as _};
#[cfg(doc)]
use crate::protocol::{RecordValue, WireKind};

/// f64 fields per record.
pub const RECORD: usize = RecordField::Length as usize;

/// A record's error fields: the error's string index or token, and its [`Outcome`].
pub fn error_fields(r: ErrorRef) -> (f64, f64) {
    match r {
        ErrorRef::Native(i) => (i, Outcome::NativeError.value()),
        ErrorRef::Js(t) => (t, Outcome::JsError.value()),
    }
}
