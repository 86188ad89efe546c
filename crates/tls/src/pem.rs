//! Certificates and private keys from PEM: chains (leaf first), and RSA (PKCS#1 or PKCS#8),
//! ECDSA (SEC1 or PKCS#8) and Ed25519 (PKCS#8) keys, checked to match their certificate. A key
//! may be passphrase-protected PKCS#8 (`ENCRYPTED PRIVATE KEY`, what `openssl genpkey -aes256`
//! and `openssl pkcs8 -topk8` write: PBES2 with PBKDF2 or scrypt, AES-CBC); OpenSSL's legacy
//! encrypted PEM (`Proc-Type: 4,ENCRYPTED`) is refused with the command that converts it.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{
    CertificateDer, CertificateRevocationListDer, PrivateKeyDer, PrivatePkcs8KeyDer,
};
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

const ENCRYPTED_BEGIN: &str = "-----BEGIN ENCRYPTED PRIVATE KEY-----";
const ENCRYPTED_END: &str = "-----END ENCRYPTED PRIVATE KEY-----";

/// The first private key in `pem`, decrypted with `passphrase` if it is encrypted (a
/// passphrase given for a key that is not is ignored, as node:tls does).
pub fn private_key(
    pem: &[u8],
    what: &str,
    passphrase: Option<&[u8]>,
) -> Result<PrivateKeyDer<'static>, TlsError> {
    let text = String::from_utf8_lossy(pem);
    if let Some(start) = text.find(ENCRYPTED_BEGIN) {
        return encrypted_key(&text[start..], what, passphrase);
    }
    if text.contains("Proc-Type: 4,ENCRYPTED") {
        return Err(TlsError::Config(format!(
            "{what}: OpenSSL's legacy encrypted PEM is not supported; convert the key to \
             encrypted PKCS#8 with `openssl pkcs8 -topk8 -v2 aes-256-cbc -in KEY -out NEW`"
        )));
    }
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| {
        TlsError::Config(format!(
            "{what}: cannot read a PEM private key (PKCS#8, PKCS#1 or SEC1): {e:?}"
        ))
    })
}

/// Decrypts the `ENCRYPTED PRIVATE KEY` block `text` starts with.
fn encrypted_key(
    text: &str,
    what: &str,
    passphrase: Option<&[u8]>,
) -> Result<PrivateKeyDer<'static>, TlsError> {
    let Some(passphrase) = passphrase else {
        return Err(TlsError::Config(format!(
            "{what}: the private key is encrypted: pass its passphrase"
        )));
    };
    let end = text
        .find(ENCRYPTED_END)
        .map(|i| i + ENCRYPTED_END.len())
        .ok_or_else(|| TlsError::Config(format!("{what}: an encrypted key block has no end")))?;
    let (_, der) = pkcs8::der::pem::decode_vec(&text.as_bytes()[..end])
        .map_err(|e| TlsError::Config(format!("{what}: cannot read the encrypted key: {e}")))?;
    let info = pkcs8::EncryptedPrivateKeyInfo::try_from(der.as_slice())
        .map_err(|e| TlsError::Config(format!("{what}: cannot read the encrypted key: {e}")))?;
    let plain = info.decrypt(passphrase).map_err(|e| {
        TlsError::Config(format!(
            "{what}: cannot decrypt the private key (a wrong passphrase, or an unsupported \
             scheme: {e})"
        ))
    })?;
    Ok(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        plain.as_bytes().to_vec(),
    )))
}

/// A certificate chain with its key, ready to sign handshakes.
pub fn certified_key(
    provider: &CryptoProvider,
    chain_pem: &[u8],
    key_pem: &[u8],
    passphrase: Option<&[u8]>,
    ocsp: Option<&[u8]>,
    what: &str,
) -> Result<Arc<CertifiedKey>, TlsError> {
    let chain = certificates(chain_pem, what)?;
    let key = private_key(key_pem, what, passphrase)?;
    let signing = provider
        .key_provider
        .load_private_key(key)
        .map_err(|e| TlsError::Config(format!("{what}: unsupported private key: {e}")))?;
    let mut ck = CertifiedKey::new(chain, signing);
    ck.ocsp = ocsp.map(<[u8]>::to_vec);
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

/// `der` as one PEM block labelled `label` (identities read from other forms become PEM, the
/// one form a context takes).
pub(crate) fn block(label: &str, der: &[u8], what: &str) -> Result<String, TlsError> {
    pkcs8::der::pem::encode_string(label, pkcs8::der::pem::LineEnding::LF, der)
        .map_err(|e| TlsError::Config(format!("{what}: {e}")))
}

impl crate::context::PemIdentity {
    /// node:tls's `cert` and `key` arrays as identities: each key (with its passphrase, if
    /// encrypted) paired with the certificate chain whose leaf it matches, in the keys' order.
    /// Every key must match one chain and every chain one key.
    pub fn pair(
        chains: &[Vec<u8>],
        keys: &[(Vec<u8>, Option<Vec<u8>>)],
    ) -> Result<Vec<crate::context::PemIdentity>, TlsError> {
        if chains.is_empty() || keys.is_empty() {
            return Err(TlsError::Config(
                "cert and key must be given together".into(),
            ));
        }
        let provider = rustls::crypto::ring::default_provider();
        let mut used = vec![false; chains.len()];
        let mut out = Vec::with_capacity(keys.len());
        for (i, (key, passphrase)) in keys.iter().enumerate() {
            let what = format!("key[{i}]");
            let found = chains.iter().enumerate().find(|(j, chain)| {
                !used[*j]
                    && certified_key(&provider, chain, key, passphrase.as_deref(), None, &what)
                        .is_ok()
            });
            let Some((j, chain)) = found else {
                // The key's own error (bad PEM, wrong passphrase) if it has one.
                let der = private_key(key, &what, passphrase.as_deref())?;
                provider.key_provider.load_private_key(der).map_err(|e| {
                    TlsError::Config(format!("{what}: unsupported private key: {e}"))
                })?;
                return Err(TlsError::Config(format!(
                    "{what} matches none of the cert chains given"
                )));
            };
            used[j] = true;
            out.push(match passphrase {
                Some(pass) => Self::with_passphrase(chain.clone(), key, pass, None, &what)?,
                None => crate::context::PemIdentity {
                    chain: chain.clone(),
                    key: key.clone(),
                    ocsp: None,
                },
            });
        }
        if let Some(j) = used.iter().position(|u| !u) {
            return Err(TlsError::Config(format!(
                "cert[{j}] matches none of the keys given (one chain per key, as node:tls)"
            )));
        }
        Ok(out)
    }

    /// `chain` and the private key in `key`, decrypted now with `passphrase` if it is
    /// encrypted (an identity with a passphrase of its own: an `SNI` entry's), with `ocsp` to
    /// staple. `what` names the option in errors.
    pub fn with_passphrase(
        chain: Vec<u8>,
        key: &[u8],
        passphrase: &[u8],
        ocsp: Option<Vec<u8>>,
        what: &str,
    ) -> Result<crate::context::PemIdentity, TlsError> {
        let (label, der) = match private_key(key, what, Some(passphrase))? {
            PrivateKeyDer::Pkcs1(k) => ("RSA PRIVATE KEY", k.secret_pkcs1_der().to_vec()),
            PrivateKeyDer::Sec1(k) => ("EC PRIVATE KEY", k.secret_sec1_der().to_vec()),
            PrivateKeyDer::Pkcs8(k) => ("PRIVATE KEY", k.secret_pkcs8_der().to_vec()),
            _ => {
                return Err(TlsError::Config(format!(
                    "{what}: an unsupported key format"
                )))
            }
        };
        let key = block(label, &der, what)?;
        Ok(crate::context::PemIdentity {
            chain,
            key: key.into_bytes(),
            ocsp,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pkcs8::der::pem::LineEnding;
    use pkcs8::pkcs5::pbes2;

    /// A PKCS#8 Ed25519 key (RFC 8410's example) and its encrypted PEM under `pass`.
    fn key_and_encrypted(pass: &str) -> (Vec<u8>, String) {
        let der: Vec<u8> = [
            &[
                0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70,
            ][..],
            &[0x04, 0x22, 0x04, 0x20],
            &[7u8; 32],
        ]
        .concat();
        let info = pkcs8::PrivateKeyInfo::try_from(der.as_slice()).unwrap();
        let params =
            pbes2::Parameters::pbkdf2_sha256_aes256cbc(2048, b"saltsalt", &[9u8; 16]).unwrap();
        let encrypted = info.encrypt_with_params(params, pass).unwrap();
        let pem = encrypted
            .to_pem("ENCRYPTED PRIVATE KEY", LineEnding::LF)
            .unwrap()
            .to_string();
        (der, pem)
    }

    #[test]
    fn an_encrypted_pkcs8_key_opens_with_its_passphrase_only() {
        let (der, pem) = key_and_encrypted("secret");
        let key = private_key(pem.as_bytes(), "key", Some(b"secret")).unwrap();
        assert_eq!(key.secret_der(), der.as_slice());
        let wrong = private_key(pem.as_bytes(), "key", Some(b"guess")).unwrap_err();
        assert!(wrong.to_string().contains("cannot decrypt"), "{wrong}");
        let none = private_key(pem.as_bytes(), "key", None).unwrap_err();
        assert!(none.to_string().contains("passphrase"), "{none}");
        assert_eq!(none.code(), "ERR_TLS_INVALID_CONTEXT");
    }

    #[test]
    fn a_legacy_encrypted_pem_is_refused_with_the_command_that_converts_it() {
        let legacy = "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,00\n\nAAAA\n-----END EC PRIVATE KEY-----\n";
        let e = private_key(legacy.as_bytes(), "key", Some(b"x")).unwrap_err();
        assert!(e.to_string().contains("openssl pkcs8 -topk8"), "{e}");
    }
}
