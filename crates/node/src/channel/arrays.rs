//! Taking hold of the typed arrays a hub shares with JS: their memory as a
//! `netloop_wire::shared::Shared` view, kept alive by a napi reference that the view owns
//! (dropped with the hub, on the env's thread).

use std::ptr;

use napi::sys;
use netloop_wire::shared::Shared;

/// The napi reference that keeps a shared typed array alive.
struct Reference {
    env: sys::napi_env,
    reference: sys::napi_ref,
}

impl Drop for Reference {
    fn drop(&mut self) {
        // SAFETY: the reference was created on this env, and hubs drop on the env's thread.
        unsafe {
            sys::napi_delete_reference(self.env, self.reference);
        }
    }
}

/// `value`'s memory, if it is a typed array of `kind`, kept alive by a reference to it.
///
/// # Safety
/// `env` must be the live env of the current call and `value` a handle of that call.
pub unsafe fn take<T>(
    env: sys::napi_env,
    value: sys::napi_value,
    kind: sys::napi_typedarray_type,
) -> Option<Shared<T>> {
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
    if referenced != sys::Status::napi_ok || data.is_null() {
        return None;
    }
    let keep = Box::new(Reference { env, reference });
    // SAFETY: `data` points to the `len` elements of a typed array that the reference keeps
    // alive and JS never detaches (the JS side keeps these arrays private); JS does not run
    // while native code reads or writes them (JS and native code take turns on one thread).
    Some(unsafe { Shared::new(data.cast(), len, keep) })
}
