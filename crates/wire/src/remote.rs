//! Loops of every JS thread of the process (the main thread and worker threads). The
//! process-wide registry ([`crate::registry`]) lets an acceptor on one thread hand an accepted
//! socket to a loop on another (Netty's register-through-execute: the socket travels in a task
//! of the target loop, which makes the channel on its own thread), and lets any thread write to
//! a channel by id (a task of the channel's loop, which writes through the transport's
//! `Channel`).
//!
//! Ground rules:
//! - Process-wide tables hold only `Send` values (loop handles, ids).
//! - Hubs are per thread (`!Send`): a task that reaches a loop finds the hub of that loop in
//!   this thread's context ([`crate::thread_context`]).
//! - Bytes only cross threads: a JS value never leaves its thread.

use std::rc::{Rc, Weak};

use bytes::Bytes;
use netloop_eventloop::EventLoop;

use crate::hub::Hub;
use crate::registry::{lock, registry};
use crate::thread_context;

/// Makes the hub of loop `id` reachable from other threads (by its loop handle).
pub fn register(id: u64, handle: EventLoop, hub: &Rc<Hub>) {
    thread_context::with(|c| c.hubs.borrow_mut().insert(id, Rc::downgrade(hub)));
    lock(&registry().loops).insert(id, handle);
}

/// Loop `id` closed (or its hub dropped): neither it nor its hub can be reached any more.
pub fn unregister(id: u64) {
    thread_context::with(|c| c.hubs.borrow_mut().remove(&id));
    lock(&registry().loops).remove(&id);
}

/// The hub of loop `id` if that loop lives on this thread.
pub fn local_hub(id: u64) -> Option<Rc<Hub>> {
    thread_context::with(|c| c.hubs.borrow().get(&id).and_then(Weak::upgrade)).flatten()
}

/// The handle of loop `id`, wherever it lives.
pub fn handle(id: u64) -> Option<EventLoop> {
    lock(&registry().loops).get(&id).cloned()
}

/// Makes channel `channel` of loop `loop_id` writable from any thread (until `clear_owner`).
/// Only the loop's id is kept: a `ChannelHandle` per channel would make every channel's close
/// future up front (it is made on first use), some 150 B per idle connection.
pub fn set_owner(channel: u64, loop_id: u64) {
    lock(&registry().channels).insert(channel, loop_id);
}

pub fn clear_owner(channel: u64) {
    lock(&registry().channels).remove(&channel);
}

/// Writes and flushes `data` to channel `channel`, from any thread, always in a task of the
/// channel's loop (also from the loop's own thread: the write must not overtake JS writes
/// still waiting in the op buffer), through the transport's `Channel` found there. False if no
/// open channel has that id or its loop takes no more tasks. Writes from one thread arrive in
/// order.
pub fn write_to(channel: u64, data: Bytes) -> bool {
    let Some(loop_id) = lock(&registry().channels).get(&channel).copied() else {
        return false;
    };
    let Some(el) = handle(loop_id) else {
        return false;
    };
    el.execute(move || {
        if let Some(ch) = local_hub(loop_id).and_then(|hub| hub.channel(channel)) {
            ch.write_and_flush(data);
        }
    })
    .is_ok()
}
