//! The iteration of a [`LocalLoop`](super::LocalLoop): poll, dispatch, one task batch, tail
//! tasks, the sleep it plans (attached or standalone), and the selector's rebuild after a
//! fault. The ground rules are local.rs's: the loop's own thread, no borrow held while user
//! code runs.

use super::*;

impl LocalLoop {
    fn block_timeout(&self) -> Option<Duration> {
        if self.sched.has_work() {
            return Some(Duration::ZERO);
        }
        let s = &self.shared;
        let t = self.next_timeout();
        self.publish_planned_wakeup();
        s.sleeping.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !s.queue.is_empty() {
            s.sleeping.store(false, Ordering::SeqCst);
            return Some(Duration::ZERO);
        }
        if s.config.ticker.is_manual() {
            return Some(t.map_or(MANUAL_CLOCK_POLL, |t| t.min(MANUAL_CLOCK_POLL)));
        }
        t
    }

    /// One iteration. `blocking`: standalone (sleep in the poll). `io_wake`: an attached loop
    /// was called because its fd became readable, so an empty poll is premature.
    pub(crate) fn iterate(&self, blocking: bool, io_wake: bool) -> Iteration {
        let terminated = Iteration {
            terminated: true,
            ..Iteration::default()
        };
        if self.io.is_released() || self.shared.state() == LoopState::Terminated {
            return terminated;
        }
        let Some(me) = self.me.upgrade() else {
            return terminated;
        };
        let _current = thread_context::enter(me);
        let was_in = self.in_iteration.replace(true);
        let s = self.shared.clone();
        let mut out = Iteration::default();

        let fault = s
            .config
            .fault_injector
            .as_ref()
            .map_or(SelectorFault::None, |f| f());
        let spun = if blocking {
            self.spin_before_sleep(fault)
        } else {
            None
        };
        let (outcome, ready) = match spun {
            Some(found) => found,
            None if blocking => {
                let timeout = self.block_timeout();
                let sleeps = timeout != Some(Duration::ZERO);
                if sleeps {
                    self.spin.sleeping();
                }
                let (outcome, ready) = self.io.select(timeout, fault);
                if sleeps {
                    if ready.is_empty() && s.queue.is_empty() {
                        self.spin.woke_idle();
                    } else {
                        self.spin.woke();
                    }
                }
                (outcome, ready)
            }
            None => self.io.select(Some(Duration::ZERO), fault),
        };
        s.polled();

        let io_start = s.now_nanos();
        let had_io = !ready.is_empty();
        match outcome {
            PollOutcome::Ready => self.io.reset_premature(),
            PollOutcome::TimedOut if !io_wake || blocking => self.io.reset_premature(),
            PollOutcome::TimedOut | PollOutcome::PrematureEmpty => {
                if self.io.count_premature(s.config.selector_rebuild_threshold) {
                    out.selector_rebuilt = self.rebuild_selector();
                }
            }
            // Netty: a poll interrupted by a signal is not a spin; it resets the counter.
            PollOutcome::Failed(e) if e.kind() == io::ErrorKind::Interrupted => {
                self.io.reset_premature()
            }
            PollOutcome::Failed(e) => {
                crate::log::error(&format!(
                    "netloop: poll failed on loop {}: {e}; rebuilding the selector",
                    s.config.name
                ));
                out.selector_rebuilt = self.rebuild_selector();
            }
        }
        // The I/O time of the handlers (`LocalLoop::io_time`): this poll's (restored after:
        // an iteration may run inside another's handler).
        let outer_phase = self.io_phase_start.replace(Some(io_start));
        for &(token, readiness) in &ready {
            if let Some(h) = self.io.handler(token) {
                self.guarded(|| h.ready(readiness));
            }
        }
        self.io_phase_start.set(outer_phase);
        self.io.recycle(ready);

        let shutting_down = s.state() >= LoopState::ShuttingDown;
        if shutting_down {
            self.begin_shutdown();
        }
        // One clock read serves the I/O time and the batch's start (no handler ran without
        // I/O: the poll's return is the start then).
        let io_end = if had_io { s.now_nanos() } else { io_start };
        let ratio = s.config.io_ratio as u64;
        let budget = if ratio == 100 || shutting_down {
            None
        } else if had_io {
            let io_time = io_end.saturating_sub(io_start);
            Some(io_time.saturating_mul(100 - ratio) / ratio)
        } else {
            Some(0)
        };
        let ran = self.run_batch(budget, io_end);

        if shutting_down && self.confirm_shutdown(ran) {
            self.terminate();
            out.terminated = true;
        }
        if !out.terminated {
            // What the probe reports (an attached loop's events waiting for JS) is delivered
            // by the driver's owner right after this iteration, and the owner asks for
            // another iteration if it cannot deliver everything: waking the loop for it would
            // cost a waker write and a spurious poll per iteration. During a shutdown it
            // counts, so that the next iteration comes to confirm it.
            out.more_work = if shutting_down {
                self.has_ready_work()
            } else {
                self.has_own_ready_work()
            };
            if !blocking {
                self.prepare_attached_sleep(out.more_work);
            }
        }
        if blocking {
            // Utilization: from the selector's return to here (one clock read more).
            let busy = s.now_nanos().saturating_sub(io_start);
            s.busy_nanos.fetch_add(busy, Ordering::Relaxed);
        }
        self.in_iteration.set(was_in);
        out
    }

    /// An attached loop hands control back to libuv: keep the fd readable if work remains,
    /// else mark the loop asleep so the next producer wakes it.
    fn prepare_attached_sleep(&self, more_work: bool) {
        let s = &self.shared;
        if more_work {
            s.wake();
            return;
        }
        self.publish_planned_wakeup();
        s.sleeping.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !s.queue.is_empty() && s.sleeping.swap(false, Ordering::SeqCst) {
            s.wake();
        }
    }

    /// Before the loop sleeps: tell producers when it plans to wake up by itself (loop
    /// time; `u64::MAX`: only when woken), so that a timer scheduled from another thread
    /// wakes it only if it would become the earliest (Netty's `nextWakeupNanos`). The next
    /// deadline is published as it is: the clock is read only when work is ready now or a
    /// shutdown bounds the sleep (an overdue deadline wakes the loop at once either way).
    fn publish_planned_wakeup(&self) {
        let s = &self.shared;
        let at = if self.sched.has_work() || !s.queue.is_empty() {
            s.now_nanos()
        } else {
            let deadline = self.sched.next_deadline();
            if s.state() >= LoopState::ShuttingDown {
                let bound = s
                    .now_nanos()
                    .saturating_add(crate::clock::saturating_nanos(SHUTDOWN_POLL));
                deadline.map_or(bound, |d| d.min(bound))
            } else {
                deadline.unwrap_or(u64::MAX)
            }
        };
        s.planned_wakeup.store(at, Ordering::SeqCst);
    }

    /// Replaces the selector, then moves every source to it. Handlers run with no borrow
    /// held; a handler whose source cannot be moved is told through
    /// [`IoHandler::reregister_failed`].
    fn rebuild_selector(&self) -> bool {
        let Rebuilt {
            old,
            new,
            waker,
            sources,
        } = match self.io.rebuild() {
            Ok(r) => r,
            Err(e) => {
                crate::log::error(&format!("netloop: rebuilding the selector failed: {e}"));
                return false;
            }
        };
        for (token, handler) in sources {
            let res = catch_unwind(AssertUnwindSafe(|| {
                handler.reregister(old.registry(), &new, token)
            }));
            let err = match res {
                Ok(Ok(())) => continue,
                Ok(Err(e)) => e,
                Err(p) => {
                    self.shared.report_panic(&panic_message(&p));
                    io::Error::other("re-registering the source panicked")
                }
            };
            self.guarded(|| handler.reregister_failed(err));
        }
        drop(new);
        if self.owns_selector.get() {
            // A standalone loop: nobody else watches the old fd, close it now.
            drop(old);
        } else {
            self.io.retire(old);
        }
        self.shared.replace_waker(waker);
        // Whoever may be sleeping on the old waker must look again.
        self.shared.force_wake();
        self.shared
            .selector_rebuilds
            .fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Closes selectors replaced by rebuilds.
    pub fn release_retired_selectors(&self) {
        self.io.release_retired();
    }
}
