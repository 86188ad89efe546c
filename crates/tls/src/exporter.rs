//! Keying material exporters (RFC 5705, RFC 8446 §7.5; node:tls's `exportKeyingMaterial`,
//! what channel bindings such as `tls-exporter` (RFC 9266) are made of).
//!
//! A connection on rustls exports through rustls. A server connection on our own record layer
//! exports from the TLS 1.3 exporter secret it kept: rustls hands that secret out only to the
//! key log (`EXPORTER_SECRET`), so a server context on our record layer logs through
//! [`SecretTap`], which notes the secret for the handshake being fed on this thread
//! (crate::capture) and passes every line on to the context's key log file, if it has one.
//!
//! Ground rules: the secret stays with its connection's engine, as rustls keeps its own for
//! the same purpose, and is zeroed when the engine is dropped.

use ring::{digest, hkdf};
use rustls::KeyLog;

use crate::capture::{EXPORTER_SECRET, SERVER_TRAFFIC_SECRET};
use crate::error::TlsError;
use crate::keylog::KeyLogFile;

const EXPORTER_SECRET_LABEL: &str = "EXPORTER_SECRET";
const SERVER_TRAFFIC_SECRET_LABEL: &str = "SERVER_TRAFFIC_SECRET_0";

/// The key log of a TLS 1.3 server context: keeps exporter secrets (our record layer) and the
/// server's first application traffic secret (crate::engine::silent_alert), forwards
/// everything to the key log file.
#[derive(Debug)]
pub(crate) struct SecretTap {
    pub(crate) file: Option<KeyLogFile>,
}

impl KeyLog for SecretTap {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        if label == EXPORTER_SECRET_LABEL {
            EXPORTER_SECRET.note(secret);
        }
        if label == SERVER_TRAFFIC_SECRET_LABEL {
            SERVER_TRAFFIC_SECRET.note(secret);
        }
        if let Some(f) = &self.file {
            f.log(label, client_random, secret);
        }
    }

    fn will_log(&self, label: &str) -> bool {
        self.file.is_some()
            || label == EXPORTER_SECRET_LABEL
            || label == SERVER_TRAFFIC_SECRET_LABEL
    }
}

/// A TLS 1.3 exporter secret. Its length is its suite's hash's: 48 bytes for SHA-384, 32 for
/// SHA-256.
pub(crate) struct Exporter {
    secret: Vec<u8>,
}

/// An HKDF output length.
struct Len(usize);

impl hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

impl Exporter {
    pub(crate) fn new(secret: Vec<u8>) -> Exporter {
        Exporter { secret }
    }

    /// Fills `out` with TLS-Exporter(`label`, `context`, `out.len()`) (RFC 8446 §7.5; an
    /// absent context is the empty one there).
    pub(crate) fn export(
        &self,
        out: &mut [u8],
        label: &[u8],
        context: Option<&[u8]>,
    ) -> Result<(), TlsError> {
        let (alg, hash) = if self.secret.len() == 48 {
            (hkdf::HKDF_SHA384, &digest::SHA384)
        } else {
            (hkdf::HKDF_SHA256, &digest::SHA256)
        };
        let empty = digest::digest(hash, b"");
        let mut derived = vec![0u8; hash.output_len()];
        expand_label(&self.secret, alg, label, empty.as_ref(), &mut derived)?;
        let context = digest::digest(hash, context.unwrap_or_default());
        expand_label(&derived, alg, b"exporter", context.as_ref(), out)
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.secret.iter_mut().for_each(|b| *b = 0);
    }
}

/// HKDF-Expand-Label(`secret`, `label`, `context`, `out.len()`) (RFC 8446 §7.1) into `out`.
pub(crate) fn expand_label(
    secret: &[u8],
    alg: hkdf::Algorithm,
    label: &[u8],
    context: &[u8],
    out: &mut [u8],
) -> Result<(), TlsError> {
    let bad = |what: &str| TlsError::InvalidState(format!("exportKeyingMaterial: {what}"));
    let length = u16::try_from(out.len()).map_err(|_| bad("too much keying material asked for"))?;
    let full = 6 + label.len();
    let label_len = u8::try_from(full).map_err(|_| bad("a label longer than 249 bytes"))?;
    let context_len = u8::try_from(context.len()).map_err(|_| bad("a context hash too long"))?;
    let length = length.to_be_bytes();
    let info: [&[u8]; 6] = [
        &length,
        &[label_len],
        b"tls13 ",
        label,
        &[context_len],
        context,
    ];
    hkdf::Prk::new_less_safe(alg, secret)
        .expand(&info, Len(out.len()))
        .and_then(|okm| okm.fill(out))
        .map_err(|_| bad("too much keying material asked for"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tap_notes_the_exporter_secret_and_no_other() {
        let tap = SecretTap { file: None };
        assert!(tap.will_log(EXPORTER_SECRET_LABEL));
        assert!(!tap.will_log("CLIENT_TRAFFIC_SECRET_0"));
        let ((), got) = EXPORTER_SECRET.watch(|| {
            tap.log(EXPORTER_SECRET_LABEL, &[1], &[7; 32]);
            tap.log("CLIENT_TRAFFIC_SECRET_0", &[1], &[1; 32]);
        });
        assert_eq!(got, Some(vec![7; 32]));
    }

    #[test]
    fn export_depends_on_the_label_the_context_and_the_length() {
        let e = Exporter::new(vec![3; 32]);
        let mut a = [0u8; 32];
        let mut b = [0u8; 32];
        e.export(&mut a, b"EXPERIMENTAL a", None).unwrap();
        e.export(&mut b, b"EXPERIMENTAL a", Some(b"")).unwrap();
        assert_eq!(a, b, "TLS 1.3: no context is the empty context");
        e.export(&mut b, b"EXPERIMENTAL b", None).unwrap();
        assert_ne!(a, b);
        e.export(&mut b, b"EXPERIMENTAL a", Some(b"ctx")).unwrap();
        assert_ne!(a, b);
        let mut long = [0u8; 64];
        e.export(&mut long, b"EXPERIMENTAL a", None).unwrap();
        assert_ne!(long[..32], a, "the length is part of the label's info");
        assert!(e.export(&mut [0u8; 9000], b"x", None).is_err());
        assert!(e.export(&mut a, &[b'x'; 250], None).is_err());
    }
}
