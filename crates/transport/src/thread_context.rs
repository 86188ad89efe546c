//! The transport crate's per-thread state, in one place: the table of the thread's channels,
//! the table of local promise listeners, and the thread's byte chunks. Nothing here is
//! shared between threads, except the orphan list, which other threads append to.
//!
//! Ground rules, field by field (always on the owning thread unless said otherwise):
//! - `channels`: every channel living on this thread, by id, held weakly (handle.rs). A channel
//!   registers when it is made (`handle::track`) and unregisters when it drops
//!   (`handle::untrack`); a `ChannelHandle`'s request, run on the channel's loop, looks it up.
//! - `listeners`, `next_listener`: local promise listeners (promise.rs), which may capture
//!   `!Send` values, by id (ids count up from 0 per thread). `add_local_listener` inserts; the
//!   promise's completion at home takes the listener out and runs it; a key dropped at home
//!   removes its entry.
//! - `orphans`: ids of `listeners` entries that other threads gave up on (a promise dropped
//!   or completed away from home whose loop is gone). Shared with those threads (`Arc<Mutex>`):
//!   they push, this thread purges before each use of `listeners`.
//! - `chunks`, `chunks_allocated`: the thread's byte chunk and the retired ones waiting to be
//!   reused, and how many chunks the thread allocated (chunk.rs). Borrowed for one `recv` or
//!   one copy, never across user code.
//!
//! No borrow of a field is held while user code runs (a listener, a handler): each accessor
//! borrows for one look-up, insertion or carve, and what it removes drops after the borrow.
//!
//! Teardown: the context itself has no destructor (what it owns sits in `ManuallyDrop`), so it
//! stays readable during every thread-local teardown (the loops of the event-loop crate's
//! context drop their channels then), in whatever order the thread's destructors run. What
//! it owns is dropped by [`Teardown`], a guard armed when a field first allocates: at thread
//! exit it drops the local listeners (they may hold channels), then the channel table, the
//! orphan list and the chunks. From then on nothing new is kept: a channel is not listed, a
//! local listener is dropped unrun (its thread is gone), a carve uses memory of its own.

use std::any::Any;
use std::cell::{Cell, RefCell, RefMut};
use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::rc::Weak;
use std::sync::{Arc, Mutex};

use crate::channel::{ChannelId, ChannelInner};
use crate::chunk::Chunks;

/// Ids of local listeners other threads gave up on (see `orphans`).
pub(crate) type Orphans = Arc<Mutex<Vec<u64>>>;

/// A field that owns memory: made on first use, dropped by [`Teardown`].
type Owned<T> = RefCell<ManuallyDrop<Option<T>>>;

/// The state of one thread (see the module's ground rules).
pub(crate) struct ThreadContext {
    channels: Owned<HashMap<ChannelId, Weak<ChannelInner>>>,
    listeners: Owned<HashMap<u64, Box<dyn Any>>>,
    next_listener: Cell<u64>,
    orphans: Owned<Orphans>,
    chunks: Owned<Chunks>,
    pub chunks_allocated: Cell<u64>,
    /// The thread is exiting and [`Teardown`] ran: nothing new is kept.
    torn_down: Cell<bool>,
}

const fn owned<T>() -> Owned<T> {
    RefCell::new(ManuallyDrop::new(None))
}

thread_local! {
    static CONTEXT: ThreadContext = const {
        ThreadContext {
            channels: owned(),
            listeners: owned(),
            next_listener: Cell::new(0),
            orphans: owned(),
            chunks: owned(),
            chunks_allocated: Cell::new(0),
            torn_down: Cell::new(false),
        }
    };
    static TEARDOWN: Teardown = const { Teardown };
}

/// Runs `f` with this thread's context (available until the thread is gone, teardown included).
pub(crate) fn with<R>(f: impl FnOnce(&ThreadContext) -> R) -> R {
    CONTEXT.with(f)
}

/// Drops what the context owns when the thread exits (see the module's ground rules).
struct Teardown;

impl Drop for Teardown {
    fn drop(&mut self) {
        CONTEXT.with(|c| {
            c.torn_down.set(true);
            // Listeners first, one at a time, no borrow held while one drops (it may hold a
            // channel, whose drop unregisters it, or a promise key, which removes its entry).
            loop {
                let next = {
                    let mut listeners = c.listeners.borrow_mut();
                    let next = listeners.as_mut().and_then(|m| {
                        let id = *m.keys().next()?;
                        m.remove(&id)
                    });
                    if next.is_none() {
                        listeners.take();
                    }
                    next
                };
                let Some(listener) = next else { break };
                drop(listener);
            }
            let channels = c.channels.borrow_mut().take();
            drop(channels);
            let orphans = c.orphans.borrow_mut().take();
            drop(orphans);
            let chunks = c.chunks.borrow_mut().take();
            drop(chunks);
        });
    }
}

impl ThreadContext {
    /// The field's value, made on first use (and the teardown armed then); `None` once the
    /// thread's teardown ran.
    fn fill<'a, T>(&self, field: &'a Owned<T>, make: impl FnOnce() -> T) -> Option<RefMut<'a, T>> {
        if self.torn_down.get() {
            return None;
        }
        let slot = field.borrow_mut();
        if slot.is_none() {
            // A guard that already ran cannot be armed again (the thread is exiting).
            let _ = TEARDOWN.try_with(|_| ());
        }
        Some(RefMut::map(slot, |s| s.get_or_insert_with(make)))
    }

    /// Lists a channel of this thread (not once the thread's teardown ran).
    pub(crate) fn track(&self, id: ChannelId, channel: Weak<ChannelInner>) {
        if let Some(mut m) = self.fill(&self.channels, HashMap::new) {
            m.insert(id, channel);
        }
    }

    /// Unlists a channel; nothing if the table is borrowed right now.
    pub(crate) fn untrack(&self, id: ChannelId) {
        let removed = match self.channels.try_borrow_mut() {
            Ok(mut m) => m.as_mut().and_then(|m| m.remove(&id)),
            Err(_) => None,
        };
        drop(removed);
    }

    /// The channel listed under `id`, if it is alive.
    pub(crate) fn channel(&self, id: ChannelId) -> Option<std::rc::Rc<ChannelInner>> {
        self.channels.borrow().as_ref()?.get(&id)?.upgrade()
    }

    /// A fresh local listener id.
    pub(crate) fn next_listener_id(&self) -> u64 {
        let id = self.next_listener.get();
        self.next_listener.set(id + 1);
        id
    }

    /// Keeps a local listener under `id`; after the teardown it is handed back (to drop).
    pub(crate) fn insert_listener(&self, id: u64, listener: Box<dyn Any>) -> Option<Box<dyn Any>> {
        match self.fill(&self.listeners, HashMap::new) {
            Some(mut m) => m.insert(id, listener),
            None => Some(listener),
        }
    }

    /// Takes the local listener kept under `id`; `Err` if the table is borrowed right now.
    pub(crate) fn try_remove_listener(&self, id: u64) -> Result<Option<Box<dyn Any>>, ()> {
        let mut m = self.listeners.try_borrow_mut().map_err(|_| ())?;
        Ok(m.as_mut().and_then(|m| m.remove(&id)))
    }

    /// Local listeners kept now.
    pub(crate) fn listener_count(&self) -> usize {
        self.listeners.borrow().as_ref().map_or(0, HashMap::len)
    }

    /// This thread's orphan list (made on first use; a fresh, unread one after the teardown).
    pub(crate) fn orphans(&self) -> Orphans {
        self.fill(&self.orphans, Orphans::default)
            .map_or_else(Orphans::default, |o| Arc::clone(&o))
    }

    /// Takes the ids other threads orphaned (none before the list exists).
    pub(crate) fn take_orphans(&self) -> Vec<u64> {
        let list = self.orphans.borrow().as_ref().map(Arc::clone);
        list.map(|o| std::mem::take(&mut *o.lock().unwrap_or_else(|p| p.into_inner())))
            .unwrap_or_default()
    }

    /// The thread's chunks; `None` once the thread's teardown ran.
    pub(crate) fn chunks(&self) -> Option<RefMut<'_, Chunks>> {
        self.fill(&self.chunks, Chunks::default)
    }
}
