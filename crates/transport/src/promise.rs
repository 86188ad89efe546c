//! Channel promises: the eventloop crate's `Promise`, plus a "void" promise for writes whose
//! result nobody wants (no allocation), plus listeners that may capture `!Send` values.
//!
//! Ground rules: channel promises are completed on the channel's loop thread. A *local*
//! listener lives in a thread-local table of the thread that added it; the `Send` listener
//! registered on the promise carries only its key. When the promise completes on that thread
//! (the normal case for channel operations) the listener runs right there, in order with the
//! other listeners; when it completes on another thread, the listener is sent to the adding
//! thread's loop as a task; if that thread runs no loop, the listener is dropped unrun.
//!
//! No entry of the table leaks: a key that cannot deliver its listener from another thread
//! (the home loop rejected the task, or the promise was dropped there uncompleted) puts the
//! entry's id on the adding thread's *orphan list* (a `Send` list of ids); the adding thread
//! removes orphaned entries, and drops their listeners, whenever it next touches the table.
//! A task carrying a listener home owns the key, so dropping that task unrun (a rejection)
//! orphans the entry too.

use std::any::Any;
use std::rc::{Rc, Weak};
use std::thread::{self, ThreadId};

use netloop_eventloop::{EventLoop, Future, LocalLoop, Promise};

use crate::error::TransportError;
use crate::pipeline::PipelineInner;
use crate::thread_context::{self, Orphans, ThreadContext};

/// The result of a channel operation.
pub type ChannelFuture = Future<(), TransportError>;

/// The writable side of a channel operation's result; may be *void* (nobody listens).
#[derive(Clone, Default)]
pub struct ChannelPromise(Repr);

#[derive(Clone, Default)]
enum Repr {
    /// Nobody listens: completing it does nothing.
    #[default]
    Void,
    /// Somebody may listen.
    Real(Promise<(), TransportError>),
    /// Nobody listens, but a failure is fired into the pipeline's `exception_caught` (Netty's
    /// void promise with `fireException`): no allocation per operation.
    Fire(Weak<PipelineInner>),
}

impl ChannelPromise {
    /// A promise somebody will listen to.
    pub fn new() -> Self {
        ChannelPromise(Repr::Real(Promise::new()))
    }

    /// A promise nobody listens to: completing it does nothing and costs nothing.
    pub fn void() -> Self {
        ChannelPromise(Repr::Void)
    }

    /// A void promise whose failure is fired into `pipeline`'s `exception_caught` (Netty's
    /// `voidPromise()` of a channel): nothing fails silently, and nothing is allocated.
    pub fn void_firing(pipeline: &crate::ChannelPipeline) -> Self {
        ChannelPromise(Repr::Fire(Rc::downgrade(&pipeline.0)))
    }

    /// Wraps an eventloop promise.
    pub fn from_promise(p: Promise<(), TransportError>) -> Self {
        ChannelPromise(Repr::Real(p))
    }

    /// True if nobody listens (a void promise, firing or not).
    pub fn is_void(&self) -> bool {
        !matches!(self.0, Repr::Real(_))
    }

    /// True for a void promise whose failure is fired into its pipeline
    /// ([`ChannelPromise::void_firing`]).
    pub fn is_firing(&self) -> bool {
        matches!(self.0, Repr::Fire(_))
    }

    fn real(&self) -> Option<&Promise<(), TransportError>> {
        match &self.0 {
            Repr::Real(p) => Some(p),
            _ => None,
        }
    }

    /// The future of this promise; `None` for a void promise.
    pub fn future(&self) -> Option<ChannelFuture> {
        self.real().map(|p| p.future())
    }

    /// The future of this promise; for a void promise a future that never completes.
    pub(crate) fn future_or_never(&self) -> ChannelFuture {
        self.future().unwrap_or_else(|| Promise::new().future())
    }

    /// Marks the operation done; false if already done (or void).
    pub fn try_success(&self) -> bool {
        self.real().is_some_and(|p| p.try_success(()))
    }

    /// Fails the promise; a firing void promise fires `e` into its pipeline instead (and
    /// returns true: the failure was reported).
    pub fn try_failure(&self, e: TransportError) -> bool {
        match &self.0 {
            Repr::Real(p) => p.try_failure(e),
            Repr::Fire(pipeline) => match pipeline.upgrade() {
                Some(p) => {
                    crate::ChannelPipeline(p).fire_exception_caught(e);
                    true
                }
                None => false,
            },
            Repr::Void => false,
        }
    }

    /// Completes with `r` (see `try_success` and `try_failure`).
    pub fn try_complete(&self, r: Result<(), TransportError>) -> bool {
        match r {
            Ok(()) => self.try_success(),
            Err(e) => self.try_failure(e),
        }
    }

    /// A promise that can be listened to in place of this one (Netty's `unvoid`). A void
    /// promise becomes a real one that reports as the void one would: the channel's firing
    /// void promise (`voidPromise()`) fires a failure into `pipeline`'s exceptionCaught, so a
    /// handler that needs a write's completion (e.g. idle detection) does not make a failure
    /// that would have been reported disappear; the silent one (a write made without a
    /// promise) stays silent, so it does not make one appear per failed write either (a reset
    /// channel with thousands of queued writes behind an IdleStateHandler reported each).
    /// A real promise is returned as is.
    pub fn unvoid(self, pipeline: &crate::ChannelPipeline) -> ChannelPromise {
        if !self.is_void() {
            return self;
        }
        let p = ChannelPromise::new();
        if !self.is_firing() {
            return p;
        }
        if let Some(f) = p.future() {
            let pipeline = pipeline.clone();
            f.add_local_listener(move |r| {
                if let Err(e) = r {
                    pipeline.fire_exception_caught(e.clone());
                }
            });
        }
        p
    }

    /// True once completed; a void promise is never done.
    pub fn is_done(&self) -> bool {
        self.real().is_some_and(|p| p.is_done())
    }

    /// Netty's `cancel(mayInterruptIfRunning)`: fails the promise with `ERR_CANCELLED` unless
    /// it is done or uncancellable; `true` if this call cancelled it. A void promise cannot
    /// be cancelled. Nothing interrupts a running operation, so the flag has no effect.
    pub fn cancel(&self, may_interrupt_if_running: bool) -> bool {
        self.real()
            .is_some_and(|p| p.cancel(may_interrupt_if_running))
    }

    /// Netty's `setUncancellable`: `true` if the promise is now uncancellable (or done
    /// without being cancelled, or void); `false` if it was cancelled.
    pub fn set_uncancellable(&self) -> bool {
        self.real().map_or(true, |p| p.set_uncancellable())
    }

    /// True while [`ChannelPromise::cancel`] would succeed.
    pub fn is_cancellable(&self) -> bool {
        self.real().is_some_and(|p| p.is_cancellable())
    }

    /// True once cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.real().is_some_and(|p| p.is_cancelled())
    }
}

impl std::fmt::Debug for ChannelPromise {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Repr::Void => write!(f, "ChannelPromise(void)"),
            Repr::Fire(_) => write!(f, "ChannelPromise(void, fires exceptions)"),
            Repr::Real(p) => write!(f, "ChannelPromise(done: {})", p.is_done()),
        }
    }
}

/// Removes the entries other threads orphaned (the thread context's `orphans`); their
/// listeners drop after the table's borrow.
fn purge_orphans() {
    let removed: Vec<Box<dyn Any>> = thread_context::with(|c| {
        let ids = c.take_orphans();
        ids.iter()
            .filter_map(|&id| c.try_remove_listener(id).ok().flatten())
            .collect()
    });
    drop(removed);
}

/// Local listeners waiting in the calling thread's table (after removing orphaned ones).
#[doc(hidden)]
pub fn pending_local_listeners() -> usize {
    purge_orphans();
    thread_context::with(ThreadContext::listener_count)
}

type LocalFn<T, E> = Box<dyn FnOnce(&Result<T, E>)>;

/// Listeners that may capture `!Send` values (channels, contexts, JS references).
pub trait LocalListenerExt<T, E> {
    /// Runs `listener` once with the result, on the thread that called this (see module docs).
    fn add_local_listener(&self, listener: impl FnOnce(&Result<T, E>) + 'static);
}

impl<T, E> LocalListenerExt<T, E> for Future<T, E>
where
    T: Clone + Send + Sync + 'static,
    E: Clone + Send + Sync + 'static,
{
    fn add_local_listener(&self, listener: impl FnOnce(&Result<T, E>) + 'static) {
        let id = thread_context::with(ThreadContext::next_listener_id);
        purge_orphans();
        let boxed: LocalFn<T, E> = Box::new(listener);
        // Handed back only after the thread's teardown: it can never run then.
        let refused = thread_context::with(|c| c.insert_listener(id, Box::new(boxed)));
        drop(refused);
        let key = LocalKey {
            id: Some(id),
            thread: thread::current().id(),
            home: LocalLoop::current().map(|l| l.handle()),
            orphans: thread_context::with(ThreadContext::orphans),
        };
        self.add_listener(move |r| key.run::<T, E>(r));
    }
}

/// The `Send` half of a local listener: its key in the adding thread's table.
struct LocalKey {
    id: Option<u64>,
    thread: ThreadId,
    home: Option<EventLoop>,
    /// The adding thread's orphan list.
    orphans: Orphans,
}

fn take_local<T: 'static, E: 'static>(id: u64) -> Option<LocalFn<T, E>> {
    purge_orphans();
    let any = thread_context::with(|c| c.try_remove_listener(id)).ok()??;
    any.downcast::<LocalFn<T, E>>().ok().map(|b| *b)
}

impl LocalKey {
    fn run<T, E>(mut self, r: &Result<T, E>)
    where
        T: Clone + Send + Sync + 'static,
        E: Clone + Send + Sync + 'static,
    {
        if thread::current().id() == self.thread {
            if let Some(f) = self.id.take().and_then(take_local::<T, E>) {
                f(r);
            }
            return;
        }
        let Some(home) = self.home.clone() else {
            netloop_eventloop::log::warn(
                "netloop: a local promise listener was dropped: its thread runs no live loop",
            );
            return; // `self` drops here: the entry is orphaned.
        };
        let r = r.clone();
        // The task owns the key: run at home it takes the listener; dropped unrun (rejected)
        // the key orphans the entry.
        let sent = home.execute(move || {
            let mut key = self;
            if let Some(f) = key.id.take().and_then(take_local::<T, E>) {
                f(&r);
            }
        });
        if sent.is_err() {
            netloop_eventloop::log::warn(
                "netloop: a local promise listener was dropped: its thread runs no live loop",
            );
        }
    }
}

impl Drop for LocalKey {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        if thread::current().id() == self.thread {
            // The promise was dropped before completing, at home: forget the listener now.
            // try_*: a drop inside the table must not panic.
            match thread_context::with(|c| c.try_remove_listener(id)) {
                Ok(Some(listener)) => drop(listener),
                // Not there, or the table is borrowed right now: let the next touch remove it.
                Ok(None) | Err(()) => self.orphan(id),
            }
        } else {
            // Away from home the entry cannot be touched: the adding thread removes it.
            self.orphan(id);
        }
    }
}

impl LocalKey {
    fn orphan(&self, id: u64) {
        self.orphans
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(id);
    }
}
