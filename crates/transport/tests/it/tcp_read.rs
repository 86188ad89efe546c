//! The read path over loopback: peer reset and EOF, half-closure, autoRead and read(), maxMessagesPerRead.

use crate::common;

use common::net::*;
use netloop_transport::*;
use std::cell::RefCell;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::rc::Rc;
use std::time::Duration;

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
    ch.shutdown_output();
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
fn turning_auto_read_off_withdraws_the_read_already_asked_for() {
    let net = Net::new();
    let (_server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"hello").unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let (data, _) = sink(0);
    // autoRead asked for the next read after this batch; turning autoRead off withdraws it
    // (Netty's autoReadCleared), so later bytes stay in the socket.
    net.run_until("first read", || data.borrow().len() == 5);
    let child = accepted(0).unwrap();
    child.set_option(ChannelOption::AutoRead(false)).unwrap();
    s.write_all(b"more").unwrap();
    net.run_for(Duration::from_millis(50));
    assert_eq!(
        data.borrow().len(),
        5,
        "nothing read after autoRead was turned off"
    );
    child.read();
    net.run_until("read() reads again", || data.borrow().len() == 9);
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

/// Sends `total` bytes to a server whose children use `child`; the reads and read batches
/// (`readComplete`s) the child saw.
fn reads_and_batches(child: ChannelOptions, total: usize) -> (usize, usize) {
    let net = Net::new();
    let (_server, addr) = net.server(ChannelOptions::default(), child, sink_child);
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(&vec![1u8; total]).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let (data, events) = sink(0);
    net.run_until("all read", || data.borrow().len() == total);
    let ev = events.borrow();
    let reads = ev.iter().filter(|e| e.starts_with("read ")).count();
    let completes = ev.iter().filter(|e| *e == "readComplete").count();
    (reads, completes)
}

#[test]
fn max_messages_per_read_splits_reads_into_batches() {
    let (reads, completes) =
        reads_and_batches(reads_of_64(ChannelOption::MaxMessagesPerRead(1)), 640);
    assert_eq!(reads, 10, "64-byte reads");
    assert_eq!(completes, reads, "one message per batch");
}

#[test]
fn max_bytes_per_read_ends_a_batch_once_it_holds_that_many_bytes() {
    let (reads, completes) =
        reads_and_batches(reads_of_64(ChannelOption::MaxBytesPerRead(256)), 1280);
    assert_eq!(reads, 20, "64-byte reads");
    assert_eq!(completes, 5, "four reads (256 bytes) per batch");
}

#[test]
fn a_short_read_ends_the_read_batch_without_a_wasted_system_call() {
    let net = Net::new();
    let (_server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let mut s = TcpStream::connect(addr).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    let (data, _) = sink(0);
    for i in 1..=20 {
        s.write_all(&[7u8; 64]).unwrap();
        net.run_until("read", || data.borrow().len() == i * 64);
    }
    // 64 B messages (the receive-size guess shrinks to its 64 B minimum): each readiness
    // event reads once, not once more to see WouldBlock.
    let reads = SocketChannel::read_calls(&ch).unwrap();
    assert!(reads <= 22, "{reads} read calls for 20 messages");
}

#[test]
fn a_read_of_the_largest_size_still_proves_the_socket_drained() {
    let net = Net::new();
    let (_server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let mut s = TcpStream::connect(addr).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    let (data, _) = sink(0);
    // A peer that keeps exactly the largest read (64 KiB) in flight: each burst is in the
    // socket whole before the loop looks, and one read takes it all. Asking for exactly 64 KiB
    // could not tell that read from one with more waiting (a second read, WouldBlock).
    for i in 1..=10 {
        s.write_all(&[9u8; 65536]).unwrap();
        std::thread::sleep(Duration::from_millis(10));
        net.run_until("read", || data.borrow().len() == i * 65536);
    }
    let reads = SocketChannel::read_calls(&ch).unwrap();
    assert!(reads <= 12, "{reads} read calls for 10 bursts of 64 KiB");
}

#[test]
fn a_fin_that_comes_with_the_data_is_still_seen_after_a_short_read() {
    let net = Net::new();
    let (_server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let mut s = TcpStream::connect(addr).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    // Data and FIN arrive before the loop looks: one event, a short read, then EOF.
    s.write_all(b"last words").unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    net.run_until("closed", || !ch.is_open());
    assert_eq!(&*sink(0).0.borrow(), b"last words");
}
