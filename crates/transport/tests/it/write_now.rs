//! `write_and_flush_now`: a write and flush that goes straight to the socket when nothing
//! stands between (no handler before takes writes or flushes, nothing queued), and otherwise
//! hands back what did not go, for the usual write.

use crate::common;

use common::net::*;
use netloop_transport::*;
use std::io::Read;
use std::net::TcpStream;

/// Writes what did not go straight to the socket the usual way (as the Node binding does).
fn write_rest(pipeline: &ChannelPipeline, data: &[u8], done: WrittenNow) -> usize {
    match done {
        WrittenNow::All => data.len(),
        WrittenNow::Part(n, p) => {
            pipeline.write_with(Bytes::copy_from_slice(&data[n..]), p);
            pipeline.flush();
            n
        }
    }
}

/// Upper-cases what it writes (a handler that takes writes).
struct Upper;
impl ChannelHandler for Upper {
    fn write(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        let b = msg
            .into_bytes()
            .map_err(|_| TransportError::UnsupportedMessage("test"))?;
        ctx.write_with(Bytes::from(b.to_ascii_uppercase()), promise);
        Ok(())
    }
}

/// Sees inbound events only: writes and flushes pass it by (write_and_flush.rs uses it too).
pub(crate) struct InboundOnly;
impl ChannelHandler for InboundOnly {
    fn takes_write(&self) -> bool {
        false
    }
    fn takes_flush(&self) -> bool {
        false
    }
}

#[test]
fn bytes_go_to_the_socket_at_once_and_the_promise_succeeds_before_the_loop_runs() {
    let net = Net::new();
    let (_server, client) = net.client_of_sink_server();
    client.pipeline().add_last("inbound", InboundOnly).unwrap();
    let p = ChannelPromise::new();
    let f = p.future().unwrap();
    let done = client.pipeline().write_and_flush_now(b"hello", p);
    assert!(matches!(done, WrittenNow::All), "{done:?}");
    assert!(f.is_success(), "the promise completes with the write");
    assert_eq!(client.pending_outbound_bytes(), 0);
    net.run_until("bytes arrive", || {
        accepted_count() == 1 && sink(0).0.borrow().as_slice() == b"hello"
    });
}

#[test]
fn a_queued_write_keeps_its_place_in_front() {
    let net = Net::new();
    let (_server, client) = net.client_of_sink_server();
    client.write(Bytes::from_static(b"first,"));
    let done = client
        .pipeline()
        .write_and_flush_now(b"second", ChannelPromise::void());
    assert!(matches!(done, WrittenNow::Part(0, _)), "{done:?}");
    write_rest(&client.pipeline(), b"second", done);
    net.run_until("both arrive", || {
        accepted_count() == 1 && sink(0).0.borrow().len() == 12
    });
    assert_eq!(sink(0).0.borrow().as_slice(), b"first,second");
}

#[test]
fn a_handler_that_takes_writes_sees_the_write() {
    let net = Net::new();
    let (_server, client) = net.client_of_sink_server();
    client.pipeline().add_last("upper", Upper).unwrap();
    let done = client
        .pipeline()
        .write_and_flush_now(b"quiet", ChannelPromise::void());
    assert!(matches!(done, WrittenNow::Part(0, _)), "{done:?}");
    write_rest(&client.pipeline(), b"quiet", done);
    net.run_until("written", || {
        accepted_count() == 1 && sink(0).0.borrow().len() == 5
    });
    assert_eq!(sink(0).0.borrow().as_slice(), b"QUIET");
    // From a context before the handler, nothing stands between.
    let ctx = client.pipeline().context("upper").unwrap();
    let done = ctx.write_and_flush_now(b"loud", ChannelPromise::void());
    assert!(matches!(done, WrittenNow::All), "{done:?}");
    net.run_until("written", || sink(0).0.borrow().len() == 9);
    assert_eq!(sink(0).0.borrow().as_slice(), b"QUIETloud");
}

#[test]
fn what_a_full_socket_does_not_take_is_handed_back_and_arrives_in_order() {
    let net = Net::new();
    let child = ChannelOptions::default()
        .with(ChannelOption::SoSndbuf(16 * 1024))
        .unwrap();
    let (_server, addr) = net.server(ChannelOptions::default(), child, sink_child);
    let peer = TcpStream::connect(addr).unwrap();
    socket2::SockRef::from(&peer)
        .set_recv_buffer_size(16 * 1024)
        .unwrap();
    net.run_until("active", || {
        accepted_count() == 1 && has(&sink(0).1, "active")
    });
    let ch = accepted(0).unwrap();
    let data = pattern(4 * 1024 * 1024, 7);
    let p = ChannelPromise::new();
    let f = p.future().unwrap();
    // From the sink's context (the sink, a handler like any other, takes writes).
    let ctx = ch.pipeline().context("sink").unwrap();
    let done = ctx.write_and_flush_now(&data, p);
    let WrittenNow::Part(n, p) = done else {
        panic!("a 4 MiB write cannot fit a 16 KiB socket: {done:?}");
    };
    assert!(n > 0 && n < data.len(), "wrote {n}");
    ctx.write_and_flush_with(Bytes::copy_from_slice(&data[n..]), p);
    assert!(!f.is_done(), "the promise waits for the rest");
    assert!(ch.pending_outbound_bytes() > 0);
    let expected = data.clone();
    let reader = std::thread::spawn(move || {
        let mut got = vec![0u8; expected.len()];
        let mut peer = peer;
        peer.read_exact(&mut got).unwrap();
        got == expected
    });
    net.run_until("the rest drained", || f.is_done() && reader.is_finished());
    assert!(f.is_success());
    assert!(reader.join().unwrap(), "bytes differ or came out of order");
}

#[test]
fn a_closed_channel_hands_the_write_back_and_the_usual_write_fails() {
    let net = Net::new();
    let (_server, client) = net.client_of_sink_server();
    let closed = client.close();
    net.run_until("closed", || closed.is_done());
    let p = ChannelPromise::new();
    let f = p.future().unwrap();
    let done = client.pipeline().write_and_flush_now(b"late", p);
    assert!(matches!(done, WrittenNow::Part(0, _)), "{done:?}");
    write_rest(&client.pipeline(), b"late", done);
    net.run_until("failed", || f.is_done());
    assert!(!f.is_success());
}

#[test]
fn a_cancelled_write_never_happens() {
    let net = Net::new();
    let (_server, client) = net.client_of_sink_server();
    let p = ChannelPromise::new();
    let f = p.future().unwrap();
    assert!(p.cancel(false));
    let done = client.pipeline().write_and_flush_now(b"gone", p);
    write_rest(&client.pipeline(), b"gone", done);
    client.write_and_flush(Bytes::from_static(b"kept"));
    net.run_until("kept arrives", || {
        accepted_count() == 1 && sink(0).0.borrow().len() >= 4
    });
    net.run_for(std::time::Duration::from_millis(50));
    assert_eq!(sink(0).0.borrow().as_slice(), b"kept");
    assert!(f.is_done() && !f.is_success());
}
