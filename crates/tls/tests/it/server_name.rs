//! A server that asks the application for its context by the client's server name
//! (`SslOptions::ask_server_name`, node:tls's `SNICallback`), over loopback sockets: answered at
//! once or later, with another context, the default, a refusal or a failure; no SNI; ALPN of
//! the chosen context.

use crate::common;
use crate::net;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use common::pki::Ca;
use common::probe::{tls_and_probe, Log, Probe, Shared};
use net::Net;
use netloop_tls::{ServerNameChoice, SslContext, SslHandler, SslOptions, TlsVersion};
use netloop_transport::*;

/// What the server's hook saw, and how it answers.
#[derive(Clone)]
enum Answer {
    Now(ServerNameChoice),
    /// Kept, to be answered by the test.
    Later,
}

type Pending = Rc<RefCell<Vec<(ChannelHandlerContext, Rc<SslHandler>, String)>>>;

thread_local! {
    static ASKED: Rc<RefCell<Vec<String>>> = Rc::default();
    static PENDING: Pending = Rc::default();
    static LOGS: Rc<RefCell<Vec<Shared>>> = Rc::default();
}

/// The test thread's server state (the loop runs on the test's thread).
struct Server {
    addr: std::net::SocketAddr,
    asked: Rc<RefCell<Vec<String>>>,
    pending: Pending,
    logs: Rc<RefCell<Vec<Shared>>>,
    _ch: Channel,
}

fn server(net: &Net, ctx: SslContext, answer: Answer) -> Server {
    ASKED.with(|a| a.borrow_mut().clear());
    PENDING.with(|p| p.borrow_mut().clear());
    LOGS.with(|l| l.borrow_mut().clear());
    let (ch, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        move |ch| {
            let log: Shared = Rc::new(RefCell::new(Log::default()));
            LOGS.with(|l| l.borrow_mut().push(log.clone()));
            let handler = Rc::new(ctx.new_handler(None).map_err(|e| e.into_transport())?);
            let answer = answer.clone();
            let weak = Rc::downgrade(&handler);
            handler.on_server_name(move |ctx, name| {
                ASKED.with(|a| a.borrow_mut().push(name.to_string()));
                let Some(h) = weak.upgrade() else { return };
                match answer {
                    Answer::Now(choice) => assert!(h.answer_server_name(ctx, choice)),
                    Answer::Later => {
                        PENDING.with(|p| p.borrow_mut().push((ctx.clone(), h, name.to_string())))
                    }
                }
            });
            ch.pipeline().add_last("tls", handler)?;
            ch.pipeline().add_last("probe", Probe { log, echo: true })?;
            Ok(())
        },
    );
    Server {
        addr,
        asked: ASKED.with(Rc::clone),
        pending: PENDING.with(Rc::clone),
        logs: LOGS.with(Rc::clone),
        _ch: ch,
    }
}

/// A client verifying `name` (none: sends no SNI, verifies the IP address); its log.
fn client(
    net: &Net,
    ca: &Ca,
    name: Option<&str>,
    addr: std::net::SocketAddr,
    alpn: &[&str],
) -> (Channel, Shared) {
    let ctx = SslContext::client(&SslOptions {
        ca: Some(ca.pem.clone().into_bytes()),
        alpn: alpn.iter().map(|p| p.as_bytes().to_vec()).collect(),
        ..Default::default()
    })
    .unwrap();
    let (ch, connected) = net.client(ChannelOptions::default(), net::no_child, addr);
    let log = tls_and_probe(&ch, ctx.new_handler(name).unwrap());
    net.run_until("connect", || connected.is_done());
    (ch, log)
}

fn settled(net: &Net, log: &Shared) {
    let l = log.clone();
    net.run_until("handshake settled", || l.borrow().handshake().is_some());
}

fn asking(ca: &Ca, names: &[&str]) -> SslContext {
    SslContext::server(&SslOptions {
        identity: Some(ca.leaf(names)),
        ask_server_name: true,
        ..Default::default()
    })
    .unwrap()
}

fn plain(ca: &Ca, names: &[&str], alpn: &[&str]) -> SslContext {
    SslContext::server(&SslOptions {
        identity: Some(ca.leaf(names)),
        alpn: alpn.iter().map(|p| p.as_bytes().to_vec()).collect(),
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn the_chosen_context_serves_the_certificate_and_alpn_of_the_name() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let other = plain(&ca, &["other.test"], &["x/1"]);
    let s = server(
        &net,
        asking(&ca, &["default.test"]),
        Answer::Now(ServerNameChoice::Context(other)),
    );
    let (c, log) = client(&net, &ca, Some("other.test"), s.addr, &["x/1"]);
    settled(&net, &log);
    assert_eq!(
        log.borrow().handshake(),
        Some("ok"),
        "{:?}",
        log.borrow().events
    );
    let session = log.borrow().session.clone().unwrap();
    assert_eq!(session.alpn_protocol.as_deref(), Some("x/1"));
    assert!(
        session.authorized,
        "the chosen certificate names other.test"
    );
    assert_eq!(*s.asked.borrow(), vec!["other.test".to_string()]);
    c.write_and_flush(Bytes::from_static(b"ping"));
    let l = log.clone();
    net.run_until("echo", || l.borrow().data.len() >= 4);
    let srv = s.logs.borrow()[0].borrow().session.clone().unwrap();
    assert_eq!(srv.server_name.as_deref(), Some("other.test"));
}

#[test]
fn an_answer_given_later_goes_on_with_the_bytes_kept_meanwhile_on_every_record_path() {
    for (version, experimental_own_records) in [
        (TlsVersion::Tls13, false),
        (TlsVersion::Tls12, false),
        (TlsVersion::Tls13, true),
    ] {
        let net = Net::new();
        let ca = Ca::new("test CA");
        let other = SslContext::server(&SslOptions {
            identity: Some(ca.leaf(&["late.test"])),
            max_version: version,
            experimental_own_records,
            ..Default::default()
        })
        .unwrap();
        let s = server(&net, asking(&ca, &["default.test"]), Answer::Later);
        let (_c, log) = client(&net, &ca, Some("late.test"), s.addr, &[]);
        let p = s.pending.clone();
        net.run_until("asked", || !p.borrow().is_empty());
        net.run_for(Duration::from_millis(50));
        assert_eq!(
            log.borrow().handshake(),
            None,
            "nothing goes on before the answer"
        );
        let (ctx, h, name) = s.pending.borrow_mut().pop().unwrap();
        assert_eq!(name, "late.test");
        assert!(h.answer_server_name(&ctx, ServerNameChoice::Context(other)));
        assert!(
            !h.answer_server_name(&ctx, ServerNameChoice::Default),
            "one answer counts"
        );
        settled(&net, &log);
        assert_eq!(log.borrow().handshake(), Some("ok"), "{version:?}");
        let want = if version == TlsVersion::Tls12 {
            "TLSv1.2"
        } else {
            "TLSv1.3"
        };
        assert_eq!(log.borrow().session.as_ref().unwrap().protocol, want);
    }
}

#[test]
fn the_default_answer_serves_the_handlers_own_context() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let s = server(
        &net,
        asking(&ca, &["default.test"]),
        Answer::Now(ServerNameChoice::Default),
    );
    let (_c, log) = client(&net, &ca, Some("default.test"), s.addr, &[]);
    settled(&net, &log);
    assert_eq!(log.borrow().handshake(), Some("ok"));
    assert_eq!(s.asked.borrow().len(), 1);
}

#[test]
fn a_client_without_sni_is_served_the_default_without_asking() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let id = ca.leaf(&["127.0.0.1"]);
    let ctx = SslContext::server(&SslOptions {
        identity: Some(id),
        ask_server_name: true,
        ..Default::default()
    })
    .unwrap();
    let s = server(&net, ctx, Answer::Later);
    let (_c, log) = client(&net, &ca, None, s.addr, &[]);
    settled(&net, &log);
    assert_eq!(
        log.borrow().handshake(),
        Some("ok"),
        "{:?}",
        log.borrow().events
    );
    assert!(s.asked.borrow().is_empty());
}

/// A server answering `choice` at once to a client asking for `name`: how the handshake ended
/// for the client and for the server, and the server's events.
fn answered(choice: ServerNameChoice, name: &str) -> (Option<String>, Option<String>, Vec<String>) {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let s = server(&net, asking(&ca, &["default.test"]), Answer::Now(choice));
    let (_c, log) = client(&net, &ca, Some(name), s.addr, &[]);
    settled(&net, &log);
    let srv = s.logs.borrow()[0].clone();
    let srv = srv.borrow();
    let client_end = log.borrow().handshake().map(str::to_string);
    (
        client_end,
        srv.handshake().map(str::to_string),
        srv.events.clone(),
    )
}

#[test]
fn a_refusal_sends_unrecognized_name_and_fails_the_server_with_its_code() {
    let (client, server, events) =
        answered(ServerNameChoice::Refuse("no such host".into()), "nope.test");
    assert_eq!(client.as_deref(), Some("ERR_TLS_ALERT_RECEIVED"));
    assert_eq!(
        server.as_deref(),
        Some("ERR_TLS_SNI_CALLBACK"),
        "{events:?}"
    );
    let (client, _, _) = answered(ServerNameChoice::Fail("store down".into()), "x.test");
    assert_eq!(client.as_deref(), Some("ERR_TLS_ALERT_RECEIVED"));
}

#[test]
fn a_client_context_as_the_answer_fails_the_handshake() {
    let wrong = SslContext::client(&SslOptions::default()).unwrap();
    let (client, server, _) = answered(ServerNameChoice::Context(wrong), "default.test");
    assert_eq!(client.as_deref(), Some("ERR_TLS_ALERT_RECEIVED"));
    assert_eq!(server.as_deref(), Some("ERR_TLS_SNI_CALLBACK"));
}

#[test]
fn no_answer_is_ended_by_the_handshake_timeout() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let ctx = SslContext::server(&SslOptions {
        identity: Some(ca.leaf(&["default.test"])),
        ask_server_name: true,
        handshake_timeout: Duration::from_millis(100),
        ..Default::default()
    })
    .unwrap();
    let s = server(&net, ctx, Answer::Later);
    let (_c, log) = client(&net, &ca, Some("slow.test"), s.addr, &[]);
    let l = s.logs.clone();
    net.run_until("server timed out", || {
        l.borrow()
            .first()
            .is_some_and(|x| x.borrow().handshake().is_some())
    });
    assert_eq!(
        s.logs.borrow()[0].borrow().handshake(),
        Some("ERR_TLS_HANDSHAKE_TIMEOUT")
    );
    let (ctx, h, _) = s.pending.borrow_mut().pop().unwrap();
    assert!(
        !h.answer_server_name(&ctx, ServerNameChoice::Default),
        "too late"
    );
    settled(&net, &log);
}
