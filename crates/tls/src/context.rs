//! `SslContext`: a server's or a client's TLS configuration, parsed once and shared (an `Arc`)
//! by every connection and every thread that uses it (Netty's `SslContext`). Contexts are
//! `Send + Sync`; handlers made from one are per connection.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::ServerCertVerifier;
use rustls::client::{Resumption, WebPkiServerVerifier};
use rustls::crypto::CryptoProvider;
use rustls::server::danger::ClientCertVerifier;
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, RootCertStore, ServerConfig, SupportedProtocolVersion};

use crate::error::TlsError;
use crate::exporter::SecretTap;
use crate::handler::SslHandler;
use crate::keylog::KeyLogFile;
use crate::pem;
use crate::sni::SniResolver;
use crate::suites;
use crate::verify::{
    ChainOnlyServerVerifier, LenientClientVerifier, LenientServerVerifier, StapleRecorder,
};

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
    /// Server: after a TLS 1.3 handshake, protect records with netloop's own record layer
    /// (default true; false keeps every record on rustls). In ten paired quiet rounds it
    /// matched rustls on 64 B echo, cost 6 % less CPU per MB on 16 KiB bulk, and it keeps 40 %
    /// less memory per idle connection (docs/decisions/0007-tls.md, "The default").
    pub own_records: bool,
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
            own_records: true,
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

pub(crate) enum Side {
    Server {
        config: Arc<ServerConfig>,
        strict: Option<Arc<dyn ClientCertVerifier>>,
        /// TLS 1.3 records after the handshake go through crate::record.
        own_records: bool,
    },
    Client {
        config: Arc<ClientConfig>,
        strict: Arc<dyn ServerCertVerifier>,
        server_name: Option<String>,
        reject_unauthorized: bool,
    },
}

pub(crate) struct Inner {
    pub(crate) side: Side,
    pub(crate) handshake_timeout: Option<Duration>,
    /// Server: handlers ask the application for the context by server name.
    pub(crate) ask_server_name: bool,
    /// Server: handlers ask the application for the ALPN protocol.
    pub(crate) ask_protocol: bool,
    /// Client: handlers ask the application to judge the server's identity.
    pub(crate) check_server_identity: bool,
}

/// A server or client TLS configuration, shared by every connection made with it.
#[derive(Clone)]
pub struct SslContext(pub(crate) Arc<Inner>);

/// ring, with the suites and groups `o` names, or netloop's defaults (AES-128-GCM preferred
/// over AES-256-GCM, as BoringSSL and Go do: as secure for TLS, cheaper per record, and
/// SHA-256 instead of SHA-384 in the key schedule).
fn provider(o: &SslOptions) -> Result<Arc<CryptoProvider>, TlsError> {
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
fn key_log(o: &SslOptions) -> Result<Option<Arc<dyn rustls::KeyLog>>, TlsError> {
    Ok(key_log_file(o)?.map(|f| Arc::new(f) as Arc<dyn rustls::KeyLog>))
}

fn key_log_file(o: &SslOptions) -> Result<Option<KeyLogFile>, TlsError> {
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

/// The revocation lists `o` carries (empty without `crl`).
fn crls(
    o: &SslOptions,
) -> Result<Vec<rustls::pki_types::CertificateRevocationListDer<'static>>, TlsError> {
    match &o.crl {
        Some(pem) => pem::crls(pem, "crl"),
        None => Ok(Vec::new()),
    }
}

/// The verifier of a client's view of servers: the context's roots and revocation lists.
fn server_verifier(
    o: &SslOptions,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<WebPkiServerVerifier>, TlsError> {
    let builder = WebPkiServerVerifier::builder_with_provider(trust(o)?, provider.clone());
    with_revocation!(builder, o)
        .build()
        .map_err(|e| TlsError::Config(format!("ca: {e}")))
}

fn versions(o: &SslOptions) -> Result<Vec<&'static SupportedProtocolVersion>, TlsError> {
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

fn trust(o: &SslOptions) -> Result<Arc<RootCertStore>, TlsError> {
    let mut store = match &o.ca {
        Some(pem) => pem::roots(pem, "ca")?,
        None => pem::bundled_roots(),
    };
    if o.system_roots {
        pem::add_system_roots(&mut store)?;
    }
    Ok(Arc::new(store))
}

fn rustls_err(what: &str) -> impl Fn(rustls::Error) -> TlsError + '_ {
    move |e| TlsError::Config(format!("{what}: {e}"))
}

impl SslContext {
    /// A server context. Needs a default `identity` or at least one `sni` entry.
    pub fn server(o: &SslOptions) -> Result<SslContext, TlsError> {
        let provider = provider(o)?;
        if o.check_server_identity {
            return Err(TlsError::Config(
                "checkServerIdentity is an option of client contexts".into(),
            ));
        }
        if o.ask_protocol && !o.alpn.is_empty() {
            return Err(TlsError::Config(
                "ALPNCallback and ALPNProtocols exclude each other: the callback chooses".into(),
            ));
        }
        if o.crl.is_some() && o.client_auth == ClientAuth::None {
            return Err(TlsError::Config(
                "crl: a server checks revocation of client certificates only: set requestCert"
                    .into(),
            ));
        }
        let allowed = crate::sigalgs::schemes(&o.sigalgs)?;
        let narrow = |k| crate::sigalgs::narrow_key(k, &allowed);
        let default = match &o.identity {
            Some(id) => Some(narrow(pem::certified_key(
                &provider,
                &id.chain,
                &id.key,
                o.passphrase.as_deref(),
                id.ocsp.as_deref(),
                "cert/key",
            )?)),
            None => None,
        };
        if default.is_none() && !o.extra_identities.is_empty() {
            return Err(TlsError::Config(
                "more certificates of other key types need a first one (cert/key)".into(),
            ));
        }
        let mut resolver = SniResolver::new(default);
        for (i, id) in o.extra_identities.iter().enumerate() {
            resolver.add_default(narrow(pem::certified_key(
                &provider,
                &id.chain,
                &id.key,
                o.passphrase.as_deref(),
                id.ocsp.as_deref(),
                &format!("cert/key [{}]", i + 1),
            )?));
        }
        for (host, id) in &o.sni {
            let what = format!("SNI entry {host:?}");
            resolver.add(
                host,
                narrow(pem::certified_key(
                    &provider,
                    &id.chain,
                    &id.key,
                    o.passphrase.as_deref(),
                    id.ocsp.as_deref(),
                    &what,
                )?),
            );
        }
        if resolver.is_empty() {
            return Err(TlsError::Config(
                "a server context needs a certificate and key (cert/key or SNI entries)".into(),
            ));
        }
        let strict: Option<Arc<dyn ClientCertVerifier>> = match o.client_auth {
            ClientAuth::None => None,
            _ => {
                let builder =
                    WebPkiClientVerifier::builder_with_provider(trust(o)?, provider.clone());
                Some(
                    with_revocation!(builder, o)
                        .build()
                        .map_err(|e| TlsError::Config(format!("client certificate CA: {e}")))?,
                )
            }
        };
        let verifier: Arc<dyn ClientCertVerifier> = match (&strict, o.client_auth) {
            (None, _) | (_, ClientAuth::None) => WebPkiClientVerifier::no_client_auth(),
            (Some(s), ClientAuth::Require) if o.reject_unauthorized => s.clone(),
            (Some(s), _) => Arc::new(LenientClientVerifier(s.clone())),
        };
        let verifier: Arc<dyn ClientCertVerifier> = match (&allowed, o.client_auth) {
            (Some(allowed), ClientAuth::Request | ClientAuth::Require) => {
                Arc::new(crate::sigalgs::NarrowedClientVerifier {
                    inner: verifier,
                    allowed: allowed.clone(),
                })
            }
            _ => verifier,
        };
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&versions(o)?)
            .map_err(rustls_err("versions"))?
            .with_client_cert_verifier(verifier)
            .with_cert_resolver(Arc::new(resolver));
        config.alpn_protocols = o.alpn.clone();
        let (storage, tickets) = crate::expiry::resumption(o)?;
        config.session_storage = storage;
        if let Some(tickets) = tickets {
            config.ticketer = tickets;
        }
        config.ignore_client_order = o.honor_cipher_order;
        // Our record layer takes the traffic secrets over from rustls after the handshake,
        // and keeps the exporter secret, which rustls gives to the key log alone.
        let own_records = o.own_records && o.max_version >= TlsVersion::Tls13;
        if own_records {
            config.key_log = Arc::new(SecretTap {
                file: key_log_file(o)?,
            });
        } else if let Some(log) = key_log(o)? {
            config.key_log = log;
        }
        config.enable_secret_extraction = own_records;
        Ok(SslContext(Arc::new(Inner {
            side: Side::Server {
                config: Arc::new(config),
                strict,
                own_records,
            },
            handshake_timeout: timeout(o.handshake_timeout),
            ask_server_name: o.ask_server_name,
            ask_protocol: o.ask_protocol,
            check_server_identity: false,
        })))
    }

    /// A client context.
    pub fn client(o: &SslOptions) -> Result<SslContext, TlsError> {
        if !o.extra_identities.is_empty() {
            return Err(TlsError::Config(
                "a client presents one certificate: give one cert and key".into(),
            ));
        }
        if o.ask_protocol {
            return Err(TlsError::Config(
                "ALPNCallback is an option of server contexts".into(),
            ));
        }
        let provider = provider(o)?;
        let allowed = crate::sigalgs::schemes(&o.sigalgs)?;
        // With `sigalgs`, the client's certificate goes through a resolver whose key signs
        // only with the allowed schemes (made before the builder takes the provider).
        let narrowed_cert = match (&o.identity, &allowed) {
            (Some(id), Some(_)) => Some(crate::sigalgs::narrow_key(
                pem::certified_key(
                    &provider,
                    &id.chain,
                    &id.key,
                    o.passphrase.as_deref(),
                    None,
                    "client certificate",
                )?,
                &allowed,
            )),
            _ => None,
        };
        let webpki = server_verifier(o, &provider)?;
        let strict: Arc<dyn ServerCertVerifier> = if o.check_server_identity {
            Arc::new(ChainOnlyServerVerifier(webpki.clone()))
        } else {
            webpki.clone()
        };
        let builder = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&versions(o)?)
            .map_err(rustls_err("versions"))?;
        let verifier: Arc<dyn ServerCertVerifier> = if o.reject_unauthorized {
            strict.clone()
        } else {
            Arc::new(LenientServerVerifier(strict.clone()))
        };
        let verifier: Arc<dyn ServerCertVerifier> = match &allowed {
            Some(allowed) => Arc::new(crate::sigalgs::NarrowedServerVerifier {
                inner: verifier,
                allowed: allowed.clone(),
            }),
            None => verifier,
        };
        // Every verifier is wrapped to read the OCSP response a server staples.
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(StapleRecorder(verifier)));
        let mut config = match (&o.identity, narrowed_cert) {
            (_, Some(ck)) => {
                builder.with_client_cert_resolver(Arc::new(crate::sigalgs::OneClientCert(ck)))
            }
            (Some(id), None) => builder
                .with_client_auth_cert(
                    pem::certificates(&id.chain, "cert")?,
                    pem::private_key(&id.key, "key", o.passphrase.as_deref())?,
                )
                .map_err(rustls_err("client certificate"))?,
            (None, None) => builder.with_no_client_auth(),
        };
        config.alpn_protocols = o.alpn.clone();
        config.resumption = Resumption::in_memory_sessions(256);
        if let Some(log) = key_log(o)? {
            config.key_log = log;
        }
        Ok(SslContext(Arc::new(Inner {
            side: Side::Client {
                config: Arc::new(config),
                strict,
                server_name: o.server_name.clone(),
                reject_unauthorized: o.reject_unauthorized,
            },
            handshake_timeout: timeout(o.handshake_timeout),
            ask_server_name: false,
            ask_protocol: false,
            check_server_identity: o.check_server_identity,
        })))
    }

    /// True for a server context.
    pub fn is_server(&self) -> bool {
        matches!(self.0.side, Side::Server { .. })
    }

    /// True for a server context whose handlers ask for the context by server name
    /// ([`SslOptions::ask_server_name`]).
    pub fn asks_server_name(&self) -> bool {
        self.0.ask_server_name
    }

    /// True for a server context whose handlers ask for the ALPN protocol
    /// ([`SslOptions::ask_protocol`]).
    pub fn asks_protocol(&self) -> bool {
        self.0.ask_protocol
    }

    /// This server context serving exactly `protocol` by ALPN (what an `ALPNCallback` chose;
    /// the client offered it). Shares everything else: certificates, verifiers, the session
    /// cache and ticket keys, so sessions resume across the two. None for a client context.
    pub(crate) fn serving_protocol(&self, protocol: &[u8]) -> Option<SslContext> {
        let Side::Server {
            config,
            strict,
            own_records,
        } = &self.0.side
        else {
            return None;
        };
        let mut config = ServerConfig::clone(config);
        config.alpn_protocols = vec![protocol.to_vec()];
        Some(SslContext(Arc::new(Inner {
            side: Side::Server {
                config: Arc::new(config),
                strict: strict.clone(),
                own_records: *own_records,
            },
            handshake_timeout: self.0.handshake_timeout,
            ask_server_name: false,
            ask_protocol: false,
            check_server_identity: false,
        })))
    }

    /// True for a client context whose handlers ask the application to judge the server's
    /// identity ([`SslOptions::check_server_identity`]).
    pub fn checks_server_identity(&self) -> bool {
        self.0.check_server_identity
    }

    /// The handshake timeout (none: no timeout).
    pub fn handshake_timeout(&self) -> Option<Duration> {
        self.0.handshake_timeout
    }

    /// A handler for one connection. Clients verify and send (SNI) the context's server name,
    /// or `server_name` when given (an IP address is verified but not sent).
    pub fn new_handler(&self, server_name: Option<&str>) -> Result<SslHandler, TlsError> {
        SslHandler::new(self.clone(), server_name)
    }
}

fn timeout(d: Duration) -> Option<Duration> {
    (!d.is_zero()).then_some(d)
}

impl std::fmt::Debug for SslContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SslContext")
            .field("server", &self.is_server())
            .field("handshake_timeout", &self.0.handshake_timeout)
            .field("ask_server_name", &self.0.ask_server_name)
            .field("ask_protocol", &self.0.ask_protocol)
            .field("check_server_identity", &self.0.check_server_identity)
            .finish()
    }
}
