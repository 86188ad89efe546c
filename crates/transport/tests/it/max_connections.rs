//! `max_connections` on a server channel: beyond it an accepted socket is closed at once and
//! counted as refused (on the channel and its loop); a closed connection frees its place.

use crate::common;

use std::io::Read;
use std::net::TcpStream;
use std::time::Duration;

use common::net::*;
use netloop_transport::*;

/// True once the peer closed `s` (EOF, or a reset).
fn closed_by_server(s: &mut TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 16];
    matches!(s.read(&mut buf), Ok(0) | Err(_))
}

#[test]
fn connections_beyond_max_connections_are_closed_at_once_and_counted() {
    let net = Net::new();
    let server_options = ChannelOptions::default()
        .with(ChannelOption::MaxConnections(2))
        .unwrap();
    let (server, addr) = net.server(server_options, ChannelOptions::default(), sink_child);
    let first = TcpStream::connect(addr).unwrap();
    let _second = TcpStream::connect(addr).unwrap();
    net.run_until("two accepted", || accepted_count() == 2);
    assert_eq!(ServerSocketChannel::open_connections(&server), Some(2));

    let mut third = TcpStream::connect(addr).unwrap();
    net.run_until("the third refused", || {
        ServerSocketChannel::connections_over_limit(&server) == Some(1)
    });
    assert!(
        closed_by_server(&mut third),
        "the refused client sees its connection closed"
    );
    assert_eq!(accepted_count(), 2, "no channel was made for it");
    assert_eq!(net.handle().refused_connections(), 1, "counted on the loop");

    // A connection that closes frees its place.
    drop(first);
    net.run_until("the first closed", || {
        ServerSocketChannel::open_connections(&server) == Some(1)
    });
    let _fourth = TcpStream::connect(addr).unwrap();
    net.run_until("the fourth accepted", || accepted_count() == 3);
    assert_eq!(
        ServerSocketChannel::connections_over_limit(&server),
        Some(1)
    );
    assert_eq!(ServerSocketChannel::open_connections(&server), Some(2));
}

#[test]
fn without_max_connections_every_connection_is_accepted() {
    let net = Net::new();
    let (server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let clients: Vec<TcpStream> = (0..5).map(|_| TcpStream::connect(addr).unwrap()).collect();
    net.run_until("all accepted", || accepted_count() == 5);
    assert_eq!(ServerSocketChannel::open_connections(&server), Some(5));
    assert_eq!(
        ServerSocketChannel::connections_over_limit(&server),
        Some(0)
    );
    assert_eq!(net.handle().refused_connections(), 0);
    drop(clients);
}
