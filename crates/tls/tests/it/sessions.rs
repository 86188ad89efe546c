//! Session resumption between netloop TLS servers and clients over loopback: a reconnecting
//! client, servers sharing `ticketKeys`, and `sessionTimeout` ending resumption by ticket, from
//! the TLS 1.3 cache and by TLS 1.2 session id.

use crate::common;
use crate::net;
use crate::pair;

use common::pki::Ca;
use net::Net;
use netloop_tls::{SslContext, SslOptions, TlsVersion};
use netloop_transport::*;
use pair::{client_opts, server_opts, tls_client, tls_server};

#[test]
fn a_reconnecting_client_resumes_its_session() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let (_server, addr) = tls_server(
        &net,
        SslContext::server(&server_opts(&ca, &["localhost"])).unwrap(),
    );
    let cctx = SslContext::client(&client_opts(&ca)).unwrap();
    let (c1, log1) = tls_client(&net, cctx.clone(), "localhost", addr);
    assert!(!log1.borrow().session.as_ref().unwrap().resumed);
    // TLS 1.3 tickets arrive after the handshake: exchange data so the client has them.
    c1.write_and_flush(Bytes::from_static(b"x"));
    let l = log1.clone();
    net.run_until("echo", || !l.borrow().data.is_empty());
    let (_c2, log2) = tls_client(&net, cctx, "localhost", addr);
    assert_eq!(log2.borrow().handshake(), Some("ok"));
    assert!(
        log2.borrow().session.as_ref().unwrap().resumed,
        "second handshake resumed"
    );
}

/// Connects `cctx` to each address in turn (an echo after each handshake, so TLS 1.3 tickets
/// arrive); whether each handshake resumed.
fn resumptions(net: &Net, cctx: &SslContext, addrs: &[std::net::SocketAddr]) -> Vec<bool> {
    addrs
        .iter()
        .map(|&addr| {
            let (c, log) = tls_client(net, cctx.clone(), "localhost", addr);
            assert_eq!(log.borrow().handshake(), Some("ok"));
            c.write_and_flush(Bytes::from_static(b"x"));
            let l = log.clone();
            net.run_until("echo", || !l.borrow().data.is_empty());
            let resumed = log.borrow().session.as_ref().unwrap().resumed;
            resumed
        })
        .collect()
}

#[test]
fn servers_given_the_same_ticket_keys_resume_each_others_sessions() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let with_keys = |keys: Option<Vec<u8>>| {
        let o = SslOptions {
            ticket_keys: keys,
            session_cache_size: 0, // tickets only: no stateful cache to fall back on
            ..server_opts(&ca, &["localhost"])
        };
        tls_server(&net, SslContext::server(&o).unwrap()).1
    };
    let shared = vec![7u8; 48];
    let (a, b) = (with_keys(Some(shared.clone())), with_keys(Some(shared)));
    let other = with_keys(Some(vec![8u8; 48]));
    let (own1, own2) = (with_keys(None), with_keys(None));

    let cctx = SslContext::client(&client_opts(&ca)).unwrap();
    assert_eq!(resumptions(&net, &cctx, &[a, b, a]), [false, true, true]);
    let cctx = SslContext::client(&client_opts(&ca)).unwrap();
    assert_eq!(
        resumptions(&net, &cctx, &[a, other, b]),
        [false, false, false],
        "another server's keys do not open the ticket (a full handshake, no error); its own \
         tickets do not open on a or b"
    );
    let cctx = SslContext::client(&client_opts(&ca)).unwrap();
    assert_eq!(
        resumptions(&net, &cctx, &[own1, own2, own2]),
        [false, false, true],
        "without ticketKeys each context's keys are its own"
    );
}

#[test]
fn ticket_keys_must_be_48_bytes_and_need_tickets() {
    let ca = Ca::new("test CA");
    let o = |keys: Vec<u8>, tickets: bool| SslOptions {
        ticket_keys: Some(keys),
        session_tickets: tickets,
        ..server_opts(&ca, &["localhost"])
    };
    let e = SslContext::server(&o(vec![0; 32], true)).unwrap_err();
    assert!(e.to_string().contains("48 bytes"), "{e}");
    let e = SslContext::server(&o(vec![0; 48], false)).unwrap_err();
    assert_eq!(e.code(), "ERR_TLS_INVALID_CONTEXT");
}

#[test]
fn a_session_resumes_until_its_timeout_then_a_full_handshake_follows() {
    // Tickets only, then the session cache only (TLS 1.2 session ids and TLS 1.3 stateful
    // resumption): both end at sessionTimeout. One second, and a wait of a little over two
    // (the stamp has whole seconds).
    let net = Net::new();
    let ca = Ca::new("test CA");
    let server = |tickets: bool, max: TlsVersion| {
        let o = SslOptions {
            session_timeout: std::time::Duration::from_secs(1),
            session_tickets: tickets,
            session_cache_size: if tickets { 0 } else { 64 },
            max_version: max,
            ..server_opts(&ca, &["localhost"])
        };
        tls_server(&net, SslContext::server(&o).unwrap()).1
    };
    let by_ticket = server(true, TlsVersion::Tls13);
    let by_cache = server(false, TlsVersion::Tls13);
    let by_id = server(false, TlsVersion::Tls12);
    let addrs = [by_ticket, by_cache, by_id];
    let clients: Vec<SslContext> = addrs
        .iter()
        .map(|_| SslContext::client(&client_opts(&ca)).unwrap())
        .collect();
    for (c, &a) in clients.iter().zip(&addrs) {
        assert_eq!(
            resumptions(&net, c, &[a, a]),
            [false, true],
            "{a}: resumed in time"
        );
    }
    std::thread::sleep(std::time::Duration::from_millis(2100));
    for (c, &a) in clients.iter().zip(&addrs) {
        assert_eq!(
            resumptions(&net, c, &[a, a]),
            [false, true],
            "{a}: the expired session gets a full handshake, which issues a fresh one"
        );
    }
}

#[test]
fn the_session_timeout_is_one_second_to_seven_days() {
    let ca = Ca::new("test CA");
    let o = |secs: u64| SslOptions {
        session_timeout: std::time::Duration::from_secs(secs),
        ..server_opts(&ca, &["localhost"])
    };
    assert_eq!(
        SslOptions::default().session_timeout,
        std::time::Duration::from_secs(300),
        "node:tls's default"
    );
    for bad in [0, 7 * 24 * 3600 + 1] {
        let e = SslContext::server(&o(bad)).unwrap_err();
        assert!(e.to_string().contains("sessionTimeout"), "{e}");
    }
    SslContext::server(&o(7 * 24 * 3600)).unwrap();
}
