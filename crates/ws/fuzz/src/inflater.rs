//! The inflater's fuzz checks (permessage-deflate's decompress path), shared by the
//! cargo-fuzz target `inflater` and a stable test (crates/ws/tests/inflater_cases.rs
//! includes this file).
//!
//! An input is: a selector byte (the inflated-size limit, context takeover, and whether the
//! rest is raw compressed data or plain data to compress first — then repeated up to 256
//! times, a bomb, with one byte possibly flipped), a byte `k` (`k % 8` frame boundaries),
//! `k` bytes placing them, then the data. [`check`] feeds the message's frames through
//! [`Decompression`] twice (two messages, the window kept or not) and asserts:
//! - no panic;
//! - an inflated message is never longer than the limit, and the limit is refused
//!   (`MessageTooLarge`) only when the data inflates past it; data compressed here and not
//!   spoiled comes back exactly (or is refused as too large);
//! - the memory taken while inflating (when [`Counting`] is the global allocator) stays
//!   under the limit plus the decompressor's state and the input: never the bomb's size.

use netloop_ws::bytes::Bytes;
use netloop_ws::deflate::{Decompression, Deflater};
use netloop_ws::extension::Direction;
use netloop_ws::frame::{Frame, Opcode};
use netloop_ws::WsError;

// The counting allocator (one copy for every memory-bound test of the crate).
#[path = "../../tests/support/counting_alloc.rs"]
mod counting_alloc;
// Used by the fuzz target and inflater_cases.rs, not by every includer.
#[allow(unused_imports)]
pub use counting_alloc::Counting;
use counting_alloc::{installed, peak_during};

/// The decompressor's state and slack allowed above the limit (measured: 46 KiB of state).
pub const STATE_ALLOWANCE: usize = 96 << 10;

/// What an input's selector byte chooses.
#[derive(Debug, Clone, Copy)]
pub struct Setup {
    /// The inflated-size limit of a message.
    pub limit: usize,
    /// The peer resets its window after each message.
    pub no_context_takeover: bool,
    /// The data is compressed here first (else it is fed as compressed data).
    pub compress_first: bool,
}

/// The setup of a selector byte.
pub fn setup(selector: u8) -> Setup {
    Setup {
        limit: [0, 1, 100, 4096, 65_536, 1 << 20, 70_000, 16][usize::from(selector & 7)],
        no_context_takeover: selector & 8 != 0,
        compress_first: selector & 16 != 0,
    }
}

/// Inflates one message cut into frames; the inflated bytes or the error.
fn message(d: &mut Decompression, frames: &[&[u8]], limit: usize) -> Result<Vec<u8>, WsError> {
    let mut out = Vec::new();
    for (i, payload) in frames.iter().enumerate() {
        let frame = Frame {
            fin: i + 1 == frames.len(),
            rsv1: i == 0,
            opcode: if i == 0 {
                Opcode::Binary
            } else {
                Opcode::Continuation
            },
            payload: Bytes::copy_from_slice(payload),
        };
        let (inflated, peak) = peak_during(|| d.frame(frame, i > 0));
        let inflated = inflated?;
        if installed() {
            assert!(
                peak <= limit + STATE_ALLOWANCE + 2 * payload.len(),
                "inflating a {}-byte frame took {peak} bytes (limit {limit})",
                payload.len()
            );
        }
        out.extend_from_slice(&inflated.payload);
        assert!(
            out.len() <= limit,
            "{} bytes inflated over the {limit}-byte limit",
            out.len()
        );
    }
    Ok(out)
}

/// The fuzz check of one input (see the module docs).
pub fn check(data: &[u8]) {
    let [selector, k, rest @ ..] = data else {
        return;
    };
    let setup = setup(*selector);
    let k = usize::from(*k % 8).min(rest.len());
    let (cuts, body) = rest.split_at(k);
    let direction = Direction {
        no_context_takeover: setup.no_context_takeover,
        window_bits: 15,
    };
    // Compressed here: the body repeated (a bomb for a small limit), one byte maybe flipped.
    let (plain, mut stream) = if setup.compress_first && !body.is_empty() {
        let times = usize::from(body[0]) + 1;
        let plain = body[1..].repeat(times);
        let stream = Deflater::new(direction, 6)
            .compress(&plain)
            .expect("compresses");
        (Some(plain), stream)
    } else {
        (None, body.to_vec())
    };
    let mut spoiled = false;
    if let (Some(&c), true) = (cuts.first(), setup.compress_first && !stream.is_empty()) {
        if c & 1 == 1 {
            let at = usize::from(c) * stream.len() / 256;
            stream[at] ^= 1 << (c % 8);
            spoiled = true;
        }
    }
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|&c| usize::from(c) * stream.len() / 256)
        .collect();
    points.sort_unstable();
    let mut frames = Vec::new();
    let mut at = 0;
    for p in points {
        frames.push(&stream[at..p]);
        at = p;
    }
    frames.push(&stream[at..]);

    let mut d = Decompression::new(direction, setup.limit);
    for round in 0..2 {
        let result = message(&mut d, &frames, setup.limit);
        match (&plain, spoiled, &result) {
            (Some(plain), false, Ok(out)) => assert_eq!(out, plain, "round {round}"),
            (Some(plain), false, Err(WsError::MessageTooLarge { .. })) => {
                assert!(
                    plain.len() > setup.limit,
                    "refused at {} bytes",
                    plain.len()
                );
            }
            (Some(_), false, Err(e)) => panic!("data compressed here failed: {e:?}"),
            (_, _, Err(WsError::MessageTooLarge { .. } | WsError::InvalidCompressedData)) => {}
            (_, _, Err(e)) => panic!("unexpected error {e:?}"),
            (_, _, Ok(_)) => {}
        }
        if result.is_err() {
            return; // an error is final for the connection
        }
        if plain.is_some() && !setup.no_context_takeover {
            return; // the same stream again would refer to a window the peer never had
        }
    }
}
