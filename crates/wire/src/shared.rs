//! The typed arrays a hub shares with its JS side: event records (native writes, JS reads),
//! op records (JS writes, native reads), the write arena (JS writes bytes, native copies) and
//! a channel's writability (native writes, JS reads right after the call that wrote it).
//!
//! Ground rules: JS thread only, and never while JS runs: JS and native code take turns on
//! one thread, so no slice made here outlives the native call that made it. Each array is
//! kept alive by what crates/node hands in with it (a napi reference); JS keeps them private
//! (never detached). Plain memory here: tests use `Vec`s.

use std::any::Any;
use std::fmt;

use bytes::Bytes;

use crate::record::RECORD;

/// A typed array's memory and what keeps it alive (crates/node's napi reference; a `Vec` in
/// tests), dropped with it.
pub struct Shared<T> {
    data: *mut T,
    len: usize,
    _keep: Box<dyn Any>,
}

impl<T> Shared<T> {
    /// A view of `len` elements at `data`, kept alive by `keep`.
    ///
    /// # Safety
    /// `data` must point to `len` initialised elements that stay valid, and are neither
    /// moved nor freed, while `keep` lives; nothing else may touch them while a method of
    /// this view runs (JS and native code take turns on one thread).
    pub unsafe fn new(data: *mut T, len: usize, keep: Box<dyn Any>) -> Self {
        Shared {
            data,
            len,
            _keep: keep,
        }
    }

    /// The array's memory as a view kept alive by the `Vec` itself (tests, and hubs that
    /// share nothing with JS).
    pub fn of_vec(mut v: Vec<T>) -> Self
    where
        T: 'static,
    {
        let (data, len) = (v.as_mut_ptr(), v.len());
        // SAFETY: a `Vec`'s heap buffer does not move when the `Vec` is moved into the box,
        // and lives as long as it; only this view reaches it.
        unsafe { Shared::new(data, len, Box::new(v)) }
    }

    /// Runs `f` on the array's elements.
    fn with<R>(&self, f: impl FnOnce(&mut [T]) -> R) -> R {
        // SAFETY: `data` points to `len` elements kept alive by `_keep` (the contract of
        // `new`); JS does not run while native code holds this slice (module rules), and `f`
        // cannot reach another slice of it (none escapes this call).
        let slice = unsafe { std::slice::from_raw_parts_mut(self.data, self.len) };
        f(slice)
    }
}

impl<T> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared").field("len", &self.len).finish()
    }
}

/// The four arrays of one hub.
#[derive(Debug)]
pub struct SharedArrays {
    /// Event records (native writes, JS reads).
    pub events: Shared<f64>,
    /// Op records (JS writes, native reads), after their count.
    pub ops: Shared<f64>,
    /// The write arena: JS writes bytes, native code copies them.
    pub arena: Shared<u8>,
    /// `NativeChannels::writability`'s answer, by `WritabilitySlot` (no JS array per call).
    pub state: Shared<f64>,
}

impl SharedArrays {
    /// Records that fit in the events array.
    pub fn event_capacity(&self) -> usize {
        (self.events.len / RECORD).max(1)
    }

    /// Copies up to `event_capacity` records into the events array; returns how many.
    pub fn put_events(&self, records: &[f64]) -> usize {
        self.events.with(|buf| {
            let n = records.len().min(buf.len());
            buf[..n].copy_from_slice(&records[..n]);
            n / RECORD
        })
    }

    /// Writes `values` at the start of the state array (as many as fit).
    pub fn put_state(&self, values: &[f64]) {
        self.state.with(|buf| {
            let n = values.len().min(buf.len());
            buf[..n].copy_from_slice(&values[..n]);
        })
    }

    /// True while JS has buffered ops.
    pub fn has_ops(&self) -> bool {
        self.ops.with(|buf| buf.first().is_some_and(|n| *n > 0.0))
    }

    /// The ops JS buffered (`[count, records…]`), leaving the buffer empty.
    pub fn take_ops(&self) -> Vec<f64> {
        self.ops.with(|buf| {
            if buf.is_empty() {
                return Vec::new();
            }
            let cap = (buf.len() - 1) / RECORD;
            let n = (buf[0].max(0.0) as usize).min(cap);
            buf[0] = 0.0;
            buf[1..1 + n * RECORD].to_vec()
        })
    }

    /// Calls `f` with `len` arena bytes at `off` (clamped to the arena), without a copy. `f`
    /// runs no JS (the slice is JS's memory).
    pub fn arena_view<R>(&self, off: usize, len: usize, f: impl FnOnce(&[u8]) -> R) -> R {
        self.arena.with(|buf| {
            let start = off.min(buf.len());
            let end = off.saturating_add(len).min(buf.len());
            f(&buf[start..end])
        })
    }

    /// A copy of `len` arena bytes at `off` (clamped to the arena), carved from the thread's
    /// chunk when small.
    pub fn arena_bytes(&self, off: usize, len: usize) -> Bytes {
        self.arena.with(|buf| {
            let start = off.min(buf.len());
            let end = off.saturating_add(len).min(buf.len());
            netloop_transport::chunk::copy(&buf[start..end])
        })
    }
}
