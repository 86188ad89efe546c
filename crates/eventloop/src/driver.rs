//! [`LoopDriver`]: drives an attached loop from outside (libuv in the Node binding, a test's
//! hand in unit tests). The driver lives on the loop's thread.

use std::rc::Rc;
use std::time::Duration;

use crate::event_loop::{EventLoop, LoopState};
use crate::local::{Iteration, LocalLoop};

/// Drives one attached loop, one non-blocking iteration at a time.
pub struct LoopDriver {
    local: Rc<LocalLoop>,
}

impl LoopDriver {
    pub(crate) fn new(local: Rc<LocalLoop>) -> Self {
        LoopDriver { local }
    }

    /// One non-blocking iteration (a timer or a hand in a test asked for it).
    pub fn run_once(&self) -> Iteration {
        if self.local.handle().is_terminated() {
            return Iteration {
                terminated: true,
                ..Default::default()
            };
        }
        self.local.iterate(false, false)
    }

    /// One non-blocking iteration because the loop's fd became readable: finding nothing
    /// counts as a premature wake-up towards a selector rebuild.
    pub fn run_io_ready(&self) -> Iteration {
        if self.local.handle().is_terminated() {
            return Iteration {
                terminated: true,
                ..Default::default()
            };
        }
        self.local.iterate(false, true)
    }

    /// Iterates until no task is pending and no timer is due (tests).
    pub fn run_until_idle(&self) {
        for _ in 0..10_000 {
            let it = self.run_once();
            if it.terminated || self.local.next_timeout() != Some(Duration::ZERO) {
                return;
            }
        }
    }

    /// The fd to watch for readability (the selector's epoll/kqueue fd).
    #[cfg(unix)]
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        self.local.raw_fd()
    }

    /// When the loop must run again if its fd stays quiet (`None`: not until woken).
    pub fn next_timeout(&self) -> Option<Duration> {
        self.local.next_timeout()
    }

    pub fn handle(&self) -> EventLoop {
        self.local.handle()
    }

    pub fn local(&self) -> &Rc<LocalLoop> {
        &self.local
    }

    /// Closes selectors replaced by rebuilds, once the outside loop stopped watching them.
    pub fn release_retired_selectors(&self) {
        self.local.release_retired_selectors();
    }

    /// Terminates now: rejects new tasks, runs those already accepted, cancels timers.
    /// Used when the owning thread goes away (worker termination).
    pub fn terminate_now(&self) {
        self.local.terminate();
    }
}

impl Drop for LoopDriver {
    fn drop(&mut self) {
        if self.local.handle().state() != LoopState::Terminated {
            self.local.terminate();
        }
    }
}
