//! The record path without sockets: a client and a server `SslHandler`, each on an
//! `EmbeddedChannel`, pumped into each other.

use std::rc::Rc;

use netloop_tls::{PemIdentity, SslContext, SslOptions, TlsVersion};
use netloop_transport::{Bytes, ChannelHandler, ChannelPromise, EmbeddedChannel};

fn channel(h: netloop_tls::SslHandler) -> EmbeddedChannel {
    let h: Rc<dyn ChannelHandler> = Rc::new(h);
    EmbeddedChannel::new(vec![("tls", h)])
}

/// Moves what `from` flushed into `to`; returns the sizes of the buffers moved.
fn pump(from: &EmbeddedChannel, to: &EmbeddedChannel) -> Vec<usize> {
    let mut sizes = Vec::new();
    while let Some(m) = from.read_outbound() {
        if let Ok(b) = m.into_bytes() {
            sizes.push(b.len());
            to.write_inbound(b);
        }
    }
    sizes
}

fn pair(version: TlsVersion) -> (EmbeddedChannel, EmbeddedChannel) {
    pair_with(version, false)
}

/// A pair whose server protects TLS 1.3 records itself when `experimental_own_records`.
fn pair_with(
    version: TlsVersion,
    experimental_own_records: bool,
) -> (EmbeddedChannel, EmbeddedChannel) {
    let server = SslContext::server(&SslOptions {
        identity: Some(PemIdentity {
            chain: include_bytes!("../../fuzz/testpki/server.pem").to_vec(),
            key: include_bytes!("../../fuzz/testpki/server.key").to_vec(),
            ocsp: None,
        }),
        experimental_own_records,
        ..SslOptions::default()
    })
    .expect("server context");
    let client = SslContext::client(&SslOptions {
        ca: Some(include_bytes!("../../fuzz/testpki/ca.pem").to_vec()),
        min_version: version,
        max_version: version,
        ..SslOptions::default()
    })
    .expect("client context");
    let s = channel(server.new_handler(None).expect("server handler"));
    let c = channel(
        client
            .new_handler(Some("localhost"))
            .expect("client handler"),
    );
    while pump(&c, &s).len() + pump(&s, &c).len() > 0 {}
    (c, s)
}

fn inbound(ch: &EmbeddedChannel) -> Vec<u8> {
    let mut got = Vec::new();
    while let Some(m) = ch.read_inbound() {
        got.extend_from_slice(m.as_bytes().expect("plaintext bytes"));
    }
    got
}

#[test]
fn writes_before_one_flush_leave_as_full_records_in_one_buffer_and_complete_every_promise() {
    let (c, s) = pair(TlsVersion::Tls13);
    let parts: Vec<Bytes> = (0..3u8)
        .map(|i| Bytes::from(vec![b'a' + i; 10_000]))
        .collect();
    let promises: Vec<ChannelPromise> = parts.iter().map(|_| ChannelPromise::new()).collect();
    for (part, p) in parts.iter().zip(&promises) {
        c.pipeline().write_with(part.clone(), p.clone());
    }
    assert!(
        c.read_outbound().is_none(),
        "nothing leaves before the flush"
    );
    assert!(promises.iter().all(|p| !p.is_done()));
    c.pipeline().flush();
    c.run_pending_tasks();
    // 30 000 bytes fill one 16 KiB record and part of a second (TLS 1.3: 22 bytes each of
    // header, content type and tag), not one record per write.
    assert_eq!(pump(&c, &s), vec![30_000 + 2 * 22]);
    let want: Vec<u8> = parts.iter().flat_map(|p| p.iter().copied()).collect();
    assert_eq!(
        inbound(&s),
        want,
        "the plaintext arrives whole and in order"
    );
    c.run_pending_tasks();
    assert!(promises
        .iter()
        .all(|p| p.is_done() && p.future().is_some_and(|f| f.is_success())));
}

#[test]
fn writes_held_at_close_are_encrypted_before_the_close_notify() {
    let (c, s) = pair(TlsVersion::Tls12);
    c.pipeline().write(Bytes::from_static(b"last words"));
    c.close();
    pump(&c, &s);
    assert_eq!(inbound(&s), b"last words");
}

#[test]
fn a_large_read_reaches_the_next_handler_as_one_buffer() {
    let (c, s) = pair(TlsVersion::Tls13);
    let msg = Bytes::from(vec![0x5a; 64 * 1024]);
    c.write_outbound(msg.clone());
    // All four records in one inbound read: their plaintext is one message.
    let mut all = Vec::new();
    while let Some(m) = c.read_outbound() {
        all.extend_from_slice(m.as_bytes().expect("records"));
    }
    s.write_inbound(Bytes::from(all));
    let first = s.read_inbound().expect("plaintext");
    assert_eq!(first.as_bytes().map(Bytes::len), Some(64 * 1024));
    assert!(s.read_inbound().is_none());
}

#[test]
fn small_reads_leave_as_bytes_carved_one_after_another_from_the_threads_chunk() {
    for (version, own) in [
        (TlsVersion::Tls13, false),
        (TlsVersion::Tls13, true),
        (TlsVersion::Tls12, false),
    ] {
        let (c, s) = pair_with(version, own);
        let mut got = Vec::new();
        for word in [&b"ping"[..], b"pong", b"pang"] {
            c.write_outbound(Bytes::from_static(word));
            pump(&c, &s);
            let m = s.read_inbound().expect("plaintext");
            got.push(m.as_bytes().expect("bytes").clone());
            assert!(s.read_inbound().is_none());
        }
        assert_eq!(
            got,
            [&b"ping"[..], b"pong", b"pang"],
            "{version:?} own {own}"
        );
        // No buffer of their own per read: each read's plaintext follows the one before in
        // the transport's receive chunk.
        for w in got.windows(2) {
            assert_eq!(
                w[0].as_ptr().wrapping_add(w[0].len()),
                w[1].as_ptr(),
                "{version:?} own {own}"
            );
        }
    }
}

#[test]
fn a_record_split_across_small_and_large_reads_is_opened_whole() {
    for own in [false, true] {
        let (c, s) = pair_with(TlsVersion::Tls13, own);
        let small = Bytes::from(vec![0x11; 100]);
        let large = Bytes::from(vec![0x22; 20 * 1024]);
        c.write_outbound(small.clone());
        c.write_outbound(large.clone());
        let mut records = Vec::new();
        while let Some(m) = c.read_outbound() {
            records.extend_from_slice(m.as_bytes().expect("records"));
        }
        // A small read ending inside the second record, then the rest in one large read.
        let cut = 100 + 22 + 50;
        s.write_inbound(Bytes::copy_from_slice(&records[..cut]));
        s.write_inbound(Bytes::copy_from_slice(&records[cut..]));
        let got = inbound(&s);
        assert_eq!(got.len(), small.len() + large.len(), "own {own}");
        assert_eq!(&got[..100], &small[..]);
        assert_eq!(&got[100..], &large[..]);
    }
}
