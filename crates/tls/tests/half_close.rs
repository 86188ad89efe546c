//! Half-closing through TLS: `shutdown_output` sends close_notify before the FIN, and the
//! channel goes on reading what the peer still sends.

mod common;
#[path = "../../transport/tests/common/net.rs"]
mod net;

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
