//! The TLS handler's own cost per record, without sockets: a netloop client and server
//! `SslHandler`, each on an `EmbeddedChannel`, echo messages through each other (encrypt,
//! decrypt, encrypt, decrypt per round trip) on one thread. Repeated `--reps` times; the best
//! repetition is reported, so that other load on the machine counts as little as possible.
//!
//! `cargo run --release -p netloop-tls --example record_cost -- [--reps N] [--ms MS] [--count N]`
//!
//! `--count N` runs exactly N round trips per repetition instead of `--ms`: the same work on
//! every run, for `perf stat -e instructions:u` (a count other load on the machine hardly moves).
//! `--tls 13` or `--tls 12` runs one version only, `--size 64` (or 16384, 65536) one size. With `NETLOOP_TLS_OWN_RECORDS=1` the
//! server protects TLS 1.3 records with netloop's experimental own record layer instead of
//! rustls's (A/B).

use std::rc::Rc;
use std::time::{Duration, Instant};

use netloop_tls::{PemIdentity, SslContext, SslOptions, TlsVersion};
use netloop_transport::{Bytes, ChannelHandler, EmbeddedChannel};

fn channel(h: netloop_tls::SslHandler) -> EmbeddedChannel {
    let h: Rc<dyn ChannelHandler> = Rc::new(h);
    EmbeddedChannel::new(vec![("tls", h)])
}

/// Moves what `from` wrote into `to`.
fn pump(from: &EmbeddedChannel, to: &EmbeddedChannel) -> usize {
    let mut n = 0;
    while let Some(m) = from.read_outbound() {
        if let Ok(b) = m.into_bytes() {
            n += b.len();
            to.write_inbound(b);
        }
    }
    n
}

fn pair(version: TlsVersion) -> (EmbeddedChannel, EmbeddedChannel) {
    let server = SslContext::server(&SslOptions {
        identity: Some(PemIdentity {
            chain: include_bytes!("../fuzz/testpki/server.pem").to_vec(),
            key: include_bytes!("../fuzz/testpki/server.key").to_vec(),
            ocsp: None,
        }),
        experimental_own_records: std::env::var("NETLOOP_TLS_OWN_RECORDS").is_ok_and(|v| v == "1"),
        ..SslOptions::default()
    })
    .expect("server context");
    let client = SslContext::client(&SslOptions {
        ca: Some(include_bytes!("../fuzz/testpki/ca.pem").to_vec()),
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
    while pump(&c, &s) + pump(&s, &c) > 0 {}
    (c, s)
}

/// One round trip of `msg`: client → server, the server writes back what it read, → client.
fn round_trip(c: &EmbeddedChannel, s: &EmbeddedChannel, msg: &Bytes) -> usize {
    c.write_outbound(msg.clone());
    pump(c, s);
    while let Some(m) = s.read_inbound() {
        s.write_outbound(m);
    }
    pump(s, c);
    let mut got = 0;
    while let Some(m) = c.read_inbound() {
        got += m.as_bytes().map_or(0, Bytes::len);
    }
    got
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut reps, mut ms, mut count, mut only, mut one_size) = (7u32, 300u64, 0u64, 0u64, 0u64);
    while let Some(a) = args.next() {
        let v = args.next().and_then(|v| v.parse().ok());
        match (a.as_str(), v) {
            ("--reps", Some(v)) => reps = v as u32,
            ("--ms", Some(v)) => ms = v,
            ("--count", Some(v)) => count = v,
            ("--tls", Some(v)) => only = v,
            ("--size", Some(v)) => one_size = v,
            _ => panic!(
                "usage: record_cost [--reps N] [--ms MS] [--count N] [--tls 13|12] [--size BYTES]"
            ),
        }
    }
    for (name, version, id) in [
        ("TLS 1.3", TlsVersion::Tls13, 13),
        ("TLS 1.2", TlsVersion::Tls12, 12),
    ] {
        if only != 0 && only != id {
            continue;
        }
        let (c, s) = pair(version);
        for size in [64usize, 16 * 1024, 64 * 1024] {
            if one_size != 0 && one_size != size as u64 {
                continue;
            }
            let msg = Bytes::from(vec![0x5a; size]);
            let mut best = f64::MAX;
            for _ in 0..reps {
                let start = Instant::now();
                let mut n = 0u64;
                let more = |n: u64| match count {
                    0 => start.elapsed() < Duration::from_millis(ms),
                    c => n < c,
                };
                while more(n) {
                    for _ in 0..16 {
                        assert_eq!(round_trip(&c, &s, &msg), size, "echo lost bytes");
                    }
                    n += 16;
                }
                best = best.min(start.elapsed().as_nanos() as f64 / n as f64);
            }
            // Each round trip is two records' worth of encrypt and decrypt per 16 KiB.
            println!(
                "{name} {size:>6} B: {:>9.0} ns per round trip, {:>7.0} MB/s echoed",
                best,
                size as f64 * 1e3 / best
            );
        }
    }
}
