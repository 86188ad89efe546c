//! Behaviour of `ByteToMessageDecoder` on an `EmbeddedChannel`.

use std::rc::Rc;

use bytes::{Bytes, BytesMut};
use netloop_transport::{
    ChannelInputShutdown, ChannelOptions, EmbeddedChannel, Message, ReadCounter,
};

use super::recorder::{channel_with, exception, read, Ev, Recorder};
use crate::{
    ByteToMessageDecoder, CodecError, DelimiterBasedFrameDecoder, FixedLengthFrameDecoder,
    FrameDecoder, LengthFieldBasedFrameDecoder, LengthFieldConfig, LineBasedFrameDecoder,
};

fn lines(max: usize) -> ByteToMessageDecoder<LineBasedFrameDecoder> {
    ByteToMessageDecoder::new(LineBasedFrameDecoder::new(max))
}

fn fixed(n: usize) -> ByteToMessageDecoder<FixedLengthFrameDecoder> {
    ByteToMessageDecoder::new(FixedLengthFrameDecoder::new(n).unwrap())
}

fn inbound(ch: &EmbeddedChannel, data: &'static [u8]) {
    ch.write_inbound(Bytes::from_static(data));
}

#[test]
fn frames_split_across_many_inbound_writes_come_out_whole_and_in_order() {
    let rec = Recorder::new();
    let ch = channel_with(lines(64), &rec);
    for byte in b"ab" {
        ch.write_inbound(vec![*byte]);
    }
    inbound(&ch, b"c\r");
    inbound(&ch, b"\nde");
    inbound(&ch, b"f\ng\nh");
    assert_eq!(rec.take_reads(), [read(b"abc"), read(b"def"), read(b"g")]);
    inbound(&ch, b"\n");
    assert_eq!(rec.take_reads(), [read(b"h")]);
}

#[test]
fn read_complete_is_passed_on_after_the_frames_of_a_burst() {
    let rec = Recorder::new();
    let ch = channel_with(lines(64), &rec);
    inbound(&ch, b"a\nb\nc");
    assert_eq!(rec.take(), [read(b"a"), read(b"b"), Ev::ReadComplete]);
    inbound(&ch, b"x");
    assert_eq!(
        rec.take(),
        [Ev::ReadComplete],
        "a burst without a frame still completes"
    );
}

#[test]
fn messages_that_are_not_bytes_pass_through_unchanged() {
    let rec = Recorder::new();
    let ch = channel_with(lines(64), &rec);
    inbound(&ch, b"par");
    ch.write_inbound(Message::user(7u32));
    inbound(&ch, b"tial\n");
    assert_eq!(rec.take_reads(), [Ev::ReadUser(7), read(b"partial")]);
}

#[test]
fn too_long_frame_fires_err_too_long_frame_then_the_next_frame_decodes() {
    let rec = Recorder::new();
    let ch = channel_with(lines(4), &rec);
    inbound(&ch, b"abcdefgh\nok\n");
    assert_eq!(
        rec.take(),
        [
            exception("ERR_TOO_LONG_FRAME"),
            read(b"ok"),
            Ev::ReadComplete
        ]
    );
    // The same error split across reads, then a frame in the same read as its end.
    inbound(&ch, b"123");
    inbound(&ch, b"4567");
    inbound(&ch, b"89\nyes\n");
    let reads: Vec<Ev> = rec
        .take()
        .into_iter()
        .filter(|e| *e != Ev::ReadComplete)
        .collect();
    assert_eq!(reads, [exception("ERR_TOO_LONG_FRAME"), read(b"yes")]);
}

#[test]
fn codec_error_travels_as_a_foreign_transport_error_holding_the_codec_error() {
    let ch = EmbeddedChannel::new(vec![("codec", Rc::new(lines(2)))]);
    inbound(&ch, b"abc\n");
    let error = ch.check_exception().unwrap_err();
    assert_eq!(error.code(), "ERR_TOO_LONG_FRAME");
    let source = error
        .foreign_source()
        .and_then(|e| e.downcast_ref::<CodecError>());
    assert_eq!(
        source,
        Some(&CodecError::TooLongFrame {
            length: 3,
            max: 2,
            complete: true
        })
    );
}

#[test]
fn every_layer_one_decoder_works_as_a_handler() {
    let rec = Recorder::new();
    let delimiters = vec![Bytes::from_static(b";")];
    let ch = channel_with(
        ByteToMessageDecoder::new(DelimiterBasedFrameDecoder::new(16, delimiters).unwrap()),
        &rec,
    );
    inbound(&ch, b"a;bc");
    inbound(&ch, b";");
    assert_eq!(rec.take_reads(), [read(b"a"), read(b"bc")]);

    let rec = Recorder::new();
    let mut cfg = LengthFieldConfig::new(64, 0, 1);
    cfg.initial_bytes_to_strip = 1;
    let ch = channel_with(
        ByteToMessageDecoder::new(LengthFieldBasedFrameDecoder::new(cfg).unwrap()),
        &rec,
    );
    inbound(&ch, b"\x02h");
    inbound(&ch, b"i\x00\x01");
    inbound(&ch, b"!");
    assert_eq!(rec.take_reads(), [read(b"hi"), read(b""), read(b"!")]);

    let rec = Recorder::new();
    let ch = channel_with(fixed(2), &rec);
    inbound(&ch, b"abcde");
    assert_eq!(rec.take_reads(), [read(b"ab"), read(b"cd")]);

    // Type-erased, as a binding that picks the decoder at run time holds it.
    let rec = Recorder::new();
    let boxed: Box<dyn FrameDecoder> = Box::new(LineBasedFrameDecoder::new(8));
    let ch = channel_with(ByteToMessageDecoder::new(boxed), &rec);
    inbound(
        &ch, b"x
y",
    );
    assert_eq!(rec.take_reads(), [read(b"x")]);
}

#[test]
fn leftover_bytes_are_forwarded_when_the_decoder_is_removed_mid_stream() {
    let rec = Recorder::new();
    let ch = channel_with(fixed(4), &rec);
    inbound(&ch, b"abcdef");
    assert_eq!(rec.take(), [read(b"abcd"), Ev::ReadComplete]);
    ch.pipeline().remove("codec").unwrap();
    assert_eq!(rec.take(), [read(b"ef"), Ev::ReadComplete]);
    inbound(&ch, b"gh");
    assert_eq!(
        rec.take_reads(),
        [read(b"gh")],
        "later bytes pass straight through"
    );
}

#[test]
fn removing_a_decoder_with_nothing_buffered_forwards_nothing() {
    let rec = Recorder::new();
    let ch = channel_with(fixed(2), &rec);
    inbound(&ch, b"ab");
    rec.take();
    ch.pipeline().remove("codec").unwrap();
    assert_eq!(rec.take(), []);
}

#[test]
fn a_frame_handler_that_removes_the_decoder_gets_the_rest_of_the_read_raw() {
    // A protocol switch: after the first line, the bytes are no longer lines.
    let rec = Recorder::with_hook(|ctx, ev| {
        if *ev == read(b"UPGRADE") {
            ctx.pipeline().remove("codec").unwrap();
        }
    });
    let ch = channel_with(lines(64), &rec);
    inbound(&ch, b"UPGRADE\nraw\nbytes\n");
    assert_eq!(rec.take_reads(), [read(b"UPGRADE"), read(b"raw\nbytes\n")]);
}

/// A length-field decoder that reports a frame cut short by the end of input.
struct TruncationIsCorrupt(LengthFieldBasedFrameDecoder);

impl FrameDecoder for TruncationIsCorrupt {
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        self.0.decode(buf)
    }
    fn decode_last(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        match self.0.decode(buf)? {
            None if !buf.is_empty() => {
                buf.clear();
                Err(CodecError::corrupted("truncated frame at end of input"))
            }
            other => Ok(other),
        }
    }
}

/// A fixed-length decoder that emits the partial tail at end of input, and an `<eof>`
/// marker when nothing is left.
struct TailAtEof(FixedLengthFrameDecoder);

impl FrameDecoder for TailAtEof {
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        self.0.decode(buf)
    }
    fn decode_last(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        match self.0.decode(buf)? {
            None if buf.is_empty() => Ok(Some(Bytes::from_static(b"<eof>"))),
            None => Ok(Some(buf.split().freeze())),
            frame => Ok(frame),
        }
    }
}

#[test]
fn inactive_drops_a_partial_fixed_length_frame_then_passes_inactive_on() {
    let rec = Recorder::new();
    let ch = channel_with(fixed(4), &rec);
    inbound(&ch, b"abcdef");
    rec.take();
    ch.close();
    assert_eq!(rec.take(), [Ev::Inactive]);
}

#[test]
fn inactive_runs_decode_last_and_fires_its_frames_before_inactive() {
    let rec = Recorder::new();
    let fixed = FixedLengthFrameDecoder::new(4).unwrap();
    let ch = channel_with(ByteToMessageDecoder::new(TailAtEof(fixed)), &rec);
    inbound(&ch, b"abcdef");
    rec.take();
    ch.close();
    assert_eq!(rec.take(), [read(b"ef"), Ev::ReadComplete, Ev::Inactive]);
}

#[test]
fn inactive_routes_a_final_decode_error_before_inactive() {
    let rec = Recorder::new();
    let decoder = LengthFieldBasedFrameDecoder::new(LengthFieldConfig::new(64, 0, 1)).unwrap();
    let ch = channel_with(
        ByteToMessageDecoder::new(TruncationIsCorrupt(decoder)),
        &rec,
    );
    inbound(&ch, b"\x01a\x05ab");
    assert_eq!(rec.take_reads(), [read(b"\x01a")]);
    ch.close();
    assert_eq!(rec.take(), [exception("ERR_CORRUPTED_FRAME"), Ev::Inactive]);
}

#[test]
fn input_shutdown_runs_the_final_decode_once_and_passes_the_event_on() {
    let rec = Recorder::new();
    let fixed = FixedLengthFrameDecoder::new(4).unwrap();
    let ch = channel_with(ByteToMessageDecoder::new(TailAtEof(fixed)), &rec);
    inbound(&ch, b"abcdef");
    rec.take();
    ch.pipeline()
        .fire_user_event_triggered(Box::new(ChannelInputShutdown));
    assert_eq!(
        rec.take(),
        [
            read(b"ef"),
            Ev::ReadComplete,
            Ev::Event("input-shutdown".into())
        ]
    );
    ch.close();
    assert_eq!(
        rec.take(),
        [Ev::Inactive],
        "no second final decode, no second <eof>"
    );
}

#[test]
fn final_decode_on_an_empty_cumulation_still_calls_decode_last() {
    let rec = Recorder::new();
    let fixed = FixedLengthFrameDecoder::new(2).unwrap();
    let ch = channel_with(ByteToMessageDecoder::new(TailAtEof(fixed)), &rec);
    inbound(&ch, b"ab");
    rec.take();
    ch.close();
    assert_eq!(rec.take(), [read(b"<eof>"), Ev::ReadComplete, Ev::Inactive]);
}

#[test]
fn without_auto_read_a_burst_that_yields_no_frame_asks_for_another_read() {
    let options = ChannelOptions {
        auto_read: false,
        ..ChannelOptions::default()
    };
    let ch = EmbeddedChannel::unregistered(options);
    let counter = Rc::new(ReadCounter::default());
    let rec = Recorder::new();
    let pipeline = ch.pipeline();
    pipeline.add_last("reads", counter.clone()).unwrap();
    pipeline.add_last("codec", lines(64)).unwrap();
    pipeline.add_last("recorder", rec.clone()).unwrap();
    ch.register();
    let before = counter.reads();
    inbound(&ch, b"part");
    assert_eq!(counter.reads(), before + 1, "partial frame: read more");
    inbound(&ch, b"ial\n");
    assert_eq!(
        counter.reads(),
        before + 1,
        "a frame was fired: the application decides"
    );
    assert_eq!(rec.take_reads(), [read(b"partial")]);
}

#[test]
fn buffered_len_reports_unconsumed_bytes() {
    let decoder = Rc::new(fixed(4));
    let ch = EmbeddedChannel::new(vec![("codec", decoder.clone())]);
    inbound(&ch, b"abcdef");
    assert_eq!(decoder.buffered_len(), 2);
    assert_eq!(decoder.with_decoder(|d| d.frame_length()), 4);
}
