//! Typed TLS errors, each with a stable code. Codes follow Node's where Node has one for the same
//! failure (`CERT_HAS_EXPIRED`, `ERR_TLS_CERT_ALTNAME_INVALID`, ...), so code that handles
//! node:tls errors handles these; the rest are `ERR_TLS_*`.
//!
//! Errors reach a pipeline as `TransportError::Foreign` with the same code ([`TlsError::into_transport`]).

use std::fmt;
use std::sync::Arc;

use netloop_transport::TransportError;
use rustls::{AlertDescription, CertificateError};

/// What went wrong in a TLS context or connection.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TlsError {
    /// A context option is invalid (bad PEM, a key that does not match, a bad version range...).
    Config(String),
    /// The handshake did not complete within the handshake timeout.
    HandshakeTimeout(std::time::Duration),
    /// The connection closed before the handshake completed.
    ClosedDuringHandshake,
    /// The peer's certificate has expired.
    CertificateExpired,
    /// The peer's certificate is not valid yet.
    CertificateNotYetValid,
    /// The peer's certificate chain does not lead to a trusted root.
    UnknownIssuer,
    /// The peer's certificate is not valid for the name that was asked for.
    HostnameMismatch(String),
    /// The peer's certificate was revoked.
    CertificateRevoked,
    /// Revocation lists were given, but none from the issuer of the peer's certificate.
    RevocationListMissing,
    /// The revocation list of the peer certificate's issuer has expired.
    RevocationListExpired,
    /// Any other problem with the peer's certificate.
    BadCertificate(String),
    /// The client sent no certificate although the server requires one (mTLS).
    CertificateRequired,
    /// The peer sent a fatal alert (its name, e.g. `unknown_ca`, `handshake_failure`).
    AlertReceived(String),
    /// The peer sent something that is not TLS, or TLS that breaks the protocol.
    Protocol(String),
    /// No protocol version, cipher suite or ALPN protocol is acceptable to both sides.
    NoCommonParameters(String),
    /// A message could not be written (the handshake failed earlier, or the session closed).
    Closed,
    /// The application's choice of a context by server name (node:tls's `SNICallback`)
    /// refused the name or failed; the message starts with the alert sent
    /// (`unrecognized_name` or `internal_error`).
    SniCallback(String),
    /// The application's choice of an ALPN protocol (node:tls's `ALPNCallback`) failed; the
    /// message starts with the alert sent (`internal_error`).
    AlpnCallback(String),
    /// The application chose an ALPN protocol the client did not offer (node:tls's
    /// `ERR_TLS_ALPN_CALLBACK_INVALID_RESULT`); `internal_error` was sent.
    AlpnInvalidResult(String),
    /// The application refused the server's identity (node:tls's `checkServerIdentity`), or
    /// could not be asked; the message is the application's.
    ServerIdentity(String),
    /// An operation that needs an established session came before the handshake completed
    /// or after the close (node:tls's `ERR_TLS_INVALID_STATE`), or asked for what it cannot
    /// give (keying material longer than the exporter makes).
    InvalidState(String),
    /// Any other TLS failure.
    Other(String),
}

impl TlsError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            TlsError::Config(_) => "ERR_TLS_INVALID_CONTEXT",
            TlsError::HandshakeTimeout(_) => "ERR_TLS_HANDSHAKE_TIMEOUT",
            TlsError::ClosedDuringHandshake => "ECONNRESET",
            TlsError::CertificateExpired => "CERT_HAS_EXPIRED",
            TlsError::CertificateNotYetValid => "CERT_NOT_YET_VALID",
            TlsError::UnknownIssuer => "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
            TlsError::HostnameMismatch(_) => "ERR_TLS_CERT_ALTNAME_INVALID",
            TlsError::CertificateRevoked => "CERT_REVOKED",
            TlsError::RevocationListMissing => "UNABLE_TO_GET_CRL",
            TlsError::RevocationListExpired => "CRL_HAS_EXPIRED",
            TlsError::BadCertificate(_) => "ERR_TLS_BAD_CERTIFICATE",
            TlsError::CertificateRequired => "ERR_TLS_CERT_REQUIRED",
            TlsError::AlertReceived(_) => "ERR_TLS_ALERT_RECEIVED",
            TlsError::Protocol(_) => "ERR_TLS_PROTOCOL",
            TlsError::NoCommonParameters(_) => "ERR_TLS_NO_COMMON_PARAMETERS",
            TlsError::Closed => "ERR_TLS_CLOSED",
            TlsError::SniCallback(_) => "ERR_TLS_SNI_CALLBACK",
            TlsError::AlpnCallback(_) => "ERR_TLS_ALPN_CALLBACK",
            TlsError::AlpnInvalidResult(_) => "ERR_TLS_ALPN_CALLBACK_INVALID_RESULT",
            TlsError::ServerIdentity(_) => "ERR_TLS_SERVER_IDENTITY",
            TlsError::InvalidState(_) => "ERR_TLS_INVALID_STATE",
            TlsError::Other(_) => "ERR_TLS_HANDSHAKE_FAILED",
        }
    }

    /// The name of the alert the peer sent, for [`TlsError::AlertReceived`].
    pub fn alert(&self) -> Option<&str> {
        match self {
            TlsError::AlertReceived(a) => Some(a),
            _ => None,
        }
    }

    /// This error as a pipeline error carrying the same code.
    pub fn into_transport(self) -> TransportError {
        TransportError::Foreign {
            code: self.code().into(),
            error: Arc::new(self),
        }
    }

    /// Classifies a rustls error (from processing the peer's records or verifying its
    /// certificate).
    pub fn from_rustls(e: &rustls::Error) -> TlsError {
        use rustls::Error as E;
        match e {
            E::InvalidCertificate(c) => from_certificate_error(c),
            E::NoCertificatesPresented => TlsError::CertificateRequired,
            E::AlertReceived(a) => TlsError::AlertReceived(alert_name(*a)),
            E::InvalidMessage(m) => TlsError::Protocol(format!("invalid message: {m:?}")),
            E::InappropriateMessage { .. } | E::InappropriateHandshakeMessage { .. } => {
                TlsError::Protocol(e.to_string())
            }
            E::PeerIncompatible(p) => TlsError::NoCommonParameters(format!("{p:?}")),
            E::NoApplicationProtocol => {
                TlsError::NoCommonParameters("no application protocol (ALPN) in common".into())
            }
            E::PeerMisbehaved(m) => TlsError::Protocol(format!("peer misbehaved: {m:?}")),
            E::DecryptError => TlsError::Protocol("cannot decrypt a record".into()),
            E::PeerSentOversizedRecord => TlsError::Protocol("oversized record".into()),
            other => TlsError::Other(other.to_string()),
        }
    }
}

fn from_certificate_error(c: &CertificateError) -> TlsError {
    use CertificateError as C;
    match c {
        C::Expired | C::ExpiredContext { .. } => TlsError::CertificateExpired,
        C::NotValidYet | C::NotValidYetContext { .. } => TlsError::CertificateNotYetValid,
        C::UnknownIssuer => TlsError::UnknownIssuer,
        C::NotValidForName | C::NotValidForNameContext { .. } => {
            TlsError::HostnameMismatch(format!("{c:?}"))
        }
        C::Revoked => TlsError::CertificateRevoked,
        C::UnknownRevocationStatus => TlsError::RevocationListMissing,
        C::ExpiredRevocationList | C::ExpiredRevocationListContext { .. } => {
            TlsError::RevocationListExpired
        }
        other => TlsError::BadCertificate(format!("{other:?}")),
    }
}

/// The RFC name of an alert (`unknown_ca`, `handshake_failure`, ...).
pub(crate) fn alert_name(a: AlertDescription) -> String {
    let debug = format!("{a:?}");
    // rustls names alerts in CamelCase (`UnknownCA`, `HandshakeFailure`); the RFC uses snake_case.
    let mut out = String::with_capacity(debug.len() + 4);
    let chars: Vec<char> = debug.chars().collect();
    for (i, ch) in chars.iter().enumerate() {
        if ch.is_ascii_uppercase() {
            let prev_lower = i > 0 && chars[i - 1].is_ascii_lowercase();
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
            if i > 0 && (prev_lower || (prev_upper && next_lower)) {
                out.push('_');
            }
            out.push(ch.to_ascii_lowercase());
        } else {
            out.push(*ch);
        }
    }
    out
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsError::Config(m) => write!(f, "invalid TLS context: {m}"),
            TlsError::HandshakeTimeout(d) => {
                write!(f, "TLS handshake timed out after {} ms", d.as_millis())
            }
            TlsError::ClosedDuringHandshake => {
                f.write_str("connection closed before the TLS handshake completed")
            }
            TlsError::CertificateExpired => f.write_str("certificate has expired"),
            TlsError::CertificateNotYetValid => f.write_str("certificate is not yet valid"),
            TlsError::UnknownIssuer => {
                f.write_str("unable to get local issuer certificate (unknown CA)")
            }
            TlsError::HostnameMismatch(m) => {
                write!(f, "certificate is not valid for the host name ({m})")
            }
            TlsError::CertificateRevoked => f.write_str("certificate revoked"),
            TlsError::RevocationListMissing => {
                f.write_str("unable to get certificate CRL (no revocation list from its issuer)")
            }
            TlsError::RevocationListExpired => f.write_str("CRL has expired"),
            TlsError::BadCertificate(m) => write!(f, "bad certificate: {m}"),
            TlsError::CertificateRequired => {
                f.write_str("peer did not return a certificate (client certificate required)")
            }
            TlsError::AlertReceived(a) => write!(f, "peer sent TLS alert: {a}"),
            TlsError::Protocol(m) => write!(f, "TLS protocol error: {m}"),
            TlsError::NoCommonParameters(m) => write!(f, "no common TLS parameters: {m}"),
            TlsError::Closed => f.write_str("the TLS session is closed"),
            TlsError::SniCallback(m) | TlsError::AlpnCallback(m) => f.write_str(m),
            TlsError::AlpnInvalidResult(m) => f.write_str(m),
            TlsError::ServerIdentity(m) => f.write_str(m),
            TlsError::InvalidState(m) => f.write_str(m),
            TlsError::Other(m) => write!(f, "TLS handshake failed: {m}"),
        }
    }
}

impl std::error::Error for TlsError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alert_names_are_the_rfc_snake_case_names() {
        assert_eq!(alert_name(AlertDescription::UnknownCA), "unknown_ca");
        assert_eq!(
            alert_name(AlertDescription::HandshakeFailure),
            "handshake_failure"
        );
        assert_eq!(
            alert_name(AlertDescription::CertificateRequired),
            "certificate_required"
        );
        assert_eq!(
            alert_name(AlertDescription::BadCertificate),
            "bad_certificate"
        );
    }

    #[test]
    fn certificate_errors_map_to_node_codes() {
        let e = TlsError::from_rustls(&rustls::Error::InvalidCertificate(
            CertificateError::Expired,
        ));
        assert_eq!(e.code(), "CERT_HAS_EXPIRED");
        let e = TlsError::from_rustls(&rustls::Error::InvalidCertificate(
            CertificateError::UnknownIssuer,
        ));
        assert_eq!(e.code(), "UNABLE_TO_GET_ISSUER_CERT_LOCALLY");
        let e = TlsError::from_rustls(&rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName,
        ));
        assert_eq!(e.code(), "ERR_TLS_CERT_ALTNAME_INVALID");
        let e = TlsError::from_rustls(&rustls::Error::AlertReceived(AlertDescription::UnknownCA));
        assert_eq!(e.code(), "ERR_TLS_ALERT_RECEIVED");
        assert_eq!(e.alert(), Some("unknown_ca"));
    }
}
