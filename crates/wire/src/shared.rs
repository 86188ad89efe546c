//! The typed arrays a hub shares with its JS side: event records (native writes, JS reads),
//! op records (JS writes, native reads), the write arena (JS writes bytes, native copies) and
//! a channel's writability (native writes, JS reads right after the call that wrote it).
//!
//! Ground rules: JS thread only, and never while JS runs: JS and native code take turns on
//! one thread, so no slice made here outlives the native call that made it. Each array is
//! kept alive by a napi reference held here; JS keeps them private (never detached).

use std::ptr;

use bytes::Bytes;
use napi::sys;

use super::wire::RECORD;

/// A typed array's memory and the reference that keeps it alive.
pub struct Shared<T> {
    data: *mut T,
    len: usize,
    env: sys::napi_env,
    reference: sys::napi_ref,
}

impl<T> Shared<T> {
    /// Takes hold of `value`, which must be a typed array of `kind`.
    ///
    /// # Safety
    /// `env` must be the live env of the current call and `value` a handle of that call.
    pub unsafe fn new(
        env: sys::napi_env,
        value: sys::napi_value,
        kind: sys::napi_typedarray_type,
    ) -> Option<Self> {
        let (mut k, mut len, mut data) = (0, 0usize, ptr::null_mut());
        let (mut buffer, mut offset, mut reference) = (ptr::null_mut(), 0usize, ptr::null_mut());
        // SAFETY: per the function's contract; out-pointers are valid locals.
        let info = unsafe {
            sys::napi_get_typedarray_info(
                env,
                value,
                &mut k,
                &mut len,
                &mut data,
                &mut buffer,
                &mut offset,
            )
        };
        if info != sys::Status::napi_ok || k != kind {
            return None;
        }
        // SAFETY: as above; `value` is a typed array of the wanted kind.
        let referenced = unsafe { sys::napi_create_reference(env, value, 1, &mut reference) };
        (referenced == sys::Status::napi_ok && !data.is_null()).then_some(Shared {
            data: data.cast(),
            len,
            env,
            reference,
        })
    }

    /// Runs `f` on the array's elements.
    fn with<R>(&self, f: impl FnOnce(&mut [T]) -> R) -> R {
        // SAFETY: `data` points to `len` elements of a typed array kept alive by `reference`
        // and never detached; JS does not run while native code holds this slice (module
        // rules), and `f` cannot reach another slice of it (none escapes this call).
        let slice = unsafe { std::slice::from_raw_parts_mut(self.data, self.len) };
        f(slice)
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // SAFETY: the reference was created on this env, and hubs drop on the env's thread.
        unsafe {
            sys::napi_delete_reference(self.env, self.reference);
        }
    }
}

/// The four arrays of one hub.
pub struct SharedArrays {
    pub events: Shared<f64>,
    pub ops: Shared<f64>,
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
