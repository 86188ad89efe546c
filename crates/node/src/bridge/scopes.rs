//! The handle scope of one iteration and the callback scope that ends it, as an RAII guard:
//! closed on drop, also when the iteration panics. Ground rules as in the parent module.
//!
//! JS runs in the iteration without a native callback scope around it: the dispatcher enters
//! the loop's own async context itself (src/loop.ts, an `AsyncResource` made where the loop
//! was), and the callback scope is opened and closed at the iteration's end, where closing it
//! runs the nextTick queue and the microtasks as before. Why not one scope around the whole
//! iteration, as before: a scope opened natively puts its resource on the async stack but
//! not in Node's JS copy of that stack, so when JS then entered a channel's context
//! (`runInAsyncScope`, one level deeper) the JS copy was left one entry too long, and closing
//! the native scope truncated it through a generic property store: about 1,050 instructions
//! per iteration that called JS (callgrind, Node 20, `AsyncHooks::pop_async_context` →
//! `v8::Object::Set`). With JS entering the loop's context at the bottom of the stack, the
//! JS copy is empty again when JS returns.

use std::ptr;

use napi::sys;

use super::Bridge;

/// The handle scope of one iteration; on drop (also on unwind) the callback scope that ends
/// the iteration is opened and closed, then the handle scope.
pub(super) struct Scopes<'a> {
    bridge: &'a Bridge,
    hs: sys::napi_handle_scope,
    /// The dispatch function was collected (the loop was idle and unreferenced).
    pub(super) js_gone: bool,
}

impl<'a> Scopes<'a> {
    #[allow(
        clippy::multiple_unsafe_ops_per_block,
        reason = "opening the handle scope, reading the resource, opening the callback scope and fetching the dispatch function are one protocol of napi calls on the live env, in this order, under one precondition"
    )]
    pub(super) fn open(bridge: &'a Bridge) -> Option<Self> {
        let env = bridge.env;
        let mut s = Scopes {
            bridge,
            hs: ptr::null_mut(),
            js_gone: false,
        };
        // SAFETY: called from a libuv callback on the env's thread, where no scope is open.
        // A failure (possible during worker termination) skips the iteration.
        unsafe {
            if sys::napi_open_handle_scope(env, &mut s.hs) != sys::Status::napi_ok {
                return None;
            }
            let (mut f, mut recv) = (ptr::null_mut(), ptr::null_mut());
            if bridge.fetch_dispatch(&mut f, &mut recv) {
                bridge.scope_fn.set(f);
                bridge.scope_recv.set(recv);
            } else {
                s.js_gone = sys::napi_get_reference_value(env, bridge.dispatch.get(), &mut f)
                    == sys::Status::napi_ok
                    && f.is_null();
            }
        }
        Some(s)
    }
}

impl Scopes<'_> {
    /// Opens the loop's callback scope and closes it at once: closing the outermost callback
    /// scope runs the nextTick queue and the microtasks that the iteration's JS (and the
    /// promises it settled natively) queued. Without the resource (a worker terminating) or a
    /// scope, nothing is run, as before.
    #[allow(
        clippy::multiple_unsafe_ops_per_block,
        reason = "reading the resource and opening and closing the callback scope are one protocol of napi calls on the live env, in this order, under one precondition"
    )]
    fn end_callback_scope(&self) {
        let env = self.bridge.env;
        let (mut resource, mut cs) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: on the env's thread inside the handle scope `open` opened; the scope is
        // closed right after it was opened, with nothing between.
        unsafe {
            if sys::napi_get_reference_value(env, self.bridge.resource.get(), &mut resource)
                != sys::Status::napi_ok
                || resource.is_null()
                || sys::napi_open_callback_scope(
                    env,
                    resource,
                    self.bridge.async_ctx.get(),
                    &mut cs,
                ) != sys::Status::napi_ok
            {
                return;
            }
            sys::napi_close_callback_scope(env, cs);
        }
    }
}

impl Drop for Scopes<'_> {
    fn drop(&mut self) {
        self.bridge.scope_fn.set(ptr::null_mut());
        self.bridge.scope_recv.set(ptr::null_mut());
        self.end_callback_scope();
        // SAFETY: as said above, the handle scope last.
        unsafe { sys::napi_close_handle_scope(self.bridge.env, self.hs) };
    }
}
