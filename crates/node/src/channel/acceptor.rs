//! The server channel's acceptor for JS servers: each accepted socket becomes a channel of
//! the next child loop's hub (round robin), which tells JS (`NEW_CHANNEL`) so that JS runs
//! the child initializer and then registers the channel. Child loops of one JS thread share
//! the thread, so the hand-off needs no task; a child loop other than the acceptor's is asked
//! for an iteration so that it delivers promptly.

use std::cell::Cell;
use std::rc::Weak;

use netloop_transport::{
    AcceptedSocket, ChannelHandler, ChannelHandlerContext, ChannelOptions, HandlerResult, Message,
    SocketChannel,
};

use super::hub::Hub;
use super::wire;

pub struct Acceptor {
    pub server: f64,
    pub targets: Vec<Weak<Hub>>,
    pub next: Cell<usize>,
    pub child_options: ChannelOptions,
}

impl Acceptor {
    fn next_hub(&self) -> Option<std::rc::Rc<Hub>> {
        for _ in 0..self.targets.len() {
            let i = self.next.get();
            self.next.set(i.wrapping_add(1));
            if let Some(h) = self.targets[i % self.targets.len()].upgrade() {
                if h.local.upgrade().is_some_and(|l| !l.handle().is_shutting_down()) {
                    return Some(h);
                }
            }
        }
        None
    }
}

impl ChannelHandler for Acceptor {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let accepted = match msg.downcast::<AcceptedSocket>() {
            Ok(a) => a,
            Err(other) => {
                ctx.fire_channel_read(other);
                return Ok(());
            }
        };
        // No live child loop: the connection is dropped (closed) here.
        let Some(hub) = self.next_hub() else { return Ok(()) };
        let Some(local) = hub.local.upgrade() else { return Ok(()) };
        let parent = ctx.channel().handle();
        let ch = SocketChannel::accepted(
            &local,
            accepted.stream,
            accepted.remote,
            self.child_options.clone(),
            Some(parent),
        );
        let id = hub.adopt(ch);
        hub.outbox()
            .push(wire::NEW_CHANNEL, id as f64, 0.0, self.server, 0.0, 0.0);
        if local.handle().id() != ctx.channel().event_loop().id() {
            local.request_iteration();
        }
        Ok(())
    }
}
