//! An `HAProxyMessage` as the strings of a `UserEvent` record (`UserEventKind::HAProxy`):
//! src/haproxy.ts reads them back. One message per connection, so text is cheap enough. And
//! the other way: a message from JS encoded as a header (`encodeHaproxyHeader`).

use std::net::{IpAddr, SocketAddr};

use napi::bindgen_prelude::Buffer;
use napi::Env;
use napi_derive::napi;
use netloop_codec::bytes::Bytes;
use netloop_codec::{
    HAProxyAddress, HAProxyCommand, HAProxyMessage, HAProxyMessageDecoder, HAProxyProtocol,
    HAProxyTlv, HAProxyVersion,
};

use super::NativeChannels;
use crate::error::{invalid_arg, throw, Code, JsResult};
use crate::protocol::HAPROXY_STRINGS;

/// A TLV of a message to encode.
#[napi(object)]
pub struct NativeHAProxyTlv {
    pub kind: u32,
    pub value: Buffer,
}

/// A message to encode, as src/haproxy.ts checked it (TCP only: what a proxy relays).
#[napi(object)]
pub struct NativeHAProxyHeader {
    /// 1 or 2.
    pub version: u32,
    /// A `LOCAL` message (a proxy's own connection): no addresses.
    pub local: bool,
    pub source_address: Option<String>,
    pub source_port: Option<u32>,
    pub destination_address: Option<String>,
    pub destination_port: Option<u32>,
    pub tlvs: Vec<NativeHAProxyTlv>,
}

fn end(address: &Option<String>, port: Option<u32>) -> JsResult<SocketAddr> {
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
#[napi]
pub fn encode_haproxy_header(env: Env, h: NativeHAProxyHeader) -> napi::Result<Buffer> {
    encode(&h).map_err(|e| throw(&env, e))
}

fn encode(h: &NativeHAProxyHeader) -> JsResult<Buffer> {
    let tlvs = h
        .tlvs
        .iter()
        .map(|t| {
            let kind = u8::try_from(t.kind).map_err(|_| invalid_arg("a TLV type is one byte"))?;
            Ok(HAProxyTlv {
                kind,
                value: Bytes::copy_from_slice(&t.value),
            })
        })
        .collect::<JsResult<Vec<_>>>()?;
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
        let source = end(&h.source_address, h.source_port)?;
        let destination = end(&h.destination_address, h.destination_port)?;
        HAProxyMessage::tcp(source, destination)
    };
    m.tlvs = tlvs;
    let encoded = if h.version == 1 {
        m.encode_v1()
    } else {
        m.encode_v2()
    };
    encoded
        .map(|b| Buffer::from(b.to_vec()))
        .map_err(|e| napi::Error::new(Code(e.code()), e.to_string()))
}

#[napi]
impl NativeChannels {
    /// The PROXY protocol header channel `id`'s `HAProxyMessageDecoder` decoded, as the
    /// strings of [`strings`] (none: no decoder, no header yet, or no such channel).
    #[napi]
    pub fn haproxy_message(&self, id: f64) -> Option<Vec<String>> {
        self.enter();
        let ch = self.hub.channel(id as u64)?;
        ch.pipeline()
            .find_handler(|d: &HAProxyMessageDecoder| d.message())
            .map(|m| strings(&m).to_vec())
    }
}

/// Version, command, protocol, source address and port, destination address and port, TLVs
/// (`type:hex` joined by `,`); an absent end and its port are empty strings.
pub(super) fn strings(m: &HAProxyMessage) -> [String; HAPROXY_STRINGS] {
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
