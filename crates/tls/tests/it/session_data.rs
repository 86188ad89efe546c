//! What an established session gives out, on both ends over loopback: the OCSP response a
//! server stapled (read by its client) and exported keying material (equal on both ends, on
//! rustls and on netloop's own TLS 1.3 record layer).

use crate::common;
use crate::net;
use crate::pair;

use common::pki::Ca;
use net::Net;
use netloop_tls::{SslContext, SslOptions, TlsVersion};
use netloop_transport::*;
use pair::{client_opts, server_opts, tls_client, tls_server};

#[test]
fn a_client_reads_the_ocsp_response_its_server_staples_in_tls12_and_tls13() {
    let ca = Ca::new("test CA");
    for max in [TlsVersion::Tls12, TlsVersion::Tls13] {
        let net = Net::new();
        let mut so = server_opts(&ca, &["localhost"]);
        so.max_version = max;
        // rustls staples what it is given; the client keeps it as received.
        so.identity.as_mut().unwrap().ocsp = Some(b"a DER OCSP response".to_vec());
        let (_s, stapling) = tls_server(&net, SslContext::server(&so).unwrap());
        let (_s2, plain) = tls_server(
            &net,
            SslContext::server(&SslOptions {
                max_version: max,
                ..server_opts(&ca, &["localhost"])
            })
            .unwrap(),
        );
        let cctx = SslContext::client(&client_opts(&ca)).unwrap();
        let (_c, log) = tls_client(&net, cctx.clone(), "localhost", stapling);
        let session = log.borrow().session.clone().unwrap();
        assert_eq!(
            session.ocsp_response.as_deref(),
            Some(&b"a DER OCSP response"[..]),
            "{max:?}"
        );
        let (_c, log) = tls_client(&net, cctx, "localhost", plain);
        assert_eq!(log.borrow().session.as_ref().unwrap().ocsp_response, None);
    }
}

/// The `SslHandler` of channel `ch` (added as "tls").
fn ssl_handler_export(ch: &Channel, len: usize, label: &[u8], context: Option<&[u8]>) -> Vec<u8> {
    let h = ch.pipeline().get("tls").expect("an SslHandler named tls");
    let tls = h
        .as_any()
        .and_then(|a| a.downcast_ref::<netloop_tls::SslHandler>())
        .expect("an SslHandler");
    tls.export_keying_material(len, label, context)
        .expect("exported")
}

#[test]
fn both_ends_export_the_same_keying_material_on_rustls_and_on_our_record_layer() {
    let ca = Ca::new("test CA");
    for (max, experimental_own_records) in [
        (TlsVersion::Tls13, true),
        (TlsVersion::Tls13, false),
        (TlsVersion::Tls12, true),
    ] {
        let net = Net::new();
        let ctx = SslContext::server(&SslOptions {
            max_version: max,
            experimental_own_records,
            ..server_opts(&ca, &["localhost"])
        })
        .unwrap();
        thread_local! {
            static CHILDREN: std::cell::RefCell<Vec<Channel>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let (_server, addr) = net.server(
            ChannelOptions::default(),
            ChannelOptions::default(),
            move |ch| {
                CHILDREN.with(|c| c.borrow_mut().push(ch.clone()));
                ch.pipeline().add_last(
                    "tls",
                    ctx.new_handler(None).map_err(|e| e.into_transport())?,
                )?;
                Ok(())
            },
        );
        let cctx = SslContext::client(&client_opts(&ca)).unwrap();
        let mut seen = Vec::new();
        for _ in 0..2 {
            let (c, log) = tls_client(&net, cctx.clone(), "localhost", addr);
            assert_eq!(log.borrow().handshake(), Some("ok"));
            let child = CHILDREN.with(|c| c.borrow().last().unwrap().clone());
            let l = log.clone();
            net.run_until("server handshake", || {
                l.borrow().handshake().is_some()
                    && child
                        .pipeline()
                        .get("tls")
                        .and_then(|h| {
                            h.as_any()
                                .and_then(|a| a.downcast_ref::<netloop_tls::SslHandler>())
                                .map(|t| t.is_handshake_done())
                        })
                        .unwrap_or(false)
            });
            for context in [None, Some(&b"context"[..])] {
                let ours = ssl_handler_export(&child, 48, b"EXPERIMENTAL netloop", context);
                let theirs = ssl_handler_export(&c, 48, b"EXPERIMENTAL netloop", context);
                assert_eq!(
                    ours, theirs,
                    "{max:?}, own records {experimental_own_records}, {context:?}"
                );
                seen.push(ours);
            }
        }
        assert_ne!(
            seen[0], seen[1],
            "the context changes the material ({max:?})"
        );
        assert_ne!(seen[0], seen[2], "each connection has its own ({max:?})");
    }
}
