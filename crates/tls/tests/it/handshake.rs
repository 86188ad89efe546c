//! Handshakes between netloop TLS servers and clients over loopback sockets: versions, ALPN,
//! SNI, certificate verification failures with their codes, mTLS, close_notify. Resumption is
//! in `sessions.rs`; what an established session gives out in `session_data.rs`.

use crate::common;
use crate::net;

use crate::pair;

use common::pki::Ca;
use net::Net;
use netloop_tls::{ClientAuth, SslContext, SslOptions, TlsVersion};
use netloop_transport::*;
use pair::{
    clear_server_logs, client_failure, client_opts, server_log, server_logs_started, server_opts,
    tls_client, tls_server,
};

#[test]
fn a_tls13_handshake_completes_and_plaintext_echoes_through_both_handlers() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let mut so = server_opts(&ca, &["localhost"]);
    so.alpn = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let (_server, addr) = tls_server(&net, SslContext::server(&so).unwrap());
    let mut co = client_opts(&ca);
    co.alpn = vec![b"http/1.1".to_vec()];
    let (client, log) = tls_client(&net, SslContext::client(&co).unwrap(), "localhost", addr);
    assert_eq!(log.borrow().handshake(), Some("ok"));
    let payload = net::pattern(100_000, 7);
    client.write_and_flush(Bytes::from(payload.clone()));
    let l = log.clone();
    net.run_until("echo", || l.borrow().data.len() >= payload.len());
    assert_eq!(log.borrow().data, payload);
    let s = log.borrow().session.clone().unwrap();
    assert_eq!(s.protocol, "TLSv1.3");
    assert_eq!(s.alpn_protocol.as_deref(), Some("http/1.1"));
    assert_eq!(s.server_name.as_deref(), Some("localhost"));
    assert!(s.authorized, "{:?}", s.authorization_error);
    assert!(s.cipher.starts_with("TLS_"), "{}", s.cipher);
    assert_eq!(s.peer_certificates.len(), 1);
    let srv = server_log(0);
    let ss = srv.borrow().session.clone().unwrap();
    assert_eq!(
        ss.server_name.as_deref(),
        Some("localhost"),
        "SNI seen by the server"
    );
    assert!(!ss.authorized, "no client certificate was asked for");
}

#[test]
fn max_version_tls12_negotiates_tls12() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let mut so = server_opts(&ca, &["localhost"]);
    so.max_version = TlsVersion::Tls12;
    let (_server, addr) = tls_server(&net, SslContext::server(&so).unwrap());
    let (_c, log) = tls_client(
        &net,
        SslContext::client(&client_opts(&ca)).unwrap(),
        "localhost",
        addr,
    );
    assert_eq!(log.borrow().handshake(), Some("ok"));
    assert_eq!(log.borrow().session.as_ref().unwrap().protocol, "TLSv1.2");
}

#[test]
fn a_version_range_without_overlap_fails_both_sides_with_a_code() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let mut so = server_opts(&ca, &["localhost"]);
    so.max_version = TlsVersion::Tls12;
    let (_server, addr) = tls_server(&net, SslContext::server(&so).unwrap());
    let mut co = client_opts(&ca);
    co.min_version = TlsVersion::Tls13;
    let (_c, log) = tls_client(&net, SslContext::client(&co).unwrap(), "localhost", addr);
    let l = log.clone();
    net.run_until("closed", || l.borrow().has("inactive"));
    let hs = log.borrow().handshake().unwrap().to_string();
    assert_ne!(hs, "ok");
    assert!(log
        .borrow()
        .events
        .iter()
        .any(|e| e.starts_with("exception ")));
}

#[test]
fn sni_picks_the_certificate_by_host_name_and_falls_back_to_the_default() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let mut so = server_opts(&ca, &["default.test"]);
    so.sni = vec![
        ("a.test".into(), ca.leaf(&["a.test"])),
        ("*.b.test".into(), ca.leaf(&["*.b.test"])),
    ];
    let (_server, addr) = tls_server(&net, SslContext::server(&so).unwrap());
    let cctx = SslContext::client(&client_opts(&ca)).unwrap();
    for name in ["a.test", "x.b.test", "default.test"] {
        let (_c, log) = tls_client(&net, cctx.clone(), name, addr);
        assert_eq!(log.borrow().handshake(), Some("ok"), "{name}");
    }
    // A name the server has no certificate for gets the default one, which does not match.
    let (_c, log) = tls_client(&net, cctx, "other.test", addr);
    assert_eq!(
        log.borrow().handshake(),
        Some("ERR_TLS_CERT_ALTNAME_INVALID")
    );
}

#[test]
fn an_unknown_issuer_an_expired_certificate_and_a_wrong_host_each_have_their_code() {
    let ca = Ca::new("test CA");
    let other = Ca::new("other CA");
    let (hs, srv) = client_failure(
        server_opts(&other, &["localhost"]),
        client_opts(&ca),
        "localhost",
    );
    assert_eq!(hs, "UNABLE_TO_GET_ISSUER_CERT_LOCALLY");
    assert!(
        srv.iter().any(|e| e == "handshake ERR_TLS_ALERT_RECEIVED"),
        "{srv:?}"
    );

    let expired = SslOptions {
        identity: Some(ca.expired(&["localhost"])),
        ..Default::default()
    };
    let (hs, _) = client_failure(expired, client_opts(&ca), "localhost");
    assert_eq!(hs, "CERT_HAS_EXPIRED");

    let (hs, _) = client_failure(
        server_opts(&ca, &["localhost"]),
        client_opts(&ca),
        "example.org",
    );
    assert_eq!(hs, "ERR_TLS_CERT_ALTNAME_INVALID");
}

#[test]
fn reject_unauthorized_false_completes_and_reports_why_it_is_not_authorized() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let other = Ca::new("other CA");
    let (_server, addr) = tls_server(
        &net,
        SslContext::server(&server_opts(&other, &["localhost"])).unwrap(),
    );
    let mut co = client_opts(&ca);
    co.reject_unauthorized = false;
    let (_c, log) = tls_client(&net, SslContext::client(&co).unwrap(), "localhost", addr);
    assert_eq!(log.borrow().handshake(), Some("ok"));
    let s = log.borrow().session.clone().unwrap();
    assert!(!s.authorized);
    assert_eq!(
        s.authorization_error.as_ref().map(|e| e.code()),
        Some("UNABLE_TO_GET_ISSUER_CERT_LOCALLY")
    );
}

#[test]
fn mtls_required_accepts_a_trusted_client_and_refuses_one_without_a_certificate() {
    let ca = Ca::new("test CA");
    let mut so = server_opts(&ca, &["localhost"]);
    so.client_auth = ClientAuth::Require;
    so.ca = Some(ca.pem.clone().into_bytes());

    // Accepted, and the server sees the client's certificate as authorized.
    let net = Net::new();
    let (_server, addr) = tls_server(&net, SslContext::server(&so).unwrap());
    let mut co = client_opts(&ca);
    co.identity = Some(ca.client("alice"));
    let (client, log) = tls_client(&net, SslContext::client(&co).unwrap(), "localhost", addr);
    assert_eq!(log.borrow().handshake(), Some("ok"));
    client.write_and_flush(Bytes::from_static(b"ping"));
    let l = log.clone();
    net.run_until("echo", || l.borrow().data == b"ping");
    let srv = server_log(0);
    let ss = srv.borrow().session.clone().unwrap();
    assert!(ss.authorized, "{:?}", ss.authorization_error);
    assert_eq!(ss.peer_certificates.len(), 1);
    drop(net);

    // Refused without a certificate: the server reports ERR_TLS_CERT_REQUIRED.
    clear_server_logs();
    let (_hs, srv) = client_failure(so.clone(), client_opts(&ca), "localhost");
    assert!(
        srv.iter().any(|e| e == "handshake ERR_TLS_CERT_REQUIRED"),
        "{srv:?}"
    );

    // Refused with a certificate of another CA.
    clear_server_logs();
    let mut co = client_opts(&ca);
    co.identity = Some(Ca::new("rogue CA").client("mallory"));
    let (_hs, srv) = client_failure(so, co, "localhost");
    assert!(
        srv.iter()
            .any(|e| e == "handshake UNABLE_TO_GET_ISSUER_CERT_LOCALLY"),
        "{srv:?}"
    );
}

#[test]
fn invalid_options_are_config_errors() {
    let ca = Ca::new("test CA");
    let none = SslContext::server(&SslOptions::default()).unwrap_err();
    assert_eq!(none.code(), "ERR_TLS_INVALID_CONTEXT");
    let mut bad = server_opts(&ca, &["localhost"]);
    bad.identity.as_mut().unwrap().key = ca.leaf(&["x"]).key; // another key
    let e = SslContext::server(&bad).unwrap_err();
    assert!(e.to_string().contains("does not match"), "{e}");
    let mut range = server_opts(&ca, &["localhost"]);
    range.min_version = TlsVersion::Tls13;
    range.max_version = TlsVersion::Tls12;
    assert!(SslContext::server(&range).is_err());
    assert!(TlsVersion::parse("TLSv1.1").is_err());
    let garbage = SslOptions {
        ca: Some(b"not pem".to_vec()),
        ..Default::default()
    };
    assert_eq!(
        SslContext::client(&garbage).unwrap_err().code(),
        "ERR_TLS_INVALID_CONTEXT"
    );
}

#[test]
fn close_sends_close_notify_and_the_peer_reports_it_then_closes() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let (_server, addr) = tls_server(
        &net,
        SslContext::server(&server_opts(&ca, &["localhost"])).unwrap(),
    );
    let (client, log) = tls_client(
        &net,
        SslContext::client(&client_opts(&ca)).unwrap(),
        "localhost",
        addr,
    );
    assert_eq!(log.borrow().handshake(), Some("ok"));
    let closed = client.close();
    net.run_until("client closed", || closed.is_done());
    let srv = server_log(0);
    net.run_until("server saw close_notify and closed", || {
        srv.borrow().has("inactive")
    });
    let events = srv.borrow().events.clone();
    let notify = events
        .iter()
        .position(|e| e == "close_notify")
        .expect("close_notify event");
    let inactive = events.iter().position(|e| e == "inactive").unwrap();
    assert!(notify < inactive, "{events:?}");
    assert!(
        !events.iter().any(|e| e.starts_with("exception")),
        "a clean close is no error: {events:?}"
    );
}

#[test]
fn a_peer_close_notify_is_answered_with_ours_before_the_close() {
    // A rustls client over a blocking socket sends close_notify and must get one back.
    let net = Net::new();
    let ca = Ca::new("test CA");
    let (_server, addr) = tls_server(
        &net,
        SslContext::server(&server_opts(&ca, &["localhost"])).unwrap(),
    );
    let mut roots = netloop_tls::rustls::RootCertStore::empty();
    use netloop_tls::rustls::pki_types::pem::PemObject;
    for c in netloop_tls::rustls::pki_types::CertificateDer::pem_slice_iter(ca.pem.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let t = std::thread::spawn(move || {
        use netloop_tls::rustls;
        use std::io::{Read, Write};
        let cfg = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        let conn = rustls::ClientConnection::new(
            std::sync::Arc::new(cfg),
            "localhost".try_into().unwrap(),
        )
        .unwrap();
        let sock = std::net::TcpStream::connect(addr).unwrap();
        sock.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        let mut tls = rustls::StreamOwned::new(conn, sock);
        tls.write_all(b"ping").unwrap();
        let mut buf = [0u8; 4];
        tls.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"ping");
        tls.conn.send_close_notify();
        tls.flush().unwrap();
        let mut rest = Vec::new();
        // A clean end (Ok(0) after the peer's close_notify), not UnexpectedEof.
        tls.read_to_end(&mut rest).map(|_| rest.len())
    });
    net.run_until("server closed", || {
        server_logs_started() > 0 && server_log(0).borrow().has("inactive")
    });
    let r = t.join().unwrap();
    assert!(matches!(r, Ok(0)), "the client saw {r:?}");
}
