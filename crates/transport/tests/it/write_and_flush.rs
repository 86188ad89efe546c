//! A write and its flush together (`write_and_flush_with`): one call of a handler that takes
//! both in one (`takes_write_and_flush`) when the write and the flush both stop at its context
//! first; otherwise the write, then the flush, through the same handlers as before.

use crate::common;
use crate::write_now::InboundOnly;

use common::{log, take, Log, Recorder};
use netloop_transport::*;
use std::rc::Rc;

/// Logs each call; its write and flush in one are logged as "fused" and passed on as a write
/// and a flush (or fail, when `fail` is set).
struct Fuser {
    log: Log,
    fail: bool,
}

impl Fuser {
    fn rc(log: &Log, fail: bool) -> Rc<dyn ChannelHandler> {
        Rc::new(Fuser {
            log: log.clone(),
            fail,
        })
    }
    fn rec(&self, what: &str) {
        self.log.borrow_mut().push(format!("fuser:{what}"));
    }
}

impl ChannelHandler for Fuser {
    fn takes_write_and_flush(&self) -> bool {
        true
    }
    fn write(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        self.rec("write");
        ctx.write_with(msg, promise);
        Ok(())
    }
    fn flush(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.rec("flush");
        ctx.flush();
        Ok(())
    }
    fn write_and_flush(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        self.rec("fused");
        if self.fail {
            return Err(TransportError::UnsupportedMessage("fused"));
        }
        ctx.write_with(msg, promise);
        ctx.flush();
        Ok(())
    }
}

/// Takes flushes only (logs them); writes pass it by.
struct FlushOnly(Log);
impl ChannelHandler for FlushOnly {
    fn takes_write(&self) -> bool {
        false
    }
    fn flush(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.0.borrow_mut().push("flushOnly:flush".into());
        ctx.flush();
        Ok(())
    }
}

fn outbound(ch: &EmbeddedChannel) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(m) = ch.read_outbound() {
        out.extend_from_slice(m.as_bytes().expect("bytes"));
    }
    out
}

#[test]
fn a_handler_taking_both_gets_one_call_and_the_handlers_before_it_a_write_then_a_flush() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![
        ("a", Recorder::rc("a", &l)),
        ("fuser", Fuser::rc(&l, false)),
        ("inbound", Rc::new(InboundOnly)),
    ]);
    take(&l);
    let p = ChannelPromise::new();
    let f = p.future().unwrap();
    ch.pipeline()
        .write_and_flush_with(Bytes::from_static(b"x"), p);
    assert_eq!(take(&l), ["fuser:fused", "a:op:write", "a:op:flush"]);
    assert_eq!(outbound(&ch), b"x");
    assert!(f.is_success());
}

#[test]
fn a_handler_taking_only_the_flush_in_between_sees_it_and_the_fuser_gets_two_calls() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![
        ("fuser", Fuser::rc(&l, false)),
        ("flushOnly", Rc::new(FlushOnly(l.clone()))),
    ]);
    take(&l);
    ch.pipeline().write_and_flush(Bytes::from_static(b"y"));
    assert_eq!(
        take(&l),
        ["fuser:write", "flushOnly:flush", "fuser:flush"],
        "the flush passes the handler that takes it, in order"
    );
    assert_eq!(outbound(&ch), b"y");
}

#[test]
fn without_the_opt_in_a_write_and_flush_is_a_write_then_a_flush() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![
        ("a", Recorder::rc("a", &l)),
        ("b", Recorder::rc("b", &l)),
    ]);
    take(&l);
    ch.pipeline().write_and_flush(Bytes::from_static(b"z"));
    assert_eq!(
        take(&l),
        ["b:op:write", "a:op:write", "b:op:flush", "a:op:flush"]
    );
    assert_eq!(outbound(&ch), b"z");
}

#[test]
fn a_cancelled_promise_skips_the_write_and_keeps_the_flush() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![("fuser", Fuser::rc(&l, false))]);
    take(&l);
    let p = ChannelPromise::new();
    assert!(p.cancel(false));
    ch.pipeline()
        .write_and_flush_with(Bytes::from_static(b"never"), p);
    assert_eq!(take(&l), ["fuser:flush"]);
    assert!(outbound(&ch).is_empty());
}

#[test]
fn an_error_of_the_call_fails_the_promise() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![("fuser", Fuser::rc(&l, true))]);
    take(&l);
    let p = ChannelPromise::new();
    let f = p.future().unwrap();
    ch.pipeline()
        .write_and_flush_with(Bytes::from_static(b"w"), p);
    assert_eq!(take(&l), ["fuser:fused"]);
    assert!(f.is_done() && !f.is_success(), "the write's promise fails");
    assert!(outbound(&ch).is_empty());
}
