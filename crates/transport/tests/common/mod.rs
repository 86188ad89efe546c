//! Shared test handlers.
#![allow(dead_code)]

pub mod net;

use std::cell::RefCell;
use std::rc::Rc;

use netloop_transport::*;

pub type Log = Rc<RefCell<Vec<String>>>;

pub fn log() -> Log {
    Rc::new(RefCell::new(Vec::new()))
}

pub fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.borrow_mut())
}

/// Records every event and operation as "name:event", then passes it on.
pub struct Recorder {
    pub name: &'static str,
    pub log: Log,
}

impl Recorder {
    pub fn rc(name: &'static str, log: &Log) -> Rc<dyn ChannelHandler> {
        Rc::new(Recorder {
            name,
            log: log.clone(),
        })
    }
    fn rec(&self, what: &str) {
        self.log
            .borrow_mut()
            .push(format!("{}:{}", self.name, what));
    }
}

impl ChannelHandler for Recorder {
    fn handler_added(&self, _: &ChannelHandlerContext) -> HandlerResult {
        self.rec("added");
        Ok(())
    }
    fn handler_removed(&self, _: &ChannelHandlerContext) -> HandlerResult {
        self.rec("removed");
        Ok(())
    }
    fn channel_registered(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.rec("registered");
        ctx.fire_channel_registered();
        Ok(())
    }
    fn channel_unregistered(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.rec("unregistered");
        ctx.fire_channel_unregistered();
        Ok(())
    }
    fn channel_active(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.rec("active");
        ctx.fire_channel_active();
        Ok(())
    }
    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.rec("inactive");
        ctx.fire_channel_inactive();
        Ok(())
    }
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        self.rec("read");
        ctx.fire_channel_read(msg);
        Ok(())
    }
    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.rec("readComplete");
        ctx.fire_channel_read_complete();
        Ok(())
    }
    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, e: UserEvent) -> HandlerResult {
        self.rec("userEvent");
        ctx.fire_user_event_triggered(e);
        Ok(())
    }
    fn channel_writability_changed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.rec(&format!("writability={}", ctx.channel().is_writable()));
        ctx.fire_channel_writability_changed();
        Ok(())
    }
    fn exception_caught(&self, ctx: &ChannelHandlerContext, e: TransportError) -> HandlerResult {
        self.rec(&format!("exception={}", e.code()));
        ctx.fire_exception_caught(e);
        Ok(())
    }
    fn read(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.rec("op:read");
        ctx.read();
        Ok(())
    }
    fn write(&self, ctx: &ChannelHandlerContext, msg: Message, p: ChannelPromise) -> HandlerResult {
        self.rec("op:write");
        ctx.write_with(msg, p);
        Ok(())
    }
    fn flush(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.rec("op:flush");
        ctx.flush();
        Ok(())
    }
    fn close(&self, ctx: &ChannelHandlerContext, p: ChannelPromise) -> HandlerResult {
        self.rec("op:close");
        ctx.close_with(p);
        Ok(())
    }
}

/// The `read` events of a log (operations left out), draining it.
pub fn reads(log: &Log) -> Vec<String> {
    take(log)
        .into_iter()
        .filter(|e| e.ends_with(":read") && !e.contains(":op:"))
        .collect()
}
