//! What the request and the response decoders' fuzz checks share (`lib.rs` and `response.rs`
//! each include this file): feeding reads through a cumulation as the codecs do, joining the
//! pieces of a streamed body, the bound on what stays buffered, and the comparison of one read
//! with the same bytes cut into several.

use std::fmt::Debug;

use netloop_http::bytes::{Bytes, BytesMut};
use netloop_http::{
    DecodedResponse, HttpContent, HttpError, Input, RequestDecoder, ResponseDecoder, MAX_CHUNK_LINE,
};

/// A decoder the checks drive.
pub trait Decoder {
    /// One result of decoding.
    type Event;
    /// Decodes what `input` holds (see the decoders' `decode`).
    fn decode(
        &mut self,
        input: &mut impl Input,
        out: &mut Vec<Self::Event>,
    ) -> Result<(), HttpError>;
}

impl Decoder for RequestDecoder {
    type Event = netloop_http::Decoded;
    fn decode(
        &mut self,
        input: &mut impl Input,
        out: &mut Vec<Self::Event>,
    ) -> Result<(), HttpError> {
        RequestDecoder::decode(self, input, out)
    }
}

impl Decoder for ResponseDecoder {
    type Event = DecodedResponse;
    fn decode(
        &mut self,
        input: &mut impl Input,
        out: &mut Vec<Self::Event>,
    ) -> Result<(), HttpError> {
        ResponseDecoder::decode(self, input, out)
    }
}

/// Decodes `read` after what `cumulation` holds, as the codecs do: straight from the read
/// when nothing is buffered (what is left is kept), else appended to the buffer first.
pub fn feed<D: Decoder>(
    decoder: &mut D,
    cumulation: &mut BytesMut,
    read: &[u8],
    out: &mut Vec<D::Event>,
) -> Result<(), HttpError> {
    if cumulation.is_empty() {
        let mut input = Bytes::copy_from_slice(read);
        let r = decoder.decode(&mut input, out);
        cumulation.extend_from_slice(&input);
        r
    } else {
        cumulation.extend_from_slice(read);
        decoder.decode(cumulation, out)
    }
}

/// The most bytes that may stay buffered between reads: a head, an aggregated body, or a
/// chunk-size line with its CRLF.
pub fn buffer_bound(max_head_size: usize, aggregate_limit: usize) -> usize {
    max_head_size.max(aggregate_limit).max(MAX_CHUNK_LINE + 2)
}

/// Pushes `e` to `events`, joined to the last one when both are pieces (`piece` finds them)
/// of the same body and the last one is not its end.
pub fn push<E>(events: &mut Vec<E>, mut e: E, piece: fn(&mut E) -> Option<&mut HttpContent>) {
    if let (Some(prev), Some(next)) = (events.last_mut().and_then(piece), piece(&mut e)) {
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

/// Runs `run` on `stream` as one read and again cut where `cuts` says (each byte places one
/// boundary, in proportion to the stream's length), and asserts both runs yield the same.
pub fn check_split<O: PartialEq + Debug>(cuts: &[u8], stream: &[u8], run: impl Fn(&[&[u8]]) -> O) {
    let one_shot = run(&[stream]);
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
    let split = run(&reads);
    assert_eq!(one_shot, split, "cut at {cuts:?}");
}
