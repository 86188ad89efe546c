//! The read pool: small delivery batches copied one after the other into one JS Buffer per
//! thread, so that a delivery of a few bytes allocates no ArrayBuffer of its own.
//!
//! Ground rules: one pool per JS thread (one env per thread), used only on that thread inside a
//! delivery (a handle scope open); a region is handed to JS once and never written again.

use std::ptr;

use napi::sys;

/// Batches of at most this many bytes are copied into the thread's read pool (see [`Pool`]).
const POOLED_BYTES: usize = 4 * 1024;
/// The size of a read pool: a kept slice keeps its pool alive (at most 8 batch sizes of it).
const POOL_BYTES: usize = 32 * 1024;

/// A JS Buffer that small batches are copied into one after the other (as Node's pooled
/// Buffers are carved from one allocation), so that a delivery of a few bytes makes no
/// ArrayBuffer of its own: JS gets the pool and the batch's offset in it and takes a
/// `subarray`. A region is written once and never reused (a new pool replaces a full one), so
/// a batch's bytes stay unchanged while JS keeps them.
///
/// Ground rules: one pool per JS thread (one env per thread), used only on that thread inside
/// a delivery; the reference is deleted when the pool is replaced, or leaked at env teardown
/// (napi frees it with the env).
pub(crate) struct Pool {
    env: sys::napi_env,
    reference: sys::napi_ref,
    data: *mut u8,
    used: usize,
}

impl Drop for Pool {
    fn drop(&mut self) {
        if crate::bridge::tearing_down() {
            return;
        }
        // SAFETY: the reference was made on `env`, this thread's env, which is still alive
        // (not tearing down); it is deleted once, here.
        unsafe {
            sys::napi_delete_reference(self.env, self.reference);
        }
    }
}

/// `bytes` copied into the thread's pool: the pool's Buffer and the bytes' offset in it, or
/// `None` for a batch that is empty or too large to pool.
///
/// # Safety
/// A handle scope must be open on the env's thread.
pub(super) unsafe fn pooled(env: sys::napi_env, bytes: &[u8]) -> Option<(sys::napi_value, usize)> {
    if bytes.is_empty() || bytes.len() > POOLED_BYTES {
        return None;
    }
    crate::thread_context::with(|context| {
        let mut slot = context.read_pool.borrow_mut();
        let fits = slot
            .as_ref()
            .is_some_and(|p| p.env == env && POOL_BYTES - p.used >= bytes.len());
        if !fits {
            *slot = None;
            let (mut data, mut value, mut reference) =
                (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
            // SAFETY: per the function's contract; out-pointers are valid locals.
            let made = unsafe { sys::napi_create_buffer(env, POOL_BYTES, &mut data, &mut value) };
            if made != sys::Status::napi_ok || data.is_null() {
                return None;
            }
            // SAFETY: as above; `value` is the Buffer just made in the open scope.
            let referenced = unsafe { sys::napi_create_reference(env, value, 1, &mut reference) };
            if referenced != sys::Status::napi_ok {
                return None;
            }
            *slot = Some(Pool {
                env,
                reference,
                data: data.cast(),
                used: 0,
            });
        }
        let pool = slot.as_mut()?;
        let mut value = ptr::null_mut();
        // SAFETY: the reference was made on this env (we are on its thread) and keeps the pool's
        // Buffer (and its memory) alive; the out-pointer is a valid local.
        let status = unsafe { sys::napi_get_reference_value(env, pool.reference, &mut value) };
        if status != sys::Status::napi_ok || value.is_null() {
            return None;
        }
        // SAFETY: `used + len <= POOL_BYTES` (checked above), so the offset stays inside the
        // pool's allocation.
        let dst = unsafe { pool.data.add(pool.used) };
        // SAFETY: `dst..dst + len` is inside the live pool (kept by the reference), has never
        // been handed to JS, and does not overlap `bytes` (a Rust-owned slice).
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len()) };
        let at = pool.used;
        pool.used += bytes.len();
        Some((value, at))
    })
    .flatten()
}
