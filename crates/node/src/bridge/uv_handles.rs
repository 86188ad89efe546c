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
    // SAFETY: per the contract `p` came from `Rc::into_raw` and the handle still owns one
    // strong count, so the allocation is alive: add a count for the Rc returned below.
    unsafe { Rc::increment_strong_count(p) };
    // SAFETY: takes the count added just above (the handle's own stays with the handle).
    unsafe { Rc::from_raw(p) }
}

fn run_guarded(bridge: &Rc<Bridge>, io: bool) {
    if catch_unwind(AssertUnwindSafe(|| bridge.run(io))).is_err() {
        debug(format_args!("a panic was stopped at the libuv boundary"));
        // The scopes were closed by their guard; make sure the loop runs again.
        let _ = catch_unwind(AssertUnwindSafe(|| bridge.rearm()));
    }
}

/// libuv's poll callback: runs the loop's iteration(s) (a panic stops here).
///
/// # Safety
/// Called by libuv only, on the loop's JS thread, with the open poll handle `start_poll`
/// made, whose `data` is the `Rc<Bridge>` it owns (released only by [`free_poll`]).
pub(super) unsafe extern "C" fn on_poll(
    handle: *mut uv::uv_poll_t,
    _status: c_int,
    _events: c_int,
) {
    // SAFETY: per the contract `handle` is a live poll handle, readable here.
    let data = unsafe { (*handle).data };
    // SAFETY: an open poll handle's data is its owned Rc (released only by `free_poll`).
    let bridge = unsafe { bridge_of(data) };
    run_guarded(&bridge, true);
}

/// libuv's timer callback: runs the loop's iteration(s) (a panic stops here).
///
/// # Safety
/// Called by libuv only, on the loop's JS thread, with the open timer handle `init` made,
/// whose `data` is the `Rc<Bridge>` it owns (released only by [`free_timer`]).
pub(super) unsafe extern "C" fn on_timer(handle: *mut uv::uv_timer_t) {
    // SAFETY: per the contract `handle` is a live timer handle, readable here.
    let data = unsafe { (*handle).data };
    // SAFETY: as in `on_poll`.
    let bridge = unsafe { bridge_of(data) };
    run_guarded(&bridge, false);
}

/// libuv's close callback of the poll handle: frees it and releases the `Rc` its data owns.
///
/// # Safety
/// Called by libuv only, once, after `uv_close` of the poll handle `start_poll` allocated with
/// `Box::into_raw` and whose `data` was set (to its `Rc::into_raw`) right after a successful
/// init.
pub(super) unsafe extern "C" fn free_poll(handle: *mut uv::uv_handle_t) {
    // SAFETY: allocated by Box::into_raw in `start_poll`; libuv is done with it (closed).
    let h = unsafe { Box::from_raw(handle.cast::<uv::uv_poll_t>()) };
    // SAFETY: its data is the Rc stored there, released here only.
    drop(unsafe { Rc::from_raw(h.data as *const Bridge) });
}

/// libuv's close callback of the timer handle: frees it and releases the `Rc` its data owns.
///
/// # Safety
/// As for [`free_poll`], for the timer handle `init` allocated.
pub(super) unsafe extern "C" fn free_timer(handle: *mut uv::uv_handle_t) {
    // SAFETY: allocated by Box::into_raw in `init`; libuv is done with it (closed).
    let h = unsafe { Box::from_raw(handle.cast::<uv::uv_timer_t>()) };
    // SAFETY: its data is the Rc stored there, released here only.
    drop(unsafe { Rc::from_raw(h.data as *const Bridge) });
}
