//! One entry point per decoder: reads a case (parameters, then a program of appends and read
//! cuts) from raw bytes, builds the decoder through its public constructor, and checks it
//! against its reference model with the harness. Fuzz targets and the stable test call these;
//! the `*_case` functions build the case alone (the stable test also runs some of them
//! through a pipeline).

/// Checks the `LineBasedFrameDecoder` case read from `data`.
pub fn line(data: &[u8]) -> Tally {
    line_case(data).check()
}

/// Checks the `DelimiterBasedFrameDecoder` case read from `data`.
pub fn delimiter(data: &[u8]) -> Tally {
    delimiter_case(data).check()
}

/// Checks the `FixedLengthFrameDecoder` case read from `data`.
pub fn fixed_length(data: &[u8]) -> Tally {
    fixed_length_case(data).check()
}

/// Checks the `LengthFieldBasedFrameDecoder` case read from `data` (or that its
/// configuration was refused, as it had to be).
pub fn length_field(data: &[u8]) -> Tally {
    match length_field_case(data) {
        Some(case) => case.check(),
        None => Tally {
            cases: 1,
            refused: 1,
            ..Tally::default()
        },
    }
}

/// Checks the prepender round trip read from `data`.
pub fn prepender_round_trip(data: &[u8]) -> Tally {
    prepender_round_trip_case(data).check()
}

use netloop_codec::bytes::{Bytes, BytesMut};
use netloop_codec::{
    ByteOrder, DelimiterBasedFrameDecoder, FixedLengthFrameDecoder, LengthFieldBasedFrameDecoder,
    LengthFieldConfig, LengthFieldPrepender, LineBasedFrameDecoder,
};

use super::harness::{Case, Tally};
use super::model::{fixed_length_events, read_ends, DelimiterModel, Due, Ev, LengthFieldModel};
use super::reads::{Reads, MAX_STREAM};
use super::source::Source;

const WIDTHS: [usize; 5] = [1, 2, 3, 4, 8];

/// A limit: mostly small (0 to 63, so frames cross it often), sometimes up to 4 KiB.
fn limit(src: &mut Source) -> usize {
    let b = src.u8();
    if b >= 0xE0 {
        64 + src.below(4096)
    } else {
        usize::from(b & 0x3F)
    }
}

/// `LineBasedFrameDecoder`: lines of letters and `\r`, ended by `\n` or `\r\n`.
pub fn line_case(data: &[u8]) -> Case<LineBasedFrameDecoder> {
    let mut src = Source::new(data);
    let max = limit(&mut src);
    let strip = src.bool();
    let fail_fast = src.bool();
    let mut reads = Reads::new();
    while !src.is_empty() {
        let op = src.u8();
        let letter = b'a' + op / 16;
        match op % 16 {
            0 | 1 => reads.cut(),
            2 | 3 => reads.push(b"\n"),
            4 => reads.push(b"\r\n"),
            5 | 6 => reads.push(b"\r"),
            7 => reads.repeat(letter, src.below(256)),
            _ => reads.push(&[letter]),
        }
    }
    let (chunks, stream) = reads.finish();
    let delimiters = [b"\r\n".to_vec(), b"\n".to_vec()];
    let model = DelimiterModel {
        delimiters: &delimiters,
        max,
        strip,
        fail_fast,
    };
    let expected = model.events(&stream, &read_ends(&chunks));
    let decoder = LineBasedFrameDecoder::with_options(max, strip, fail_fast);
    // A line within the limit, plus a '\r' that may start its "\r\n".
    Case::new("line", decoder, chunks, expected, max + 1)
}

/// Bytes delimiters are made of; the stream also uses `x`, which no delimiter holds.
const DELIMITER_BYTES: [u8; 5] = [b'a', b'b', b'\r', b'\n', 0];

/// `DelimiterBasedFrameDecoder`: one to four delimiters of one to four bytes from a small
/// alphabet (so they share prefixes and occur inside each other), or the two line
/// delimiters (the decoder then delegates to the line decoder).
pub fn delimiter_case(data: &[u8]) -> Case<DelimiterBasedFrameDecoder> {
    let mut src = Source::new(data);
    let max = 1 + limit(&mut src);
    let strip = src.bool();
    let fail_fast = src.bool();
    let delimiters: Vec<Vec<u8>> = match src.u8() % 8 {
        0 => vec![b"\r\n".to_vec(), b"\n".to_vec()],
        1 => vec![b"\n".to_vec(), b"\r\n".to_vec()],
        _ => {
            let count = 1 + src.below(4);
            (0..count)
                .map(|_| {
                    let len = 1 + src.below(4);
                    (0..len)
                        .map(|_| DELIMITER_BYTES[src.below(DELIMITER_BYTES.len())])
                        .collect()
                })
                .collect()
        }
    };
    let mut reads = Reads::new();
    while !src.is_empty() {
        let op = src.u8();
        let pick = &delimiters[usize::from(op / 16) % delimiters.len()];
        match op % 16 {
            0 | 1 => reads.cut(),
            2..=5 => reads.push(pick),
            6 => {
                let keep = src.below(pick.len());
                reads.push(&pick[..keep]);
            }
            7 => reads.repeat(b'x', src.below(256)),
            _ => {
                let byte = match usize::from(op / 16) % 6 {
                    5 => b'x',
                    i => DELIMITER_BYTES[i],
                };
                reads.push(&[byte]);
            }
        }
    }
    let (chunks, stream) = reads.finish();
    let model = DelimiterModel {
        delimiters: &delimiters,
        max,
        strip,
        fail_fast,
    };
    let expected = model.events(&stream, &read_ends(&chunks));
    let longest = delimiters.iter().map(Vec::len).max().unwrap_or(1);
    let list = delimiters.iter().cloned().map(Bytes::from).collect();
    let decoder = DelimiterBasedFrameDecoder::with_options(max, strip, fail_fast, list)
        .expect("valid delimiter configuration");
    // A frame within the limit, plus a tail that may start a delimiter.
    Case::new("delimiter", decoder, chunks, expected, max + longest - 1)
}

/// `FixedLengthFrameDecoder`: arbitrary bytes.
pub fn fixed_length_case(data: &[u8]) -> Case<FixedLengthFrameDecoder> {
    let mut src = Source::new(data);
    let length = 1 + limit(&mut src);
    let mut reads = Reads::new();
    while !src.is_empty() {
        let op = src.u8();
        match op % 4 {
            0 => reads.cut(),
            1 => reads.repeat(op, src.below(256)),
            _ => reads.push(src.bytes(1 + usize::from(op / 4) % 16)),
        }
    }
    let (chunks, stream) = reads.finish();
    let expected = fixed_length_events(&stream, length);
    let decoder = FixedLengthFrameDecoder::new(length).expect("positive length");
    Case::new("fixed_length", decoder, chunks, expected, length - 1)
}

/// Writes the low `width` bytes of `value`.
fn put_field(out: &mut Vec<u8>, value: u64, width: usize, little_endian: bool) {
    if little_endian {
        out.extend_from_slice(&value.to_le_bytes()[..width]);
    } else {
        out.extend_from_slice(&value.to_be_bytes()[8 - width..]);
    }
}

/// `LengthFieldBasedFrameDecoder`: every configuration the constructor accepts (and a check
/// that it refuses the others), over well-formed frames, frames announcing any length, and
/// raw bytes.
pub fn length_field_case(data: &[u8]) -> Option<Case<LengthFieldBasedFrameDecoder>> {
    let mut src = Source::new(data);
    let width = WIDTHS[src.below(WIDTHS.len())];
    let offset = src.below(4);
    let header = offset + width;
    let adjustment = match src.u8() % 8 {
        0 => src.u64() as i64,
        1 => -(src.below(header + 8) as i64),
        _ => src.below(9) as i64 - 4,
    };
    let strip = src.below(header + 4);
    let fail_fast = src.bool();
    let little_endian = src.bool();
    let max = match src.u8() {
        0..=7 => src.below(header + 1),
        0xE0..=0xFF => header + src.below(4096),
        _ => header + src.below(64),
    };
    let cfg = LengthFieldConfig {
        max_frame_length: max,
        length_field_offset: offset,
        length_field_length: width,
        length_adjustment: adjustment,
        initial_bytes_to_strip: strip,
        fail_fast,
        byte_order: if little_endian {
            ByteOrder::LittleEndian
        } else {
            ByteOrder::BigEndian
        },
    };
    let decoder = match LengthFieldBasedFrameDecoder::new(cfg) {
        Ok(decoder) => decoder,
        Err(error) => {
            assert!(max == 0 || max < header, "valid {cfg:?} refused: {error}");
            return None;
        }
    };
    assert!(max >= header && max > 0, "invalid {cfg:?} accepted");

    let mut reads = Reads::new();
    while !src.is_empty() {
        let op = src.u8();
        match op % 8 {
            0 => reads.cut(),
            1 => {
                let n = src.below(8);
                reads.push(src.bytes(n));
            }
            2 => reads.repeat(op, src.below(1024)),
            _ => {
                // A frame whose field announces `body` bytes after the header (when the
                // adjustment lets the field hold that), the rest of the frame split at
                // a chosen point.
                let body = if op & 0x80 != 0 {
                    src.below(max + 64)
                } else {
                    src.below(max.min(64) + 1)
                };
                let mut frame = src.bytes(offset).to_vec();
                frame.resize(offset, 0);
                let value = body as i128 - i128::from(adjustment);
                put_field(&mut frame, value as u64, width, little_endian);
                frame.extend((0..body).map(|i| (i as u8) ^ op));
                let cut_at = src.below(frame.len() + 1);
                reads.push(&frame[..cut_at]);
                if op & 0x40 != 0 {
                    reads.cut();
                }
                reads.push(&frame[cut_at..]);
            }
        }
    }
    let (chunks, stream) = reads.finish();
    let model = LengthFieldModel {
        max,
        offset,
        width,
        adjustment,
        strip,
        fail_fast,
        little_endian,
    };
    let expected = model.events(&stream);
    // Within the limit, a frame waits whole in the buffer; an oversize one is dropped.
    Some(Case::new("length_field", decoder, chunks, expected, max))
}

/// `LengthFieldPrepender` then `LengthFieldBasedFrameDecoder` configured to undo it: the
/// decoder yields exactly the messages the prepender accepted, whatever the read cuts; the
/// prepender refuses exactly the lengths its field cannot carry, writing nothing then.
pub fn prepender_round_trip_case(data: &[u8]) -> Case<LengthFieldBasedFrameDecoder> {
    let mut src = Source::new(data);
    let width = WIDTHS[src.below(WIDTHS.len())];
    let includes_field = src.bool();
    let adjustment = match src.u8() % 8 {
        0 => i64::from(src.u16()) - 32_768,
        _ => src.below(9) as i64 - 4,
    };
    let little_endian = src.bool();
    let order = if little_endian {
        ByteOrder::LittleEndian
    } else {
        ByteOrder::BigEndian
    };
    let prepender = LengthFieldPrepender::with_options(width, includes_field, adjustment, order)
        .expect("supported width");
    let field_max: i128 = if width == 8 {
        i128::from(i64::MAX)
    } else {
        (1i128 << (8 * width)) - 1
    };

    let mut reads = Reads::new();
    let mut messages = Vec::new();
    let mut frame_ends = Vec::new();
    while !src.is_empty() {
        let op = src.u8();
        if op & 3 == 0 {
            reads.cut();
            continue;
        }
        // Now and then longer than a 2-byte field can carry.
        let len = if op >= 0xF0 {
            usize::from(src.u16()) + usize::from(src.u8())
        } else {
            src.below(64)
        };
        let message: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_add(op)).collect();
        let mut out = BytesMut::new();
        let value =
            len as i128 + i128::from(adjustment) + if includes_field { width as i128 } else { 0 };
        match prepender.encode(&message, &mut out) {
            Ok(()) => {
                assert!(
                    (0..=field_max).contains(&value),
                    "encoded unfit value {value}"
                );
                assert_eq!(out.len(), width + len);
                if reads.stream_len() + out.len() > MAX_STREAM {
                    break;
                }
                let cut_at = src.below(out.len() + 1);
                reads.push(&out[..cut_at]);
                if op & 0x40 != 0 {
                    reads.cut();
                }
                reads.push(&out[cut_at..]);
                frame_ends.push(reads.stream_len());
                messages.push(message);
            }
            Err(error) => {
                assert_eq!(error.code(), "ERR_ENCODER");
                assert!(
                    !(0..=field_max).contains(&value),
                    "refused fit value {value}: {error}"
                );
                assert!(out.is_empty(), "wrote {} bytes before refusing", out.len());
            }
        }
    }
    let (chunks, stream) = reads.finish();
    let largest = messages.iter().map(Vec::len).max().unwrap_or(0);
    let undo = -adjustment - if includes_field { width as i64 } else { 0 };
    let cfg = LengthFieldConfig {
        max_frame_length: width + largest,
        length_field_offset: 0,
        length_field_length: width,
        length_adjustment: undo,
        initial_bytes_to_strip: width,
        fail_fast: true,
        byte_order: order,
    };
    let expected: Vec<(Due, Ev)> = frame_ends
        .into_iter()
        .zip(messages)
        .map(|(end, message)| (Due::At(end), Ev::Frame(message)))
        .collect();
    let model = LengthFieldModel {
        max: cfg.max_frame_length,
        offset: 0,
        width,
        adjustment: undo,
        strip: width,
        fail_fast: true,
        little_endian,
    };
    assert_eq!(
        model.events(&stream),
        expected,
        "the model disagrees with the round trip"
    );
    let decoder = LengthFieldBasedFrameDecoder::new(cfg).expect("valid undoing configuration");
    Case::new(
        "prepender_round_trip",
        decoder,
        chunks,
        expected,
        cfg.max_frame_length,
    )
}
