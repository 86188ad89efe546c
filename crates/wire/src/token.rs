//! JS values inside the native pipeline. A JS value that crosses into native code (a message,
//! a user event, an error) stays in a table on the JS side; native code carries its token.
//!
//! Ground rules:
//! - A value token is handed back to JS at most once: when it reaches a JS context again it
//!   is *taken* (JS removes the table entry as it reads it). A value token dropped by native
//!   code (a decoder discarding it, a failed write) is *released*: the hub tells JS.
//! - An error token may be shared (one close fails many writes with the same error), so JS
//!   keeps the entry until the last native copy drops and the hub releases it.
//! - Drops are recorded in the thread's context (`released`, crate::thread_context) that each
//!   hub drains when it delivers; a token dropped on another thread (not done by this
//!   binding) would leak one table entry.

use std::cell::Cell;
use std::fmt;

use crate::thread_context;

fn release(hub: u32, token: f64) {
    thread_context::with(|c| c.released.borrow_mut().push((hub, token)));
}

/// Takes the tokens hub `hub` must release.
pub fn drain_released(hub: u32, out: &mut Vec<f64>) {
    thread_context::with(|c| {
        c.released.borrow_mut().retain(|&(h, t)| {
            if h == hub {
                out.push(t);
                false
            } else {
                true
            }
        })
    });
}

/// A JS value carried as a pipeline message or user event.
pub struct JsValue {
    hub: u32,
    token: Cell<f64>,
}

impl JsValue {
    pub fn new(hub: u32, token: f64) -> Self {
        JsValue {
            hub,
            token: Cell::new(token),
        }
    }

    /// The token, handed back to JS (which removes the entry): the drop no longer releases.
    pub fn take(&self) -> f64 {
        self.token.replace(0.0)
    }
}

impl Drop for JsValue {
    fn drop(&mut self) {
        let t = self.token.get();
        if t != 0.0 {
            release(self.hub, t);
        }
    }
}

/// A JS exception travelling through the native pipeline as a `TransportError::Foreign`.
pub struct JsError {
    hub: u32,
    token: f64,
    code: String,
    message: String,
}

impl JsError {
    pub fn new(hub: u32, token: f64, code: String, message: String) -> Self {
        JsError {
            hub,
            token,
            code,
            message,
        }
    }

    /// The token of the JS error object (JS keeps the entry until the release).
    pub fn token_for(&self, hub: u32) -> Option<f64> {
        (self.hub == hub).then_some(self.token)
    }
}

impl Drop for JsError {
    fn drop(&mut self) {
        release(self.hub, self.token);
    }
}

impl fmt::Debug for JsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsError({}: {})", self.code, self.message)
    }
}

impl fmt::Display for JsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for JsError {}
