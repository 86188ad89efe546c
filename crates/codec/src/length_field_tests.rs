//! Tests of [`LengthFieldBasedFrameDecoder`], including Netty's javadoc table and a round
//! trip through [`LengthFieldPrepender`].

use super::*;
use crate::prepender::LengthFieldPrepender;
use crate::testing::*;
use crate::Cumulator;

const HELLO: &[u8] = b"HELLO, WORLD";

fn decoder(cfg: LengthFieldConfig) -> LengthFieldBasedFrameDecoder {
    LengthFieldBasedFrameDecoder::new(cfg).expect("valid config")
}

fn cfg(offset: usize, width: usize, adjustment: i64, strip: usize) -> LengthFieldConfig {
    LengthFieldConfig {
        length_adjustment: adjustment,
        initial_bytes_to_strip: strip,
        ..LengthFieldConfig::new(1024, offset, width)
    }
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// Decodes `input` in one read and byte by byte; both must give `expected`.
fn check_both_ways(cfg: LengthFieldConfig, input: &[u8], expected: &[Ev]) {
    assert_eq!(decode_chunks(decoder(cfg), &[input]), expected, "one read");
    assert_eq!(
        decode_bytewise(decoder(cfg), input),
        expected,
        "byte by byte"
    );
}

#[test]
fn javadoc_2_byte_length_at_offset_0_keeps_header() {
    let input = cat(&[b"\x00\x0C", HELLO]);
    check_both_ways(cfg(0, 2, 0, 0), &input, &[frame(&input)]);
}

#[test]
fn javadoc_2_byte_length_at_offset_0_strips_header() {
    let input = cat(&[b"\x00\x0C", HELLO]);
    check_both_ways(cfg(0, 2, 0, 2), &input, &[frame(HELLO)]);
}

#[test]
fn javadoc_length_of_whole_message_uses_negative_adjustment() {
    let input = cat(&[b"\x00\x0E", HELLO]);
    check_both_ways(cfg(0, 2, -2, 0), &input, &[frame(&input)]);
}

#[test]
fn javadoc_3_byte_length_at_end_of_5_byte_header() {
    let input = cat(&[b"\xCA\xFE", b"\x00\x00\x0C", HELLO]);
    check_both_ways(cfg(2, 3, 0, 0), &input, &[frame(&input)]);
}

#[test]
fn javadoc_3_byte_length_at_start_of_5_byte_header() {
    let input = cat(&[b"\x00\x00\x0C", b"\xCA\xFE", HELLO]);
    check_both_ways(cfg(0, 3, 2, 0), &input, &[frame(&input)]);
}

#[test]
fn javadoc_length_in_middle_of_header_strips_first_field_and_length() {
    let input = cat(&[b"\xCA", b"\x00\x0C", b"\xFE", HELLO]);
    check_both_ways(cfg(1, 2, 1, 3), &input, &[frame(&cat(&[b"\xFE", HELLO]))]);
}

#[test]
fn javadoc_whole_message_length_in_middle_of_header_strips_first_field_and_length() {
    let input = cat(&[b"\xCA", b"\x00\x10", b"\xFE", HELLO]);
    check_both_ways(cfg(1, 2, -3, 3), &input, &[frame(&cat(&[b"\xFE", HELLO]))]);
}

#[test]
fn every_field_width_decodes_in_both_byte_orders() {
    for order in [ByteOrder::BigEndian, ByteOrder::LittleEndian] {
        for width in FIELD_WIDTHS {
            let mut header = vec![0u8; width];
            match order {
                ByteOrder::BigEndian => header[width - 1] = 3,
                ByteOrder::LittleEndian => header[0] = 3,
            }
            // A partial next header follows: it must stay unconsumed.
            let input = cat(&[&header, b"abc", &header[..width - 1]]);
            let cfg = LengthFieldConfig {
                byte_order: order,
                ..cfg(0, width, 0, width)
            };
            let out = decode_bytewise(decoder(cfg), &input);
            assert_eq!(out, [frame(b"abc")], "{order:?} width {width}");
        }
    }
}

#[test]
fn byte_order_changes_how_a_multibyte_field_is_read() {
    let input = cat(&[b"\x02\x00", b"ab"]);
    let little = LengthFieldConfig {
        byte_order: ByteOrder::LittleEndian,
        ..cfg(0, 2, 0, 2)
    };
    assert_eq!(decode_chunks(decoder(little), &[&input]), [frame(b"ab")]);
    // Big endian reads 0x0200 = 512 and waits for more bytes.
    assert_eq!(decode_chunks(decoder(cfg(0, 2, 0, 2)), &[&input]), []);
}

#[test]
fn prepender_output_round_trips_through_the_decoder_for_every_width_and_order() {
    for order in [ByteOrder::BigEndian, ByteOrder::LittleEndian] {
        for width in FIELD_WIDTHS {
            let prepender = LengthFieldPrepender::with_options(width, true, 0, order).unwrap();
            let messages: [&[u8]; 4] = [b"", b"a", b"hello", &[0xFF; 200]];
            let mut stream = BytesMut::new();
            for message in messages {
                prepender.encode(message, &mut stream).unwrap();
            }
            let cfg = LengthFieldConfig {
                byte_order: order,
                ..cfg(0, width, -(width as i64), width)
            };
            let out = decode_random_splits(decoder(cfg), &stream, width as u64);
            let expected: Vec<Ev> = messages.iter().map(|m| frame(m)).collect();
            assert_eq!(out, expected, "{order:?} width {width}");
        }
    }
}

#[test]
fn frames_are_identical_for_any_read_boundaries() {
    let mut rng = XorShift::new(99);
    let prepender = LengthFieldPrepender::new(2).unwrap();
    let mut stream = BytesMut::new();
    let mut expected = Vec::new();
    for _ in 0..500 {
        let message: Vec<u8> = (0..rng.below(40)).map(|_| rng.next_u64() as u8).collect();
        prepender.encode(&message, &mut stream).unwrap();
        expected.push(if message.len() + 2 > 30 {
            too_long(message.len() as u64 + 2, 30, true)
        } else {
            frame(&message)
        });
    }
    for fail_fast in [true, false] {
        for seed in 1..30 {
            let cfg = LengthFieldConfig {
                fail_fast,
                ..LengthFieldConfig::new(30, 0, 2)
            };
            let out = decode_random_splits(decoder(cfg), &stream, seed);
            let stripped: Vec<Ev> = out
                .into_iter()
                .map(|ev| match ev {
                    Ev::Frame(f) => Ev::Frame(f[2..].to_vec()),
                    error => error,
                })
                .collect();
            assert_eq!(stripped, expected, "fail_fast {fail_fast} seed {seed}");
        }
    }
}

#[test]
fn too_long_frame_fail_fast_reports_at_header_discards_across_reads_then_recovers() {
    let cfg = LengthFieldConfig::new(8, 0, 1);
    let mut cumulator = Cumulator::new(decoder(cfg));
    let mut out = Vec::new();
    cumulator.feed(b"\x0Aabc", &mut out);
    let error = CodecError::TooLongFrame {
        length: 11,
        max: 8,
        complete: true,
    };
    assert_eq!(out, [Err(error)], "reported on the header");
    out.clear();
    cumulator.feed(b"defg", &mut out);
    cumulator.feed(b"hij\x02ok", &mut out);
    assert_eq!(out, [Ok(Bytes::from_static(b"\x02ok"))]);
}

#[test]
fn too_long_frame_fail_slow_reports_after_last_discarded_byte_then_recovers() {
    let cfg = LengthFieldConfig {
        fail_fast: false,
        ..LengthFieldConfig::new(8, 0, 1)
    };
    let mut cumulator = Cumulator::new(decoder(cfg));
    let mut out = Vec::new();
    cumulator.feed(b"\x0Aabc", &mut out);
    cumulator.feed(b"defg", &mut out);
    cumulator.feed(b"hi", &mut out);
    assert!(out.is_empty(), "one byte of the frame still missing");
    cumulator.feed(b"j\x02ok", &mut out);
    let error = CodecError::TooLongFrame {
        length: 11,
        max: 8,
        complete: true,
    };
    assert_eq!(out, [Err(error), Ok(Bytes::from_static(b"\x02ok"))]);
}

#[test]
fn too_long_frame_already_buffered_is_reported_in_both_modes_and_skipped() {
    for fail_fast in [true, false] {
        let cfg = LengthFieldConfig {
            fail_fast,
            ..LengthFieldConfig::new(4, 0, 1)
        };
        let out = decode_chunks(decoder(cfg), &[b"\x05abcde\x01x"]);
        assert_eq!(
            out,
            [too_long(6, 4, true), frame(b"\x01x")],
            "fail_fast {fail_fast}"
        );
        // Exactly the oversize frame, nothing after it: still reported in this read.
        let exact = decode_chunks(decoder(cfg), &[b"\x05abcde"]);
        assert_eq!(exact, [too_long(6, 4, true)], "fail_fast {fail_fast}");
    }
}

#[test]
fn negative_8_byte_length_is_corrupted_and_consumes_the_header() {
    let mut cumulator = Cumulator::new(decoder(cfg(0, 8, 0, 0)));
    let mut out = Vec::new();
    cumulator.feed(b"\xFF\x00\x00\x00\x00\x00\x00\x01xy", &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].as_ref().unwrap_err().code(), "ERR_CORRUPTED_FRAME");
    assert_eq!(cumulator.buffered(), b"xy");
}

#[test]
fn adjusted_length_below_field_end_is_corrupted() {
    let out = decode_chunks(decoder(cfg(0, 2, -5, 0)), &[b"\x00\x02"]);
    assert_eq!(out.len(), 1);
    assert!(is_corrupted(&out[0]), "{out:?}");
}

#[test]
fn strip_larger_than_frame_is_corrupted_and_skips_the_frame() {
    let out = decode_chunks(decoder(cfg(0, 1, 0, 4)), &[b"\x01a\x03abc"]);
    assert_eq!(out.len(), 2);
    assert!(is_corrupted(&out[0]), "{out:?}");
    assert_eq!(
        out[1],
        frame(b""),
        "next frame is exactly the 4 stripped bytes"
    );
}

#[test]
fn huge_length_and_adjustment_do_not_overflow() {
    let cfg = LengthFieldConfig {
        length_adjustment: i64::MAX,
        ..LengthFieldConfig::new(64, 0, 8)
    };
    let out = decode_chunks(decoder(cfg), &[b"\x7F\xFF\xFF\xFF\xFF\xFF\xFF\xFFabc"]);
    assert_eq!(out, [too_long(u64::MAX, 64, true)]);
}

#[test]
fn incomplete_frame_is_dropped_silently_at_finish() {
    let mut cumulator = Cumulator::new(decoder(cfg(0, 2, 0, 0)));
    let mut out = Vec::new();
    cumulator.feed(b"\x00\x05abc", &mut out);
    cumulator.finish(&mut out);
    assert!(out.is_empty());
    assert!(cumulator.buffered().is_empty());
}

#[test]
fn leftover_on_removal_holds_the_partial_frame() {
    let mut cumulator = Cumulator::new(decoder(cfg(0, 1, 0, 1)));
    let mut out = Vec::new();
    cumulator.feed(b"\x01a\x03ab", &mut out);
    assert_eq!(out, [Ok(Bytes::from_static(b"a"))]);
    assert_eq!(cumulator.take_leftover(), Bytes::from_static(b"\x03ab"));
}

#[test]
fn invalid_configurations_are_rejected() {
    let bad = [
        LengthFieldConfig::new(0, 0, 2),
        LengthFieldConfig::new(100, 0, 5),
        LengthFieldConfig::new(100, 0, 0),
        LengthFieldConfig::new(4, 3, 2),
        LengthFieldConfig::new(100, usize::MAX, 2),
    ];
    for cfg in bad {
        let error = LengthFieldBasedFrameDecoder::new(cfg).unwrap_err();
        assert_eq!(error.code(), "ERR_INVALID_ARG_VALUE", "{cfg:?}");
    }
    assert!(LengthFieldBasedFrameDecoder::new(LengthFieldConfig::new(4, 2, 2)).is_ok());
}
