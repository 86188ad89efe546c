//! TCP channels over real loopback sockets, on a loop driven by the test thread.

mod common;

use std::cell::{Cell, RefCell};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::rc::Rc;
use std::time::Duration;

use common::net::*;
use netloop_transport::*;

fn no_child(_: &Channel) -> HandlerResult {
    Ok(())
}

/// A listener whose backlog is full: connects to it stay pending (SYNs are dropped).
fn black_hole() -> (TcpListener, Vec<socket2::Socket>, SocketAddr) {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    s.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
        .unwrap();
    s.listen(0).unwrap();
    let l: TcpListener = s.into();
    let addr = l.local_addr().unwrap();
    let mut fillers = Vec::new();
    for _ in 0..2 {
        let c = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        c.set_nonblocking(true).unwrap();
        let _ = c.connect(&addr.into());
        fillers.push(c);
    }
    std::thread::sleep(Duration::from_millis(50));
    (l, fillers, addr)
}

struct Echo;
impl ChannelHandler for Echo {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        ctx.write(msg);
        Ok(())
    }
    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.flush();
        Ok(())
    }
}

#[test]
fn echo_of_more_than_one_mib_arrives_intact() {
    let net = Net::new();
    let (_server, addr) = net.server(ChannelOptions::default(), ChannelOptions::default(), |ch| {
        ch.pipeline().add_last("echo", Echo)?;
        Ok(())
    });
    let data = pattern(3 * 1024 * 1024 + 17, 3);
    let expected = data.clone();
    let peer = std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        let mut r = s.try_clone().unwrap();
        let reader = std::thread::spawn(move || {
            let mut got = vec![0u8; expected.len()];
            r.read_exact(&mut got).unwrap();
            got == expected
        });
        s.write_all(&data).unwrap();
        reader.join().unwrap()
    });
    net.run_until("echo finished", || peer.is_finished());
    assert!(peer.join().unwrap(), "echoed bytes differ");
}

#[test]
fn client_channel_sends_large_payload_with_content_checked() {
    let net = Net::new();
    let (_server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let (client, connected) = net.client(ChannelOptions::default(), no_child, addr);
    net.run_until("connect", || connected.is_done());
    connected.result().unwrap().unwrap();
    let data = pattern(2 * 1024 * 1024 + 5, 9);
    let mut futures = Vec::new();
    for chunk in data.chunks(100_000) {
        futures.push(client.write_future(Bytes::copy_from_slice(chunk)));
    }
    client.flush();
    net.run_until("all data received", || {
        accepted_count() == 1 && sink(0).0.borrow().len() == data.len()
    });
    assert!(*sink(0).0.borrow() == data);
    net.run_until("write promises", || futures.iter().all(|f| f.is_done()));
    assert!(futures.iter().all(|f| f.is_success()));
    // Adaptive sizing grew the receive buffer past its initial 2 KiB during the bulk transfer.
    let max_read = sink(0)
        .1
        .borrow()
        .iter()
        .filter_map(|e| e.strip_prefix("read ").map(|n| n.parse::<usize>().unwrap()))
        .max()
        .unwrap();
    assert!(max_read > 2048, "largest read {max_read}");
}

#[test]
fn refused_connect_fails_with_econnrefused_and_never_fires_active() {
    let net = Net::new();
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let events = Rc::new(RefCell::new(Vec::new()));
    thread_local! { static EV: RefCell<Option<Rc<RefCell<Vec<String>>>>> = const { RefCell::new(None) }; }
    EV.with(|e| *e.borrow_mut() = Some(events.clone()));
    let (ch, f) = net.client(
        ChannelOptions::default(),
        |ch| {
            let events = EV.with(|e| e.borrow().clone().unwrap());
            ch.pipeline().add_last(
                "sink",
                Sink {
                    data: Rc::default(),
                    events,
                },
            )?;
            Ok(())
        },
        addr,
    );
    net.run_until("connect result", || f.is_done());
    let err = f.result().unwrap().unwrap_err();
    assert_eq!(err.code(), "ECONNREFUSED");
    net.run_until("closed", || !ch.is_open());
    net.run_for(Duration::from_millis(20));
    assert!(
        !has(&events, "active") && !has(&events, "inactive"),
        "{:?}",
        events.borrow()
    );
    assert!(has(&events, "unregistered"));
}

#[test]
fn connect_timeout_fails_with_timeout_error_and_closes() {
    let net = Net::new();
    let (_l, _fill, addr) = black_hole();
    let opts = ChannelOptions::default()
        .with(ChannelOption::ConnectTimeout(Some(Duration::from_millis(
            150,
        ))))
        .unwrap();
    let (ch, f) = net.client(opts, no_child, addr);
    net.run_until("connect result", || f.is_done());
    assert_eq!(
        f.result().unwrap().unwrap_err().code(),
        "ERR_CONNECT_TIMEOUT"
    );
    assert!(!ch.is_open());
}

#[test]
fn cancelling_a_connect_closes_the_channel() {
    let net = Net::new();
    let (_l, _fill, addr) = black_hole();
    let ch = SocketChannel::open(&net.lp, ChannelOptions::default());
    ch.register();
    let p = ChannelPromise::new();
    ch.connect_with(addr, None, p.clone());
    net.run_for(Duration::from_millis(20));
    assert!(ch.is_open() && !p.is_done(), "still connecting");
    assert!(p.try_failure(TransportError::ConnectCancelled));
    net.run_until("closed", || !ch.is_open());
}

#[test]
fn peer_reset_closes_the_channel_with_econnreset_and_does_not_spin() {
    let net = Net::new();
    let (_server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let s = TcpStream::connect(addr).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    socket2::SockRef::from(&s)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
    drop(s);
    net.run_until("closed", || !ch.is_open());
    let (_, events) = sink(0);
    net.run_until("unregistered", || has(&events, "unregistered"));
    let ev = events.borrow().clone();
    assert!(ev.iter().any(|e| e == "exception ECONNRESET"), "{ev:?}");
    assert_eq!(ev.iter().filter(|e| *e == "inactive").count(), 1);
    assert_eq!(
        net.lp.registered_count(),
        1,
        "only the listener stays registered"
    );
}

#[test]
fn eof_closes_the_channel_without_half_closure() {
    let net = Net::new();
    let (_server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"bye").unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    net.run_until("closed", || !ch.is_open());
    assert_eq!(&*sink(0).0.borrow(), b"bye");
}

#[test]
fn half_closure_keeps_the_output_open_and_fires_input_shutdown() {
    let net = Net::new();
    let child = ChannelOptions::default()
        .with(ChannelOption::AllowHalfClosure(true))
        .unwrap();
    let (_server, addr) = net.server(ChannelOptions::default(), child, sink_child);
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"question").unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let (data, events) = sink(0);
    net.run_until("input shutdown", || has(&events, "inputShutdown"));
    assert_eq!(&*data.borrow(), b"question");
    let ch = accepted(0).unwrap();
    assert!(ch.is_open() && ch.is_active());
    ch.write_and_flush(Bytes::from_static(b"answer"));
    ch.shutdown_output().unwrap();
    net.run_until("closed after both sides shut", || !ch.is_open());
    let mut got = Vec::new();
    s.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"answer");
}

#[test]
fn auto_read_off_reads_only_when_asked() {
    let net = Net::new();
    let child = ChannelOptions::default()
        .with(ChannelOption::AutoRead(false))
        .unwrap();
    let (_server, addr) = net.server(ChannelOptions::default(), child, sink_child);
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"hello").unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    net.run_for(Duration::from_millis(50));
    let (data, _) = sink(0);
    assert!(data.borrow().is_empty(), "nothing is read without read()");
    accepted(0).unwrap().read();
    net.run_until("read after read()", || data.borrow().len() == 5);
    s.write_all(b"more").unwrap();
    net.run_for(Duration::from_millis(50));
    assert_eq!(data.borrow().len(), 5, "one read() reads once");
    accepted(0)
        .unwrap()
        .set_option(ChannelOption::AutoRead(true))
        .unwrap();
    net.run_until("autoRead on again", || data.borrow().len() == 9);
}

#[test]
fn read_asked_before_active_is_carried_out_once_active() {
    let net = Net::new();
    let (_server, addr) = net.server(ChannelOptions::default(), ChannelOptions::default(), |ch| {
        ch.pipeline().add_last("echo", Echo)?;
        Ok(())
    });
    let opts = ChannelOptions::default()
        .with(ChannelOption::AutoRead(false))
        .unwrap();
    let data = Rc::new(RefCell::new(Vec::new()));
    let ch = SocketChannel::open(&net.lp, opts);
    ch.pipeline()
        .add_last(
            "sink",
            Sink {
                data: data.clone(),
                events: Rc::default(),
            },
        )
        .unwrap();
    ch.register();
    ch.read();
    let f = ch.connect(addr);
    net.run_until("connected", || f.is_done());
    ch.write_and_flush(Bytes::from_static(b"ping"));
    net.run_until("echo read without another read()", || {
        data.borrow().len() == 4
    });
}

#[test]
fn max_messages_per_read_splits_reads_into_batches() {
    let net = Net::new();
    let child = ChannelOptions::default()
        .with(ChannelOption::MaxMessagesPerRead(1))
        .unwrap()
        .with(ChannelOption::RecvSizing(RecvSizing {
            minimum: 64,
            initial: 64,
            maximum: 64,
        }))
        .unwrap();
    let (_server, addr) = net.server(ChannelOptions::default(), child, sink_child);
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(&[1u8; 640]).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let (data, events) = sink(0);
    net.run_until("all read", || data.borrow().len() == 640);
    let ev = events.borrow();
    let reads = ev.iter().filter(|e| e.starts_with("read ")).count();
    let completes = ev.iter().filter(|e| *e == "readComplete").count();
    assert_eq!(reads, 10, "64-byte reads");
    assert_eq!(completes, reads, "one message per batch");
}

#[test]
fn slow_reader_never_exceeds_high_water_mark_by_more_than_one_write() {
    let net = Net::new();
    const WRITE: usize = 4096;
    const TOTAL: usize = 2 * 1024 * 1024;
    let water = WaterMark::new(8 * 1024, 32 * 1024).unwrap();
    let child = ChannelOptions::default()
        .with(ChannelOption::WriteBufferWaterMark(water))
        .unwrap()
        .with(ChannelOption::SoSndbuf(32 * 1024))
        .unwrap();
    let (_server, addr) = net.server(ChannelOptions::default(), child, sink_child);
    let s = TcpStream::connect(addr).unwrap();
    socket2::SockRef::from(&s)
        .set_recv_buffer_size(64 * 1024)
        .unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = s;
        let mut got = Vec::with_capacity(TOTAL);
        let mut buf = [0u8; 8192];
        while got.len() < TOTAL {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "eof");
            got.extend_from_slice(&buf[..n]);
            if got.len() % (256 * 1024) < 8192 {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        got
    });
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    let data = pattern(TOTAL, 5);
    let (mut sent, mut max_pending, mut saw_pending_flush) = (0, 0, false);
    let mut unwritable_seen = 0;
    while sent < TOTAL {
        while sent < TOTAL && ch.is_writable() {
            ch.write_and_flush(Bytes::copy_from_slice(&data[sent..sent + WRITE]));
            sent += WRITE;
            max_pending = max_pending.max(ch.pending_outbound_bytes());
            saw_pending_flush |= ch.is_flush_pending();
        }
        if !ch.is_writable() {
            unwritable_seen += 1;
        }
        net.run_until("writable again", || ch.is_writable());
    }
    net.run_until("drained", || ch.pending_outbound_bytes() == 0);
    assert!(
        max_pending <= water.high + WRITE,
        "pending peaked at {max_pending}"
    );
    assert!(
        max_pending > water.high,
        "the test must actually hit the high water mark"
    );
    assert!(
        saw_pending_flush,
        "write interest was set while bytes remained"
    );
    assert!(
        !ch.is_flush_pending(),
        "write interest cleared once drained"
    );
    let got = loop {
        net.run_for(Duration::from_millis(5));
        if reader.is_finished() {
            break reader.join().unwrap();
        }
    };
    assert!(got == data, "content differs");
    let (_, events) = sink(0);
    let changes: Vec<String> = events
        .borrow()
        .iter()
        .filter(|e| e.starts_with("writable="))
        .cloned()
        .collect();
    assert_eq!(changes.len(), 2 * unwritable_seen, "one event per change");
    for pair in changes.chunks(2) {
        assert_eq!(pair, ["writable=false", "writable=true"]);
    }
}

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
    let (_server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let (client, connected) = net.client(ChannelOptions::default(), no_child, addr);
    net.run_until("connect", || connected.is_done());
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

#[test]
fn options_are_applied_to_accepted_sockets() {
    let net = Net::new();
    let child = ChannelOptions::default()
        .with(ChannelOption::TcpNoDelay(false))
        .unwrap()
        .with(ChannelOption::SoKeepAlive(true))
        .unwrap()
        .with(ChannelOption::SoLinger(Some(Duration::from_secs(3))))
        .unwrap()
        .with(ChannelOption::SoRcvbuf(32 * 1024))
        .unwrap();
    let (_server, addr) = net.server(ChannelOptions::default(), child, sink_child);
    let _s = TcpStream::connect(addr).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    let fd = ch.raw_fd().unwrap();
    // SAFETY: the fd belongs to the open channel, which outlives this borrow.
    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let sock = socket2::SockRef::from(&borrowed);
    assert!(!sock.nodelay().unwrap());
    assert!(sock.keepalive().unwrap());
    assert_eq!(sock.linger().unwrap(), Some(Duration::from_secs(3)));
    assert!(sock.recv_buffer_size().unwrap() >= 32 * 1024);
    ch.set_option(ChannelOption::TcpNoDelay(true)).unwrap();
    assert!(
        sock.nodelay().unwrap(),
        "a live channel applies socket options at once"
    );
}

#[test]
fn accept_storm_of_two_hundred_connections_is_fully_served() {
    let net = Net::new();
    let (server, addr) = net.server(ChannelOptions::default(), ChannelOptions::default(), |ch| {
        ch.pipeline().add_last("echo", Echo)?;
        Ok(())
    });
    const N: usize = 200;
    let clients = std::thread::spawn(move || {
        let socks: Vec<TcpStream> = (0..N).map(|_| TcpStream::connect(addr).unwrap()).collect();
        for (i, mut s) in socks.iter().enumerate() {
            s.write_all(&(i as u32).to_be_bytes()).unwrap();
        }
        socks.into_iter().enumerate().all(|(i, mut s)| {
            let mut b = [0u8; 4];
            s.set_read_timeout(Some(LIMIT)).unwrap();
            s.read_exact(&mut b).is_ok() && u32::from_be_bytes(b) == i as u32
        })
    });
    net.run_until("all echoed", || clients.is_finished());
    assert!(clients.join().unwrap());
    let calls = ServerSocketChannel::accept_calls(&server).unwrap();
    assert!(calls >= N as u64);
}

#[test]
fn write_spin_count_bounds_writes_per_flush_and_the_rest_follows_in_a_task() {
    let net = Net::new();
    let child = ChannelOptions::default()
        .with(ChannelOption::WriteSpinCount(2))
        .unwrap();
    let (_server, addr) = net.server(ChannelOptions::default(), child, sink_child);
    let mut s = TcpStream::connect(addr).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    // 64 slices per writev: 1000 messages need 16 writes; spin count 2 allows 2 per flush.
    for i in 0..1000u32 {
        ch.write(Bytes::copy_from_slice(&i.to_be_bytes()));
    }
    let before = SocketChannel::write_calls(&ch).unwrap();
    ch.flush();
    assert_eq!(SocketChannel::write_calls(&ch).unwrap() - before, 2);
    assert!(
        !ch.is_flush_pending(),
        "not waiting for writability: a task continues"
    );
    net.run_until("all written", || ch.pending_outbound_bytes() == 0);
    let mut got = vec![0u8; 4000];
    s.read_exact(&mut got).unwrap();
    for (i, c) in got.chunks(4).enumerate() {
        assert_eq!(u32::from_be_bytes(c.try_into().unwrap()), i as u32);
    }
}

#[test]
fn programming_error_on_accept_closes_the_listener() {
    let net = Net::new();
    let (server, _addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let fd = server.raw_fd().unwrap();
    // SAFETY: the fd is the server channel's open listener.
    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    // Shutting a listening socket down makes accept fail with EINVAL.
    socket2::SockRef::from(&borrowed)
        .shutdown(std::net::Shutdown::Read)
        .unwrap();
    net.run_until("listener closed", || !server.is_open());
}

#[test]
fn channels_keep_working_after_a_selector_rebuild() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let fail_next = Arc::new(AtomicBool::new(false));
    let f2 = fail_next.clone();
    let cfg = netloop_transport::eventloop::LoopConfig {
        fault_injector: Some(Arc::new(move || {
            if f2.swap(false, Ordering::SeqCst) {
                netloop_transport::eventloop::SelectorFault::Error
            } else {
                netloop_transport::eventloop::SelectorFault::None
            }
        })),
        ..Default::default()
    };
    let net = Net::with_config(cfg);
    let (_server, addr) = net.server(ChannelOptions::default(), ChannelOptions::default(), |ch| {
        ch.pipeline().add_last("echo", Echo)?;
        Ok(())
    });
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"one").unwrap();
    let mut b = [0u8; 3];
    let peer = std::thread::spawn(move || {
        s.read_exact(&mut b).unwrap();
        (s, b)
    });
    net.run_until("first echo", || peer.is_finished());
    let (mut s, b) = peer.join().unwrap();
    assert_eq!(&b, b"one");
    let rebuilds = net.handle().selector_rebuilds();
    fail_next.store(true, Ordering::SeqCst);
    net.run_until("rebuild", || net.handle().selector_rebuilds() > rebuilds);
    s.write_all(b"two").unwrap();
    let peer = std::thread::spawn(move || {
        let mut b = [0u8; 3];
        s.read_exact(&mut b).unwrap();
        (s, b)
    });
    net.run_until("echo after rebuild", || peer.is_finished());
    let (_s, b) = peer.join().unwrap();
    assert_eq!(&b, b"two");
    // The listener was re-registered too.
    let _c = TcpStream::connect(addr).unwrap();
    net.run_until("accept after rebuild", || net.lp.registered_count() == 3);
}

#[test]
fn handle_writes_and_closes_from_another_thread() {
    let net = Net::new();
    let (_server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let mut s = TcpStream::connect(addr).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let handle = accepted(0).unwrap().handle();
    let other = std::thread::spawn(move || {
        let w = handle.write_and_flush(Bytes::from_static(b"from afar"));
        let r = w.wait_timeout(LIMIT).expect("write done");
        let c = handle.close().wait_timeout(LIMIT).expect("closed");
        (r.is_ok(), c.is_ok())
    });
    net.run_until("other thread done", || other.is_finished());
    assert_eq!(other.join().unwrap(), (true, true));
    let mut got = Vec::new();
    s.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"from afar");
}
