//! The hub's deliveries into JS: [`JsSurface`] makes one batch's JS values (the byte arena as
//! a Buffer, pooled or handed over, the strings, the large reads as external Buffers) and
//! calls the loop's dispatch function once per fill of the shared record buffer; the rounds,
//! their budget and the batching are `netloop_wire::delivery`'s. Also the loop bridge's
//! iteration hook for a hub. Ground rules as in `netloop_wire::hub`: no borrow of the outbox
//! is held while JS runs.

use std::ptr;
use std::rc::{Rc, Weak};
use std::time::Instant;

use bytes::Bytes;
use napi::sys;
use netloop_wire::outbox::Outbox;
use netloop_wire::{Hub, Surface};

use crate::bridge::{Bridge, Dispatch, IterationHook};

impl IterationHook for Hub {
    fn after_iteration(self: Rc<Self>) {
        Hub::after_iteration(&self);
    }
    fn keeps_alive(&self) -> bool {
        Hub::keeps_alive(self)
    }
    fn loop_closed(&self) {
        self.unregister();
    }
}

/// A hub's JS side: its env and its loop's bridge (the one entry point into JS).
#[derive(Debug)]
pub struct JsSurface {
    env: sys::napi_env,
    bridge: Weak<Bridge>,
}

impl JsSurface {
    pub fn new(env: sys::napi_env, bridge: &Rc<Bridge>) -> Self {
        JsSurface {
            env,
            bridge: Rc::downgrade(bridge),
        }
    }
}

impl Surface for JsSurface {
    fn iteration_started(&self) -> Instant {
        self.bridge
            .upgrade()
            .map_or_else(Instant::now, |b| b.iteration_started())
    }

    /// One batch to JS, in as many calls as the shared record buffer needs.
    #[allow(
        clippy::multiple_unsafe_ops_per_block,
        reason = "building the arguments of one call into JS (values made in the one open handle scope) and the call itself form one sequence under one precondition"
    )]
    fn deliver(&self, hub: &Hub, batch: &mut Outbox) {
        let env = self.env;
        let m = &hub.metrics;
        let bridge = self.bridge.upgrade();
        // No handle scope of its own: a few values a call, at most `MAX_ROUNDS` deliveries an
        // iteration, and napi allocates a wrapper for every scope opened.
        // SAFETY: a delivery runs only in a loop iteration (the bridge's `run_one`, after the
        // loop's I/O), on the env's thread, inside the iteration's handle scope.
        unsafe {
            let mut undefined = ptr::null_mut();
            sys::napi_get_undefined(env, &mut undefined);
            if let Some(bridge) = bridge {
                let arena_released = batch.arena_released();
                let (segments, segment_values) =
                    make_segments(env, std::mem::take(&mut batch.segments))
                        .unwrap_or((undefined, Vec::new()));
                // The Buffers detached when the calls return: the released segments, and the
                // batch's own Buffer when every byte of it is a released read (not the pool,
                // which other batches share).
                let mut detached: Vec<sys::napi_value> = batch
                    .released_segments
                    .iter()
                    .filter_map(|&i| segment_values.get(i).copied())
                    .collect();
                let (arena, base) = match super::read_pool::pooled(env, &batch.bytes) {
                    Some((pool, at)) => (pool, at as f64),
                    None => {
                        let (buffer, whole) = make_buffer(env, &mut batch.bytes);
                        if let Some(whole) = whole {
                            netloop_wire::big::lend(hub.id, std::slice::from_ref(&whole));
                        }
                        if let (Some(buffer), true) = (buffer, arena_released) {
                            detached.push(buffer);
                        }
                        (buffer.unwrap_or(undefined), -1.0)
                    }
                };
                let mut base_value = ptr::null_mut();
                sys::napi_create_double(env, base, &mut base_value);
                let strings = make_strings(env, &batch.strings).unwrap_or(undefined);
                // Through the loop's one entry point into JS (it reports what escapes).
                hub.put_in_calls(&batch.records, |n| {
                    bridge.call_with(
                        Dispatch::Channels,
                        n as f64,
                        &[arena, strings, base_value, segments],
                    );
                });
                // Every write JS made of these Buffers was applied before its call returned
                // (`OpStream` applies big chunks at the end of a dispatch) and became a slice
                // of the read (`big.rs`): nothing native points into their memory.
                let released: usize = detached.iter().map(|&b| detach(env, b)).sum();
                m.bytes_released
                    .set(m.bytes_released.get() + released as f64);
            }
        }
    }
}

/// Batches of at least this many bytes are handed to JS without a copy: an external Buffer
/// owns the batch's bytes and frees them when collected. Smaller ones are copied, which costs
/// less than the finalizer an external Buffer registers. 8 KiB is also the size from which JS
/// writes a Buffer without copying it (`BORROW_MIN` in `src/op-stream.ts`): every message JS
/// can write back that way then lies in a batch the hub lent (`big.rs`), so writing it back
/// never holds the JS Buffer.
const HAND_OVER_BYTES: usize = 8 * 1024;

/// A Buffer holding the batch's `bytes` (undefined when empty), and the bytes themselves when
/// the Buffer was made over them without a copy (taken out of `bytes`; to be lent, see
/// `big.rs`).
///
/// # Safety
/// A handle scope must be open on the env's thread.
unsafe fn make_buffer(
    env: sys::napi_env,
    bytes: &mut Vec<u8>,
) -> (Option<sys::napi_value>, Option<Bytes>) {
    if bytes.is_empty() {
        return (None, None);
    }
    if bytes.len() < HAND_OVER_BYTES {
        let (mut data, mut value) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: per the function's contract; napi copies `bytes.len()` bytes from the slice.
        let ok = unsafe {
            sys::napi_create_buffer_copy(
                env,
                bytes.len(),
                bytes.as_ptr().cast(),
                &mut data,
                &mut value,
            )
        };
        return ((ok == sys::Status::napi_ok).then_some(value), None);
    }
    // Handed over: the outbox keeps no capacity this large for its next batch.
    let bytes = Bytes::from(std::mem::take(bytes));
    // SAFETY: per the function's contract.
    let value = unsafe { external_buffer(env, bytes.clone()) };
    let lent = value.is_some().then_some(bytes);
    (value, lent)
}

/// An external Buffer over `bytes`' memory, owning them (a refcount; the memory is never
/// reused while a `Bytes` refers to it): JS may write into it as into any Buffer it received.
/// Native code reads it again only when JS writes (part of) it back, through the hub's lent
/// table (`big.rs`), which then sends what JS left in it.
///
/// # Safety
/// A handle scope must be open on the env's thread.
unsafe fn external_buffer(env: sys::napi_env, bytes: Bytes) -> Option<sys::napi_value> {
    let owned = Box::new(bytes);
    let (data, len) = (owned.as_ptr(), owned.len());
    let hint = Box::into_raw(owned);
    let mut value = ptr::null_mut();
    // SAFETY: `data` stays valid while the box lives, and napi calls `free_bytes` with `hint`
    // exactly once, when the Buffer is collected (or at env teardown).
    let ok = unsafe {
        sys::napi_create_external_buffer(
            env,
            len,
            data.cast_mut().cast(),
            Some(free_bytes),
            hint.cast(),
            &mut value,
        )
    };
    if ok != sys::Status::napi_ok {
        // SAFETY: napi did not take the hint: it is still ours to free, once.
        drop(unsafe { Box::from_raw(hint) });
        return None;
    }
    Some(value)
}

/// Frees the bytes of a Buffer made by [`external_buffer`] once it is collected.
///
/// # Safety
/// Called by napi only, once, as the finalizer of such a Buffer: `hint` is the `Box<Bytes>`
/// that `external_buffer` leaked for it.
unsafe extern "C" fn free_bytes(
    _env: sys::napi_env,
    _data: *mut std::ffi::c_void,
    hint: *mut std::ffi::c_void,
) {
    // SAFETY: `hint` is the `Box<Bytes>` leaked by `external_buffer`; napi passes it here once.
    drop(unsafe { Box::from_raw(hint.cast::<Bytes>()) });
}

/// Detaches `buffer`'s ArrayBuffer: every view of it, kept or not, becomes empty, and its
/// memory is returned now (an external Buffer's `Bytes` are dropped by its finalizer) instead
/// of when V8 next collects. Returns the bytes the Buffer viewed (0 if it could not).
///
/// # Safety
/// A handle scope must be open on the env's thread and `buffer` a Buffer made in it.
unsafe fn detach(env: sys::napi_env, buffer: sys::napi_value) -> usize {
    let (mut kind, mut len, mut data, mut ab, mut offset) =
        (0, 0, ptr::null_mut(), ptr::null_mut(), 0);
    // SAFETY: per the function's contract; out-pointers are valid locals.
    let info = unsafe {
        sys::napi_get_typedarray_info(
            env,
            buffer,
            &mut kind,
            &mut len,
            &mut data,
            &mut ab,
            &mut offset,
        )
    };
    if info != sys::Status::napi_ok {
        return 0;
    }
    // SAFETY: `ab` is the Buffer's ArrayBuffer, a handle of the same open scope.
    let detached = unsafe { sys::napi_detach_arraybuffer(env, ab) };
    if detached == sys::Status::napi_ok {
        len
    } else {
        0
    }
}

/// An array of external Buffers, one per large read, each owning its `Bytes`, and the Buffers
/// by index (`None` when there are none).
///
/// # Safety
/// A handle scope must be open on the env's thread.
unsafe fn make_segments(
    env: sys::napi_env,
    segments: Vec<Bytes>,
) -> Option<(sys::napi_value, Vec<sys::napi_value>)> {
    if segments.is_empty() {
        return None;
    }
    let mut values = Vec::with_capacity(segments.len());
    let mut arr = ptr::null_mut();
    // SAFETY: per the function's contract.
    if unsafe { sys::napi_create_array_with_length(env, segments.len(), &mut arr) }
        != sys::Status::napi_ok
    {
        return None;
    }
    for (i, seg) in segments.into_iter().enumerate() {
        // SAFETY: per the function's contract.
        let value = unsafe { external_buffer(env, seg) }.unwrap_or_else(|| {
            let mut empty = ptr::null_mut();
            // SAFETY: as above; an empty Buffer stands in for the lost read.
            unsafe { sys::napi_create_buffer(env, 0, ptr::null_mut(), &mut empty) };
            empty
        });
        // SAFETY: `arr` and `value` are handles of the open scope.
        unsafe { sys::napi_set_element(env, arr, i as u32, value) };
        values.push(value);
    }
    Some((arr, values))
}

/// An array of JS strings (undefined when empty).
///
/// # Safety
/// A handle scope must be open on the env's thread.
#[allow(
    clippy::multiple_unsafe_ops_per_block,
    reason = "making an array and filling it, element by element, in the caller's handle scope: every call has the same precondition"
)]
unsafe fn make_strings(env: sys::napi_env, strings: &[String]) -> Option<sys::napi_value> {
    if strings.is_empty() {
        return None;
    }
    let mut arr = ptr::null_mut();
    // SAFETY: per the function's contract; each string is passed with its length.
    unsafe {
        if sys::napi_create_array_with_length(env, strings.len(), &mut arr) != sys::Status::napi_ok
        {
            return None;
        }
        for (i, s) in strings.iter().enumerate() {
            let mut v = ptr::null_mut();
            sys::napi_create_string_utf8(env, s.as_ptr().cast(), s.len() as isize, &mut v);
            sys::napi_set_element(env, arr, i as u32, v);
        }
    }
    Some(arr)
}
