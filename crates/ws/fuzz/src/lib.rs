//! The frame decoder's fuzz checks, shared by the cargo-fuzz target and a stable test
//! (crates/ws/tests/it/fuzz_cases.rs includes this file).
//!
//! An input is: one byte choosing the role and limits, one byte `k` (the number of read
//! boundaries, `k % 8`), `k` bytes placing them, then the byte stream. [`check`] decodes the
//! stream (`FrameDecoder` then `MessageAssembler`) in one read and again cut at those
//! boundaries, through a cumulation as the handler does, and asserts:
//! - no panic (cargo-fuzz builds with overflow checks);
//! - the same messages and the same final error either way;
//! - what stays buffered between reads is at most one frame's header and payload
//!   (`14 + max_frame_size`): a refused length is never buffered;
//! - every frame decoded re-encodes (with the mask key it came with) to exactly the bytes it
//!   took: lengths are minimal, nothing is skipped or invented;
//! - messages stay within `max_message_size`, control payloads within 125 bytes, and text
//!   (a whole message, or the fragments of one joined) is UTF-8.

#[path = "inflater.rs"]
pub mod inflater;

use netloop_ws::bytes::BytesMut;
use netloop_ws::frame::{encode_frame, Opcode, MAX_HEADER_LEN};
use netloop_ws::{FrameDecoder, MessageAssembler, Role, WebSocketFrame, WsError};

/// The decoder's settings an input's first byte selects (small, so the fuzzer reaches them).
#[derive(Debug, Clone, Copy)]
pub struct Setup {
    /// The side that decodes.
    pub role: Role,
    /// Whole messages or fragments.
    pub aggregate: bool,
    /// `max_frame_size`.
    pub max_frame: usize,
    /// `max_message_size`.
    pub max_message: usize,
}

/// The setup of a selector byte.
pub fn setup(selector: u8) -> Setup {
    let max_frame = [125, 300, 70_000, 1 << 20][usize::from(selector >> 2 & 3)];
    Setup {
        role: if selector & 1 == 0 {
            Role::Server
        } else {
            Role::Client
        },
        aggregate: selector & 2 == 0,
        max_frame,
        max_message: max_frame * [1, 4][usize::from(selector >> 4 & 1)],
    }
}

/// What one decoding run yields.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Messages and control frames, in order.
    pub events: Vec<WebSocketFrame>,
    /// The error that ended the run, if any.
    pub error: Option<WsError>,
}

/// Decodes `reads` one after the other.
pub fn run(setup: Setup, reads: &[&[u8]]) -> Outcome {
    let mut decoder = FrameDecoder::new(setup.role, setup.max_frame);
    let mut assembler = MessageAssembler::new(setup.aggregate, setup.max_message);
    let mut buf = BytesMut::new();
    let mut events = Vec::new();
    for read in reads {
        buf.extend_from_slice(read);
        loop {
            let before = buf.clone();
            let frame = match decoder.decode(&mut buf) {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(error) => {
                    return Outcome {
                        events,
                        error: Some(error),
                    }
                }
            };
            check_round_trip(&before[..before.len() - buf.len()], &frame);
            match assembler.push(frame) {
                Ok(Some(event)) => events.push(event),
                Ok(None) => {}
                Err(error) => {
                    return Outcome {
                        events,
                        error: Some(error),
                    }
                }
            }
        }
        assert!(
            buf.len() <= MAX_HEADER_LEN + setup.max_frame,
            "{} bytes stay buffered (max frame {})",
            buf.len(),
            setup.max_frame
        );
    }
    Outcome {
        events,
        error: None,
    }
}

/// The frame re-encoded with its own mask key is exactly the bytes it took.
fn check_round_trip(consumed: &[u8], frame: &netloop_ws::Frame) {
    let masked = consumed[1] & 0x80 != 0;
    let header_len = consumed.len() - frame.payload.len();
    let key = masked.then(|| {
        let k = &consumed[header_len - 4..header_len];
        [k[0], k[1], k[2], k[3]]
    });
    let mut again = BytesMut::new();
    encode_frame(&mut again, frame.fin, frame.opcode, &frame.payload, key);
    assert_eq!(&again[..], consumed, "re-encoding {frame:?}");
    if frame.opcode.is_control() {
        assert!(frame.fin && frame.payload.len() <= 125);
    }
    assert_ne!(frame.opcode.as_u8() & 0x70, 0x70);
    let _ = Opcode::from_u8(frame.opcode.as_u8()).expect("a known opcode");
}

/// Sizes and UTF-8 of what came out.
fn check_events(setup: Setup, outcome: &Outcome) {
    let mut text: Option<Vec<u8>> = None;
    let mut size = 0usize;
    for event in &outcome.events {
        match event {
            WebSocketFrame::Text(data) => {
                assert!(data.len() <= setup.max_message);
                assert!(std::str::from_utf8(data).is_ok(), "text is UTF-8");
            }
            WebSocketFrame::Binary(data) => assert!(data.len() <= setup.max_message),
            WebSocketFrame::Fragment(f) => {
                if f.first {
                    size = 0;
                    text = f.text.then(Vec::new);
                }
                size += f.data.len();
                assert!(size <= setup.max_message);
                if let Some(t) = &mut text {
                    t.extend_from_slice(&f.data);
                    if f.last {
                        assert!(std::str::from_utf8(t).is_ok(), "fragments join into UTF-8");
                    }
                }
            }
            WebSocketFrame::Ping(p) | WebSocketFrame::Pong(p) => assert!(p.len() <= 125),
            WebSocketFrame::Close(c) => {
                assert!(c.code.map_or(true, |code| code.is_sendable()));
                assert!(std::str::from_utf8(&c.reason).is_ok());
            }
        }
    }
}

/// The fuzz check of one input (see the module docs).
pub fn check(data: &[u8]) {
    let [selector, k, rest @ ..] = data else {
        return;
    };
    let k = usize::from(*k % 8).min(rest.len());
    let (cuts, stream) = rest.split_at(k);
    let setup = setup(*selector);
    let whole = run(setup, &[stream]);
    check_events(setup, &whole);
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|&c| usize::from(c) * stream.len() / 256)
        .collect();
    points.sort_unstable();
    let mut reads = Vec::new();
    let mut at = 0;
    for p in points {
        reads.push(&stream[at..p]);
        at = p;
    }
    reads.push(&stream[at..]);
    let cut = run(setup, &reads);
    assert_eq!(
        whole,
        cut,
        "the same however the stream is cut ({:?})",
        reads.iter().map(|r| r.len()).collect::<Vec<_>>()
    );
}
