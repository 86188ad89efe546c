//! [`NodeTlsOptions`]: a context's options by node:tls's names and rules, as a binding hands
//! them over (already checked and normalised by its JS side: PEM and PKCS#12 as bytes,
//! colon-separated lists split), and their reading into an [`SslOptions`]: which identities
//! (a `cert`/`key` pair, a `key` array, one or several `pfx`, SNI entries) with which
//! passphrase, `requestCert` and `rejectUnauthorized` as a [`ClientAuth`], the version names,
//! the defaults of the options left out.
//!
//! No state: a plain value read once per context made or reloaded.

use std::time::Duration;

use crate::{ClientAuth, PemIdentity, SslContext, SslOptions, TlsError, TlsVersion};

/// A certificate chain and key for one SNI host name: PEM `cert` and `key`, or a PKCS#12 `pfx`.
#[derive(Default)]
pub struct NodeSniIdentity {
    /// The host name the identity answers.
    pub hostname: String,
    /// The PEM chain (with `key`).
    pub cert: Option<Vec<u8>>,
    /// The PEM key (with `cert`).
    pub key: Option<Vec<u8>>,
    /// A PKCS#12 file in place of `cert` and `key`.
    pub pfx: Option<Vec<u8>>,
    /// The entry's own passphrase, for its `pfx` or its encrypted `key` (else the context's).
    pub passphrase: Option<String>,
    /// A DER OCSP response stapled with the entry's certificate.
    pub ocsp_response: Option<Vec<u8>>,
}

/// A private key with a passphrase of its own: a PEM key of node:tls's `key` array, or a
/// PKCS#12 file of its `pfx` (one, or an array of them).
pub struct NodeKey {
    /// The PEM key, or the PKCS#12 file.
    pub bytes: Vec<u8>,
    /// Its passphrase (else the context's).
    pub passphrase: Option<String>,
}

/// A context's options, node:tls's names (`None`: node:tls's default).
#[derive(Default)]
pub struct NodeTlsOptions {
    /// A server's context (else a client's).
    pub is_server: bool,
    /// The PEM chain (with `key`).
    pub cert: Option<Vec<u8>>,
    /// The PEM key (with `cert`).
    pub key: Option<Vec<u8>>,
    /// node:tls's `key` array (then `certs` holds the `cert` array: one chain per key).
    pub keys: Option<Vec<NodeKey>>,
    /// node:tls's `cert` array, with `keys`.
    pub certs: Option<Vec<Vec<u8>>>,
    /// Trusted CAs, PEM.
    pub ca: Option<Vec<u8>>,
    /// The system's roots as well.
    pub system_roots: Option<bool>,
    /// Server: identities by SNI host name.
    pub sni: Option<Vec<NodeSniIdentity>>,
    /// Server: ask the client for a certificate.
    pub request_cert: Option<bool>,
    /// Refuse a peer whose certificate does not verify (default true).
    pub reject_unauthorized: Option<bool>,
    /// ALPN protocol names, in preference order.
    pub alpn_protocols: Option<Vec<String>>,
    /// `TLSv1.2` or `TLSv1.3` (default `TLSv1.2`).
    pub min_version: Option<String>,
    /// `TLSv1.2` or `TLSv1.3` (default `TLSv1.3`).
    pub max_version: Option<String>,
    /// Client: the server name sent and verified.
    pub servername: Option<String>,
    /// Sessions kept for resumption.
    pub session_cache_size: Option<u32>,
    /// Session tickets (default true).
    pub session_tickets: Option<bool>,
    /// Server: seconds a session resumes (node:tls's `sessionTimeout`).
    pub session_timeout: Option<u32>,
    /// Milliseconds a handshake may take.
    pub handshake_timeout: Option<f64>,
    /// Server: TLS 1.3 records through netloop's own record layer (`experimentalOwnRecords`).
    pub experimental_own_records: Option<bool>,
    /// Server: the JS object has an `SNICallback` (its handlers ask JS for the context).
    pub sni_callback: Option<bool>,
    /// Server: the JS object has an `ALPNCallback` (its handlers ask JS for the protocol).
    pub alpn_callback: Option<bool>,
    /// Cipher suite names (`ciphers`, split at `:`).
    pub ciphers: Option<Vec<String>>,
    /// Signature scheme names (`sigalgs`, split at `:`).
    pub sigalgs: Option<Vec<String>>,
    /// Server: its order of cipher suites wins (default true).
    pub honor_cipher_order: Option<bool>,
    /// Key-exchange group names (`ecdhCurve`, split at `:`).
    pub groups: Option<Vec<String>>,
    /// Certificate revocation lists, PEM.
    pub crl: Option<Vec<u8>>,
    /// A file the session keys are appended to (NSS key log format).
    pub key_log_file: Option<String>,
    /// The passphrase of encrypted keys and `pfx` files without one of their own.
    pub passphrase: Option<String>,
    /// Client: the JS object has a `checkServerIdentity` (its handlers ask JS to judge).
    pub check_server_identity: Option<bool>,
    /// Server: node:tls's `ticketKeys` (48 bytes).
    pub ticket_keys: Option<Vec<u8>>,
    /// Server: a DER OCSP response stapled with `cert`.
    pub ocsp_response: Option<Vec<u8>>,
    /// PKCS#12 files in place of `cert` and `key` (node:tls's `pfx`; several: a server's,
    /// one per key type, as a `key` array).
    pub pfxs: Option<Vec<NodeKey>>,
}

/// What an identity is made of.
struct IdentityParts<'a> {
    cert: &'a Option<Vec<u8>>,
    key: &'a Option<Vec<u8>>,
    pfx: Option<&'a [u8]>,
    /// The `pfx`'s passphrase (its own, else the context's).
    passphrase: Option<&'a str>,
    /// A passphrase given for this identity alone (an SNI entry's).
    own_passphrase: Option<&'a str>,
    ocsp: &'a Option<Vec<u8>>,
    what: &'a str,
}

fn identity(p: IdentityParts<'_>) -> Result<Option<PemIdentity>, TlsError> {
    let ocsp = p.ocsp.clone();
    match (p.cert, p.key, p.pfx) {
        (None, None, Some(pfx)) => {
            PemIdentity::from_pfx(pfx, p.passphrase.map(str::as_bytes), ocsp, p.what).map(Some)
        }
        // A passphrase of the identity's own (an SNI entry's) opens its key now; the
        // context's opens the others when the context is built.
        (Some(c), Some(k), None) => match p.own_passphrase {
            Some(pass) => {
                PemIdentity::with_passphrase(c.clone(), k, pass.as_bytes(), ocsp, p.what).map(Some)
            }
            None => Ok(Some(PemIdentity {
                chain: c.clone(),
                key: k.clone(),
                ocsp,
            })),
        },
        (None, None, None) => Ok(None),
        (_, _, Some(_)) => Err(TlsError::Config(format!(
            "{}: give either pfx or cert and key",
            p.what
        ))),
        _ => Err(TlsError::Config(
            "cert and key must be given together".into(),
        )),
    }
}

/// The default identity (which staples `ocsp`, as node:tls staples for its first
/// certificate) and the others of a `key` or `pfx` array.
fn first_and_rest(
    ids: Vec<PemIdentity>,
    ocsp: &Option<Vec<u8>>,
) -> (Option<PemIdentity>, Vec<PemIdentity>) {
    let mut ids = ids.into_iter();
    let mut first = ids.next();
    if let Some(f) = first.as_mut() {
        f.ocsp = ocsp.clone();
    }
    (first, ids.collect())
}

impl NodeTlsOptions {
    /// A context of the side `is_server` names.
    pub fn build(&self) -> Result<SslContext, TlsError> {
        let opts = self.to_options()?;
        if self.is_server {
            SslContext::server(&opts)
        } else {
            SslContext::client(&opts)
        }
    }

    /// The options read by node:tls's rules.
    pub fn to_options(&self) -> Result<SslOptions, TlsError> {
        let o = self;
        let version = |v: &Option<String>, d: TlsVersion| match v {
            Some(name) => TlsVersion::parse(name),
            None => Ok(d),
        };
        let reject = o.reject_unauthorized.unwrap_or(true);
        let client_auth = match (o.request_cert.unwrap_or(false), reject) {
            (false, _) => ClientAuth::None,
            (true, true) => ClientAuth::Require,
            (true, false) => ClientAuth::Request,
        };
        let mut sni = Vec::new();
        for e in o.sni.iter().flatten() {
            let what = format!("SNI['{}']", e.hostname);
            let id = identity(IdentityParts {
                cert: &e.cert,
                key: &e.key,
                pfx: e.pfx.as_deref(),
                passphrase: e.passphrase.as_deref().or(o.passphrase.as_deref()),
                own_passphrase: e.passphrase.as_deref(),
                ocsp: &e.ocsp_response,
                what: &what,
            })?
            .ok_or_else(|| TlsError::Config(format!("{what}: give cert and key, or pfx")))?;
            sni.push((e.hostname.clone(), id));
        }
        let defaults = SslOptions::default();
        let (identity, extra_identities) = o.identities()?;
        Ok(SslOptions {
            identity,
            extra_identities,
            sni,
            ca: o.ca.clone(),
            system_roots: o.system_roots.unwrap_or(false),
            client_auth,
            reject_unauthorized: reject,
            alpn: o
                .alpn_protocols
                .iter()
                .flatten()
                .map(|p| p.as_bytes().to_vec())
                .collect(),
            min_version: version(&o.min_version, TlsVersion::Tls12)?,
            max_version: version(&o.max_version, TlsVersion::Tls13)?,
            server_name: o.servername.clone(),
            session_cache_size: o
                .session_cache_size
                .map_or(defaults.session_cache_size, |n| n as usize),
            session_tickets: o.session_tickets.unwrap_or(true),
            session_timeout: o
                .session_timeout
                .map_or(defaults.session_timeout, |s| Duration::from_secs(s.into())),
            handshake_timeout: o
                .handshake_timeout
                .map_or(defaults.handshake_timeout, |ms| {
                    Duration::from_secs_f64(ms.max(0.0) / 1000.0)
                }),
            ask_server_name: o.sni_callback.unwrap_or(false),
            ask_protocol: o.alpn_callback.unwrap_or(false),
            // TLS 1.3 server records stay on rustls unless the context asks for the
            // experimental own record layer, or NETLOOP_TLS_OWN_RECORDS=1 does for every
            // context (decision 0007; for A/B measurements).
            experimental_own_records: o.experimental_own_records.unwrap_or(false)
                || std::env::var("NETLOOP_TLS_OWN_RECORDS").is_ok_and(|v| v == "1"),
            cipher_suites: o.ciphers.clone().unwrap_or_default(),
            sigalgs: o.sigalgs.clone().unwrap_or_default(),
            honor_cipher_order: o.honor_cipher_order.unwrap_or(true),
            groups: o.groups.clone().unwrap_or_default(),
            crl: o.crl.clone(),
            key_log_file: o.key_log_file.as_ref().map(std::path::PathBuf::from),
            passphrase: o.passphrase.as_ref().map(|p| p.as_bytes().to_vec()),
            check_server_identity: o.check_server_identity.unwrap_or(false),
            ticket_keys: o.ticket_keys.clone(),
        })
    }

    /// The default identity and the others: from `cert`/`key`, a `key` array, or `pfx`.
    fn identities(&self) -> Result<(Option<PemIdentity>, Vec<PemIdentity>), TlsError> {
        let o = self;
        Ok(match (&o.keys, o.pfxs.as_deref()) {
            (Some(keys), None) => {
                let chains: Vec<Vec<u8>> = o.certs.iter().flatten().cloned().collect();
                let keys: Vec<(Vec<u8>, Option<Vec<u8>>)> = keys
                    .iter()
                    .map(|k| {
                        let pass = k.passphrase.as_deref().or(o.passphrase.as_deref());
                        (k.bytes.clone(), pass.map(|p| p.as_bytes().to_vec()))
                    })
                    .collect();
                let ids = PemIdentity::pair(&chains, &keys)?;
                first_and_rest(ids, &o.ocsp_response)
            }
            (None, Some([one])) => (
                identity(IdentityParts {
                    cert: &o.cert,
                    key: &o.key,
                    pfx: Some(&one.bytes),
                    passphrase: one.passphrase.as_deref().or(o.passphrase.as_deref()),
                    own_passphrase: None,
                    ocsp: &o.ocsp_response,
                    what: "pfx",
                })?,
                Vec::new(),
            ),
            (None, Some(several)) if o.cert.is_none() && o.key.is_none() => {
                let ids = several
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        let pass = p.passphrase.as_deref().or(o.passphrase.as_deref());
                        PemIdentity::from_pfx(
                            &p.bytes,
                            pass.map(str::as_bytes),
                            None,
                            &format!("pfx[{i}]"),
                        )
                    })
                    .collect::<Result<Vec<PemIdentity>, TlsError>>()?;
                first_and_rest(ids, &o.ocsp_response)
            }
            (Some(_), Some(_)) | (None, Some(_)) => {
                return Err(TlsError::Config(
                    "pfx: give either pfx or cert and key".into(),
                ))
            }
            (None, None) => (
                identity(IdentityParts {
                    cert: &o.cert,
                    key: &o.key,
                    pfx: None,
                    passphrase: o.passphrase.as_deref(),
                    own_passphrase: None,
                    ocsp: &o.ocsp_response,
                    what: "pfx",
                })?,
                Vec::new(),
            ),
        })
    }
}

impl std::fmt::Debug for NodeTlsOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Keys and certificates are not printed.
        f.debug_struct("NodeTlsOptions")
            .field("is_server", &self.is_server)
            .field("servername", &self.servername)
            .field("alpn_protocols", &self.alpn_protocols)
            .field("min_version", &self.min_version)
            .field("max_version", &self.max_version)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for NodeSniIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeSniIdentity")
            .field("hostname", &self.hostname)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for NodeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Keys and passphrases are not printed.
        f.debug_struct("NodeKey")
            .field("bytes", &self.bytes.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_cert_with_reject_unauthorized_requires_a_client_certificate() {
        let auth = |request_cert, reject_unauthorized| {
            NodeTlsOptions {
                is_server: true,
                request_cert,
                reject_unauthorized,
                ..NodeTlsOptions::default()
            }
            .to_options()
            .unwrap()
            .client_auth
        };
        assert!(matches!(auth(None, None), ClientAuth::None));
        assert!(matches!(auth(Some(true), None), ClientAuth::Require));
        assert!(matches!(auth(Some(true), Some(false)), ClientAuth::Request));
    }

    #[test]
    fn options_left_out_take_node_tls_defaults() {
        let o = NodeTlsOptions::default().to_options().unwrap();
        let d = SslOptions::default();
        assert!(o.reject_unauthorized && o.session_tickets && o.honor_cipher_order);
        assert!(matches!(o.min_version, TlsVersion::Tls12));
        assert!(matches!(o.max_version, TlsVersion::Tls13));
        assert_eq!(o.session_timeout, d.session_timeout);
        assert_eq!(o.handshake_timeout, d.handshake_timeout);
        assert!(o.identity.is_none() && o.extra_identities.is_empty());
    }

    #[test]
    fn a_cert_without_its_key_is_refused() {
        let e = NodeTlsOptions {
            cert: Some(b"chain".to_vec()),
            ..NodeTlsOptions::default()
        }
        .to_options()
        .err()
        .unwrap();
        assert_eq!(
            e.to_string(),
            TlsError::Config("cert and key must be given together".into()).to_string()
        );
    }

    #[test]
    fn several_pfx_files_with_a_cert_are_refused() {
        let pfx = || NodeKey {
            bytes: Vec::new(),
            passphrase: None,
        };
        let e = NodeTlsOptions {
            cert: Some(b"chain".to_vec()),
            pfxs: Some(vec![pfx(), pfx()]),
            ..NodeTlsOptions::default()
        }
        .to_options()
        .err()
        .unwrap();
        assert!(e
            .to_string()
            .contains("pfx: give either pfx or cert and key"));
    }

    #[test]
    fn an_unsupported_version_name_is_refused() {
        let e = NodeTlsOptions {
            min_version: Some("TLSv1.1".into()),
            ..NodeTlsOptions::default()
        }
        .to_options()
        .err()
        .unwrap();
        assert!(e.to_string().contains("TLSv1.1 is not supported"));
    }
}
