//! A client that lets the application judge the server's identity (node:tls's
//! `checkServerIdentity`): the chain is still verified natively, the name is the application's
//! to judge, and nothing the client wrote reaches a server before the verdict.

use crate::common;
use crate::net;

use crate::pair;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use common::pki::Ca;
use common::probe::{tls_and_probe, Shared};
use net::Net;
use netloop_tls::{SslContext, SslHandler, SslOptions};
use netloop_transport::*;
use pair::{client_opts, server_log, server_opts, tls_server};

/// What the client's hook was asked, and how to answer.
#[derive(Clone, Copy)]
enum Verdict {
    Accept,
    Refuse,
    /// Do not answer from the hook (the test answers later).
    Later,
}

struct Judged {
    client: Channel,
    log: Shared,
    asked: Rc<RefCell<Vec<String>>>,
}

/// A loop, a CA, and a TLS echo server of a certificate for `names` from it.
fn server_for(names: &[&str]) -> (Net, Ca, std::net::SocketAddr) {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let (_server, addr) = tls_server(&net, SslContext::server(&server_opts(&ca, names)).unwrap());
    (net, ca, addr)
}

/// Runs `net` until the client behind `log` closed.
fn until_closed(net: &Net, log: &Shared) {
    let l = log.clone();
    net.run_until("client closed", || l.borrow().has("inactive"));
}

fn judging_options(ca: &Ca) -> SslOptions {
    SslOptions {
        check_server_identity: true,
        ..client_opts(ca)
    }
}

/// Answers through the channel's `SslHandler` (as the binding does: found in the pipeline).
fn answer(ctx: &ChannelHandlerContext, verdict: Result<(), String>) -> bool {
    let p = ctx.channel().pipeline();
    let (h, tls_ctx) = (p.get("tls").unwrap(), p.context("tls").unwrap());
    let tls = h.as_any().unwrap().downcast_ref::<SslHandler>().unwrap();
    tls.answer_server_identity(&tls_ctx, verdict)
}

/// A client of `addr` (verifying `name`) whose hook records the name asked and answers
/// `verdict`; `early` is written and flushed before the handshake.
fn judged_client(
    net: &Net,
    o: SslOptions,
    name: &str,
    addr: std::net::SocketAddr,
    verdict: Verdict,
    early: &'static [u8],
) -> Judged {
    let (client, _connected) = net.client(ChannelOptions::default(), net::no_child, addr);
    let handler = SslContext::client(&o)
        .unwrap()
        .new_handler(Some(name))
        .unwrap();
    assert!(handler.checks_server_identity());
    let asked = Rc::new(RefCell::new(Vec::new()));
    let a = asked.clone();
    handler.on_server_identity(move |ctx, name| {
        a.borrow_mut().push(name.to_string());
        match verdict {
            Verdict::Accept => assert!(answer(ctx, Ok(()))),
            Verdict::Refuse => assert!(answer(ctx, Err("pinned key mismatch".into()))),
            Verdict::Later => {}
        }
    });
    let log = tls_and_probe(&client, handler);
    if !early.is_empty() {
        client.write_and_flush(Bytes::from_static(early));
    }
    Judged { client, log, asked }
}

#[test]
fn the_application_accepts_a_certificate_for_another_name_and_the_connection_works() {
    let (net, ca, addr) = server_for(&["example.org"]);
    let j = judged_client(
        &net,
        judging_options(&ca),
        "localhost",
        addr,
        Verdict::Accept,
        b"before",
    );
    let l = j.log.clone();
    net.run_until("echo", || l.borrow().data.len() >= 6);
    assert_eq!(j.log.borrow().handshake(), Some("ok"));
    assert_eq!(&j.log.borrow().data[..], b"before");
    assert_eq!(*j.asked.borrow(), vec!["localhost".to_string()]);
    let s = j.log.borrow().session.clone().unwrap();
    assert!(s.authorized, "{:?}", s.authorization_error);
}

#[test]
fn a_refusal_fails_the_handshake_and_nothing_written_reaches_the_server() {
    let (net, ca, addr) = server_for(&["localhost"]);
    let j = judged_client(
        &net,
        judging_options(&ca),
        "localhost",
        addr,
        Verdict::Refuse,
        b"secret request",
    );
    until_closed(&net, &j.log);
    let srv = server_log(0);
    net.run_until("server closed", || srv.borrow().has("inactive"));
    let events = j.log.borrow().events.clone();
    assert!(
        events
            .iter()
            .any(|e| e == "handshake ERR_TLS_SERVER_IDENTITY"),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| e == "exception ERR_TLS_SERVER_IDENTITY"),
        "{events:?}"
    );
    assert!(
        srv.borrow().data.is_empty(),
        "the server got {:?}",
        String::from_utf8_lossy(&srv.borrow().data)
    );
    assert_eq!(j.asked.borrow().len(), 1);
}

#[test]
fn an_unknown_issuer_fails_before_the_application_is_asked() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let other = Ca::new("other CA");
    let (_server, addr) = tls_server(
        &net,
        SslContext::server(&server_opts(&other, &["localhost"])).unwrap(),
    );
    let j = judged_client(
        &net,
        judging_options(&ca),
        "localhost",
        addr,
        Verdict::Accept,
        b"",
    );
    until_closed(&net, &j.log);
    assert_eq!(
        j.log.borrow().handshake(),
        Some("UNABLE_TO_GET_ISSUER_CERT_LOCALLY")
    );
    assert!(j.asked.borrow().is_empty());
}

#[test]
fn with_reject_unauthorized_off_a_refusal_completes_reported_as_not_authorized() {
    let (net, ca, addr) = server_for(&["localhost"]);
    let o = SslOptions {
        reject_unauthorized: false,
        ..judging_options(&ca)
    };
    let j = judged_client(&net, o, "localhost", addr, Verdict::Refuse, b"ping");
    let l = j.log.clone();
    net.run_until("echo", || l.borrow().data.len() >= 4);
    let s = j.log.borrow().session.clone().unwrap();
    assert!(!s.authorized);
    let e = s.authorization_error.as_ref().unwrap();
    assert_eq!(e.code(), "ERR_TLS_SERVER_IDENTITY");
    assert_eq!(e.to_string(), "pinned key mismatch");
}

#[test]
fn a_handler_without_a_hook_fails_closed() {
    let (net, ca, addr) = server_for(&["localhost"]);
    let (client, _connected) = net.client(ChannelOptions::default(), net::no_child, addr);
    let handler = SslContext::client(&judging_options(&ca))
        .unwrap()
        .new_handler(Some("localhost"))
        .unwrap();
    let log = tls_and_probe(&client, handler);
    until_closed(&net, &log);
    assert_eq!(log.borrow().handshake(), Some("ERR_TLS_SERVER_IDENTITY"));
}

/// A server that greets each client once its handshake completed.
struct Greeter;

impl ChannelHandler for Greeter {
    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, e: UserEvent) -> HandlerResult {
        if e.is::<netloop_tls::SslHandshakeCompletionEvent>() {
            ctx.write_and_flush(Bytes::from_static(b"greetings"));
        }
        Ok(())
    }
}

#[test]
fn the_servers_data_waits_for_a_later_verdict_and_is_delivered_after_it() {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let ctx = SslContext::server(&server_opts(&ca, &["localhost"])).unwrap();
    let (_server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        move |ch| {
            let h = ctx.new_handler(None).map_err(|e| e.into_transport())?;
            ch.pipeline().add_last("tls", h)?;
            ch.pipeline().add_last("greeter", Greeter)?;
            Ok(())
        },
    );
    let j = judged_client(
        &net,
        judging_options(&ca),
        "localhost",
        addr,
        Verdict::Later,
        b"",
    );
    let a = j.asked.clone();
    net.run_until("asked", || !a.borrow().is_empty());
    // The server greets at its own completion; the client holds what arrives.
    net.run_for(Duration::from_millis(100));
    assert!(
        j.log.borrow().data.is_empty(),
        "delivered before the verdict"
    );
    assert_eq!(
        j.log.borrow().handshake(),
        None,
        "completed before the verdict"
    );
    let tls_ctx = j.client.pipeline().context("tls").unwrap();
    assert!(answer(&tls_ctx, Ok(())));
    assert!(!answer(&tls_ctx, Ok(())), "a second answer does nothing");
    let l = j.log.clone();
    net.run_until("greeting", || l.borrow().data.len() >= 9);
    assert_eq!(&j.log.borrow().data[..], b"greetings");
    assert_eq!(j.log.borrow().handshake(), Some("ok"));
}

#[test]
fn a_server_context_refuses_the_option() {
    let ca = Ca::new("test CA");
    let o = SslOptions {
        check_server_identity: true,
        ..server_opts(&ca, &["localhost"])
    };
    let e = SslContext::server(&o).unwrap_err();
    assert_eq!(e.code(), "ERR_TLS_INVALID_CONTEXT");
}
