//! Records a server cannot accept during a TLS 1.3 handshake (after its flight, before the
//! client's Finished) are answered with an alert, on both record paths (rustls's buffered
//! handshake and the unbuffered one before the experimental own layer): zero-length and
//! all-padding records under the client's handshake keys, data between the fragments of a
//! handshake message, a zero-length plaintext handshake record (tlsfuzzer's probes). The
//! client (rustls) reads the server's flight and then the alert, under the server's first
//! application key; the records are sealed with keys derived from the client's key log.

use crate::rustls_peer;

use std::sync::{Arc, Mutex};

use netloop_tls::rustls::{self, AlertDescription, ClientConnection};
use netloop_transport::Bytes;
use ring::hkdf;
use rustls_peer::*;

/// Keeps the client's handshake and first application traffic secrets (from its key log).
#[derive(Debug, Default)]
struct HandshakeSecret(Mutex<Option<Vec<u8>>>, Mutex<Option<Vec<u8>>>);

impl rustls::KeyLog for HandshakeSecret {
    fn log(&self, label: &str, _client_random: &[u8], secret: &[u8]) {
        if label == "CLIENT_HANDSHAKE_TRAFFIC_SECRET" {
            *self.0.lock().unwrap() = Some(secret.to_vec());
        }
        if label == "CLIENT_TRAFFIC_SECRET_0" {
            *self.1.lock().unwrap() = Some(secret.to_vec());
        }
    }
}

struct Len(usize);
impl hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

/// HKDF-Expand-Label(secret, label, "", len) with SHA-256 (RFC 8446 §7.1).
fn expand_label(secret: &[u8], label: &str, len: usize) -> Vec<u8> {
    let full = format!("tls13 {label}");
    let info = [
        &(len as u16).to_be_bytes()[..],
        &[full.len() as u8],
        full.as_bytes(),
        &[0u8],
    ];
    let prk = hkdf::Prk::new_less_safe(hkdf::HKDF_SHA256, secret);
    let okm = prk.expand(&info, Len(len)).unwrap();
    let mut out = vec![0u8; len];
    okm.fill(&mut out).unwrap();
    out
}

/// A client past the server's flight (its Finished not sent), the server, and the client's
/// handshake send keys.
type InHandshake = (
    ClientConnection,
    netloop_transport::EmbeddedChannel,
    RawKeys,
);

fn client_in_handshake(own: bool) -> InHandshake {
    let (c, s, keys, _) = client_in_handshake_with_app_keys(own);
    (c, s, keys)
}

/// As `client_in_handshake`, with the client's first application send keys too.
fn client_in_handshake_with_app_keys(
    own: bool,
) -> (
    ClientConnection,
    netloop_transport::EmbeddedChannel,
    RawKeys,
    RawKeys,
) {
    let log = Arc::new(HandshakeSecret::default());
    let mut c = client_with_key_log(log.clone());
    let (s, _h) = server(own);
    s.write_inbound(Bytes::from(client_records(&mut c)));
    feed_client(&mut c, &server_records(&s), usize::MAX).expect("server flight");
    assert!(
        !c.is_handshaking(),
        "the client completed (its Finished is queued)"
    );
    let secret = log
        .0
        .lock()
        .unwrap()
        .clone()
        .expect("client handshake secret");
    assert_eq!(
        c.negotiated_cipher_suite().unwrap().suite(),
        rustls::CipherSuite::TLS13_AES_128_GCM_SHA256
    );
    let keys = RawKeys::aes128(
        &expand_label(&secret, "key", 16),
        &expand_label(&secret, "iv", 12),
        0,
    );
    let app = log
        .1
        .lock()
        .unwrap()
        .clone()
        .expect("client traffic secret");
    let app = RawKeys::aes128(
        &expand_label(&app, "key", 16),
        &expand_label(&app, "iv", 12),
        0,
    );
    (c, s, keys, app)
}

/// What the client makes of the server's answer to `bad` (sent after the server's flight, in
/// place of the client's Finished): the alert it received, or None for a close without one.
fn answer(own: bool, bad: impl Fn(&mut RawKeys) -> Vec<u8>) -> Option<AlertDescription> {
    let (mut c, s, mut keys) = client_in_handshake(own);
    s.write_inbound(Bytes::from(bad(&mut keys)));
    assert!(!s.channel().is_active(), "own {own}: the server closed");
    assert!(
        s.check_exception().is_err(),
        "own {own}: the server reported an error"
    );
    match feed_client(&mut c, &server_records(&s), usize::MAX) {
        Err(rustls::Error::AlertReceived(a)) => Some(a),
        Ok(_) => None,
        Err(e) => panic!("own {own}: the client failed otherwise: {e:?}"),
    }
}

/// The answers of the own-layer path and of rustls's.
fn both(bad: impl Fn(&mut RawKeys) -> Vec<u8> + Copy) -> [Option<AlertDescription>; 2] {
    [answer(true, bad), answer(false, bad)]
}

/// Makes the records a case sends.
type Bad = fn(&mut RawKeys) -> Vec<u8>;

fn finished_then_data(k: &mut RawKeys) -> Vec<u8> {
    let mut both = k.seal(&[20, 0, 0, 32, 1, 2, 3, 22]);
    both.extend_from_slice(&k.seal(b"x\x17"));
    both
}

#[test]
fn records_refused_during_the_handshake_are_answered_with_an_alert() {
    use AlertDescription::*;
    let cases: [(&str, Bad, AlertDescription); 6] = [
        (
            "zero-length application data",
            |k| k.seal(&[23]),
            UnexpectedMessage,
        ),
        (
            "zero-length padded application data",
            |k| k.seal(&[23, 0, 0, 0]),
            UnexpectedMessage,
        ),
        // RFC 8446 §5.4: no non-zero octet in the inner plaintext. rustls sends nothing here;
        // the engine seals the alert (engine/silent_alert.rs).
        (
            "an all-padding record",
            |k| k.seal(&[0, 0, 0]),
            UnexpectedMessage,
        ),
        ("an empty inner record", |k| k.seal(&[0]), UnexpectedMessage),
        // §5.1: a record between a handshake message's fragments (a Finished begun).
        (
            "data between a Finished's fragments",
            finished_then_data,
            UnexpectedMessage,
        ),
        // §5.1 forbids zero-length handshake fragments without naming the alert; rustls's
        // record reader answers decode_error, on both paths.
        (
            "a zero-length handshake record",
            |_| vec![22, 3, 3, 0, 0],
            DecodeError,
        ),
    ];
    let got: Vec<_> = cases.iter().map(|(_, bad, _)| both(*bad)).collect();
    for ((name, _, want), got) in cases.iter().zip(got) {
        assert_eq!(got, [Some(*want), Some(*want)], "{name}");
    }
}

/// tlsfuzzer's "zero-length app data interleaved in handshake": the ClientHello split in
/// records of 2 bytes, a zero-length application data record after the first one, in one read
/// or two: unexpected_message (in plaintext: no keys yet), on both paths.
#[test]
fn a_zero_length_record_between_client_hello_fragments_is_answered_with_unexpected_message() {
    let hello = client_records(&mut client(None));
    let first: Vec<u8> = [&[22, 3, 3, 0, 2][..], &hello[5..7]].concat();
    for together in [true, false] {
        for own in [true, false] {
            let (s, _h) = server(own);
            let empty = [23, 3, 3, 0, 0];
            if together {
                s.write_inbound(Bytes::from([&first[..], &empty[..]].concat()));
            } else {
                s.write_inbound(Bytes::from(first.clone()));
                s.write_inbound(Bytes::from_static(&[23, 3, 3, 0, 0]));
            }
            let out = server_records(&s);
            assert_eq!(
                out,
                [21, 3, 3, 0, 2, 2, 10],
                "own {own}, one read {together}"
            );
            assert!(!s.channel().is_active());
        }
    }
}

/// The client's Finished and a record without a content type in one read: rustls takes the
/// Finished (and seals its session tickets under its first application key) before it fails,
/// so no alert may be sealed at that key's sequence number 0 again; whatever the server sends
/// opens in the client.
#[test]
fn a_refused_record_in_the_same_read_as_the_client_finished_never_reuses_a_ticket_nonce() {
    for own in [true, false] {
        let (mut c, s, _hs, mut app) = client_in_handshake_with_app_keys(own);
        let mut both = client_records(&mut c);
        both.extend_from_slice(&app.seal(&[0, 0, 0]));
        s.write_inbound(Bytes::from(both));
        assert!(!s.channel().is_active(), "own {own}: the server closed");
        match feed_client(&mut c, &server_records(&s), usize::MAX) {
            Ok(_) | Err(rustls::Error::AlertReceived(AlertDescription::UnexpectedMessage)) => {}
            Err(e) => panic!("own {own}: the client could not read the server: {e:?}"),
        }
    }
}
