//! Certificates and private keys from PEM: chains (leaf first), and RSA (PKCS#1 or PKCS#8),
//! ECDSA (SEC1 or PKCS#8) and Ed25519 (PKCS#8) keys, checked to match their certificate.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use rustls::RootCertStore;

use crate::error::TlsError;

/// Every certificate in `pem`, in order (a chain is leaf first).
pub fn certificates(pem: &[u8], what: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::Config(format!("{what}: cannot read PEM certificates: {e:?}")))?;
    if certs.is_empty() {
        return Err(TlsError::Config(format!(
            "{what}: no certificate (expected a PEM block \"BEGIN CERTIFICATE\")"
        )));
    }
    Ok(certs)
}

/// The first private key in `pem`.
pub fn private_key(pem: &[u8], what: &str) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| {
        TlsError::Config(format!(
            "{what}: cannot read a PEM private key (PKCS#8, PKCS#1 or SEC1): {e:?}"
        ))
    })
}

/// A certificate chain with its key, ready to sign handshakes.
pub fn certified_key(
    provider: &CryptoProvider,
    chain_pem: &[u8],
    key_pem: &[u8],
    what: &str,
) -> Result<Arc<CertifiedKey>, TlsError> {
    let chain = certificates(chain_pem, what)?;
    let key = private_key(key_pem, what)?;
    let signing = provider
        .key_provider
        .load_private_key(key)
        .map_err(|e| TlsError::Config(format!("{what}: unsupported private key: {e}")))?;
    let ck = CertifiedKey::new(chain, signing);
    ck.keys_match().map_err(|e| {
        TlsError::Config(format!(
            "{what}: the key does not match the certificate ({e})"
        ))
    })?;
    Ok(Arc::new(ck))
}

/// A root store of the CA certificates in `pem`.
pub fn roots(pem: &[u8], what: &str) -> Result<RootCertStore, TlsError> {
    let mut store = RootCertStore::empty();
    for cert in certificates(pem, what)? {
        store
            .add(cert)
            .map_err(|e| TlsError::Config(format!("{what}: not a usable CA certificate: {e}")))?;
    }
    Ok(store)
}

/// Every certificate revocation list in `pem` (blocks `BEGIN X509 CRL`).
pub fn crls(
    pem: &[u8],
    what: &str,
) -> Result<Vec<CertificateRevocationListDer<'static>>, TlsError> {
    let crls = CertificateRevocationListDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            TlsError::Config(format!("{what}: cannot read PEM revocation lists: {e:?}"))
        })?;
    if crls.is_empty() {
        return Err(TlsError::Config(format!(
            "{what}: no revocation list (expected a PEM block \"BEGIN X509 CRL\")"
        )));
    }
    Ok(crls)
}

/// Mozilla's root store as shipped in `webpki-roots` (what node:tls bundles by default).
pub fn bundled_roots() -> RootCertStore {
    RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    }
}

/// Adds the operating system's trusted roots; returns how many were added.
pub fn add_system_roots(store: &mut RootCertStore) -> Result<usize, TlsError> {
    let found = rustls_native_certs::load_native_certs();
    if found.certs.is_empty() {
        if let Some(e) = found.errors.first() {
            return Err(TlsError::Config(format!(
                "cannot load the system's roots: {e}"
            )));
        }
    }
    let (added, _ignored) = store.add_parsable_certificates(found.certs);
    Ok(added)
}
