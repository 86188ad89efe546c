//! Issue 10: channel and pipeline behaviours Netty 4.1 documents (conformance), and the
//! Netty API added for it.

use crate::common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use common::net::*;
use common::{log, take, Log, Recorder};
use netloop_transport::*;

#[test]
fn registering_on_a_terminated_loop_fails_with_a_rejection_and_closes_the_channel() {
    let net = Net::new();
    let ch = SocketChannel::open(&net.lp, ChannelOptions::default());
    net.driver.terminate_now();
    let f = ch.register();
    assert_eq!(
        f.result().expect("failed at once").unwrap_err().code(),
        "ERR_REJECTED_EXECUTION"
    );
    assert!(!ch.is_open(), "the channel is closed");
    assert!(ch.close_future().is_done());
}

/// Forwards a read from `handler_removed` (as a decoder handing on what it buffered).
struct ForwardsOnRemoval;
impl ChannelHandler for ForwardsOnRemoval {
    fn handler_removed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.fire_channel_read(Bytes::from_static(b"leftover"));
        Ok(())
    }
}

#[test]
fn replace_routes_what_the_old_handler_forwards_on_removal_through_the_new_handler() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![
        ("old", Rc::new(ForwardsOnRemoval) as Rc<dyn ChannelHandler>),
        ("after", Recorder::rc("after", &l)),
    ]);
    take(&l);
    ch.pipeline()
        .replace("old", "new", Recorder::rc("new", &l))
        .unwrap();
    let got = take(&l);
    // The new handler sees it first, then the rest of the pipeline.
    assert_eq!(got, ["new:added", "new:read", "after:read"]);
}

#[test]
fn each_queued_message_counts_an_entry_overhead_so_tiny_writes_reach_the_high_water_mark() {
    let ch = EmbeddedChannel::new(vec![]);
    let c = ch.channel();
    // Default high water mark: 64 KiB. 1-byte writes: Netty trips it after ~676 of them.
    let mut n = 0;
    while c.is_writable() {
        c.write(Bytes::from_static(b"x"));
        n += 1;
        assert!(
            n < 10_000,
            "1-byte writes never made the channel unwritable"
        );
    }
    assert_eq!(n, 64 * 1024 / (1 + ENTRY_OVERHEAD) + 1);
    assert_eq!(c.pending_outbound_bytes(), n * (1 + ENTRY_OVERHEAD));
}

#[test]
fn writes_submitted_from_another_thread_count_towards_writability_at_submission() {
    let net = Net::new();
    let (_server, client) = net.client_of_sink_server();
    let handle = client.handle();
    let events = Rc::new(RefCell::new(Vec::new()));
    let ev = events.clone();
    client.pipeline().set_unhandled_sink(move |u| {
        if let Unhandled::WritabilityChanged = u {
            ev.borrow_mut().push("writability");
        }
    });
    let h = handle.clone();
    let (writable_after, pending_after) = std::thread::spawn(move || {
        let _ = h.write_and_flush(Bytes::from(vec![1u8; 70 * 1024]));
        (h.is_writable(), h.pending_outbound_bytes())
    })
    .join()
    .unwrap();
    assert!(
        !writable_after,
        "queued bytes above the high mark count at once"
    );
    assert_eq!(pending_after, 70 * 1024 + ENTRY_OVERHEAD);
    net.run_until("written and writable again", || {
        client.pending_outbound_bytes() == 0 && client.is_writable()
    });
    assert_eq!(*events.borrow(), ["writability", "writability"]);
}

#[test]
fn writes_after_a_write_error_fail_as_closed_with_the_original_error_as_cause() {
    let net = Net::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let opts = ChannelOptions::default()
        .with(ChannelOption::AutoRead(false))
        .unwrap();
    let (client, connected) = net.client(opts, no_child, addr);
    net.run_until("connect", || connected.is_done());
    let (peer, _) = listener.accept().unwrap();
    socket2::SockRef::from(&peer)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
    drop(peer); // RST
    std::thread::sleep(Duration::from_millis(20));
    let mut first = None;
    for _ in 0..50 {
        let f = client.write_future(Bytes::from(vec![0u8; 1024]));
        client.flush();
        net.run_until("write done", || f.is_done());
        if let Err(e) = f.result().unwrap() {
            first = Some(e);
            break;
        }
    }
    let first = first.expect("a write failed after the reset");
    assert!(
        matches!(first.code(), "EPIPE" | "ECONNRESET"),
        "{}",
        first.code()
    );
    let later = client.write_future(Bytes::from_static(b"late"));
    let err = later.result().expect("failed at once").unwrap_err();
    assert_eq!(err.code(), "ERR_CHANNEL_CLOSED");
    assert!(err.is_channel_closed());
    assert_eq!(err.cause().map(|c| c.code()), Some(first.code()));
}

/// Reads with autoRead off: asks for the first read when active, and for one more read
/// from inside each `channel_read`.
struct ReadsOneByOne(Rc<RefCell<Vec<u8>>>);
impl ChannelHandler for ReadsOneByOne {
    fn channel_active(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.read();
        ctx.fire_channel_active();
        Ok(())
    }
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        self.0
            .borrow_mut()
            .extend_from_slice(msg.as_bytes().unwrap());
        ctx.read();
        Ok(())
    }
}

#[test]
fn read_called_inside_channel_read_with_auto_read_off_is_carried_out() {
    let net = Net::new();
    let data = Rc::new(RefCell::new(Vec::new()));
    let child = reads_of_64(ChannelOption::AutoRead(false));
    thread_local! {
        static DATA: RefCell<Option<Rc<RefCell<Vec<u8>>>>> = const { RefCell::new(None) };
    }
    DATA.with(|s| *s.borrow_mut() = Some(data.clone()));
    let (_server, addr) = net.server(ChannelOptions::default(), child, |ch| {
        let d = DATA.with(|s| s.borrow().clone().unwrap());
        ch.pipeline().add_last("reader", ReadsOneByOne(d))?;
        Ok(())
    });
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    std::io::Write::write_all(&mut s, &[7u8; 4096]).unwrap();
    net.run_until("every byte read through read() calls", || {
        data.borrow().len() == 4096
    });
    drop(s);
}

struct Plain;
impl ChannelHandler for Plain {}

struct Generic<T>(std::marker::PhantomData<T>);
impl<T: 'static> ChannelHandler for Generic<T> {}

#[test]
fn handlers_added_without_a_name_get_netty_style_generated_names() {
    let ch = EmbeddedChannel::new(vec![]);
    let p = ch.pipeline();
    assert_eq!(p.add_last_unnamed(Plain).unwrap(), "Plain#0");
    assert_eq!(p.add_last_unnamed(Plain).unwrap(), "Plain#1");
    assert_eq!(p.add_first_unnamed(Rc::new(Plain)).unwrap(), "Plain#2");
    assert_eq!(
        p.add_last_unnamed(Generic::<String>(Default::default()))
            .unwrap(),
        "Generic#0"
    );
    p.remove("Plain#0").unwrap();
    assert_eq!(p.add_last_unnamed(Plain).unwrap(), "Plain#0");
    assert_eq!(p.names(), ["Plain#2", "Plain#1", "Generic#0", "Plain#0"]);
}

#[test]
fn remove_if_exists_returns_none_for_an_unknown_name() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![("a", Recorder::rc("a", &l))]);
    assert!(ch.pipeline().remove_if_exists("nope").is_none());
    assert!(ch.pipeline().remove_if_exists("a").is_some());
    assert!(ch.pipeline().names().is_empty());
}

#[test]
fn handlers_are_found_removed_and_replaced_by_instance() {
    let l = log();
    let a = Rc::new(Recorder {
        name: "a",
        log: l.clone(),
    });
    let b = Recorder::rc("b", &l);
    let ch = EmbeddedChannel::new(vec![("x", a.clone()), ("y", b.clone())]);
    let p = ch.pipeline();
    assert_eq!(p.context_of(&a).unwrap().name(), "x");
    assert_eq!(p.context_of(&b).unwrap().name(), "y");
    let other = Rc::new(Plain);
    assert!(p.context_of(&other).is_none());
    assert_eq!(
        p.remove_handler(&other).err().unwrap().code(),
        "ERR_NO_SUCH_HANDLER"
    );
    p.replace_handler(&a, "z", Recorder::rc("c", &l)).unwrap();
    assert_eq!(p.names(), ["z", "y"]);
    let removed = p.remove_handler(&b).unwrap();
    assert!(Rc::ptr_eq(&removed, &b));
    assert_eq!(p.names(), ["z"]);
}

#[test]
fn the_tail_reports_every_unhandled_inbound_event() {
    let ch = EmbeddedChannel::new(vec![]);
    let seen: Log = log();
    let s = seen.clone();
    ch.pipeline()
        .set_unhandled_sink(move |u| s.borrow_mut().push(format!("{u:?}")));
    let p = ch.pipeline();
    p.fire_channel_active();
    p.fire_channel_read_complete();
    p.fire_channel_writability_changed();
    p.fire_channel_inactive();
    assert_eq!(
        take(&seen),
        ["Active", "ReadComplete", "WritabilityChanged", "Inactive"]
    );
}

#[test]
fn user_defined_writability_flags_combine_with_the_water_mark_and_fire_once_per_change() {
    let ch = EmbeddedChannel::new(vec![]);
    let c = ch.channel();
    let flips = Rc::new(Cell::new(0));
    let f = flips.clone();
    ch.pipeline().set_unhandled_sink(move |u| {
        if let Unhandled::WritabilityChanged = u {
            f.set(f.get() + 1);
        }
    });
    assert!(c.set_user_defined_writability(0, false).is_err());
    assert!(c.set_user_defined_writability(32, false).is_err());
    assert!(c.user_defined_writability(1));
    c.set_user_defined_writability(1, false).unwrap();
    assert!(!c.is_writable());
    assert!(!c.user_defined_writability(1));
    assert_eq!(flips.get(), 1);
    c.set_user_defined_writability(31, false).unwrap();
    c.set_user_defined_writability(1, false).unwrap();
    assert_eq!(flips.get(), 1, "still unwritable: no event");
    c.set_user_defined_writability(1, true).unwrap();
    assert!(!c.is_writable(), "flag 31 is still off");
    assert_eq!(flips.get(), 1);
    // The water mark too: above it, clearing the last user flag changes nothing.
    c.write(Bytes::from(vec![0u8; 70 * 1024]));
    assert_eq!(flips.get(), 1);
    c.set_user_defined_writability(31, true).unwrap();
    assert!(!c.is_writable(), "above the high water mark");
    assert_eq!(flips.get(), 1);
    c.flush();
    ch.run_pending_tasks();
    assert!(c.is_writable());
    assert_eq!(flips.get(), 2);
}

#[test]
fn a_channel_promise_can_be_cancelled_unless_uncancellable() {
    let p = ChannelPromise::new();
    assert!(p.is_cancellable());
    assert!(p.cancel(true));
    assert!(p.is_cancelled() && p.is_done());
    assert_eq!(
        p.future().unwrap().result().unwrap().unwrap_err().code(),
        "ERR_CANCELLED"
    );
    let q = ChannelPromise::new();
    assert!(q.set_uncancellable());
    assert!(!q.cancel(false));
    assert!(q.try_success());
    let v = ChannelPromise::void();
    assert!(!v.is_cancellable());
    assert!(!v.cancel(true));
    assert!(v.set_uncancellable());
}

#[test]
fn writes_failed_before_connect_release_their_bytes_and_report_writability() {
    let net = Net::new();
    let ch = SocketChannel::open(&net.lp, ChannelOptions::default());
    ch.register();
    let flips = Rc::new(Cell::new(0));
    let f = flips.clone();
    ch.pipeline().set_unhandled_sink(move |u| {
        if let Unhandled::WritabilityChanged = u {
            f.set(f.get() + 1);
        }
    });
    let w = ch.write_future(Bytes::from(vec![0u8; 70 * 1024]));
    assert!(!ch.is_writable());
    ch.flush();
    assert_eq!(
        w.result().unwrap().unwrap_err().code(),
        "ERR_NOT_YET_CONNECTED"
    );
    assert!(ch.is_writable());
    assert_eq!(ch.pending_outbound_bytes(), 0);
    assert_eq!(flips.get(), 2);
}

#[test]
fn user_defined_writability_can_be_set_from_another_thread() {
    let net = Net::new();
    let (_server, client) = net.client_of_sink_server();
    let flips = Rc::new(Cell::new(0));
    let f = flips.clone();
    client.pipeline().set_unhandled_sink(move |u| {
        if let Unhandled::WritabilityChanged = u {
            f.set(f.get() + 1);
        }
    });
    let h = client.handle();
    std::thread::spawn(move || {
        h.set_user_defined_writability(5, false).unwrap();
        assert!(!h.is_writable());
        assert!(!h.user_defined_writability(5));
        assert!(h.set_user_defined_writability(40, false).is_err());
    })
    .join()
    .unwrap();
    assert!(!client.is_writable(), "visible at once");
    net.run_until("event on the loop", || flips.get() == 1);
    let h = client.handle();
    std::thread::spawn(move || h.set_user_defined_writability(5, true).unwrap())
        .join()
        .unwrap();
    net.run_until("writable again", || flips.get() == 2);
    assert!(client.is_writable());
}
