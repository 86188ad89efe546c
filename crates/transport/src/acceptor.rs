//! The server pipeline's acceptor (Netty's `ServerBootstrapAcceptor`): it takes each
//! [`AcceptedSocket`] the server channel fires, with the server's [`ChannelHandle`] (the
//! child's parent) and the shared child options, and hands them to an [`AcceptedChildren`]
//! hook, which picks the child loop and sets the child channel up. Any other message passes on.
//!
//! Ground rules: the acceptor lives in the server channel's pipeline, on the server's loop;
//! the hook runs there, once per accepted socket, and moves the socket to its child loop
//! itself (through that loop's task queue unless it is the current one). A socket the hook
//! drops is closed and gives its place in the server's connection count back.
//!
//! [`ServerBootstrap`](crate::ServerBootstrap) uses [`LoopChildren`] (the child group's next
//! loop, the child initializer); the Node binding uses its own hook (JS sets the child up).

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use netloop_eventloop::EventLoop;

use crate::bootstrap::{local_of, LoopChooser, INIT_NAME};
use crate::context::ChannelHandlerContext;
use crate::error::{HandlerResult, TransportError};
use crate::handle::ChannelHandle;
use crate::handler::ChannelHandler;
use crate::initializer::{ChannelInitializer, InitFn};
use crate::message::Message;
use crate::options::ChannelOptions;
use crate::server_channel::AcceptedSocket;
use crate::socket_channel::SocketChannel;

/// What a [`ServerBootstrapAcceptor`] does with each accepted socket.
pub trait AcceptedChildren: 'static {
    /// Hands `socket` to a child loop as a channel with `options` and parent `parent`. An
    /// error is fired down the server pipeline as an exception.
    fn accept(
        &self,
        socket: AcceptedSocket,
        options: Arc<ChannelOptions>,
        parent: Arc<ChannelHandle>,
    ) -> HandlerResult;
}

/// The server pipeline's acceptor: one per server channel.
pub struct ServerBootstrapAcceptor {
    children: Box<dyn AcceptedChildren>,
    child_options: Arc<ChannelOptions>,
    parent: RefCell<Option<Arc<ChannelHandle>>>,
}

impl ServerBootstrapAcceptor {
    /// An acceptor giving each accepted socket, with `child_options` (shared by every child
    /// until one changes an option), to `children`.
    pub fn new(children: impl AcceptedChildren, child_options: Arc<ChannelOptions>) -> Self {
        ServerBootstrapAcceptor {
            children: Box::new(children),
            child_options,
            parent: RefCell::new(None),
        }
    }
}

impl fmt::Debug for ServerBootstrapAcceptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerBootstrapAcceptor")
            .field("child_options", &self.child_options)
            .finish_non_exhaustive()
    }
}

impl ChannelHandler for ServerBootstrapAcceptor {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let accepted = match msg.downcast::<AcceptedSocket>() {
            Ok(a) => a,
            Err(other) => {
                ctx.fire_channel_read(other);
                return Ok(());
            }
        };
        let parent = self
            .parent
            .borrow_mut()
            .get_or_insert_with(|| Arc::new(ctx.channel().handle()))
            .clone();
        self.children
            .accept(accepted, self.child_options.clone(), parent)
    }
}

/// [`ServerBootstrap`](crate::ServerBootstrap)'s hook: registers each child on the child
/// group's next loop with the child initializer (Netty's register-through-execute).
pub struct LoopChildren {
    /// The child loops.
    pub group: Arc<dyn LoopChooser>,
    /// Sets up each child's pipeline, on its loop.
    pub init: Option<InitFn>,
}

impl fmt::Debug for LoopChildren {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopChildren")
            .field("init", &self.init.is_some())
            .finish_non_exhaustive()
    }
}

impl AcceptedChildren for LoopChildren {
    fn accept(
        &self,
        socket: AcceptedSocket,
        options: Arc<ChannelOptions>,
        parent: Arc<ChannelHandle>,
    ) -> HandlerResult {
        let el = self.group.next_loop();
        let init = self.init.clone();
        if el.in_event_loop() {
            register_child(&el, socket, options, init, parent);
            return Ok(());
        }
        let target = el.clone();
        el.execute(move || register_child(&target, socket, options, init, parent))
            .map_err(TransportError::from)
    }
}

fn register_child(
    el: &EventLoop,
    acc: AcceptedSocket,
    opts: Arc<ChannelOptions>,
    init: Option<InitFn>,
    parent: Arc<ChannelHandle>,
) {
    let Ok(lp) = local_of(el) else { return };
    let ch = SocketChannel::accepted_socket(&lp, acc, opts, Some(parent));
    if let Some(init) = init {
        if ch
            .pipeline()
            .add_last(INIT_NAME, ChannelInitializer::from_arc(init))
            .is_err()
        {
            ch.close();
            return;
        }
    }
    ch.register();
}
