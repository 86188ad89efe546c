//! One promise/future type for every asynchronous result of the core.
//!
//! Invariants:
//! - A promise completes at most once; later `try_*` calls return `false` and change nothing.
//! - Listeners run in the order they were added, one at a time, each exactly once — also
//!   when completion on one thread races `add_listener` on another. Whoever finds listeners
//!   to run while nobody runs them becomes the promise's *notifier* (`notifying`) and runs
//!   them until the list is empty; listeners added meanwhile (on any thread) join the list
//!   and are run by that notifier.
//! - Notification is trampolined per thread: a listener that completes another promise does
//!   not recurse into that promise's listeners, they are queued and run by the outermost
//!   notification. A chain of a million promises therefore runs in constant stack.
//! - A panicking listener is reported through the log facade and the remaining listeners
//!   still run.
//! - Blocking (`wait`, `wait_timeout`) on a future that is not complete, from a thread that
//!   is running an event-loop iteration, fails at once with
//!   [`LoopError::BlockingOperation`] (Netty's `BlockingOperationException`): the loop
//!   that would complete it could be the blocked one.
//! - Cancellation (`cancel`) completes the promise with [`LoopError::Cancelled`] unless it is
//!   done or was made uncancellable.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::LoopError;
use crate::thread_context::{self, ThreadContext};

type Listener<T, E> = Box<dyn FnOnce(&Result<T, E>) + Send + 'static>;

struct State<T, E> {
    result: Option<Arc<Result<T, E>>>,
    listeners: VecDeque<Listener<T, E>>,
    /// A thread is running (or has queued the run of) this promise's listeners.
    notifying: bool,
    uncancellable: bool,
    cancelled: bool,
    /// Threads blocked in `wait`/`wait_timeout`: completion wakes the condvar only for them
    /// (a `notify_all` with nobody waiting still costs a futex system call).
    waiters: usize,
}

struct Inner<T, E> {
    state: Mutex<State<T, E>>,
    done: Condvar,
}

impl<T, E> Inner<T, E> {
    fn lock(&self) -> MutexGuard<'_, State<T, E>> {
        // A panic never happens while the lock is held (listeners run outside it), so a
        // poisoned lock still holds consistent state.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl<T: Send + Sync + 'static, E: Send + Sync + 'static> Inner<T, E> {
    /// Called with the lock held and a result set: if listeners wait and nobody runs them,
    /// this thread becomes the notifier (the lock must be released before `notify`).
    fn claim_notifier(st: &mut State<T, E>) -> bool {
        if st.notifying || st.listeners.is_empty() {
            return false;
        }
        st.notifying = true;
        true
    }

    /// The notifier's job: run listeners in order until none is left.
    fn drain(self: Arc<Self>) {
        loop {
            let (listener, result) = {
                let mut st = self.lock();
                match (st.listeners.pop_front(), st.result.clone()) {
                    (Some(l), Some(r)) => (l, r),
                    _ => {
                        st.notifying = false;
                        return;
                    }
                }
            };
            if catch_unwind(AssertUnwindSafe(|| listener(&result))).is_err() {
                crate::log::error(
                    "netloop: a promise listener panicked; the remaining listeners still run",
                );
            }
        }
    }
}

/// The writable side of an asynchronous result.
pub struct Promise<T, E> {
    inner: Arc<Inner<T, E>>,
}

/// The readable side of an asynchronous result. Cheap to clone.
pub struct Future<T, E> {
    inner: Arc<Inner<T, E>>,
}

impl<T, E> Clone for Future<T, E> {
    fn clone(&self) -> Self {
        Future {
            inner: self.inner.clone(),
        }
    }
}

impl<T, E> Clone for Promise<T, E> {
    fn clone(&self) -> Self {
        Promise {
            inner: self.inner.clone(),
        }
    }
}

impl<T: Send + Sync + 'static, E: Send + Sync + 'static> Default for Promise<T, E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Send + Sync + 'static, E: Send + Sync + 'static> Promise<T, E> {
    /// A promise not completed yet.
    pub fn new() -> Self {
        Promise {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    result: None,
                    listeners: VecDeque::new(),
                    notifying: false,
                    uncancellable: false,
                    cancelled: false,
                    waiters: 0,
                }),
                done: Condvar::new(),
            }),
        }
    }

    /// A future already completed with `result`.
    pub fn completed(result: Result<T, E>) -> Future<T, E> {
        let p = Self::new();
        p.try_complete(result);
        p.future()
    }

    /// The read side of this promise.
    pub fn future(&self) -> Future<T, E> {
        Future {
            inner: self.inner.clone(),
        }
    }

    /// Completes with `value`; `false` if already completed.
    pub fn try_success(&self, value: T) -> bool {
        self.try_complete(Ok(value))
    }

    /// Completes with `error`; `false` if already completed.
    pub fn try_failure(&self, error: E) -> bool {
        self.try_complete(Err(error))
    }

    /// Completes the promise; `false` if it was already complete.
    pub fn try_complete(&self, result: Result<T, E>) -> bool {
        complete(&self.inner, result, false)
    }

    /// True once completed.
    pub fn is_done(&self) -> bool {
        self.inner.lock().result.is_some()
    }

    /// Netty's `setUncancellable`: from now on [`Promise::cancel`] does nothing. `true` if
    /// the promise is now uncancellable (or completed without being cancelled); `false` if
    /// it was cancelled already.
    pub fn set_uncancellable(&self) -> bool {
        let mut st = self.inner.lock();
        if st.cancelled {
            return false;
        }
        st.uncancellable = true;
        true
    }

    /// Cancels the promise (see [`Future::cancel`]).
    pub fn cancel(&self, may_interrupt_if_running: bool) -> bool
    where
        E: From<LoopError>,
    {
        self.future().cancel(may_interrupt_if_running)
    }

    /// True while [`Promise::cancel`] would succeed: not done and not made uncancellable.
    pub fn is_cancellable(&self) -> bool {
        self.future().is_cancellable()
    }

    /// True once cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.future().is_cancelled()
    }
}

/// Sets the result (unless set), then runs or queues the listeners.
fn complete<T: Send + Sync + 'static, E: Send + Sync + 'static>(
    inner: &Arc<Inner<T, E>>,
    result: Result<T, E>,
    cancel: bool,
) -> bool {
    let (run, waiters) = {
        let mut st = inner.lock();
        if st.result.is_some() || (cancel && st.uncancellable) {
            return false;
        }
        st.result = Some(Arc::new(result));
        st.cancelled = cancel;
        (Inner::claim_notifier(&mut st), st.waiters)
    };
    // A waiter counts itself in under the lock before it sleeps, so one that can miss this
    // completion is counted here.
    if waiters > 0 {
        inner.done.notify_all();
    }
    if run {
        let inner = inner.clone();
        notify(Box::new(move || inner.drain()));
    }
    true
}

impl<T: Send + Sync + 'static, E: Send + Sync + 'static> Future<T, E> {
    /// Runs `listener` once with the result: now (trampolined) if complete, else on
    /// completion; always after the listeners added before it.
    pub fn add_listener(&self, listener: impl FnOnce(&Result<T, E>) + Send + 'static) {
        let run = {
            let mut st = self.inner.lock();
            st.listeners.push_back(Box::new(listener));
            st.result.is_some() && Inner::claim_notifier(&mut st)
        };
        if run {
            let inner = self.inner.clone();
            notify(Box::new(move || inner.drain()));
        }
    }

    /// True once completed.
    pub fn is_done(&self) -> bool {
        self.inner.lock().result.is_some()
    }

    /// True if both are the same future (clones of one promise's future).
    pub fn ptr_eq(&self, other: &Future<T, E>) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// True once completed successfully.
    pub fn is_success(&self) -> bool {
        matches!(self.inner.lock().result.as_deref(), Some(Ok(_)))
    }

    /// Netty's `cancel(mayInterruptIfRunning)`: fails the promise with
    /// [`LoopError::Cancelled`] and runs its listeners, unless it is done or uncancellable.
    /// `true` if this call cancelled it. Nothing in this crate interrupts a running thread,
    /// so `may_interrupt_if_running` is accepted for Netty's signature and has no effect.
    pub fn cancel(&self, _may_interrupt_if_running: bool) -> bool
    where
        E: From<LoopError>,
    {
        complete(&self.inner, Err(LoopError::Cancelled.into()), true)
    }

    /// True while [`Future::cancel`] would succeed: not done and not made uncancellable.
    pub fn is_cancellable(&self) -> bool {
        let st = self.inner.lock();
        st.result.is_none() && !st.uncancellable
    }

    /// True once cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.lock().cancelled
    }

    /// Blocks until complete. On a thread that is running an event-loop iteration, a future
    /// that is not complete yet fails at once with [`LoopError::BlockingOperation`].
    pub fn wait(&self) -> Result<T, E>
    where
        T: Clone,
        E: Clone + From<LoopError>,
    {
        let mut st = self.inner.lock();
        loop {
            if let Some(r) = &st.result {
                return (**r).clone();
            }
            if thread_context::in_any_iteration() {
                return Err(LoopError::BlockingOperation.into());
            }
            st.waiters += 1;
            st = self.inner.done.wait(st).unwrap_or_else(|p| p.into_inner());
            st.waiters -= 1;
        }
    }

    /// Blocks until complete or until `timeout` passes; `None` on timeout. On a thread that
    /// is running an event-loop iteration, a future that is not complete yet fails at once
    /// with [`LoopError::BlockingOperation`].
    pub fn wait_timeout(&self, timeout: Duration) -> Option<Result<T, E>>
    where
        T: Clone,
        E: Clone + From<LoopError>,
    {
        let deadline = Instant::now() + timeout;
        let mut st = self.inner.lock();
        loop {
            if let Some(r) = &st.result {
                return Some((**r).clone());
            }
            if thread_context::in_any_iteration() {
                return Some(Err(LoopError::BlockingOperation.into()));
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            st.waiters += 1;
            st = self
                .inner
                .done
                .wait_timeout(st, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            st.waiters -= 1;
        }
    }

    /// The result if complete.
    pub fn result(&self) -> Option<Result<T, E>>
    where
        T: Clone,
        E: Clone,
    {
        self.inner.lock().result.as_deref().cloned()
    }
}

impl<E: Clone + Send + Sync + 'static> Future<(), E> {
    /// Completes when every future has; fails with the first failure seen, if any.
    pub fn all(futures: Vec<Future<(), E>>) -> Future<(), E> {
        let promise = Promise::new();
        let out = promise.future();
        if futures.is_empty() {
            promise.try_success(());
            return out;
        }
        let left = Arc::new(std::sync::atomic::AtomicUsize::new(futures.len()));
        let first_error: Arc<Mutex<Option<E>>> = Arc::new(Mutex::new(None));
        for f in futures {
            let (promise, left, first_error) = (promise.clone(), left.clone(), first_error.clone());
            f.add_listener(move |r| {
                let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
                if let (Err(e), None) = (r, slot.as_ref()) {
                    *slot = Some(e.clone());
                }
                if left.fetch_sub(1, std::sync::atomic::Ordering::AcqRel) == 1 {
                    match slot.take() {
                        Some(e) => promise.try_failure(e),
                        None => promise.try_success(()),
                    };
                }
            });
        }
        out
    }
}

/// Runs `job` now, or after the notification already running on this thread (the thread
/// context's `notifying` and `pending`).
fn notify(job: thread_context::Notification) {
    let running = thread_context::with(|c| {
        c.push_notification(job);
        c.notifying.replace(true)
    });
    if running {
        return;
    }
    loop {
        let next = thread_context::with(ThreadContext::next_notification);
        let Some(job) = next else { break };
        if catch_unwind(AssertUnwindSafe(job)).is_err() {
            crate::log::error(
                "netloop: a promise listener panicked; the remaining listeners still run",
            );
        }
    }
    thread_context::with(|c| c.notifying.set(false));
}

impl<T, E> std::fmt::Debug for Promise<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Promise").finish_non_exhaustive()
    }
}

impl<T, E> std::fmt::Debug for Future<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Future").finish_non_exhaustive()
    }
}
