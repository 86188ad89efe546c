//! The clock logic of Netty's `IdleStateHandler`, without timers or a pipeline.
//!
//! Times are `Duration`s since an arbitrary origin (the loop's clock); tests pass a fake one.
//! The tracker models Netty's three timeout tasks as three deadlines. A handler arms one
//! timer at [`next_deadline`](IdleStateTracker::next_deadline), calls
//! [`poll`](IdleStateTracker::poll) when it fires, fires the returned events, and re-arms.
//!
//! Semantics (Netty's):
//! - Each enabled kind (reader, writer, all) has a period; a zero or absent period disables
//!   it, and enabled periods are at least [`MIN_IDLE_TIMEOUT`].
//! - When a kind's deadline passes, the time since its last activity is compared with the
//!   period. If a full period elapsed, an event fires and the next deadline is one period
//!   later; otherwise the deadline moves to one period after the last activity. Activity
//!   therefore postpones the next event to a full period after it, and an idle channel gets
//!   a repeat event every period.
//! - Reader activity is the end of a read burst (`on_read_complete`); while a burst is in
//!   progress (`on_read` without `on_read_complete`) the reader and all-idle kinds count as
//!   busy. Writer activity is a completed write (`on_write`). All-idle uses the later of both.
//! - `first` is true for the first event of a kind after activity of that kind (reads reset
//!   reader and all, writes reset writer and all), false for repeats.
//! - A late `poll` fires at most one event per kind; there is no catch-up.
//!
//! Invariant: `next_deadline()` is never later than the time of the next event, so waking
//! at it never misses one (it may be early after activity; `poll` then returns nothing).

use std::time::Duration;

/// Smallest enabled idle period (Netty's `MIN_TIMEOUT_NANOS`).
pub const MIN_IDLE_TIMEOUT: Duration = Duration::from_millis(1);

/// Which side of the channel has been idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdleState {
    /// No read completed for the reader period.
    ReaderIdle,
    /// No write completed for the writer period.
    WriterIdle,
    /// Neither read nor write for the all period.
    AllIdle,
}

/// An idle notification, fired to the pipeline as a user event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleStateEvent {
    /// Which kind of idleness.
    pub state: IdleState,
    /// True for the first event since the last activity, false for repeats.
    pub first: bool,
}

/// Idle periods; `None` or zero disables a kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdleConfig {
    /// Reader idle period.
    pub reader: Option<Duration>,
    /// Writer idle period.
    pub writer: Option<Duration>,
    /// Reader-and-writer idle period.
    pub all: Option<Duration>,
}

#[derive(Debug, Clone)]
struct Timeout {
    period: Duration,
    deadline: Duration,
    first: bool,
}

impl Timeout {
    fn new(period: Option<Duration>, now: Duration) -> Option<Self> {
        let period = period.filter(|p| !p.is_zero())?.max(MIN_IDLE_TIMEOUT);
        Some(Timeout {
            period,
            deadline: now.saturating_add(period),
            first: true,
        })
    }

    /// Runs the timeout task if due; returns `Some(first)` when an event fires.
    fn poll(&mut self, now: Duration, last_activity: Duration, busy: bool) -> Option<bool> {
        if now < self.deadline {
            return None;
        }
        let elapsed = now.saturating_sub(last_activity);
        if busy || elapsed < self.period {
            let wait = if busy {
                self.period
            } else {
                self.period - elapsed
            };
            self.deadline = now.saturating_add(wait);
            return None;
        }
        self.deadline = now.saturating_add(self.period);
        Some(std::mem::replace(&mut self.first, false))
    }
}

/// Tracks reads and writes of one channel and tells when it is idle.
#[derive(Debug, Clone)]
pub struct IdleStateTracker {
    reader: Option<Timeout>,
    writer: Option<Timeout>,
    all: Option<Timeout>,
    reading: bool,
    last_read: Duration,
    last_write: Duration,
}

impl IdleStateTracker {
    /// Starts tracking at `now` (Netty's `initialize` at channel active): the channel counts
    /// as having just read and written.
    pub fn new(cfg: IdleConfig, now: Duration) -> Self {
        IdleStateTracker {
            reader: Timeout::new(cfg.reader, now),
            writer: Timeout::new(cfg.writer, now),
            all: Timeout::new(cfg.all, now),
            reading: false,
            last_read: now,
            last_write: now,
        }
    }

    fn tracks_reads(&self) -> bool {
        self.reader.is_some() || self.all.is_some()
    }

    /// A message was read (Netty's `channelRead`): a read burst is in progress.
    pub fn on_read(&mut self, now: Duration) {
        if !self.tracks_reads() {
            return;
        }
        self.reading = true;
        self.last_read = now;
        for timeout in [&mut self.reader, &mut self.all].into_iter().flatten() {
            timeout.first = true;
        }
    }

    /// The read burst ended (Netty's `channelReadComplete`): records the last read time.
    pub fn on_read_complete(&mut self, now: Duration) {
        if self.tracks_reads() && self.reading {
            self.last_read = now;
            self.reading = false;
        }
    }

    /// A write completed (Netty's write-promise listener).
    pub fn on_write(&mut self, now: Duration) {
        if self.writer.is_none() && self.all.is_none() {
            return;
        }
        self.last_write = now;
        for timeout in [&mut self.writer, &mut self.all].into_iter().flatten() {
            timeout.first = true;
        }
    }

    /// Runs every due timeout at `now`; returns the events to fire, in the order reader,
    /// writer, all.
    pub fn poll(&mut self, now: Duration) -> Vec<IdleStateEvent> {
        let mut events = Vec::new();
        let last_any = self.last_read.max(self.last_write);
        let checks = [
            (
                &mut self.reader,
                IdleState::ReaderIdle,
                self.last_read,
                self.reading,
            ),
            (
                &mut self.writer,
                IdleState::WriterIdle,
                self.last_write,
                false,
            ),
            (&mut self.all, IdleState::AllIdle, last_any, self.reading),
        ];
        for (timeout, state, last_activity, busy) in checks {
            if let Some(first) = timeout
                .as_mut()
                .and_then(|t| t.poll(now, last_activity, busy))
            {
                events.push(IdleStateEvent { state, first });
            }
        }
        events
    }

    /// The earliest time at which `poll` may have something to do; `None` when every kind
    /// is disabled.
    pub fn next_deadline(&self) -> Option<Duration> {
        [&self.reader, &self.writer, &self.all]
            .into_iter()
            .flatten()
            .map(|t| t.deadline)
            .min()
    }
}

#[cfg(test)]
#[path = "idle_tests.rs"]
mod tests;
