//! What the hub has to tell JS: event records, the bytes they point into, and the texts of
//! native errors. Filled by the JS-handler adapters and the hub while the loop runs; taken
//! whole by a delivery.
//!
//! Ground rules: loop thread only; no borrow of an `Outbox` is held while JS runs.

use bytes::Bytes;
use netloop_transport::TransportError;

use crate::record::RECORD;
use crate::token::JsError;

#[derive(Default)]
pub struct Outbox {
    pub records: Vec<f64>,
    pub bytes: Vec<u8>,
    pub strings: Vec<String>,
    /// Large reads handed to JS as Buffers of their own, without a copy (a read record's `c`
    /// is its index here plus one; 0: its bytes are in `bytes`).
    pub segments: Vec<Bytes>,
    /// Which `segments` (by index) went to `autoRelease` handlers: their Buffers are detached
    /// when the delivery's call returns.
    pub released_segments: Vec<usize>,
    /// How many of `bytes` are reads of `autoRelease` handlers: when all are, the batch's
    /// Buffer is detached like a released segment.
    pub released_bytes: usize,
    /// The messages of the reads JS may give back (`held.rs`), by offset in `bytes`.
    pub kept: Vec<(usize, netloop_transport::Message)>,
    /// Counts the batches taken: a stand-in that pushed a record in this epoch knows JS has
    /// not seen it yet (see `adapter`).
    pub epoch: u64,
}

/// How an error travels to JS: `(what, value)` for the record's `b`/`c` or `a` fields.
pub enum ErrorRef {
    /// Index of the code in `strings` (the message follows it).
    Native(f64),
    /// Token of a JS error object.
    Js(f64),
}

/// The `code` JS sees for a native error.
fn js_code(e: &TransportError) -> String {
    match e {
        // Node reports a connect timeout as ETIMEDOUT.
        TransportError::ConnectTimeout => "ETIMEDOUT".to_string(),
        other => other.code().to_string(),
    }
}

/// Most bytes an empty outbox reserves ahead (sized after the batch before it).
const MAX_RESERVED_BYTES: usize = 1 << 20;

impl Outbox {
    /// Takes what the outbox holds, leaving it empty with room for a batch like this one (so
    /// that the next batch does not grow its vectors step by step, copying as it goes): in
    /// the vectors of `spare` (a batch delivered before, cleared) when there is one.
    pub fn take(&mut self, spare: Option<Outbox>) -> Outbox {
        let mut next = spare.unwrap_or_default();
        debug_assert!(next.records.is_empty() && next.bytes.is_empty() && next.kept.is_empty());
        next.records.reserve(self.records.len());
        next.bytes.reserve(self.bytes.len().min(MAX_RESERVED_BYTES));
        next.released_bytes = 0;
        next.epoch = self.epoch + 1;
        std::mem::replace(self, next)
    }

    /// Empties a delivered batch for reuse: its vectors keep their room (the bytes' up to
    /// [`MAX_RESERVED_BYTES`]), what they held is dropped.
    pub fn clear(&mut self) {
        self.records.clear();
        if self.bytes.capacity() > MAX_RESERVED_BYTES {
            self.bytes = Vec::new();
        }
        self.bytes.clear();
        self.strings.clear();
        self.segments.clear();
        self.released_segments.clear();
        self.released_bytes = 0;
        self.kept.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub fn push(&mut self, kind: u32, channel: f64, ctx: f64, a: f64, b: f64, c: f64) {
        self.records
            .extend_from_slice(&[f64::from(kind), channel, ctx, a, b, c]);
    }

    /// Appends bytes to the arena, `released` if JS gives them up when its call returns (a
    /// read for an `autoRelease` handler); returns their offset.
    pub fn put_bytes_of(&mut self, data: &Bytes, released: bool) -> f64 {
        let off = self.bytes.len();
        self.bytes.extend_from_slice(data);
        if released {
            self.released_bytes += data.len();
        }
        off as f64
    }

    /// Keeps a large read for JS as a Buffer of its own, `released` as in
    /// [`Self::put_bytes_of`]; returns the record's `c` for it.
    pub fn put_segment(&mut self, data: Bytes, released: bool) -> f64 {
        if released {
            self.released_segments.push(self.segments.len());
        }
        self.segments.push(data);
        self.segments.len() as f64
    }

    /// True if every byte of the arena belongs to reads JS gives up when its call returns.
    pub fn arena_released(&self) -> bool {
        !self.bytes.is_empty() && self.released_bytes == self.bytes.len()
    }

    /// Records an error for JS: a JS error keeps its identity, a native one becomes four
    /// strings: its code and message, then its cause's code and message (empty without one:
    /// `ERR_CHANNEL_CLOSED` carries the error that closed the channel as its cause).
    pub fn put_error(&mut self, hub: u32, e: &TransportError) -> ErrorRef {
        if let Some(js) = e
            .foreign_source()
            .and_then(|s| s.downcast_ref::<JsError>())
            .and_then(|j| j.token_for(hub))
        {
            return ErrorRef::Js(js);
        }
        let at = self.strings.len();
        self.strings.push(js_code(e));
        self.strings.push(e.to_string());
        match e.cause() {
            Some(c) => {
                self.strings.push(js_code(c));
                self.strings.push(c.to_string());
            }
            None => {
                self.strings.push(String::new());
                self.strings.push(String::new());
            }
        }
        ErrorRef::Native(at as f64)
    }

    pub fn records_len(&self) -> usize {
        self.records.len() / RECORD
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spare_batch_lends_its_vectors_to_the_next_take() {
        let mut out = Outbox::default();
        out.push(1, 2.0, 0.0, 0.0, 4.0, 0.0);
        out.bytes.extend_from_slice(b"abcd");
        let mut first = out.take(None);
        assert_eq!(first.records_len(), 1);
        assert_eq!(out.epoch, 1);
        let (records, bytes) = (first.records.as_ptr(), first.bytes.as_ptr());
        first.clear();
        assert!(first.records.is_empty() && first.bytes.is_empty());
        out.push(1, 3.0, 0.0, 0.0, 0.0, 0.0);
        let second = out.take(Some(first));
        // The outbox now fills the spare's memory (no allocation), and the batch taken holds
        // what was pushed since.
        assert_eq!(out.records.as_ptr(), records);
        assert_eq!(out.bytes.as_ptr(), bytes);
        assert_eq!(out.epoch, 2);
        assert_eq!(second.records[1], 3.0);
    }

    #[test]
    fn a_cleared_batch_does_not_keep_more_than_the_reserve_limit_of_bytes() {
        let mut big = Outbox::default();
        big.bytes.resize(MAX_RESERVED_BYTES + 1, 7);
        big.strings.push("x".into());
        big.clear();
        assert_eq!(big.bytes.capacity(), 0);
        assert!(big.strings.is_empty());
    }
}
