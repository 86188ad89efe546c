//! A server that asks the application for the ALPN protocol among the client's
//! (`SslOptions::ask_protocol`, node:tls's `ALPNCallback`), over loopback sockets: the chosen
//! protocol on both ends and every record path, no question without ALPN, a refusal, a choice
//! the client did not offer, and one question with the server name.

use crate::common;
use crate::net;
use crate::pair;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use common::pki::Ca;
use common::probe::{Log, Probe, Shared};
use net::Net;
use netloop_tls::{
    ClientHelloAnswer, ClientHelloQuestion, ProtocolChoice, ServerNameChoice, SslContext,
    SslOptions, TlsVersion,
};
use netloop_transport::*;

type Chooser = Arc<dyn Fn(&ClientHelloQuestion) -> ClientHelloAnswer + Send + Sync>;

thread_local! {
    static ASKED: Rc<RefCell<Vec<ClientHelloQuestion>>> = Rc::default();
    static LOGS: Rc<RefCell<Vec<Shared>>> = Rc::default();
}

/// A server whose handlers answer with `choose`; what they were asked; the server logs.
struct Server {
    addr: std::net::SocketAddr,
    asked: Rc<RefCell<Vec<ClientHelloQuestion>>>,
    logs: Rc<RefCell<Vec<Shared>>>,
    _ch: Channel,
}

fn server(net: &Net, ctx: SslContext, choose: Chooser) -> Server {
    ASKED.with(|a| a.borrow_mut().clear());
    LOGS.with(|l| l.borrow_mut().clear());
    let (ch, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        move |ch| {
            let log: Shared = Rc::new(RefCell::new(Log::default()));
            LOGS.with(|l| l.borrow_mut().push(log.clone()));
            let handler = Rc::new(ctx.new_handler(None).map_err(|e| e.into_transport())?);
            let weak = Rc::downgrade(&handler);
            let choose = choose.clone();
            handler.on_client_hello(move |ctx, question| {
                ASKED.with(|a| a.borrow_mut().push(question.clone()));
                let Some(h) = weak.upgrade() else { return };
                assert!(h.answer_client_hello(ctx, choose(question)));
            });
            ch.pipeline().add_last("tls", handler)?;
            ch.pipeline().add_last("probe", Probe { log, echo: true })?;
            Ok(())
        },
    );
    Server {
        addr,
        asked: ASKED.with(Rc::clone),
        logs: LOGS.with(Rc::clone),
        _ch: ch,
    }
}

fn client(
    net: &Net,
    ca: &Ca,
    name: &str,
    addr: std::net::SocketAddr,
    alpn: &[&str],
    version: TlsVersion,
) -> (Channel, Shared) {
    let ctx = SslContext::client(&SslOptions {
        ca: Some(ca.pem.clone().into_bytes()),
        alpn: alpn.iter().map(|p| p.as_bytes().to_vec()).collect(),
        max_version: version,
        ..Default::default()
    })
    .unwrap();
    pair::tls_client(net, ctx, name, addr)
}

fn choosing(ca: &Ca, experimental_own_records: bool) -> SslContext {
    SslContext::server(&SslOptions {
        identity: Some(ca.leaf(&["default.test"])),
        ask_protocol: true,
        experimental_own_records,
        ..Default::default()
    })
    .unwrap()
}

fn protocol(choice: ProtocolChoice) -> ClientHelloAnswer {
    ClientHelloAnswer {
        context: ServerNameChoice::Default,
        protocol: choice,
    }
}

/// The last protocol the client offered, or none.
fn last_offered(q: &ClientHelloQuestion) -> ClientHelloAnswer {
    protocol(ProtocolChoice::Select(q.protocols.last().unwrap().clone()))
}

#[test]
fn the_chosen_protocol_is_negotiated_on_both_ends_on_every_record_path() {
    for (version, experimental_own_records) in [
        (TlsVersion::Tls13, true),
        (TlsVersion::Tls13, false),
        (TlsVersion::Tls12, false),
    ] {
        let net = Net::new();
        let ca = Ca::new("test CA");
        let s = server(
            &net,
            choosing(&ca, experimental_own_records),
            Arc::new(last_offered),
        );
        let (c, log) = client(
            &net,
            &ca,
            "default.test",
            s.addr,
            &["h2", "http/1.1"],
            version,
        );
        assert_eq!(log.borrow().handshake(), Some("ok"), "{version:?}");
        let session = log.borrow().session.clone().unwrap();
        assert_eq!(session.alpn_protocol.as_deref(), Some("http/1.1"));
        let asked = s.asked.borrow().clone();
        assert_eq!(
            asked,
            vec![ClientHelloQuestion {
                server_name: Some("default.test".into()),
                protocols: vec![b"h2".to_vec(), b"http/1.1".to_vec()],
            }],
            "the client's protocols in its order, with the name"
        );
        c.write_and_flush(Bytes::from_static(b"ping"));
        let l = log.clone();
        net.run_until("echo", || l.borrow().data.len() >= 4);
        let srv = s.logs.borrow()[0].borrow().session.clone().unwrap();
        assert_eq!(srv.alpn_protocol.as_deref(), Some("http/1.1"));
    }
}

#[test]
fn a_client_offering_no_protocol_is_served_without_asking() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let s = server(&net, choosing(&ca, true), Arc::new(last_offered));
    let (_c, log) = client(&net, &ca, "default.test", s.addr, &[], TlsVersion::Tls13);
    assert_eq!(log.borrow().handshake(), Some("ok"));
    assert_eq!(log.borrow().session.as_ref().unwrap().alpn_protocol, None);
    assert!(s.asked.borrow().is_empty());
}

/// A server answering every question with `choice`, and a client offering `h2`: the reasons
/// the client and the server failed with, and the server's code.
fn failed_with(choice: ProtocolChoice) -> (String, String, String) {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let answer = protocol(choice);
    let s = server(
        &net,
        choosing(&ca, true),
        Arc::new(move |_: &ClientHelloQuestion| answer.clone()),
    );
    let (_c, log) = client(
        &net,
        &ca,
        "default.test",
        s.addr,
        &["h2"],
        TlsVersion::Tls13,
    );
    assert_eq!(log.borrow().handshake(), Some("ERR_TLS_ALERT_RECEIVED"));
    let srv = s.logs.borrow()[0].clone();
    let srv = srv.borrow();
    let client_reason = log.borrow().reason().unwrap().to_string();
    (
        client_reason,
        srv.reason().unwrap().to_string(),
        srv.handshake().unwrap().to_string(),
    )
}

#[test]
fn a_refusal_sends_no_application_protocol() {
    let (client, server, code) = failed_with(ProtocolChoice::Refuse);
    assert!(client.contains("no_application_protocol"), "{client}");
    assert_eq!(code, "ERR_TLS_NO_COMMON_PARAMETERS");
    assert!(server.contains("[\"h2\"]"), "{server}");
}

#[test]
fn a_protocol_the_client_did_not_offer_fails_with_its_own_code() {
    let (client, server, code) = failed_with(ProtocolChoice::Select(b"spdy/3".to_vec()));
    assert!(client.contains("internal_error"), "{client}");
    assert_eq!(code, "ERR_TLS_ALPN_CALLBACK_INVALID_RESULT");
    assert!(server.contains("spdy/3"), "{server}");
}

#[test]
fn one_question_chooses_both_the_context_and_the_protocol() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let other = SslContext::server(&SslOptions {
        identity: Some(ca.leaf(&["other.test"])),
        alpn: vec![b"ignored/1".to_vec()],
        ..Default::default()
    })
    .unwrap();
    let ctx = SslContext::server(&SslOptions {
        identity: Some(ca.leaf(&["default.test"])),
        ask_server_name: true,
        ask_protocol: true,
        ..Default::default()
    })
    .unwrap();
    let s = server(
        &net,
        ctx,
        Arc::new(move |q: &ClientHelloQuestion| ClientHelloAnswer {
            context: ServerNameChoice::Context(other.clone()),
            protocol: ProtocolChoice::Select(q.protocols[0].clone()),
        }),
    );
    let (_c, log) = client(
        &net,
        &ca,
        "other.test",
        s.addr,
        &["h2", "x/1"],
        TlsVersion::Tls13,
    );
    assert_eq!(log.borrow().handshake(), Some("ok"));
    let session = log.borrow().session.clone().unwrap();
    assert!(session.authorized, "other.test's certificate");
    assert_eq!(
        session.alpn_protocol.as_deref(),
        Some("h2"),
        "the callback's protocol, not the chosen context's list"
    );
    assert_eq!(s.asked.borrow().len(), 1);
}

#[test]
fn sessions_resume_with_the_chosen_protocol() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let s = server(&net, choosing(&ca, true), Arc::new(last_offered));
    let client_ctx = SslContext::client(&SslOptions {
        ca: Some(ca.pem.clone().into_bytes()),
        alpn: vec![b"h2".to_vec()],
        ..Default::default()
    })
    .unwrap();
    let mut resumed = Vec::new();
    for _ in 0..2 {
        let (ch, log) = pair::tls_client(&net, client_ctx.clone(), "default.test", s.addr);
        let l = log.clone();
        // A round trip, so that the ticket (sent after the handshake) has arrived.
        ch.write_and_flush(Bytes::from_static(b"x"));
        net.run_until("echo", || !l.borrow().data.is_empty());
        let session = log.borrow().session.clone().unwrap();
        assert_eq!(session.alpn_protocol.as_deref(), Some("h2"));
        resumed.push(session.resumed);
        ch.close();
    }
    assert_eq!(resumed, vec![false, true]);
}

#[test]
fn the_option_belongs_to_servers_and_excludes_a_protocol_list() {
    let ca = Ca::new("test CA");
    let both = SslContext::server(&SslOptions {
        identity: Some(ca.leaf(&["default.test"])),
        ask_protocol: true,
        alpn: vec![b"h2".to_vec()],
        ..Default::default()
    });
    let e = both.unwrap_err();
    assert_eq!(e.code(), "ERR_TLS_INVALID_CONTEXT");
    assert!(e.to_string().contains("ALPNCallback"), "{e}");
    let client = SslContext::client(&SslOptions {
        ask_protocol: true,
        ..Default::default()
    });
    assert_eq!(client.unwrap_err().code(), "ERR_TLS_INVALID_CONTEXT");
}
