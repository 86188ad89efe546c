//! Loops of every JS thread of the process (the main thread and worker threads). A
//! process-wide registry of loop handles lets an acceptor on one thread hand an accepted socket
//! to a loop on another (Netty's register-through-execute: the socket travels in a task of the
//! target loop, which makes the channel on its own thread), and lets any thread write to a
//! channel by id through the transport's `ChannelHandle` (a task of the channel's loop).
//!
//! Ground rules:
//! - Statics are shared by all threads: only `Send` values live in them (loop and channel
//!   handles).
//! - Hubs are per thread (`!Send`): a task that reaches a loop finds the hub of that loop in
//!   this thread's table.
//! - Bytes only cross threads: a JS value never leaves its thread.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::{Rc, Weak};
use std::sync::{Mutex, OnceLock};

use bytes::Bytes;
use netloop_eventloop::EventLoop;
use netloop_transport::ChannelHandle;

use super::hub::Hub;

fn loops() -> &'static Mutex<HashMap<u64, EventLoop>> {
    static LOOPS: OnceLock<Mutex<HashMap<u64, EventLoop>>> = OnceLock::new();
    LOOPS.get_or_init(Mutex::default)
}

/// The handle of every open channel of the process, by id.
fn owners() -> &'static Mutex<HashMap<u64, ChannelHandle>> {
    static OWNERS: OnceLock<Mutex<HashMap<u64, ChannelHandle>>> = OnceLock::new();
    OWNERS.get_or_init(Mutex::default)
}

thread_local! {
    static HUBS: RefCell<HashMap<u64, Weak<Hub>>> = RefCell::new(HashMap::new());
}

/// Makes the hub of loop `id` reachable from other threads (by its loop handle).
pub fn register(id: u64, handle: EventLoop, hub: &Rc<Hub>) {
    HUBS.with(|h| h.borrow_mut().insert(id, Rc::downgrade(hub)));
    if let Ok(mut l) = loops().lock() {
        l.insert(id, handle);
    }
}

/// The loop left (its hub dropped).
pub fn unregister(id: u64) {
    let _ = HUBS.try_with(|h| h.borrow_mut().remove(&id));
    if let Ok(mut l) = loops().lock() {
        l.remove(&id);
    }
}

/// The hub of loop `id` if that loop lives on this thread.
pub fn local_hub(id: u64) -> Option<Rc<Hub>> {
    HUBS.try_with(|h| h.borrow().get(&id).and_then(Weak::upgrade))
        .ok()
        .flatten()
}

/// The handle of loop `id`, wherever it lives.
pub fn handle(id: u64) -> Option<EventLoop> {
    loops().lock().ok().and_then(|l| l.get(&id).cloned())
}

/// Makes channel `channel` writable from any thread (until `clear_owner`).
pub fn set_owner(channel: u64, handle: ChannelHandle) {
    if let Ok(mut o) = owners().lock() {
        o.insert(channel, handle);
    }
}

pub fn clear_owner(channel: u64) {
    if let Ok(mut o) = owners().lock() {
        o.remove(&channel);
    }
}

/// Writes and flushes `data` to channel `channel`, from any thread, through its
/// `ChannelHandle`, always in a task of the channel's loop (also from the loop's own thread:
/// the write must not overtake JS writes still waiting in the op buffer). False if no open
/// channel has that id or its loop takes no more tasks. Writes from one thread arrive in
/// order.
pub fn write_to(channel: u64, data: Bytes) -> bool {
    let Some(handle) = owners().lock().ok().and_then(|o| o.get(&channel).cloned()) else {
        return false;
    };
    let el = handle.event_loop().clone();
    el.execute(move || {
        let _ = handle.write_and_flush(data);
    })
    .is_ok()
}
