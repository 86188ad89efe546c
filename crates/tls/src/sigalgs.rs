//! node:tls's `sigalgs`: the signature schemes a context accepts and uses, narrowed from
//! rustls's (which has no SHA-1 or DSA to begin with).
//!
//! Ground rules:
//! - Names are OpenSSL's, compared without regard to case: `ecdsa_secp256r1_sha256`,
//!   `rsa_pss_rsae_sha256`, `rsa_pkcs1_sha256`, `ed25519`, and the `ALG+HASH` forms
//!   (`ECDSA+SHA256`, `RSA-PSS+SHA256`, `RSA+SHA256`). A name rustls cannot use is an error
//!   that lists the known ones, never a scheme dropped in silence.
//! - The list narrows both directions, as OpenSSL's one list does: what this side offers to
//!   verify (a client's `signature_algorithms`, a server's CertificateRequest) and what its
//!   own keys may sign with. The peer's signatures are still checked by the strict verifier.
//! - Wrappers only filter lists; every verdict is the wrapped verifier's or key's.

use std::sync::Arc;

use rustls::client::danger::{ServerCertVerified, ServerCertVerifier};
use rustls::client::ResolvesClientCert;
use rustls::pki_types::{CertificateDer, ServerName, SubjectPublicKeyInfoDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::sign::{CertifiedKey, Signer, SigningKey};
use rustls::{DistinguishedName, SignatureAlgorithm, SignatureScheme as S};

use crate::error::TlsError;
use crate::verify::delegate_signature_checks;

/// The schemes rustls (ring) can sign and verify, by their OpenSSL names.
const NAMES: [(&str, &str, S); 10] = [
    (
        "ecdsa_secp256r1_sha256",
        "ecdsa+sha256",
        S::ECDSA_NISTP256_SHA256,
    ),
    (
        "ecdsa_secp384r1_sha384",
        "ecdsa+sha384",
        S::ECDSA_NISTP384_SHA384,
    ),
    (
        "ecdsa_secp521r1_sha512",
        "ecdsa+sha512",
        S::ECDSA_NISTP521_SHA512,
    ),
    ("rsa_pss_rsae_sha256", "rsa-pss+sha256", S::RSA_PSS_SHA256),
    ("rsa_pss_rsae_sha384", "rsa-pss+sha384", S::RSA_PSS_SHA384),
    ("rsa_pss_rsae_sha512", "rsa-pss+sha512", S::RSA_PSS_SHA512),
    ("rsa_pkcs1_sha256", "rsa+sha256", S::RSA_PKCS1_SHA256),
    ("rsa_pkcs1_sha384", "rsa+sha384", S::RSA_PKCS1_SHA384),
    ("rsa_pkcs1_sha512", "rsa+sha512", S::RSA_PKCS1_SHA512),
    ("ed25519", "ed25519", S::ED25519),
];

/// The schemes `names` lists, in order; None for an empty list (rustls's own).
pub(crate) fn schemes(names: &[String]) -> Result<Option<Arc<[S]>>, TlsError> {
    if names.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let lower = name.trim().to_ascii_lowercase();
        let found = NAMES
            .iter()
            .find(|(openssl, plus, _)| lower == *openssl || lower == *plus);
        match found {
            Some((_, _, s)) if !out.contains(s) => out.push(*s),
            Some(_) => {}
            None => {
                let known: Vec<&str> = NAMES.iter().map(|(n, _, _)| *n).collect();
                return Err(TlsError::Config(format!(
                    "sigalgs: {name:?} is not a signature scheme netloop can use (known: {})",
                    known.join(", ")
                )));
            }
        }
    }
    Ok(Some(out.into()))
}

fn narrowed(all: Vec<S>, allowed: &[S]) -> Vec<S> {
    all.into_iter().filter(|s| allowed.contains(s)).collect()
}

/// A signing key that signs only with the allowed schemes.
#[derive(Debug)]
struct NarrowedKey {
    inner: Arc<dyn SigningKey>,
    allowed: Arc<[S]>,
}

impl SigningKey for NarrowedKey {
    fn choose_scheme(&self, offered: &[S]) -> Option<Box<dyn Signer>> {
        let both: Vec<S> = offered
            .iter()
            .copied()
            .filter(|s| self.allowed.contains(s))
            .collect();
        self.inner.choose_scheme(&both)
    }

    fn public_key(&self) -> Option<SubjectPublicKeyInfoDer<'_>> {
        self.inner.public_key()
    }

    fn algorithm(&self) -> SignatureAlgorithm {
        self.inner.algorithm()
    }
}

/// `key` signing only with `allowed` (unchanged without a list).
pub(crate) fn narrow_key(key: Arc<CertifiedKey>, allowed: &Option<Arc<[S]>>) -> Arc<CertifiedKey> {
    let Some(allowed) = allowed else { return key };
    let mut ck = CertifiedKey::new(
        key.cert.clone(),
        Arc::new(NarrowedKey {
            inner: key.key.clone(),
            allowed: allowed.clone(),
        }),
    );
    ck.ocsp = key.ocsp.clone();
    Arc::new(ck)
}

/// A client's one certificate, signing only with the allowed schemes.
#[derive(Debug)]
pub(crate) struct OneClientCert(pub(crate) Arc<CertifiedKey>);

impl ResolvesClientCert for OneClientCert {
    fn resolve(&self, _hints: &[&[u8]], _schemes: &[S]) -> Option<Arc<CertifiedKey>> {
        Some(self.0.clone())
    }

    fn has_certs(&self) -> bool {
        true
    }
}

/// A client's verifier of servers that offers only the allowed schemes.
#[derive(Debug)]
pub(crate) struct NarrowedServerVerifier {
    pub(crate) inner: Arc<dyn ServerCertVerifier>,
    pub(crate) allowed: Arc<[S]>,
}

impl ServerCertVerifier for NarrowedServerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn root_hint_subjects(&self) -> Option<&[DistinguishedName]> {
        self.inner.root_hint_subjects()
    }

    delegate_signature_checks!(inner, |v: &Self, all| narrowed(all, &v.allowed));
}

/// A server's verifier of client certificates that asks only for the allowed schemes.
#[derive(Debug)]
pub(crate) struct NarrowedClientVerifier {
    pub(crate) inner: Arc<dyn ClientCertVerifier>,
    pub(crate) allowed: Arc<[S]>,
}

impl ClientCertVerifier for NarrowedClientVerifier {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        self.inner
            .verify_client_cert(end_entity, intermediates, now)
    }

    delegate_signature_checks!(inner, |v: &Self, all| narrowed(all, &v.allowed));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(names: &[&str]) -> Result<Option<Arc<[S]>>, TlsError> {
        schemes(&names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn names_are_openssls_in_either_form_in_the_order_given() {
        let got = list(&[
            "RSA-PSS+SHA256",
            "ecdsa_secp256r1_sha256",
            "ECDSA+SHA256",
            "ed25519",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            &*got,
            &[S::RSA_PSS_SHA256, S::ECDSA_NISTP256_SHA256, S::ED25519]
        );
        assert!(list(&[]).unwrap().is_none());
    }

    #[test]
    fn a_scheme_rustls_cannot_use_is_an_error_listing_the_known_ones() {
        let e = list(&["ecdsa_sha1"]).unwrap_err();
        assert_eq!(e.code(), "ERR_TLS_INVALID_CONTEXT");
        assert!(e.to_string().contains("rsa_pss_rsae_sha256"), "{e}");
    }
}
