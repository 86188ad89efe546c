//! The options of an `SslContext` (node:tls's names where they exist), with their defaults:
//! what a context is made from, checked when it is made (crate::context).

use std::path::PathBuf;
use std::time::Duration;

use crate::error::TlsError;
#[cfg(doc)]
use crate::SslHandler;

/// Netty's default handshake timeout.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// node:tls's (and OpenSSL's) session timeout.
pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(300);

/// The longest session timeout: a TLS 1.3 ticket lives at most 7 days (RFC 8446 §4.6.1).
pub const MAX_SESSION_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// A TLS protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsVersion {
    /// TLS 1.2.
    Tls12,
    /// TLS 1.3.
    Tls13,
}

impl TlsVersion {
    /// Parses node:tls's names (`TLSv1.2`, `TLSv1.3`).
    pub fn parse(name: &str) -> Result<TlsVersion, TlsError> {
        match name {
            "TLSv1.2" => Ok(TlsVersion::Tls12),
            "TLSv1.3" => Ok(TlsVersion::Tls13),
            "TLSv1" | "TLSv1.1" | "SSLv3" => Err(TlsError::Config(format!(
                "{name} is not supported (TLSv1.2 and TLSv1.3 are)"
            ))),
            other => Err(TlsError::Config(format!("unknown TLS version {other:?}"))),
        }
    }
}

/// Whether a server asks clients for certificates (mTLS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientAuth {
    /// No client certificate is asked for.
    #[default]
    None,
    /// Asked for; a client without one (or with an untrusted one) is still accepted, and
    /// reported as not authorized.
    Request,
    /// Asked for and required: the handshake fails without a certificate the CA trusts.
    Require,
}

/// A PEM certificate chain (leaf first) and its private key.
#[derive(Debug, Clone)]
pub struct PemIdentity {
    /// The chain, leaf first.
    pub chain: Vec<u8>,
    /// The private key.
    pub key: Vec<u8>,
    /// Server: a DER OCSP response for the leaf, stapled to the handshakes of clients that ask
    /// for one (`status_request`). Refreshed by making (or reloading) the context with a newer
    /// one before it expires.
    pub ocsp: Option<Vec<u8>>,
}

/// Options of a context. Servers need `identity` (or `sni` entries); clients need nothing.
#[derive(Debug, Clone)]
pub struct SslOptions {
    /// The server's default certificate, or the client's certificate for mTLS.
    pub identity: Option<PemIdentity>,
    /// Server: more default certificates, of other key types (node:tls's `cert` and `key`
    /// arrays): each client gets the first of `identity` and these whose key can sign with a
    /// scheme it offers (ECDSA first and RSA for the clients that need it, say).
    pub extra_identities: Vec<PemIdentity>,
    /// Server: certificates by host name (`*.example.com` wildcards allowed).
    pub sni: Vec<(String, PemIdentity)>,
    /// Trusted CA certificates (PEM). Replaces the bundled roots, as in node:tls.
    pub ca: Option<Vec<u8>>,
    /// Client: also trust the operating system's roots.
    pub system_roots: bool,
    /// Server: whether client certificates are asked for.
    pub client_auth: ClientAuth,
    /// Fail the handshake on a certificate that does not verify (default true).
    pub reject_unauthorized: bool,
    /// ALPN protocols, in order of preference.
    pub alpn: Vec<Vec<u8>>,
    /// Lowest version (default TLS 1.2).
    pub min_version: TlsVersion,
    /// Highest version (default TLS 1.3).
    pub max_version: TlsVersion,
    /// Client: the default server name to send (SNI) and verify.
    pub server_name: Option<String>,
    /// Server: session ids kept for resumption (0: none).
    pub session_cache_size: usize,
    /// Server: issue stateless session tickets (default true).
    pub session_tickets: bool,
    /// Server: how long a session resumes after it was made, in tickets and in the cache
    /// (node:tls's `sessionTimeout`: default 300 s; at most 7 days, TLS 1.3's limit). Own
    /// ticket keys are replaced at this period too (crate::expiry).
    pub session_timeout: Duration,
    /// Handshake timeout (default 10 s; zero: none).
    pub handshake_timeout: Duration,
    /// Server, experimental: after a TLS 1.3 handshake, protect records with netloop's own
    /// record layer (crate::record) instead of rustls's. Default false: every record stays on
    /// rustls's buffered connection. The own layer is outside rustls's audited code; it keeps
    /// less memory per idle connection and was not faster on bulk on a quiet machine
    /// (docs/decisions/0007-tls.md, "rustls's records again").
    pub experimental_own_records: bool,
    /// Server: the application chooses the context of each connection whose client names a
    /// server (node:tls's `SNICallback`): its handlers read the ClientHello, ask through
    /// [`SslHandler::on_server_name`] and wait for [`SslHandler::answer_server_name`]. A handler
    /// without that hook serves this context at once. Default false.
    pub ask_server_name: bool,
    /// Server: the application chooses the ALPN protocol of each connection whose client
    /// offers some (node:tls's `ALPNCallback`), from the client's list: its handlers ask
    /// through [`SslHandler::on_client_hello`] (with the server name, in the same question as
    /// `ask_server_name`'s) and wait for [`SslHandler::answer_client_hello`]. Excludes `alpn`.
    /// Default false.
    pub ask_protocol: bool,
    /// The cipher suites offered, in order of preference, by IANA or OpenSSL name (node:tls's
    /// `ciphers`, split at `:`); empty: netloop's default list (crate::suites).
    pub cipher_suites: Vec<String>,
    /// The signature schemes this side offers to verify and signs with (node:tls's
    /// `sigalgs`, split at `:`; OpenSSL's names, crate::sigalgs); empty: rustls's.
    pub sigalgs: Vec<String>,
    /// Server: choose the suite by this context's order (default true) rather than by the
    /// client's (node:tls's `honorCipherOrder`).
    pub honor_cipher_order: bool,
    /// The key-exchange groups offered, in order (node:tls's `ecdhCurve`: `X25519`, `P-256`,
    /// `P-384`, or `auto`); empty: netloop's default (X25519, P-256, P-384).
    pub groups: Vec<String>,
    /// Certificate revocation lists (PEM) checked against the peer's certificate: a server's
    /// clients (with `client_auth`), a client's server. As node:tls's `crl`, the check covers the
    /// peer's own certificate, and one whose issuer has no list here fails
    /// (`UNABLE_TO_GET_CRL`), as does an expired list (`CRL_HAS_EXPIRED`).
    pub crl: Option<Vec<u8>>,
    /// Append every handshake's secrets to this file in the NSS key log format, for Wireshark
    /// (node's `--tls-keylog`). Debugging only.
    pub key_log_file: Option<PathBuf>,
    /// The passphrase of encrypted private keys (node:tls's `passphrase`): the identity's and
    /// the SNI entries'. Ignored for keys that are not encrypted.
    pub passphrase: Option<Vec<u8>>,
    /// Server: seal session tickets under these 48 bytes (node:tls's `ticketKeys`) instead of
    /// keys of this context's own, so that servers given the same bytes resume each other's
    /// sessions (crate::tickets). Needs `session_tickets`.
    pub ticket_keys: Option<Vec<u8>>,
    /// Client: the application judges the server's identity (node:tls's
    /// `checkServerIdentity`). The chain is still verified here and the name is not: once the
    /// chain verified, its handlers ask through [`SslHandler::on_server_identity`] and hold the
    /// handshake's completion (and every write and read) for
    /// [`SslHandler::answer_server_identity`]. A handler without that hook fails its handshake
    /// (`ERR_TLS_SERVER_IDENTITY`): nothing is accepted unjudged. Default false.
    pub check_server_identity: bool,
}

impl Default for SslOptions {
    fn default() -> Self {
        SslOptions {
            identity: None,
            extra_identities: Vec::new(),
            sni: Vec::new(),
            ca: None,
            system_roots: false,
            client_auth: ClientAuth::None,
            reject_unauthorized: true,
            alpn: Vec::new(),
            min_version: TlsVersion::Tls12,
            max_version: TlsVersion::Tls13,
            server_name: None,
            session_cache_size: 1024,
            session_tickets: true,
            session_timeout: DEFAULT_SESSION_TIMEOUT,
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
            experimental_own_records: false,
            ask_server_name: false,
            ask_protocol: false,
            cipher_suites: Vec::new(),
            sigalgs: Vec::new(),
            honor_cipher_order: true,
            groups: Vec::new(),
            crl: None,
            key_log_file: None,
            passphrase: None,
            check_server_identity: false,
            ticket_keys: None,
        }
    }
}
