//! The client's opening handshake (RFC 6455 §4.1) on plain header data, so this crate needs
//! no HTTP codec: [`ClientHandshake`] makes the request's WebSocket fields (a fresh
//! `Sec-WebSocket-Key` from the OS's random source, version 13, the subprotocols offered),
//! and checks the server's answer: status `101`, `Upgrade: websocket`, a `Connection` with
//! the `upgrade` token, the `Sec-WebSocket-Accept` the key calls for, a subprotocol only if
//! it was offered, an extension only if it was offered.
//!
//! Extensions: permessage-deflate (RFC 7692) is offered when configured
//! ([`ClientHandshake::with_deflate`]: the offer is [`client_offer`]) and the server's answer
//! is checked by [`accept_server_response`]; the agreed parameters come back in
//! [`ClientAccepted::deflate`] for the client-role `WebSocketHandler::with_deflate`. Without an
//! offer, any `Sec-WebSocket-Extensions` in the answer is refused
//! ([`ClientHandshakeError::UnexpectedExtension`]), as is an answer the offer does not allow.
//!
//! ```
//! use netloop_ws::client_handshake::ClientHandshake;
//! use netloop_ws::handshake::accept_key;
//!
//! let hs = ClientHandshake::new(vec!["chat".into()]);
//! let accept = accept_key(hs.key().as_bytes());
//! let answer: Vec<(&[u8], &[u8])> = vec![
//!     (b"Upgrade", b"websocket"),
//!     (b"Connection", b"Upgrade"),
//!     (b"Sec-WebSocket-Accept", accept.as_bytes()),
//!     (b"Sec-WebSocket-Protocol", b"chat"),
//! ];
//! let accepted = hs.check_response(101, &answer).unwrap();
//! assert_eq!(accepted.protocol.as_deref(), Some("chat"));
//! ```

use std::fmt;

use netloop_transport::TransportError;

use crate::extension::{accept_server_response, client_offer, DeflateConfig, PerMessageDeflate};
use crate::handshake::{accept_key, client_key, has_token, trim};

/// The handshake a client sends and the checks of its answer.
#[derive(Debug, Clone)]
pub struct ClientHandshake {
    key: String,
    protocols: Vec<String>,
    /// permessage-deflate offered with these settings (`None`: no extension offered).
    deflate: Option<DeflateConfig>,
}

/// What the server's accepted answer says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientAccepted {
    /// The subprotocol the server chose (one of those offered), if any.
    pub protocol: Option<String>,
    /// The extensions in use, as the server wrote them (`permessage-deflate; ...`).
    pub extensions: Vec<String>,
    /// permessage-deflate's parameters, if the server accepted the offer.
    pub deflate: Option<PerMessageDeflate>,
}

/// An answer that does not open the connection: the client fails it (RFC 6455 §4.1: "the
/// client MUST _Fail the WebSocket Connection_").
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientHandshakeError {
    /// The status is not `101 Switching Protocols`.
    Status {
        /// The status received.
        status: u16,
    },
    /// `Upgrade: websocket` or the `Connection: upgrade` token is missing.
    NotUpgrade,
    /// `Sec-WebSocket-Accept` is missing or does not match the key sent.
    BadAccept,
    /// A subprotocol the client did not offer, or more than one.
    UnexpectedProtocol {
        /// The value received.
        protocol: String,
    },
    /// An extension the client did not offer.
    UnexpectedExtension {
        /// The value received.
        extension: String,
    },
    /// An extension answer the offer does not allow (permessage-deflate's parameters).
    BadExtension {
        /// What is wrong with it.
        reason: String,
    },
    /// The connection ended before the answer.
    Aborted,
}

impl ClientHandshakeError {
    /// The stable code (`Error.code` in the Node binding).
    pub fn code(&self) -> &'static str {
        match self {
            ClientHandshakeError::Status { .. } => "ERR_WS_HANDSHAKE_STATUS",
            ClientHandshakeError::NotUpgrade => "ERR_WS_HANDSHAKE_NOT_UPGRADE",
            ClientHandshakeError::BadAccept => "ERR_WS_HANDSHAKE_ACCEPT",
            ClientHandshakeError::UnexpectedProtocol { .. } => "ERR_WS_HANDSHAKE_PROTOCOL",
            ClientHandshakeError::UnexpectedExtension { .. }
            | ClientHandshakeError::BadExtension { .. } => "ERR_WS_HANDSHAKE_EXTENSION",
            ClientHandshakeError::Aborted => "ERR_WS_HANDSHAKE_ABORTED",
        }
    }
}

impl fmt::Display for ClientHandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientHandshakeError::Status { status } => {
                write!(f, "unexpected server response: {status}")
            }
            ClientHandshakeError::NotUpgrade => {
                f.write_str("the answer lacks Upgrade: websocket or Connection: upgrade")
            }
            ClientHandshakeError::BadAccept => {
                f.write_str("invalid or missing Sec-WebSocket-Accept")
            }
            ClientHandshakeError::UnexpectedProtocol { protocol } => {
                write!(
                    f,
                    "the server chose a subprotocol not offered: {protocol:?}"
                )
            }
            ClientHandshakeError::UnexpectedExtension { extension } => {
                write!(
                    f,
                    "the server chose an extension not offered: {extension:?}"
                )
            }
            ClientHandshakeError::BadExtension { reason } => {
                write!(f, "unacceptable Sec-WebSocket-Extensions: {reason}")
            }
            ClientHandshakeError::Aborted => {
                f.write_str("the connection ended before the handshake's answer")
            }
        }
    }
}

impl std::error::Error for ClientHandshakeError {}

impl From<ClientHandshakeError> for TransportError {
    fn from(error: ClientHandshakeError) -> Self {
        TransportError::foreign(error.code(), error)
    }
}

impl ClientHandshake {
    /// A handshake with a fresh random key, offering `protocols` (in order of preference).
    pub fn new(protocols: Vec<String>) -> Self {
        ClientHandshake {
            key: client_key(),
            protocols,
            deflate: None,
        }
    }

    /// A handshake with a given key (tests; RFC 6455's example key).
    pub fn with_key(key: impl Into<String>, protocols: Vec<String>) -> Self {
        ClientHandshake {
            key: key.into(),
            protocols,
            deflate: None,
        }
    }

    /// Offers permessage-deflate with `config` (`None`: offers no extension).
    pub fn with_deflate(mut self, config: Option<DeflateConfig>) -> Self {
        self.deflate = config;
        self
    }

    /// The permessage-deflate settings offered, if any.
    pub fn deflate(&self) -> Option<&DeflateConfig> {
        self.deflate.as_ref()
    }

    /// `Sec-WebSocket-Key`'s value.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The subprotocols offered.
    pub fn protocols(&self) -> &[String] {
        &self.protocols
    }

    /// The WebSocket fields of the request (the caller adds `Host` and its own).
    pub fn request_headers(&self) -> Vec<(&'static str, String)> {
        let mut fields = vec![
            ("Upgrade", "websocket".to_string()),
            ("Connection", "Upgrade".to_string()),
            ("Sec-WebSocket-Key", self.key.clone()),
            ("Sec-WebSocket-Version", "13".to_string()),
        ];
        if !self.protocols.is_empty() {
            fields.push(("Sec-WebSocket-Protocol", self.protocols.join(", ")));
        }
        if let Some(config) = &self.deflate {
            fields.push(("Sec-WebSocket-Extensions", client_offer(config)));
        }
        fields
    }

    /// Checks the server's answer.
    ///
    /// # Errors
    /// The [`ClientHandshakeError`] that fails the connection.
    pub fn check_response(
        &self,
        status: u16,
        headers: &[(&[u8], &[u8])],
    ) -> Result<ClientAccepted, ClientHandshakeError> {
        if status != 101 {
            return Err(ClientHandshakeError::Status { status });
        }
        let all = |name: &'static str| {
            headers
                .iter()
                .filter(move |(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
                .map(|&(_, v)| v)
        };
        let upgrade = all("upgrade").any(|v| has_token(v, b"websocket"));
        let connection = all("connection").any(|v| has_token(v, b"upgrade"));
        if !upgrade || !connection {
            return Err(ClientHandshakeError::NotUpgrade);
        }
        let expected = accept_key(self.key.as_bytes());
        let mut accepts = all("sec-websocket-accept");
        match (accepts.next().map(trim), accepts.next()) {
            (Some(got), None) if got == expected.as_bytes() => {}
            _ => return Err(ClientHandshakeError::BadAccept),
        }
        let chosen: Vec<&[u8]> = all("sec-websocket-protocol")
            .flat_map(|v| v.split(|&b| b == b','))
            .map(trim)
            .filter(|p| !p.is_empty())
            .collect();
        let protocol = match chosen[..] {
            [] => None,
            [one] => match self.protocols.iter().find(|p| p.as_bytes() == one) {
                Some(p) => Some(p.clone()),
                None => return Err(unexpected_protocol(one)),
            },
            _ => return Err(unexpected_protocol(&chosen.join(&b","[..]))),
        };
        let extensions: Vec<&[u8]> = all("sec-websocket-extensions")
            .flat_map(|v| v.split(|&b| b == b','))
            .map(trim)
            .filter(|e| !e.is_empty())
            .collect();
        let deflate = self.check_extensions(&extensions)?;
        Ok(ClientAccepted {
            protocol,
            extensions: extensions
                .iter()
                .map(|e| String::from_utf8_lossy(e).into_owned())
                .collect(),
            deflate,
        })
    }

    /// The extensions of the answer against those offered: with no offer, any extension is
    /// refused; with permessage-deflate offered, [`accept_server_response`] decides.
    ///
    /// # Errors
    /// [`ClientHandshakeError::UnexpectedExtension`] naming the first one (no offer), or
    /// [`ClientHandshakeError::BadExtension`] with the negotiation's reason (an answer the
    /// offer does not allow).
    pub fn check_extensions(
        &self,
        got: &[&[u8]],
    ) -> Result<Option<PerMessageDeflate>, ClientHandshakeError> {
        let Some(config) = &self.deflate else {
            return match got.first() {
                None => Ok(None),
                Some(first) => Err(ClientHandshakeError::UnexpectedExtension {
                    extension: String::from_utf8_lossy(first).into_owned(),
                }),
            };
        };
        accept_server_response(config, got.iter().copied())
            .map_err(|e| ClientHandshakeError::BadExtension { reason: e.reason })
    }
}

fn unexpected_protocol(value: &[u8]) -> ClientHandshakeError {
    ClientHandshakeError::UnexpectedProtocol {
        protocol: String::from_utf8_lossy(value).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";
    const ACCEPT: &[u8] = b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

    fn answer(extra: &[(&'static [u8], &'static [u8])]) -> Vec<(&'static [u8], &'static [u8])> {
        let mut fields: Vec<(&[u8], &[u8])> = vec![
            (b"Upgrade", b"WebSocket"),
            (b"Connection", b"keep-alive, Upgrade"),
            (b"Sec-WebSocket-Accept", ACCEPT),
        ];
        fields.extend_from_slice(extra);
        fields
    }

    #[test]
    fn keys_are_fresh_16_byte_base64_values() {
        let a = ClientHandshake::new(Vec::new());
        let b = ClientHandshake::new(Vec::new());
        assert_ne!(a.key(), b.key());
        assert_eq!(a.key().len(), 24);
        assert!(a.key().ends_with("=="));
    }

    #[test]
    fn the_request_carries_version_13_the_key_and_the_offered_protocols() {
        let hs = ClientHandshake::with_key(KEY, vec!["chat".into(), "superchat".into()]);
        let fields = hs.request_headers();
        assert!(fields.contains(&("Sec-WebSocket-Version", "13".into())));
        assert!(fields.contains(&("Sec-WebSocket-Key", KEY.into())));
        assert!(fields.contains(&("Sec-WebSocket-Protocol", "chat, superchat".into())));
        let none = ClientHandshake::with_key(KEY, Vec::new()).request_headers();
        assert!(none.iter().all(|(n, _)| *n != "Sec-WebSocket-Protocol"));
    }

    #[test]
    fn rfc_6455s_example_answer_is_accepted() {
        let hs = ClientHandshake::with_key(KEY, vec!["chat".into()]);
        let ok = hs.check_response(101, &answer(&[])).unwrap();
        assert_eq!(ok.protocol, None);
        let ok = hs
            .check_response(101, &answer(&[(b"Sec-WebSocket-Protocol", b" chat ")]))
            .unwrap();
        assert_eq!(ok.protocol.as_deref(), Some("chat"));
    }

    #[test]
    fn each_bad_answer_is_refused_with_its_code() {
        let hs = ClientHandshake::with_key(KEY, vec!["chat".into()]);
        let code = |status, fields: &[(&[u8], &[u8])]| {
            hs.check_response(status, fields).unwrap_err().code()
        };
        assert_eq!(code(200, &answer(&[])), "ERR_WS_HANDSHAKE_STATUS");
        assert_eq!(code(403, &answer(&[])), "ERR_WS_HANDSHAKE_STATUS");
        let no_upgrade: Vec<(&[u8], &[u8])> = vec![
            (b"Connection", b"Upgrade"),
            (b"Sec-WebSocket-Accept", ACCEPT),
        ];
        assert_eq!(code(101, &no_upgrade), "ERR_WS_HANDSHAKE_NOT_UPGRADE");
        let no_connection: Vec<(&[u8], &[u8])> = vec![
            (b"Upgrade", b"websocket"),
            (b"Sec-WebSocket-Accept", ACCEPT),
        ];
        assert_eq!(code(101, &no_connection), "ERR_WS_HANDSHAKE_NOT_UPGRADE");
        let bad_accept: Vec<(&[u8], &[u8])> = vec![
            (b"Upgrade", b"websocket"),
            (b"Connection", b"Upgrade"),
            (b"Sec-WebSocket-Accept", b"AAAAAAAAAAAAAAAAAAAAAAAAAAA="),
        ];
        assert_eq!(code(101, &bad_accept), "ERR_WS_HANDSHAKE_ACCEPT");
        let missing: Vec<(&[u8], &[u8])> =
            vec![(b"Upgrade", b"websocket"), (b"Connection", b"Upgrade")];
        assert_eq!(code(101, &missing), "ERR_WS_HANDSHAKE_ACCEPT");
        assert_eq!(
            code(101, &answer(&[(b"Sec-WebSocket-Protocol", b"other")])),
            "ERR_WS_HANDSHAKE_PROTOCOL"
        );
        assert_eq!(
            code(101, &answer(&[(b"Sec-WebSocket-Protocol", b"chat, chat")])),
            "ERR_WS_HANDSHAKE_PROTOCOL"
        );
        assert_eq!(
            code(
                101,
                &answer(&[(b"Sec-WebSocket-Extensions", b"permessage-deflate")])
            ),
            "ERR_WS_HANDSHAKE_EXTENSION"
        );
    }

    #[test]
    fn a_protocol_is_refused_when_none_was_offered() {
        let hs = ClientHandshake::with_key(KEY, Vec::new());
        let err = hs
            .check_response(101, &answer(&[(b"Sec-WebSocket-Protocol", b"chat")]))
            .unwrap_err();
        assert_eq!(
            err,
            ClientHandshakeError::UnexpectedProtocol {
                protocol: "chat".into()
            }
        );
        assert!(TransportError::from(err).to_string().contains("chat"));
    }
}
