//! The response decoder's fuzz checks, shared by the cargo-fuzz target
//! (fuzz_targets/response_decoder.rs) and a stable test (crates/http/tests/it/client_split.rs
//! includes this file).
//!
//! An input is: one byte choosing the limits, one byte `m` choosing how many requests were
//! sent (`m % 8`, at least one), `m % 8` bytes choosing what each asked (`HEAD`, `CONNECT`,
//! `Upgrade`, or a plain GET), one byte `k` (the number of read boundaries, `k % 8`), `k`
//! bytes placing them, then the byte stream. [`check`] decodes the stream in one read and
//! again cut at those boundaries (through a cumulation, as the codec does), then ends the
//! input, and asserts:
//! - no panic;
//! - the same responses, pieces of body (joined per response), bytes after a protocol switch
//!   and final error either way;
//! - what stays buffered between reads is bounded by the limits (no unbounded growth);
//! - aggregated bodies stay within the aggregation limit, streamed ones within the body limit.

use netloop_http::bytes::BytesMut;
use netloop_http::{
    DecodedResponse, HttpClientConfig, HttpContent, HttpError, ResponseDecoder, SentRequest,
};

#[path = "support.rs"]
mod support;
use support::{buffer_bound, check_split, feed, push};

/// The limits an input's first byte selects (small, so the fuzzer reaches them).
pub fn config(selector: u8) -> HttpClientConfig {
    HttpClientConfig {
        max_head_size: [256, 1024][usize::from(selector >> 2 & 1)],
        max_header_count: [4, 40][usize::from(selector >> 3 & 1)],
        max_body_size: [100, 100_000, u64::MAX, u64::MAX][usize::from(selector >> 4 & 3)],
        aggregate_limit: [0, 8, 64, 1 << 16][usize::from(selector & 3)],
        host: None,
    }
}

/// The request a selector byte stands for.
pub fn request(id: u64, kind: u8) -> SentRequest {
    SentRequest {
        id,
        head: kind % 4 == 1,
        connect: kind % 4 == 2,
        upgrade: kind % 4 == 3,
    }
}

/// What one decoding run yields, normalized: consecutive body pieces of a response are
/// joined.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Responses and (joined) body pieces.
    pub events: Vec<DecodedResponse>,
    /// Bytes after a protocol switch.
    pub raw: Vec<u8>,
    /// The error that stopped decoding.
    pub error: Option<HttpError>,
}

fn piece(e: &mut DecodedResponse) -> Option<&mut HttpContent> {
    match e {
        DecodedResponse::Content(c) => Some(c),
        DecodedResponse::Response(_) => None,
    }
}

fn check_sizes(cfg: &HttpClientConfig, e: &DecodedResponse) {
    match e {
        DecodedResponse::Response(r) => {
            assert!(
                r.body.len() <= cfg.aggregate_limit,
                "aggregated past the limit"
            );
            assert!(r.headers.len() <= cfg.max_header_count);
            assert!(
                !r.streaming || r.body.is_empty(),
                "a streamed response has no body"
            );
        }
        DecodedResponse::Content(c) => assert!(c.data.len() as u64 <= cfg.max_body_size),
    }
}

/// Decodes `reads` one after the other, as the codec feeds its decoder, then ends the input.
pub fn run(cfg: &HttpClientConfig, sent: &[SentRequest], reads: &[&[u8]]) -> Outcome {
    let bound = buffer_bound(cfg.max_head_size, cfg.aggregate_limit);
    let mut decoder = ResponseDecoder::new(cfg.clone());
    for &req in sent {
        decoder.push_request(req);
    }
    let mut cumulation = BytesMut::new();
    let mut events = Vec::new();
    let mut raw = Vec::new();
    let mut out = Vec::new();
    let mut error = None;
    for read in reads {
        if decoder.is_switched() {
            raw.extend_from_slice(read);
            continue;
        }
        let result = feed(&mut decoder, &mut cumulation, read, &mut out);
        for e in out.drain(..) {
            check_sizes(cfg, &e);
            push(&mut events, e, piece);
        }
        if decoder.is_switched() {
            raw.extend_from_slice(&cumulation.split());
            continue;
        }
        assert!(
            cumulation.len() <= bound,
            "{} bytes stay buffered (bound {bound})",
            cumulation.len()
        );
        if let Err(e) = result {
            assert!(decoder.is_failed());
            assert!(cumulation.is_empty(), "a failed decoder drops its input");
            error = Some(e);
            break;
        }
    }
    if error.is_none() {
        let r = decoder.finish(&mut cumulation, &mut out);
        for e in out.drain(..) {
            check_sizes(cfg, &e);
            push(&mut events, e, piece);
        }
        error = r.err();
    }
    Outcome { events, raw, error }
}

/// The fuzz check of one input (see the module docs).
pub fn check(data: &[u8]) {
    let [selector, m, rest @ ..] = data else {
        return;
    };
    let m = usize::from(*m % 8).max(1).min(rest.len());
    let (kinds, rest) = rest.split_at(m);
    let sent: Vec<SentRequest> = kinds
        .iter()
        .enumerate()
        .map(|(i, &k)| request(i as u64, k))
        .collect();
    let [k, rest @ ..] = rest else {
        return;
    };
    let k = usize::from(*k % 8).min(rest.len());
    let (cuts, stream) = rest.split_at(k);
    let cfg = config(*selector);
    check_split(cuts, stream, |reads| run(&cfg, &sent, reads));
}
