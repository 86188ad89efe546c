//! [`Body`]: reading one framed message body, by `Content-Length` or chunked, the same way for
//! the request decoder and the response decoder (each gives its message type through
//! [`Carrier`], so the state machine is compiled for each, no dispatch per byte).
//!
//! A body is aggregated into its message (the message is held meanwhile) or streamed: the
//! message goes out with `streaming` set and the body follows as [`HttpContent`] pieces with
//! the message's id, the last one with `last` set (and a chunked body's trailers). A
//! `Content-Length` body is streamed at once when its length exceeds the aggregation limit; a
//! chunked body when it grows past it (the message and the bytes so far are then delivered).
//!
//! Ground rules:
//! - What a body yields depends only on the bytes, not on how they were split into reads,
//!   except the sizes of streamed pieces.
//! - Buffering is bounded: an aggregated `Content-Length` body waits in the input up to the
//!   aggregation limit; a chunked one is joined here up to it (its one copy). The body size
//!   limit is the caller's for a `Content-Length` (checked when the head is read) and the
//!   chunked decoder's for a chunked body.
//! - An error leaves the body unfinished: the caller fails its decoder.

use bytes::{Bytes, BytesMut};

use crate::chunked::{ChunkedBody, Piece};
use crate::error::HttpError;
use crate::input::Input;
use crate::message::{HeaderList, HttpContent};

/// A message whose body a [`Body`] reads (a request, or a response), and how a decoder yields
/// it and the pieces of its body.
pub(crate) trait Carrier: Sized {
    /// One result of the decoder.
    type Decoded;
    /// The message as a result: whole, or its head when `streaming` is set.
    fn into_decoded(self) -> Self::Decoded;
    /// A piece of a streamed body as a result.
    fn piece(content: HttpContent) -> Self::Decoded;
    /// Fills in the aggregated body and its trailers.
    fn set_body(&mut self, body: Bytes, trailers: HeaderList);
    /// Marks the body as streamed.
    fn set_streaming(&mut self);
}

/// `msg` marked as streamed, as a result (its body follows as pieces).
pub(crate) fn streamed<M: Carrier>(mut msg: M) -> M::Decoded {
    msg.set_streaming();
    msg.into_decoded()
}

/// A piece of the streamed body of message `id`, as a result.
pub(crate) fn piece<M: Carrier>(
    id: u64,
    data: Bytes,
    last: bool,
    trailers: HeaderList,
) -> M::Decoded {
    M::piece(HttpContent {
        request_id: Some(id),
        data,
        last,
        trailers,
    })
}

#[derive(Debug)]
enum Coding<M> {
    /// A `Content-Length` body: bytes left; the message while it is being aggregated.
    Length { left: u64, pending: Option<M> },
    /// A chunked body; the message and the bytes so far while it is being aggregated.
    Chunked {
        body: ChunkedBody,
        pending: Option<(M, BytesMut)>,
    },
}

/// The body of one message being read.
#[derive(Debug)]
pub(crate) struct Body<M> {
    id: u64,
    keep_alive: bool,
    aggregate_limit: usize,
    coding: Coding<M>,
}

impl<M: Carrier> Body<M> {
    /// A body of `len` bytes for `msg` (number `id`); when `len` exceeds `aggregate_limit`
    /// the message is pushed to `out` now, streaming.
    pub(crate) fn with_length(
        id: u64,
        keep_alive: bool,
        len: u64,
        msg: M,
        aggregate_limit: usize,
        out: &mut Vec<M::Decoded>,
    ) -> Self {
        let pending = if len > aggregate_limit as u64 {
            out.push(streamed(msg));
            None
        } else {
            Some(msg)
        };
        Body {
            id,
            keep_alive,
            aggregate_limit,
            coding: Coding::Length { left: len, pending },
        }
    }

    /// A chunked body for `msg` (number `id`), decoded by `chunked`; when `aggregate_limit`
    /// is 0 the message is pushed to `out` now, streaming.
    pub(crate) fn chunked(
        id: u64,
        keep_alive: bool,
        chunked: ChunkedBody,
        msg: M,
        aggregate_limit: usize,
        out: &mut Vec<M::Decoded>,
    ) -> Self {
        let pending = if aggregate_limit == 0 {
            out.push(streamed(msg));
            None
        } else {
            Some((msg, BytesMut::new()))
        };
        Body {
            id,
            keep_alive,
            aggregate_limit,
            coding: Coding::Chunked {
                body: chunked,
                pending,
            },
        }
    }

    /// The number of the message this body belongs to.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The message allows keeping the connection alive (what follows the body).
    pub(crate) fn keep_alive(&self) -> bool {
        self.keep_alive
    }

    /// Reads what `input` holds of the body, pushing results to `out`: true when the body
    /// ended (its whole message or its last piece was pushed), false when it needs more input.
    pub(crate) fn read(
        &mut self,
        input: &mut impl Input,
        out: &mut Vec<M::Decoded>,
    ) -> Result<bool, HttpError> {
        let id = self.id;
        match &mut self.coding {
            Coding::Length { left, pending } => {
                let available = input.bytes().len() as u64;
                if pending.is_some() && available < *left {
                    return Ok(false);
                }
                if let Some(mut msg) = pending.take() {
                    msg.set_body(input.take(*left as usize), Vec::new());
                    out.push(msg.into_decoded());
                    return Ok(true);
                }
                if available == 0 {
                    return Ok(false);
                }
                let n = available.min(*left);
                *left -= n;
                let last = *left == 0;
                out.push(piece::<M>(id, input.take(n as usize), last, Vec::new()));
                Ok(last)
            }
            Coding::Chunked { body, pending } => loop {
                let Some(step) = body.step(input)? else {
                    return Ok(false);
                };
                match (step, pending.take()) {
                    (Piece::Data(data), Some((msg, mut so_far))) => {
                        if so_far.len() + data.len() <= self.aggregate_limit {
                            so_far.extend_from_slice(&data);
                            *pending = Some((msg, so_far));
                        } else {
                            out.push(streamed(msg));
                            if !so_far.is_empty() {
                                out.push(piece::<M>(id, so_far.freeze(), false, Vec::new()));
                            }
                            out.push(piece::<M>(id, data, false, Vec::new()));
                        }
                    }
                    (Piece::Data(data), None) => out.push(piece::<M>(id, data, false, Vec::new())),
                    (Piece::End(trailers), Some((mut msg, so_far))) => {
                        msg.set_body(so_far.freeze(), trailers);
                        out.push(msg.into_decoded());
                        return Ok(true);
                    }
                    (Piece::End(trailers), None) => {
                        out.push(piece::<M>(id, Bytes::new(), true, trailers));
                        return Ok(true);
                    }
                }
            },
        }
    }
}
