//! Cancelled promises (Netty's rules): an operation whose promise cannot be made uncancellable
//! does nothing, and the outbound buffer drops the writes cancelled before their flush (their
//! bytes leave the pending total, writability follows).

use crate::common;

use std::cell::RefCell;
use std::rc::Rc;

use common::net::*;
use common::{log, take, Recorder};
use netloop_transport::*;

fn bytes(s: &'static str) -> Message {
    Message::Bytes(Bytes::from_static(s.as_bytes()))
}

fn cancelled() -> ChannelPromise {
    let p = ChannelPromise::new();
    assert!(p.cancel(false));
    p
}

fn outbound_text(ch: &EmbeddedChannel) -> String {
    let mut out = String::new();
    while let Some(m) = ch.read_outbound() {
        out.push_str(std::str::from_utf8(&m.into_bytes().unwrap()).unwrap());
    }
    out
}

#[test]
fn a_write_cancelled_before_its_flush_is_not_written() {
    let ch = EmbeddedChannel::new(vec![]);
    let c = ch.channel();
    let p = ChannelPromise::new();
    c.write(bytes("a"));
    c.write_with(bytes("SECRET"), p.clone());
    c.write(bytes("b"));
    assert!(p.cancel(false), "not flushed yet: cancellable");
    c.flush();
    ch.run_pending_tasks();
    assert_eq!(outbound_text(&ch), "ab");
    let f = p.future().unwrap();
    assert!(f.is_cancelled());
    assert_eq!(f.result().unwrap().unwrap_err().code(), "ERR_CANCELLED");
}

#[test]
fn a_flushed_write_can_no_longer_be_cancelled() {
    let net = Net::new();
    let child = ChannelOptions::default()
        .with(ChannelOption::SoSndbuf(8 * 1024))
        .unwrap();
    let (_server, addr) = net.server(ChannelOptions::default(), child, sink_child);
    let peer = std::net::TcpStream::connect(addr).unwrap();
    socket2::SockRef::from(&peer)
        .set_recv_buffer_size(8 * 1024)
        .unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    // The peer does not read: the big write stays in the buffer, flushed but not written.
    ch.write(Bytes::from(vec![0u8; 4 * 1024 * 1024]));
    let p = ChannelPromise::new();
    ch.write_with(Bytes::from_static(b"tail"), p.clone());
    ch.flush();
    assert!(ch.is_flush_pending());
    assert!(!p.is_cancellable(), "a flushed write is under way");
    assert!(!p.cancel(false));
    assert!(!p.is_done());
    drop(peer);
}

#[test]
fn a_cancelled_write_leaves_the_pending_total_at_the_flush_and_writability_follows() {
    let options = ChannelOptions::default()
        .with(ChannelOption::WriteBufferWaterMark(
            WaterMark::new(200, 400).unwrap(),
        ))
        .unwrap();
    let ch = EmbeddedChannel::unregistered(options);
    let events = Rc::new(RefCell::new(Vec::new()));
    let e2 = events.clone();
    struct Watch(Rc<RefCell<Vec<bool>>>);
    impl ChannelHandler for Watch {
        fn channel_writability_changed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
            self.0.borrow_mut().push(ctx.channel().is_writable());
            Ok(())
        }
    }
    ch.pipeline().add_last("watch", Watch(e2)).unwrap();
    ch.register();
    let c = ch.channel();
    let p = ChannelPromise::new();
    c.write_with(Bytes::from(vec![1u8; 1000]), p.clone());
    assert!(!c.is_writable());
    let pending = c.pending_outbound_bytes();
    assert!(pending >= 1000);
    assert!(p.cancel(false));
    assert_eq!(
        c.pending_outbound_bytes(),
        pending,
        "a cancelled write counts until the flush drops it (as in Netty)"
    );
    c.flush();
    ch.run_pending_tasks();
    assert_eq!(c.pending_outbound_bytes(), 0);
    assert!(c.is_writable());
    assert_eq!(*events.borrow(), [false, true]);
    assert!(ch.read_outbound().is_none(), "nothing was written");
}

#[test]
fn close_disconnect_and_deregister_with_a_cancelled_promise_do_nothing() {
    let log = log();
    let ch = EmbeddedChannel::new(vec![("rec", Recorder::rc("rec", &log))]);
    let c = ch.channel();
    take(&log);
    c.pipeline().close_with(cancelled());
    c.pipeline().disconnect_with(cancelled());
    c.pipeline().deregister_with(cancelled());
    ch.run_pending_tasks();
    assert!(c.is_open() && c.is_registered() && c.is_active());
    assert!(
        take(&log).is_empty(),
        "no handler sees an operation whose promise is cancelled"
    );
    // The same operations with live promises act.
    let p = ChannelPromise::new();
    c.pipeline().close_with(p.clone());
    ch.run_pending_tasks();
    assert!(!c.is_open() && p.is_done());
}

#[test]
fn a_promise_cancelled_by_a_handler_on_the_way_stops_the_operation_there() {
    struct CancelClose;
    impl ChannelHandler for CancelClose {
        fn close(&self, ctx: &ChannelHandlerContext, promise: ChannelPromise) -> HandlerResult {
            promise.cancel(false);
            ctx.close_with(promise);
            Ok(())
        }
    }
    let ch = EmbeddedChannel::new(vec![("cancel", Rc::new(CancelClose))]);
    let f = ch.channel().close();
    ch.run_pending_tasks();
    assert!(ch.channel().is_open());
    assert!(f.is_cancelled());
}

#[test]
fn bind_and_connect_with_a_cancelled_promise_do_nothing() {
    let net = Net::new();
    let server = ServerSocketChannel::open(&net.lp, ChannelOptions::default());
    server.register();
    server
        .pipeline()
        .bind_with("127.0.0.1:0".parse().unwrap(), cancelled());
    net.run_for(std::time::Duration::from_millis(5));
    assert!(server.local_addr().is_none() && !server.is_active());

    let (_l, addr) = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let a = l.local_addr().unwrap();
        (l, a)
    };
    let client = SocketChannel::open(&net.lp, ChannelOptions::default());
    client.register();
    client.connect_with(addr, None, cancelled());
    net.run_for(std::time::Duration::from_millis(20));
    assert!(client.is_open() && !client.is_active());
    assert!(client.remote_addr().is_none(), "no connect was started");
    // A live promise still connects.
    let p = ChannelPromise::new();
    client.connect_with(addr, None, p.clone());
    net.run_until("connected", || client.is_active());
    server.close();
    client.close();
}
