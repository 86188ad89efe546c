//! A netloop TLS server against misbehaving peers, and flow control around the handshake:
//! garbage, a stalled handshake, writes held until the handshake completes, autoRead off.

use crate::common;
use crate::net;

use std::cell::RefCell;
use std::io::{Read, Write};
use std::rc::Rc;
use std::time::Duration;

use common::pki::Ca;
use common::probe::{tls_and_probe, Log, Probe, Shared};
use net::Net;
use netloop_tls::{SslContext, SslOptions};
use netloop_transport::*;

thread_local! {
    static LOGS: RefCell<Vec<Shared>> = const { RefCell::new(Vec::new()) };
    static CHANNELS: RefCell<Vec<Channel>> = const { RefCell::new(Vec::new()) };
}

fn log(i: usize) -> Shared {
    LOGS.with(|l| l.borrow()[i].clone())
}

fn server(net: &Net, ctx: SslContext, child: ChannelOptions) -> std::net::SocketAddr {
    let (server, addr) = net.server(ChannelOptions::default(), child, move |ch| {
        let log: Shared = Rc::new(RefCell::new(Log::default()));
        LOGS.with(|l| l.borrow_mut().push(log.clone()));
        CHANNELS.with(|c| c.borrow_mut().push(ch.clone()));
        ch.pipeline().add_last(
            "tls",
            ctx.new_handler(None).map_err(|e| e.into_transport())?,
        )?;
        ch.pipeline().add_last("probe", Probe { log, echo: true })?;
        Ok(())
    });
    std::mem::forget(server);
    addr
}

fn server_ctx(ca: &Ca, timeout: Duration) -> SslContext {
    SslContext::server(&SslOptions {
        identity: Some(ca.leaf(&["localhost"])),
        handshake_timeout: timeout,
        ..Default::default()
    })
    .unwrap()
}

/// A TLS client of `addr` verifying `localhost`, with a probe behind its SslHandler.
fn tls_client(
    net: &Net,
    cctx: &SslContext,
    opts: ChannelOptions,
    addr: std::net::SocketAddr,
) -> (Channel, ChannelFuture, Shared) {
    let (ch, connected) = net.client(opts, net::no_child, addr);
    let clog = tls_and_probe(&ch, cctx.new_handler(Some("localhost")).unwrap());
    (ch, connected, clog)
}

/// Reads until EOF or error from a blocking socket (with a timeout): what the server sent.
fn read_to_close(s: &mut std::net::TcpStream) -> Vec<u8> {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
}

/// A raw TCP peer sends `bytes` to a server with `timeout`, then reads until the server closes:
/// returns what the server sent and the events its channel saw.
fn raw_peer(bytes: &'static [u8], timeout: Duration) -> (Vec<u8>, Vec<String>) {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let addr = server(&net, server_ctx(&ca, timeout), ChannelOptions::default());
    let t = std::thread::spawn(move || {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(bytes).unwrap();
        read_to_close(&mut s)
    });
    net.run_until("server channel closed", || {
        LOGS.with(|l| l.borrow().len()) == 1 && log(0).borrow().has("inactive")
    });
    let reply = t.join().unwrap();
    let events = log(0).borrow().events.clone();
    (reply, events)
}

#[test]
fn garbage_instead_of_a_client_hello_is_a_protocol_error_that_closes_only_that_channel() {
    let (reply, events) = raw_peer(
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        Duration::from_secs(10),
    );
    assert!(
        events.contains(&"exception ERR_TLS_PROTOCOL".to_string()),
        "{events:?}"
    );
    assert!(
        events.contains(&"handshake ERR_TLS_PROTOCOL".to_string()),
        "{events:?}"
    );
    // The server answered with a fatal alert record (content type 21) before closing.
    assert_eq!(reply.first(), Some(&21u8), "{reply:?}");
}

#[test]
fn half_a_client_hello_then_silence_is_closed_by_the_handshake_timeout() {
    // The first bytes of a ClientHello record header, then nothing.
    let hello = &[0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00];
    let (_, events) = raw_peer(hello, Duration::from_millis(200));
    assert!(
        events.contains(&"exception ERR_TLS_HANDSHAKE_TIMEOUT".to_string()),
        "{events:?}"
    );
}

#[test]
fn writes_before_the_handshake_count_toward_the_water_marks_and_arrive_in_order_after_it() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let addr = server(
        &net,
        server_ctx(&ca, Duration::from_secs(10)),
        ChannelOptions::default(),
    );
    let cctx = SslContext::client(&SslOptions {
        ca: Some(ca.pem.clone().into_bytes()),
        ..Default::default()
    })
    .unwrap();
    let opts = ChannelOptions {
        write_buffer_water_mark: WaterMark::new(8 * 1024, 16 * 1024).unwrap(),
        ..Default::default()
    };
    let (ch, connected, clog) = tls_client(&net, &cctx, opts, addr);
    // Before the handshake: 8 writes of 4 KiB pass the 16 KiB high mark.
    let payload = net::pattern(32 * 1024, 3);
    let mut writes_while_writable = 0;
    for chunk in payload.chunks(4096) {
        if ch.is_writable() {
            writes_while_writable += 1;
        }
        ch.write(Bytes::copy_from_slice(chunk));
    }
    ch.flush();
    assert!(
        !ch.is_writable(),
        "held plaintext counts toward the high water mark"
    );
    assert_eq!(
        writes_while_writable, 5,
        "unwritable once 16 KiB + 1 are held"
    );
    assert!(clog.borrow().has("writable=false"));
    net.run_until("connect", || connected.is_done());
    let c = clog.clone();
    net.run_until("echo of everything", || {
        c.borrow().data.len() >= payload.len()
    });
    assert_eq!(clog.borrow().data, payload, "in order, intact");
    net.run_until("writable again", || ch.is_writable());
    assert!(clog.borrow().has("writable=true"));
}

#[test]
fn with_auto_read_off_the_handshake_completes_and_data_is_read_only_on_request() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let child = ChannelOptions {
        auto_read: false,
        ..Default::default()
    };
    let addr = server(&net, server_ctx(&ca, Duration::from_secs(10)), child);
    let cctx = SslContext::client(&SslOptions {
        ca: Some(ca.pem.clone().into_bytes()),
        ..Default::default()
    })
    .unwrap();
    let (ch, connected, clog) = tls_client(&net, &cctx, ChannelOptions::default(), addr);
    net.run_until("connect", || connected.is_done());
    let c = clog.clone();
    net.run_until("client handshake", || c.borrow().handshake().is_some());
    assert_eq!(clog.borrow().handshake(), Some("ok"));
    ch.write_and_flush(Bytes::from_static(b"hello"));
    net.run_for(Duration::from_millis(200));
    assert!(
        log(0).borrow().data.is_empty(),
        "nothing read while autoRead is off"
    );
    CHANNELS.with(|c| c.borrow()[0].read());
    net.run_until("read on request", || log(0).borrow().data == b"hello");
}
