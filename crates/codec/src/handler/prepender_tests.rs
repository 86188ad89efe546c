//! Behaviour of the `LengthFieldPrepender` handler on `EmbeddedChannel`s, and the round trip
//! prepender → length-field decoder.

use std::rc::Rc;

use bytes::{Bytes, BytesMut};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, ChannelPromise, EmbeddedChannel, HandlerResult, Message,
    TransportError,
};

use super::recorder::{read, Ev, Recorder};
use crate::testing::XorShift;
use crate::{
    ByteToMessageDecoder, LengthFieldBasedFrameDecoder, LengthFieldConfig, LengthFieldPrepender,
    GATHER_THRESHOLD,
};

fn prepender_channel(width: usize) -> EmbeddedChannel {
    let prepender = LengthFieldPrepender::new(width).unwrap();
    EmbeddedChannel::new(vec![("prepender", Rc::new(prepender))])
}

fn outbound_bytes(ch: &EmbeddedChannel) -> Vec<Bytes> {
    std::iter::from_fn(|| ch.read_outbound())
        .map(|m| m.into_bytes().expect("bytes written"))
        .collect()
}

#[test]
fn a_small_message_goes_out_as_one_message_with_its_header() {
    let ch = prepender_channel(2);
    ch.write_outbound(Bytes::from_static(b"abc"));
    assert_eq!(outbound_bytes(&ch), [Bytes::from_static(b"\x00\x03abc")]);
}

#[test]
fn a_large_message_goes_out_as_header_then_the_same_body_without_a_copy() {
    let ch = prepender_channel(4);
    let body = Bytes::from(vec![7u8; GATHER_THRESHOLD]);
    let future = ch.channel().write_future(body.clone());
    ch.channel().flush();
    ch.run_pending_tasks();
    let out = outbound_bytes(&ch);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0], (GATHER_THRESHOLD as u32).to_be_bytes()[..]);
    assert_eq!(out[1].as_ptr(), body.as_ptr(), "the body is not copied");
    assert!(
        matches!(future.result(), Some(Ok(()))),
        "the caller's promise completes"
    );
}

#[test]
fn an_unencodable_message_fails_its_write_promise_with_err_encoder() {
    let ch = prepender_channel(1);
    for len in [256, GATHER_THRESHOLD + 1] {
        let future = ch.channel().write_future(vec![0u8; len]);
        ch.channel().flush();
        ch.run_pending_tasks();
        let error = future.result().expect("completed").unwrap_err();
        assert_eq!(error.code(), "ERR_ENCODER", "length {len}");
        assert_eq!(ch.outbound_len(), 0, "nothing written for length {len}");
    }
    assert!(ch.check_exception().is_ok(), "the promise took the error");
}

#[test]
fn an_unencodable_message_written_without_a_promise_reaches_exception_caught() {
    let ch = prepender_channel(1);
    assert!(!ch.write_outbound(vec![0u8; 300]));
    assert_eq!(ch.check_exception().unwrap_err().code(), "ERR_ENCODER");
}

#[test]
fn messages_that_are_not_bytes_pass_through_unencoded() {
    let ch = prepender_channel(2);
    ch.write_outbound(Message::user(5u32));
    let msg = ch.read_outbound().expect("written");
    assert_eq!(msg.downcast::<u32>().ok(), Some(5));
}

/// Fails every write shorter than 8 bytes (so it refuses a prepender's bare header).
struct RefuseShortWrites;

impl ChannelHandler for RefuseShortWrites {
    fn write(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        promise: ChannelPromise,
    ) -> HandlerResult {
        if msg.as_bytes().is_some_and(|b| b.len() < 8) {
            return Err(TransportError::UnsupportedMessage("short write"));
        }
        ctx.write_with(msg, promise);
        Ok(())
    }
}

#[test]
fn a_refused_header_fails_the_write_and_its_body_is_not_written() {
    let ch = EmbeddedChannel::new(vec![
        ("refuse", Rc::new(RefuseShortWrites)),
        ("prepender", Rc::new(LengthFieldPrepender::new(2).unwrap())),
    ]);
    let future = ch.channel().write_future(vec![1u8; GATHER_THRESHOLD]);
    ch.channel().flush();
    ch.run_pending_tasks();
    let error = future.result().expect("completed").unwrap_err();
    assert_eq!(error.code(), "ERR_UNSUPPORTED_MESSAGE");
    assert_eq!(ch.outbound_len(), 0, "no body without its header");
}

#[test]
fn prepender_then_decoder_round_trip_through_two_embedded_channels() {
    let sender = prepender_channel(4);
    let mut cfg = LengthFieldConfig::new(1 << 20, 0, 4);
    cfg.initial_bytes_to_strip = 4;
    let decoder = ByteToMessageDecoder::new(LengthFieldBasedFrameDecoder::new(cfg).unwrap());
    let rec = Recorder::new();
    let receiver = super::recorder::channel_with(decoder, &rec);

    let mut rng = XorShift::new(7);
    let sizes = [
        0,
        1,
        5,
        300,
        GATHER_THRESHOLD - 1,
        GATHER_THRESHOLD,
        3 * GATHER_THRESHOLD,
    ];
    let messages: Vec<Vec<u8>> = sizes
        .iter()
        .map(|&n| (0..n).map(|_| rng.next_u64() as u8).collect())
        .collect();
    for m in &messages {
        sender.write_outbound(m.clone());
    }
    let mut wire = BytesMut::new();
    for chunk in outbound_bytes(&sender) {
        wire.extend_from_slice(&chunk);
    }
    // Deliver the stream cut at arbitrary points.
    let mut wire = wire.freeze();
    while !wire.is_empty() {
        let take = 1 + rng.below(wire.len().min(1500));
        receiver.write_inbound(wire.split_to(take));
    }
    let expected: Vec<Ev> = messages.iter().map(|m| read(m)).collect();
    assert_eq!(rec.take_reads(), expected);
    assert!(receiver.check_exception().is_ok());
}
