//! The handle scope and callback scope of one iteration, as an RAII guard: closed on drop,
//! also when the iteration panics. Ground rules as in the parent module.

use std::ptr;

use napi::sys;

use super::Bridge;

/// The handle scope and callback scope of one iteration; closed on drop (also on unwind).
pub(super) struct Scopes<'a> {
    bridge: &'a Bridge,
    hs: sys::napi_handle_scope,
    cs: sys::napi_callback_scope,
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
            cs: ptr::null_mut(),
            js_gone: false,
        };
        let mut resource = ptr::null_mut();
        // SAFETY: called from a libuv callback on the env's thread, where no scope is open.
        // Failures (possible during worker termination) skip the iteration or run it without
        // async context.
        unsafe {
            if sys::napi_open_handle_scope(env, &mut s.hs) != sys::Status::napi_ok {
                return None;
            }
            if sys::napi_get_reference_value(env, bridge.resource.get(), &mut resource)
                != sys::Status::napi_ok
                || resource.is_null()
                || sys::napi_open_callback_scope(env, resource, bridge.async_ctx.get(), &mut s.cs)
                    != sys::Status::napi_ok
            {
                s.cs = ptr::null_mut();
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

impl Drop for Scopes<'_> {
    fn drop(&mut self) {
        self.bridge.scope_fn.set(ptr::null_mut());
        self.bridge.scope_recv.set(ptr::null_mut());
        // Closing the scopes opened in `open`, in reverse order, on the same thread.
        if !self.cs.is_null() {
            // SAFETY: as said above; closing the callback scope runs the nextTick queue and
            // microtasks.
            unsafe { sys::napi_close_callback_scope(self.bridge.env, self.cs) };
        }
        // SAFETY: as said above, the handle scope last.
        unsafe { sys::napi_close_handle_scope(self.bridge.env, self.hs) };
    }
}
