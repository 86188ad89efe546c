//! The pipeline's structure: handlers added, removed and replaced by name at any time, and
//! their lifecycle callbacks.
//!
//! Ground rules: loop thread only. `handler_added`/`handler_removed` run exactly once each, in
//! order; before the channel's first registration they are queued and run at registration.

use std::rc::Rc;

use super::{ChannelPipeline, IntoHandler, Pending, Position};
use crate::context::{ChannelHandlerContext, HandlerState};
use crate::error::TransportError;
use crate::handler::ChannelHandler;

impl ChannelPipeline {
    pub(crate) fn user_contexts(&self) -> Vec<ChannelHandlerContext> {
        let mut out = Vec::new();
        let mut cur = self.0.head.next();
        while let Some(c) = cur {
            if c.ptr_eq(&self.0.tail) {
                break;
            }
            cur = c.next();
            out.push(c);
        }
        out
    }

    /// The context of the handler named `name`.
    pub fn context(&self, name: &str) -> Option<ChannelHandlerContext> {
        self.user_contexts().into_iter().find(|c| c.name() == name)
    }

    /// The handler named `name`.
    pub fn get(&self, name: &str) -> Option<Rc<dyn ChannelHandler>> {
        self.context(name).map(|c| c.handler())
    }

    /// The first handler (head to tail) of type `T` for which `f` returns `Some`, mapped
    /// (Netty's `pipeline.get(Class)`; handlers opt in through [`ChannelHandler::as_any`]).
    pub fn find_handler<T: 'static, R>(&self, f: impl Fn(&T) -> Option<R>) -> Option<R> {
        self.user_contexts().iter().find_map(|c| {
            let h = c.handler();
            let t = h.as_any()?.downcast_ref::<T>()?;
            f(t)
        })
    }

    /// Handler names from head to tail.
    pub fn names(&self) -> Vec<String> {
        self.user_contexts()
            .iter()
            .map(|c| c.name().to_string())
            .collect()
    }

    /// The context of the first handler.
    pub fn first(&self) -> Option<ChannelHandlerContext> {
        self.user_contexts().into_iter().next()
    }

    /// The context of the last handler.
    pub fn last(&self) -> Option<ChannelHandlerContext> {
        self.user_contexts().pop()
    }

    /// Adds `handler` named `name` at the head end.
    pub fn add_first(
        &self,
        name: &str,
        handler: impl IntoHandler,
    ) -> Result<&Self, TransportError> {
        self.add(Position::First, name, handler.into_handler())
    }

    /// Adds `handler` named `name` at the tail end.
    pub fn add_last(&self, name: &str, handler: impl IntoHandler) -> Result<&Self, TransportError> {
        self.add(Position::Last, name, handler.into_handler())
    }

    /// Adds `handler` named `name` before the handler named `base`.
    pub fn add_before(
        &self,
        base: &str,
        name: &str,
        handler: impl IntoHandler,
    ) -> Result<&Self, TransportError> {
        self.add(Position::Before(base), name, handler.into_handler())
    }

    /// Adds `handler` named `name` after the handler named `base`.
    pub fn add_after(
        &self,
        base: &str,
        name: &str,
        handler: impl IntoHandler,
    ) -> Result<&Self, TransportError> {
        self.add(Position::After(base), name, handler.into_handler())
    }

    fn find(&self, name: &str) -> Result<ChannelHandlerContext, TransportError> {
        self.context(name)
            .ok_or_else(|| TransportError::NoSuchHandler(name.to_string()))
    }

    fn check_unique(&self, name: &str) -> Result<(), TransportError> {
        if name == "HEAD" || name == "TAIL" || self.context(name).is_some() {
            return Err(TransportError::DuplicateHandlerName(name.to_string()));
        }
        Ok(())
    }

    pub(crate) fn add(
        &self,
        pos: Position<'_>,
        name: &str,
        handler: Rc<dyn ChannelHandler>,
    ) -> Result<&Self, TransportError> {
        self.check_unique(name)?;
        let (prev, next) = match pos {
            Position::First => (
                self.0.head.clone(),
                self.0.head.next().expect("head links to tail"),
            ),
            Position::Last => (
                self.0.tail.prev().expect("tail links to head"),
                self.0.tail.clone(),
            ),
            Position::Before(base) => {
                let b = self.find(base)?;
                (b.prev().expect("linked context has a predecessor"), b)
            }
            Position::After(base) => {
                let b = self.find(base)?;
                let n = b.next().expect("linked context has a successor");
                (b, n)
            }
        };
        let ctx = ChannelHandlerContext::new(
            name.to_string(),
            handler,
            Rc::downgrade(&self.0),
            self.0.channel.clone(),
        );
        link(&prev, &ctx, &next);
        self.added(ctx);
        Ok(self)
    }

    /// Removes the handler named `name` and returns it.
    pub fn remove(&self, name: &str) -> Result<Rc<dyn ChannelHandler>, TransportError> {
        let ctx = self.find(name)?;
        unlink(&ctx);
        self.removed(ctx.clone());
        Ok(ctx.handler())
    }

    /// Puts `handler` named `new_name` in the place of the handler named `old`, which is
    /// returned. The new handler's `handler_added` runs before the old one's `handler_removed`.
    pub fn replace(
        &self,
        old: &str,
        new_name: &str,
        handler: impl IntoHandler,
    ) -> Result<Rc<dyn ChannelHandler>, TransportError> {
        let old_ctx = self.find(old)?;
        if new_name != old {
            self.check_unique(new_name)?;
        }
        let prev = old_ctx.prev().expect("linked context has a predecessor");
        let next = old_ctx.next().expect("linked context has a successor");
        let ctx = ChannelHandlerContext::new(
            new_name.to_string(),
            handler.into_handler(),
            Rc::downgrade(&self.0),
            self.0.channel.clone(),
        );
        link(&prev, &ctx, &next);
        // Netty: the old context points into the new one both ways, so whatever the old
        // handler forwards from `handler_removed` (or later) reaches the new handler.
        old_ctx.0.next.set(Some(ctx.clone()));
        old_ctx.pin_prev(&ctx);
        self.added(ctx);
        self.removed(old_ctx.clone());
        Ok(old_ctx.handler())
    }

    fn added(&self, ctx: ChannelHandlerContext) {
        if self.0.registered.get() {
            self.call_added(&ctx);
        } else {
            self.0.pending.borrow_mut().push_back(Pending::Added(ctx));
        }
    }

    fn removed(&self, ctx: ChannelHandlerContext) {
        if self.0.registered.get() {
            self.call_removed(&ctx);
        } else {
            self.0.pending.borrow_mut().push_back(Pending::Removed(ctx));
        }
    }

    fn call_added(&self, ctx: &ChannelHandlerContext) {
        if ctx.0.state.get() != HandlerState::AddPending {
            return;
        }
        ctx.0.state.set(HandlerState::Added);
        if let Err(e) = ctx.call_handler_added() {
            // A handler that cannot be added is taken out again, then the error is reported.
            if self.context(ctx.name()).is_some_and(|c| c.ptr_eq(ctx)) {
                unlink(ctx);
            }
            self.call_removed(ctx);
            self.fire_exception_caught(e);
        }
    }

    fn call_removed(&self, ctx: &ChannelHandlerContext) {
        if ctx.0.state.get() != HandlerState::Added {
            ctx.0.state.set(HandlerState::Removed);
            return;
        }
        ctx.0.state.set(HandlerState::Removed);
        if let Err(e) = ctx.call_handler_removed() {
            self.fire_exception_caught(e);
        }
    }

    /// First registration of the channel: runs the queued lifecycle callbacks in order.
    pub(crate) fn on_registered(&self) {
        if self.0.registered.replace(true) {
            return;
        }
        loop {
            let next = self.0.pending.borrow_mut().pop_front();
            match next {
                Some(Pending::Added(ctx)) => self.call_added(&ctx),
                Some(Pending::Removed(ctx)) => self.call_removed(&ctx),
                None => break,
            }
        }
    }

    /// The closed channel was unregistered: removes every handler, tail to head.
    pub fn destroy(&self) {
        while let Some(ctx) = self.last() {
            unlink(&ctx);
            self.removed(ctx);
        }
    }
}

fn link(prev: &ChannelHandlerContext, ctx: &ChannelHandlerContext, next: &ChannelHandlerContext) {
    ctx.0.prev.set(Rc::downgrade(&prev.0));
    ctx.0.next.set(Some(next.clone()));
    prev.0.next.set(Some(ctx.clone()));
    next.0.prev.set(Rc::downgrade(&ctx.0));
    ctx.0.skips.set(crate::context::skips_of(&*ctx.0.handler));
    review_reads(ctx);
}

/// Whether a read from the tail may go to the head directly: no linked handler takes `read`.
fn review_reads(ctx: &ChannelHandlerContext) {
    if let Some(p) = ctx.try_pipeline() {
        let direct = !p.user_contexts().iter().any(|c| c.0.handler.takes_read());
        p.0.reads_to_head.set(direct);
    }
}

/// Takes `ctx` out of the chain; it keeps its own links so events in flight go on.
fn unlink(ctx: &ChannelHandlerContext) {
    if ctx.is_unlinked() {
        return;
    }
    let (Some(prev), Some(next)) = (ctx.prev(), ctx.next()) else {
        return;
    };
    prev.0.next.set(Some(next.clone()));
    next.0.prev.set(Rc::downgrade(&prev.0));
    ctx.pin_prev(&prev);
    review_reads(ctx);
}
