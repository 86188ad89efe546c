//! [`EventLoopGroup`]: a fixed set of loops with a round-robin chooser.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::config::LoopConfig;
use crate::error::LoopError;
use crate::event_loop::EventLoop;
use crate::promise::Future;

/// Netty's round-robin `EventExecutorChooser`: hands out indices `0..len` in turn, with a
/// mask when `len` is a power of two and a modulo otherwise. [`EventLoopGroup::next`] uses it,
/// and so does anything else that spreads work over a fixed set of loops (the Node binding's
/// acceptor). Thread-safe.
#[derive(Debug)]
pub struct Chooser {
    next: AtomicUsize,
    len: usize,
    mask: Option<usize>,
}

impl Chooser {
    /// A chooser over `len` indices (`len` > 0).
    pub fn new(len: usize) -> Self {
        Chooser {
            next: AtomicUsize::new(0),
            len,
            mask: len.is_power_of_two().then(|| len - 1),
        }
    }

    /// The next index, round robin.
    pub fn next_index(&self) -> usize {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        match self.mask {
            Some(m) => n & m,
            None => n % self.len,
        }
    }

    /// True if `len` is a power of two (the mask is used).
    pub fn is_power_of_two_fast_path(&self) -> bool {
        self.mask.is_some()
    }
}

/// Loops that share work; `next()` hands them out in turn.
#[derive(Clone)]
pub struct EventLoopGroup {
    loops: Arc<Vec<EventLoop>>,
    chooser: Arc<Chooser>,
    /// Made on first use and shared by the group's clones (Netty's `terminationFuture()`).
    termination: Arc<OnceLock<Future<(), LoopError>>>,
}

/// The default number of loops: the machine's available parallelism.
pub fn default_loop_count() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl EventLoopGroup {
    /// `n` standalone loops (0: [`default_loop_count`]), named `{name}-{i}`.
    pub fn new(n: usize, config: LoopConfig) -> Result<Self, LoopError> {
        let n = if n == 0 { default_loop_count() } else { n };
        let mut loops = Vec::with_capacity(n);
        for i in 0..n {
            let mut c = config.clone();
            c.name = format!("{}-{i}", config.name);
            loops.push(EventLoop::standalone(c)?);
        }
        Ok(Self::from_loops(loops))
    }

    /// A group over loops made elsewhere (attached loops of the Node binding).
    pub fn from_loops(loops: Vec<EventLoop>) -> Self {
        assert!(!loops.is_empty(), "a group needs at least one loop");
        let chooser = Arc::new(Chooser::new(loops.len()));
        EventLoopGroup {
            loops: Arc::new(loops),
            chooser,
            termination: Arc::new(OnceLock::new()),
        }
    }

    /// The next loop by the round-robin chooser.
    pub fn next(&self) -> &EventLoop {
        &self.loops[self.chooser.next_index()]
    }

    /// Every loop of the group.
    pub fn loops(&self) -> &[EventLoop] {
        &self.loops
    }

    /// Number of loops.
    pub fn len(&self) -> usize {
        self.loops.len()
    }

    /// True if the group has no loop.
    pub fn is_empty(&self) -> bool {
        self.loops.is_empty()
    }

    /// True if the chooser uses the power-of-two fast path (a mask instead of a modulo).
    pub fn uses_power_of_two_chooser(&self) -> bool {
        self.chooser.is_power_of_two_fast_path()
    }

    /// Shuts every loop down gracefully and returns the group's termination future: the
    /// same future on every call (Netty's `shutdownGracefully` returns `terminationFuture()`).
    pub fn shutdown_gracefully(&self, quiet: Duration, timeout: Duration) -> Future<(), LoopError> {
        for l in self.loops.iter() {
            let f = l.shutdown_gracefully(quiet, timeout);
            // A loop answers with its termination future, which the group's waits for, or
            // with a failure of the call itself (a quiet period above the timeout).
            if !f.ptr_eq(&l.termination_future()) {
                return f;
            }
        }
        self.termination_future()
    }

    /// Completes when every loop has terminated (failed if one failed). The same future on
    /// every call.
    pub fn termination_future(&self) -> Future<(), LoopError> {
        self.termination
            .get_or_init(|| {
                Future::all(self.loops.iter().map(|l| l.termination_future()).collect())
            })
            .clone()
    }

    /// True once every loop terminated.
    pub fn is_terminated(&self) -> bool {
        self.loops.iter().all(|l| l.is_terminated())
    }

    /// Blocks until every loop terminated or `timeout` passes; `true` if all terminated.
    pub fn await_termination(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        self.loops.iter().all(|l| {
            l.await_termination(deadline.saturating_duration_since(std::time::Instant::now()))
        })
    }
}

impl std::fmt::Debug for EventLoopGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventLoopGroup").finish_non_exhaustive()
    }
}
