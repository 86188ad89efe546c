//! [`ResponseBatch`]: whole responses written with a void promise, kept by the codec until the
//! next flush (or any other operation) and then written as one message: a client that
//! pipelines gets the responses to one read's requests through the pipeline and the outbound
//! buffer once, not once each.
//!
//! Ground rules:
//! - Only bytes nobody waits on go in (a void promise that fires nothing): merging them
//!   changes no outcome anybody can see.
//! - The codec releases the batch before anything else it passes towards the head (a write,
//!   a flush, a close...), so the order on the wire is the order of the writes.
//! - What it holds counts toward the channel's pending outbound bytes as the outbound buffer
//!   would count the messages (their bytes plus 96 each): writability is unchanged.
//! - At the flush, the batch and the flush go together (`write_and_flush_now`): straight to
//!   the socket when no handler before the codec takes writes or flushes and nothing is
//!   queued, as with one response per flush (no pipelining), where the response then never
//!   becomes an outbound buffer entry. One response in the batch is kept as it is (no copy).

use std::cell::{Cell, RefCell};

use bytes::{Bytes, BytesMut};

/// What the outbound buffer counts per message on top of its bytes.
const MESSAGE_OVERHEAD: usize = 96;

#[derive(Default)]
enum Held {
    #[default]
    Empty,
    One(Bytes),
    Many(BytesMut),
}

/// Responses waiting to be written together (see the module's rules).
#[derive(Default)]
pub(crate) struct ResponseBatch {
    held: RefCell<Held>,
    /// The size the held responses count for.
    counted: Cell<usize>,
}

impl ResponseBatch {
    /// Adds a whole response's bytes.
    pub(crate) fn push(&self, bytes: Bytes) {
        self.counted
            .set(self.counted.get() + bytes.len() + MESSAGE_OVERHEAD);
        let mut held = self.held.borrow_mut();
        *held = match std::mem::take(&mut *held) {
            Held::Empty => Held::One(bytes),
            Held::One(first) => {
                let mut all = BytesMut::with_capacity(8 * (first.len() + bytes.len()));
                all.extend_from_slice(&first);
                all.extend_from_slice(&bytes);
                Held::Many(all)
            }
            Held::Many(mut all) => {
                all.extend_from_slice(&bytes);
                Held::Many(all)
            }
        };
    }

    /// True when nothing is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.counted.get() == 0
    }

    /// The size the held responses count for in the channel's pending outbound bytes.
    pub(crate) fn counted(&self) -> usize {
        self.counted.get()
    }

    /// Everything held, as one message's bytes (`None`: nothing); the batch is empty after.
    pub(crate) fn take(&self) -> Option<Bytes> {
        self.counted.set(0);
        match std::mem::take(&mut *self.held.borrow_mut()) {
            Held::Empty => None,
            Held::One(bytes) => Some(bytes),
            Held::Many(all) => Some(all.freeze()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_come_out_joined_in_order_and_counted_as_messages() {
        let batch = ResponseBatch::default();
        assert!(batch.take().is_none());
        batch.push(Bytes::from_static(b"one"));
        assert_eq!(batch.counted(), 3 + MESSAGE_OVERHEAD);
        let alone = batch.take().unwrap();
        assert_eq!(&alone[..], b"one");
        assert!(batch.is_empty());
        for part in [&b"a"[..], b"bc", b"def"] {
            batch.push(Bytes::copy_from_slice(part));
        }
        assert_eq!(batch.counted(), 6 + 3 * MESSAGE_OVERHEAD);
        assert_eq!(&batch.take().unwrap()[..], b"abcdef");
        assert_eq!((batch.counted(), batch.take()), (0, None));
    }
}
