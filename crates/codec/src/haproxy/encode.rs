//! Writing PROXY protocol headers (Netty's `HAProxyMessageEncoder`), for proxies that tell
//! their backends who the client is.

use std::net::{IpAddr, SocketAddr};

use bytes::{BufMut, Bytes, BytesMut};

use super::{tlv, HAProxyAddress, HAProxyCommand, HAProxyMessage, HAProxyProtocol, V2_SIGNATURE};
use crate::error::CodecError;

impl HAProxyMessage {
    /// The version 1 (text) header. `Local` commands and unknown protocols are written as
    /// `PROXY UNKNOWN`; UDP and Unix sockets, TLVs, and addresses that do not match the
    /// protocol cannot be written in version 1.
    pub fn encode_v1(&self) -> Result<Bytes, CodecError> {
        if !self.tlvs.is_empty() {
            return Err(CodecError::encoder("version 1 headers carry no TLVs"));
        }
        if self.command == HAProxyCommand::Local || self.protocol == HAProxyProtocol::Unknown {
            return Ok(Bytes::from_static(b"PROXY UNKNOWN\r\n"));
        }
        let (src, dst) = self.inet_pair()?;
        let proto = match self.protocol {
            HAProxyProtocol::Tcp4 => "TCP4",
            HAProxyProtocol::Tcp6 => "TCP6",
            p => {
                return Err(CodecError::encoder(format!(
                    "{} cannot be written in version 1",
                    p.name()
                )))
            }
        };
        let line = format!(
            "PROXY {proto} {} {} {} {}\r\n",
            src.ip(),
            dst.ip(),
            src.port(),
            dst.port()
        );
        Ok(Bytes::from(line))
    }

    /// The version 2 (binary) header, with the TLVs in order. A `Local` command writes no
    /// addresses. The first CRC32C TLV (4 bytes, any value) gets the header's checksum.
    pub fn encode_v2(&self) -> Result<Bytes, CodecError> {
        let mut body = BytesMut::new();
        let local = self.command == HAProxyCommand::Local;
        let family = match self.protocol {
            _ if local => 0x00,
            HAProxyProtocol::Unknown => 0x00,
            HAProxyProtocol::Tcp4 => 0x11,
            HAProxyProtocol::Udp4 => 0x12,
            HAProxyProtocol::Tcp6 => 0x21,
            HAProxyProtocol::Udp6 => 0x22,
            HAProxyProtocol::UnixStream => 0x31,
            HAProxyProtocol::UnixDgram => 0x32,
        };
        match family >> 4 {
            1 | 2 => {
                let (s, d) = self.inet_pair()?;
                for ip in [s.ip(), d.ip()] {
                    match ip {
                        IpAddr::V4(ip) => body.put_slice(&ip.octets()),
                        IpAddr::V6(ip) => body.put_slice(&ip.octets()),
                    }
                }
                body.put_u16(s.port());
                body.put_u16(d.port());
            }
            3 => {
                for a in [&self.source, &self.destination] {
                    let Some(HAProxyAddress::Unix(path)) = a else {
                        return Err(self.mismatch());
                    };
                    if path.len() > 108 {
                        return Err(CodecError::encoder("a Unix path longer than 108 bytes"));
                    }
                    body.put_slice(path);
                    body.put_bytes(0, 108 - path.len());
                }
            }
            _ => {}
        }
        // Where the first CRC32C TLV's value goes in `out` (16 bytes ahead of `body`).
        let mut crc_at = None;
        for t in &self.tlvs {
            let len = u16::try_from(t.value.len())
                .map_err(|_| CodecError::encoder("a TLV value longer than 65,535 bytes"))?;
            if t.kind == tlv::kind::CRC32C && crc_at.is_none() {
                if t.value.len() != 4 {
                    return Err(CodecError::encoder("a CRC32C TLV holds 4 bytes"));
                }
                crc_at = Some(16 + body.len() + 3);
            }
            body.put_u8(t.kind);
            body.put_u16(len);
            body.put_slice(&t.value);
        }
        let len = u16::try_from(body.len())
            .map_err(|_| CodecError::encoder("a version 2 header longer than 65,551 bytes"))?;
        let mut out = BytesMut::with_capacity(16 + body.len());
        out.put_slice(&V2_SIGNATURE);
        out.put_u8(match self.command {
            HAProxyCommand::Local => 0x20,
            HAProxyCommand::Proxy => 0x21,
        });
        out.put_u8(family);
        out.put_u16(len);
        out.put_slice(&body);
        if let Some(at) = crc_at {
            // The checksum of the whole header with its own field zeroed (section 2.2.5).
            out[at..at + 4].fill(0);
            let sum = tlv::crc32c(&[&out]);
            out[at..at + 4].copy_from_slice(&sum.to_be_bytes());
        }
        Ok(out.freeze())
    }

    fn inet_pair(&self) -> Result<(SocketAddr, SocketAddr), CodecError> {
        match (self.source_addr(), self.destination_addr()) {
            (Some(s), Some(d)) if s.is_ipv4() == d.is_ipv4() => {
                let v4 = matches!(self.protocol, HAProxyProtocol::Tcp4 | HAProxyProtocol::Udp4);
                if s.is_ipv4() == v4 {
                    Ok((s, d))
                } else {
                    Err(self.mismatch())
                }
            }
            _ => Err(self.mismatch()),
        }
    }

    fn mismatch(&self) -> CodecError {
        CodecError::encoder(format!(
            "{} needs a source and a destination of its family",
            self.protocol.name()
        ))
    }
}
