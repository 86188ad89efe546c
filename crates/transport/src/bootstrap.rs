//! Bootstraps: `ServerBootstrap` (a server channel on a boss loop whose accepted sockets are
//! handed to child loops) and `Bootstrap` (client channels).
//!
//! Ground rules: a bootstrap is `Send` configuration; `bind`/`connect` may be called from any
//! thread and create the channel on its loop through a task. The acceptor (`acceptor.rs`,
//! with the [`LoopChildren`] hook) hands each accepted socket to the child loop chosen by the
//! child group, through that loop's task queue unless it is the current loop (Netty's
//! register-through-execute).

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use netloop_eventloop::{EventLoop, EventLoopGroup, Future, LocalLoop, Promise};

use crate::acceptor::{LoopChildren, ServerBootstrapAcceptor};
use crate::channel::Channel;
use crate::error::{HandlerResult, TransportError};
use crate::handle::ChannelHandle;
use crate::initializer::{ChannelInitializer, InitFn};
use crate::options::{ChannelOption, ChannelOptions};
use crate::promise::{ChannelFuture, LocalListenerExt};
use crate::server_channel::ServerSocketChannel;
use crate::socket_channel::SocketChannel;

/// Picks the loop for the next channel.
pub trait LoopChooser: Send + Sync {
    /// The loop for the next channel.
    fn next_loop(&self) -> EventLoop;
}

impl LoopChooser for EventLoopGroup {
    fn next_loop(&self) -> EventLoop {
        self.next().clone()
    }
}

impl LoopChooser for EventLoop {
    fn next_loop(&self) -> EventLoop {
        self.clone()
    }
}

/// Name under which bootstraps add their initializer.
pub(crate) const INIT_NAME: &str = "initializer";
/// Name of the server pipeline's acceptor.
pub const ACCEPTOR_NAME: &str = "ServerBootstrapAcceptor";

pub(crate) fn local_of(el: &EventLoop) -> Result<Rc<LocalLoop>, TransportError> {
    el.local().ok_or(TransportError::UnsupportedOperation(
        "not on the channel's event loop",
    ))
}

/// Sets up and binds server channels.
#[derive(Clone, Default)]
pub struct ServerBootstrap {
    group: Option<Arc<dyn LoopChooser>>,
    child_group: Option<Arc<dyn LoopChooser>>,
    options: ChannelOptions,
    child_options: ChannelOptions,
    handler: Option<InitFn>,
    child_handler: Option<InitFn>,
    error: Option<TransportError>,
}

impl ServerBootstrap {
    /// A server bootstrap with no group, options or handlers yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The boss loops (the server channel's) and the child loops (accepted channels').
    pub fn group(
        mut self,
        boss: impl LoopChooser + 'static,
        child: impl LoopChooser + 'static,
    ) -> Self {
        self.group = Some(Arc::new(boss));
        self.child_group = Some(Arc::new(child));
        self
    }

    /// An option of the server channel (soBacklog, soReuseaddr, autoRead, …). A bad value
    /// makes `bind` fail.
    pub fn option(mut self, opt: ChannelOption) -> Self {
        set_option(&mut self.options, &mut self.error, opt);
        self
    }

    /// An option of every accepted channel (tcpNoDelay, water marks, autoRead, …).
    pub fn child_option(mut self, opt: ChannelOption) -> Self {
        set_option(&mut self.child_options, &mut self.error, opt);
        self
    }

    /// Sets up the server channel's pipeline (before the acceptor).
    pub fn handler(
        mut self,
        init: impl Fn(&Channel) -> HandlerResult + Send + Sync + 'static,
    ) -> Self {
        self.handler = Some(Arc::new(init));
        self
    }

    /// Sets up each accepted channel's pipeline, on the channel's loop.
    pub fn child_handler(
        mut self,
        init: impl Fn(&Channel) -> HandlerResult + Send + Sync + 'static,
    ) -> Self {
        self.child_handler = Some(Arc::new(init));
        self
    }

    /// Creates, registers and binds a server channel on the next boss loop.
    pub fn bind(&self, addr: SocketAddr) -> Future<ChannelHandle, TransportError> {
        let promise = Promise::new();
        let out = promise.future();
        if let Some(e) = self.error.clone() {
            promise.try_failure(e);
            return out;
        }
        let (Some(group), Some(child_group)) = (self.group.clone(), self.child_group.clone())
        else {
            promise.try_failure(TransportError::InvalidOption(
                "ServerBootstrap needs a group".into(),
            ));
            return out;
        };
        let el = group.next_loop();
        let target = el.clone();
        let this = self.clone();
        let p = promise.clone();
        let task = move || {
            let lp = match local_of(&target) {
                Ok(lp) => lp,
                Err(e) => {
                    p.try_failure(e);
                    return;
                }
            };
            let ch = ServerSocketChannel::open(&lp, this.options.clone());
            let child_options = Arc::new(this.child_options.clone());
            let child_init = this.child_handler.clone();
            let user = this.handler.clone();
            let init = ChannelInitializer::new(move |ch: &Channel| {
                if let Some(u) = &user {
                    u(ch)?;
                }
                let children = LoopChildren {
                    group: child_group.clone(),
                    init: child_init.clone(),
                };
                let acceptor = ServerBootstrapAcceptor::new(children, child_options.clone());
                ch.pipeline().add_last(ACCEPTOR_NAME, acceptor)?;
                Ok(())
            });
            if let Err(e) = ch.pipeline().add_last(INIT_NAME, init) {
                p.try_failure(e);
                return;
            }
            let reg = ch.register();
            if let Some(Err(e)) = reg.result() {
                p.try_failure(e);
                return;
            }
            let c = ch.clone();
            ch.bind(addr).add_local_listener(move |r| match r {
                Ok(()) => {
                    p.try_success(c.handle());
                }
                Err(e) => {
                    p.try_failure(e.clone());
                    c.close();
                }
            });
        };
        if let Err(e) = el.execute(task) {
            promise.try_failure(e.into());
        }
        out
    }
}

/// Applies `opt`; the first bad value is kept in `error` and fails `bind`/`connect` later, so
/// builder calls can chain.
fn set_option(
    options: &mut ChannelOptions,
    error: &mut Option<TransportError>,
    opt: ChannelOption,
) {
    if let Err(e) = options.set(opt) {
        error.get_or_insert(e);
    }
}

/// Sets up and connects client channels.
#[derive(Clone, Default)]
pub struct Bootstrap {
    group: Option<Arc<dyn LoopChooser>>,
    options: ChannelOptions,
    handler: Option<InitFn>,
    error: Option<TransportError>,
}

impl Bootstrap {
    /// A client bootstrap with no group, options or handler yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The loop (or group) the client channel is registered on.
    pub fn group(mut self, group: impl LoopChooser + 'static) -> Self {
        self.group = Some(Arc::new(group));
        self
    }

    /// Sets an option of the client channel.
    pub fn option(mut self, opt: ChannelOption) -> Self {
        set_option(&mut self.options, &mut self.error, opt);
        self
    }

    /// The handler (initializer) of the client channel.
    pub fn handler(
        mut self,
        init: impl Fn(&Channel) -> HandlerResult + Send + Sync + 'static,
    ) -> Self {
        self.handler = Some(Arc::new(init));
        self
    }

    /// Creates a channel on the calling thread's loop `lp`, registers and connects it.
    /// Returns the channel at once and the connect future.
    pub fn connect_on(&self, lp: &Rc<LocalLoop>, remote: SocketAddr) -> (Channel, ChannelFuture) {
        let ch = SocketChannel::open(lp, self.options.clone());
        if let Some(e) = self.error.clone() {
            ch.close();
            return (ch, Promise::completed(Err(e)));
        }
        if let Some(init) = self.handler.clone() {
            if let Err(e) = ch
                .pipeline()
                .add_last(INIT_NAME, ChannelInitializer::from_arc(init))
            {
                ch.close();
                return (ch, Promise::completed(Err(e)));
            }
        }
        let reg = ch.register();
        if let Some(Err(e)) = reg.result() {
            return (ch, Promise::completed(Err(e)));
        }
        let f = ch.connect(remote);
        (ch, f)
    }

    /// Connects a new channel on the next loop of the group, from any thread.
    pub fn connect(&self, remote: SocketAddr) -> Future<ChannelHandle, TransportError> {
        let promise = Promise::new();
        let out = promise.future();
        let Some(group) = self.group.clone() else {
            promise.try_failure(TransportError::InvalidOption(
                "Bootstrap needs a group".into(),
            ));
            return out;
        };
        let el = group.next_loop();
        let this = self.clone();
        let p = promise.clone();
        let target = el.clone();
        let r = el.execute(move || {
            let lp = match local_of(&target) {
                Ok(lp) => lp,
                Err(e) => {
                    p.try_failure(e);
                    return;
                }
            };
            let (ch, f) = this.connect_on(&lp, remote);
            f.add_local_listener(move |r| match r {
                Ok(()) => {
                    p.try_success(ch.handle());
                }
                Err(e) => {
                    p.try_failure(e.clone());
                }
            });
        });
        if let Err(e) = r {
            promise.try_failure(e.into());
        }
        out
    }
}

impl std::fmt::Debug for Bootstrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bootstrap").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for ServerBootstrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBootstrap").finish_non_exhaustive()
    }
}
