//! Submitting work to an [`EventLoop`] from any thread: `execute`, `lazy_execute`, cleanup
//! hooks, and the lazy start of a standalone loop's thread.
//!
//! Ground rules: the cross-thread half of the wake-up and "no task abandoned" protocols
//! described in `shared.rs`. A producer counts itself in `pending` before it checks the
//! state, pushes, then wakes the loop only if it sleeps and the submission asks for it
//! ([`Wake`]): `lazy_execute` never wakes, a timer wakes only if it is due before the loop's
//! planned wake-up.

use std::sync::atomic::{fence, Ordering};

use crate::error::{LoopError, RejectReason};
use crate::event_loop::{EventLoop, LoopState, Task};

impl EventLoop {
    /// Runs `task` on the loop, in FIFO order with the other tasks submitted from this thread.
    pub fn execute(&self, task: impl FnOnce() + Send + 'static) -> Result<(), LoopError> {
        self.execute_boxed(Box::new(task))
    }

    /// Netty's `lazyExecute`: runs `task` on the loop like [`EventLoop::execute`], but does
    /// not wake a sleeping loop for it; it runs when the loop wakes up for another reason (a
    /// timer, I/O, a task submitted with `execute`). A loop that was not started is started.
    pub fn lazy_execute(&self, task: impl FnOnce() + Send + 'static) -> Result<(), LoopError> {
        self.submit(Box::new(task), Wake::Never)
    }

    /// Adds a hook run once on the loop's thread when the loop terminates, after its last
    /// task ran and before the termination future completes (Netty's `cleanup()`). Rejected
    /// once the loop terminated.
    pub fn add_cleanup_hook(&self, hook: impl FnOnce() + Send + 'static) -> Result<(), LoopError> {
        let mut hooks = self
            .shared
            .cleanup
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if self.is_terminated() {
            return Err(LoopError::Rejected(RejectReason::Shutdown));
        }
        hooks.push(Box::new(hook));
        Ok(())
    }

    pub(crate) fn execute_boxed(&self, task: Task) -> Result<(), LoopError> {
        self.submit(task, Wake::IfSleeping)
    }

    pub(crate) fn submit(&self, task: Task, wake: Wake) -> Result<(), LoopError> {
        if let Some(local) = self.local() {
            if self.is_shutdown() {
                return Err(LoopError::Rejected(RejectReason::Shutdown));
            }
            match wake {
                Wake::IfSleeping => local.push_task(task),
                _ => local.push_task_lazily(task),
            }
            return Ok(());
        }
        let s = &self.shared;
        if s.pending.fetch_add(1, Ordering::SeqCst) >= s.config.max_pending_tasks {
            s.pending.fetch_sub(1, Ordering::SeqCst);
            return Err(LoopError::Rejected(RejectReason::QueueFull));
        }
        if s.state() >= LoopState::Shutdown {
            s.pending.fetch_sub(1, Ordering::SeqCst);
            return Err(LoopError::Rejected(RejectReason::Shutdown));
        }
        s.queue.push(task);
        if s.state() == LoopState::NotStarted {
            if let Err(e) = self.start_thread() {
                // Nothing will ever run these tasks: take them back (the state is
                // Terminated, so no producer adds more).
                while s.queue.pop().is_some() {
                    s.pending.fetch_sub(1, Ordering::SeqCst);
                }
                return Err(e);
            }
        }
        match wake {
            Wake::IfSleeping => s.wake_if_sleeping(),
            Wake::Never => {}
            Wake::Before(deadline) => {
                fence(Ordering::SeqCst);
                if deadline < s.planned_wakeup.load(Ordering::SeqCst) {
                    s.wake_if_sleeping();
                }
            }
        }
        Ok(())
    }

    pub(crate) fn start_thread(&self) -> Result<(), LoopError> {
        if !self
            .shared
            .cas_state(LoopState::NotStarted, LoopState::Started)
        {
            return Ok(());
        }
        let Some(poll) = self
            .shared
            .startup
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        else {
            return Ok(());
        };
        let shared = self.shared.clone();
        let name = self.shared.config.name.clone();
        // `spawn` reports most failures as errors, some (a name it cannot pass on) as panics.
        let spawned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            std::thread::Builder::new()
                .name(name)
                .spawn(move || crate::local::run_standalone(shared, poll))
        }));
        let error = match spawned {
            Ok(Ok(h)) => {
                *self.shared.thread.lock().unwrap_or_else(|p| p.into_inner()) = Some(h);
                return Ok(());
            }
            Ok(Err(e)) => LoopError::from(e),
            Err(p) => LoopError::Io {
                kind: std::io::ErrorKind::Other,
                message: crate::batch::panic_message(&p),
            },
        };
        crate::log::error(&format!(
            "netloop: could not start the thread of loop {}: {error}",
            self.shared.config.name
        ));
        self.shared.set_state(LoopState::Terminated);
        self.shared.release_waker();
        self.shared.termination.try_failure(error);
        // Netty: the task is rejected, as every later one.
        Err(LoopError::Rejected(RejectReason::Shutdown))
    }
}

/// Whether a submission from another thread wakes a sleeping loop.
#[derive(Clone, Copy)]
pub(crate) enum Wake {
    IfSleeping,
    Never,
    /// Only if the loop plans to sleep past this loop time (a timer's deadline).
    Before(u64),
}
