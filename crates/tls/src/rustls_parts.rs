//! The rustls pieces an [`SslContext`](crate::SslContext) is built from, each read from
//! [`SslOptions`]: the crypto provider (ring), the key log, CRLs, the verifiers, the protocol
//! versions and the trust store.

use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::{RootCertStore, SupportedProtocolVersion};
use std::sync::Arc;

use crate::error::TlsError;
use crate::keylog::KeyLogFile;
use crate::options::{SslOptions, TlsVersion};
use crate::pem;
use crate::suites;

/// ring, with the suites and groups `o` names, or netloop's defaults (AES-128-GCM preferred
/// over AES-256-GCM, as BoringSSL and Go do: as secure for TLS, cheaper per record, and
/// SHA-256 instead of SHA-384 in the key schedule).
pub(crate) fn provider(o: &SslOptions) -> Result<Arc<CryptoProvider>, TlsError> {
    let mut p = rustls::crypto::ring::default_provider();
    p.cipher_suites = if o.cipher_suites.is_empty() {
        suites::default_suites()
    } else {
        suites::cipher_suites(&o.cipher_suites)?
    };
    p.kx_groups = if o.groups.is_empty() {
        suites::default_groups()
    } else {
        suites::groups(&o.groups)?
    };
    Ok(Arc::new(p))
}

/// The key log `o` asks for, if any.
pub(crate) fn key_log(o: &SslOptions) -> Result<Option<Arc<dyn rustls::KeyLog>>, TlsError> {
    Ok(key_log_file(o)?.map(|f| Arc::new(f) as Arc<dyn rustls::KeyLog>))
}

pub(crate) fn key_log_file(o: &SslOptions) -> Result<Option<KeyLogFile>, TlsError> {
    o.key_log_file.as_deref().map(KeyLogFile::open).transpose()
}

/// A webpki verifier builder (a client's or a server's: two types with the same methods and
/// no trait in common) with `o`'s revocation lists, checked node:tls's way: the peer's own
/// certificate only, and an expired list fails.
macro_rules! with_revocation {
    ($builder:expr, $o:expr) => {{
        let crls = crls($o)?;
        let builder = $builder;
        if crls.is_empty() {
            builder
        } else {
            builder
                .with_crls(crls)
                .only_check_end_entity_revocation()
                .enforce_revocation_expiration()
        }
    }};
}
pub(crate) use with_revocation;

/// The revocation lists `o` carries (empty without `crl`).
pub(crate) fn crls(
    o: &SslOptions,
) -> Result<Vec<rustls::pki_types::CertificateRevocationListDer<'static>>, TlsError> {
    match &o.crl {
        Some(pem) => pem::crls(pem, "crl"),
        None => Ok(Vec::new()),
    }
}

/// The verifier of a client's view of servers: the context's roots and revocation lists.
pub(crate) fn server_verifier(
    o: &SslOptions,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<WebPkiServerVerifier>, TlsError> {
    let builder = WebPkiServerVerifier::builder_with_provider(trust(o)?, provider.clone());
    with_revocation!(builder, o)
        .build()
        .map_err(|e| TlsError::Config(format!("ca: {e}")))
}

pub(crate) fn versions(o: &SslOptions) -> Result<Vec<&'static SupportedProtocolVersion>, TlsError> {
    if o.min_version > o.max_version {
        return Err(TlsError::Config(format!(
            "minVersion {:?} is above maxVersion {:?}",
            o.min_version, o.max_version
        )));
    }
    let mut v = Vec::new();
    if o.max_version >= TlsVersion::Tls13 {
        v.push(&rustls::version::TLS13);
    }
    if o.min_version <= TlsVersion::Tls12 {
        v.push(&rustls::version::TLS12);
    }
    Ok(v)
}

pub(crate) fn trust(o: &SslOptions) -> Result<Arc<RootCertStore>, TlsError> {
    let mut store = match &o.ca {
        Some(pem) => pem::roots(pem, "ca")?,
        None => pem::bundled_roots(),
    };
    if o.system_roots {
        pem::add_system_roots(&mut store)?;
    }
    Ok(Arc::new(store))
}

pub(crate) fn rustls_err(what: &str) -> impl Fn(rustls::Error) -> TlsError + '_ {
    move |e| TlsError::Config(format!("{what}: {e}"))
}
