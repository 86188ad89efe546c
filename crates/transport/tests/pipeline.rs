//! Pipeline behaviour on the embedded channel: event order, lifecycle callbacks, structure
//! changes, error routing and the tail.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use common::{log, take, Log, Recorder};
use netloop_transport::*;

fn reads(log: &Log) -> Vec<String> {
    take(log)
        .into_iter()
        .filter(|e| e.ends_with(":read") && !e.contains(":op:"))
        .collect()
}

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

#[test]
fn duplicate_handler_names_are_rejected() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![("a", Recorder::rc("a", &l))]);
    let err = ch
        .pipeline()
        .add_last("a", Recorder::rc("a2", &l))
        .err()
        .unwrap();
    assert_eq!(err.code(), "ERR_DUPLICATE_HANDLER_NAME");
    let err = ch
        .pipeline()
        .add_first("a", Recorder::rc("a3", &l))
        .err()
        .unwrap();
    assert_eq!(err.code(), "ERR_DUPLICATE_HANDLER_NAME");
    ch.pipeline().add_last("b", Recorder::rc("b", &l)).unwrap();
    let err = ch
        .pipeline()
        .replace("b", "a", Recorder::rc("x", &l))
        .err()
        .unwrap();
    assert_eq!(err.code(), "ERR_DUPLICATE_HANDLER_NAME");
    assert_eq!(ch.pipeline().names(), ["a", "b"]);
}

#[test]
fn unknown_names_fail_with_no_such_handler() {
    let ch = EmbeddedChannel::new(vec![]);
    assert_eq!(
        ch.pipeline().remove("nope").err().unwrap().code(),
        "ERR_NO_SUCH_HANDLER"
    );
    let l = log();
    let err = ch
        .pipeline()
        .add_before("nope", "x", Recorder::rc("x", &l))
        .err()
        .unwrap();
    assert_eq!(err.code(), "ERR_NO_SUCH_HANDLER");
    assert!(take(&l).is_empty());
}

#[test]
fn add_first_last_before_after_place_handlers_by_name() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![("m", Recorder::rc("m", &l))]);
    let p = ch.pipeline();
    p.add_first("first", Recorder::rc("first", &l)).unwrap();
    p.add_last("last", Recorder::rc("last", &l)).unwrap();
    p.add_before("m", "before_m", Recorder::rc("before_m", &l))
        .unwrap();
    p.add_after("m", "after_m", Recorder::rc("after_m", &l))
        .unwrap();
    assert_eq!(p.names(), ["first", "before_m", "m", "after_m", "last"]);
    take(&l);
    ch.write_inbound(Bytes::from_static(b"x"));
    assert_eq!(
        reads(&l),
        [
            "first:read",
            "before_m:read",
            "m:read",
            "after_m:read",
            "last:read"
        ]
    );
}

#[test]
fn replace_calls_new_added_before_old_removed_and_takes_its_place() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![
        ("a", Recorder::rc("a", &l)),
        ("b", Recorder::rc("b", &l)),
    ]);
    take(&l);
    ch.pipeline()
        .replace("a", "c", Recorder::rc("c", &l))
        .unwrap();
    assert_eq!(take(&l), ["c:added", "a:removed"]);
    assert_eq!(ch.pipeline().names(), ["c", "b"]);
    ch.write_inbound(Bytes::from_static(b"x"));
    assert_eq!(reads(&l), ["c:read", "b:read"]);
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

/// Fails every read, and records exceptions it sees.
struct Failing {
    seen: Rc<RefCell<Vec<String>>>,
    fail_exception_caught: bool,
}
impl ChannelHandler for Failing {
    fn channel_read(&self, _: &ChannelHandlerContext, _: Message) -> HandlerResult {
        Err(TransportError::foreign(
            "ERR_TEST",
            std::io::Error::other("boom"),
        ))
    }
    fn exception_caught(&self, ctx: &ChannelHandlerContext, e: TransportError) -> HandlerResult {
        self.seen.borrow_mut().push(e.code().to_string());
        if self.fail_exception_caught {
            return Err(TransportError::foreign(
                "ERR_SECOND",
                std::io::Error::other("again"),
            ));
        }
        ctx.fire_exception_caught(e);
        Ok(())
    }
}

#[test]
fn handler_error_goes_to_the_next_exception_caught() {
    let l = log();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let failing = Rc::new(Failing {
        seen: seen.clone(),
        fail_exception_caught: false,
    });
    let ch = EmbeddedChannel::new(vec![
        ("a", Recorder::rc("a", &l)),
        ("f", failing),
        ("b", Recorder::rc("b", &l)),
    ]);
    take(&l);
    assert!(!ch.write_inbound(Bytes::from_static(b"x")));
    let events = take(&l);
    assert!(
        events.contains(&"b:exception=ERR_TEST".to_string()),
        "{events:?}"
    );
    assert!(
        !events.contains(&"a:exception=ERR_TEST".to_string()),
        "errors travel towards the tail"
    );
    assert!(!events.contains(&"b:read".to_string()));
    assert!(
        seen.borrow().is_empty(),
        "not fed into the failing handler itself"
    );
    assert_eq!(ch.check_exception().unwrap_err().code(), "ERR_TEST");
}

#[test]
fn error_from_exception_caught_is_never_fed_back_into_it() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let failing = Rc::new(Failing {
        seen: seen.clone(),
        fail_exception_caught: true,
    });
    let ch = EmbeddedChannel::new(vec![("f", failing)]);
    ch.pipeline()
        .fire_exception_caught(TransportError::ChannelClosed);
    assert_eq!(*seen.borrow(), ["ERR_CHANNEL_CLOSED"]);
    assert_eq!(
        ch.check_exception().unwrap_err().code(),
        "ERR_SECOND",
        "it goes on to the tail"
    );
    assert!(ch.check_exception().is_ok());
}

struct Panicking;
impl ChannelHandler for Panicking {
    fn channel_read(&self, _: &ChannelHandlerContext, _: Message) -> HandlerResult {
        panic!("bad handler");
    }
}

#[test]
fn handler_panic_is_caught_and_routed_to_exception_caught() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![
        ("p", Rc::new(Panicking)),
        ("b", Recorder::rc("b", &l)),
    ]);
    take(&l);
    ch.write_inbound(Bytes::from_static(b"x"));
    assert!(take(&l).contains(&"b:exception=ERR_HANDLER_PANIC".to_string()));
    let err = ch.check_exception().unwrap_err();
    assert_eq!(err.code(), "ERR_HANDLER_PANIC");
    assert!(err.to_string().contains("bad handler"));
    // The pipeline still works.
    ch.write_inbound(Bytes::from_static(b"y"));
    assert!(ch.channel().is_open());
}

struct FailingWrite;
impl ChannelHandler for FailingWrite {
    fn write(&self, _: &ChannelHandlerContext, _: Message, _: ChannelPromise) -> HandlerResult {
        Err(TransportError::UnsupportedMessage("test"))
    }
}

#[test]
fn outbound_handler_error_fails_the_write_promise() {
    let ch = EmbeddedChannel::new(vec![("w", Rc::new(FailingWrite))]);
    let f = ch.channel().write_future(Bytes::from_static(b"x"));
    ch.channel().flush();
    ch.run_pending_tasks();
    assert_eq!(
        f.result().unwrap().unwrap_err().code(),
        "ERR_UNSUPPORTED_MESSAGE"
    );
    assert!(
        ch.check_exception().is_ok(),
        "a failed promise is the report"
    );
    // A void write has no promise: the error goes to exceptionCaught instead.
    ch.channel().write(Bytes::from_static(b"y"));
    assert_eq!(
        ch.check_exception().unwrap_err().code(),
        "ERR_UNSUPPORTED_MESSAGE"
    );
}

#[test]
fn unhandled_messages_and_events_reach_the_tail_which_reports_them() {
    let ch = EmbeddedChannel::new(vec![]);
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    ch.pipeline().set_unhandled_sink(move |u| {
        s.borrow_mut().push(match u {
            Unhandled::Message(m) => format!("message {}", m.as_bytes().unwrap().len()),
            Unhandled::UserEvent(e) => format!("event {}", e.downcast_ref::<u8>().unwrap()),
            Unhandled::Exception(e) => format!("exception {}", e.code()),
        })
    });
    ch.pipeline().fire_channel_read(Bytes::from_static(b"abc"));
    ch.pipeline().fire_user_event_triggered(Box::new(7u8));
    ch.pipeline()
        .fire_exception_caught(TransportError::ConnectionReset);
    assert_eq!(
        *seen.borrow(),
        ["message 3", "event 7", "exception ECONNRESET"]
    );
}

struct FailingAdd;
impl ChannelHandler for FailingAdd {
    fn handler_added(&self, _: &ChannelHandlerContext) -> HandlerResult {
        Err(TransportError::foreign(
            "ERR_ADD",
            std::io::Error::other("cannot"),
        ))
    }
}

#[test]
fn handler_whose_added_fails_is_taken_out_and_the_error_reported() {
    let ch = EmbeddedChannel::new(vec![]);
    ch.pipeline().add_last("bad", FailingAdd).unwrap();
    assert!(ch.pipeline().names().is_empty());
    assert_eq!(ch.check_exception().unwrap_err().code(), "ERR_ADD");
}

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
