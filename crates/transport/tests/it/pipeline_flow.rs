//! Pipeline event flow on the embedded channel: direction, lifecycle order, handlers added and removed while events flow.

use crate::common;

use common::{log, reads, take, Log, Recorder};
use netloop_transport::*;
use std::rc::Rc;

#[test]
fn inbound_events_flow_head_to_tail() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![
        ("a", Recorder::rc("a", &l)),
        ("b", Recorder::rc("b", &l)),
    ]);
    take(&l);
    assert!(ch.write_inbound(Bytes::from_static(b"x")));
    assert_eq!(
        take(&l),
        [
            "a:read",
            "b:read",
            "a:readComplete",
            "b:readComplete",
            "b:op:read",
            "a:op:read"
        ]
    );
    ch.pipeline().fire_user_event_triggered(Box::new(5u32));
    ch.pipeline().fire_channel_writability_changed();
    assert_eq!(
        take(&l),
        [
            "a:userEvent",
            "b:userEvent",
            "a:writability=true",
            "b:writability=true"
        ]
    );
}

#[test]
fn outbound_operations_flow_tail_to_head() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![
        ("a", Recorder::rc("a", &l)),
        ("b", Recorder::rc("b", &l)),
    ]);
    take(&l);
    assert!(ch.write_outbound(Bytes::from_static(b"x")));
    assert_eq!(
        take(&l),
        ["b:op:write", "a:op:write", "b:op:flush", "a:op:flush"]
    );
    assert_eq!(
        ch.read_outbound().unwrap().as_bytes().unwrap().as_ref(),
        b"x"
    );
}

#[test]
fn registration_fires_added_then_registered_then_active_in_order() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![
        ("a", Recorder::rc("a", &l)),
        ("b", Recorder::rc("b", &l)),
    ]);
    assert_eq!(
        take(&l),
        [
            "a:added",
            "b:added",
            "a:registered",
            "b:registered",
            "a:active",
            "b:active",
            "b:op:read",
            "a:op:read"
        ]
    );
    drop(ch);
}

#[test]
fn handler_added_is_deferred_until_registration() {
    let l = log();
    let ch = EmbeddedChannel::unregistered(ChannelOptions::default());
    ch.pipeline().add_last("a", Recorder::rc("a", &l)).unwrap();
    assert!(
        take(&l).is_empty(),
        "handlerAdded must wait for registration"
    );
    ch.register();
    assert_eq!(take(&l)[0], "a:added");
}

#[test]
fn add_then_remove_before_registration_calls_added_then_removed_once_at_registration() {
    let l = log();
    let ch = EmbeddedChannel::unregistered(ChannelOptions::default());
    ch.pipeline().add_last("a", Recorder::rc("a", &l)).unwrap();
    ch.pipeline().remove("a").unwrap();
    assert!(take(&l).is_empty());
    ch.register();
    assert_eq!(take(&l), ["a:added", "a:removed"]);
    ch.close();
    assert!(take(&l).is_empty(), "a removed handler sees nothing more");
}

#[test]
fn close_fires_inactive_then_unregistered_then_removes_handlers_tail_to_head_once() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![
        ("a", Recorder::rc("a", &l)),
        ("b", Recorder::rc("b", &l)),
    ]);
    take(&l);
    ch.close();
    assert_eq!(
        take(&l),
        [
            "b:op:close",
            "a:op:close",
            "a:inactive",
            "b:inactive",
            "a:unregistered",
            "b:unregistered",
            "b:removed",
            "a:removed"
        ]
    );
    ch.close();
    ch.run_pending_tasks();
    assert!(
        take(&l).is_empty(),
        "closing twice is harmless: handlers are gone, no second lifecycle"
    );
    assert!(!ch.channel().is_open());
    assert!(ch.pipeline().names().is_empty());
}

/// Removes itself while handling a read, then passes the read on.
struct RemoveSelfOnRead;
impl ChannelHandler for RemoveSelfOnRead {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        ctx.pipeline().remove(ctx.name())?;
        ctx.fire_channel_read(msg);
        Ok(())
    }
}

#[test]
fn handler_removed_while_handling_an_event_still_passes_it_on() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![
        ("once", Rc::new(RemoveSelfOnRead)),
        ("b", Recorder::rc("b", &l)),
    ]);
    take(&l);
    assert!(ch.write_inbound(Bytes::from_static(b"1")));
    assert!(ch.write_inbound(Bytes::from_static(b"2")));
    assert_eq!(reads(&l), ["b:read", "b:read"]);
    assert_eq!(ch.pipeline().names(), ["b"]);
}

/// Adds a recorder after itself on the first read.
struct AddOnRead(Log);
impl ChannelHandler for AddOnRead {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        if ctx.pipeline().context("late").is_none() {
            ctx.pipeline()
                .add_after(ctx.name(), "late", Recorder::rc("late", &self.0))?;
        }
        ctx.fire_channel_read(msg);
        Ok(())
    }
}

#[test]
fn handler_added_from_an_event_receives_it_at_once() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![("adder", Rc::new(AddOnRead(l.clone())))]);
    ch.write_inbound(Bytes::from_static(b"1"));
    let events = take(&l);
    assert_eq!(events[0], "late:added");
    assert_eq!(events[1], "late:read");
}

#[test]
fn deregister_keeps_the_channel_open_and_fires_unregistered_once() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![("r", Recorder::rc("r", &l))]);
    take(&l);
    let f = ch.channel().pipeline().deregister();
    ch.run_pending_tasks();
    assert!(f.is_success());
    assert!(ch.channel().is_open() && !ch.channel().is_registered());
    assert_eq!(take(&l), ["r:unregistered"]);
    assert_eq!(
        ch.pipeline().names(),
        ["r"],
        "an open channel keeps its handlers"
    );
}

/// Prefixes every outbound byte message with `tag` (a stand-in for a length prepender).
struct Prefix(&'static [u8]);
impl ChannelHandler for Prefix {
    fn write(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        let mut out = self.0.to_vec();
        out.extend_from_slice(msg.as_bytes().expect("bytes"));
        ctx.write_with(Message::from(Bytes::from(out)), promise);
        Ok(())
    }
}

/// On write: removes the handlers named in `order` (itself included), then passes the write
/// on from its own, now removed, context.
struct RemoveOnWrite(&'static [&'static str]);
impl ChannelHandler for RemoveOnWrite {
    fn write(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        for name in self.0 {
            ctx.pipeline().remove(name)?;
        }
        ctx.write_with(msg, promise);
        Ok(())
    }
}

#[test]
fn a_write_from_a_removed_context_still_passes_the_live_outbound_handlers_whatever_the_removal_order(
) {
    for order in [&["b", "a"][..], &["a", "b"][..]] {
        let order: &'static [&'static str] = Box::leak(order.to_vec().into_boxed_slice());
        let ch = EmbeddedChannel::new(vec![
            ("prefix", Rc::new(Prefix(b"P:"))),
            ("a", Rc::new(Prefix(b"A:"))),
            ("b", Rc::new(RemoveOnWrite(order))),
        ]);
        assert!(ch.write_outbound(Bytes::from_static(b"x")));
        assert_eq!(
            ch.read_outbound().unwrap().as_bytes().unwrap().as_ref(),
            b"P:x",
            "removal order {order:?}: the write skipped the live prefix handler"
        );
        assert_eq!(ch.pipeline().names(), ["prefix"]);
        assert!(ch.write_outbound(Bytes::from_static(b"y")));
        assert_eq!(
            ch.read_outbound().unwrap().as_bytes().unwrap().as_ref(),
            b"P:y"
        );
    }
}

/// Counts the reads it is asked for and passes them on, but says it takes none (`takes_read`
/// false): a read travelling towards the head skips it.
struct ReadBlind(Rc<std::cell::Cell<u32>>);
impl ChannelHandler for ReadBlind {
    fn takes_read(&self) -> bool {
        false
    }
    fn read(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.0.set(self.0.get() + 1);
        ctx.read();
        Ok(())
    }
}

#[test]
fn a_read_goes_past_the_handlers_that_do_not_take_it_and_through_those_that_do() {
    let n = Rc::new(std::cell::Cell::new(0));
    let l = log();
    let ch = EmbeddedChannel::new(vec![("blind", Rc::new(ReadBlind(n.clone())))]);
    ch.channel().read();
    assert_eq!(n.get(), 0, "no handler takes read: straight to the head");
    ch.pipeline()
        .add_last("rec", Recorder::rc("rec", &l))
        .unwrap();
    take(&l);
    ch.channel().read();
    assert_eq!(
        take(&l),
        ["rec:op:read"],
        "the handler that takes read gets it"
    );
    assert_eq!(n.get(), 0, "the one that does not is passed by");
    ch.pipeline().remove("rec").unwrap();
    ch.channel().read();
    assert_eq!(n.get(), 0, "the handler that took read left");
}

/// Passes writes and flushes on, counting them, but says it takes neither: an operation
/// travelling towards the head skips it; a handler that takes them still sees them.
struct OutBlind(Rc<std::cell::Cell<u32>>);
impl ChannelHandler for OutBlind {
    fn takes_write(&self) -> bool {
        false
    }
    fn takes_flush(&self) -> bool {
        false
    }
    fn write(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        self.0.set(self.0.get() + 1);
        ctx.write_with(msg, promise);
        Ok(())
    }
    fn flush(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.0.set(self.0.get() + 1);
        ctx.flush();
        Ok(())
    }
}

#[test]
fn writes_and_flushes_go_past_the_handlers_that_do_not_take_them_in_order_with_their_promises() {
    let n = Rc::new(std::cell::Cell::new(0));
    let ch = EmbeddedChannel::new(vec![
        ("prefix", Rc::new(Prefix(b"P:")) as Rc<dyn ChannelHandler>),
        ("blind", Rc::new(OutBlind(n.clone()))),
        ("blind2", Rc::new(OutBlind(n.clone()))),
    ]);
    let f = ch.pipeline().write_future(Bytes::from_static(b"x"));
    ch.pipeline().write(Bytes::from_static(b"y"));
    ch.pipeline().flush();
    assert_eq!(n.get(), 0, "the handlers that take neither were passed by");
    assert!(
        f.is_done() && f.is_success(),
        "the write's promise completed"
    );
    let out: Vec<_> = std::iter::from_fn(|| ch.read_outbound())
        .map(|m| m.as_bytes().unwrap().clone())
        .collect();
    assert_eq!(
        out,
        [&b"P:x"[..], &b"P:y"[..]],
        "the handler in front still saw them, in order"
    );
}
