//! Server certificate selection by the client's SNI host name: exact names, then wildcards
//! (`*.example.com` matches one label), then the default certificates: the first of those
//! (in the order given) whose key can sign with a scheme the client offers, as OpenSSL picks
//! among a context's certificates of different key types (node:tls's `cert`/`key` arrays:
//! an ECDSA certificate for clients that take it, an RSA one for the others).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// Certificates by host name with a default (Netty's `SniHandler` mapping, node:tls's `SNI`
/// host map). Shared by every connection of a context.
#[derive(Default)]
pub struct SniResolver {
    /// In order of preference.
    default: Vec<Arc<CertifiedKey>>,
    exact: HashMap<String, Arc<CertifiedKey>>,
    wildcard: HashMap<String, Arc<CertifiedKey>>,
}

impl SniResolver {
    /// A resolver with `default` for clients that send no (or an unknown) name.
    pub fn new(default: Option<Arc<CertifiedKey>>) -> Self {
        SniResolver {
            default: default.into_iter().collect(),
            ..Default::default()
        }
    }

    /// Adds a default certificate after those already there, for clients that cannot verify
    /// the earlier ones' signatures (another key type).
    pub fn add_default(&mut self, key: Arc<CertifiedKey>) {
        self.default.push(key);
    }

    /// Serves `key` to clients asking for `host` (`*.example.com` for one-label wildcards).
    pub fn add(&mut self, host: &str, key: Arc<CertifiedKey>) {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        match host.strip_prefix("*.") {
            Some(suffix) => self.wildcard.insert(suffix.to_string(), key),
            None => self.exact.insert(host, key),
        };
    }

    /// The certificate for `name` (none: the first default).
    pub fn lookup(&self, name: Option<&str>) -> Option<Arc<CertifiedKey>> {
        self.named(name).or_else(|| self.default.first()).cloned()
    }

    /// The certificate of an SNI entry for `name`, if one matches.
    fn named(&self, name: Option<&str>) -> Option<&Arc<CertifiedKey>> {
        let name = name?.trim_end_matches('.').to_ascii_lowercase();
        if let Some(k) = self.exact.get(&name) {
            return Some(k);
        }
        let (_, parent) = name.split_once('.')?;
        self.wildcard.get(parent)
    }

    /// The default certificate for a client offering `schemes`: the first that can sign with
    /// one of them, else the first (the handshake then fails as it would with one).
    fn default_for(&self, schemes: &[rustls::SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        self.default
            .iter()
            .find(|k| k.key.choose_scheme(schemes).is_some())
            .or_else(|| self.default.first())
            .cloned()
    }

    /// True if no certificate at all is configured.
    pub fn is_empty(&self) -> bool {
        self.default.is_empty() && self.exact.is_empty() && self.wildcard.is_empty()
    }
}

impl ResolvesServerCert for SniResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        match self.named(hello.server_name()) {
            Some(k) => Some(k.clone()),
            None => self.default_for(hello.signature_schemes()),
        }
    }
}

impl fmt::Debug for SniResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SniResolver")
            .field("default", &self.default.len())
            .field("exact", &self.exact.keys().collect::<Vec<_>>())
            .field("wildcard", &self.wildcard.keys().collect::<Vec<_>>())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::SignatureScheme as S;

    /// A self-signed certificate for `name` with a key made by `alg`, as a CertifiedKey.
    fn key(name: &str, alg: &'static rcgen::SignatureAlgorithm) -> Arc<CertifiedKey> {
        let kp = rcgen::KeyPair::generate_for(alg).unwrap();
        let cert = rcgen::CertificateParams::new(vec![name.to_string()])
            .unwrap()
            .self_signed(&kp)
            .unwrap();
        let provider = rustls::crypto::ring::default_provider();
        crate::pem::certified_key(
            &provider,
            cert.pem().as_bytes(),
            kp.serialize_pem().as_bytes(),
            None,
            None,
            "test",
        )
        .unwrap()
    }

    #[test]
    fn a_client_gets_the_first_default_it_can_verify_and_a_named_entry_whatever_it_offers() {
        let ecdsa = key("localhost", &rcgen::PKCS_ECDSA_P256_SHA256);
        let ed = key("localhost", &rcgen::PKCS_ED25519);
        let named = key("a.test", &rcgen::PKCS_ECDSA_P256_SHA256);
        let mut r = SniResolver::new(Some(ecdsa.clone()));
        r.add_default(ed.clone());
        r.add("a.test", named.clone());
        let pick = |schemes: &[S]| r.default_for(schemes).unwrap();
        assert!(Arc::ptr_eq(
            &pick(&[S::ECDSA_NISTP256_SHA256, S::ED25519]),
            &ecdsa
        ));
        assert!(
            Arc::ptr_eq(&pick(&[S::ED25519]), &ed),
            "the only one it verifies"
        );
        assert!(
            Arc::ptr_eq(&pick(&[S::RSA_PSS_SHA256]), &ecdsa),
            "none fits: the first (the handshake fails as with one)"
        );
        assert!(Arc::ptr_eq(&r.lookup(Some("a.test")).unwrap(), &named));
        assert!(Arc::ptr_eq(&r.lookup(None).unwrap(), &ecdsa));
    }
}
