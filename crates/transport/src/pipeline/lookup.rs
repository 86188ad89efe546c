//! Finding handlers other than by name: Netty's generated names (`addLast(handler)`),
//! `removeIfExists`, and context/remove/replace by handler instance (the same `Rc`).
//!
//! Ground rules: loop thread only, as the rest of the pipeline.

use std::rc::Rc;

use super::{ChannelPipeline, IntoHandler, Position};
use crate::context::ChannelHandlerContext;
use crate::error::TransportError;
use crate::handler::ChannelHandler;

/// `a::b::Decoder<x::Y>` → `Decoder` (Netty's `StringUtil.simpleClassName`).
fn simple_type_name(full: &str) -> &str {
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

/// Pointer identity of two handlers, whatever their static types.
fn same_handler<H: ?Sized>(a: &Rc<dyn ChannelHandler>, b: &Rc<H>) -> bool {
    std::ptr::eq(Rc::as_ptr(a) as *const u8, Rc::as_ptr(b) as *const u8)
}
impl IntoHandler for Rc<dyn ChannelHandler> {
    fn into_handler(self) -> Rc<dyn ChannelHandler> {
        self
    }
}

impl ChannelPipeline {
    /// The name Netty would generate for a handler of type `type_name` added without a name:
    /// `SimpleName#0`, or the first `SimpleName#n` not taken.
    pub fn generate_name(&self, type_name: &str) -> String {
        let simple = simple_type_name(type_name);
        (0u64..)
            .map(|i| format!("{simple}#{i}"))
            .find(|n| self.context(n).is_none())
            .expect("some name is free")
    }

    /// Adds `handler` at the tail end under a generated name (Netty's `addLast(handler)`),
    /// which is returned.
    pub fn add_last_unnamed(&self, handler: impl IntoHandler) -> Result<String, TransportError> {
        let name = self.generate_name(handler.handler_type_name());
        self.add(Position::Last, &name, handler.into_handler())?;
        Ok(name)
    }

    /// Adds `handler` at the head end under a generated name (Netty's `addFirst(handler)`),
    /// which is returned.
    pub fn add_first_unnamed(&self, handler: impl IntoHandler) -> Result<String, TransportError> {
        let name = self.generate_name(handler.handler_type_name());
        self.add(Position::First, &name, handler.into_handler())?;
        Ok(name)
    }

    /// The context of `handler` (the same `Rc`, compared by pointer), if it is in the
    /// pipeline (Netty's `context(ChannelHandler)`).
    pub fn context_of<H: ?Sized>(&self, handler: &Rc<H>) -> Option<ChannelHandlerContext> {
        self.user_contexts()
            .into_iter()
            .find(|c| same_handler(&c.handler(), handler))
    }

    /// Removes `handler` (compared by pointer) and returns it as stored.
    pub fn remove_handler<H: ?Sized>(
        &self,
        handler: &Rc<H>,
    ) -> Result<Rc<dyn ChannelHandler>, TransportError> {
        let ctx = self
            .context_of(handler)
            .ok_or_else(|| TransportError::NoSuchHandler("<handler instance>".into()))?;
        self.remove(ctx.name())
    }

    /// Puts a new handler in the place of `old` (compared by pointer); see
    /// [`ChannelPipeline::replace`].
    pub fn replace_handler<H: ?Sized>(
        &self,
        old: &Rc<H>,
        new_name: &str,
        handler: impl IntoHandler,
    ) -> Result<Rc<dyn ChannelHandler>, TransportError> {
        let ctx = self
            .context_of(old)
            .ok_or_else(|| TransportError::NoSuchHandler("<handler instance>".into()))?;
        let name = ctx.name().to_string();
        self.replace(&name, new_name, handler)
    }

    /// Removes the handler named `name` if there is one (Netty's `removeIfExists`).
    pub fn remove_if_exists(&self, name: &str) -> Option<Rc<dyn ChannelHandler>> {
        self.remove(name).ok()
    }
}
