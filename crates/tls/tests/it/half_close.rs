//! Half-closing through TLS: `shutdown_output` sends close_notify before the FIN, and the
//! channel goes on reading what the peer still sends.

use crate::common;
use crate::net;

use std::io::{Read, Write};
use std::sync::Arc;

use common::pki::Ca;
use common::probe::tls_and_probe;
use net::Net;
use netloop_tls::rustls;
use netloop_tls::rustls::pki_types::pem::PemObject;
use netloop_tls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use netloop_tls::{SslContext, SslOptions};
use netloop_transport::*;

/// A blocking rustls server on its own thread: reads until the client's clean end, then
/// answers `reply` and ends cleanly too; returns what it read, or how its read ended badly.
fn rustls_server(
    ca: &Ca,
    reply: &'static [u8],
) -> (
    std::net::SocketAddr,
    std::thread::JoinHandle<Result<Vec<u8>, String>>,
) {
    let id = ca.leaf(&["localhost"]);
    let chain = CertificateDer::pem_slice_iter(&id.chain)
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(&id.key).unwrap();
    let cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        sock.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        let conn = rustls::ServerConnection::new(Arc::new(cfg)).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, sock);
        let mut got = Vec::new();
        // Ok only after the client's close_notify: a bare FIN is UnexpectedEof.
        tls.read_to_end(&mut got).map_err(|e| format!("{e:?}"))?;
        tls.write_all(reply).unwrap();
        tls.conn.send_close_notify();
        tls.flush().unwrap();
        Ok(got)
    });
    (addr, t)
}

#[test]
fn shutdown_output_sends_close_notify_then_fin_and_reading_goes_on() {
    let ca = Ca::new("test CA");
    let (addr, server) = rustls_server(&ca, b"pong after your end");
    let net = Net::new();
    let ctx = SslContext::client(&SslOptions {
        ca: Some(ca.pem.clone().into_bytes()),
        ..Default::default()
    })
    .unwrap();
    let (ch, connected) = net.client(
        ChannelOptions::default()
            .with(ChannelOption::AllowHalfClosure(true))
            .unwrap(),
        net::no_child,
        addr,
    );
    let log = tls_and_probe(&ch, ctx.new_handler(Some("localhost")).unwrap());
    net.run_until("connect", || connected.is_done());
    let l = log.clone();
    net.run_until("handshake", || l.borrow().handshake().is_some());
    assert_eq!(log.borrow().handshake(), Some("ok"));

    ch.write_and_flush(Bytes::from_static(b"ping"));
    let shut = ch.shutdown_output();
    // Writes after the half-close fail as the socket's own do.
    let late_promise = ChannelPromise::new();
    let late = late_promise.future().unwrap();
    ch.write_with(Bytes::from_static(b"late"), late_promise);
    ch.flush();
    assert_eq!(
        late.result()
            .and_then(|r| r.err())
            .map(|e| e.code().to_string())
            .as_deref(),
        Some("ERR_OUTPUT_SHUTDOWN")
    );
    net.run_until("half-closed", || shut.is_done());
    assert!(shut.is_success(), "{:?}", shut.result());
    let l = log.clone();
    net.run_until("reply read", || l.borrow().data == b"pong after your end");
    let got = server.join().unwrap();
    assert_eq!(
        got.as_deref(),
        Ok(&b"ping"[..]),
        "the server saw a clean end"
    );
    let l = log.clone();
    net.run_until("close_notify", || l.borrow().has("close_notify"));
}

#[test]
fn shutdown_output_waits_for_the_writes_the_handler_holds() {
    let ca = Ca::new("test CA");
    let (addr, server) = rustls_server(&ca, b"ok");
    let net = Net::new();
    let ctx = SslContext::client(&SslOptions {
        ca: Some(ca.pem.clone().into_bytes()),
        ..Default::default()
    })
    .unwrap();
    let (ch, connected) = net.client(ChannelOptions::default(), net::no_child, addr);
    let log = tls_and_probe(&ch, ctx.new_handler(Some("localhost")).unwrap());
    // Written and half-closed before the handshake completed: the handler holds the bytes,
    // sends them once it can, and only then close_notify and the FIN.
    let payload = net::pattern(300_000, 3);
    ch.write(Bytes::from(payload.clone()));
    net.run_until("connect", || connected.is_done());
    let l = log.clone();
    net.run_until("handshake", || l.borrow().handshake().is_some());
    let shut = ch.shutdown_output();
    net.run_until("half-closed", || shut.is_done());
    assert!(shut.is_success(), "{:?}", shut.result());
    let got = server.join().unwrap();
    assert_eq!(got.map(|g| g == payload), Ok(true));
}

/// A netloop TLS echo server (a probe that writes in `channel_read` and flushes at the batch's
/// end) with `options`; a rustls client on a thread writes `ping` and its close_notify in one
/// flight, reads the 4-byte answer, then reads on for at most 300 ms. Returns the answer and
/// how the rest ended: `Ok(n)` a clean end after `n` more bytes, `Err` a timeout or a bad end.
fn ping_then_close_notify(options: ChannelOptions) -> (Vec<u8>, Result<usize, String>) {
    let ca = Ca::new("test CA");
    let net = Net::new();
    let ctx = SslContext::server(&SslOptions {
        identity: Some(ca.leaf(&["localhost"])),
        ..Default::default()
    })
    .unwrap();
    let (_server, addr) = net.server(ChannelOptions::default(), options, move |ch| {
        let log = tls_and_probe(ch, ctx.new_handler(None).unwrap());
        // The probe only records; make it echo.
        ch.pipeline().remove("probe").unwrap();
        ch.pipeline()
            .add_last("probe", common::probe::Probe { log, echo: true })?;
        Ok(())
    });
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(ca.pem.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let t = std::thread::spawn(move || {
        let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        let conn =
            rustls::ClientConnection::new(Arc::new(cfg), "localhost".try_into().unwrap()).unwrap();
        let sock = std::net::TcpStream::connect(addr).unwrap();
        sock.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        let mut tls = rustls::StreamOwned::new(conn, sock);
        while tls.conn.is_handshaking() {
            tls.conn.complete_io(&mut tls.sock).unwrap();
        }
        tls.conn.writer().write_all(b"ping").unwrap();
        tls.conn.send_close_notify();
        tls.flush().unwrap();
        let mut answer = [0u8; 4];
        tls.read_exact(&mut answer).unwrap();
        tls.sock
            .set_read_timeout(Some(std::time::Duration::from_millis(300)))
            .unwrap();
        let mut rest = Vec::new();
        let end = tls
            .read_to_end(&mut rest)
            .map_err(|e| format!("{:?}", e.kind()));
        (answer.to_vec(), end)
    });
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let d = done.clone();
    let waiter = std::thread::spawn(move || {
        let r = t.join().unwrap();
        d.store(true, std::sync::atomic::Ordering::SeqCst);
        r
    });
    net.run_until("client done", || {
        done.load(std::sync::atomic::Ordering::SeqCst)
    });
    waiter.join().unwrap()
}

#[test]
fn a_peer_that_writes_then_sends_close_notify_gets_its_answer_before_ours() {
    // The close_notify ends the peer's direction as a FIN would: the channel closes through the
    // pipeline after the reads before it, so the echo goes out, then our close_notify.
    let (answer, end) = ping_then_close_notify(ChannelOptions::default());
    assert_eq!(answer, b"ping");
    assert_eq!(end, Ok(0), "a clean end: our close_notify, then the FIN");
}

#[test]
fn with_half_closure_the_peers_close_notify_is_an_input_shutdown_and_writing_goes_on() {
    // The probe echoes but never half-closes: the client gets the echo and no end.
    let (answer, end) = ping_then_close_notify(
        ChannelOptions::default()
            .with(ChannelOption::AllowHalfClosure(true))
            .unwrap(),
    );
    assert_eq!(answer, b"ping");
    let e = end.expect_err("no end: the server's side is still open");
    assert!(e == "WouldBlock" || e == "TimedOut", "{e}");
}
