//! A server's own TLS 1.3 record layer (after rustls's handshake), against a plain rustls
//! client driven byte by byte: key updates, tampered and oversized records, data in the same
//! read as the client's Finished, bulk data both ways.

use std::io::{Read, Write};
use std::rc::Rc;
use std::sync::Arc;

use netloop_tls::rustls::{self, pki_types::pem::PemObject, pki_types::CertificateDer};
use netloop_tls::{PemIdentity, SslContext, SslOptions};
use netloop_transport::{Bytes, ChannelHandler, EmbeddedChannel};
use rustls::{AlertDescription, ClientConnection};

fn server() -> EmbeddedChannel {
    let ctx = SslContext::server(&SslOptions {
        identity: Some(PemIdentity {
            chain: include_bytes!("../../fuzz/testpki/server.pem").to_vec(),
            key: include_bytes!("../../fuzz/testpki/server.key").to_vec(),
            ocsp: None,
        }),
        experimental_own_records: true,
        ..SslOptions::default()
    })
    .expect("server context");
    let h: Rc<dyn ChannelHandler> = Rc::new(ctx.new_handler(None).expect("handler"));
    EmbeddedChannel::new(vec![("tls", h)])
}

fn client() -> ClientConnection {
    let mut roots = rustls::RootCertStore::empty();
    let ca = CertificateDer::from_pem_slice(include_bytes!("../../fuzz/testpki/ca.pem")).unwrap();
    roots.add(ca).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.enable_secret_extraction = true;
    let mut c = ClientConnection::new(Arc::new(config), "localhost".try_into().unwrap()).unwrap();
    c.set_buffer_limit(None);
    c
}

/// What the client has to send, as one buffer.
fn client_records(c: &mut ClientConnection) -> Vec<u8> {
    let mut out = Vec::new();
    while c.wants_write() {
        c.write_tls(&mut out).unwrap();
    }
    out
}

/// Everything the server flushed, as one buffer.
fn server_records(s: &EmbeddedChannel) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(m) = s.read_outbound() {
        out.extend_from_slice(m.as_bytes().expect("records"));
    }
    out
}

/// Feeds the server's records to the client: the plaintext, or the client's verdict.
fn to_client(s: &EmbeddedChannel, c: &mut ClientConnection) -> Result<Vec<u8>, rustls::Error> {
    let records = server_records(s);
    let mut rest = &records[..];
    let mut plain = Vec::new();
    while !rest.is_empty() {
        c.read_tls(&mut rest).unwrap();
        c.process_new_packets()?;
        let _ = c.reader().read_to_end(&mut plain);
    }
    Ok(plain)
}

fn plaintext(s: &EmbeddedChannel) -> Vec<u8> {
    let mut got = Vec::new();
    while let Some(m) = s.read_inbound() {
        got.extend_from_slice(m.as_bytes().expect("plaintext"));
    }
    got
}

/// Handshake; returns the pair ready for application data.
fn connected() -> (ClientConnection, EmbeddedChannel) {
    let (mut c, s) = (client(), server());
    while c.is_handshaking() {
        s.write_inbound(Bytes::from(client_records(&mut c)));
        to_client(&s, &mut c).expect("handshake");
    }
    s.write_inbound(Bytes::from(client_records(&mut c)));
    to_client(&s, &mut c).expect("tickets");
    assert!(s.channel().is_active());
    (c, s)
}

fn echo(c: &mut ClientConnection, s: &EmbeddedChannel, msg: &[u8]) -> Vec<u8> {
    c.writer().write_all(msg).unwrap();
    s.write_inbound(Bytes::from(client_records(c)));
    let got = plaintext(s);
    s.write_outbound(Bytes::from(got));
    to_client(s, c).expect("echo")
}

fn error_message(s: &EmbeddedChannel) -> String {
    let e = s.check_exception().expect_err("an exception");
    format!("{e}")
}

#[test]
fn key_updates_from_the_client_keep_the_connection_working_both_ways() {
    let (mut c, s) = connected();
    assert_eq!(echo(&mut c, &s, b"before"), b"before");
    for round in 0..3 {
        // update_requested: the server moves its receive key on and answers with its own.
        c.refresh_traffic_keys().unwrap();
        let msg = format!("after update {round}");
        assert_eq!(echo(&mut c, &s, msg.as_bytes()), msg.as_bytes());
    }
    assert!(s.channel().is_active());
    s.check_exception().expect("no error");
    // The server answered the last update with its own: its records since then were counted
    // from 0 under a new key (only the echo), not on from the handshake's.
    let secrets = c.dangerous_extract_secrets().expect("secrets");
    assert_eq!(secrets.rx.0, 1, "the server's send key moved on");
}

#[test]
fn a_tampered_record_closes_the_channel_with_bad_record_mac() {
    let (mut c, s) = connected();
    c.writer().write_all(b"precious").unwrap();
    let mut records = client_records(&mut c);
    let last = records.len() - 20;
    records[last] ^= 0x01;
    s.write_inbound(Bytes::from(records));
    assert!(plaintext(&s).is_empty(), "nothing tampered is delivered");
    assert!(error_message(&s).contains("bad_record_mac"));
    assert!(!s.channel().is_active());
    match to_client(&s, &mut c) {
        Err(rustls::Error::AlertReceived(a)) => assert_eq!(a, AlertDescription::BadRecordMac),
        other => panic!("the client should get bad_record_mac, got {other:?}"),
    }
}

#[test]
fn a_record_over_the_ciphertext_limit_closes_with_record_overflow() {
    let (mut c, s) = connected();
    let len: u16 = (1 << 14) + 256 + 1;
    let mut record = vec![23, 3, 3];
    record.extend_from_slice(&len.to_be_bytes());
    record.resize(5 + usize::from(len), 0x42);
    s.write_inbound(Bytes::from(record));
    assert!(error_message(&s).contains("record_overflow"));
    assert!(!s.channel().is_active());
    match to_client(&s, &mut c) {
        Err(rustls::Error::AlertReceived(a)) => assert_eq!(a, AlertDescription::RecordOverflow),
        other => panic!("the client should get record_overflow, got {other:?}"),
    }
}

#[test]
fn a_plaintext_record_after_the_handshake_closes_with_unexpected_message() {
    let (mut c, s) = connected();
    s.write_inbound(Bytes::from_static(&[21, 3, 3, 0, 2, 1, 0]));
    assert!(error_message(&s).contains("unexpected_message"));
    assert!(!s.channel().is_active());
    match to_client(&s, &mut c) {
        Err(rustls::Error::AlertReceived(a)) => {
            assert_eq!(a, AlertDescription::UnexpectedMessage)
        }
        other => panic!("the client should get unexpected_message, got {other:?}"),
    }
}

#[test]
fn data_in_the_same_read_as_the_client_finished_is_delivered_and_tickets_are_sent() {
    let (mut c, s) = (client(), server());
    s.write_inbound(Bytes::from(client_records(&mut c)));
    to_client(&s, &mut c).expect("server flight");
    assert!(!c.is_handshaking());
    // Finished, then application data: one buffer, one read on the server.
    c.writer().write_all(b"early in the same read").unwrap();
    let both = client_records(&mut c);
    s.write_inbound(Bytes::from(both));
    assert_eq!(plaintext(&s), b"early in the same read");
    to_client(&s, &mut c).expect("tickets");
    assert!(
        c.tls13_tickets_received() > 0,
        "the session tickets went out"
    );
    s.write_outbound(Bytes::from_static(b"reply"));
    assert_eq!(to_client(&s, &mut c).expect("reply"), b"reply");
}

#[test]
fn close_notify_is_answered_with_ours_and_closes_the_channel() {
    let (mut c, s) = connected();
    c.send_close_notify();
    s.write_inbound(Bytes::from(client_records(&mut c)));
    assert!(!s.channel().is_active());
    s.check_exception().expect("a clean close is no error");
    let records = server_records(&s);
    let mut rest = &records[..];
    c.read_tls(&mut rest).unwrap();
    let state = c.process_new_packets().expect("our close_notify");
    assert!(state.peer_has_closed());
}

fn pattern(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

fn checksum(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

#[test]
fn a_mebibyte_and_a_half_arrives_intact_each_way_in_reads_that_split_records() {
    let (mut c, s) = connected();
    let up = pattern(1_500_000, 0x1234_5678);
    c.writer().write_all(&up).unwrap();
    let records = client_records(&mut c);
    // Reads of 7 001 bytes: records (16 KiB) split across reads, several in one read.
    let mut received = Vec::new();
    for chunk in records.chunks(7_001) {
        s.write_inbound(Bytes::copy_from_slice(chunk));
        received.extend_from_slice(&plaintext(&s));
    }
    assert_eq!(received.len(), up.len());
    assert_eq!(checksum(&received), checksum(&up));
    // Back, in writes of uneven sizes flushed together.
    let down = pattern(1_300_000, 0x9abc_def0);
    for part in down.chunks(100_003) {
        s.pipeline().write(Bytes::copy_from_slice(part));
    }
    s.pipeline().flush();
    s.run_pending_tasks();
    let got = to_client(&s, &mut c).expect("bulk down");
    assert_eq!(got.len(), down.len());
    assert_eq!(checksum(&got), checksum(&down));
}

/// A record as the client would seal it with its extracted send key (RFC 8446 §5.2: nonce =
/// iv XOR seq, additional data = the record header), written independently of both sides.
fn seal_as_client(secrets: &rustls::ConnectionTrafficSecrets, seq: u64, body: &[u8]) -> Vec<u8> {
    use ring::aead;
    let (alg, key, iv): (&'static aead::Algorithm, &[u8], &[u8]) = match secrets {
        rustls::ConnectionTrafficSecrets::Aes128Gcm { key, iv } => {
            (&aead::AES_128_GCM, key.as_ref(), iv.as_ref())
        }
        rustls::ConnectionTrafficSecrets::Aes256Gcm { key, iv } => {
            (&aead::AES_256_GCM, key.as_ref(), iv.as_ref())
        }
        rustls::ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => {
            (&aead::CHACHA20_POLY1305, key.as_ref(), iv.as_ref())
        }
        _ => panic!("unexpected suite"),
    };
    let key = aead::LessSafeKey::new(aead::UnboundKey::new(alg, key).unwrap());
    let mut nonce: [u8; 12] = iv.try_into().unwrap();
    for (n, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
        *n ^= s;
    }
    let len = u16::try_from(body.len() + 16).unwrap().to_be_bytes();
    let header = [23, 3, 3, len[0], len[1]];
    let mut sealed = body.to_vec();
    let tag = key
        .seal_in_place_separate_tag(
            aead::Nonce::assume_unique_for_key(nonce),
            aead::Aad::from(header),
            &mut sealed,
        )
        .unwrap();
    let mut record = header.to_vec();
    record.extend_from_slice(&sealed);
    record.extend_from_slice(tag.as_ref());
    record
}

#[test]
fn a_full_record_and_a_padded_one_are_delivered_and_one_byte_more_closes_with_record_overflow() {
    let (c, s) = connected();
    let (seq, secrets) = c.dangerous_extract_secrets().expect("secrets").tx;
    // 2^14 bytes of content and its type: the largest inner plaintext.
    let mut full = vec![b'x'; 1 << 14];
    full.push(23);
    s.write_inbound(Bytes::from(seal_as_client(&secrets, seq, &full)));
    let got = plaintext(&s);
    assert!(got.len() == 1 << 14 && got.iter().all(|&b| b == b'x'));
    // Zero padding after the type is stripped.
    let padded = [b'a', b'b', b'c', 23, 0, 0, 0, 0];
    s.write_inbound(Bytes::from(seal_as_client(&secrets, seq + 1, &padded)));
    assert!(plaintext(&s) == b"abc");
    assert!(s.channel().is_active());
    // 2^14 + 1 bytes of content: the inner plaintext is over 2^14 + 1 bytes.
    let mut over = vec![b'y'; (1 << 14) + 1];
    over.push(23);
    s.write_inbound(Bytes::from(seal_as_client(&secrets, seq + 2, &over)));
    assert!(plaintext(&s).is_empty());
    assert!(error_message(&s).contains("record_overflow"));
    assert!(!s.channel().is_active());
}

#[test]
fn a_record_whose_inner_plaintext_is_all_padding_closes_with_unexpected_message() {
    let (c, s) = connected();
    let (seq, secrets) = c.dangerous_extract_secrets().expect("secrets").tx;
    s.write_inbound(Bytes::from(seal_as_client(&secrets, seq, &[0, 0, 0])));
    assert!(error_message(&s).contains("unexpected_message"));
    assert!(!s.channel().is_active());
}

/// tlsfuzzer's "post-handshake KeyUpdate msg with update_request": the client's Finished, its
/// KeyUpdate(update_requested) and a request in one read. The server must send its own
/// KeyUpdate before the reply (the reply is under the next key), or the client cannot open it.
#[test]
fn a_key_update_request_in_the_same_read_as_the_client_finished_is_answered_before_data() {
    let (mut c, s) = (client(), server());
    s.write_inbound(Bytes::from(client_records(&mut c)));
    to_client(&s, &mut c).expect("server flight");
    assert!(!c.is_handshaking());
    c.refresh_traffic_keys().expect("key update");
    c.writer().write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    s.write_inbound(Bytes::from(client_records(&mut c)));
    assert_eq!(plaintext(&s), b"GET / HTTP/1.0\r\n\r\n");
    s.write_outbound(Bytes::from_static(b"reply"));
    assert_eq!(to_client(&s, &mut c).expect("reply"), b"reply");
    s.check_exception().expect("no error");
}
