//! The fuzz target's checks on stable (crates/ws/fuzz/src/lib.rs): generated streams of
//! plausible frames (good and bad: reserved bits and opcodes, wrong masks, long control
//! frames, non-minimal lengths, fragments in and out of order, text cut inside characters,
//! invalid UTF-8, frames over the limits, a byte flipped), each cut at several places, decode
//! the same as in one read with bounded buffering; then every committed seed.

use crate::fuzz;

use netloop_ws::bytes::BytesMut;
use netloop_ws::frame::{apply_mask, encode_frame, Opcode};

use crate::stable_fuzz;
use stable_fuzz::{replay_seeds, XorShift};

fn payload(rng: &mut XorShift) -> Vec<u8> {
    let len = [0, 1, 5, 40, 125, 126, 127, 300, 65_535, 65_536, 70_001][rng.below(11) as usize];
    let len = if rng.below(3) > 0 { len.min(125) } else { len };
    match rng.below(8) {
        0 => vec![0xff; len],
        1..=3 => "κόσμε€𝄞a".bytes().cycle().take(len).collect(),
        _ => (0..len).map(|i| b'a' + (i % 26) as u8).collect(),
    }
}

/// One frame, sometimes spoiled (a reserved bit, the mask bit, one bit anywhere).
fn frame(rng: &mut XorShift, masked: bool, fin: bool, opcode: u8, data: &[u8], out: &mut BytesMut) {
    let key = [rng.next() as u8, 7, 42, 99];
    let start = out.len();
    match Opcode::from_u8(opcode) {
        Some(op) => encode_frame(out, fin, op, data, masked.then_some(key)),
        None => {
            out.extend_from_slice(&[0x80 | opcode, if masked { 0x80 } else { 0 } | 3]);
            if masked {
                out.extend_from_slice(&key);
            }
            let mut body = b"abc".to_vec();
            apply_mask(&mut body, key, 0);
            out.extend_from_slice(&body);
        }
    }
    match rng.below(40) {
        0 => out[start] |= 0x40,
        1 => out[start + 1] ^= 0x80,
        2 if out.len() > start + 4 => {
            let i = start + rng.below((out.len() - start) as u64) as usize;
            out[i] ^= 1 << rng.below(8);
        }
        _ => {}
    }
}

fn control(rng: &mut XorShift, masked: bool, out: &mut BytesMut) {
    let opcode = [9u8, 10, 8, 3, 11][rng.below(5) as usize];
    let mut data = payload(rng);
    if opcode == 8 && rng.below(2) == 0 {
        let code = [1000u16, 1001, 1005, 1007, 3000, 4999, 999][rng.below(7) as usize];
        data = code
            .to_be_bytes()
            .iter()
            .chain(b"bye".iter())
            .copied()
            .collect();
    }
    if rng.below(4) > 0 {
        data.truncate(125);
    }
    let fin = rng.below(10) > 0;
    frame(rng, masked, fin, opcode, &data, out);
}

/// A message (whole, or in fragments with control frames between them), sometimes out of
/// order.
fn message(rng: &mut XorShift, masked: bool, out: &mut BytesMut) {
    let first = if rng.below(2) == 0 { 1 } else { 2 };
    let parts = 1 + rng.below(4);
    let data = payload(rng);
    let size = data.len().div_ceil(parts as usize).max(1);
    let chunks: Vec<&[u8]> = if data.is_empty() {
        vec![&[][..]]
    } else {
        data.chunks(size).collect()
    };
    for (i, chunk) in chunks.iter().enumerate() {
        let opcode = if i == 0 || rng.below(30) == 0 {
            first
        } else {
            0
        };
        let fin = i + 1 == chunks.len() || rng.below(30) == 0;
        frame(rng, masked, fin, opcode, chunk, out);
        if rng.below(4) == 0 {
            control(rng, masked, out);
        }
    }
}

fn stream(rng: &mut XorShift, masked: bool) -> Vec<u8> {
    let mut out = BytesMut::new();
    for _ in 0..=rng.below(5) {
        if rng.below(5) == 0 {
            control(rng, masked, &mut out);
        } else {
            message(rng, masked, &mut out);
        }
    }
    if rng.below(6) == 0 {
        let cut = rng.below(out.len() as u64 + 1) as usize;
        out.truncate(cut);
    }
    out.to_vec()
}

#[test]
fn generated_frame_streams_decode_the_same_however_they_are_cut() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let (mut errors, mut messages) = (0, 0);
    let mut kinds = std::collections::BTreeSet::new();
    for case in 0..600 {
        let selector = rng.next() as u8;
        let masked = fuzz::setup(selector).role == netloop_ws::Role::Server;
        // Mostly the right masking for the side, so frames get past the mask rule.
        let masked = if rng.below(10) == 0 { !masked } else { masked };
        let body = stream(&mut rng, masked);
        let mut input = vec![selector, 7];
        input.extend((0..7).map(|_| rng.next() as u8));
        input.extend_from_slice(&body);
        let outcome = std::panic::catch_unwind(|| fuzz::check(&input));
        assert!(
            outcome.is_ok(),
            "case {case} failed; input {:?}",
            &input[..input.len().min(64)]
        );
        let whole = fuzz::run(fuzz::setup(selector), &[&body]);
        errors += usize::from(whole.error.is_some());
        kinds.extend(whole.error.map(|e| e.code()));
        messages += whole.events.len();
    }
    assert!(
        errors > 100 && messages > 300,
        "the cases reach both outcomes ({errors} errors, {messages} messages)"
    );
    assert!(kinds.len() >= 10, "the cases reach most errors: {kinds:?}");
}

#[test]
fn committed_seeds_pass_the_checks() {
    replay_seeds("frame_decoder", fuzz::check);
}
