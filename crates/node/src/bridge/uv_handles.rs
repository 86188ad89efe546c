//! The libuv side of the bridge: handle allocation, the callbacks libuv calls, and the close
//! callbacks that free a handle and release the `Rc<Bridge>` its data owns.

use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::time::Duration;

use libuv_sys_lite as uv;

use super::Bridge;
use crate::error::debug;

pub(super) fn ceil_millis(d: Duration) -> u64 {
    let ms = d.as_nanos().div_ceil(1_000_000).max(1);
    u64::try_from(ms).unwrap_or(u64::MAX / 2).min(u64::MAX / 2)
}

pub(super) fn zeroed_poll() -> uv::uv_poll_t {
    // SAFETY: uv_poll_t is a plain C struct for which all-zero bytes are a valid (uninitialised)
    // value; uv_poll_init fills it in before use.
    unsafe { std::mem::zeroed() }
}

pub(super) fn zeroed_timer() -> uv::uv_timer_t {
    // SAFETY: as for `zeroed_poll`; uv_timer_init fills it in.
    unsafe { std::mem::zeroed() }
}

/// The bridge a handle's data owns, as a new strong ref (the handle keeps its own).
///
/// # Safety
/// `data` must be the `Rc::into_raw` pointer stored by `init`/`start_poll`, not yet released.
unsafe fn bridge_of(data: *mut std::ffi::c_void) -> Rc<Bridge> {
    let p = data as *const Bridge;
    // SAFETY: per the contract the handle owns one strong count; add ours and take it.
    unsafe {
        Rc::increment_strong_count(p);
        Rc::from_raw(p)
    }
}

fn run_guarded(bridge: &Rc<Bridge>, io: bool) {
    if catch_unwind(AssertUnwindSafe(|| bridge.run(io))).is_err() {
        debug(format_args!("a panic was stopped at the libuv boundary"));
        // The scopes were closed by their guard; make sure the loop runs again.
        let _ = catch_unwind(AssertUnwindSafe(|| bridge.rearm()));
    }
}

pub(super) unsafe extern "C" fn on_poll(
    handle: *mut uv::uv_poll_t,
    _status: c_int,
    _events: c_int,
) {
    // SAFETY: an open poll handle's data is its owned Rc (released only by `free_poll`).
    let bridge = unsafe { bridge_of((*handle).data) };
    run_guarded(&bridge, true);
}

pub(super) unsafe extern "C" fn on_timer(handle: *mut uv::uv_timer_t) {
    // SAFETY: as in `on_poll`.
    let bridge = unsafe { bridge_of((*handle).data) };
    run_guarded(&bridge, false);
}

pub(super) unsafe extern "C" fn free_poll(handle: *mut uv::uv_handle_t) {
    // SAFETY: allocated by Box::into_raw in `start_poll`; libuv is done with it. Its data is
    // the Rc stored there (never null: data is set right after a successful init).
    unsafe {
        let h = Box::from_raw(handle.cast::<uv::uv_poll_t>());
        drop(Rc::from_raw(h.data as *const Bridge));
    }
}

pub(super) unsafe extern "C" fn free_timer(handle: *mut uv::uv_handle_t) {
    // SAFETY: as in `free_poll`, for the timer allocated in `init`.
    unsafe {
        let h = Box::from_raw(handle.cast::<uv::uv_timer_t>());
        drop(Rc::from_raw(h.data as *const Bridge));
    }
}
