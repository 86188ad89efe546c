//! [`IoDriver`]: the I/O side of one loop — the selector (mio `Poll`), the readiness buffer
//! and the table of registered sources.
//!
//! Ground rules (kept by construction, the fields are private to this module):
//! - Loop thread only (`!Send`, owned by the loop's `LocalLoop`).
//! - The driver never calls an [`IoHandler`] and never lends a borrow out: it hands back owned
//!   values (the ready events of a poll, a handler `Rc`, the sources to re-register after a
//!   rebuild, the sources to close) that the caller uses after the borrow ended. Handlers and
//!   sources it lets go of are dropped after its borrows end.
//! - Descriptors: the selector's fd (and those of selectors replaced by rebuilds) stay open
//!   until [`IoDriver::release`] / [`IoDriver::release_retired`]; an attached loop's fd is
//!   watched by libuv, so only the driver's owner knows when closing it is safe.

use std::cell::{Cell, RefCell};
use std::io;
use std::rc::Rc;
use std::time::Duration;

use mio::event::Source;
use mio::{Interest, Poll, Registry, Token, Waker};

use crate::config::SelectorFault;
use crate::io::{IoHandler, IoTable, Readiness};
use crate::selector::{PollOutcome, Selector};

/// Ready (token, readiness) pairs of one poll.
pub(crate) type ReadyEvents = Vec<(Token, Readiness)>;

/// What a selector rebuild hands back: the caller re-registers `sources` from `old` to `new`
/// (calling their handlers with no borrow held), then gives `old` back with
/// [`IoDriver::retire`].
pub(crate) struct Rebuilt {
    pub old: Poll,
    pub new: Registry,
    pub waker: Waker,
    pub sources: Vec<(Token, Rc<dyn IoHandler>)>,
}

pub(crate) struct IoDriver {
    /// `None` once released.
    selector: RefCell<Option<Selector>>,
    ready: RefCell<ReadyEvents>,
    table: RefCell<IoTable>,
    closed_sources: Cell<bool>,
}

fn released() -> io::Error {
    io::Error::other("the event loop's selector was released")
}

impl IoDriver {
    pub fn new(poll: Poll, capacity: usize) -> Self {
        IoDriver {
            selector: RefCell::new(Some(Selector::new(poll, capacity))),
            ready: RefCell::new(Vec::with_capacity(capacity)),
            table: RefCell::new(IoTable::default()),
            closed_sources: Cell::new(false),
        }
    }

    /// Runs `f` with the current registry (no user code runs meanwhile).
    fn with_registry<R>(&self, f: impl FnOnce(&Registry) -> io::Result<R>) -> io::Result<R> {
        let sel = self.selector.borrow();
        let sel = sel.as_ref().ok_or_else(released)?;
        f(sel.poll().registry())
    }

    pub fn register(
        &self,
        source: &mut dyn Source,
        interest: Interest,
        handler: Rc<dyn IoHandler>,
    ) -> io::Result<Token> {
        let token = self.table.borrow_mut().insert(handler);
        let res = self.with_registry(|r| source.register(r, token, interest));
        if let Err(e) = res {
            let removed = self.table.borrow_mut().remove(token);
            drop(removed);
            return Err(e);
        }
        Ok(token)
    }

    pub fn reregister(
        &self,
        source: &mut dyn Source,
        token: Token,
        interest: Interest,
    ) -> io::Result<()> {
        self.with_registry(|r| source.reregister(r, token, interest))
    }

    pub fn deregister(&self, source: &mut dyn Source, token: Token) -> io::Result<()> {
        let removed = self.table.borrow_mut().remove(token);
        drop(removed);
        self.with_registry(|r| source.deregister(r))
    }

    pub fn registered_count(&self) -> usize {
        self.table.borrow().len()
    }

    /// The handler registered for `token`, if still registered.
    pub fn handler(&self, token: Token) -> Option<Rc<dyn IoHandler>> {
        self.table.borrow().get(token)
    }

    /// Polls once; returns the outcome and the ready events (give the buffer back with
    /// [`IoDriver::recycle`]).
    pub fn select(
        &self,
        timeout: Option<Duration>,
        fault: SelectorFault,
    ) -> (PollOutcome, ReadyEvents) {
        let mut ready = std::mem::take(&mut *self.ready.borrow_mut());
        let outcome = match self.selector.borrow_mut().as_mut() {
            Some(sel) => sel.select(timeout, fault, &mut ready),
            None => PollOutcome::TimedOut,
        };
        (outcome, ready)
    }

    pub fn recycle(&self, mut ready: ReadyEvents) {
        ready.clear();
        *self.ready.borrow_mut() = ready;
    }

    pub fn reset_premature(&self) {
        if let Some(sel) = self.selector.borrow_mut().as_mut() {
            sel.reset_premature();
        }
    }

    /// Counts a premature empty poll; `true` when the rebuild threshold is reached.
    pub fn count_premature(&self, threshold: u32) -> bool {
        self.selector
            .borrow_mut()
            .as_mut()
            .is_some_and(|sel| sel.count_premature(threshold))
    }

    /// Replaces the selector; see [`Rebuilt`].
    pub fn rebuild(&self) -> io::Result<Rebuilt> {
        let (old, new, waker) = self
            .selector
            .borrow_mut()
            .as_mut()
            .ok_or_else(released)?
            .rebuild()?;
        let sources = self.table.borrow().entries();
        Ok(Rebuilt {
            old,
            new,
            waker,
            sources,
        })
    }

    /// Keeps the poll replaced by a rebuild open until [`IoDriver::release_retired`].
    pub fn retire(&self, old: Poll) {
        match self.selector.borrow_mut().as_mut() {
            Some(sel) => sel.retire(old),
            None => drop(old),
        }
    }

    /// Closes selectors replaced by rebuilds.
    pub fn release_retired(&self) {
        if let Some(sel) = self.selector.borrow_mut().as_mut() {
            sel.release_retired();
        }
    }

    /// Every source registered now (termination closes what is left).
    pub fn sources(&self) -> Vec<Rc<dyn IoHandler>> {
        self.table
            .borrow()
            .entries()
            .into_iter()
            .map(|(_, h)| h)
            .collect()
    }

    /// The sources to close when the loop shuts down, the first time only.
    pub fn sources_to_close(&self) -> Vec<Rc<dyn IoHandler>> {
        if self.closed_sources.replace(true) {
            return Vec::new();
        }
        self.sources()
    }

    /// Forgets every registered source (termination).
    pub fn clear(&self) {
        let table = std::mem::take(&mut *self.table.borrow_mut());
        drop(table);
    }

    /// Closes the selector's fd and those of retired selectors; `false` if already released.
    pub fn release(&self) -> bool {
        let sel = self.selector.borrow_mut().take();
        sel.is_some()
    }

    pub fn is_released(&self) -> bool {
        self.selector.borrow().is_none()
    }

    /// The selector's fd; `None` once released.
    #[cfg(unix)]
    pub fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.selector
            .borrow()
            .as_ref()
            .map(|s| s.poll().as_raw_fd())
    }
}
