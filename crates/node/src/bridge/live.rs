//! The bridges alive on this JS thread (weak refs) and the env cleanup hook that closes them
//! when the env is torn down (worker termination, process exit).

use std::cell::{Cell, RefCell};
use std::panic::catch_unwind;
use std::ptr;
use std::rc::{Rc, Weak};

use napi::sys;

use super::Bridge;

thread_local! {
    pub(super) static LIVE: RefCell<Vec<Weak<Bridge>>> = const { RefCell::new(Vec::new()) };
    pub(crate) static TEARING_DOWN: Cell<bool> = const { Cell::new(false) };
    static HOOKED: Cell<bool> = const { Cell::new(false) };
}

pub(crate) fn tearing_down() -> bool {
    TEARING_DOWN.try_with(|t| t.get()).unwrap_or(true)
}

/// The live bridge of the loop with this id on this thread (test hooks).
pub fn find(loop_id: u64) -> Option<Rc<Bridge>> {
    LIVE.try_with(|l| {
        l.borrow()
            .iter()
            .filter_map(Weak::upgrade)
            .find(|b| b.id == loop_id && !b.closed.get())
    })
    .ok()
    .flatten()
}

pub(super) fn install_cleanup_hook(env: sys::napi_env) {
    if HOOKED.with(|h| h.replace(true)) {
        return;
    }
    // SAFETY: registering a plain function with a null argument on the live env.
    unsafe {
        sys::napi_add_env_cleanup_hook(env, Some(cleanup), ptr::null_mut());
    }
}

/// Env teardown (worker termination, process exit): close every open handle, terminate
/// every loop; no JS is called from here on.
unsafe extern "C" fn cleanup(_arg: *mut std::ffi::c_void) {
    let _ = catch_unwind(|| {
        TEARING_DOWN.with(|t| t.set(true));
        let live: Vec<Rc<Bridge>> =
            LIVE.with(|l| l.borrow().iter().filter_map(Weak::upgrade).collect());
        for b in live {
            b.close();
        }
    });
}
