//! Reading PROXY protocol headers (the specification's sections 2.1 and 2.2).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use bytes::Bytes;

use super::{
    tlv, HAProxyAddress, HAProxyCommand, HAProxyDecoded, HAProxyMessage, HAProxyProtocol,
    HAProxyTlv, HAProxyVersion, V1_MAX_LENGTH, V2_SIGNATURE,
};
use crate::error::CodecError;

const V1_PREFIX: &[u8] = b"PROXY ";

fn bad(reason: impl Into<String>) -> CodecError {
    CodecError::HAProxyProtocol {
        reason: reason.into(),
    }
}

/// True if `buf` is a prefix of `whole` or starts with it.
fn agrees(buf: &[u8], whole: &[u8]) -> bool {
    let n = buf.len().min(whole.len());
    buf[..n] == whole[..n]
}

/// Whether `buf` starts a header: `Some(true)` once it holds a whole signature (version 1's
/// `PROXY ` or version 2's 12 bytes), `Some(false)` once it cannot, `None` while it is a
/// prefix of one.
pub(super) fn starts_header(buf: &[u8]) -> Option<bool> {
    let mut undecided = false;
    for sig in [V1_PREFIX, &V2_SIGNATURE[..]] {
        if buf.len() >= sig.len() {
            if buf.starts_with(sig) {
                return Some(true);
            }
        } else if sig.starts_with(buf) {
            undecided = true;
        }
    }
    if undecided {
        None
    } else {
        Some(false)
    }
}

pub(super) fn decode(buf: &[u8]) -> Result<HAProxyDecoded, CodecError> {
    match buf.first() {
        None => Ok(HAProxyDecoded::NeedMore),
        Some(b'P') => v1(buf),
        Some(b'\r') => v2(buf),
        Some(_) => Err(bad("not a PROXY protocol header")),
    }
}

fn v1(buf: &[u8]) -> Result<HAProxyDecoded, CodecError> {
    if !agrees(buf, V1_PREFIX) {
        return Err(bad("not a PROXY protocol header"));
    }
    let window = &buf[..buf.len().min(V1_MAX_LENGTH)];
    let Some(end) = window.iter().position(|&b| b == b'\n') else {
        return if buf.len() >= V1_MAX_LENGTH {
            Err(bad(format!(
                "a version 1 header longer than {V1_MAX_LENGTH} bytes"
            )))
        } else {
            Ok(HAProxyDecoded::NeedMore)
        };
    };
    let line = match window[..end].strip_suffix(b"\r") {
        Some(line) => line,
        None => return Err(bad("a version 1 header not ended by CRLF")),
    };
    if !line.iter().all(|b| (0x20..0x7f).contains(b)) {
        return Err(bad("a version 1 header with a control or non-ASCII byte"));
    }
    // Printable ASCII only, so the line is valid UTF-8.
    let text = std::str::from_utf8(line).map_err(|_| bad("not ASCII"))?;
    let fields: Vec<&str> = text.split(' ').collect();
    let protocol = match fields.get(1).copied() {
        Some("TCP4") => HAProxyProtocol::Tcp4,
        Some("TCP6") => HAProxyProtocol::Tcp6,
        // The rest of an UNKNOWN line is to be ignored (section 2.1).
        Some("UNKNOWN") => {
            return Ok(header(
                HAProxyMessage {
                    version: HAProxyVersion::V1,
                    command: HAProxyCommand::Proxy,
                    protocol: HAProxyProtocol::Unknown,
                    source: None,
                    destination: None,
                    tlvs: Vec::new(),
                },
                end + 1,
            ))
        }
        Some(other) => return Err(bad(format!("unknown version 1 protocol {other:?}"))),
        None => return Err(bad("a version 1 header without a protocol")),
    };
    let [_, _, src, dst, sport, dport] = fields[..] else {
        return Err(bad(format!(
            "a version 1 {} header needs 4 fields separated by single spaces",
            protocol.name()
        )));
    };
    let ip = |s: &str| -> Result<IpAddr, CodecError> {
        let parsed = if protocol == HAProxyProtocol::Tcp4 {
            s.parse::<Ipv4Addr>().map(IpAddr::V4).ok()
        } else {
            s.parse::<Ipv6Addr>().map(IpAddr::V6).ok()
        };
        parsed.ok_or_else(|| bad(format!("invalid {} address {s:?}", protocol.name())))
    };
    let source = SocketAddr::new(ip(src)?, port(sport)?);
    let destination = SocketAddr::new(ip(dst)?, port(dport)?);
    Ok(header(
        HAProxyMessage {
            version: HAProxyVersion::V1,
            command: HAProxyCommand::Proxy,
            protocol,
            source: Some(HAProxyAddress::Inet(source)),
            destination: Some(HAProxyAddress::Inet(destination)),
            tlvs: Vec::new(),
        },
        end + 1,
    ))
}

/// A decimal port, 0–65535, without leading zeros (section 2.1).
fn port(s: &str) -> Result<u16, CodecError> {
    let digits = !s.is_empty() && s.len() <= 5 && s.bytes().all(|b| b.is_ascii_digit());
    let leading_zero = s.len() > 1 && s.starts_with('0');
    match s.parse::<u16>() {
        Ok(p) if digits && !leading_zero => Ok(p),
        _ => Err(bad(format!("invalid port {s:?}"))),
    }
}

fn v2(buf: &[u8]) -> Result<HAProxyDecoded, CodecError> {
    if !agrees(buf, &V2_SIGNATURE) {
        return Err(bad("not a PROXY protocol header"));
    }
    let command = match buf.get(12) {
        None => return Ok(HAProxyDecoded::NeedMore),
        Some(0x20) => HAProxyCommand::Local,
        Some(0x21) => HAProxyCommand::Proxy,
        Some(b) if b >> 4 != 2 => return Err(bad(format!("unsupported version {}", b >> 4))),
        Some(b) => return Err(bad(format!("unknown command {}", b & 0x0f))),
    };
    let (protocol, address_len) = match buf.get(13) {
        None => return Ok(HAProxyDecoded::NeedMore),
        Some(0x00) => (HAProxyProtocol::Unknown, 0),
        Some(0x11) => (HAProxyProtocol::Tcp4, 12),
        Some(0x12) => (HAProxyProtocol::Udp4, 12),
        Some(0x21) => (HAProxyProtocol::Tcp6, 36),
        Some(0x22) => (HAProxyProtocol::Udp6, 36),
        Some(0x31) => (HAProxyProtocol::UnixStream, 216),
        Some(0x32) => (HAProxyProtocol::UnixDgram, 216),
        Some(b) => {
            return Err(bad(format!(
                "invalid address family and transport 0x{b:02x}"
            )))
        }
    };
    if buf.len() < 16 {
        return Ok(HAProxyDecoded::NeedMore);
    }
    let len = usize::from(u16::from_be_bytes([buf[14], buf[15]]));
    let total = 16 + len;
    if buf.len() < total {
        return Ok(HAProxyDecoded::NeedMore);
    }
    let block = &buf[16..total];
    if command == HAProxyCommand::Local {
        // The proxy's own connection: its address block is to be skipped (section 2.2).
        return Ok(header(
            HAProxyMessage {
                version: HAProxyVersion::V2,
                command,
                protocol: HAProxyProtocol::Unknown,
                source: None,
                destination: None,
                tlvs: Vec::new(),
            },
            total,
        ));
    }
    if len < address_len {
        return Err(bad(format!(
            "{} addresses need {address_len} bytes, the header has {len}",
            protocol.name()
        )));
    }
    let (addresses, rest) = block.split_at(address_len);
    let (source, destination) = addresses_of(protocol, addresses);
    let tlvs = tlvs(rest)?;
    check_crc(&buf[..total], 16 + address_len)?;
    Ok(header(
        HAProxyMessage {
            version: HAProxyVersion::V2,
            command,
            protocol,
            source,
            destination,
            tlvs,
        },
        total,
    ))
}

fn addresses_of(
    protocol: HAProxyProtocol,
    a: &[u8],
) -> (Option<HAProxyAddress>, Option<HAProxyAddress>) {
    let be16 = |i: usize| u16::from_be_bytes([a[i], a[i + 1]]);
    let inet = |ip: IpAddr, port: u16| Some(HAProxyAddress::Inet(SocketAddr::new(ip, port)));
    let v4 = |i: usize| IpAddr::V4(Ipv4Addr::new(a[i], a[i + 1], a[i + 2], a[i + 3]));
    let v6 = |i: usize| {
        let mut octets = [0u8; 16];
        octets.copy_from_slice(&a[i..i + 16]);
        IpAddr::V6(Ipv6Addr::from(octets))
    };
    let unix = |i: usize| {
        let path = &a[i..i + 108];
        let n = path.iter().position(|&b| b == 0).unwrap_or(path.len());
        Some(HAProxyAddress::Unix(Bytes::copy_from_slice(&path[..n])))
    };
    match protocol {
        HAProxyProtocol::Tcp4 | HAProxyProtocol::Udp4 => {
            (inet(v4(0), be16(8)), inet(v4(4), be16(10)))
        }
        HAProxyProtocol::Tcp6 | HAProxyProtocol::Udp6 => {
            (inet(v6(0), be16(32)), inet(v6(16), be16(34)))
        }
        HAProxyProtocol::UnixStream | HAProxyProtocol::UnixDgram => (unix(0), unix(108)),
        HAProxyProtocol::Unknown => (None, None),
    }
}

fn tlvs(mut rest: &[u8]) -> Result<Vec<HAProxyTlv>, CodecError> {
    let mut out = Vec::new();
    while !rest.is_empty() {
        if rest.len() < 3 {
            return Err(bad("a truncated TLV"));
        }
        let len = usize::from(u16::from_be_bytes([rest[1], rest[2]]));
        if rest.len() < 3 + len {
            return Err(bad(format!(
                "a TLV of type 0x{:02x} announces {len} bytes, {} remain",
                rest[0],
                rest.len() - 3
            )));
        }
        out.push(HAProxyTlv {
            kind: rest[0],
            value: Bytes::copy_from_slice(&rest[3..3 + len]),
        });
        rest = &rest[3 + len..];
    }
    Ok(out)
}

/// Checks the first CRC32C TLV of the header `whole` (whose TLVs, already read whole, start
/// at `from`) against the header, computed with the TLV's value zeroed (section 2.2.5).
fn check_crc(whole: &[u8], from: usize) -> Result<(), CodecError> {
    let mut at = from;
    while at + 3 <= whole.len() {
        let len = usize::from(u16::from_be_bytes([whole[at + 1], whole[at + 2]]));
        if whole[at] == tlv::kind::CRC32C {
            let value = at + 3;
            let Some(&[a, b, c, d]) = whole.get(value..value + len) else {
                return Err(bad(format!("a CRC32C TLV of {len} bytes (4 expected)")));
            };
            let sum = tlv::crc32c(&[&whole[..value], &[0; 4], &whole[value + 4..]]);
            if sum != u32::from_be_bytes([a, b, c, d]) {
                return Err(bad("the header does not match its CRC32C"));
            }
            return Ok(());
        }
        at += 3 + len;
    }
    Ok(())
}

fn header(message: HAProxyMessage, length: usize) -> HAProxyDecoded {
    HAProxyDecoded::Header { message, length }
}
