//! The alerts rustls does not send during a TLS 1.3 server handshake.
//!
//! rustls 0.23 closes without an alert on a few errors its record layer finds: an inner
//! plaintext without a content type, a record between the fragments of a handshake message,
//! too many empty records (its `PeerMisbehaved` errors that carry none). RFC 8446 asks for
//! unexpected_message (§5.1, §5.4), and tlsfuzzer checks it. Between the server's flight and
//! the client's Finished, the server's send key is its first application traffic key at
//! sequence number 0 (rustls switches to it after its Finished and sends nothing under it
//! before the client's Finished: session tickets come after), and the key log hands that
//! secret out (`SERVER_TRAFFIC_SECRET_0`, crate::capture): the engine seals the alert itself,
//! only while rustls still handshakes (once it took the Finished, its tickets used that
//! sequence number: sealing there would reuse a nonce).
//! Before the server chose a version (a ClientHello in fragments with another record between
//! them), nothing is protected yet and the alert goes in plaintext. After the handshake on
//! rustls's records the key and sequence number are rustls's alone, so those errors stay
//! silent closes there (the own record layer sends its alerts).
//!
//! Ground rules: a failure notes its candidate alert on the thread feeding rustls
//! (`candidate`), withdrawn when rustls queued an alert of its own (`alerted`); the engine
//! takes it right after the call that failed (`take`), on the same thread.

use std::cell::Cell;

use ring::{aead, hkdf};
use rustls::{AlertDescription, CipherSuite, PeerMisbehaved, SupportedCipherSuite};

use crate::exporter::expand_label;

thread_local! {
    static CANDIDATE: Cell<Option<AlertDescription>> = const { Cell::new(None) };
}

/// The alert RFC 8446 names for `e`, when rustls sends none for it.
fn alert_for(e: &rustls::Error) -> Option<AlertDescription> {
    use PeerMisbehaved as P;
    match e {
        rustls::Error::PeerMisbehaved(
            P::IllegalTlsInnerPlaintext
            | P::MessageInterleavedWithHandshakeMessage
            | P::RejectedEarlyDataInterleavedWithHandshakeMessage
            | P::TooManyEmptyFragments,
        ) => Some(AlertDescription::UnexpectedMessage),
        _ => None,
    }
}

/// rustls failed with `e`: notes the alert it may not have sent.
pub(super) fn candidate(e: &rustls::Error) {
    CANDIDATE.with(|c| c.set(alert_for(e)));
}

/// rustls queued an alert of its own: nothing to add.
pub(super) fn alerted() {
    CANDIDATE.with(|c| c.set(None));
}

/// The alert to add for the failure just noted, if any (and forgets it).
pub(super) fn take() -> Option<AlertDescription> {
    CANDIDATE.with(|c| c.take())
}

/// `alert` as a fatal alert record in plaintext (nothing protected yet).
pub(super) fn plaintext(alert: AlertDescription) -> Vec<u8> {
    vec![21, 3, 3, 0, 2, 2, u8::from(alert)]
}

/// `alert` as a fatal alert record sealed under the server's first application traffic
/// `secret` at sequence number 0, for `suite`. None for a suite that is not TLS 1.3's.
pub(super) fn sealed(
    secret: &[u8],
    suite: SupportedCipherSuite,
    alert: AlertDescription,
) -> Option<Vec<u8>> {
    let SupportedCipherSuite::Tls13(s) = suite else {
        return None;
    };
    let (alg, key_len, hash) = match s.common.suite {
        CipherSuite::TLS13_AES_128_GCM_SHA256 => (&aead::AES_128_GCM, 16, hkdf::HKDF_SHA256),
        CipherSuite::TLS13_AES_256_GCM_SHA384 => (&aead::AES_256_GCM, 32, hkdf::HKDF_SHA384),
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => {
            (&aead::CHACHA20_POLY1305, 32, hkdf::HKDF_SHA256)
        }
        _ => return None,
    };
    let mut key = vec![0u8; key_len];
    let mut iv = [0u8; aead::NONCE_LEN];
    expand_label(secret, hash, b"key", &[], &mut key).ok()?;
    expand_label(secret, hash, b"iv", &[], &mut iv).ok()?;
    let key = aead::LessSafeKey::new(aead::UnboundKey::new(alg, &key).ok()?);
    // Sequence number 0: the nonce is the IV itself.
    let nonce = aead::Nonce::assume_unique_for_key(iv);
    let mut body = vec![2, u8::from(alert), 21];
    let len = u16::try_from(body.len() + alg.tag_len())
        .ok()?
        .to_be_bytes();
    let header = [23, 3, 3, len[0], len[1]];
    let tag = key
        .seal_in_place_separate_tag(nonce, aead::Aad::from(header), &mut body)
        .ok()?;
    let mut record = header.to_vec();
    record.extend_from_slice(&body);
    record.extend_from_slice(tag.as_ref());
    Some(record)
}
