//! The hook of a JS server's acceptor: the transport's `ServerBootstrapAcceptor` takes each
//! accepted socket off the server pipeline and hands it here ([`JsChildren`], an
//! `AcceptedChildren`); it becomes a channel of the next child loop's hub (round robin by the
//! core's `Chooser`, as `EventLoopGroup::next`), which tells JS (`WireKind::NewChannel`) so that JS
//! runs the child initializer and then registers the channel. What differs from the
//! transport's own hook (`LoopChildren`): a hub of this thread takes the socket without a
//! task; JS, not a Rust initializer, sets the channel up; loops that shut down are skipped.
//! Child loops of one JS thread share the thread, so the hand-off needs no task; a child loop
//! other than the acceptor's is asked for an iteration so that it delivers promptly.

use crate::protocol::{RecordValue as _, ServerId, WireKind};
use std::rc::{Rc, Weak};
use std::sync::Arc;

use netloop_eventloop::{Chooser, EventLoop};
use netloop_transport::{
    AcceptedChildren, AcceptedSocket, ChannelHandle, ChannelOptions, HandlerResult, SocketChannel,
};

use crate::hub::Hub;
use crate::remote;

/// A child loop: on this thread (its hub), or on another JS thread (its handle).
pub enum Target {
    Local(Weak<Hub>),
    Remote { id: u64, handle: EventLoop },
}

impl Target {
    /// The loop `id`: local if its hub lives on this thread.
    pub fn of(id: u64) -> Option<Target> {
        if let Some(h) = remote::local_hub(id) {
            return Some(Target::Local(Rc::downgrade(&h)));
        }
        remote::handle(id).map(|handle| Target::Remote { id, handle })
    }

    fn accepting(&self) -> bool {
        match self {
            Target::Local(h) => h
                .upgrade()
                .and_then(|h| h.local.upgrade())
                .is_some_and(|l| !l.handle().is_shutting_down()),
            Target::Remote { handle, .. } => !handle.is_shutting_down() && !handle.is_terminated(),
        }
    }
}

/// Where a JS server's accepted sockets go: its child loops, in turn.
pub struct JsChildren {
    /// The server channel's id (what `WireKind::NewChannel` names to JS on this thread).
    pub server: f64,
    /// The child loops.
    pub targets: Vec<Target>,
    /// The core's round robin (as `EventLoopGroup::next`) over `targets`.
    pub chooser: Chooser,
}

impl JsChildren {
    fn next_target(&self) -> Option<&Target> {
        for _ in 0..self.targets.len() {
            let t = &self.targets[self.chooser.next_index()];
            if t.accepting() {
                return Some(t);
            }
        }
        None
    }
}

/// Makes the channel of an accepted socket on the hub of this thread's loop `hub`, and tells JS.
/// The channel holds the socket's place in the server's connection count until it closes.
fn adopt(
    hub: &Rc<Hub>,
    socket: AcceptedSocket,
    opts: Arc<ChannelOptions>,
    parent: Arc<ChannelHandle>,
    server: f64,
) {
    let Some(local) = hub.local.upgrade() else {
        return;
    };
    let ch = SocketChannel::accepted_socket(&local, socket, opts, Some(parent));
    let id = hub.adopt(ch);
    hub.outbox().push(
        WireKind::NewChannel as u32,
        id as f64,
        0.0,
        server,
        0.0,
        0.0,
    );
    local.request_iteration();
}

impl AcceptedChildren for JsChildren {
    fn accept(
        &self,
        accepted: AcceptedSocket,
        opts: Arc<ChannelOptions>,
        parent: Arc<ChannelHandle>,
    ) -> HandlerResult {
        // No live child loop: the connection is dropped (closed) here.
        let Some(target) = self.next_target() else {
            return Ok(());
        };
        match target {
            Target::Local(h) => {
                if let Some(hub) = h.upgrade() {
                    adopt(&hub, accepted, opts, parent, self.server);
                }
            }
            Target::Remote { id, handle } => {
                let id = *id;
                let socket = accepted;
                // If the loop shut down meanwhile the task is rejected and the socket closes
                // (its permit returns to the server's count).
                let _ = handle.execute(move || {
                    if let Some(hub) = remote::local_hub(id) {
                        adopt(&hub, socket, opts, parent, ServerId::Remote.value());
                    }
                });
            }
        }
        Ok(())
    }
}
