//! Small reads without an allocation per message: records of a small read are taken into the
//! thread's scratch buffer and their plaintext leaves as bytes carved from the transport's
//! receive chunk (`netloop_transport::chunk::copy`), where a fresh buffer per read would cost a
//! `malloc` and a `free` per echoed message. Large reads keep their own buffer (their
//! plaintext reaches JS without a copy).
//!
//! Ground rules: the scratch is one per thread (no memory per connection), borrowed only for
//! the decryption of one read, never across user code; a nested borrow (not expected) gets a
//! buffer of its own.

use std::cell::RefCell;

use bytes::{Bytes, BytesMut};

/// The largest read (ciphertext, with the start of a record left from the previous read)
/// taken through the scratch buffer: the largest copy the transport's chunk carves.
pub(crate) const SMALL_READ: usize = 4096;

thread_local! {
    static SCRATCH: RefCell<BytesMut> = RefCell::new(BytesMut::new());
}

/// Runs `f` on the thread's scratch buffer, empty.
pub(crate) fn with_scratch<R>(f: impl FnOnce(&mut BytesMut) -> R) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut scratch) => {
            scratch.clear();
            let r = f(&mut scratch);
            scratch.clear();
            r
        }
        Err(_) => f(&mut BytesMut::new()),
    })
}

/// A copy of `plain` that outlives the scratch buffer, carved from the transport's chunk.
pub(crate) fn carve(plain: &[u8]) -> Bytes {
    if plain.is_empty() {
        return Bytes::new();
    }
    netloop_transport::chunk::copy(plain)
}
