//! The PROXY protocol header at the boundary: a message from JS encoded as a header
//! (`encodeHaproxyHeader`), and the header a channel's decoder read, as strings
//! (`netloop_wire::haproxy_wire` has both; this converts).

use bytes::Bytes;
use napi::bindgen_prelude::Buffer;
use napi::Env;
use napi_derive::napi;
use netloop_wire::haproxy_wire::{self, Header};

use super::NativeChannels;
use crate::error::{throw, wire_error};

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

/// The header's bytes (`ERR_ENCODER` for what the version cannot hold).
#[napi]
pub fn encode_haproxy_header(env: Env, h: NativeHAProxyHeader) -> napi::Result<Buffer> {
    let header = Header {
        version: h.version,
        local: h.local,
        source: (h.source_address, h.source_port),
        destination: (h.destination_address, h.destination_port),
        tlvs: h
            .tlvs
            .iter()
            .map(|t| (t.kind, Bytes::copy_from_slice(&t.value)))
            .collect(),
    };
    haproxy_wire::encode(header)
        .map(|b| Buffer::from(b.to_vec()))
        .map_err(|e| throw(&env, wire_error(e)))
}

#[napi]
impl NativeChannels {
    /// The PROXY protocol header channel `id`'s `HAProxyMessageDecoder` decoded, as the
    /// strings of `haproxy_wire::strings` (none: no decoder, no header yet, or no such channel).
    #[napi]
    pub fn haproxy_message(&self, id: f64) -> Option<Vec<String>> {
        self.enter();
        let ch = self.hub.channel(id as u64)?;
        haproxy_wire::decoded(&ch).map(|s| s.to_vec())
    }
}
