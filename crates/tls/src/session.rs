//! What a completed handshake negotiated (node:tls's `getProtocol()`, `getCipher()`,
//! `alpnProtocol`, `servername`, `getPeerCertificate()`, `authorized`), and the events a
//! handshake or a peer's close_notify sends down the pipeline.

use std::sync::Arc;

use bytes::Bytes;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CommonState, Connection, HandshakeKind, NamedGroup, ProtocolVersion};

use crate::context::Side;
use crate::error::TlsError;

/// The negotiated parameters of one TLS connection.
#[derive(Debug, Clone)]
pub struct TlsSession {
    /// `TLSv1.2` or `TLSv1.3` (node:tls's names).
    pub protocol: &'static str,
    /// The cipher suite's IANA name (e.g. `TLS_AES_128_GCM_SHA256`).
    pub cipher: String,
    /// The ALPN protocol both sides agreed on.
    pub alpn_protocol: Option<String>,
    /// Server: the name the client asked for (SNI). Client: the name it verified.
    pub server_name: Option<String>,
    /// The peer's certificate chain (DER, leaf first); empty if it sent none.
    pub peer_certificates: Vec<Bytes>,
    /// True if this handshake resumed an earlier session.
    pub resumed: bool,
    /// True if the peer's certificate verified against the trusted CAs (and, for a client,
    /// matched the server name).
    pub authorized: bool,
    /// Why `authorized` is false.
    pub authorization_error: Option<TlsError>,
    /// The key exchange group, by OpenSSL's name as node:tls reports it (`X25519`,
    /// `prime256v1`, `secp384r1`), and its size in bits (node:tls's `getEphemeralKeyInfo()`).
    pub key_exchange: Option<(&'static str, u32)>,
    /// Client: the OCSP response the server stapled to its certificate (DER), as received:
    /// not checked here (node:tls's `'OCSPResponse'` event). A client always asks for one.
    pub ocsp_response: Option<Bytes>,
}

impl TlsSession {
    /// The cipher suite by OpenSSL's name, as node:tls's `getCipher().name` gives it
    /// (`ECDHE-RSA-AES128-GCM-SHA256`; a TLS 1.3 suite has one name).
    pub fn cipher_openssl_name(&self) -> &str {
        crate::suites::openssl_name(&self.cipher).unwrap_or(&self.cipher)
    }
}

/// Fired to every handler after the handshake (Netty's `SslHandshakeCompletionEvent`).
#[derive(Debug, Clone)]
pub struct SslHandshakeCompletionEvent(pub Result<Arc<TlsSession>, TlsError>);

/// Fired when the peer sent close_notify (Netty's `SslCloseCompletionEvent`); the handler then
/// closes the channel.
#[derive(Debug, Clone, Copy)]
pub struct SslCloseCompletionEvent;

/// A key exchange group by OpenSSL's name (node:tls's) and its size in bits.
fn group_name(g: NamedGroup) -> Option<(&'static str, u32)> {
    match g {
        NamedGroup::X25519 => Some(("X25519", 253)),
        NamedGroup::secp256r1 => Some(("prime256v1", 256)),
        NamedGroup::secp384r1 => Some(("secp384r1", 384)),
        NamedGroup::secp521r1 => Some(("secp521r1", 521)),
        NamedGroup::X448 => Some(("X448", 448)),
        _ => None,
    }
}

fn protocol_name(v: Option<ProtocolVersion>) -> &'static str {
    match v {
        Some(ProtocolVersion::TLSv1_3) => "TLSv1.3",
        Some(ProtocolVersion::TLSv1_2) => "TLSv1.2",
        _ => "unknown",
    }
}

fn cipher_name(common: &CommonState) -> String {
    let Some(suite) = common.negotiated_cipher_suite() else {
        return String::new();
    };
    let name = format!("{:?}", suite.suite());
    match name.strip_prefix("TLS13_") {
        Some(rest) => format!("TLS_{rest}"),
        None => name,
    }
}

/// What a handshake negotiated, taken from rustls before the session may move on to our own
/// record layer (which keeps none of it).
pub(crate) struct Negotiated {
    protocol: &'static str,
    cipher: String,
    alpn_protocol: Option<String>,
    server_name: Option<String>,
    peer: Vec<CertificateDer<'static>>,
    resumed: bool,
    key_exchange: Option<(&'static str, u32)>,
}

impl Negotiated {
    pub(crate) fn of(common: &CommonState, server_name: Option<String>) -> Negotiated {
        Negotiated {
            protocol: protocol_name(common.protocol_version()),
            cipher: cipher_name(common),
            alpn_protocol: common
                .alpn_protocol()
                .map(|p| String::from_utf8_lossy(p).into_owned()),
            server_name,
            peer: common
                .peer_certificates()
                .map(<[_]>::to_vec)
                .unwrap_or_default(),
            resumed: common.handshake_kind() == Some(HandshakeKind::Resumed),
            key_exchange: common
                .negotiated_key_exchange_group()
                .and_then(|g| group_name(g.name())),
        }
    }

    pub(crate) fn describe(
        &self,
        side: &Side,
        verified_name: Option<&ServerName<'static>>,
    ) -> TlsSession {
        let (authorized, authorization_error) = authorize(&self.peer, side, verified_name);
        TlsSession {
            protocol: self.protocol,
            cipher: self.cipher.clone(),
            alpn_protocol: self.alpn_protocol.clone(),
            server_name: self.server_name.clone(),
            peer_certificates: self
                .peer
                .iter()
                .map(|c| Bytes::copy_from_slice(c.as_ref()))
                .collect(),
            resumed: self.resumed,
            authorized,
            authorization_error,
            key_exchange: self.key_exchange,
            ocsp_response: None,
        }
    }
}

/// Reads what `conn` negotiated, verifying the peer's chain strictly for `authorized`.
pub(crate) fn describe(
    conn: &Connection,
    side: &Side,
    verified_name: Option<&ServerName<'static>>,
) -> TlsSession {
    let (common, server_name): (&CommonState, _) = match conn {
        Connection::Server(s) => (s, s.server_name().map(str::to_string)),
        Connection::Client(c) => (c, verified_name.map(|n| n.to_str().into_owned())),
    };
    Negotiated::of(common, server_name).describe(side, verified_name)
}

fn authorize(
    peer: &[CertificateDer<'static>],
    side: &Side,
    name: Option<&ServerName<'static>>,
) -> (bool, Option<TlsError>) {
    let Some((leaf, rest)) = peer.split_first() else {
        return (false, Some(TlsError::CertificateRequired));
    };
    let now = UnixTime::now();
    let result = match side {
        Side::Server {
            strict: Some(v), ..
        } => v.verify_client_cert(leaf, rest, now).map(|_| ()),
        Side::Server { strict: None, .. } => return (false, None),
        Side::Client { strict, .. } => match name {
            Some(n) => strict
                .verify_server_cert(leaf, rest, n, &[], now)
                .map(|_| ()),
            None => return (false, None),
        },
    };
    match result {
        Ok(()) => (true, None),
        Err(e) => (false, Some(TlsError::from_rustls(&e))),
    }
}
