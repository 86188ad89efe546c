//! The bounded spin of an attached loop before it hands its JS thread back to libuv
//! (`LoopConfig::spin_before_sleep`, adaptive through the loop's `SpinGovernor`).
//!
//! Ground rules (as in the parent module, plus):
//! - After an iteration that left no work, a loop whose governor is hot polls its selector's
//!   fd with `poll(2)` and a zero timeout (which, unlike `epoll_wait`, consumes no event),
//!   yielding the CPU between polls. When the fd turns readable (I/O, or the waker of a task
//!   from another thread) the same libuv callback runs another iteration, in scopes of its
//!   own, so microtasks still drain after every iteration.
//! - The spin window is one per libuv callback and starts when the first spin does: no
//!   iteration starts after it ends. A callback thus holds the JS thread for at most its
//!   first iteration, the window, and one more bounded iteration; then libuv runs its timers,
//!   its own I/O and `setImmediate` as usual. The loop never re-arms itself through a
//!   zero-delay uv timer.
//! - No spin when work is left (the fd is readable already and libuv comes back through its
//!   poll phase), after a selector rebuild or termination, while tearing down, or when one of
//!   the loop's timers is due within the window (libuv's timer runs it).

use std::os::raw::c_int;
use std::rc::Rc;
use std::time::Instant;

use netloop_eventloop::Iteration;

use super::{tearing_down, Bridge};

impl Bridge {
    /// Spins after iteration `it` if the governor says so, within the callback's window
    /// (`window`: its end, set by the first spin). True: the fd turned readable, run another
    /// iteration now.
    pub(super) fn spin_for_more(
        self: &Rc<Self>,
        it: &Iteration,
        window: &mut Option<Instant>,
    ) -> bool {
        if it.terminated
            || it.more_work
            || it.selector_rebuilt
            || self.is_closed()
            || tearing_down()
        {
            return false;
        }
        let Some(core) = self.core() else {
            return false;
        };
        let driver = &core.driver;
        let governor = driver.spin();
        if !governor.should_spin() {
            return false;
        }
        let now = Instant::now();
        let end = *window.get_or_insert(now + governor.budget());
        if now >= end || driver.next_timeout().is_some_and(|t| now + t <= end) {
            return false;
        }
        let fd = driver.raw_fd();
        if fd < 0 {
            return false;
        }
        let mut polls = 0u64;
        let found = loop {
            polls += 1;
            if readable(fd) {
                break true;
            }
            if Instant::now() >= end {
                break false;
            }
            // Leave the CPU to another runnable thread (the peer, on a busy machine).
            std::thread::yield_now();
        };
        driver.count_spin_polls(polls);
        governor.spun(found);
        found
    }

    /// The callback hands the thread back to libuv: the governor learns how long the loop
    /// sleeps (unless the loop woke itself for work it left, which says nothing).
    pub(super) fn spin_sleeping(&self, it: &Iteration) {
        if let Some(core) = self.core() {
            if it.more_work {
                core.driver.spin().woke_idle();
            } else {
                core.driver.spin().sleeping();
            }
        }
    }

    /// libuv called the loop back (its fd or its timer).
    pub(super) fn spin_woke(&self) {
        if let Some(core) = self.core() {
            core.driver.spin().woke();
        }
    }
}

/// Whether `fd` (an epoll fd) has ready events, without consuming them.
fn readable(fd: c_int) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `p` is a valid, initialised pollfd that outlives the call; nfds is 1 and the
    // timeout 0, so the call never blocks. `fd` stays open while the core is held.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && p.revents & libc::POLLIN != 0
}
