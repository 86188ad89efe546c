//! permessage-deflate (RFC 7692), the negotiation: the server's table of offers and answers,
//! the agreed parameters, a client's offer against the server's answer on both ends, and the
//! handshake carrying the extension only when configured. The data path is in deflate.rs.

use netloop_ws::extension::{
    accept_server_response, client_offer, server_negotiate, DeflateConfig, PerMessageDeflate,
};
use netloop_ws::handshake::{server_handshake, HandshakeOptions};

fn negotiate(config: &DeflateConfig, offers: &[&str]) -> Option<String> {
    server_negotiate(config, offers.iter().map(|o| o.as_bytes())).map(|a| a.response)
}

const PMD: &str = "permessage-deflate";

#[test]
fn the_server_answers_the_first_offer_it_can_honour() {
    let d = DeflateConfig::default();
    let small = DeflateConfig {
        server_max_window_bits: 10,
        client_max_window_bits: 11,
        ..DeflateConfig::default()
    };
    let no_ctx = DeflateConfig {
        server_no_context_takeover: true,
        client_no_context_takeover: true,
        ..DeflateConfig::default()
    };
    let cases: &[(&DeflateConfig, &[&str], Option<&str>)] = &[
        (&d, &[PMD], Some(PMD)),
        (&d, &["x-webkit-deflate-frame"], None),
        (&d, &["foo, permessage-deflate"], Some(PMD)),
        (
            &d,
            &["Permessage-Deflate; Client_Max_Window_Bits"],
            Some(PMD),
        ),
        // What browsers and `ws` offer: no value, the server may choose (15: nothing said).
        (
            &d,
            &["permessage-deflate; client_max_window_bits"],
            Some(PMD),
        ),
        (
            &d,
            &["permessage-deflate; client_max_window_bits=10"],
            Some("permessage-deflate; client_max_window_bits=10"),
        ),
        (
            &d,
            &["permessage-deflate; server_max_window_bits=\"12\""],
            Some("permessage-deflate; server_max_window_bits=12"),
        ),
        (
            &d,
            &["permessage-deflate; server_no_context_takeover; client_no_context_takeover"],
            Some("permessage-deflate; server_no_context_takeover; client_no_context_takeover"),
        ),
        // Invalid offers are declined, the next one taken.
        (&d, &["permessage-deflate; foo"], None),
        (
            &d,
            &["permessage-deflate; server_no_context_takeover=1"],
            None,
        ),
        (&d, &["permessage-deflate; server_max_window_bits"], None),
        (&d, &["permessage-deflate; server_max_window_bits=16"], None),
        (&d, &["permessage-deflate; server_max_window_bits=7"], None),
        (&d, &["permessage-deflate; server_max_window_bits=09"], None),
        (
            &d,
            &["permessage-deflate; client_max_window_bits=abc"],
            None,
        ),
        (
            &d,
            &["permessage-deflate; client_no_context_takeover; client_no_context_takeover"],
            None,
        ),
        (
            &d,
            &["permessage-deflate; bad=1, permessage-deflate; client_max_window_bits=9"],
            Some("permessage-deflate; client_max_window_bits=9"),
        ),
        // A window of 2^8 for this end's compressor is beyond zlib: accepted, and the server
        // sends uncompressed (see below).
        (
            &d,
            &["permessage-deflate; server_max_window_bits=8", PMD],
            Some("permessage-deflate; server_max_window_bits=8"),
        ),
        // Configured windows: announced for the server, asked of the client if it lets us.
        (
            &small,
            &["permessage-deflate; client_max_window_bits"],
            Some("permessage-deflate; server_max_window_bits=10; client_max_window_bits=11"),
        ),
        (
            &small,
            &["permessage-deflate; server_max_window_bits=9; client_max_window_bits=13"],
            Some("permessage-deflate; server_max_window_bits=9; client_max_window_bits=11"),
        ),
        (&small, &[PMD], None),
        (
            &no_ctx,
            &[PMD],
            Some("permessage-deflate; server_no_context_takeover; client_no_context_takeover"),
        ),
    ];
    for (config, offers, expected) in cases {
        assert_eq!(
            negotiate(config, offers).as_deref(),
            *expected,
            "{offers:?} with {config:?}"
        );
    }
}

#[test]
fn the_agreed_parameters_follow_the_answer() {
    let small = DeflateConfig {
        server_max_window_bits: 10,
        client_max_window_bits: 11,
        client_no_context_takeover: true,
        ..DeflateConfig::default()
    };
    let agreed = server_negotiate(
        &small,
        [&b"permessage-deflate; client_max_window_bits; server_no_context_takeover"[..]],
    )
    .unwrap();
    assert_eq!(
        agreed.params,
        PerMessageDeflate {
            server_no_context_takeover: true,
            client_no_context_takeover: true,
            server_max_window_bits: 10,
            client_max_window_bits: 11,
        }
    );
}

#[test]
fn a_client_offer_and_the_servers_answer_agree_on_both_ends() {
    for client in [
        DeflateConfig::default(),
        DeflateConfig {
            server_no_context_takeover: true,
            client_max_window_bits: 12,
            server_max_window_bits: 10,
            ..DeflateConfig::default()
        },
        DeflateConfig {
            client_no_context_takeover: true,
            ..DeflateConfig::default()
        },
    ] {
        for server in [
            DeflateConfig::default(),
            DeflateConfig {
                client_max_window_bits: 9,
                server_no_context_takeover: true,
                ..DeflateConfig::default()
            },
        ] {
            let offer = client_offer(&client);
            let agreed = server_negotiate(&server, [offer.as_bytes()]).expect("accepted");
            let seen = accept_server_response(&client, [agreed.response.as_bytes()])
                .expect("the answer is acceptable")
                .expect("deflate on");
            assert_eq!(seen, agreed.params, "{offer} -> {}", agreed.response);
        }
    }
    assert_eq!(
        accept_server_response(&DeflateConfig::default(), []),
        Ok(None),
        "no extension answered"
    );
}

#[test]
fn a_client_refuses_an_answer_it_did_not_ask_for() {
    let d = DeflateConfig::default();
    let limited = DeflateConfig {
        server_max_window_bits: 10,
        server_no_context_takeover: true,
        ..DeflateConfig::default()
    };
    for (config, answer) in [
        (&d, "x-unknown"),
        (&d, "permessage-deflate, permessage-deflate"),
        (&d, "permessage-deflate; foo"),
        (&d, "permessage-deflate; client_max_window_bits"),
        (&d, "permessage-deflate; server_max_window_bits=20"),
        (
            &limited,
            "permessage-deflate; server_no_context_takeover; server_max_window_bits=11",
        ),
        (&limited, "permessage-deflate; server_max_window_bits=10"),
    ] {
        let error = accept_server_response(config, [answer.as_bytes()]).expect_err(answer);
        assert_eq!(error.code(), "ERR_WS_HANDSHAKE_EXTENSION");
    }
}

#[test]
fn the_server_handshake_carries_the_extension_only_when_configured() {
    let fields: Vec<(&[u8], &[u8])> = vec![
        (b"Upgrade", b"websocket"),
        (b"Connection", b"Upgrade"),
        (b"Sec-WebSocket-Key", b"dGhlIHNhbXBsZSBub25jZQ=="),
        (b"Sec-WebSocket-Version", b"13"),
        (
            b"Sec-WebSocket-Extensions",
            b"permessage-deflate; client_max_window_bits",
        ),
    ];
    let off = server_handshake(b"GET", &fields, &HandshakeOptions::default()).unwrap();
    assert_eq!((off.deflate, off.extensions), (None, None));
    let on = HandshakeOptions {
        permessage_deflate: Some(DeflateConfig::default()),
        ..HandshakeOptions::default()
    };
    let accepted = server_handshake(b"GET", &fields, &on).unwrap();
    assert!(accepted.deflate.is_some());
    assert!(accepted
        .response_headers()
        .contains(&("Sec-WebSocket-Extensions", "permessage-deflate".into())));
}
