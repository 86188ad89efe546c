//! An `HAProxyMessage` as the strings of a `UserEvent` record (`UserEventKind::HAProxy`):
//! src/haproxy.ts reads them back. One message per connection, so text is cheap enough.

use napi_derive::napi;
use netloop_codec::{
    HAProxyAddress, HAProxyCommand, HAProxyMessage, HAProxyMessageDecoder, HAProxyVersion,
};

use super::NativeChannels;
use crate::protocol::HAPROXY_STRINGS;

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
