//! [`PromiseCombiner`]: one aggregate promise over several futures (Netty's
//! `PromiseCombiner`).
//!
//! Ground rules: usable from any thread (a mutex guards the counts). The aggregate completes
//! once [`PromiseCombiner::finish`] was called and every future added before has completed:
//! with success if all succeeded, else with the failure of the first future that failed.

use std::sync::{Arc, Mutex};

use crate::error::LoopError;
use crate::promise::{Future, Promise};

struct State<E> {
    expected: usize,
    done: usize,
    first_failure: Option<E>,
    aggregate: Option<Promise<(), E>>,
}

/// Aggregates the completion of several futures into one promise.
pub struct PromiseCombiner<E> {
    state: Arc<Mutex<State<E>>>,
}

impl<E: Clone + Send + Sync + 'static> Default for PromiseCombiner<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Clone + Send + Sync + 'static> PromiseCombiner<E> {
    /// A combiner with no future yet.
    pub fn new() -> Self {
        PromiseCombiner {
            state: Arc::new(Mutex::new(State {
                expected: 0,
                done: 0,
                first_failure: None,
                aggregate: None,
            })),
        }
    }

    fn lock(state: &Mutex<State<E>>) -> std::sync::MutexGuard<'_, State<E>> {
        state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a future; fails with `InvalidArgument` once [`PromiseCombiner::finish`] was
    /// called (Netty throws `IllegalStateException`).
    pub fn add<T: Send + Sync + 'static>(&self, future: &Future<T, E>) -> Result<(), LoopError> {
        {
            let mut st = Self::lock(&self.state);
            if st.aggregate.is_some() {
                return Err(LoopError::invalid("futures cannot be added after finish()"));
            }
            st.expected += 1;
        }
        let state = self.state.clone();
        future.add_listener(move |r| {
            let done = {
                let mut st = Self::lock(&state);
                st.done += 1;
                if let (Err(e), None) = (r, &st.first_failure) {
                    st.first_failure = Some(e.clone());
                }
                Self::take_if_complete(&mut st)
            };
            if let Some((p, res)) = done {
                p.try_complete(res);
            }
        });
        Ok(())
    }

    /// Adds every future of `futures` (see [`PromiseCombiner::add`]).
    pub fn add_all<'a, T: Send + Sync + 'static>(
        &self,
        futures: impl IntoIterator<Item = &'a Future<T, E>>,
    ) -> Result<(), LoopError> {
        for f in futures {
            self.add(f)?;
        }
        Ok(())
    }

    /// No more futures will be added: `aggregate` completes once every future added so far
    /// has (at once if they all have). Fails with `InvalidArgument` if called twice.
    pub fn finish(&self, aggregate: Promise<(), E>) -> Result<(), LoopError> {
        let done = {
            let mut st = Self::lock(&self.state);
            if st.aggregate.is_some() {
                return Err(LoopError::invalid("finish() was already called"));
            }
            st.aggregate = Some(aggregate);
            Self::take_if_complete(&mut st)
        };
        if let Some((p, res)) = done {
            p.try_complete(res);
        }
        Ok(())
    }

    fn take_if_complete(st: &mut State<E>) -> Option<(Promise<(), E>, Result<(), E>)> {
        if st.done < st.expected {
            return None;
        }
        let p = st.aggregate.clone()?;
        Some((p, st.first_failure.clone().map_or(Ok(()), Err)))
    }
}

impl<E> std::fmt::Debug for PromiseCombiner<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromiseCombiner").finish_non_exhaustive()
    }
}
