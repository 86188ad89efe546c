//! The split check, shared by `tests/it/seeded_splits.rs` and the cargo-fuzz target
//! (`fuzz/fuzz_targets/split_decode.rs` includes this file by path): decoding an input in
//! one read and in pieces cut at pseudo-random points must give the same values and the same
//! error, never a panic; and every decoded value must encode to bytes that decode back to it.
//! Decoding with `decode_command` tried first (the handler's `command_frames`) must give the
//! same values and error too, commands made into values with `RespCommand::to_value`.

#![allow(dead_code)]

use netloop_resp::bytes::BytesMut;
use netloop_resp::{RespConfig, RespDecoder, RespValue};

/// How values are taken from the decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `decode` only.
    Values,
    /// `decode_command` first, `decode` when it declines.
    CommandFrames,
}

/// A small deterministic generator (xorshift64*), so failures replay from their seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// What decoding a whole input gave: the values in order, then the error's code if any.
#[derive(Debug)]
pub struct Outcome {
    pub values: Vec<RespValue>,
    pub error: Option<&'static str>,
    /// How many values `decode_command` gave (not compared).
    pub command_frames: usize,
}

impl PartialEq for Outcome {
    fn eq(&self, other: &Outcome) -> bool {
        self.values == other.values && self.error == other.error
    }
}

/// One of a few configurations, picked by a selector byte: defaults, tight limits, RESP2
/// only, no inline commands.
pub fn config_for(selector: u8) -> RespConfig {
    let mut config = RespConfig::default();
    if selector & 1 != 0 {
        config.max_bulk_length = 16;
        config.max_array_length = 4;
        config.max_nesting_depth = 2;
        config.max_inline_length = 32;
    }
    config.resp3 = selector & 2 == 0;
    config.inline_commands = selector & 4 == 0;
    config
}

/// Decodes `input` fed in pieces whose lengths `pieces` yields (the rest in one piece when
/// it runs out).
pub fn decode_in_pieces(
    config: &RespConfig,
    input: &[u8],
    pieces: &mut dyn Iterator<Item = usize>,
) -> Outcome {
    decode_with(Mode::Values, config, input, pieces)
}

/// `decode_in_pieces`, taking values as `mode` says.
pub fn decode_with(
    mode: Mode,
    config: &RespConfig,
    input: &[u8],
    pieces: &mut dyn Iterator<Item = usize>,
) -> Outcome {
    let mut decoder = RespDecoder::new(config.clone()).expect("valid config");
    let mut buf = BytesMut::new();
    let mut values = Vec::new();
    let mut error = None;
    let mut values_at_error = None;
    let mut command_frames = 0;
    let mut rest = input;
    while !rest.is_empty() {
        let n = pieces.next().unwrap_or(rest.len()).clamp(1, rest.len());
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        let result = match mode {
            Mode::Values => decoder.decode_into(&mut buf, &mut values),
            Mode::CommandFrames => loop {
                if let Some(command) = decoder.decode_command(&mut buf) {
                    assert_eq!(command.args().count(), command.len());
                    values.push(command.to_value());
                    command_frames += 1;
                    continue;
                }
                match decoder.decode(&mut buf) {
                    Ok(Some(value)) => values.push(value),
                    Ok(None) => break Ok(()),
                    Err(e) => break Err(e),
                }
            },
        };
        if let Err(e) = result {
            assert!(error.is_none(), "a second error after {error:?}: {e}");
            error = Some(e.code());
            values_at_error = Some(values.len());
        }
        if let Some(count) = values_at_error {
            assert!(decoder.is_failed());
            assert!(buf.is_empty(), "a failed decoder keeps no input");
            assert_eq!(values.len(), count, "no value after the error");
        }
    }
    Outcome {
        values,
        error,
        command_frames,
    }
}

/// Runs the check on one input; panics on any difference.
pub fn check(config: &RespConfig, input: &[u8], seed: u64) {
    let whole = decode_in_pieces(config, input, &mut std::iter::empty());
    let mut rng = Rng::new(seed);
    let max_piece = 1 + rng.below(24);
    let mut random = std::iter::from_fn(move || Some(1 + rng.below(max_piece)));
    let pieces = decode_in_pieces(config, input, &mut random);
    assert_eq!(whole, pieces, "one read vs pieces (seed {seed})");
    let bytewise = decode_in_pieces(config, input, &mut std::iter::repeat(1));
    assert_eq!(whole, bytewise, "one read vs byte by byte");
    let frames = decode_with(Mode::CommandFrames, config, input, &mut std::iter::empty());
    assert_eq!(whole, frames, "values vs command frames, one read");
    let mut rng = Rng::new(seed ^ 0xf4a3);
    let mut random = std::iter::from_fn(move || Some(1 + rng.below(max_piece)));
    let frames = decode_with(Mode::CommandFrames, config, input, &mut random);
    assert_eq!(
        whole, frames,
        "values vs command frames, in pieces (seed {seed})"
    );
    for value in &whole.values {
        let wire = value.to_bytes();
        let again = decode_in_pieces(&RespConfig::default(), &wire, &mut std::iter::empty());
        assert_eq!(again.error, None, "{value:?} re-encoded as {wire:?}");
        assert_eq!(
            again.values,
            std::slice::from_ref(value),
            "round trip of {wire:?}"
        );
    }
}

/// A random value of at most `depth` nested aggregates (RESP3 types only when `resp3`).
pub fn random_value(rng: &mut Rng, depth: usize, resp3: bool) -> RespValue {
    // 0..=5 and 12 are RESP2; 0..=11 are scalars.
    let kind = match (resp3, depth) {
        (true, 0) => rng.below(12),
        (true, _) => rng.below(17),
        (false, 0) => rng.below(6),
        (false, _) => [0, 1, 2, 3, 4, 5, 12, 12][rng.below(8)],
    };
    let text = |rng: &mut Rng| -> Vec<u8> {
        let alphabet = b"abcXYZ019 _-:\"'\\";
        (0..rng.below(8))
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect()
    };
    let binary = |rng: &mut Rng| -> Vec<u8> {
        let alphabet = b"ab\r\n\0\xff$*+";
        (0..rng.below(10))
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect()
    };
    let list = |rng: &mut Rng| -> Vec<RespValue> {
        (0..rng.below(4))
            .map(|_| random_value(rng, depth.saturating_sub(1), resp3))
            .collect()
    };
    match kind {
        0 => RespValue::simple(text(rng)),
        1 => RespValue::error(text(rng)),
        2 => RespValue::Integer(rng.next_u64() as i64 >> rng.below(64)),
        3 => RespValue::bulk(binary(rng)),
        4 => RespValue::NullBulkString,
        5 => RespValue::NullArray,
        6 => RespValue::Null,
        7 => RespValue::Boolean(rng.below(2) == 1),
        8 => {
            let doubles = [
                0.0,
                -0.0,
                1.5,
                -2.25e-8,
                1e300,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NAN,
            ];
            RespValue::Double(doubles[rng.below(doubles.len())])
        }
        9 => RespValue::BigNumber(format!("-{}", rng.next_u64()).into_bytes().into()),
        10 => RespValue::BulkError(binary(rng).into()),
        11 => RespValue::VerbatimString {
            format: *b"txt",
            text: binary(rng).into(),
        },
        12 => RespValue::Array(list(rng)),
        13 => RespValue::Set(list(rng)),
        14 => RespValue::Push(list(rng)),
        15 => RespValue::Map(
            list(rng)
                .into_iter()
                .map(|v| (RespValue::simple("k"), v))
                .collect(),
        ),
        _ => RespValue::Attribute {
            attributes: vec![(RespValue::simple("a"), RespValue::Integer(1))],
            value: Box::new(random_value(rng, depth.saturating_sub(1), resp3)),
        },
    }
}

/// A command as clients send it: an array of 1 to 5 bulk strings (RESP2).
pub fn random_command(rng: &mut Rng) -> RespValue {
    let alphabet = b"aZ9 \r\n\0$*";
    let args = (0..1 + rng.below(5)).map(|_| {
        let arg: Vec<u8> = (0..rng.below(20))
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect();
        RespValue::bulk(arg)
    });
    RespValue::Array(args.collect())
}

/// A stream of random values, commands and inline commands, then (sometimes) a few random
/// edits.
pub fn random_stream(rng: &mut Rng, resp3: bool) -> Vec<u8> {
    let mut wire = BytesMut::new();
    for _ in 0..1 + rng.below(6) {
        if rng.below(3) == 0 {
            random_command(rng).encode(&mut wire);
        } else if rng.below(4) == 0 {
            let inline = [
                &b"PING\r\n"[..],
                b"SET k v\n",
                b"ECHO \"a b\" 'c'\r\n",
                b"  \r\n",
                b"GET \"x\r\n",
            ];
            wire.extend_from_slice(inline[rng.below(inline.len())]);
        } else {
            random_value(rng, 3, resp3).encode(&mut wire);
        }
    }
    let mut wire = wire.to_vec();
    if rng.below(3) == 0 {
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(wire.len() + 1);
            let byte = b"\r\n$*:-+_%|>~!=#,(x0-9"[rng.below(21)];
            match rng.below(3) {
                0 if at < wire.len() => wire[at] = byte,
                1 if at < wire.len() => {
                    wire.remove(at);
                }
                _ => wire.insert(at, byte),
            }
        }
    }
    wire
}
