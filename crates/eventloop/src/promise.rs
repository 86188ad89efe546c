//! One promise/future type for every asynchronous result of the core.
//!
//! Invariants:
//! - A promise completes at most once; later `try_*` calls return `false` and change nothing.
//! - Each listener runs exactly once, with the result. Listeners added on one thread run in
//!   the order they were added, also when added after completion.
//! - Notification is trampolined per thread: a listener that completes another promise does
//!   not recurse into that promise's listeners, they are queued and run by the outermost
//!   notification. A chain of a million promises therefore runs in constant stack.
//! - A panicking listener is reported on stderr and the remaining listeners still run.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

type Listener<T, E> = Box<dyn FnOnce(&Result<T, E>) + Send + 'static>;

struct State<T, E> {
    result: Option<Arc<Result<T, E>>>,
    listeners: Vec<Listener<T, E>>,
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
                    listeners: Vec::new(),
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
        let (result, listeners, waiters) = {
            let mut st = self.inner.lock();
            if st.result.is_some() {
                return false;
            }
            let r = Arc::new(result);
            st.result = Some(r.clone());
            (r, std::mem::take(&mut st.listeners), st.waiters)
        };
        // A waiter counts itself in under the lock before it sleeps, so one that can miss
        // this completion is counted here.
        if waiters > 0 {
            self.inner.done.notify_all();
        }
        notify(listeners.into_iter().map(|l| {
            let r = result.clone();
            Box::new(move || l(&r)) as Box<dyn FnOnce()>
        }));
        true
    }

    /// True once completed.
    pub fn is_done(&self) -> bool {
        self.inner.lock().result.is_some()
    }
}

impl<T: Send + Sync + 'static, E: Send + Sync + 'static> Future<T, E> {
    /// Runs `listener` once with the result: now (trampolined) if complete, else on completion.
    pub fn add_listener(&self, listener: impl FnOnce(&Result<T, E>) + Send + 'static) {
        let ready = {
            let mut st = self.inner.lock();
            match &st.result {
                Some(r) => r.clone(),
                None => {
                    st.listeners.push(Box::new(listener));
                    return;
                }
            }
        };
        notify(std::iter::once(
            Box::new(move || listener(&ready)) as Box<dyn FnOnce()>
        ));
    }

    /// True once completed.
    pub fn is_done(&self) -> bool {
        self.inner.lock().result.is_some()
    }

    /// True once completed successfully.
    pub fn is_success(&self) -> bool {
        matches!(self.inner.lock().result.as_deref(), Some(Ok(_)))
    }

    /// Blocks until complete. Never call it on the loop that completes the promise.
    pub fn wait(&self) -> Result<T, E>
    where
        T: Clone,
        E: Clone,
    {
        let mut st = self.inner.lock();
        loop {
            if let Some(r) = &st.result {
                return (**r).clone();
            }
            st.waiters += 1;
            st = self.inner.done.wait(st).unwrap_or_else(|p| p.into_inner());
            st.waiters -= 1;
        }
    }

    /// Blocks until complete or until `timeout` passes; `None` on timeout.
    pub fn wait_timeout(&self, timeout: Duration) -> Option<Result<T, E>>
    where
        T: Clone,
        E: Clone,
    {
        let deadline = Instant::now() + timeout;
        let mut st = self.inner.lock();
        loop {
            if let Some(r) = &st.result {
                return Some((**r).clone());
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

thread_local! {
    static NOTIFYING: Cell<bool> = const { Cell::new(false) };
    static PENDING: RefCell<VecDeque<Box<dyn FnOnce()>>> = RefCell::new(VecDeque::new());
}

/// Runs `jobs` now, or after the notification already running on this thread.
fn notify(jobs: impl Iterator<Item = Box<dyn FnOnce()>>) {
    PENDING.with(|q| q.borrow_mut().extend(jobs));
    if NOTIFYING.with(|n| n.replace(true)) {
        return;
    }
    loop {
        let next = PENDING.with(|q| q.borrow_mut().pop_front());
        let Some(job) = next else { break };
        if catch_unwind(AssertUnwindSafe(job)).is_err() {
            crate::log::error("netloop: a promise listener panicked; the remaining listeners still run");
        }
    }
    NOTIFYING.with(|n| n.set(false));
}
