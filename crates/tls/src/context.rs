//! `SslContext`: a server's or a client's TLS configuration, parsed once and shared (an `Arc`)
//! by every connection and every thread that uses it (Netty's `SslContext`). Contexts are
//! `Send + Sync`; handlers made from one are per connection.

use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::ServerCertVerifier;
use rustls::client::Resumption;
use rustls::server::danger::ClientCertVerifier;
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, ServerConfig};

use crate::error::TlsError;
use crate::exporter::SecretTap;
use crate::handler::SslHandler;
use crate::pem;
use crate::rustls_parts::{
    crls, key_log, key_log_file, provider, rustls_err, server_verifier, trust, versions,
    with_revocation,
};
use crate::sni::SniResolver;
use crate::verify::{
    ChainOnlyServerVerifier, LenientClientVerifier, LenientServerVerifier, StapleRecorder,
};

pub use crate::options::{
    ClientAuth, PemIdentity, SslOptions, TlsVersion, DEFAULT_HANDSHAKE_TIMEOUT,
    DEFAULT_SESSION_TIMEOUT, MAX_SESSION_TIMEOUT,
};

pub(crate) enum Side {
    Server {
        config: Arc<ServerConfig>,
        strict: Option<Arc<dyn ClientCertVerifier>>,
        /// TLS 1.3 records after the handshake go through crate::record.
        experimental_own_records: bool,
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
        // and keeps the exporter secret, which rustls gives to the key log alone; every TLS
        // 1.3 server keeps the key of the alerts rustls does not send (engine/silent_alert.rs).
        let experimental_own_records =
            o.experimental_own_records && o.max_version >= TlsVersion::Tls13;
        if o.max_version >= TlsVersion::Tls13 {
            config.key_log = Arc::new(SecretTap {
                file: key_log_file(o)?,
            });
        } else if let Some(log) = key_log(o)? {
            config.key_log = log;
        }
        config.enable_secret_extraction = experimental_own_records;
        Ok(SslContext(Arc::new(Inner {
            side: Side::Server {
                config: Arc::new(config),
                strict,
                experimental_own_records,
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
            experimental_own_records,
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
                experimental_own_records: *experimental_own_records,
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
