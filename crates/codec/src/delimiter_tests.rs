//! Tests of `DelimiterBasedFrameDecoder` (a module of `delimiter.rs`).

use super::*;
use crate::testing::*;

fn delims(list: &[&'static [u8]]) -> Vec<Bytes> {
    list.iter().map(|d| Bytes::from_static(d)).collect()
}

#[test]
fn delimiter_decoder_picks_the_delimiter_giving_the_shortest_frame() {
    let decoder = DelimiterBasedFrameDecoder::new(80, delims(&[b"END", b"|"])).unwrap();
    let out = decode_chunks(decoder, &[b"a|bEND|"]);
    assert_eq!(out, [frame(b"a"), frame(b"b"), frame(b"")]);
}

#[test]
fn delimiter_decoder_prefers_the_first_listed_delimiter_at_the_same_position() {
    let decoder =
        DelimiterBasedFrameDecoder::with_options(80, false, true, delims(&[b"ab", b"abc"]))
            .unwrap();
    let out = decode_chunks(decoder, &[b"xabc"]);
    assert_eq!(
        out,
        [frame(b"xab")],
        "the remaining 'c' is the next frame's start"
    );
}

#[test]
fn delimiter_decoder_keeps_delimiter_when_not_stripping() {
    let decoder =
        DelimiterBasedFrameDecoder::with_options(80, false, true, Delimiters::nul()).unwrap();
    let out = decode_chunks(decoder, &[b"ab\0c\0"]);
    assert_eq!(out, [frame(b"ab\0"), frame(b"c\0")]);
}

#[test]
fn delimiter_decoder_finds_a_multibyte_delimiter_split_byte_by_byte() {
    let decoder = DelimiterBasedFrameDecoder::new(80, delims(&[b"<>"])).unwrap();
    let out = decode_bytewise(decoder, b"one<>two<><>");
    assert_eq!(out, [frame(b"one"), frame(b"two"), frame(b"")]);
}

#[test]
fn delimiter_decoder_fail_fast_reports_too_long_frame_then_recovers() {
    for _ in 0..2 {
        let decoder = DelimiterBasedFrameDecoder::new(1, Delimiters::nul()).unwrap();
        let out = decode_chunks(decoder, &[&[1, 2], &[0, b'A', 0]]);
        assert_eq!(out, [too_long(2, 1, false), frame(b"A")]);
    }
}

#[test]
fn delimiter_decoder_fail_slow_reports_too_long_frame_at_delimiter_then_recovers() {
    let decoder =
        DelimiterBasedFrameDecoder::with_options(1, true, false, Delimiters::nul()).unwrap();
    let mut cumulator = crate::Cumulator::new(decoder);
    let mut out = Vec::new();
    cumulator.feed(&[1, 2], &mut out);
    assert!(out.is_empty(), "fail-slow waits for the delimiter");
    cumulator.feed(&[3, 0], &mut out);
    cumulator.feed(b"A\0", &mut out);
    let expected = vec![
        Err(CodecError::TooLongFrame {
            length: 3,
            max: 1,
            complete: true,
        }),
        Ok(Bytes::from_static(b"A")),
    ];
    assert_eq!(out, expected);
}

#[test]
fn delimiter_decoder_accepts_max_length_frame_with_delimiter_split_across_reads() {
    let decoder = DelimiterBasedFrameDecoder::new(3, delims(&[b"<>"])).unwrap();
    let out = decode_chunks(decoder, &[b"abc<", b">def<", b">"]);
    assert_eq!(out, [frame(b"abc"), frame(b"def")]);
}

#[test]
fn delimiter_decoder_ends_a_discarded_frame_at_a_split_delimiter() {
    let decoder = DelimiterBasedFrameDecoder::new(3, delims(&[b"<>"])).unwrap();
    let out = decode_chunks(decoder, &[b"abcdef<", b">ok<>"]);
    assert_eq!(out, [too_long(6, 3, false), frame(b"ok")]);
}

#[test]
fn delimiter_decoder_with_line_delimiters_behaves_like_the_line_decoder() {
    let decoder = DelimiterBasedFrameDecoder::new(80, Delimiters::line()).unwrap();
    assert!(matches!(decoder.inner, Inner::Line(_)));
    let out = decode_bytewise(decoder, b"a\r\nb\n");
    assert_eq!(out, [frame(b"a"), frame(b"b")]);
}

#[test]
fn delimiter_decoder_frames_do_not_depend_on_where_a_longer_delimiter_is_cut() {
    // "\r\n\r\n" starts before the "\n" inside it: the frame is "head" however the
    // reads are cut, so a read ending inside the longer delimiter waits for its rest.
    let delimiters = delims(&[b"\r\n\r\n", b"\n"]);
    let whole = decode_chunks(
        DelimiterBasedFrameDecoder::new(80, delimiters.clone()).unwrap(),
        &[b"head\r\n\r\nbody\n"],
    );
    assert_eq!(whole, [frame(b"head"), frame(b"body")]);
    let cut = decode_chunks(
        DelimiterBasedFrameDecoder::new(80, delimiters.clone()).unwrap(),
        &[b"head\r\n", b"\r", b"\nbody\n"],
    );
    assert_eq!(cut, whole);
    // Ruled out by a differing byte: the shorter delimiter ends the frame then.
    let other = decode_chunks(
        DelimiterBasedFrameDecoder::new(80, delimiters).unwrap(),
        &[b"head\r\n", b"x\n"],
    );
    assert_eq!(other, [frame(b"head\r"), frame(b"x")]);
}

#[test]
fn delimiter_decoder_waits_for_a_first_listed_delimiter_at_the_same_position() {
    let delimiters = delims(&[b"ab", b"a"]);
    let cut = decode_chunks(
        DelimiterBasedFrameDecoder::with_options(80, false, true, delimiters).unwrap(),
        &[b"xa", b"by"],
    );
    assert_eq!(cut, [frame(b"xab")]);
}

#[test]
fn delimiter_decoder_takes_the_shorter_delimiter_at_end_of_input() {
    // No more bytes can complete "\r\n\r\n": the final decode ends the frame at "\n".
    let decoder = DelimiterBasedFrameDecoder::new(80, delims(&[b"\r\n\r\n", b"\n"])).unwrap();
    let mut cumulator = crate::Cumulator::new(decoder);
    let mut out = Vec::new();
    cumulator.feed(b"head\r\n", &mut out);
    assert!(
        out.is_empty(),
        "undecided while the longer delimiter may follow"
    );
    cumulator.finish(&mut out);
    assert_eq!(out, [Ok(Bytes::from_static(b"head\r"))]);
}

#[test]
fn delimiter_decoder_rejects_invalid_configuration() {
    assert!(DelimiterBasedFrameDecoder::new(0, Delimiters::nul()).is_err());
    assert!(DelimiterBasedFrameDecoder::new(8, Vec::new()).is_err());
    assert!(DelimiterBasedFrameDecoder::new(8, vec![Bytes::new()]).is_err());
}

#[test]
fn delimiter_decoder_yields_same_frames_for_any_read_boundaries() {
    let mut rng = XorShift::new(11);
    let delimiters: [&'static [u8]; 3] = [b"\r\n\r\n", b"::", b"\0"];
    let mut input = Vec::new();
    let mut expected = Vec::new();
    for _ in 0..300 {
        let len = rng.below(10);
        // Bodies use letters, '\r' and lone ':' (never last), so never a delimiter.
        let body: Vec<u8> = (0..len)
            .map(|i| match rng.below(8) {
                0 if i % 2 == 0 && i + 1 < len => b':',
                1 => b'\r',
                _ => b'a' + rng.below(26) as u8,
            })
            .collect();
        input.extend_from_slice(&body);
        input.extend_from_slice(delimiters[rng.below(3)]);
        expected.push(if len > 6 {
            too_long(len as u64, 6, true)
        } else {
            frame(&body)
        });
    }
    for seed in 1..40 {
        let decoder =
            DelimiterBasedFrameDecoder::with_options(6, true, false, delims(&delimiters)).unwrap();
        let out = decode_random_splits(decoder, &input, seed);
        assert_eq!(out, expected, "seed {seed}");
    }
}
