//! Graceful shutdown and termination of a loop (Netty's `confirmShutdown` and the drain after
//! it). Ground rules as in `local.rs`; the cross-thread half of the "no task abandoned"
//! protocol is described in `event_loop.rs`.

use std::sync::atomic::Ordering;

use crate::event_loop::LoopState;
use crate::io::IoTable;
use crate::local::LocalLoop;
use crate::thread;

impl LocalLoop {
    pub(crate) fn close_sources_once(&self) {
        if self.closed_sources.replace(true) {
            return;
        }
        let entries = self.io.borrow().entries();
        for (_, h) in entries {
            self.guarded(|| h.close_on_shutdown());
        }
    }

    /// Netty's confirmShutdown: `true` once the loop may stop accepting tasks.
    pub(crate) fn confirm_shutdown(&self) -> bool {
        let s = &self.shared;
        if self.graceful_start.get().is_none() {
            let now = s.now_nanos();
            self.graceful_start.set(Some(now));
            self.last_execution.set(now);
            self.timers.borrow_mut().cancel_all();
        }
        if self.run_all_tasks(None) {
            return s.state() >= LoopState::Shutdown || s.quiet_nanos.load(Ordering::SeqCst) == 0;
        }
        let now = s.now_nanos();
        let start = self.graceful_start.get().unwrap_or(now);
        if s.state() >= LoopState::Shutdown
            || now.saturating_sub(start) > s.timeout_nanos.load(Ordering::SeqCst)
        {
            return true;
        }
        now.saturating_sub(self.last_execution.get()) >= s.quiet_nanos.load(Ordering::SeqCst)
    }

    /// Stops accepting tasks, runs every task already accepted, then terminates.
    pub(crate) fn terminate(&self) {
        let s = &self.shared;
        if s.state() == LoopState::Terminated {
            return;
        }
        if s.state() < LoopState::ShuttingDown {
            s.set_state(LoopState::ShuttingDown);
        }
        self.close_sources_once();
        s.set_state(LoopState::Shutdown);
        loop {
            let ran = self.run_all_tasks(None);
            if s.pending.load(Ordering::SeqCst) == 0 && s.queue.is_empty() && !self.has_local_work()
            {
                break;
            }
            if !ran {
                // A producer counted itself in but has not pushed yet: it will very soon.
                std::thread::yield_now();
            }
        }
        self.timers.borrow_mut().cancel_all();
        let entries = self.io.borrow().entries();
        drop(entries);
        *self.io.borrow_mut() = IoTable::default();
        self.selector.borrow_mut().release_retired();
        s.set_state(LoopState::Terminated);
        thread::unregister_local(s.id);
        s.termination.try_success(());
    }
}
