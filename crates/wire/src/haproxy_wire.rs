//! An `HAProxyMessage` as the strings of a `UserEvent` record (`UserEventKind::HAProxy`):
//! src/haproxy.ts reads them back. One message per connection, so text is cheap enough. And
//! the other way: a message from JS encoded as a header (`encodeHaproxyHeader`).

use std::net::{IpAddr, SocketAddr};

use netloop_codec::bytes::Bytes;
use netloop_codec::{
    HAProxyAddress, HAProxyCommand, HAProxyMessage, HAProxyProtocol, HAProxyTlv, HAProxyVersion,
};

use crate::error::{invalid_arg, WireError, WireResult};
use crate::protocol::HAPROXY_STRINGS;

/// A message to encode, as src/haproxy.ts checked it (TCP only: what a proxy relays).
#[derive(Debug, Clone, Default)]
pub struct Header {
    /// 1 or 2.
    pub version: u32,
    /// A `LOCAL` message (a proxy's own connection): no addresses.
    pub local: bool,
    /// The source's address and port.
    pub source: (Option<String>, Option<u32>),
    /// The destination's address and port.
    pub destination: (Option<String>, Option<u32>),
    /// TLVs: their type (one byte) and value.
    pub tlvs: Vec<(u32, Bytes)>,
}

fn end((address, port): &(Option<String>, Option<u32>)) -> WireResult<SocketAddr> {
    let ip: IpAddr = address
        .as_deref()
        .unwrap_or("")
        .parse()
        .map_err(|_| invalid_arg(format!("not an IP address: {address:?}")))?;
    let port = port
        .and_then(|p| u16::try_from(p).ok())
        .ok_or_else(|| invalid_arg(format!("not a port: {port:?}")))?;
    Ok(SocketAddr::new(ip, port))
}

/// The header's bytes (`ERR_ENCODER` for what the version cannot hold).
pub fn encode(h: Header) -> WireResult<Bytes> {
    let tlvs = h
        .tlvs
        .into_iter()
        .map(|(kind, value)| {
            let kind = u8::try_from(kind).map_err(|_| invalid_arg("a TLV type is one byte"))?;
            Ok(HAProxyTlv { kind, value })
        })
        .collect::<WireResult<Vec<_>>>()?;
    let mut m = if h.local {
        HAProxyMessage {
            version: HAProxyVersion::V2,
            command: HAProxyCommand::Local,
            protocol: HAProxyProtocol::Unknown,
            source: None,
            destination: None,
            tlvs: Vec::new(),
        }
    } else {
        HAProxyMessage::tcp(end(&h.source)?, end(&h.destination)?)
    };
    m.tlvs = tlvs;
    let encoded = if h.version == 1 {
        m.encode_v1()
    } else {
        m.encode_v2()
    };
    encoded.map_err(|e| WireError::new(e.code(), e.to_string()))
}

/// The PROXY protocol header `ch`'s `HAProxyMessageDecoder` decoded, as [`strings`] (none:
/// no decoder, or no header yet).
pub fn decoded(ch: &netloop_transport::Channel) -> Option<[String; HAPROXY_STRINGS]> {
    ch.pipeline()
        .find_handler(|d: &netloop_codec::HAProxyMessageDecoder| d.message())
        .map(|m| strings(&m))
}

/// Version, command, protocol, source address and port, destination address and port, TLVs
/// (`type:hex` joined by `,`); an absent end and its port are empty strings.
pub fn strings(m: &HAProxyMessage) -> [String; HAPROXY_STRINGS] {
    let end = |a: &Option<HAProxyAddress>| match a {
        Some(HAProxyAddress::Inet(s)) => (s.ip().to_string(), s.port().to_string()),
        Some(HAProxyAddress::Unix(path)) => {
            (String::from_utf8_lossy(path).into_owned(), String::new())
        }
        None => (String::new(), String::new()),
    };
    let (src, sport) = end(&m.source);
    let (dst, dport) = end(&m.destination);
    let tlvs = m
        .tlvs
        .iter()
        .map(|t| {
            let hex: String = t.value.iter().map(|b| format!("{b:02x}")).collect();
            format!("{}:{hex}", t.kind)
        })
        .collect::<Vec<_>>()
        .join(",");
    [
        match m.version {
            HAProxyVersion::V1 => "1",
            HAProxyVersion::V2 => "2",
        }
        .to_string(),
        match m.command {
            HAProxyCommand::Local => "LOCAL",
            HAProxyCommand::Proxy => "PROXY",
        }
        .to_string(),
        m.protocol.name().to_string(),
        src,
        sport,
        dst,
        dport,
        tlvs,
    ]
}
