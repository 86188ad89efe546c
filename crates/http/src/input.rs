//! [`Input`]: what the request decoder reads from, either the cumulation buffer (`BytesMut`)
//! or a read's `Bytes` straight from the socket when nothing is buffered, so a read holding
//! whole requests is decoded without copying it. Taken pieces are zero-copy views either way.

use bytes::{Buf, Bytes, BytesMut};

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
