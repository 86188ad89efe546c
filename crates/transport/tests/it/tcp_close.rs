//! Closing a socket channel: pending writes fail, then inactive, then unregistered; close from a write listener.

use crate::common;

use common::net::*;
use netloop_transport::*;
use std::cell::{Cell, RefCell};
use std::net::TcpStream;
use std::rc::Rc;
use std::time::Duration;

#[test]
fn close_fails_flushed_and_unflushed_writes_then_fires_inactive_then_unregistered() {
    let net = Net::new();
    let child = ChannelOptions::default()
        .with(ChannelOption::SoSndbuf(8 * 1024))
        .unwrap();
    let (_server, addr) = net.server(ChannelOptions::default(), child, sink_child);
    let s = TcpStream::connect(addr).unwrap();
    socket2::SockRef::from(&s)
        .set_recv_buffer_size(8 * 1024)
        .unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    let order = Rc::new(RefCell::new(Vec::new()));
    let big = ch.write_future(Bytes::from(vec![0u8; 4 * 1024 * 1024]));
    ch.flush();
    assert!(
        ch.is_flush_pending(),
        "the peer does not read: bytes remain"
    );
    let unflushed = ch.write_future(Bytes::from_static(b"never flushed"));
    for (name, f) in [("flushed", big), ("unflushed", unflushed)] {
        let o = order.clone();
        f.add_local_listener(move |r| {
            o.borrow_mut()
                .push(format!("{name}:{}", r.as_ref().unwrap_err().code()))
        });
    }
    let (_, events) = sink(0);
    let e2 = events.clone();
    let o2 = order.clone();
    ch.close().add_local_listener(move |_| {
        o2.borrow_mut()
            .push(format!("closed (events so far: {})", e2.borrow().len()))
    });
    let before = events.borrow().len();
    net.run_until("unregistered", || has(&events, "unregistered"));
    assert_eq!(
        *order.borrow(),
        [
            "flushed:ERR_CHANNEL_CLOSED",
            "unflushed:ERR_CHANNEL_CLOSED",
            format!("closed (events so far: {before})").as_str()
        ]
    );
    let tail: Vec<String> = events.borrow()[before..].to_vec();
    assert_eq!(tail, ["inactive", "unregistered"]);
    ch.close();
    net.run_for(Duration::from_millis(10));
    drop(s);
}

#[test]
fn close_from_a_write_completion_listener_over_a_socket() {
    let net = Net::new();
    let (_server, client) = net.client_of_sink_server();
    let c = client.clone();
    let closed_in_listener = Rc::new(Cell::new(false));
    let flag = closed_in_listener.clone();
    client
        .write_future(Bytes::from_static(b"last words"))
        .add_local_listener(move |r| {
            assert!(r.is_ok());
            c.close();
            flag.set(!c.is_open());
        });
    let after = client.write_future(Bytes::from_static(b"after"));
    client.flush();
    net.run_until("server saw the close", || {
        accepted_count() == 1 && has(&sink(0).1, "inactive")
    });
    assert!(closed_in_listener.get());
    let data = sink(0).0.borrow().clone();
    assert!(data.starts_with(b"last words"));
    net.run_until("second write done", || after.is_done());
}

/// A peer that reads `read_first` bytes, answers `reply`, then resets the connection (close
/// with SO_LINGER 0); returns once it has.
fn answer_then_reset(listener: std::net::TcpListener, read_first: usize, reply: &'static [u8]) {
    use std::io::{Read, Write};
    let (mut s, _) = listener.accept().unwrap();
    let mut buf = vec![0u8; read_first];
    s.read_exact(&mut buf).unwrap();
    s.write_all(reply).unwrap();
    socket2::SockRef::from(&s)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
    drop(s);
}

#[test]
fn the_peers_last_words_are_read_when_its_reset_is_seen_first() {
    let net = Net::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (ch, connected) = net.client(ChannelOptions::default(), sink_child, addr);
    net.run_until("connect", || connected.is_done());
    ch.write_and_flush(Bytes::from(vec![7u8; 1024]));
    // The answer and the reset are both in before the loop looks: one event, error included.
    answer_then_reset(listener, 1024, b"413 refused");
    std::thread::sleep(Duration::from_millis(20));
    net.run_until("closed", || !ch.is_open());
    let (data, events) = sink(0);
    assert_eq!(&*data.borrow(), b"413 refused", "{:?}", events.borrow());
}

#[test]
fn the_peers_last_words_are_read_before_a_failed_write_closes() {
    let net = Net::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (ch, connected) = net.client(ChannelOptions::default(), sink_child, addr);
    net.run_until("connect", || connected.is_done());
    ch.write_and_flush(Bytes::from(vec![7u8; 10]));
    answer_then_reset(listener, 10, b"401 go away");
    std::thread::sleep(Duration::from_millis(20));
    // The write fails at once (the reset is in), before the loop has seen any event.
    let p = ChannelPromise::new();
    let written = p.future().unwrap();
    ch.write_with(Bytes::from(vec![8u8; 4096]), p);
    ch.flush();
    net.run_until("closed", || !ch.is_open());
    assert!(written.result().is_some_and(|r| r.is_err()));
    let (data, events) = sink(0);
    assert_eq!(&*data.borrow(), b"401 go away", "{:?}", events.borrow());
}

/// Holds every close: never passes it on (a handler whose close never completes).
struct HoldsClose(std::sync::Arc<std::sync::atomic::AtomicU32>);
impl ChannelHandler for HoldsClose {
    fn close(&self, _ctx: &ChannelHandlerContext, _promise: ChannelPromise) -> HandlerResult {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

#[test]
fn a_channel_whose_close_a_handler_holds_is_closed_when_its_loop_terminates_and_its_writes_fail_with_the_shutdown(
) {
    let net = Net::new();
    let held = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let h = held.clone();
    let child = ChannelOptions::default()
        .with(ChannelOption::SoSndbuf(8 * 1024))
        .unwrap();
    let (_server, addr) = net.server(ChannelOptions::default(), child, move |ch| {
        ch.pipeline()
            .add_last("holds-close", HoldsClose(h.clone()))?;
        sink_child(ch)
    });
    let mut s = TcpStream::connect(addr).unwrap();
    socket2::SockRef::from(&s)
        .set_recv_buffer_size(8 * 1024)
        .unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    let failed = Rc::new(RefCell::new(None::<(String, Option<String>)>));
    let f = failed.clone();
    ch.write_future(Bytes::from(vec![0u8; 4 * 1024 * 1024]))
        .add_local_listener(move |r| {
            let e = r.as_ref().unwrap_err();
            *f.borrow_mut() = Some((
                e.code().to_string(),
                e.cause().map(|c| c.code().to_string()),
            ));
        });
    ch.flush();
    assert!(
        ch.is_flush_pending(),
        "the peer does not read: bytes remain"
    );

    net.handle()
        .shutdown_gracefully(Duration::ZERO, Duration::from_millis(200));
    net.run_until("terminated", || net.handle().is_terminated());
    assert!(
        held.load(std::sync::atomic::Ordering::SeqCst) >= 1,
        "the shutdown asked the pipeline to close"
    );
    assert!(
        !ch.is_open(),
        "termination closed the channel the handler held"
    );
    let failed = failed.borrow().clone();
    assert_eq!(
        failed,
        Some(("ERR_LOOP_SHUTDOWN".to_string(), None)),
        "the flushed write fails with the shutdown"
    );
    // The socket is closed: the peer reads what was sent, then the end of the stream.
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0;
    loop {
        match std::io::Read::read(&mut s, &mut buf) {
            Ok(0) => break,
            Ok(n) => total += n,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("the peer saw no end of stream: {e} after {total} bytes"),
        }
    }
}
