//! Test helpers shared by the decoder modules: drive a decoder through a [`Cumulator`] with
//! chosen read boundaries and compare what comes out. Compiled for tests only.

use crate::cumulator::Cumulator;
use crate::decoder::FrameDecoder;
use crate::error::CodecError;

/// One item out of a decode pass, owned for easy comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ev {
    Frame(Vec<u8>),
    Error(CodecError),
}

pub(crate) fn frame(bytes: &[u8]) -> Ev {
    Ev::Frame(bytes.to_vec())
}

pub(crate) fn too_long(length: u64, max: usize, complete: bool) -> Ev {
    Ev::Error(CodecError::TooLongFrame {
        length,
        max,
        complete,
    })
}

pub(crate) fn is_corrupted(ev: &Ev) -> bool {
    matches!(ev, Ev::Error(CodecError::CorruptedFrame { .. }))
}

/// Feeds each chunk as one read; returns everything decoded, in order.
pub(crate) fn decode_chunks<D: FrameDecoder>(decoder: D, chunks: &[&[u8]]) -> Vec<Ev> {
    let mut cumulator = Cumulator::new(decoder);
    let mut events = Vec::new();
    for chunk in chunks {
        let mut out = Vec::new();
        cumulator.feed(chunk, &mut out);
        events.extend(out.into_iter().map(owned));
    }
    events
}

/// Feeds `input` one byte per read.
pub(crate) fn decode_bytewise<D: FrameDecoder>(decoder: D, input: &[u8]) -> Vec<Ev> {
    let chunks: Vec<&[u8]> = input.chunks(1).collect();
    decode_chunks(decoder, &chunks)
}

/// Feeds `input` split at pseudo-random points chosen by `seed`.
pub(crate) fn decode_random_splits<D: FrameDecoder>(
    decoder: D,
    input: &[u8],
    seed: u64,
) -> Vec<Ev> {
    let mut rng = XorShift::new(seed);
    let mut chunks = Vec::new();
    let mut rest = input;
    while !rest.is_empty() {
        let take = 1 + rng.below(rest.len().min(64));
        let (head, tail) = rest.split_at(take);
        chunks.push(head);
        rest = tail;
    }
    decode_chunks(decoder, &chunks)
}

fn owned(result: Result<bytes::Bytes, CodecError>) -> Ev {
    match result {
        Ok(bytes) => Ev::Frame(bytes.to_vec()),
        Err(error) => Ev::Error(error),
    }
}

/// Tiny deterministic PRNG (xorshift64*), so property-style tests need no extra crates.
pub(crate) struct XorShift(u64);

impl XorShift {
    pub(crate) fn new(seed: u64) -> Self {
        XorShift(seed | 1)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish value in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}
