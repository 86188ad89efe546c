//! The response decoder's fuzz checks, shared by the cargo-fuzz target
//! (fuzz_targets/response_decoder.rs) and a stable test (crates/http/tests/client_split.rs
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

use netloop_http::bytes::{Bytes, BytesMut};
use netloop_http::{
    DecodedResponse, HttpClientConfig, HttpError, ResponseDecoder, SentRequest, MAX_CHUNK_LINE,
};

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

fn push(events: &mut Vec<DecodedResponse>, e: DecodedResponse) {
    if let (Some(DecodedResponse::Content(prev)), DecodedResponse::Content(next)) =
        (events.last_mut(), &e)
    {
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
    let bound = cfg
        .max_head_size
        .max(cfg.aggregate_limit)
        .max(MAX_CHUNK_LINE + 2);
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
        let result = if cumulation.is_empty() {
            let mut input = Bytes::copy_from_slice(read);
            let r = decoder.decode(&mut input, &mut out);
            cumulation.extend_from_slice(&input);
            r
        } else {
            cumulation.extend_from_slice(read);
            decoder.decode(&mut cumulation, &mut out)
        };
        for e in out.drain(..) {
            check_sizes(cfg, &e);
            push(&mut events, e);
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
            push(&mut events, e);
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
    let one_shot = run(&cfg, &sent, &[stream]);
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
    let split = run(&cfg, &sent, &reads);
    assert_eq!(one_shot, split, "cut at {cuts:?}");
}
