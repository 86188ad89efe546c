//! The server's opening handshake on plain header data (RFC 6455 §4.2).

use std::rc::Rc;

use netloop_ws::handshake::{
    accept_key, client_key, is_websocket_request, server_handshake, HandshakeOptions,
};
use netloop_ws::HandshakeError;

const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

fn request(extra: &[(&'static str, &'static str)]) -> Vec<(&'static [u8], &'static [u8])> {
    let mut fields: Vec<(&[u8], &[u8])> = vec![
        (b"Host", b"server.example.com"),
        (b"upgrade", b"WebSocket"),
        (b"Connection", b"keep-alive, Upgrade"),
        (b"Sec-WebSocket-Key", KEY.as_bytes()),
        (b"Sec-WebSocket-Version", b"13"),
    ];
    for (name, value) in extra {
        fields.retain(|(n, _)| !n.eq_ignore_ascii_case(name.as_bytes()));
        if !value.is_empty() {
            fields.push((name.as_bytes(), value.as_bytes()));
        }
    }
    fields
}

fn refused(extra: &[(&'static str, &'static str)]) -> HandshakeError {
    server_handshake(b"GET", &request(extra), &HandshakeOptions::default()).expect_err("refused")
}

#[test]
fn a_valid_request_is_accepted_with_rfc_6455s_accept_value() {
    let accepted = server_handshake(b"GET", &request(&[]), &HandshakeOptions::default()).unwrap();
    assert_eq!(accepted.accept, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    assert_eq!(accepted.protocol, None);
    let fields = accepted.response_headers();
    assert!(fields.contains(&("Upgrade", "websocket".into())));
    assert!(fields.contains(&("Connection", "Upgrade".into())));
    assert!(fields.contains(&(
        "Sec-WebSocket-Accept",
        "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".into()
    )));
    assert!(is_websocket_request(request(&[]).iter().copied()));
}

#[test]
fn only_version_13_is_accepted_and_the_refusal_names_it() {
    for version in ["8", "12", "14", ""] {
        let error = refused(&[("Sec-WebSocket-Version", version)]);
        assert_eq!(error, HandshakeError::UnsupportedVersion);
        assert_eq!(error.status(), 426);
        assert_eq!(error.headers(), [("Sec-WebSocket-Version", "13")]);
    }
}

#[test]
fn a_missing_or_malformed_key_is_refused_with_400() {
    for key in [
        "",
        "short==",
        "dGhlIHNhbXBsZSBub25jZQ",
        "dGhlIHNhbXBsZSBub25jZR==",
        "dGhlIHNhbXBsZSBub25j!Q==",
    ] {
        let error = refused(&[("Sec-WebSocket-Key", key)]);
        assert_eq!(error, HandshakeError::BadKey, "{key:?}");
        assert_eq!(error.status(), 400);
    }
    let mut twice = request(&[]);
    twice.push((b"Sec-WebSocket-Key", KEY.as_bytes()));
    let error = server_handshake(b"GET", &twice, &HandshakeOptions::default()).unwrap_err();
    assert_eq!(error, HandshakeError::BadKey);
}

#[test]
fn a_request_without_the_upgrade_tokens_or_not_a_get_is_refused() {
    assert_eq!(
        refused(&[("Connection", "keep-alive")]),
        HandshakeError::NotUpgrade
    );
    assert_eq!(refused(&[("Upgrade", "h2c")]), HandshakeError::NotUpgrade);
    let error = server_handshake(b"POST", &request(&[]), &HandshakeOptions::default()).unwrap_err();
    assert_eq!(
        (error.clone(), error.status()),
        (HandshakeError::NotGet, 405)
    );
}

#[test]
fn the_first_offered_subprotocol_the_server_speaks_is_chosen() {
    let options = HandshakeOptions {
        subprotocols: vec!["chat".into(), "superchat".into()],
        origin_check: None,
        ..HandshakeOptions::default()
    };
    let offer = request(&[("Sec-WebSocket-Protocol", "v2.bookings, superchat , chat")]);
    let accepted = server_handshake(b"GET", &offer, &options).unwrap();
    assert_eq!(accepted.protocol.as_deref(), Some("superchat"));
    assert!(accepted
        .response_headers()
        .contains(&("Sec-WebSocket-Protocol", "superchat".into())));
    let none = request(&[("Sec-WebSocket-Protocol", "mqtt")]);
    assert_eq!(
        server_handshake(b"GET", &none, &options).unwrap().protocol,
        None,
        "no match: accepted without one"
    );
}

#[test]
fn the_origin_check_sees_the_origin_and_can_refuse_with_403() {
    let options = HandshakeOptions {
        subprotocols: Vec::new(),
        origin_check: Some(Rc::new(|origin: Option<&[u8]>| {
            origin == Some(&b"https://good.example"[..])
        })),
        ..HandshakeOptions::default()
    };
    let good = request(&[("Origin", "https://good.example")]);
    assert!(server_handshake(b"GET", &good, &options).is_ok());
    let bad = request(&[("Origin", "https://evil.example")]);
    let error = server_handshake(b"GET", &bad, &options).unwrap_err();
    assert_eq!(
        (error.clone(), error.status(), error.code()),
        (
            HandshakeError::OriginRefused,
            403,
            "ERR_WS_HANDSHAKE_ORIGIN"
        )
    );
    assert!(
        server_handshake(b"GET", &request(&[]), &options).is_err(),
        "no Origin: the check decides"
    );
}

#[test]
fn client_keys_are_fresh_valid_keys() {
    let (a, b) = (client_key(), client_key());
    assert_ne!(a, b);
    let fields = request(&[]);
    let mut with_a: Vec<(&[u8], &[u8])> = fields
        .into_iter()
        .filter(|(n, _)| *n != b"Sec-WebSocket-Key")
        .collect();
    with_a.push((b"Sec-WebSocket-Key", a.as_bytes()));
    let accepted = server_handshake(b"GET", &with_a, &HandshakeOptions::default()).unwrap();
    assert_eq!(accepted.accept, accept_key(a.as_bytes()));
}
