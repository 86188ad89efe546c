//! A plain rustls client driven byte by byte against a server `SslHandler` on an
//! `EmbeddedChannel` (records in and out as buffers the test cuts as it likes), and a record
//! sealer/opener written from RFC 8446 §5.2 with the client's extracted keys (independent of
//! both record layers). Shared by the differential and KeyUpdate tests.
#![allow(dead_code)]

use std::io::Read;
use std::rc::Rc;
use std::sync::Arc;

use netloop_tls::rustls::{self, pki_types::pem::PemObject, pki_types::CertificateDer};
use netloop_tls::{PemIdentity, SslContext, SslHandler, SslOptions};
use netloop_transport::{Bytes, ChannelHandler, EmbeddedChannel};
use rustls::ClientConnection;

/// A server channel with its handler; `own`: the experimental own record layer.
pub fn server(own: bool) -> (EmbeddedChannel, Rc<SslHandler>) {
    let ctx = SslContext::server(&SslOptions {
        identity: Some(PemIdentity {
            chain: include_bytes!("../../fuzz/testpki/server.pem").to_vec(),
            key: include_bytes!("../../fuzz/testpki/server.key").to_vec(),
            ocsp: None,
        }),
        experimental_own_records: own,
        ..SslOptions::default()
    })
    .expect("server context");
    let h = Rc::new(ctx.new_handler(None).expect("handler"));
    let dynh: Rc<dyn ChannelHandler> = h.clone();
    (EmbeddedChannel::new(vec![("tls", dynh)]), h)
}

/// A TLS 1.3 rustls client; `fragment`: its largest record (handshake messages split).
pub fn client(fragment: Option<usize>) -> ClientConnection {
    client_with(fragment, None)
}

/// A TLS 1.3 rustls client whose secrets go to `key_log`.
pub fn client_with_key_log(key_log: Arc<dyn rustls::KeyLog>) -> ClientConnection {
    client_with(None, Some(key_log))
}

fn client_with(
    fragment: Option<usize>,
    key_log: Option<Arc<dyn rustls::KeyLog>>,
) -> ClientConnection {
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
    config.max_fragment_size = fragment;
    if let Some(log) = key_log {
        config.key_log = log;
    }
    let mut c = ClientConnection::new(Arc::new(config), "localhost".try_into().unwrap()).unwrap();
    c.set_buffer_limit(None);
    c
}

/// What the client has to send, as one buffer.
pub fn client_records(c: &mut ClientConnection) -> Vec<u8> {
    let mut out = Vec::new();
    while c.wants_write() {
        c.write_tls(&mut out).unwrap();
    }
    out
}

/// Everything the server wrote, as one buffer.
pub fn server_records(s: &EmbeddedChannel) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(m) = s.read_outbound() {
        out.extend_from_slice(m.as_bytes().expect("records"));
    }
    out
}

/// Feeds `records` to the client in reads of `split` bytes: the plaintext, or its verdict.
pub fn feed_client(
    c: &mut ClientConnection,
    records: &[u8],
    split: usize,
) -> Result<Vec<u8>, rustls::Error> {
    let mut plain = Vec::new();
    for chunk in records.chunks(split.max(1)) {
        let mut rest = chunk;
        while !rest.is_empty() {
            c.read_tls(&mut rest).unwrap();
            c.process_new_packets()?;
            let _ = c.reader().read_to_end(&mut plain);
        }
    }
    Ok(plain)
}

/// Feeds `records` to the server in reads of `split` bytes.
pub fn feed_server(s: &EmbeddedChannel, records: &[u8], split: usize) {
    for chunk in records.chunks(split.max(1)) {
        s.write_inbound(Bytes::copy_from_slice(chunk));
    }
}

pub fn plaintext(s: &EmbeddedChannel) -> Vec<u8> {
    let mut got = Vec::new();
    while let Some(m) = s.read_inbound() {
        got.extend_from_slice(m.as_bytes().expect("plaintext"));
    }
    got
}

/// Handshake (client flights delivered whole); returns the pair ready for data.
pub fn connected(own: bool) -> (ClientConnection, EmbeddedChannel, Rc<SslHandler>) {
    let mut c = client(None);
    let (s, h) = server(own);
    while c.is_handshaking() {
        s.write_inbound(Bytes::from(client_records(&mut c)));
        feed_client(&mut c, &server_records(&s), usize::MAX).expect("handshake");
    }
    s.write_inbound(Bytes::from(client_records(&mut c)));
    feed_client(&mut c, &server_records(&s), usize::MAX).expect("tickets");
    (c, s, h)
}

pub fn pattern(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// One direction's keys as extracted from rustls, sealing or opening records by RFC 8446
/// §5.2 (nonce = iv XOR seq, additional data = the record header).
pub struct RawKeys {
    key: ring::aead::LessSafeKey,
    iv: [u8; 12],
    pub seq: u64,
}

impl RawKeys {
    pub fn new((seq, secrets): (u64, rustls::ConnectionTrafficSecrets)) -> RawKeys {
        use ring::aead;
        let (alg, key, iv): (&'static aead::Algorithm, &[u8], &[u8]) = match &secrets {
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
        RawKeys {
            key: aead::LessSafeKey::new(aead::UnboundKey::new(alg, key).unwrap()),
            iv: iv.try_into().unwrap(),
            seq,
        }
    }

    /// AES-128-GCM keys from their bytes.
    pub fn aes128(key: &[u8], iv: &[u8], seq: u64) -> RawKeys {
        use ring::aead;
        RawKeys {
            key: aead::LessSafeKey::new(aead::UnboundKey::new(&aead::AES_128_GCM, key).unwrap()),
            iv: iv.try_into().unwrap(),
            seq,
        }
    }

    fn nonce(&mut self) -> ring::aead::Nonce {
        let mut nonce = self.iv;
        for (n, s) in nonce[4..].iter_mut().zip(self.seq.to_be_bytes()) {
            *n ^= s;
        }
        self.seq += 1;
        ring::aead::Nonce::assume_unique_for_key(nonce)
    }

    /// A record whose inner plaintext is `inner` (content, type, padding).
    pub fn seal(&mut self, inner: &[u8]) -> Vec<u8> {
        let len = u16::try_from(inner.len() + 16).unwrap().to_be_bytes();
        let header = [23, 3, 3, len[0], len[1]];
        let mut sealed = inner.to_vec();
        let nonce = self.nonce();
        let tag = self
            .key
            .seal_in_place_separate_tag(nonce, ring::aead::Aad::from(header), &mut sealed)
            .unwrap();
        let mut record = header.to_vec();
        record.extend_from_slice(&sealed);
        record.extend_from_slice(tag.as_ref());
        record
    }

    /// Opens the records in `records`: (inner content type, content) each, padding gone; a
    /// record that does not open (under a key that moved on) ends the list as (0, its length).
    pub fn open_all(&mut self, mut records: &[u8]) -> Vec<(u8, Vec<u8>)> {
        let mut out = Vec::new();
        while records.len() >= 5 {
            let len = usize::from(u16::from_be_bytes([records[3], records[4]]));
            let header: [u8; 5] = records[..5].try_into().unwrap();
            let mut body = records[5..5 + len].to_vec();
            let nonce = self.nonce();
            let Ok(plain) = self
                .key
                .open_in_place(nonce, ring::aead::Aad::from(header), &mut body)
            else {
                out.push((0, len.to_be_bytes().to_vec()));
                break;
            };
            let end = plain.iter().rposition(|&b| b != 0).expect("a content type");
            out.push((plain[end], plain[..end].to_vec()));
            records = &records[5 + len..];
        }
        out
    }
}
