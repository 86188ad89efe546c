//! The selector of one loop: a mio `Poll`, its event buffer, and the premature-empty-poll
//! counter that triggers a rebuild (Netty's epoll-spin workaround).
//!
//! Ground rules: loop thread only. A rebuild creates a new `Poll` and a new waker, registers
//! every live source again through its handler, and keeps the old `Poll` (its fd may still be
//! watched by libuv) until the driver releases it.

use std::io;
use std::time::{Duration, Instant};

use mio::{Events, Poll, Token, Waker};

use crate::config::SelectorFault;
use crate::event_loop::Shared;
use crate::io::{IoTable, Readiness, WAKER_TOKEN};

pub(crate) struct Selector {
    pub poll: Poll,
    events: Events,
    retired: Vec<Poll>,
    empty_polls: u32,
}

/// What one poll produced.
pub(crate) enum PollOutcome {
    /// Sources are ready or the waker fired.
    Ready,
    /// The poll returned nothing before its timeout: a premature empty poll.
    PrematureEmpty,
    /// The poll returned nothing because its timeout passed (or it was non-blocking).
    TimedOut,
    Failed(io::Error),
}

impl Selector {
    pub fn new(poll: Poll, capacity: usize) -> Self {
        Selector {
            poll,
            events: Events::with_capacity(capacity),
            retired: Vec::new(),
            empty_polls: 0,
        }
    }

    /// Polls once; ready (token, readiness) pairs go to `out`.
    pub fn select(
        &mut self,
        timeout: Option<Duration>,
        fault: SelectorFault,
        out: &mut Vec<(Token, Readiness)>,
    ) -> PollOutcome {
        match fault {
            SelectorFault::PrematureEmpty => return PollOutcome::PrematureEmpty,
            SelectorFault::Error => {
                return PollOutcome::Failed(io::Error::other("injected selector fault"))
            }
            SelectorFault::None => {}
        }
        let started = Instant::now();
        if let Err(e) = self.poll.poll(&mut self.events, timeout) {
            return PollOutcome::Failed(e);
        }
        let mut woken = false;
        for e in self.events.iter() {
            if e.token() == WAKER_TOKEN {
                woken = true;
            } else {
                out.push((e.token(), Readiness::from_event(e)));
            }
        }
        if woken || !out.is_empty() {
            return PollOutcome::Ready;
        }
        match timeout {
            Some(t) if t.is_zero() || started.elapsed() >= t => PollOutcome::TimedOut,
            // mio rounds timeouts up to whole milliseconds; allow for the rounding.
            Some(t) if started.elapsed() + Duration::from_millis(1) >= t => PollOutcome::TimedOut,
            _ => PollOutcome::PrematureEmpty,
        }
    }

    /// Counts a premature empty poll; `true` when the threshold is reached.
    pub fn count_premature(&mut self, threshold: u32) -> bool {
        self.empty_polls += 1;
        threshold > 0 && self.empty_polls >= threshold
    }

    pub fn reset_premature(&mut self) {
        self.empty_polls = 0;
    }

    /// Replaces the poll with a new one and registers the waker and every source again.
    pub fn rebuild(&mut self, shared: &Shared, io: &IoTable) -> io::Result<()> {
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKER_TOKEN)?;
        for (token, handler) in io.entries() {
            if let Err(e) = handler.reregister(self.poll.registry(), poll.registry(), token) {
                eprintln!("netloop: re-registering a source after a selector rebuild failed: {e}");
            }
        }
        let old = std::mem::replace(&mut self.poll, poll);
        self.retired.push(old);
        shared.replace_waker(waker);
        // Whoever may be sleeping on the old waker must look again.
        shared.wake();
        self.empty_polls = 0;
        Ok(())
    }

    /// Closes selectors replaced by rebuilds (after libuv stopped watching them).
    pub fn release_retired(&mut self) {
        self.retired.clear();
    }
}
