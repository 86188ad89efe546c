//! PKCS#12 files (`.pfx`, `.p12`): node:tls's `pfx` option. A file holds a certificate chain
//! and its private key, each in bags that may be encrypted under a password, and a MAC over
//! the whole under the same password.
//!
//! What is read, as node:tls reads it on OpenSSL 3 without the legacy provider:
//! - integrity: the password MAC (HMAC with SHA-1 or SHA-2, key from RFC 7292's KDF); a file
//!   without one is accepted, as OpenSSL does;
//! - privacy: PBES2 (PBKDF2 or scrypt, AES-CBC: OpenSSL 3's and Java's default) and
//!   `pbeWithSHAAnd3-KeyTripleDES-CBC` (and its two-key form: older OpenSSL, Windows);
//!   RC2 and RC4 are refused with the command that converts the file, as node:tls refuses
//!   them;
//! - bags: certificates, shrouded (encrypted) and plain PKCS#8 keys, nested safe contents;
//!   CRL and secret bags are skipped.
//!
//! The leaf is the certificate with the key's `localKeyId`, or else the one whose public key
//! is the key's; the chain is the leaf and then each issuer found among the other
//! certificates. Certificates that are not on that chain are not used (node:tls would also
//! trust them as CAs; here `ca` says what is trusted).

use cms::content_info::ContentInfo;
use cms::encrypted_data::EncryptedData;
use der::asn1::{AnyRef, OctetString};
use der::{Decode, Encode};
use hmac::{digest, Hmac, Mac};
use pkcs12::kdf::{derive_key, Pkcs12KeyType};
use pkcs12::pbe_params::{EncryptedPrivateKeyInfo, Pkcs12PbeParams};
use pkcs12::pfx::Pfx;
use pkcs12::safe_bag::SafeBag;
use pkcs12::PKCS_12_PBE_WITH_SHAAND2_KEY_TRIPLE_DES_CBC as TDES2;
use pkcs12::PKCS_12_PBE_WITH_SHAAND3_KEY_TRIPLE_DES_CBC as TDES3;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use spki::AlgorithmIdentifierOwned;
use x509_cert::Certificate;

use crate::context::PemIdentity;
use crate::error::TlsError;
use crate::pem::block;

const ID_DATA: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.1");
const ID_ENCRYPTED_DATA: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.6");
const PBES2: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("1.2.840.113549.1.5.13");
const LOCAL_KEY_ID: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.21");
const SHA1: der::oid::ObjectIdentifier = der::oid::ObjectIdentifier::new_unwrap("1.3.14.3.2.26");
const SHA256: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.1");
const SHA384: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.2");
const SHA512: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.3");

/// More rounds of RFC 7292's KDF than this are refused: a file asking for more would hold
/// the thread that makes the context for minutes (OpenSSL writes 2,048).
const MAX_ROUNDS: i32 = 10_000_000;
/// Safe contents nest at most this deep.
const MAX_DEPTH: usize = 4;

impl PemIdentity {
    /// The identity in the PKCS#12 file `der`, opened with `password` (none: the empty one),
    /// with `ocsp` to staple. `what` names the option in errors.
    pub fn from_pfx(
        der: &[u8],
        password: Option<&[u8]>,
        ocsp: Option<Vec<u8>>,
        what: &str,
    ) -> Result<PemIdentity, TlsError> {
        let (chain, key) = read(der, password.unwrap_or_default())
            .map_err(|m| TlsError::Config(format!("{what}: {m}")))?;
        let mut pem_chain = String::new();
        for c in &chain {
            pem_chain.push_str(&block("CERTIFICATE", c, what)?);
        }
        Ok(PemIdentity {
            chain: pem_chain.into_bytes(),
            key: block("PRIVATE KEY", key.secret_pkcs8_der(), what)?.into_bytes(),
            ocsp,
        })
    }
}

/// The chain (leaf first) and the leaf's key in the PKCS#12 file `der`.
fn read(
    der: &[u8],
    password: &[u8],
) -> Result<(Vec<Vec<u8>>, PrivatePkcs8KeyDer<'static>), String> {
    let pfx = Pfx::from_der(der).map_err(|e| format!("not a PKCS#12 (PFX) file: {e}"))?;
    if pfx.auth_safe.content_type != ID_DATA {
        return Err("a PKCS#12 file in public-key integrity mode (signed) is not supported".into());
    }
    let content = pfx
        .auth_safe
        .content
        .decode_as::<OctetString>()
        .map_err(|e| format!("cannot read the PKCS#12 content: {e}"))?;
    let content = content.as_bytes();
    if let Some(mac) = &pfx.mac_data {
        check_mac(mac, content, password)?;
    }
    let safes = Vec::<ContentInfo>::from_der(content)
        .map_err(|e| format!("cannot read the PKCS#12 content: {e}"))?;
    let mut bags = Bags::default();
    for info in safes {
        let plain = if info.content_type == ID_DATA {
            info.content
                .decode_as::<OctetString>()
                .map_err(|e| format!("cannot read a PKCS#12 safe: {e}"))?
                .into_bytes()
        } else if info.content_type == ID_ENCRYPTED_DATA {
            let data = info
                .content
                .decode_as::<EncryptedData>()
                .map_err(|e| format!("cannot read an encrypted PKCS#12 safe: {e}"))?;
            let enc = data.enc_content_info;
            let Some(ciphertext) = enc.encrypted_content else {
                continue;
            };
            decrypt(&enc.content_enc_alg, ciphertext.as_bytes(), password)?
        } else {
            return Err(format!(
                "a PKCS#12 safe of type {} (public-key privacy mode) is not supported",
                info.content_type
            ));
        };
        bags.read(&plain, password, 0)?;
    }
    bags.identity()
}

/// True if `expected` is the HMAC-`$digest` of `content` under RFC 7292's MAC key.
macro_rules! hmac_matches {
    ($digest:ty, $pass:expr, $salt:expr, $rounds:expr, $content:expr, $expected:expr) => {{
        let key = derive_key::<$digest>(
            $pass,
            $salt,
            Pkcs12KeyType::Mac,
            $rounds,
            <$digest as digest::Digest>::output_size(),
        );
        <Hmac<$digest> as Mac>::new_from_slice(&key).is_ok_and(|mut mac| {
            mac.update($content);
            mac.verify_slice($expected).is_ok()
        })
    }};
}

/// Checks the password MAC over `content`.
fn check_mac(
    mac: &pkcs12::mac_data::MacData,
    content: &[u8],
    password: &[u8],
) -> Result<(), String> {
    let rounds = rounds(mac.iterations)?;
    let salt = mac.mac_salt.as_bytes();
    let expected = mac.mac.digest.as_bytes();
    // OpenSSL encodes an empty password as a lone terminator, and some writers as nothing at
    // all: both are tried, as OpenSSL's own check does.
    let bmp = bmp_password(password)?;
    let tries: &[&[u8]] = if password.is_empty() {
        &[&bmp, &[]]
    } else {
        &[&bmp]
    };
    let alg = mac.mac.algorithm.oid;
    for pass in tries {
        let ok = if alg == SHA1 {
            hmac_matches!(sha1::Sha1, pass, salt, rounds, content, expected)
        } else if alg == SHA256 {
            hmac_matches!(sha2::Sha256, pass, salt, rounds, content, expected)
        } else if alg == SHA384 {
            hmac_matches!(sha2::Sha384, pass, salt, rounds, content, expected)
        } else if alg == SHA512 {
            hmac_matches!(sha2::Sha512, pass, salt, rounds, content, expected)
        } else {
            return Err(format!(
                "the PKCS#12 MAC algorithm {alg} is not supported (SHA-1 and SHA-2 are)"
            ));
        };
        if ok {
            return Ok(());
        }
    }
    Err("the PKCS#12 MAC does not verify: a wrong passphrase, or a damaged file".into())
}

fn rounds(n: i32) -> Result<i32, String> {
    if (1..=MAX_ROUNDS).contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "a PKCS#12 iteration count of {n} is refused (1 to {MAX_ROUNDS})"
        ))
    }
}

/// The password as RFC 7292 wants it: UTF-16BE with a two-byte terminator.
fn bmp_password(password: &[u8]) -> Result<Vec<u8>, String> {
    let text = std::str::from_utf8(password)
        .map_err(|_| "a PKCS#12 passphrase must be UTF-8 text".to_string())?;
    let mut out: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
    out.extend([0, 0]);
    Ok(out)
}

/// Decrypts what `alg` encrypted under `password`.
fn decrypt(
    alg: &AlgorithmIdentifierOwned,
    data: &[u8],
    password: &[u8],
) -> Result<Vec<u8>, String> {
    if alg.oid == PBES2 {
        let der = alg
            .to_der()
            .map_err(|e| format!("cannot read a PKCS#12 encryption scheme: {e}"))?;
        let scheme = pkcs8::pkcs5::EncryptionScheme::try_from(der.as_slice())
            .map_err(|e| format!("unsupported PBES2 parameters in a PKCS#12 file: {e}"))?;
        return scheme.decrypt(password, data).map_err(|_| {
            "cannot decrypt a PKCS#12 bag: a wrong passphrase, or a damaged file".to_string()
        });
    }
    if alg.oid == TDES3 || alg.oid == TDES2 {
        let params = alg
            .parameters
            .as_ref()
            .ok_or("a PKCS#12 3DES scheme without parameters")?
            .decode_as::<Pkcs12PbeParams>()
            .map_err(|e| format!("cannot read PKCS#12 3DES parameters: {e}"))?;
        let rounds = rounds(params.iterations)?;
        let pass = bmp_password(password)?;
        let salt = params.salt.as_bytes();
        let key_len = if alg.oid == TDES3 { 24 } else { 16 };
        let key =
            derive_key::<sha1::Sha1>(&pass, salt, Pkcs12KeyType::EncryptionKey, rounds, key_len);
        let iv = derive_key::<sha1::Sha1>(&pass, salt, Pkcs12KeyType::Iv, rounds, 8);
        use cbc::cipher::{block_padding::Pkcs7, BlockDecryptMut, KeyIvInit};
        let bad =
            |_| "cannot decrypt a PKCS#12 bag: a wrong passphrase, or a damaged file".to_string();
        return if key_len == 24 {
            cbc::Decryptor::<des::TdesEde3>::new_from_slices(&key, &iv)
                .map_err(|_| "bad 3DES key".to_string())?
                .decrypt_padded_vec_mut::<Pkcs7>(data)
                .map_err(bad)
        } else {
            cbc::Decryptor::<des::TdesEde2>::new_from_slices(&key, &iv)
                .map_err(|_| "bad 3DES key".to_string())?
                .decrypt_padded_vec_mut::<Pkcs7>(data)
                .map_err(bad)
        };
    }
    if alg.oid.to_string().starts_with("1.2.840.113549.1.12.1.") {
        return Err(format!(
            "the PKCS#12 file is encrypted with RC2 or RC4 ({}), which node:tls on OpenSSL 3 \
             refuses too; convert it: `openssl pkcs12 -legacy -in OLD -nodes -out tmp.pem && \
             openssl pkcs12 -export -in tmp.pem -out NEW.pfx`",
            alg.oid
        ));
    }
    Err(format!(
        "the PKCS#12 encryption scheme {} is not supported",
        alg.oid
    ))
}

/// The bags of a file: certificates and keys, each with its `localKeyId` if it has one.
#[derive(Default)]
struct Bags {
    certs: Vec<(Option<Vec<u8>>, Vec<u8>)>,
    keys: Vec<(Option<Vec<u8>>, Vec<u8>)>,
}

impl Bags {
    /// Reads the safe contents `der`.
    fn read(&mut self, der: &[u8], password: &[u8], depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("PKCS#12 safe contents nest too deep".into());
        }
        let bags =
            Vec::<SafeBag>::from_der(der).map_err(|e| format!("cannot read PKCS#12 bags: {e}"))?;
        for bag in bags {
            // The value is the bag's [0] EXPLICIT wrapper; what it wraps is the bag itself.
            let wrapped = AnyRef::from_der(&bag.bag_value)
                .map_err(|e| format!("cannot read a PKCS#12 bag: {e}"))?;
            let inner = wrapped.value();
            let id = local_key_id(&bag);
            if bag.bag_id == pkcs12::PKCS_12_CERT_BAG_OID {
                let cert = pkcs12::cert_type::CertBag::from_der(inner)
                    .map_err(|e| format!("cannot read a PKCS#12 certificate bag: {e}"))?;
                if cert.cert_id == pkcs12::PKCS_12_X509_CERT_OID {
                    self.certs.push((id, cert.cert_value.into_bytes()));
                }
            } else if bag.bag_id == pkcs12::PKCS_12_PKCS8_KEY_BAG_OID {
                let info = EncryptedPrivateKeyInfo::from_der(inner)
                    .map_err(|e| format!("cannot read a PKCS#12 key bag: {e}"))?;
                let plain = decrypt(
                    &info.encryption_algorithm,
                    info.encrypted_data.as_bytes(),
                    password,
                )?;
                self.keys.push((id, plain));
            } else if bag.bag_id == pkcs12::PKCS_12_KEY_BAG_OID {
                self.keys.push((id, inner.to_vec()));
            } else if bag.bag_id == pkcs12::PKCS_12_SAFE_CONTENTS_BAG_OID {
                self.read(inner, password, depth + 1)?;
            }
        }
        Ok(())
    }

    /// The key and the chain it certifies.
    fn identity(self) -> Result<(Vec<Vec<u8>>, PrivatePkcs8KeyDer<'static>), String> {
        let mut keys = self.keys.into_iter();
        let Some((key_id, key)) = keys.next() else {
            return Err("the PKCS#12 file holds no private key".into());
        };
        let key = PrivatePkcs8KeyDer::from(key);
        let signing = rustls::crypto::ring::default_provider()
            .key_provider
            .load_private_key(PrivateKeyDer::Pkcs8(key.clone_key()))
            .map_err(|e| format!("unsupported private key in the PKCS#12 file: {e}"))?;
        let public = signing.public_key();
        let mut rest: Vec<Vec<u8>> = Vec::new();
        let mut leaf = None;
        for (id, cert) in self.certs {
            let by_id = key_id.is_some() && id == key_id;
            let by_key = public
                .as_ref()
                .is_some_and(|p| spki_of(&cert).as_deref() == Some(p.as_ref()));
            if leaf.is_none() && (by_id || by_key) {
                leaf = Some(cert);
            } else {
                rest.push(cert);
            }
        }
        let Some(leaf) = leaf else {
            return Err("the PKCS#12 file holds no certificate for its private key".into());
        };
        let mut chain = vec![leaf];
        while let Some(issuer) = chain
            .last()
            .and_then(|c| names(c))
            .map(|(_, issuer)| issuer)
        {
            let Some(i) = rest
                .iter()
                .position(|c| names(c).is_some_and(|(subject, _)| subject == issuer))
            else {
                break;
            };
            let next = rest.swap_remove(i);
            let self_signed = names(&next).is_some_and(|(s, i)| s == i);
            chain.push(next);
            if self_signed {
                break;
            }
        }
        Ok((chain, key))
    }
}

/// The `localKeyId` attribute of `bag`, which pairs a key with its certificate.
fn local_key_id(bag: &SafeBag) -> Option<Vec<u8>> {
    let attrs = bag.bag_attributes.as_ref()?;
    let attr = attrs.iter().find(|a| a.oid == LOCAL_KEY_ID)?;
    let value = attr.values.iter().next()?;
    value
        .decode_as::<OctetString>()
        .ok()
        .map(OctetString::into_bytes)
}

/// The DER `SubjectPublicKeyInfo` of certificate `der`.
fn spki_of(der: &[u8]) -> Option<Vec<u8>> {
    let cert = Certificate::from_der(der).ok()?;
    cert.tbs_certificate.subject_public_key_info.to_der().ok()
}

/// The DER subject and issuer names of certificate `der`.
fn names(der: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let cert = Certificate::from_der(der).ok()?;
    Some((
        cert.tbs_certificate.subject.to_der().ok()?,
        cert.tbs_certificate.issuer.to_der().ok()?,
    ))
}

#[cfg(test)]
#[path = "pfx_tests.rs"]
mod tests;
