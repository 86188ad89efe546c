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
//! - `observe_output` (Netty's `observeOutput`, off by default): when a writer or all-idle
//!   timeout passes, a change of the outbound side since the last check (a completed write,
//!   a different pending byte count, or flush progress of a slow write still in progress)
//!   suppresses the event, except the first one after activity, as in Netty. The handler
//!   passes the channel's [`OutputState`] to [`poll_with_output`](IdleStateTracker::poll_with_output).
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

/// The outbound side of a channel as `observe_output` sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutputState {
    /// Pending outbound bytes.
    pub pending: usize,
    /// Flush progress (grows with every byte handed to the socket).
    pub progress: u64,
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
    observe_output: bool,
    last_change_check: Duration,
    last_output: OutputState,
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
            observe_output: false,
            last_change_check: now,
            last_output: OutputState::default(),
        }
    }

    /// Netty's `observeOutput`: whether outbound progress counts against writer idleness.
    pub fn set_observe_output(&mut self, on: bool) {
        self.observe_output = on;
    }

    /// Netty's `resetReadTimeout`: counts as a read at `now` without a read (the next reader
    /// and all-idle events come a full period later).
    pub fn reset_read(&mut self, now: Duration) {
        if self.tracks_reads() {
            self.last_read = now;
        }
    }

    /// Netty's `resetWriteTimeout`: counts as a completed write at `now`.
    pub fn reset_write(&mut self, now: Duration) {
        if self.writer.is_some() || self.all.is_some() {
            self.last_write = now;
        }
    }

    /// Netty's `hasOutputChanged`: a change since the last check suppresses a repeat event.
    fn output_changed(&mut self, first: bool, output: Option<OutputState>) -> bool {
        if !self.observe_output {
            return false;
        }
        if self.last_change_check != self.last_write {
            self.last_change_check = self.last_write;
            if !first {
                return true;
            }
        }
        if let Some(o) = output {
            let before = std::mem::replace(&mut self.last_output, o);
            if (o.pending != before.pending || o.progress != before.progress) && !first {
                return true;
            }
        }
        false
    }

    fn tracks_reads(&self) -> bool {
        self.reader.is_some() || self.all.is_some()
    }

    /// A message was read (Netty's `channelRead`): a read burst is in progress.
    pub fn on_read(&mut self, now: Duration) {
        if !self.tracks_reads() {
            return;
        }
        self.begin_read();
        self.last_read = now;
    }

    /// A read burst started, as [`on_read`](Self::on_read) without recording the time (what
    /// Netty's `channelRead` does: it reads no clock). While the burst lasts the reader counts
    /// as busy whatever the last read time says, and its end
    /// ([`on_read_complete`](Self::on_read_complete)) records the time.
    pub fn begin_read(&mut self) {
        if !self.tracks_reads() {
            return;
        }
        self.reading = true;
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
        self.poll_inner(now, None)
    }

    /// As [`poll`](IdleStateTracker::poll), observing the channel's outbound side when
    /// `observe_output` is on.
    pub fn poll_with_output(&mut self, now: Duration, output: OutputState) -> Vec<IdleStateEvent> {
        self.poll_inner(now, Some(output))
    }

    fn poll_inner(&mut self, now: Duration, output: Option<OutputState>) -> Vec<IdleStateEvent> {
        let mut events = Vec::new();
        let last_any = self.last_read.max(self.last_write);
        let (last_read, last_write, reading) = (self.last_read, self.last_write, self.reading);
        if let Some(first) = self
            .reader
            .as_mut()
            .and_then(|t| t.poll(now, last_read, reading))
        {
            events.push(IdleStateEvent {
                state: IdleState::ReaderIdle,
                first,
            });
        }
        if let Some(first) = self
            .writer
            .as_mut()
            .and_then(|t| t.poll(now, last_write, false))
        {
            if !self.output_changed(first, output) {
                events.push(IdleStateEvent {
                    state: IdleState::WriterIdle,
                    first,
                });
            }
        }
        if let Some(first) = self
            .all
            .as_mut()
            .and_then(|t| t.poll(now, last_any, reading))
        {
            if !self.output_changed(first, output) {
                events.push(IdleStateEvent {
                    state: IdleState::AllIdle,
                    first,
                });
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
