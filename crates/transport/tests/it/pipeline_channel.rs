//! The channel under the pipeline (embedded): initializer, writability events, close ordering, reads with autoRead off.

use crate::common;

use common::{log, take, Recorder};
use netloop_transport::*;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

#[test]
fn channel_initializer_runs_once_per_channel_and_removes_itself() {
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let r = runs.clone();
    let init = Rc::new(ChannelInitializer::new(move |ch: &Channel| {
        r.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        ch.pipeline().add_last("echo", EchoBack)?;
        Ok(())
    }));
    let a = EmbeddedChannel::unregistered(ChannelOptions::default());
    a.pipeline().add_last("init", init.clone()).unwrap();
    assert_eq!(
        runs.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "waits for registration"
    );
    a.register();
    let b = EmbeddedChannel::new(vec![("init", init as Rc<dyn ChannelHandler>)]);
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert_eq!(a.pipeline().names(), ["echo"]);
    assert_eq!(b.pipeline().names(), ["echo"]);
    a.write_inbound(Bytes::from_static(b"hi"));
    assert_eq!(
        a.read_outbound().unwrap().as_bytes().unwrap().as_ref(),
        b"hi"
    );
}

struct EchoBack;
impl ChannelHandler for EchoBack {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        ctx.write_and_flush(msg);
        Ok(())
    }
}

#[test]
fn writability_changes_fire_exactly_once_per_crossing() {
    let l = log();
    let opts = ChannelOptions::default()
        .with(ChannelOption::WriteBufferWaterMark(
            WaterMark::new(4, 8).unwrap(),
        ))
        .unwrap();
    let ch = EmbeddedChannel::unregistered(opts);
    ch.pipeline().add_last("r", Recorder::rc("r", &l)).unwrap();
    ch.register();
    take(&l);
    for _ in 0..5 {
        ch.channel().write(Bytes::from_static(b"abc"));
    }
    assert!(!ch.channel().is_writable());
    ch.channel().flush();
    let w: Vec<String> = take(&l)
        .into_iter()
        .filter(|e| e.contains("writability"))
        .collect();
    assert_eq!(w, ["r:writability=false", "r:writability=true"]);
    assert!(ch.channel().is_writable());
}

#[test]
fn close_fails_pending_writes_before_inactive_and_unregistered() {
    let order = Rc::new(RefCell::new(Vec::new()));
    let l = log();
    let ch = EmbeddedChannel::new(vec![("r", Recorder::rc("r", &l))]);
    let o = order.clone();
    let f = ch.channel().write_future(Bytes::from_static(b"unflushed"));
    f.add_local_listener(move |r| {
        o.borrow_mut()
            .push(format!("write:{}", r.as_ref().unwrap_err().code()))
    });
    take(&l);
    ch.close();
    let mut all = order.borrow().clone();
    all.extend(
        take(&l)
            .into_iter()
            .filter(|e| e.ends_with("inactive") || e.ends_with("unregistered")),
    );
    assert_eq!(
        all,
        ["write:ERR_CHANNEL_CLOSED", "r:inactive", "r:unregistered"]
    );
    let late = ch.channel().write_future(Bytes::from_static(b"late"));
    assert_eq!(
        late.result().unwrap().unwrap_err().code(),
        "ERR_CHANNEL_CLOSED"
    );
}

#[test]
fn close_from_a_write_completion_listener_works() {
    let ch = EmbeddedChannel::new(vec![]);
    let c = ch.channel().clone();
    let closed = Rc::new(Cell::new(false));
    let cl = closed.clone();
    let f = ch.channel().write_future(Bytes::from_static(b"x"));
    f.add_local_listener(move |r| {
        assert!(r.is_ok());
        let cf = c.close();
        cf.add_local_listener(move |_| cl.set(true));
    });
    let second = ch.channel().write_future(Bytes::from_static(b"y"));
    ch.channel().flush();
    ch.run_pending_tasks();
    assert!(closed.get());
    assert!(!ch.channel().is_open());
    assert_eq!(
        ch.read_outbound().unwrap().as_bytes().unwrap().as_ref(),
        b"x"
    );
    // The second write was flushed with the first but closed before it was written.
    let r = second.result().unwrap();
    assert!(r.is_ok() || r.unwrap_err().code() == "ERR_CHANNEL_CLOSED");
}

#[test]
fn read_asked_while_auto_read_is_off_reaches_the_head() {
    let l = log();
    let opts = ChannelOptions::default()
        .with(ChannelOption::AutoRead(false))
        .unwrap();
    let ch = EmbeddedChannel::unregistered(opts);
    ch.pipeline().add_last("r", Recorder::rc("r", &l)).unwrap();
    ch.register();
    assert!(
        !take(&l).contains(&"r:op:read".to_string()),
        "no automatic read"
    );
    ch.channel()
        .set_option(ChannelOption::AutoRead(true))
        .unwrap();
    assert!(
        take(&l).contains(&"r:op:read".to_string()),
        "turning autoRead on asks for a read"
    );
}

#[test]
fn the_close_hook_runs_once_before_the_close_future_and_never_when_set_after_the_close() {
    let ch = EmbeddedChannel::new(vec![]);
    let order = Rc::new(RefCell::new(Vec::new()));
    let o = order.clone();
    ch.channel().on_close(move || o.borrow_mut().push("hook"));
    let o = order.clone();
    ch.channel()
        .close_future()
        .add_local_listener(move |_| o.borrow_mut().push("future"));
    ch.close();
    ch.close();
    ch.run_pending_tasks();
    assert_eq!(*order.borrow(), ["hook", "future"]);
    let late = Rc::new(Cell::new(false));
    let l = late.clone();
    ch.channel().on_close(move || l.set(true));
    ch.run_pending_tasks();
    assert!(!late.get(), "a hook set after the close never runs");
    assert!(
        ch.channel().close_future().is_done(),
        "a close future asked for after the close is complete"
    );
}

#[test]
fn a_deferred_destroy_keeps_the_handlers_of_a_closed_channel_until_the_owner_removes_them() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![
        ("a", Recorder::rc("a", &l)),
        ("b", Recorder::rc("b", &l)),
    ]);
    ch.pipeline().defer_destroy();
    let a = ch.pipeline().context("a").expect("a is in the pipeline");
    take(&l);
    ch.close();
    assert!(!ch.channel().is_registered());
    assert_eq!(
        take(&l),
        [
            "b:op:close",
            "a:op:close",
            "a:inactive",
            "b:inactive",
            "a:unregistered",
            "b:unregistered"
        ]
    );
    // An event passed on late (as a binding's handler does across a call boundary) still
    // reaches the handlers after it.
    a.fire_channel_inactive();
    assert_eq!(take(&l), ["b:inactive"]);
    ch.pipeline().destroy();
    assert_eq!(take(&l), ["b:removed", "a:removed"]);
    assert!(ch.pipeline().context("a").is_none());
}

#[test]
fn without_a_deferred_destroy_the_handlers_go_once_the_closed_channel_is_unregistered() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![("a", Recorder::rc("a", &l))]);
    take(&l);
    ch.close();
    assert_eq!(
        take(&l),
        ["a:op:close", "a:inactive", "a:unregistered", "a:removed"]
    );
}

fn water_marked(low: usize, high: usize, l: &common::Log) -> EmbeddedChannel {
    let opts = ChannelOptions::default()
        .with(ChannelOption::WriteBufferWaterMark(
            WaterMark::new(low, high).unwrap(),
        ))
        .unwrap();
    let ch = EmbeddedChannel::unregistered(opts);
    ch.pipeline().add_last("r", Recorder::rc("r", l)).unwrap();
    ch.register();
    take(l);
    ch
}

fn writability_events(l: &common::Log) -> Vec<String> {
    take(l)
        .into_iter()
        .filter(|e| e.contains("writability"))
        .collect()
}

#[test]
fn reserved_bytes_count_towards_the_water_marks_once_per_crossing() {
    let l = log();
    let ch = water_marked(100, 200, &l);
    let c = ch.channel();
    c.reserve_pending_outbound(150);
    assert!(c.is_writable());
    c.reserve_pending_outbound(150);
    assert!(!c.is_writable());
    assert_eq!(writability_events(&l), ["r:writability=false"]);
    // The writes arrive: each gives its reservation back and counts itself, no event.
    for _ in 0..3 {
        c.release_pending_outbound(100);
        c.write(Bytes::from(vec![0u8; 4]));
    }
    assert_eq!(c.pending_outbound_bytes(), 3 * 100);
    assert!(writability_events(&l).is_empty());
    c.flush();
    assert_eq!(writability_events(&l), ["r:writability=true"]);
    // A reservation given back for a write that went elsewhere: the recheck reports it.
    c.reserve_pending_outbound(300);
    c.release_pending_outbound(300);
    assert!(!c.is_writable());
    c.recheck_writability();
    assert!(c.is_writable());
    assert_eq!(
        writability_events(&l),
        ["r:writability=false", "r:writability=true"]
    );
}

#[test]
fn marking_unwritable_above_the_high_mark_is_silent_and_draining_reports_writable_once() {
    let l = log();
    let ch = water_marked(100, 200, &l);
    let c = ch.channel();
    assert!(
        !c.mark_unwritable_above(200),
        "200 is not above the high mark"
    );
    assert!(c.is_writable());
    assert!(c.mark_unwritable_above(201));
    assert!(!c.is_writable());
    assert!(!c.mark_unwritable_above(500), "already unwritable");
    assert!(writability_events(&l).is_empty(), "the caller reports it");
    c.reserve_pending_outbound(250);
    assert!(writability_events(&l).is_empty());
    c.release_pending_outbound(250);
    c.write_and_flush(Bytes::from(vec![0u8; 154]));
    assert_eq!(writability_events(&l), ["r:writability=true"]);
}

#[test]
fn a_closed_channel_is_not_writable() {
    let ch = EmbeddedChannel::new(vec![]);
    assert!(ch.channel().is_writable());
    ch.close();
    assert!(!ch.channel().is_writable());
}
