//! A netloop TLS server and client over loopback, each with a probe behind its `SslHandler`
//! (shared by the handshake and option tests).
#![allow(dead_code)]

use std::cell::RefCell;
use std::rc::Rc;

use crate::common::pki::Ca;
use crate::common::probe::{tls_and_probe, Log, Probe, Shared};
use crate::net::{self, Net};
use netloop_tls::{SslContext, SslOptions};
use netloop_transport::*;

thread_local! {
    static SERVER_LOGS: RefCell<Vec<Shared>> = const { RefCell::new(Vec::new()) };
}

pub fn server_log(i: usize) -> Shared {
    SERVER_LOGS.with(|l| l.borrow()[i].clone())
}

/// A TLS echo server with `ctx`; returns the server channel and its address.
pub fn tls_server(net: &Net, ctx: SslContext) -> (Channel, std::net::SocketAddr) {
    net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        move |ch| {
            let log: Shared = Rc::new(RefCell::new(Log::default()));
            SERVER_LOGS.with(|l| l.borrow_mut().push(log.clone()));
            ch.pipeline().add_last(
                "tls",
                ctx.new_handler(None).map_err(|e| e.into_transport())?,
            )?;
            ch.pipeline().add_last("probe", Probe { log, echo: true })?;
            Ok(())
        },
    )
}

/// A TLS client of `addr` verifying `name`; returns its log once the handshake settled.
pub fn tls_client(
    net: &Net,
    ctx: SslContext,
    name: &str,
    addr: std::net::SocketAddr,
) -> (Channel, Shared) {
    let (ch, connected) = net.client(ChannelOptions::default(), net::no_child, addr);
    let log = tls_and_probe(&ch, ctx.new_handler(Some(name)).unwrap());
    net.run_until("connect", || connected.is_done());
    let l = log.clone();
    net.run_until("handshake settled", || l.borrow().handshake().is_some());
    (ch, log)
}

pub fn server_opts(ca: &Ca, names: &[&str]) -> SslOptions {
    SslOptions {
        identity: Some(ca.leaf(names)),
        ..Default::default()
    }
}

pub fn client_opts(ca: &Ca) -> SslOptions {
    SslOptions {
        ca: Some(ca.pem.clone().into_bytes()),
        ..Default::default()
    }
}

/// How many server connections have a probe so far.
pub fn server_logs_started() -> usize {
    SERVER_LOGS.with(|l| l.borrow().len())
}

/// Forgets the servers' probes (before a new server in the same test).
pub fn clear_server_logs() {
    SERVER_LOGS.with(|l| l.borrow_mut().clear());
}

/// A client's handshake failure against a server of `server`: the client's handshake code and
/// the server probe's events.
pub fn client_failure(server: SslOptions, client: SslOptions, name: &str) -> (String, Vec<String>) {
    let net = Net::new();
    let (_server, addr) = tls_server(&net, SslContext::server(&server).unwrap());
    let (_c, log) = tls_client(&net, SslContext::client(&client).unwrap(), name, addr);
    let l = log.clone();
    net.run_until("client closed", || l.borrow().has("inactive"));
    let srv = server_log(0);
    net.run_until("server closed", || srv.borrow().has("inactive"));
    let hs = log.borrow().handshake().unwrap().to_string();
    let srv_events = srv.borrow().events.clone();
    (hs, srv_events)
}
