//! After each iteration: when libuv runs the loop again (the next timer deadline, or the poll
//! phase through the loop's waker when work is left), and whether the loop keeps the process
//! and its JS side alive. Ground rules as in the parent module.

use std::time::Duration;

use libuv_sys_lite as uv;
use napi::sys;
use netloop_eventloop::Iteration;

use super::{ceil_millis, on_timer, tearing_down, Bridge};

impl Bridge {
    #[allow(
        clippy::multiple_unsafe_ops_per_block,
        reason = "a sequence of libuv calls on the loop's two handles (ref/unref the poll, stop/start the timer), all under one precondition: non-null handles are initialised and open"
    )]
    pub(super) fn after_iteration(&self, it: Iteration) {
        let Some(core) = self.core() else { return };
        if it.terminated || core.handle.is_terminated() {
            drop(core);
            self.close();
            return;
        }
        // Microtasks that ran when the callback scope closed may have re-armed the JS timer
        // (written the arm buffer).
        let timers = self.timers();
        if let Some(t) = &timers {
            t.drain();
        }
        let d = &core.driver;
        let next = d.next_timeout();
        // Queued tasks and registered channels keep the process alive, as setImmediate and
        // sockets do; timers do through the (ref'ed) timer handle.
        let hook = self.hook.borrow().clone();
        let channels = match hook {
            Some(h) => h.keeps_alive(),
            None => d.local().registered_count() > 0,
        };
        let busy_io = self.pinned.get() || channels || next == Some(Duration::ZERO);
        let busy = busy_io
            || timers.as_ref().is_some_and(|t| t.live() > 0)
            || core.handle.is_shutting_down();
        self.set_js_strong(busy);
        let (poll, timer) = (self.poll.get(), self.timer.get());
        // SAFETY: non-null handles are initialised and open (they are nulled when closed).
        unsafe {
            if !poll.is_null() {
                if busy_io {
                    uv::uv_ref(poll.cast());
                } else {
                    uv::uv_unref(poll.cast());
                }
            }
            if timer.is_null() {
                return;
            }
            match next {
                Some(Duration::ZERO) => {
                    // Run again in libuv's poll phase: the waker makes the fd readable.
                    uv::uv_timer_stop(timer);
                    d.local().request_iteration();
                }
                Some(t) => {
                    uv::uv_update_time(self.uv_loop);
                    uv::uv_timer_start(timer, Some(on_timer), ceil_millis(t), 0);
                }
                None => {
                    uv::uv_timer_stop(timer);
                }
            }
        }
    }

    /// The JS side is needed (strong) or may be collected (weak).
    fn set_js_strong(&self, strong: bool) {
        let r = self.dispatch.get();
        if r.is_null() || self.dispatch_strong.get() == strong || tearing_down() {
            return;
        }
        let mut count = 0u32;
        if strong {
            // SAFETY: `r` was created on this env and is deleted only by `close`, which nulls it.
            unsafe { sys::napi_reference_ref(self.env, r, &mut count) };
        } else {
            // SAFETY: as for the `ref` above.
            unsafe { sys::napi_reference_unref(self.env, r, &mut count) };
        }
        self.dispatch_strong.set(strong);
    }

    /// Keeps the process and the JS side alive until the next iteration (JS queued work).
    pub fn keep_alive(&self) {
        self.set_js_strong(true);
        let poll = self.poll.get();
        if !poll.is_null() {
            // SAFETY: a non-null poll handle is initialised and open.
            unsafe { uv::uv_ref(poll.cast()) };
        }
    }

    /// Asks libuv to run an iteration soon (after JS scheduled work outside an iteration).
    pub fn rearm(&self) {
        if self.closed.get() || self.local().is_some_and(|l| l.is_in_iteration()) {
            return;
        }
        self.after_iteration(Iteration::default());
    }
}
