//! The request decoder's fuzz checks, shared by the cargo-fuzz target and a stable test
//! (crates/http/tests/split_invariance.rs includes this file).
//!
//! An input is: one byte choosing the limits, one byte `k` (the number of read boundaries,
//! `k % 8`), `k` bytes placing them, then the byte stream. [`check`] decodes the stream in one
//! read and again cut at those boundaries (through a cumulation, as the handler does), and
//! asserts:
//! - no panic;
//! - the same requests, pieces of body (joined per request) and final error either way;
//! - what stays buffered between reads is bounded by the limits (no unbounded growth);
//! - aggregated bodies stay within the aggregation limit, streamed ones within the body limit.

use netloop_http::bytes::{Bytes, BytesMut};
use netloop_http::{Decoded, HttpError, HttpServerConfig, RequestDecoder, MAX_CHUNK_LINE};

/// The limits an input's first byte selects (small, so the fuzzer reaches them).
pub fn config(selector: u8) -> HttpServerConfig {
    let aggregate = [0, 8, 64, 1 << 16][usize::from(selector & 3)];
    HttpServerConfig {
        max_head_size: [256, 1024][usize::from(selector >> 2 & 1)],
        max_uri_length: [32, 512][usize::from(selector >> 3 & 1)],
        max_header_count: [4, 40][usize::from(selector >> 4 & 1)],
        max_body_size: [100, 100_000][usize::from(selector >> 5 & 1)],
        aggregate_limit: aggregate,
        require_host: selector & 0x40 != 0,
        ..HttpServerConfig::default()
    }
}

/// What one decoding run yields, normalized: consecutive body pieces of a request are joined.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    pub events: Vec<Decoded>,
    pub error: Option<HttpError>,
}

fn push(events: &mut Vec<Decoded>, e: Decoded) {
    if let (Some(Decoded::Content(prev)), Decoded::Content(next)) = (events.last_mut(), &e) {
        if prev.request_id == next.request_id && !prev.last {
            let mut joined = BytesMut::from(&prev.data[..]);
            joined.extend_from_slice(&next.data);
            prev.data = joined.freeze();
            prev.last = next.last;
            prev.trailers = next.trailers.clone();
            return;
        }
    }
    events.push(e);
}

/// Decodes `reads` one after the other, as the handler feeds its decoder.
pub fn run(cfg: &HttpServerConfig, reads: &[&[u8]]) -> Outcome {
    let bound = cfg
        .max_head_size
        .max(cfg.aggregate_limit)
        .max(MAX_CHUNK_LINE + 2);
    let mut decoder = RequestDecoder::new(cfg.clone());
    let mut cumulation = BytesMut::new();
    let mut events = Vec::new();
    let mut out = Vec::new();
    for read in reads {
        let mut result = if cumulation.is_empty() {
            let mut input = Bytes::copy_from_slice(read);
            let r = decoder.decode(&mut input, &mut out);
            cumulation.extend_from_slice(&input);
            r
        } else {
            cumulation.extend_from_slice(read);
            decoder.decode(&mut cumulation, &mut out)
        };
        // After an upgrade request the codec stops reading until the application answers;
        // the model answers at once and declines, so HTTP goes on with the bytes held.
        while result.is_ok() && decoder.awaits_upgrade() {
            decoder.decline_upgrade();
            result = decoder.decode(&mut cumulation, &mut out);
        }
        assert!(
            cumulation.len() <= bound,
            "{} bytes stay buffered (bound {bound})",
            cumulation.len()
        );
        for e in out.drain(..) {
            check_sizes(cfg, &e);
            push(&mut events, e);
        }
        if let Err(error) = result {
            assert!(decoder.is_finished());
            return Outcome {
                events,
                error: Some(error),
            };
        }
    }
    Outcome {
        events,
        error: None,
    }
}

fn check_sizes(cfg: &HttpServerConfig, e: &Decoded) {
    match e {
        Decoded::Request(r) => {
            assert!(
                r.body.len() <= cfg.aggregate_limit,
                "aggregated past the limit"
            );
            assert!(r.target.len() <= cfg.max_uri_length);
            assert!(r.headers.len() <= cfg.max_header_count);
        }
        Decoded::Content(c) => assert!(c.data.len() as u64 <= cfg.max_body_size),
        Decoded::Start(_) => {}
    }
}

/// The fuzz check of one input (see the module docs).
pub fn check(data: &[u8]) {
    let [selector, k, rest @ ..] = data else {
        return;
    };
    let k = usize::from(*k % 8).min(rest.len());
    let (cuts, stream) = rest.split_at(k);
    let cfg = config(*selector);
    let one_shot = run(&cfg, &[stream]);
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|&c| usize::from(c) * stream.len() / 256)
        .collect();
    points.sort_unstable();
    let mut reads = Vec::new();
    let mut from = 0;
    for p in points {
        reads.push(&stream[from..p]);
        from = p;
    }
    reads.push(&stream[from..]);
    let split = run(&cfg, &reads);
    assert_eq!(one_shot, split, "cut at {cuts:?}");
}
