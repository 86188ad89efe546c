//! The server's opening handshake (RFC 6455 §4.2) on plain header data, so this crate needs
//! no HTTP codec: the caller (an adapter where the HTTP and WebSocket layers meet) hands in
//! the request's method and fields, and writes the `101` with [`Accepted::response_headers`]
//! or the refusal's status and fields.
//!
//! Checked: `GET`; `Upgrade: websocket` and a `Connection` with the `upgrade` token;
//! `Sec-WebSocket-Version: 13` (else 426 naming 13); one `Sec-WebSocket-Key` that is 16 bytes
//! in base64; the origin, if a check is configured. Chosen: the first subprotocol the client
//! offers that the server supports (none if none matches, as `ws` and browsers accept);
//! permessage-deflate, when [`HandshakeOptions::permessage_deflate`] is set, with the first
//! offer it can honour (extension.rs); other extensions are not accepted.

use sha1::{Digest, Sha1};

use crate::error::HandshakeError;
use crate::extension::{server_negotiate, DeflateConfig, PerMessageDeflate};

/// The GUID RFC 6455 appends to the key.
const GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// A check of the `Origin` field (`None` when the request has none): `true` accepts.
pub type OriginCheck = std::rc::Rc<dyn Fn(Option<&[u8]>) -> bool>;

/// What the server accepts.
#[derive(Clone, Default)]
pub struct HandshakeOptions {
    /// Subprotocols the server speaks.
    pub subprotocols: Vec<String>,
    /// The origin check; none accepts every origin.
    pub origin_check: Option<OriginCheck>,
    /// Accept permessage-deflate when offered, with these settings (`None`: never).
    pub permessage_deflate: Option<DeflateConfig>,
}

impl std::fmt::Debug for HandshakeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandshakeOptions")
            .field("subprotocols", &self.subprotocols)
            .field("origin_check", &self.origin_check.is_some())
            .field("permessage_deflate", &self.permessage_deflate)
            .finish()
    }
}

/// An accepted handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// `Sec-WebSocket-Accept`'s value.
    pub accept: String,
    /// The subprotocol chosen, if any.
    pub protocol: Option<String>,
    /// permessage-deflate's parameters, if accepted.
    pub deflate: Option<PerMessageDeflate>,
    /// The `Sec-WebSocket-Extensions` value of the answer, if an extension was accepted.
    pub extensions: Option<String>,
}

impl Accepted {
    /// The fields of the `101 Switching Protocols` answer.
    pub fn response_headers(&self) -> Vec<(&'static str, String)> {
        let mut fields = vec![
            ("Upgrade", "websocket".to_string()),
            ("Connection", "Upgrade".to_string()),
            ("Sec-WebSocket-Accept", self.accept.clone()),
        ];
        if let Some(protocol) = &self.protocol {
            fields.push(("Sec-WebSocket-Protocol", protocol.clone()));
        }
        if let Some(extensions) = &self.extensions {
            fields.push(("Sec-WebSocket-Extensions", extensions.clone()));
        }
        fields
    }
}

/// Whether the request asks for a WebSocket (`Upgrade: websocket`), whatever else is wrong
/// with it: such a request is answered by the handshake, others are plain HTTP.
pub fn is_websocket_request<'a>(headers: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> bool {
    headers.into_iter().any(|(name, value)| {
        name.eq_ignore_ascii_case(b"upgrade") && has_token(value, b"websocket")
    })
}

/// Checks a handshake request and chooses what to answer.
///
/// # Errors
/// The [`HandshakeError`] to refuse it with (its `status()` and `headers()`).
pub fn server_handshake(
    method: &[u8],
    headers: &[(&[u8], &[u8])],
    options: &HandshakeOptions,
) -> Result<Accepted, HandshakeError> {
    if method != b"GET" {
        return Err(HandshakeError::NotGet);
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
        return Err(HandshakeError::NotUpgrade);
    }
    let mut versions = all("sec-websocket-version");
    if versions.next().map(trim) != Some(&b"13"[..]) || versions.next().is_some() {
        return Err(HandshakeError::UnsupportedVersion);
    }
    let mut keys = all("sec-websocket-key");
    let key = match (keys.next().map(trim), keys.next()) {
        (Some(key), None) if is_key(key) => key,
        _ => return Err(HandshakeError::BadKey),
    };
    if let Some(check) = &options.origin_check {
        if !check(all("origin").next()) {
            return Err(HandshakeError::OriginRefused);
        }
    }
    let protocol = all("sec-websocket-protocol")
        .flat_map(|v| v.split(|&b| b == b','))
        .map(trim)
        .find_map(|offer| {
            options
                .subprotocols
                .iter()
                .find(|p| p.as_bytes() == offer)
                .cloned()
        });
    let agreed = options
        .permessage_deflate
        .as_ref()
        .and_then(|config| server_negotiate(config, all("sec-websocket-extensions")));
    Ok(Accepted {
        accept: accept_key(key),
        protocol,
        deflate: agreed.as_ref().map(|a| a.params),
        extensions: agreed.map(|a| a.response),
    })
}

/// `Sec-WebSocket-Accept` for a key: base64(SHA-1(key + GUID)).
pub fn accept_key(key: &[u8]) -> String {
    let mut sha = Sha1::new();
    sha.update(key);
    sha.update(GUID);
    base64(&sha.finalize())
}

/// Whether a comma-separated field value holds `token` (case-insensitive).
pub(crate) fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| trim(t).eq_ignore_ascii_case(token))
}

/// `s` without leading and trailing spaces and tabs (HTTP's optional white space).
pub(crate) fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// A 16-byte value in base64: 22 characters of the alphabet, the last holding 2 bits, then
/// `==`.
fn is_key(key: &[u8]) -> bool {
    key.len() == 24
        && key.ends_with(b"==")
        && key[..22].iter().all(|b| ALPHABET.contains(b))
        && ALPHABET
            .iter()
            .position(|&a| a == key[21])
            .is_some_and(|i| i & 0x0f == 0)
}

/// Standard base64 with padding.
pub(crate) fn base64(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A fresh random key for a client handshake (16 random bytes in base64).
pub fn client_key() -> String {
    let mut raw = [0u8; 16];
    if getrandom::getrandom(&mut raw).is_err() {
        raw = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
            .to_le_bytes();
    }
    base64(&raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accept_key_is_rfc_6455s_example() {
        assert_eq!(base64(b"Man"), "TWFu");
        assert_eq!(base64(b"Ma"), "TWE=");
        assert_eq!(base64(b"M"), "TQ==");
        assert_eq!(
            accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }
}
