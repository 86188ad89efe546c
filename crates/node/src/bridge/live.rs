//! The bridges alive on this JS thread (weak refs in the thread's context,
//! crate::thread_context) and the env cleanup hook that closes them when the env is torn down
//! (worker termination, process exit).

use std::panic::catch_unwind;
use std::ptr;
use std::rc::{Rc, Weak};

use napi::sys;

use super::Bridge;
use crate::thread_context;

pub(crate) fn tearing_down() -> bool {
    thread_context::with(|c| c.tearing_down.get()).unwrap_or(true)
}

/// Registers a new bridge of this thread (dropping the entries of dead ones).
pub(super) fn register(bridge: &Rc<Bridge>) {
    thread_context::with(|c| {
        let mut l = c.bridges.borrow_mut();
        l.retain(|w| w.strong_count() > 0);
        l.push(Rc::downgrade(bridge));
    });
}

/// The live bridge of the loop with this id on this thread (test hooks).
pub fn find(loop_id: u64) -> Option<Rc<Bridge>> {
    thread_context::with(|c| {
        c.bridges
            .borrow()
            .iter()
            .filter_map(Weak::upgrade)
            .find(|b| b.id == loop_id && !b.closed.get())
    })
    .flatten()
}

pub(super) fn install_cleanup_hook(env: sys::napi_env) {
    if thread_context::with(|c| c.hooked.replace(true)).unwrap_or(true) {
        return;
    }
    // SAFETY: registering a plain function with a null argument on the live env.
    unsafe {
        sys::napi_add_env_cleanup_hook(env, Some(cleanup), ptr::null_mut());
    }
}

/// Env teardown (worker termination, process exit): close every open handle, terminate
/// every loop; no JS is called from here on.
///
/// # Safety
/// Called by napi only, as the env cleanup hook `install_cleanup_hook` registered, on the
/// env's thread; it reads no argument (`_arg` is null) and lets no panic out.
unsafe extern "C" fn cleanup(_arg: *mut std::ffi::c_void) {
    let _ = catch_unwind(|| {
        let live: Vec<Rc<Bridge>> = thread_context::with(|c| {
            c.tearing_down.set(true);
            c.bridges
                .borrow()
                .iter()
                .filter_map(Weak::upgrade)
                .collect()
        })
        .unwrap_or_default();
        for b in live {
            b.close();
        }
    });
}
