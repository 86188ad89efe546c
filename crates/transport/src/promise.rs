//! Channel promises: the eventloop crate's `Promise`, plus a "void" promise for writes whose
//! result nobody wants (no allocation), plus listeners that may capture `!Send` values.
//!
//! Ground rules: channel promises are completed on the channel's loop thread. A *local*
//! listener lives in a thread-local table of the thread that added it; the `Send` listener
//! registered on the promise carries only its key. When the promise completes on that thread
//! (the normal case for channel operations) the listener runs right there, in order with the
//! other listeners; when it completes on another thread, the listener is sent to the adding
//! thread's loop as a task; if that thread runs no loop, the listener is dropped unrun.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::thread::{self, ThreadId};

use netloop_eventloop::{EventLoop, Future, LocalLoop, Promise};

use crate::error::TransportError;

/// The result of a channel operation.
pub type ChannelFuture = Future<(), TransportError>;

/// The writable side of a channel operation's result; may be *void* (nobody listens).
#[derive(Clone, Default)]
pub struct ChannelPromise(Option<Promise<(), TransportError>>);

impl ChannelPromise {
    /// A promise somebody will listen to.
    pub fn new() -> Self {
        ChannelPromise(Some(Promise::new()))
    }

    /// A promise nobody listens to: completing it does nothing and costs nothing.
    pub fn void() -> Self {
        ChannelPromise(None)
    }

    /// Wraps an eventloop promise.
    pub fn from_promise(p: Promise<(), TransportError>) -> Self {
        ChannelPromise(Some(p))
    }

    pub fn is_void(&self) -> bool {
        self.0.is_none()
    }

    /// The future of this promise; `None` for a void promise.
    pub fn future(&self) -> Option<ChannelFuture> {
        self.0.as_ref().map(|p| p.future())
    }

    /// The future of this promise; for a void promise a future that never completes.
    pub(crate) fn future_or_never(&self) -> ChannelFuture {
        self.future().unwrap_or_else(|| Promise::new().future())
    }

    pub fn try_success(&self) -> bool {
        self.0.as_ref().is_some_and(|p| p.try_success(()))
    }

    pub fn try_failure(&self, e: TransportError) -> bool {
        self.0.as_ref().is_some_and(|p| p.try_failure(e))
    }

    pub fn try_complete(&self, r: Result<(), TransportError>) -> bool {
        self.0.as_ref().is_some_and(|p| p.try_complete(r))
    }

    /// A promise that can be listened to in place of this one (Netty's `unvoid`). A void
    /// promise becomes a real one whose failure is fired into `pipeline`'s exceptionCaught,
    /// so a handler that needs a write's completion (e.g. idle detection) does not make a
    /// failure that would have been reported disappear. A real promise is returned as is.
    pub fn unvoid(self, pipeline: &crate::ChannelPipeline) -> ChannelPromise {
        if !self.is_void() {
            return self;
        }
        let p = ChannelPromise::new();
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
        self.0.as_ref().is_some_and(|p| p.is_done())
    }
}

impl std::fmt::Debug for ChannelPromise {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            None => write!(f, "ChannelPromise(void)"),
            Some(p) => write!(f, "ChannelPromise(done: {})", p.is_done()),
        }
    }
}

thread_local! {
    static LOCAL_LISTENERS: RefCell<HashMap<u64, Box<dyn Any>>> = RefCell::new(HashMap::new());
    static NEXT_ID: Cell<u64> = const { Cell::new(0) };
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
        let id = NEXT_ID.with(|n| {
            let id = n.get();
            n.set(id + 1);
            id
        });
        let boxed: LocalFn<T, E> = Box::new(listener);
        LOCAL_LISTENERS.with(|m| m.borrow_mut().insert(id, Box::new(boxed)));
        let key = LocalKey {
            id: Some(id),
            thread: thread::current().id(),
            home: LocalLoop::current().map(|l| l.handle()),
        };
        self.add_listener(move |r| key.run::<T, E>(r));
    }
}

/// The `Send` half of a local listener: its key in the adding thread's table.
struct LocalKey {
    id: Option<u64>,
    thread: ThreadId,
    home: Option<EventLoop>,
}

fn take_local<T: 'static, E: 'static>(id: u64) -> Option<LocalFn<T, E>> {
    let any = LOCAL_LISTENERS.with(|m| m.borrow_mut().remove(&id))?;
    any.downcast::<LocalFn<T, E>>().ok().map(|b| *b)
}

impl LocalKey {
    fn run<T, E>(mut self, r: &Result<T, E>)
    where
        T: Clone + Send + Sync + 'static,
        E: Clone + Send + Sync + 'static,
    {
        let Some(id) = self.id.take() else { return };
        if thread::current().id() == self.thread {
            if let Some(f) = take_local::<T, E>(id) {
                f(r);
            }
            return;
        }
        let r = r.clone();
        let sent = self.home.as_ref().map(|home| {
            home.execute(move || {
                if let Some(f) = take_local::<T, E>(id) {
                    f(&r);
                }
            })
        });
        if !matches!(sent, Some(Ok(()))) {
            eprintln!(
                "netloop: a local promise listener was dropped: its thread runs no live loop"
            );
        }
    }
}

impl Drop for LocalKey {
    fn drop(&mut self) {
        // The promise was dropped before completing: forget the listener if we are home.
        if let Some(id) = self.id.take() {
            if thread::current().id() == self.thread {
                // try_*: a drop during thread-local teardown or inside the table must not panic.
                let removed = LOCAL_LISTENERS
                    .try_with(|m| m.try_borrow_mut().ok().and_then(|mut m| m.remove(&id)))
                    .ok()
                    .flatten();
                drop(removed);
            }
        }
    }
}
