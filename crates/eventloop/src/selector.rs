//! The selector of one loop: a mio `Poll`, its event buffer, and the premature-empty-poll
//! counter that triggers a rebuild (Netty's epoll-spin workaround).
//!
//! Ground rules: loop thread only. A rebuild creates a new `Poll` and a new waker and hands
//! the old `Poll` back to the caller, which re-registers every live source through its
//! handler (with no borrow held) and then retires the old `Poll`: its fd may still be watched
//! by libuv, so it stays open until the driver releases it.

use std::io;
use std::time::{Duration, Instant};

use mio::{Events, Poll, Registry, Token, Waker};

use crate::config::SelectorFault;
use crate::io::{Readiness, WAKER_TOKEN};

/// Netty's `MIN_PREMATURE_SELECTOR_RETURNS`: smaller rebuild thresholds disable rebuilds.
pub(crate) const MIN_PREMATURE_RETURNS: u32 = 3;

pub(crate) struct Selector {
    poll: Poll,
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
            SelectorFault::Interrupted => {
                return PollOutcome::Failed(io::ErrorKind::Interrupted.into())
            }
            SelectorFault::None => {}
        }
        // Only a poll that may sleep needs its start: to tell a timeout from a premature return.
        let started = timeout.filter(|t| !t.is_zero()).map(|_| Instant::now());
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
        let slept = started.map_or(Duration::ZERO, |at| at.elapsed());
        match timeout {
            Some(t) if t.is_zero() || slept >= t => PollOutcome::TimedOut,
            // mio rounds timeouts up to whole milliseconds; allow for the rounding.
            Some(t) if slept + Duration::from_millis(1) >= t => PollOutcome::TimedOut,
            _ => PollOutcome::PrematureEmpty,
        }
    }

    /// Counts a premature empty poll; `true` when the threshold is reached. A threshold
    /// below [`MIN_PREMATURE_RETURNS`] turns detection off (Netty).
    pub fn count_premature(&mut self, threshold: u32) -> bool {
        self.empty_polls = self.empty_polls.saturating_add(1);
        threshold >= MIN_PREMATURE_RETURNS && self.empty_polls >= threshold
    }

    pub fn reset_premature(&mut self) {
        self.empty_polls = 0;
    }

    /// Replaces the poll with a new one; returns the old poll, an owned handle on the new
    /// poll's registry (to re-register sources without borrowing the selector) and the new
    /// poll's waker. Nothing changes if creating any of them fails.
    pub fn rebuild(&mut self) -> io::Result<(Poll, Registry, Waker)> {
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKER_TOKEN)?;
        let registry = poll.registry().try_clone()?;
        let old = std::mem::replace(&mut self.poll, poll);
        self.empty_polls = 0;
        Ok((old, registry, waker))
    }

    /// Keeps a replaced poll open until [`Selector::release_retired`].
    pub fn retire(&mut self, old: Poll) {
        self.retired.push(old);
    }

    /// The current poll.
    pub fn poll(&self) -> &Poll {
        &self.poll
    }

    /// Closes selectors replaced by rebuilds (after libuv stopped watching them).
    pub fn release_retired(&mut self) {
        self.retired.clear();
    }
}
