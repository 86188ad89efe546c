//! The cumulation half of Netty's `ByteToMessageDecoder`: a buffer that collects inbound
//! bytes and runs a [`FrameDecoder`] over it until no more frames come out.
//!
//! Ground rules:
//! - Single-threaded: a `Cumulator` belongs to one channel and is driven on that channel's
//!   loop; nothing here is shared.
//! - Results keep the stream order: frames and errors are pushed to `out` in the order the
//!   decoder produced them.
//! - The decode loop stops when the buffer is empty or when a call consumed nothing. An
//!   error does not stop it if the decoder consumed bytes while failing, because a decoder
//!   leaves itself consistent after an error (see [`FrameDecoder`]).
//! - A decoder that returns a frame from a non-empty buffer without consuming any of it is
//!   broken: the frame is delivered, followed by a `CorruptedFrame` error, and the loop
//!   stops (Netty raises "did not read anything but decoded a message"). A frame returned
//!   by `decode_last` on an empty buffer is a legitimate end-of-stream message.
//! - Memory: frames are zero-copy `Bytes` views into the cumulation buffer. `BytesMut`
//!   reclaims the consumed front of its allocation when it is reserved again and the
//!   allocation is no longer shared, and otherwise starts a fresh allocation sized to the
//!   unread bytes, so a long stream of small frames does not grow the buffer (Netty's
//!   `discardSomeReadBytes`). A test below checks that bound. When it must grow, it grows
//!   by at least what it holds (`netloop_transport::append_to_cumulation`, the rule the
//!   HTTP, RESP and WebSocket decoders use too), so a frame arriving in many small reads
//!   while earlier frames are alive costs amortised O(1) copying per byte.

use bytes::{Bytes, BytesMut};
use netloop_transport::append_to_cumulation;

use crate::decoder::FrameDecoder;
use crate::error::CodecError;

/// What a decode pass yields, in stream order.
pub type DecodeOutput = Vec<Result<Bytes, CodecError>>;

/// Collects inbound bytes and decodes frames from them with `D`.
#[derive(Debug)]
pub struct Cumulator<D> {
    decoder: D,
    buf: BytesMut,
}

impl<D: FrameDecoder> Cumulator<D> {
    /// Creates an empty cumulation around `decoder`.
    pub fn new(decoder: D) -> Self {
        Cumulator {
            decoder,
            buf: BytesMut::new(),
        }
    }

    /// The decoder.
    pub fn decoder(&self) -> &D {
        &self.decoder
    }

    /// The decoder, mutably (e.g. to reconfigure it between reads).
    pub fn decoder_mut(&mut self) -> &mut D {
        &mut self.decoder
    }

    /// Bytes received but not yet consumed by the decoder.
    pub fn buffered(&self) -> &[u8] {
        &self.buf
    }

    /// Current capacity of the cumulation buffer (for diagnostics and tests).
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Appends `data` and decodes as many frames as possible (Netty's `channelRead`).
    pub fn feed(&mut self, data: &[u8], out: &mut DecodeOutput) {
        self.extend(data);
        while !self.buf.is_empty() {
            if !self.decode_step(false, out) {
                break;
            }
        }
    }

    /// Appends `data` without decoding; pair with [`decode_step`](Cumulator::decode_step).
    /// Grows the buffer as every netloop decoder does
    /// ([`append_to_cumulation`](netloop_transport::append_to_cumulation): at least doubling).
    pub fn extend(&mut self, data: &[u8]) {
        append_to_cumulation(&mut self.buf, data);
    }

    /// Decodes with `decode_last` because no more input will arrive (Netty's
    /// `channelInputClosed`), then drops whatever the decoder left, as Netty releases its
    /// cumulation. `decode_last` is called at least once, even on an empty buffer, so a
    /// decoder can emit a final message at end of stream.
    pub fn finish(&mut self, out: &mut DecodeOutput) {
        while self.decode_step(true, out) && !self.buf.is_empty() {}
        self.buf.clear();
    }

    /// Drops the unconsumed bytes (after a final decode done step by step).
    pub fn clear(&mut self) {
        self.buf.clear();
    }

    /// Removes and returns the unconsumed bytes, for forwarding to the next handler when
    /// the decoder is removed from a pipeline (Netty's `handlerRemoved`).
    pub fn take_leftover(&mut self) -> Bytes {
        self.buf.split().freeze()
    }

    /// Runs one decode call (`decode_last` when `last`) and pushes what it yields to `out`
    /// (at most a frame and an error); returns whether it consumed input, i.e. whether
    /// another call may yield more. For callers that act between frames, such as a pipeline
    /// handler that may be removed by the frame it just fired: [`feed`](Cumulator::feed) is
    /// `extend` then `decode_step(false, ..)` while it returns true and bytes remain, and
    /// [`finish`](Cumulator::finish) is `decode_step(true, ..)` at least once, while it
    /// returns true and bytes remain, then `clear`.
    pub fn decode_step(&mut self, last: bool, out: &mut DecodeOutput) -> bool {
        self.decode_step_with(out, |d, buf| {
            if last {
                d.decode_last(buf)
            } else {
                d.decode(buf)
            }
        })
    }

    /// As [`Cumulator::decode_step`], with `call` making the one decoder call (e.g. a
    /// context-aware variant).
    pub fn decode_step_with(
        &mut self,
        out: &mut DecodeOutput,
        call: impl FnOnce(&mut D, &mut BytesMut) -> Result<Option<Bytes>, CodecError>,
    ) -> bool {
        let before = self.buf.len();
        let result = call(&mut self.decoder, &mut self.buf);
        let consumed = before.saturating_sub(self.buf.len()) > 0;
        match result {
            Ok(Some(frame)) => {
                out.push(Ok(frame));
                // A frame from an empty buffer is a decoder's end-of-stream message.
                if !consumed && before > 0 {
                    out.push(Err(CodecError::corrupted(
                        "decoder returned a frame but did not read anything",
                    )));
                }
                consumed
            }
            Ok(None) => consumed,
            Err(error) => {
                out.push(Err(error));
                consumed
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames of exactly `n` bytes; never fails.
    struct Chunks(usize);

    impl FrameDecoder for Chunks {
        fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
            if buf.len() < self.0 {
                return Ok(None);
            }
            Ok(Some(buf.split_to(self.0).freeze()))
        }

        fn decode_last(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
            match self.decode(buf)? {
                Some(frame) => Ok(Some(frame)),
                None if buf.is_empty() => Ok(Some(Bytes::from_static(b"<eof>"))),
                None => Ok(Some(buf.split().freeze())),
            }
        }
    }

    fn frames(out: &DecodeOutput) -> Vec<&[u8]> {
        out.iter()
            .map(|r| r.as_ref().expect("frame").as_ref())
            .collect()
    }

    #[test]
    fn feed_decodes_every_complete_frame_and_keeps_the_rest() {
        let mut c = Cumulator::new(Chunks(2));
        let mut out = Vec::new();
        c.feed(b"abcde", &mut out);
        assert_eq!(frames(&out), [b"ab", b"cd"]);
        assert_eq!(c.buffered(), b"e");
    }

    #[test]
    fn take_leftover_returns_unconsumed_bytes_and_empties_the_buffer() {
        let mut c = Cumulator::new(Chunks(4));
        let mut out = Vec::new();
        c.feed(b"abcdef", &mut out);
        assert_eq!(c.take_leftover(), Bytes::from_static(b"ef"));
        assert!(c.buffered().is_empty());
    }

    #[test]
    fn finish_runs_decode_last_until_empty_then_drops_the_buffer() {
        let mut c = Cumulator::new(Chunks(4));
        let mut out = Vec::new();
        c.feed(b"abcdef", &mut out);
        c.finish(&mut out);
        assert_eq!(frames(&out), [&b"abcd"[..], &b"ef"[..]]);
        assert!(c.buffered().is_empty());
    }

    #[test]
    fn finish_calls_decode_last_once_on_an_empty_buffer() {
        let mut c = Cumulator::new(Chunks(4));
        let mut out = Vec::new();
        c.finish(&mut out);
        assert_eq!(frames(&out), [b"<eof>"]);
    }

    struct NoProgress;

    impl FrameDecoder for NoProgress {
        fn decode(&mut self, _buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
            Ok(Some(Bytes::from_static(b"x")))
        }
    }

    #[test]
    fn frame_without_consumption_is_reported_and_stops_the_loop() {
        let mut c = Cumulator::new(NoProgress);
        let mut out = Vec::new();
        c.feed(b"abc", &mut out);
        assert_eq!(out.len(), 2, "one frame then one error, no endless loop");
        assert!(out[0].is_ok());
        assert_eq!(out[1].as_ref().unwrap_err().code(), "ERR_CORRUPTED_FRAME");
    }

    /// Fails without consuming on the first call, consuming one byte on later calls.
    struct FailsOnce(bool);

    impl FrameDecoder for FailsOnce {
        fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
            if !self.0 {
                self.0 = true;
                return Err(CodecError::corrupted("first"));
            }
            Ok(Some(buf.split_to(1).freeze()))
        }
    }

    #[test]
    fn error_without_consumption_stops_this_pass_and_next_feed_resumes() {
        let mut c = Cumulator::new(FailsOnce(false));
        let mut out = Vec::new();
        c.feed(b"ab", &mut out);
        assert_eq!(out.len(), 1);
        assert!(out[0].is_err());
        out.clear();
        c.feed(b"c", &mut out);
        assert_eq!(frames(&out), [b"a", b"b", b"c"]);
    }

    #[test]
    fn long_stream_of_small_frames_keeps_capacity_bounded() {
        let mut c = Cumulator::new(Chunks(10));
        let chunk = [7u8; 1500]; // 150 frames per read
        let mut retained = std::collections::VecDeque::new();
        let mut max_capacity = 0;
        for _ in 0..10_000 {
            let mut out = Vec::new();
            c.feed(&chunk[..1497], &mut out); // misaligned reads keep a partial frame
                                              // The consumer holds on to recent frames for a while, as a pipeline might.
            retained.extend(out);
            while retained.len() > 300 {
                retained.pop_front();
            }
            max_capacity = max_capacity.max(c.capacity());
        }
        assert!(max_capacity <= 8 * 1024, "capacity grew to {max_capacity}");
    }

    #[test]
    fn large_frames_in_small_reads_copy_less_than_the_stream_while_earlier_frames_live() {
        // 64 KiB frames in 1500-byte reads, the last few frames still held by the consumer:
        // each growth copies the partial frame; growing by at least what is held keeps the
        // copying below one byte per byte received (growing by the read alone: about 1.3).
        let mut c = Cumulator::new(Chunks(64 << 10));
        let read = [3u8; 1500];
        let total = 8 << 20;
        let mut retained = std::collections::VecDeque::new();
        let mut copied = 0;
        let mut received = 0;
        while received < total {
            let (ptr, held) = (c.buffered().as_ptr(), c.buffered().len());
            let mut out = Vec::new();
            c.extend(&read);
            if c.buffered().as_ptr() != ptr {
                copied += held;
            }
            received += read.len();
            while c.decode_step(false, &mut out) {}
            retained.extend(out);
            while retained.len() > 4 {
                retained.pop_front();
            }
        }
        assert!(copied < total, "copied {copied} bytes for {total} received");
    }
}
