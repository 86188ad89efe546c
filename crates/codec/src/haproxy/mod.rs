//! The PROXY protocol of HAProxy (versions 1 and 2): the header a proxy or load balancer
//! (HAProxy, nginx, AWS and GCP network load balancers, Envoy) puts in front of a connection
//! to tell the server who the client is (Netty's `codec-haproxy`).
//!
//! Layer 1, like the frame decoders: [`HAProxyMessage::decode`] reads a header from the front
//! of a buffer, [`HAProxyMessage::encode_v1`]/[`HAProxyMessage::encode_v2`] write one (for
//! proxies written with netloop). The pipeline handler is
//! [`HAProxyMessageDecoder`](crate::HAProxyMessageDecoder).
//!
//! Ground rules:
//! - Strict, as the specification asks of receivers: a stream that does not start with a
//!   header, or a header that breaks the format, is an error
//!   ([`CodecError::HAProxyProtocol`]), decided as soon as the bytes seen cannot start a valid
//!   header (no waiting for more).
//! - Bounded: a version 1 header is at most 107 bytes, a version 2 header at most
//!   16 + 65,535 bytes (its length field); nothing beyond one header is ever looked at.
//! - A `LOCAL` command (a proxy's own health check) carries no addresses, whatever its
//!   address block holds; an `UNKNOWN`/`UNSPEC` protocol carries none either.
//! - Version 2 TLVs are kept in order, raw (type and value); [`tlv`] reads the specification's
//!   types (authority, ALPN, SSL, the cloud load balancers' ids) from them. A header carrying
//!   a CRC32C TLV that does not match it is refused.

use std::net::SocketAddr;

use bytes::Bytes;

use crate::error::CodecError;

mod encode;
mod parse;
#[cfg(test)]
mod tests;
pub mod tlv;

/// The version 2 signature, the first 12 bytes of every version 2 header.
pub const V2_SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";
/// The longest version 1 header, `\r\n` included.
pub const V1_MAX_LENGTH: usize = 107;
/// The longest version 2 header: 16 fixed bytes and the largest length field.
pub const V2_MAX_LENGTH: usize = 16 + 0xFFFF;

/// The protocol version of a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HAProxyVersion {
    /// The text form (`PROXY TCP4 ...\r\n`).
    V1,
    /// The binary form.
    V2,
}

/// What the proxy says the connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HAProxyCommand {
    /// The proxy's own connection (health checks): no client behind it.
    Local,
    /// A client's connection relayed by the proxy.
    Proxy,
}

/// The client connection's family and transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HAProxyProtocol {
    /// Unknown or unspecified (`UNKNOWN` in version 1, `UNSPEC` in version 2).
    Unknown,
    /// TCP over IPv4.
    Tcp4,
    /// TCP over IPv6.
    Tcp6,
    /// UDP over IPv4 (version 2 only).
    Udp4,
    /// UDP over IPv6 (version 2 only).
    Udp6,
    /// A stream Unix socket (version 2 only).
    UnixStream,
    /// A datagram Unix socket (version 2 only).
    UnixDgram,
}

impl HAProxyProtocol {
    /// The name Netty and HAProxy use (`TCP4`, `UNIX_STREAM`, ...).
    pub fn name(self) -> &'static str {
        match self {
            HAProxyProtocol::Unknown => "UNKNOWN",
            HAProxyProtocol::Tcp4 => "TCP4",
            HAProxyProtocol::Tcp6 => "TCP6",
            HAProxyProtocol::Udp4 => "UDP4",
            HAProxyProtocol::Udp6 => "UDP6",
            HAProxyProtocol::UnixStream => "UNIX_STREAM",
            HAProxyProtocol::UnixDgram => "UNIX_DGRAM",
        }
    }
}

/// One end of the client's connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HAProxyAddress {
    /// An IP address and port.
    Inet(SocketAddr),
    /// A Unix socket path (version 2: up to 108 bytes, the trailing NULs cut).
    Unix(Bytes),
}

/// A version 2 TLV (type-length-value) extension, raw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HAProxyTlv {
    /// The type byte (`0x01` ALPN, `0x02` authority, `0x05` unique id, `0x20` SSL, ...).
    pub kind: u8,
    /// The value.
    pub value: Bytes,
}

/// A decoded PROXY protocol header (Netty's `HAProxyMessage`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HAProxyMessage {
    /// Which form the header had.
    pub version: HAProxyVersion,
    /// A relayed client (`Proxy`) or the proxy's own connection (`Local`).
    pub command: HAProxyCommand,
    /// The client connection's family and transport.
    pub protocol: HAProxyProtocol,
    /// The client's end (none for `Local` and unknown protocols).
    pub source: Option<HAProxyAddress>,
    /// The end the client connected to, on the proxy (none when `source` is none).
    pub destination: Option<HAProxyAddress>,
    /// Version 2 extensions, in order (empty for version 1).
    pub tlvs: Vec<HAProxyTlv>,
}

/// What [`HAProxyMessage::decode`] found at the front of a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HAProxyDecoded {
    /// The bytes so far may start a header: read more.
    NeedMore,
    /// A whole header, `length` bytes long.
    Header {
        /// The header.
        message: HAProxyMessage,
        /// Its length: what follows it is the client's stream.
        length: usize,
    },
}

impl HAProxyMessage {
    /// A relayed TCP connection from `source` to `destination` (both IPv4 or both IPv6).
    pub fn tcp(source: SocketAddr, destination: SocketAddr) -> HAProxyMessage {
        let protocol = if source.is_ipv4() {
            HAProxyProtocol::Tcp4
        } else {
            HAProxyProtocol::Tcp6
        };
        HAProxyMessage {
            version: HAProxyVersion::V2,
            command: HAProxyCommand::Proxy,
            protocol,
            source: Some(HAProxyAddress::Inet(source)),
            destination: Some(HAProxyAddress::Inet(destination)),
            tlvs: Vec::new(),
        }
    }

    /// Reads a header from the front of `buf`. Errors as soon as `buf` cannot start a valid
    /// header; `NeedMore` only while it still can.
    pub fn decode(buf: &[u8]) -> Result<HAProxyDecoded, CodecError> {
        parse::decode(buf)
    }

    /// Whether `buf` starts a header at all (Netty's `detectProtocol`): `Some(true)` once it
    /// holds a whole signature (`PROXY ` or version 2's 12 bytes), `Some(false)` once it
    /// cannot, `None` while it is a prefix of one (at most 11 bytes). A header that starts
    /// may still be broken: `decode` judges it.
    pub fn starts_header(buf: &[u8]) -> Option<bool> {
        parse::starts_header(buf)
    }

    /// The client's IP end, if the header names one.
    pub fn source_addr(&self) -> Option<SocketAddr> {
        match &self.source {
            Some(HAProxyAddress::Inet(a)) => Some(*a),
            _ => None,
        }
    }

    /// The proxy's IP end the client connected to, if the header names one.
    pub fn destination_addr(&self) -> Option<SocketAddr> {
        match &self.destination {
            Some(HAProxyAddress::Inet(a)) => Some(*a),
            _ => None,
        }
    }
}
