//! The request decoder's fuzz checks, shared by the cargo-fuzz target and a stable test
//! (crates/http/tests/it/split_invariance.rs includes this file).
//!
//! An input is: one byte choosing the limits, one byte `k` (the number of read boundaries,
//! `k % 8`), `k` bytes placing them, then the byte stream. [`check`] decodes the stream in one
//! read and again cut at those boundaries (through a cumulation, as the handler does), and
//! asserts:
//! - no panic;
//! - the same requests, pieces of body (joined per request) and final error either way;
//! - what stays buffered between reads is bounded by the limits (no unbounded growth);
//! - aggregated bodies stay within the aggregation limit, streamed ones within the body limit.

use netloop_http::bytes::BytesMut;
use netloop_http::{Decoded, HttpContent, HttpError, HttpServerConfig, RequestDecoder};

#[path = "support.rs"]
mod support;
use support::{buffer_bound, check_split, feed, push};

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

fn piece(e: &mut Decoded) -> Option<&mut HttpContent> {
    match e {
        Decoded::Content(c) => Some(c),
        Decoded::Start(_) | Decoded::Request(_) => None,
    }
}

/// Decodes `reads` one after the other, as the handler feeds its decoder.
pub fn run(cfg: &HttpServerConfig, reads: &[&[u8]]) -> Outcome {
    let bound = buffer_bound(cfg.max_head_size, cfg.aggregate_limit);
    let mut decoder = RequestDecoder::new(cfg.clone());
    let mut cumulation = BytesMut::new();
    let mut events = Vec::new();
    let mut out = Vec::new();
    for read in reads {
        let mut result = feed(&mut decoder, &mut cumulation, read, &mut out);
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
            push(&mut events, e, piece);
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
    check_split(cuts, stream, |reads| run(&cfg, reads));
}
