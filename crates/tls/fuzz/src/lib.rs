//! The server-side TLS fuzz checks: a server `SslHandler` on an `EmbeddedChannel`, fed bytes
//! the fuzzer chooses, alone or after a real handshake with a netloop client (a second
//! `SslHandler` on its own embedded channel, records pumped between the two).
//!
//! An input is: one flags byte, then chunks, each a length byte `n` and `n` bytes.
//! - flags bit 0: first complete a real handshake (TLS 1.3, or TLS 1.2 with bit 3), so the
//!   chunks reach the record layer of an established session;
//! - flags bit 1: the server runs with `autoRead` off and reads once per chunk;
//! - flags bit 2: the server writes a plaintext reply after every chunk;
//! - flags bit 4: the server keeps TLS 1.3 records on rustls (the default) instead of the
//!   experimental own record layer (crates/tls/src/record, `experimental_own_records`), so
//!   both paths are fuzzed;
//! - flags bit 5: every record the client encrypts for an even chunk has one byte flipped
//!   (at the chunk's first byte, modulo its length): valid framing, a tag that fails;
//! - flags bit 6: the server's context asks for its context by server name (node:tls's
//!   `SNICallback`) and its ALPN protocol (`ALPNCallback`; the clients offer two): the
//!   question is answered after the next chunk (or handshake round), so input arrives while
//!   it waits; bit 7: the answer refuses the name, else it chooses a context (the
//!   rustls-records one with bit 4, the own-records one without) and the last protocol
//!   offered, if any.
//!
//! A chunk whose length byte is odd is raw bytes written to the server as records; an even one
//! (after a handshake) is plaintext the client encrypts and sends, so valid records interleave
//! with garbage. At the end the fake clock passes the handshake timeout.
//!
//! Checks, beyond "no panic":
//! - an exception closes the channel (a misbehaving peer closes its own channel);
//! - plaintext reaching the tail is a prefix of what the client sent (never invented bytes);
//!   with no raw chunk at all, it is exactly what the client sent;
//! - the server's output stays within a bound of what it was given and asked to write (no
//!   amplification);
//! - after the timeout, a server still handshaking has closed.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::OnceLock;
use std::time::Duration;

use netloop_tls::{
    ClientHelloAnswer, ClientHelloQuestion, PemIdentity, ProtocolChoice, ServerNameChoice,
    SslContext, SslOptions, TlsVersion,
};
use netloop_transport::{
    Bytes, ChannelHandler, ChannelHandlerContext, ChannelOption, EmbeddedChannel,
};

struct Contexts {
    server: SslContext,
    server_asking: SslContext,
    server_rustls: SslContext,
    client13: SslContext,
    client12: SslContext,
}

fn contexts() -> &'static Contexts {
    static CTX: OnceLock<Contexts> = OnceLock::new();
    CTX.get_or_init(|| {
        let server = |experimental_own_records: bool, ask_server_name: bool| {
            SslContext::server(&SslOptions {
                identity: Some(PemIdentity {
                    chain: include_bytes!("../testpki/server.pem").to_vec(),
                    key: include_bytes!("../testpki/server.key").to_vec(),
                    ocsp: None,
                }),
                min_version: TlsVersion::Tls12,
                experimental_own_records,
                ask_server_name,
                ask_protocol: ask_server_name,
                ..SslOptions::default()
            })
            .expect("server context")
        };
        let client = |v: TlsVersion| {
            SslContext::client(&SslOptions {
                ca: Some(include_bytes!("../testpki/ca.pem").to_vec()),
                server_name: Some("localhost".into()),
                min_version: v,
                max_version: v,
                alpn: vec![b"h2".to_vec(), b"http/1.1".to_vec()],
                ..SslOptions::default()
            })
            .expect("client context")
        };
        Contexts {
            server: server(true, false),
            server_asking: server(true, true),
            server_rustls: server(false, false),
            client13: client(TlsVersion::Tls13),
            client12: client(TlsVersion::Tls12),
        }
    })
}

fn channel(handler: netloop_tls::SslHandler) -> EmbeddedChannel {
    let h: Rc<dyn ChannelHandler> = Rc::new(handler);
    EmbeddedChannel::new(vec![("tls", h)])
}

/// A question about the ClientHello the handler asked and the test has not answered yet.
type Question = Rc<RefCell<Option<(ChannelHandlerContext, ClientHelloQuestion)>>>;

/// Answers `question`, if asked, as flags bits 4 and 7 say.
fn answer(server: &EmbeddedChannel, question: &Question, flags: u8) {
    let Some((ctx, asked)) = question.borrow_mut().take() else {
        return;
    };
    let protocol = match asked.protocols.last() {
        Some(p) => ProtocolChoice::Select(p.clone()),
        None => ProtocolChoice::Default,
    };
    let context = if flags & 128 != 0 {
        ServerNameChoice::Refuse("refused by the fuzz input".into())
    } else if flags & 16 != 0 {
        ServerNameChoice::Context(contexts().server_rustls.clone())
    } else {
        ServerNameChoice::Context(contexts().server.clone())
    };
    let handler = server.pipeline().get("tls");
    if let Some(h) = handler
        .as_ref()
        .and_then(|h| h.as_any())
        .and_then(|a| a.downcast_ref::<netloop_tls::SslHandler>())
    {
        h.answer_client_hello(&ctx, ClientHelloAnswer { context, protocol });
    }
}

/// Moves every record `from` wrote into `to`; returns the bytes moved.
fn pump(from: &EmbeddedChannel, to: &EmbeddedChannel) -> usize {
    let mut moved = 0;
    while let Some(m) = from.read_outbound() {
        if let Ok(b) = m.into_bytes() {
            moved += b.len();
            if to.channel().is_open() {
                to.write_inbound(b);
            }
        }
    }
    moved
}

fn drain_inbound(ch: &EmbeddedChannel, into: &mut Vec<u8>) {
    while let Some(m) = ch.read_inbound() {
        if let Ok(b) = m.into_bytes() {
            into.extend_from_slice(&b);
        }
    }
}

/// Runs one input (see the module docs); panics when a check fails.
pub fn check(data: &[u8]) {
    let Some((&flags, mut rest)) = data.split_first() else {
        return;
    };
    let ctx = contexts();
    let server_ctx = if flags & 64 != 0 {
        &ctx.server_asking
    } else if flags & 16 != 0 {
        &ctx.server_rustls
    } else {
        &ctx.server
    };
    let question: Question = Rc::default();
    let handler = server_ctx.new_handler(None).expect("server handler");
    let q = question.clone();
    handler.on_client_hello(move |ctx, asked| *q.borrow_mut() = Some((ctx.clone(), asked.clone())));
    let server = channel(handler);
    let tamper = flags & 32 != 0;
    let manual_read = flags & 2 != 0;
    if manual_read {
        server
            .channel()
            .set_option(ChannelOption::AutoRead(false))
            .expect("autoRead off");
    }
    let mut client = None;
    if flags & 1 != 0 {
        let c = if flags & 8 != 0 { &ctx.client12 } else { &ctx.client13 };
        let c = channel(c.new_handler(Some("localhost")).expect("client handler"));
        for _ in 0..8 {
            if manual_read {
                server.channel().read();
            }
            let moved = pump(&c, &server) + pump(&server, &c);
            let asked = question.borrow().is_some();
            answer(&server, &question, flags);
            if moved == 0 && !asked {
                break;
            }
        }
        client = Some(c);
    }

    let mut sent = Vec::new(); // plaintext the client encrypted
    let mut received = Vec::new(); // plaintext that reached the server's tail
    let mut given = 0usize; // bytes written into the server (records or garbage)
    let mut asked = 0usize; // plaintext the server was asked to write
    let mut writes = 0usize;
    let mut raw = false;
    let mut out = 0usize;
    while let Some((&n, tail)) = rest.split_first() {
        let n = usize::from(n).min(tail.len());
        let (chunk, next) = tail.split_at(n);
        rest = next;
        if !server.channel().is_open() {
            break;
        }
        match &client {
            Some(c) if n % 2 == 0 && c.channel().is_open() => {
                c.write_outbound(Bytes::copy_from_slice(chunk));
                sent.extend_from_slice(chunk);
                while let Some(m) = c.read_outbound() {
                    if let Ok(b) = m.into_bytes() {
                        given += b.len();
                        if tamper && !b.is_empty() {
                            raw = true;
                            let mut v = b.to_vec();
                            let at = usize::from(chunk.first().copied().unwrap_or(0)) % v.len();
                            v[at] ^= 1;
                            server.write_inbound(Bytes::from(v));
                        } else {
                            server.write_inbound(b);
                        }
                    }
                }
            }
            _ => {
                raw = true;
                given += chunk.len();
                server.write_inbound(Bytes::copy_from_slice(chunk));
            }
        }
        if manual_read {
            server.channel().read();
            server.run_pending_tasks();
        }
        if flags & 4 != 0 && server.channel().is_open() {
            asked += chunk.len();
            writes += 1;
            server.write_outbound(Bytes::copy_from_slice(chunk));
        }
        answer(&server, &question, flags);
        drain_inbound(&server, &mut received);
        while let Some(m) = server.read_outbound() {
            out += m.as_bytes().map_or(0, Bytes::len);
        }
        if server.check_exception().is_err() {
            assert!(
                !server.channel().is_open(),
                "an exception must close the server's channel"
            );
        }
    }
    drain_inbound(&server, &mut received);
    assert!(
        sent.starts_with(&received),
        "the server delivered plaintext the client never sent"
    );
    let closed_by_peer = client.as_ref().is_some_and(|c| !c.channel().is_open());
    if !raw && !manual_read && server.channel().is_open() && !closed_by_peer {
        assert_eq!(received, sent, "valid records must all be delivered");
    }
    // The handshake flight (certificate chain, tickets) and alerts, plus what it was asked to
    // write with a record's overhead per write.
    let bound = 32 * 1024 + 2 * given + asked + 64 * writes;
    assert!(out <= bound, "server wrote {out} bytes for {given} in, {asked} asked");

    server.advance_time(Duration::from_secs(11));
    let handler = server.pipeline().get("tls");
    let done = handler
        .as_ref()
        .and_then(|h| h.as_any())
        .and_then(|a| a.downcast_ref::<netloop_tls::SslHandler>())
        .is_some_and(netloop_tls::SslHandler::is_handshake_done);
    if !done {
        assert!(
            !server.channel().is_open(),
            "the handshake timeout must close a server still handshaking"
        );
    }
}
