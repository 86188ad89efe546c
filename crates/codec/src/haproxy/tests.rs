//! The PROXY protocol parser and encoder: the specification's examples, every refusal, the
//! bounds, and round trips.

use std::net::SocketAddr;

use bytes::Bytes;

use super::*;

fn sa(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn decoded(buf: &[u8]) -> (HAProxyMessage, usize) {
    match HAProxyMessage::decode(buf) {
        Ok(HAProxyDecoded::Header { message, length }) => (message, length),
        other => panic!("{:?}: {other:?}", String::from_utf8_lossy(buf)),
    }
}

fn refused(buf: &[u8]) -> String {
    match HAProxyMessage::decode(buf) {
        Err(e) => {
            assert_eq!(e.code(), "ERR_HAPROXY_PROTOCOL");
            e.to_string()
        }
        other => panic!(
            "{:?} was not refused: {other:?}",
            String::from_utf8_lossy(buf)
        ),
    }
}

#[test]
fn version_1_tcp4_and_tcp6_lines_give_both_ends() {
    let (m, n) = decoded(b"PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\nGET /");
    assert_eq!(n, 47);
    assert_eq!(m.version, HAProxyVersion::V1);
    assert_eq!(m.command, HAProxyCommand::Proxy);
    assert_eq!(m.protocol, HAProxyProtocol::Tcp4);
    assert_eq!(m.source_addr(), Some(sa("192.168.0.1:56324")));
    assert_eq!(m.destination_addr(), Some(sa("192.168.0.11:443")));
    let (m, _) = decoded(b"PROXY TCP6 2001:db8::1 ::1 1 65535\r\n");
    assert_eq!(m.source_addr(), Some(sa("[2001:db8::1]:1")));
    assert_eq!(m.destination_addr(), Some(sa("[::1]:65535")));
}

#[test]
fn version_1_unknown_ignores_the_rest_of_its_line() {
    let (m, n) = decoded(b"PROXY UNKNOWN\r\n");
    assert_eq!(
        (m.protocol, m.source.clone(), n),
        (HAProxyProtocol::Unknown, None, 15)
    );
    let (m, _) = decoded(b"PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n");
    assert_eq!(m.protocol, HAProxyProtocol::Unknown);
}

#[test]
fn version_1_refusals() {
    for bad in [
        &b"PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\n"[..], // bare LF
        b"PROXY TCP4 192.168.0.1  192.168.0.11 56324 443\r\n",   // two spaces
        b"PROXY TCP4 192.168.0.1 192.168.0.11 56324\r\n",        // a field missing
        b"PROXY TCP4 192.168.0.1 192.168.0.11 56324 443 1\r\n",  // one too many
        b"PROXY TCP4 ::1 ::1 1 2\r\n",                           // v6 under TCP4
        b"PROXY TCP6 1.2.3.4 1.2.3.4 1 2\r\n",                   // v4 under TCP6
        b"PROXY TCP4 01.2.3.4 1.2.3.4 1 2\r\n",                  // a leading zero
        b"PROXY TCP4 1.2.3.4 1.2.3.4 01 2\r\n",                  // a port's leading zero
        b"PROXY TCP4 1.2.3.4 1.2.3.4 65536 2\r\n",               // a port out of range
        b"PROXY TCP4 1.2.3.4 1.2.3.4 +1 2\r\n",                  // a sign
        b"PROXY UDP4 1.2.3.4 1.2.3.4 1 2\r\n",                   // no UDP in version 1
        b"PROXY TCP4 1.2.3.4\t1.2.3.4 1 2\r\n",                  // a control byte
        b"PROXY\r\n",
        b"PROXY \r\n",
    ] {
        refused(bad);
    }
}

#[test]
fn a_stream_is_refused_as_soon_as_it_cannot_start_a_header() {
    assert_eq!(HAProxyMessage::decode(b""), Ok(HAProxyDecoded::NeedMore));
    assert_eq!(HAProxyMessage::decode(b"PRO"), Ok(HAProxyDecoded::NeedMore));
    assert_eq!(
        HAProxyMessage::decode(b"\r\n\r\n\0"),
        Ok(HAProxyDecoded::NeedMore)
    );
    assert!(refused(b"G").contains("not a PROXY protocol header"));
    refused(b"PROXX");
    refused(b"\x16\x03\x01"); // a TLS ClientHello sent straight to the port
    refused(b"\r\n\r\n\0\r\nQUIT!");
    // A version 1 line still without its end at 107 bytes is refused then, not later.
    let mut long = b"PROXY TCP4 ".to_vec();
    long.resize(106, b'1');
    assert_eq!(HAProxyMessage::decode(&long), Ok(HAProxyDecoded::NeedMore));
    long.push(b'1');
    assert!(refused(&long).contains("longer than 107 bytes"));
}

fn v2(command: u8, family: u8, body: &[u8]) -> Vec<u8> {
    let mut out = V2_SIGNATURE.to_vec();
    out.push(command);
    out.push(family);
    out.extend_from_slice(&(body.len() as u16).to_be_bytes());
    out.extend_from_slice(body);
    out
}

#[test]
fn version_2_tcp4_with_tlvs() {
    let mut body = vec![192, 0, 2, 1, 198, 51, 100, 2, 0xdc, 0x04, 0x01, 0xbb];
    body.extend_from_slice(&[0x02, 0, 11]);
    body.extend_from_slice(b"example.org");
    body.extend_from_slice(&[0x05, 0, 0]);
    let mut buf = v2(0x21, 0x11, &body);
    buf.extend_from_slice(b"after");
    let (m, n) = decoded(&buf);
    assert_eq!(n, buf.len() - 5);
    assert_eq!(m.version, HAProxyVersion::V2);
    assert_eq!(m.protocol, HAProxyProtocol::Tcp4);
    assert_eq!(m.source_addr(), Some(sa("192.0.2.1:56324")));
    assert_eq!(m.destination_addr(), Some(sa("198.51.100.2:443")));
    assert_eq!(
        m.tlvs,
        vec![
            HAProxyTlv {
                kind: 2,
                value: Bytes::from_static(b"example.org")
            },
            HAProxyTlv {
                kind: 5,
                value: Bytes::new()
            },
        ]
    );
}

#[test]
fn version_2_unix_paths_stop_at_their_first_nul() {
    let mut body = vec![0u8; 216];
    body[..9].copy_from_slice(b"/tmp/a.sk");
    body[108..113].copy_from_slice(b"/b.sk");
    let (m, _) = decoded(&v2(0x21, 0x31, &body));
    assert_eq!(m.protocol, HAProxyProtocol::UnixStream);
    assert_eq!(
        m.source,
        Some(HAProxyAddress::Unix(Bytes::from_static(b"/tmp/a.sk")))
    );
    assert_eq!(
        m.destination,
        Some(HAProxyAddress::Unix(Bytes::from_static(b"/b.sk")))
    );
}

#[test]
fn version_2_local_skips_its_address_block() {
    let (m, n) = decoded(&v2(0x20, 0x11, &[1, 2, 3]));
    assert_eq!(n, 19);
    assert_eq!(m.command, HAProxyCommand::Local);
    assert_eq!((m.protocol, m.source), (HAProxyProtocol::Unknown, None));
}

#[test]
fn version_2_refusals() {
    refused(&v2(0x11, 0x11, &[0; 12])); // version 1 in a version 2 header
    refused(&v2(0x22, 0x11, &[0; 12])); // command 2
    refused(&v2(0x21, 0x13, &[0; 12])); // transport 3
    refused(&v2(0x21, 0x10, &[0; 12])); // INET without a transport
    refused(&v2(0x21, 0x41, &[0; 12])); // family 4
    refused(&v2(0x21, 0x21, &[0; 12])); // TCP6 needs 36 bytes
    refused(&v2(0x21, 0x11, &[0; 14])); // two bytes: a truncated TLV
    let mut body = vec![0; 12];
    body.extend_from_slice(&[0x01, 0, 5, b'h', b'2']); // announces 5, has 2
    refused(&v2(0x21, 0x11, &body));
    // The version and command byte is judged as soon as it arrives.
    let mut head = V2_SIGNATURE.to_vec();
    head.push(0x31);
    refused(&head);
}

#[test]
fn a_version_2_header_waits_for_its_announced_length() {
    let whole = v2(0x21, 0x11, &[0; 12]);
    for cut in 0..whole.len() {
        assert_eq!(
            HAProxyMessage::decode(&whole[..cut]),
            Ok(HAProxyDecoded::NeedMore),
            "{cut}"
        );
    }
    decoded(&whole);
}

#[test]
fn every_message_round_trips_through_both_encodings_where_it_fits() {
    let mut udp6 = HAProxyMessage::tcp(sa("[2001:db8::1]:9"), sa("[2001:db8::2]:53"));
    udp6.protocol = HAProxyProtocol::Udp6;
    udp6.tlvs.push(HAProxyTlv {
        kind: 0xe0,
        value: Bytes::from(vec![7; 300]),
    });
    let unix = HAProxyMessage {
        version: HAProxyVersion::V2,
        command: HAProxyCommand::Proxy,
        protocol: HAProxyProtocol::UnixDgram,
        source: Some(HAProxyAddress::Unix(Bytes::from_static(b"/run/a"))),
        destination: Some(HAProxyAddress::Unix(Bytes::from(vec![b'p'; 108]))),
        tlvs: Vec::new(),
    };
    for m in [
        HAProxyMessage::tcp(sa("10.0.0.1:1234"), sa("10.0.0.2:80")),
        HAProxyMessage::tcp(sa("[::1]:1"), sa("[::2]:2")),
        udp6,
        unix,
    ] {
        let (back, n) = decoded(&m.encode_v2().unwrap());
        assert_eq!(back, m);
        assert_eq!(n, m.encode_v2().unwrap().len());
        if m.protocol == HAProxyProtocol::Tcp4 || m.protocol == HAProxyProtocol::Tcp6 {
            let v1 = m.encode_v1().unwrap();
            let (back, _) = decoded(&v1);
            assert_eq!(
                back,
                HAProxyMessage {
                    version: HAProxyVersion::V1,
                    ..m
                }
            );
        } else {
            assert_eq!(m.encode_v1().unwrap_err().code(), "ERR_ENCODER");
        }
    }
}

#[test]
fn the_encoder_refuses_what_the_format_cannot_hold() {
    let mut mixed = HAProxyMessage::tcp(sa("10.0.0.1:1"), sa("[::1]:2"));
    assert_eq!(mixed.encode_v2().unwrap_err().code(), "ERR_ENCODER");
    mixed.destination = None;
    assert!(mixed.encode_v1().is_err());
    let mut big = HAProxyMessage::tcp(sa("10.0.0.1:1"), sa("10.0.0.2:2"));
    big.tlvs = vec![
        HAProxyTlv {
            kind: 1,
            value: Bytes::from(vec![0; 40_000])
        };
        2
    ];
    assert_eq!(big.encode_v2().unwrap_err().code(), "ERR_ENCODER");
    let local = HAProxyMessage {
        command: HAProxyCommand::Local,
        ..big.clone()
    };
    assert_eq!(
        &local.encode_v1().unwrap_err().to_string()[..],
        "cannot encode message: version 1 headers carry no TLVs"
    );
}

#[test]
fn a_crc32c_tlv_must_match_the_header_it_is_in() {
    let mut m = HAProxyMessage::tcp(sa("192.0.2.1:40000"), sa("198.51.100.2:443"));
    m.tlvs = vec![
        HAProxyTlv {
            kind: tlv::kind::AUTHORITY,
            value: Bytes::from_static(b"example.com"),
        },
        HAProxyTlv {
            kind: tlv::kind::CRC32C,
            value: Bytes::from_static(&[0; 4]),
        },
    ];
    // The encoder fills in the checksum: the last 4 bytes (the CRC32C TLV is last), over the
    // header with them zeroed.
    let wire = m.encode_v2().unwrap().to_vec();
    let n = wire.len();
    let mut zeroed = wire.clone();
    zeroed[n - 4..].fill(0);
    assert_eq!(wire[n - 4..], tlv::crc32c(&[&zeroed]).to_be_bytes());
    let (got, len) = decoded(&wire);
    assert_eq!(len, n);
    assert_eq!(got.authority(), Some("example.com"));

    let mut tampered = wire.clone();
    tampered[16 + 12 + 3] ^= 0x20; // a letter of the authority
    assert!(refused(&tampered).contains("CRC32C"));
    let mut wrong_sum = wire.clone();
    wrong_sum[n - 1] ^= 1;
    assert!(refused(&wrong_sum).contains("CRC32C"));

    // A CRC32C TLV must hold 4 bytes: the encoder refuses another size, the parser too.
    m.tlvs = vec![HAProxyTlv {
        kind: tlv::kind::CRC32C,
        value: Bytes::from_static(&[0; 3]),
    }];
    assert_eq!(m.encode_v2().unwrap_err().code(), "ERR_ENCODER");
    let mut short = wire[..16].to_vec();
    let block = [&wire[16..16 + 12], &[tlv::kind::CRC32C, 0, 3, 1, 2, 3][..]].concat();
    short[14..16].copy_from_slice(&(block.len() as u16).to_be_bytes());
    short.extend_from_slice(&block);
    assert!(refused(&short).contains("CRC32C TLV of 3 bytes"));
}
