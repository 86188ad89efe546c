//! The PROXY protocol parser and `HAProxyMessageDecoder`, fuzzed.
//!
//! A case is a stream cut into reads: a version 1 or version 2 header built from the case's
//! bytes (addresses, ports, TLVs; sometimes with one byte changed, or cut short), or raw
//! bytes, followed by some payload. The checks, none of which looks at the parser's code:
//! 1. **Decided once, at the right length.** `decode` on every prefix of the stream is
//!    `NeedMore` up to some length and then, for every longer prefix, the same outcome: one
//!    header of one length (and never before that length is there), or an error.
//! 2. **Bounded.** `NeedMore` never past a version 1 header's 107 bytes (for a stream that
//!    starts with `P`) or a version 2 header's 16 + 65,535.
//! 3. **Exact.** An unchanged generated header decodes to the message it was made from.
//! 4. **Round trip.** A decoded message encodes back (version 2 always, version 1 for TCP)
//!    to a header that decodes to the same message.
//! 5. **The handler agrees, read by read.** Fed the reads through an `EmbeddedChannel`, the
//!    decoder fires the header as one user event and then exactly the stream's remaining
//!    bytes as reads (or, on an error, one `ERR_HAPROXY_PROTOCOL` exception, a close and no
//!    read), whatever the cuts.
//! 6. **The optional decoder** passes a stream that cannot start a header through whole with
//!    no event, holds one that is still a signature's prefix, and treats every other stream
//!    as the strict decoder does.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::rc::Rc;

use netloop_codec::bytes::Bytes;
use netloop_codec::{
    haproxy_tlv_kind, HAProxyAddress, HAProxyCommand, HAProxyDecoded, HAProxyMessage,
    HAProxyMessageDecoder, HAProxyProtocol, HAProxyTlv, HAProxyVersion, V1_MAX_LENGTH,
    V2_MAX_LENGTH,
};
use netloop_transport::EmbeddedChannel;

use super::harness::Tally;
use super::reads::Reads;
use super::source::Source;

/// Checks the case read from `data`.
pub fn haproxy(data: &[u8]) -> Tally {
    let mut src = Source::new(data);
    let (made, header) = match src.u8() % 8 {
        0 => {
            let n = src.below(200);
            (None, src.bytes(n).to_vec())
        }
        1..=3 => {
            let m = message(&mut src, true);
            (
                Some(m.clone()),
                m.encode_v1()
                    .expect("a TCP message fits version 1")
                    .to_vec(),
            )
        }
        _ => {
            let m = message(&mut src, false);
            let wire = m
                .encode_v2()
                .expect("a generated message fits version 2")
                .to_vec();
            let (m, wire) = with_crc(m, wire);
            (Some(m), wire)
        }
    };
    let mut header = header;
    let changed = match src.u8() % 4 {
        0 if !header.is_empty() => {
            let at = src.below(header.len());
            header[at] ^= src.u8().max(1);
            true
        }
        1 if !header.is_empty() => {
            header.truncate(src.below(header.len()));
            true
        }
        _ => false,
    };
    let mut reads = Reads::new();
    let mut rest = header.as_slice();
    while !rest.is_empty() {
        let n = 1 + src.below(rest.len().min(64));
        reads.push(&rest[..n]);
        rest = &rest[n..];
        if src.bool() {
            reads.cut();
        }
    }
    let n = src.below(64);
    reads.push(src.bytes(n));
    let (chunks, stream) = reads.finish();

    let outcome = decided(&stream);
    let mut tally = Tally {
        cases: 1,
        reads: chunks.len(),
        ..Tally::default()
    };
    match &outcome {
        Some(Ok((m, len))) => {
            tally.frames += 1;
            if let (Some(made), false) = (&made, changed) {
                let expected = HAProxyMessage {
                    version: made.version,
                    ..made.clone()
                };
                assert_eq!(m, &expected, "the generated header decodes to its message");
                assert_eq!(*len, header.len());
            }
            round_trip(m);
        }
        Some(Err(())) => tally.corrupted += 1,
        None => {}
    }
    through_the_handler(&chunks, &stream, &outcome);
    optionally(&chunks, &stream, &outcome);
    tally
}

/// Check 6: the optional decoder passes a stream that cannot start a header through whole,
/// with no event, and treats every other stream as the strict one does.
fn optionally(chunks: &[Vec<u8>], stream: &[u8], outcome: &Option<Outcome>) {
    let ch = EmbeddedChannel::new(vec![("proxy", Rc::new(HAProxyMessageDecoder::optional()))]);
    for chunk in chunks {
        if !ch.channel().is_open() {
            break;
        }
        ch.write_inbound(Bytes::copy_from_slice(chunk));
    }
    let mut passed = Vec::new();
    while let Some(m) = ch.read_inbound() {
        passed.extend_from_slice(m.as_bytes().expect("bytes only"));
    }
    let events = std::iter::from_fn(|| ch.read_user_event()).count();
    match HAProxyMessage::starts_header(stream) {
        Some(false) => {
            assert_eq!(events, 0, "no header, no event");
            assert_eq!(passed, stream, "a stream without a header passes whole");
            assert!(ch.check_exception().is_ok() && ch.channel().is_open());
        }
        None => assert!(events == 0 && passed.is_empty(), "undecided: held"),
        Some(true) => match outcome {
            Some(Ok((_, len))) => {
                assert_eq!(events, 1);
                assert_eq!(passed, &stream[*len..]);
            }
            Some(Err(())) => {
                assert!(events == 0 && passed.is_empty());
                assert!(!ch.channel().is_open(), "a broken header closes, as strict");
            }
            None => assert!(events == 0 && passed.is_empty()),
        },
    }
}

/// What a stream came to: a header and its length, or a refusal.
type Outcome = Result<(HAProxyMessage, usize), ()>;

/// Check 1 and 2 over every prefix: the outcome once decided, none while the whole stream
/// still needs more.
fn decided(stream: &[u8]) -> Option<Outcome> {
    let mut first: Option<(usize, Outcome)> = None;
    for end in 0..=stream.len() {
        let prefix = &stream[..end];
        let now = match HAProxyMessage::decode(prefix) {
            Ok(HAProxyDecoded::NeedMore) => {
                assert!(
                    first.is_none(),
                    "NeedMore after the outcome was decided at {end}"
                );
                let limit = if prefix.first() == Some(&b'P') {
                    V1_MAX_LENGTH
                } else {
                    V2_MAX_LENGTH
                };
                assert!(end < limit, "NeedMore at {end} bytes");
                continue;
            }
            Ok(HAProxyDecoded::Header { message, length }) => {
                assert!(length <= end, "a header of {length} bytes decided at {end}");
                Ok((message, length))
            }
            Err(e) => {
                assert_eq!(e.code(), "ERR_HAPROXY_PROTOCOL");
                Err(())
            }
        };
        match &first {
            None => {
                if let Ok((_, length)) = &now {
                    assert_eq!(*length, end, "decided only once the whole header was there");
                }
                first = Some((end, now));
            }
            Some((_, was)) => assert_eq!(&now, was, "the outcome changed at {end}"),
        }
    }
    first.map(|(_, o)| o)
}

/// Check 4.
fn round_trip(m: &HAProxyMessage) {
    let v2 = m
        .encode_v2()
        .expect("a decoded message encodes as version 2");
    match HAProxyMessage::decode(&v2) {
        Ok(HAProxyDecoded::Header { message, length }) => {
            assert_eq!(length, v2.len());
            assert_eq!(
                message,
                HAProxyMessage {
                    version: HAProxyVersion::V2,
                    ..m.clone()
                }
            );
        }
        other => panic!("its version 2 encoding decodes to {other:?}"),
    }
    if matches!(m.protocol, HAProxyProtocol::Tcp4 | HAProxyProtocol::Tcp6) && m.tlvs.is_empty() {
        let v1 = m.encode_v1().expect("TCP fits version 1");
        let Ok(HAProxyDecoded::Header { message, .. }) = HAProxyMessage::decode(&v1) else {
            panic!("its version 1 encoding does not decode");
        };
        assert_eq!(message.source, m.source);
        assert_eq!(message.destination, m.destination);
    }
}

/// Check 5.
fn through_the_handler(chunks: &[Vec<u8>], stream: &[u8], outcome: &Option<Outcome>) {
    let ch = EmbeddedChannel::new(vec![("proxy", Rc::new(HAProxyMessageDecoder::new()))]);
    for chunk in chunks {
        if !ch.channel().is_open() {
            break; // a closed socket reads nothing more
        }
        ch.write_inbound(Bytes::copy_from_slice(chunk));
    }
    let mut passed = Vec::new();
    while let Some(m) = ch.read_inbound() {
        passed.extend_from_slice(m.as_bytes().expect("bytes only"));
    }
    let events: Vec<HAProxyMessage> = std::iter::from_fn(|| ch.read_user_event())
        .filter_map(|e| e.downcast::<HAProxyMessage>().ok().map(|m| *m))
        .collect();
    match outcome {
        Some(Ok((m, len))) => {
            assert_eq!(events, vec![m.clone()]);
            assert_eq!(
                passed,
                &stream[*len..],
                "the bytes after the header, all of them"
            );
            assert!(ch.check_exception().is_ok());
        }
        Some(Err(())) => {
            assert!(
                events.is_empty() && passed.is_empty(),
                "refused stream {stream:?} in {chunks:?}: events {events:?}, passed {passed:?}"
            );
            let e = ch.check_exception().expect_err("the refusal was reported");
            assert_eq!(e.code(), "ERR_HAPROXY_PROTOCOL");
            assert!(
                !ch.channel().is_open(),
                "a refused stream closes its channel"
            );
        }
        None => assert!(
            events.is_empty() && passed.is_empty(),
            "undecided stream {stream:?}: events {events:?}, passed {passed:?}"
        ),
    }
}

/// A message: TCP only when `v1`; any protocol, command and TLVs otherwise.
fn message(src: &mut Source, v1: bool) -> HAProxyMessage {
    let protocol = if v1 {
        [HAProxyProtocol::Tcp4, HAProxyProtocol::Tcp6][src.below(2)]
    } else {
        [
            HAProxyProtocol::Unknown,
            HAProxyProtocol::Tcp4,
            HAProxyProtocol::Tcp6,
            HAProxyProtocol::Udp4,
            HAProxyProtocol::Udp6,
            HAProxyProtocol::UnixStream,
            HAProxyProtocol::UnixDgram,
        ][src.below(7)]
    };
    let local = !v1 && src.below(8) == 0;
    let inet = |src: &mut Source, six: bool| {
        let ip = if six {
            let mut o = [0u8; 16];
            for b in &mut o {
                *b = src.u8();
            }
            IpAddr::V6(Ipv6Addr::from(o))
        } else {
            IpAddr::V4(Ipv4Addr::new(src.u8(), src.u8(), src.u8(), src.u8()))
        };
        Some(HAProxyAddress::Inet(SocketAddr::new(ip, src.u16())))
    };
    let unix = |src: &mut Source| {
        let n = src.below(109);
        let path: Vec<u8> = (0..n).map(|_| src.u8().max(1)).collect();
        Some(HAProxyAddress::Unix(Bytes::from(path)))
    };
    let (source, destination) = match protocol {
        _ if local => (None, None),
        HAProxyProtocol::Unknown => (None, None),
        HAProxyProtocol::Tcp4 | HAProxyProtocol::Udp4 => (inet(src, false), inet(src, false)),
        HAProxyProtocol::Tcp6 | HAProxyProtocol::Udp6 => (inet(src, true), inet(src, true)),
        HAProxyProtocol::UnixStream | HAProxyProtocol::UnixDgram => (unix(src), unix(src)),
    };
    let tlvs = if v1 || local {
        Vec::new()
    } else {
        (0..src.below(4))
            .map(|_| {
                let kind = src.u8();
                // A CRC32C TLV holds 4 bytes; `with_crc` computes them once encoded.
                let n = if kind == haproxy_tlv_kind::CRC32C {
                    4
                } else {
                    src.below(40)
                };
                let mut value = src.bytes(n).to_vec();
                if kind == haproxy_tlv_kind::CRC32C {
                    value.resize(4, 0); // the case's bytes may run out
                }
                HAProxyTlv {
                    kind,
                    value: Bytes::from(value),
                }
            })
            .collect()
    };
    HAProxyMessage {
        version: if v1 {
            HAProxyVersion::V1
        } else {
            HAProxyVersion::V2
        },
        command: if local {
            HAProxyCommand::Local
        } else {
            HAProxyCommand::Proxy
        },
        protocol: if local {
            HAProxyProtocol::Unknown
        } else {
            protocol
        },
        source,
        destination,
        tlvs,
    }
}

/// `m` and its header `wire` with the first CRC32C TLV (if any) holding the header's checksum,
/// as a proxy writes it: CRC32C (Castagnoli) over the header with that field zeroed.
fn with_crc(mut m: HAProxyMessage, mut wire: Vec<u8>) -> (HAProxyMessage, Vec<u8>) {
    let Some(i) = m
        .tlvs
        .iter()
        .position(|t| t.kind == haproxy_tlv_kind::CRC32C)
    else {
        return (m, wire);
    };
    // The TLVs follow the address block; the CRC TLV's value after the TLVs before it.
    let addresses = match m.protocol {
        HAProxyProtocol::Tcp4 | HAProxyProtocol::Udp4 => 12,
        HAProxyProtocol::Tcp6 | HAProxyProtocol::Udp6 => 36,
        HAProxyProtocol::UnixStream | HAProxyProtocol::UnixDgram => 216,
        HAProxyProtocol::Unknown => 0,
    };
    let at = 16 + addresses + m.tlvs[..i].iter().map(|t| 3 + t.value.len()).sum::<usize>() + 3;
    wire[at..at + 4].fill(0);
    let sum = crc32c(&wire).to_be_bytes();
    wire[at..at + 4].copy_from_slice(&sum);
    m.tlvs[i].value = Bytes::copy_from_slice(&sum);
    (m, wire)
}

/// CRC32C, bit by bit (independent of the parser's table).
fn crc32c(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82F6_3B78
            } else {
                c >> 1
            };
        }
    }
    !c
}
