//! Errors in the pipeline: handler errors and panics reach the next exceptionCaught, never loop back, fail write promises; the tail reports the unhandled.

use crate::common;

use common::{log, take, Recorder};
use netloop_transport::*;
use std::cell::RefCell;
use std::rc::Rc;

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
            other => format!("{other:?}"),
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
fn a_firing_void_promise_reports_a_failed_write_to_exception_caught_and_a_plain_one_does_not() {
    let ch = EmbeddedChannel::new(vec![]);
    ch.close();
    let pipeline = ch.pipeline();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    pipeline.set_unhandled_sink(move |u| {
        if let Unhandled::Exception(e) = u {
            s.borrow_mut().push(e.code().to_string());
        }
    });
    pipeline.write_with(Bytes::from_static(b"late"), ChannelPromise::void());
    assert!(seen.borrow().is_empty(), "a plain void promise is silent");
    let p = ChannelPromise::void_firing(&pipeline);
    assert!(
        p.is_void() && p.future().is_none(),
        "nothing to listen to, nothing allocated"
    );
    pipeline.write_with(Bytes::from_static(b"late"), p);
    assert_eq!(*seen.borrow(), vec!["ERR_CHANNEL_CLOSED".to_string()]);
}

#[test]
fn an_exception_sink_gets_the_unhandled_exceptions_only() {
    let ch = EmbeddedChannel::new(vec![]);
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    ch.pipeline()
        .set_unhandled_exception_sink(move |e| s.borrow_mut().push(e.code().to_string()));
    ch.pipeline().fire_channel_read(Bytes::from_static(b"abc"));
    ch.pipeline().fire_channel_read_complete();
    ch.pipeline().fire_user_event_triggered(Box::new(7u8));
    ch.pipeline()
        .fire_exception_caught(TransportError::ConnectionReset);
    assert_eq!(*seen.borrow(), ["ECONNRESET"]);
}
