//! [`Input`]: what the request decoder reads from, either the cumulation buffer (`BytesMut`)
//! or a read's `Bytes` straight from the socket when nothing is buffered, so a read holding
//! whole requests is decoded without copying it. Taken pieces are zero-copy views either way.

use bytes::{Buf, Bytes, BytesMut};
use netloop_transport::append_to_cumulation;

use crate::error::HttpError;

/// A byte source the decoder consumes from the front.
pub trait Input {
    /// The unconsumed bytes.
    fn bytes(&self) -> &[u8];
    /// Removes the first `n` bytes and returns them (a view, no copy).
    fn take(&mut self, n: usize) -> Bytes;
    /// Removes the first `n` bytes.
    fn skip(&mut self, n: usize);
}

impl Input for BytesMut {
    fn bytes(&self) -> &[u8] {
        self
    }
    fn take(&mut self, n: usize) -> Bytes {
        self.split_to(n).freeze()
    }
    fn skip(&mut self, n: usize) {
        self.advance(n);
    }
}

impl Input for Bytes {
    fn bytes(&self) -> &[u8] {
        self
    }
    fn take(&mut self, n: usize) -> Bytes {
        self.split_to(n)
    }
    fn skip(&mut self, n: usize) {
        self.advance(n);
    }
}

/// A decoder that reads an [`Input`] into its events (the request and the response decoder).
pub(crate) trait InputDecoder {
    type Event;
    fn decode_input(
        &mut self,
        input: &mut impl Input,
        out: &mut Vec<Self::Event>,
    ) -> Result<(), HttpError>;
}

impl InputDecoder for crate::decoder::RequestDecoder {
    type Event = crate::decoder::Decoded;
    fn decode_input(
        &mut self,
        input: &mut impl Input,
        out: &mut Vec<Self::Event>,
    ) -> Result<(), HttpError> {
        self.decode(input, out)
    }
}

impl InputDecoder for crate::response_decoder::ResponseDecoder {
    type Event = crate::response_decoder::DecodedResponse;
    fn decode_input(
        &mut self,
        input: &mut impl Input,
        out: &mut Vec<Self::Event>,
    ) -> Result<(), HttpError> {
        self.decode(input, out)
    }
}

/// Decodes `bytes` after what `cumulation` holds: straight from the read's `Bytes` when
/// nothing is buffered (no copy; what the decoder leaves is kept in `cumulation`), else after
/// appending them.
pub(crate) fn decode_after<D: InputDecoder>(
    decoder: &mut D,
    cumulation: &mut BytesMut,
    bytes: Bytes,
    out: &mut Vec<D::Event>,
) -> Result<(), HttpError> {
    if cumulation.is_empty() {
        let mut input = bytes;
        let r = decoder.decode_input(&mut input, out);
        if !input.is_empty() {
            append_to_cumulation(cumulation, &input);
        }
        r
    } else {
        append_to_cumulation(cumulation, &bytes);
        decoder.decode_input(cumulation, out)
    }
}
