//! Calls from the loop into JS: one dispatch function per loop, the loop's only entry point
//! into JS, called with one number (`arg * 8 + kind`, [`crate::protocol::DispatchPacking`])
//! and, for channel deliveries, the batch's arena and strings. Only inside an iteration, where
//! `Bridge::run` holds a handle scope open and has cached the function and receiver for it;
//! the JS side enters the loop's async context itself, and the iteration's end runs the
//! nextTick queue and microtasks (bridge/scopes.rs).

use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};

use napi::sys;

use crate::bridge::{tearing_down, Bridge};
use crate::error::debug;

/// What the JS dispatch function is asked to do (defined in the boundary protocol).
pub use crate::protocol::DispatchKind as Dispatch;

/// The multiplier of `arg` in the packed dispatch argument (`arg * PACK + kind`).
const PACK: f64 = crate::protocol::DispatchPacking::Multiplier as i32 as f64;

/// Calls from native into JS so far, by every loop of the process (all go through
/// [`Bridge::call_with`]). Relaxed: a diagnostic total, read by benchmarks before and after a
/// run to give the JS crossings per message.
static JS_CROSSINGS: AtomicU64 = AtomicU64::new(0);

/// How many calls every loop of this process has made into JS so far (channel deliveries,
/// tasks, timers, remote wake-ups, faults): a benchmark's crossings per message.
#[napi_derive::napi]
pub fn js_crossings() -> f64 {
    JS_CROSSINGS.load(Ordering::Relaxed) as f64
}

impl Bridge {
    /// Calls the JS dispatch function. Only inside an iteration (scopes open).
    pub fn call(&self, what: Dispatch, arg: f64) {
        self.call_with(what, arg, &[]);
    }

    /// Calls the JS dispatch function with `extra` arguments after the packed number. Only
    /// inside an iteration (scopes open); `extra` are values of an open handle scope.
    #[allow(
        clippy::multiple_unsafe_ops_per_block,
        reason = "fetching the dispatch function, packing the argument and calling JS are one sequence of napi calls in the open handle scope, under one precondition"
    )]
    pub fn call_with(&self, what: Dispatch, arg: f64, extra: &[sys::napi_value]) {
        if self.is_closed() || tearing_down() {
            return;
        }
        let env = self.env;
        let (mut f, mut recv) = (self.scope_fn.get(), self.scope_recv.get());
        let mut packed = ptr::null_mut();
        // SAFETY: env is live on this thread and a handle scope is open (we are inside `run`);
        // the cached function and receiver were created in that scope.
        unsafe {
            if f.is_null() && !self.fetch_dispatch(&mut f, &mut recv) {
                return;
            }
            // One number carries both: arg * PACK + kind (exact below 2^53).
            if sys::napi_create_double(env, arg * PACK + f64::from(what as u32), &mut packed)
                != sys::Status::napi_ok
            {
                return;
            }
            let mut args = [
                packed,
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
            ];
            let n = 1 + extra.len().min(args.len() - 1);
            args[1..n].copy_from_slice(&extra[..n - 1]);
            let mut result = ptr::null_mut();
            JS_CROSSINGS.fetch_add(1, Ordering::Relaxed);
            let status = sys::napi_call_function(env, recv, f, n, args.as_ptr(), &mut result);
            if let Some(t) = self.timers() {
                t.drain();
            }
            if status == sys::Status::napi_pending_exception {
                // The TS layer catches task errors itself; this is a last line of defence.
                let mut exc = ptr::null_mut();
                sys::napi_get_and_clear_last_exception(env, &mut exc);
                let detail = describe(env, exc);
                // The TS dispatcher catches every task error, so this only happens while the
                // thread is being terminated (or on a bug in the TS layer): say it once.
                // A terminating worker raises an uncatchable exception that has no text: no
                // report then; anything else is said once per loop.
                if !detail.is_empty() && !self.js_failed.replace(true) {
                    debug(format_args!(
                        "an exception escaped the dispatcher of loop {}: {detail}",
                        self.id()
                    ));
                }
            }
        }
    }

    /// The dispatch function and `undefined`, in the current handle scope.
    ///
    /// # Safety
    /// A handle scope must be open on the env's thread.
    pub(crate) unsafe fn fetch_dispatch(
        &self,
        f: &mut sys::napi_value,
        recv: &mut sys::napi_value,
    ) -> bool {
        let r = self.dispatch_ref();
        if r.is_null() {
            return false;
        }
        // SAFETY: per the function's contract; `r` was made on this env (non-null: not closed).
        let got = unsafe { sys::napi_get_reference_value(self.env, r, f) };
        if got != sys::Status::napi_ok || f.is_null() {
            return false;
        }
        // SAFETY: per the function's contract; `recv` is a valid out-pointer.
        let undefined = unsafe { sys::napi_get_undefined(self.env, recv) };
        undefined == sys::Status::napi_ok
    }
}

/// `String(value)` of a JS value, for diagnostics; empty if that fails.
///
/// # Safety
/// `env` must be live on this thread with a handle scope open.
unsafe fn describe(env: sys::napi_env, value: sys::napi_value) -> String {
    let mut s = ptr::null_mut();
    let mut buf = [0u8; 512];
    let mut len = 0usize;
    if value.is_null() {
        return String::new();
    }
    // SAFETY: per the function's contract; `s` is a valid out-pointer.
    let coerced = unsafe { sys::napi_coerce_to_string(env, value, &mut s) };
    if coerced != sys::Status::napi_ok {
        return String::new();
    }
    // SAFETY: per the function's contract; `buf` outlives the call and its length is passed.
    let copied = unsafe {
        sys::napi_get_value_string_utf8(env, s, buf.as_mut_ptr().cast(), buf.len(), &mut len)
    };
    if copied != sys::Status::napi_ok {
        return String::new();
    }
    String::from_utf8_lossy(&buf[..len]).into_owned()
}
