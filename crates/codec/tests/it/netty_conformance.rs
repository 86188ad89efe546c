//! Issue 10: decoder and idle-state behaviours Netty 4.1 documents, and the Netty API added
//! for them (context-aware decoding with self-removal, observeOutput, timeout resets).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use netloop_codec::bytes::{Bytes, BytesMut};
use netloop_codec::{
    ByteToMessageDecoder, CodecError, FrameDecoder, IdleConfig, IdleState, IdleStateEvent,
    IdleStateHandler, IdleStateTracker, LineBasedFrameDecoder, OutputState,
};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, EmbeddedChannel, HandlerResult, Message,
};

type Log = Rc<RefCell<Vec<String>>>;

/// Records reads as text and passes nothing on.
struct Sink(&'static str, Log);
impl ChannelHandler for Sink {
    fn channel_read(&self, _: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let text = String::from_utf8_lossy(msg.as_bytes().unwrap()).into_owned();
        self.1.borrow_mut().push(format!("{}:{text}", self.0));
        Ok(())
    }
}

/// Emits everything it has as one frame (an empty frame from an empty buffer).
struct Everything;
impl FrameDecoder for Everything {
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        Ok(Some(buf.split().freeze()))
    }
}

#[test]
fn decode_last_does_not_decode_an_empty_cumulation() {
    let log: Log = Rc::default();
    let ch = EmbeddedChannel::new(vec![
        ("dec", Rc::new(ByteToMessageDecoder::new(Everything))),
        ("sink", Rc::new(Sink("sink", log.clone()))),
    ]);
    ch.write_inbound(Bytes::from_static(b"abc"));
    ch.close();
    assert_eq!(*log.borrow(), ["sink:abc"], "no empty frame at close");
    let mut d = Everything;
    assert_eq!(d.decode_last(&mut BytesMut::new()).unwrap(), None);
}

/// Lines until "UPGRADE"; then replaces itself with a raw sink: the rest of the bytes
/// (already received in the same read) go to the new handler.
struct Upgrading(LineBasedFrameDecoder, Log);
impl FrameDecoder for Upgrading {
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        self.0.decode(buf)
    }
    fn decode_in_pipeline(
        &mut self,
        ctx: &ChannelHandlerContext,
        buf: &mut BytesMut,
    ) -> Result<Option<Bytes>, CodecError> {
        let frame = self.0.decode(buf)?;
        if frame.as_deref() == Some(b"UPGRADE") {
            ctx.pipeline()
                .replace(ctx.name(), "raw", Sink("raw", self.1.clone()))
                .expect("replace");
        }
        Ok(frame)
    }
}

#[test]
fn a_decoder_can_replace_itself_mid_decode_and_hand_the_rest_of_its_cumulation_on() {
    let log: Log = Rc::default();
    let ch = EmbeddedChannel::new(vec![
        (
            "lines",
            Rc::new(ByteToMessageDecoder::new(Upgrading(
                LineBasedFrameDecoder::new(64),
                log.clone(),
            ))),
        ),
        ("sink", Rc::new(Sink("sink", log.clone()))),
    ]);
    ch.write_inbound(Bytes::from_static(
        b"hello\nUPGRADE\nbinary\x00\x01\nstill raw",
    ));
    ch.write_inbound(Bytes::from_static(b"+more"));
    assert_eq!(ch.pipeline().names(), ["raw", "sink"]);
    assert_eq!(
        *log.borrow(),
        [
            "sink:hello",
            "raw:UPGRADE",
            "raw:binary\u{0}\u{1}\nstill raw",
            "raw:+more"
        ]
    );
    ch.check_exception().unwrap();
}

/// Removes itself after the first frame, from inside the decoder.
struct OneLineThenGone(LineBasedFrameDecoder);
impl FrameDecoder for OneLineThenGone {
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        self.0.decode(buf)
    }
    fn decode_in_pipeline(
        &mut self,
        ctx: &ChannelHandlerContext,
        buf: &mut BytesMut,
    ) -> Result<Option<Bytes>, CodecError> {
        let frame = self.0.decode(buf)?;
        if frame.is_some() {
            ctx.pipeline().remove(ctx.name()).expect("remove");
        }
        Ok(frame)
    }
}

#[test]
fn a_decoder_that_removes_itself_fires_its_frame_then_the_undecoded_bytes() {
    let log: Log = Rc::default();
    let ch = EmbeddedChannel::new(vec![
        (
            "first-line",
            Rc::new(ByteToMessageDecoder::new(OneLineThenGone(
                LineBasedFrameDecoder::new(64),
            ))),
        ),
        ("sink", Rc::new(Sink("sink", log.clone()))),
    ]);
    ch.write_inbound(Bytes::from_static(b"GET\nrest\nof it"));
    assert_eq!(*log.borrow(), ["sink:GET", "sink:rest\nof it"]);
    assert_eq!(ch.pipeline().names(), ["sink"]);
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn idle_events(ch: &EmbeddedChannel, to: u64) -> Vec<IdleStateEvent> {
    let now = ch.now();
    ch.advance_time(ms(to) - now);
    std::iter::from_fn(|| ch.read_user_event())
        .map(|e| *e.downcast::<IdleStateEvent>().unwrap())
        .collect()
}

fn writer_only() -> IdleConfig {
    IdleConfig {
        writer: Some(ms(100)),
        ..IdleConfig::default()
    }
}

#[test]
fn with_observe_output_a_write_still_in_progress_is_not_writer_idle() {
    let observing = EmbeddedChannel::new(vec![(
        "idle",
        Rc::new(IdleStateHandler::new(writer_only()).observe_output(true)),
    )]);
    let plain = EmbeddedChannel::new(vec![(
        "idle",
        Rc::new(IdleStateHandler::new(writer_only())),
    )]);
    let writer_idle = |first| IdleStateEvent {
        state: IdleState::WriterIdle,
        first,
    };
    for ch in [&observing, &plain] {
        // A write that does not complete (never flushed): pending output.
        ch.channel().write(Bytes::from_static(b"slow"));
        assert_eq!(
            idle_events(ch, 100),
            [writer_idle(true)],
            "the first event fires"
        );
        ch.channel().write(Bytes::from_static(b"progress"));
    }
    assert_eq!(
        idle_events(&observing, 200),
        [],
        "output changed since the last check"
    );
    assert_eq!(idle_events(&plain, 200), [writer_idle(false)]);
    assert_eq!(
        idle_events(&observing, 300),
        [writer_idle(false)],
        "no change: idle"
    );
}

#[test]
fn observe_output_counts_flush_progress_of_a_partly_written_message() {
    let mut t = IdleStateTracker::new(writer_only(), ms(0));
    t.set_observe_output(true);
    let out = |progress| OutputState {
        pending: 1000,
        progress,
    };
    assert_eq!(t.poll_with_output(ms(100), out(0)).len(), 1, "first");
    assert!(
        t.poll_with_output(ms(200), out(10)).is_empty(),
        "10 bytes went out"
    );
    assert!(t.poll_with_output(ms(300), out(20)).is_empty(), "10 more");
    assert_eq!(t.poll_with_output(ms(400), out(20)).len(), 1, "stalled");
}

#[test]
fn reset_read_and_write_timeouts_postpone_idle_events_by_a_full_period() {
    let handler = Rc::new(IdleStateHandler::new(IdleConfig {
        reader: Some(ms(100)),
        writer: Some(ms(100)),
        all: None,
    }));
    let ch = EmbeddedChannel::new(vec![("idle", handler.clone())]);
    assert_eq!(idle_events(&ch, 60), []);
    handler.reset_read_timeout();
    assert_eq!(
        idle_events(&ch, 100),
        [IdleStateEvent {
            state: IdleState::WriterIdle,
            first: true
        }]
    );
    handler.reset_write_timeout();
    assert_eq!(
        idle_events(&ch, 160),
        [IdleStateEvent {
            state: IdleState::ReaderIdle,
            first: true
        }]
    );
    assert_eq!(idle_events(&ch, 199), []);
    assert_eq!(
        idle_events(&ch, 200),
        [IdleStateEvent {
            state: IdleState::WriterIdle,
            first: false
        }]
    );
}
