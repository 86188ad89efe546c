//! permessage-deflate negotiation (RFC 7692 §5, §7.1) on plain header values, for both ends:
//!
//! - a server reads the client's `Sec-WebSocket-Extensions` offers with [`server_negotiate`]
//!   and answers the first one it can honour (invalid offers — an unknown or repeated
//!   parameter, a value where none is allowed, window bits outside 8..15 — are declined, as
//!   are offers asking for what this end cannot do); other extensions are ignored;
//! - a client sends [`client_offer`] and checks the server's answer with
//!   [`accept_server_response`] (an answer it did not ask for fails the handshake).
//!
//! The result is a [`PerMessageDeflate`]: the parameters both ends use from then on.
//!
//! Window bits: the compressor (zlib-rs through `flate2`) takes windows of 2^9 to 2^15
//! bytes. When the peer asks this end for a window of 2^8, the agreement is accepted and
//! this end sends every message uncompressed (RFC 7692 lets a sender leave any message
//! uncompressed; [`Deflater`](crate::deflate::Deflater) never compresses at 8), while the
//! peer's messages are still inflated. The decompressor always has a 2^15 window and so
//! reads any stream.

use std::fmt;

use netloop_transport::TransportError;

/// Smallest window (log2) the compressor can use.
pub const MIN_WINDOW_BITS: u8 = 9;
/// Largest window (log2), and the default.
pub const MAX_WINDOW_BITS: u8 = 15;
/// The default `threshold`: messages under 1024 bytes go uncompressed (as the `ws` package).
pub const DEFAULT_DEFLATE_THRESHOLD: usize = 1024;

/// What this end accepts (server) or offers (client), and how it compresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeflateConfig {
    /// Messages shorter than this many bytes are sent uncompressed.
    pub threshold: usize,
    /// The server starts each message with an empty window (its compressor state is freed
    /// between messages).
    pub server_no_context_takeover: bool,
    /// The client starts each message with an empty window.
    pub client_no_context_takeover: bool,
    /// Largest window (log2, 9..=15) the server compresses with.
    pub server_max_window_bits: u8,
    /// Largest window (log2, 9..=15) the client compresses with; below 15 a server declines
    /// offers that do not let it set this.
    pub client_max_window_bits: u8,
    /// zlib compression level, 0..=9 (default 6).
    pub level: u32,
}

impl Default for DeflateConfig {
    fn default() -> Self {
        DeflateConfig {
            threshold: DEFAULT_DEFLATE_THRESHOLD,
            server_no_context_takeover: false,
            client_no_context_takeover: false,
            server_max_window_bits: MAX_WINDOW_BITS,
            client_max_window_bits: MAX_WINDOW_BITS,
            level: 6,
        }
    }
}

impl DeflateConfig {
    /// Checks the values: window bits in 9..=15, level in 0..=9.
    ///
    /// # Errors
    /// A description naming the field out of range.
    pub fn validate(&self) -> Result<(), String> {
        let bits = MIN_WINDOW_BITS..=MAX_WINDOW_BITS;
        if !bits.contains(&self.server_max_window_bits) {
            return Err("serverMaxWindowBits must be within 9..15".into());
        }
        if !bits.contains(&self.client_max_window_bits) {
            return Err("clientMaxWindowBits must be within 9..15".into());
        }
        if self.level > 9 {
            return Err("the compression level must be within 0..9".into());
        }
        Ok(())
    }
}

/// The parameters agreed for a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerMessageDeflate {
    /// The server resets its window after each message.
    pub server_no_context_takeover: bool,
    /// The client resets its window after each message.
    pub client_no_context_takeover: bool,
    /// The server's window (log2).
    pub server_max_window_bits: u8,
    /// The client's window (log2).
    pub client_max_window_bits: u8,
}

/// One side's half of the agreement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Direction {
    /// The window is reset after each message.
    pub no_context_takeover: bool,
    /// The window (log2).
    pub window_bits: u8,
}

impl PerMessageDeflate {
    /// How the server compresses (and the client decompresses).
    pub fn server(&self) -> Direction {
        Direction {
            no_context_takeover: self.server_no_context_takeover,
            window_bits: self.server_max_window_bits,
        }
    }

    /// How the client compresses (and the server decompresses).
    pub fn client(&self) -> Direction {
        Direction {
            no_context_takeover: self.client_no_context_takeover,
            window_bits: self.client_max_window_bits,
        }
    }
}

/// A server's choice: the parameters and the `Sec-WebSocket-Extensions` value of the `101`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agreed {
    /// The parameters.
    pub params: PerMessageDeflate,
    /// The response's `Sec-WebSocket-Extensions` value.
    pub response: String,
}

/// A server's extension answer a client cannot accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionError {
    /// What is wrong with it.
    pub reason: String,
}

impl ExtensionError {
    /// Stable code exposed to JavaScript as `Error.code`.
    pub fn code(&self) -> &'static str {
        "ERR_WS_HANDSHAKE_EXTENSION"
    }
}

impl fmt::Display for ExtensionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unacceptable Sec-WebSocket-Extensions: {}", self.reason)
    }
}

impl std::error::Error for ExtensionError {}

impl From<ExtensionError> for TransportError {
    fn from(error: ExtensionError) -> Self {
        TransportError::foreign(error.code(), error)
    }
}

/// A `permessage-deflate` element's parameters, each at most once.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Params {
    server_no_context_takeover: bool,
    client_no_context_takeover: bool,
    server_max_window_bits: Option<u8>,
    /// `Some(None)`: present without a value (offers only).
    client_max_window_bits: Option<Option<u8>>,
}

/// An element's parameters: (name, value), names in lower case.
type ParamList = Vec<(String, Option<String>)>;

/// The elements of extension field values: (name, parameters), in order; parameters `None`
/// for an element that is not well formed.
fn elements<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Vec<(String, Option<ParamList>)> {
    let mut out = Vec::new();
    for value in values {
        let Ok(value) = std::str::from_utf8(value) else {
            out.push((String::new(), None));
            continue;
        };
        for element in split_outside_quotes(value, ',') {
            let mut parts = split_outside_quotes(element, ';').into_iter();
            let name = parts.next().unwrap_or("").trim();
            if name.is_empty() {
                continue; // an empty list element (`a, , b`) is allowed
            }
            let params: Option<Vec<_>> = parts.map(param).collect();
            out.push((name.to_ascii_lowercase(), params.filter(|_| is_token(name))));
        }
    }
    out
}

/// `name[=value]`, the value a token or a quoted string; `None` if malformed.
fn param(text: &str) -> Option<(String, Option<String>)> {
    let (name, value) = match text.split_once('=') {
        Some((n, v)) => (n.trim(), Some(v.trim())),
        None => (text.trim(), None),
    };
    if !is_token(name) {
        return None;
    }
    let value = match value {
        None => None,
        Some(v) if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') => {
            let inner = &v[1..v.len() - 1];
            if inner.contains(['"', '\\']) || !is_token(inner) {
                return None;
            }
            Some(inner.to_string())
        }
        Some(v) if is_token(v) => Some(v.to_string()),
        Some(_) => return None,
    };
    Some((name.to_ascii_lowercase(), value))
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn split_outside_quotes(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in s.char_indices() {
        if c == '"' {
            quoted = !quoted;
        } else if c == sep && !quoted {
            parts.push(&s[start..i]);
            start = i + 1;
        }
    }
    parts.push(&s[start..]);
    parts
}

/// Window bits: 1 or 2 digits, 8..=15, no leading zero.
fn window_bits(value: &str) -> Option<u8> {
    if value.starts_with('0') || value.len() > 2 {
        return None;
    }
    value.parse().ok().filter(|b| (8..=15).contains(b))
}

/// The parameters of one element, or `None` if it breaks RFC 7692 §7.1.
fn params(list: &[(String, Option<String>)]) -> Option<Params> {
    let mut p = Params::default();
    let mut seen = Vec::new();
    for (name, value) in list {
        if seen.contains(&name.as_str()) {
            return None;
        }
        seen.push(name);
        match (name.as_str(), value) {
            ("server_no_context_takeover", None) => p.server_no_context_takeover = true,
            ("client_no_context_takeover", None) => p.client_no_context_takeover = true,
            ("server_max_window_bits", Some(v)) => p.server_max_window_bits = Some(window_bits(v)?),
            ("client_max_window_bits", None) => p.client_max_window_bits = Some(None),
            ("client_max_window_bits", Some(v)) => {
                p.client_max_window_bits = Some(Some(window_bits(v)?));
            }
            _ => return None,
        }
    }
    Some(p)
}

const NAME: &str = "permessage-deflate";

/// The server's choice among the client's offers (`Sec-WebSocket-Extensions` values, in
/// order): the first valid `permessage-deflate` offer this end can honour with `config`, or
/// `None` (the connection goes uncompressed).
///
/// For an offer, the answer carries: `server_no_context_takeover` if offered or configured;
/// `client_no_context_takeover` if configured; `server_max_window_bits` if offered (the
/// smaller of the offer and the configuration) or configured below 15;
/// `client_max_window_bits` only if offered, then the smaller of the offer's value and the
/// configuration. `server_max_window_bits=8` is accepted, and the server then sends its
/// messages uncompressed (the compressor's smallest window is 2^9). Declined, when
/// `client_max_window_bits` is configured below 15: offers without `client_max_window_bits`
/// (the client's window could not be limited).
pub fn server_negotiate<'a>(
    config: &DeflateConfig,
    offers: impl IntoIterator<Item = &'a [u8]>,
) -> Option<Agreed> {
    for (name, list) in elements(offers) {
        if name != NAME {
            continue;
        }
        let Some(offer) = list.as_deref().and_then(params) else {
            continue;
        };
        if let Some(agreed) = answer(config, offer) {
            return Some(agreed);
        }
    }
    None
}

fn answer(config: &DeflateConfig, offer: Params) -> Option<Agreed> {
    let server_bits = match offer.server_max_window_bits {
        Some(bits) => Some(bits.min(config.server_max_window_bits)),
        None => (config.server_max_window_bits < MAX_WINDOW_BITS)
            .then_some(config.server_max_window_bits),
    };
    let client_bits = match offer.client_max_window_bits {
        None if config.client_max_window_bits < MAX_WINDOW_BITS => return None,
        None => None,
        Some(offered) => {
            let wanted = config.client_max_window_bits;
            let bits = offered.map_or(wanted, |o| o.min(wanted));
            (bits < MAX_WINDOW_BITS || offered.is_some()).then_some(bits)
        }
    };
    let params = PerMessageDeflate {
        server_no_context_takeover: offer.server_no_context_takeover
            || config.server_no_context_takeover,
        client_no_context_takeover: offer.client_no_context_takeover
            || config.client_no_context_takeover,
        server_max_window_bits: server_bits.unwrap_or(MAX_WINDOW_BITS),
        client_max_window_bits: client_bits
            .or(offer.client_max_window_bits.flatten())
            .unwrap_or(MAX_WINDOW_BITS),
    };
    let mut response = String::from(NAME);
    if params.server_no_context_takeover {
        response.push_str("; server_no_context_takeover");
    }
    if params.client_no_context_takeover {
        response.push_str("; client_no_context_takeover");
    }
    if let Some(bits) = server_bits {
        response.push_str(&format!("; server_max_window_bits={bits}"));
    }
    if let Some(bits) = client_bits {
        response.push_str(&format!("; client_max_window_bits={bits}"));
    }
    Some(Agreed { params, response })
}

/// A client's `Sec-WebSocket-Extensions` offer for `config`: `permessage-deflate` with
/// `client_max_window_bits` (a value when configured below 15, else none: the server may
/// choose), the no-context-takeover parameters configured, and `server_max_window_bits`
/// when configured below 15.
pub fn client_offer(config: &DeflateConfig) -> String {
    let mut offer = String::from(NAME);
    if config.server_no_context_takeover {
        offer.push_str("; server_no_context_takeover");
    }
    if config.client_no_context_takeover {
        offer.push_str("; client_no_context_takeover");
    }
    if config.server_max_window_bits < MAX_WINDOW_BITS {
        offer.push_str(&format!(
            "; server_max_window_bits={}",
            config.server_max_window_bits
        ));
    }
    if config.client_max_window_bits < MAX_WINDOW_BITS {
        offer.push_str(&format!(
            "; client_max_window_bits={}",
            config.client_max_window_bits
        ));
    } else {
        offer.push_str("; client_max_window_bits");
    }
    offer
}

/// Checks the server's `Sec-WebSocket-Extensions` values against what [`client_offer`]
/// offered for `config`: `Ok(None)` when the server accepted no extension, `Ok(Some(..))`
/// with the parameters agreed.
///
/// # Errors
/// [`ExtensionError`] (the client fails the connection, RFC 6455 §4.1) for an extension not
/// offered, `permessage-deflate` twice, an invalid parameter, `server_max_window_bits`
/// above what was offered, a `client_max_window_bits` above the configured value, or a
/// context takeover the configuration asked to be off and the server did not turn off. A
/// `client_max_window_bits` of 8 is accepted: the client then sends its messages
/// uncompressed (the compressor's smallest window is 2^9).
pub fn accept_server_response<'a>(
    config: &DeflateConfig,
    values: impl IntoIterator<Item = &'a [u8]>,
) -> Result<Option<PerMessageDeflate>, ExtensionError> {
    let fail = |reason: String| Err(ExtensionError { reason });
    let mut found = None;
    for (name, list) in elements(values) {
        if name != NAME {
            return fail(format!("the extension {name:?} was not offered"));
        }
        if found.is_some() {
            return fail("permessage-deflate answered twice".into());
        }
        let Some(p) = list.as_deref().and_then(params) else {
            return fail("invalid permessage-deflate parameters".into());
        };
        found = Some(p);
    }
    let Some(p) = found else { return Ok(None) };
    let server_bits = p.server_max_window_bits.unwrap_or(MAX_WINDOW_BITS);
    if server_bits > config.server_max_window_bits {
        return fail(format!(
            "server_max_window_bits={server_bits} above the offer"
        ));
    }
    if config.server_no_context_takeover && !p.server_no_context_takeover {
        return fail("server_no_context_takeover missing from the answer".into());
    }
    let client_bits = match p.client_max_window_bits {
        None => config.client_max_window_bits,
        Some(None) => return fail("client_max_window_bits without a value".into()),
        Some(Some(bits)) if bits > config.client_max_window_bits => {
            return fail(format!("client_max_window_bits={bits} above the offer"))
        }
        Some(Some(bits)) => bits,
    };
    Ok(Some(PerMessageDeflate {
        server_no_context_takeover: p.server_no_context_takeover,
        client_no_context_takeover: p.client_no_context_takeover
            || config.client_no_context_takeover,
        server_max_window_bits: server_bits,
        client_max_window_bits: client_bits,
    }))
}
