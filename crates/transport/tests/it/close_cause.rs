//! The initial close cause (Netty's `initialCloseCause`): once an I/O error closed a channel,
//! every operation on it fails with `ERR_CHANNEL_CLOSED` whose cause is that error.

use crate::common;

use std::time::Duration;

use common::net::*;
use netloop_transport::*;

fn reset(peer: std::net::TcpStream) {
    socket2::SockRef::from(&peer)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
    drop(peer); // SO_LINGER 0: the close sends RST
}

fn assert_closed_by_reset(net: &Net, f: ChannelFuture, what: &str) {
    net.run_until(what, || f.is_done());
    let e = f.result().unwrap().unwrap_err();
    assert_eq!(e.code(), "ERR_CHANNEL_CLOSED", "{what}: {e}");
    assert_eq!(
        e.cause().map(|c| c.code().to_string()).as_deref(),
        Some("ECONNRESET"),
        "{what}: the cause is the reset that closed the channel"
    );
}

#[test]
fn operations_on_a_channel_closed_by_a_reset_fail_with_the_reset_as_their_cause() {
    let net = Net::new();
    let (_server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let peer = std::net::TcpStream::connect(addr).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    let unflushed = ch.write_future(Bytes::from_static(b"queued, never flushed"));
    reset(peer);
    net.run_until("closed by the reset", || !ch.is_open());
    assert_eq!(
        ch.close_cause().map(|c| c.code().to_string()).as_deref(),
        Some("ECONNRESET")
    );
    let (_, events) = sink(0);
    assert!(
        has(&events, "exception ECONNRESET"),
        "{:?}",
        events.borrow()
    );

    assert_closed_by_reset(&net, unflushed, "a write queued when the reset came");
    assert_closed_by_reset(
        &net,
        ch.write_future(Bytes::from_static(b"late")),
        "a write after the close",
    );
    let p = ChannelPromise::new();
    let f = p.future().unwrap();
    ch.write_with(Bytes::from_static(b"late, flushed"), p);
    ch.flush();
    assert_closed_by_reset(&net, f, "a flushed write after the close");
    assert_closed_by_reset(&net, ch.bind("127.0.0.1:0".parse().unwrap()), "bind");
    assert_closed_by_reset(&net, ch.connect(addr), "connect");
}

#[test]
fn a_channel_closed_by_the_user_fails_operations_without_a_cause() {
    let net = Net::new();
    let (_server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let _peer = std::net::TcpStream::connect(addr).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    ch.close();
    net.run_until("closed", || !ch.is_open());
    assert!(ch.close_cause().is_none());
    let f = ch.bind("127.0.0.1:0".parse().unwrap());
    net.run_until("bind", || f.is_done());
    let e = f.result().unwrap().unwrap_err();
    assert_eq!(e.code(), "ERR_CHANNEL_CLOSED");
    assert!(e.cause().is_none());
}

/// Flushed writes a peer stopped taking, then the peer's FIN and RST together (it shut its
/// output, then closed with our bytes unread): the read sees the FIN first and the channel
/// closes for it, but the socket broke meanwhile, and the writes fail with what broke it
/// (EPIPE or ECONNRESET, as the error or its cause), not a bare "channel closed".
#[test]
fn flushed_writes_left_when_the_peer_breaks_the_socket_fail_with_the_io_error() {
    let net = Net::new();
    let (_server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let peer = std::net::TcpStream::connect(addr).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    let mut flushed = Vec::new();
    for _ in 0..64 {
        let p = ChannelPromise::new();
        flushed.push(p.future().unwrap());
        ch.write_with(Bytes::from(vec![7u8; 1 << 20]), p);
    }
    ch.flush();
    net.run_until("the socket is full", || !ch.is_writable());
    peer.shutdown(std::net::Shutdown::Write).unwrap();
    reset(peer);
    net.run_until("closed", || !ch.is_open());
    let pending: Vec<_> = flushed
        .into_iter()
        .filter(|f| !matches!(f.result(), Some(Ok(()))))
        .collect();
    assert!(
        !pending.is_empty(),
        "some writes were still in the outbound buffer"
    );
    for f in pending {
        net.run_until("failed", || f.is_done());
        let e = f.result().unwrap().unwrap_err();
        let io = [
            e.code().to_string(),
            e.cause().map(|c| c.code().to_string()).unwrap_or_default(),
        ];
        assert!(
            io.iter().any(|c| c == "EPIPE" || c == "ECONNRESET"),
            "a write broken by the peer failed with {e} ({io:?})"
        );
    }
    let late = ch.write_future(Bytes::from_static(b"late"));
    net.run_until("late write", || late.is_done());
    assert_eq!(
        late.result().unwrap().unwrap_err().code(),
        "ERR_CHANNEL_CLOSED"
    );
}
