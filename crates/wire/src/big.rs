//! The Buffers of large writes JS passes with a batch of ops (`OpStream.big`), and the reads
//! the hub lent JS as Buffers of their own.
//!
//! A large write does not copy its bytes. Its message needs them until the socket has taken
//! them, which may be long after the batch (a peer that reads slowly):
//! - a Buffer that views a read the hub lent JS in the current delivery (an echo, a proxy:
//!   the handler writes back what it got) becomes a slice of that read's `Bytes`, a reference
//!   count and nothing JS has to keep alive;
//! - any other Buffer is kept alive by a napi reference until its message is dropped
//!   (crates/node's [`Chunk`]).
//!
//! The first matters for the collector: a strong napi reference is a root, so a Buffer held
//! by a slow socket survives young collections, is promoted, and its external memory then
//! drives full collections (under a 16 KiB stream the whole difference with node:net's
//! CPU per MB was V8's major marking). A lent read's Buffer instead dies young.
//!
//! Ground rules: loop thread only. The lent table is the thread's (`thread_context`): it holds
//! the reads of the deliveries running now, each tagged with its hub, and a hub forgets its own
//! when its delivery ends (a write made later, after an `await`, takes a reference). It is one
//! table per thread, not per hub, because a handler may write what it got to a channel of
//! another loop of the same thread, and a Buffer an `autoRelease` handler got is detached when
//! its call returns (`delivery.rs`): a napi reference taken to it meanwhile would point at
//! memory freed by the detach. Found in the table, it becomes a slice of the read instead.

use std::ops::Deref;

use bytes::Bytes;

/// The reads lent to JS during the deliveries running now (clones of the `Bytes` the lent
/// Buffers own, each with its hub's id), matched by address against the Buffers of large
/// writes.
#[derive(Default, Debug)]
pub struct Lent {
    reads: Vec<(u32, Bytes)>,
}

impl Lent {
    /// Keeps `reads`, lent to JS by hub `hub`, until [`Self::clear`].
    pub fn lend(&mut self, hub: u32, reads: &[Bytes]) {
        self.reads.extend(reads.iter().map(|r| (hub, r.clone())));
    }

    /// Forgets the reads `hub` lent (their memory is freed when JS collects or the hub
    /// detaches their Buffers).
    pub fn clear(&mut self, hub: u32) {
        self.reads.retain(|(h, _)| *h != hub);
    }

    /// `view` as a slice of the lent read it lies in, if it lies in one.
    fn slice_of(&self, view: &[u8]) -> Option<Bytes> {
        let (start, len) = (view.as_ptr() as usize, view.len());
        self.reads.iter().find_map(|(_, r)| {
            let base = r.as_ptr() as usize;
            let off = start.checked_sub(base)?;
            (off.checked_add(len)? <= r.len()).then(|| r.slice(off..off + len))
        })
    }
}

/// Lends `reads` of hub `hub` in this thread's table (a delivery hands them to JS).
pub fn lend(hub: u32, reads: &[Bytes]) {
    if !reads.is_empty() {
        crate::thread_context::with(|c| c.lent.borrow_mut().lend(hub, reads));
    }
}

/// Hub `hub`'s delivery ended: its reads are no longer lent.
pub fn forget(hub: u32) {
    crate::thread_context::with(|c| c.lent.borrow_mut().clear(hub));
}

/// The bytes of one large write as JS passed them (a Buffer), readable while its batch is
/// applied, and kept alive past it by [`Chunk::keep`]. crates/node implements it for napi's
/// Buffers; `Bytes` implements it for batches without JS Buffers (and tests).
pub trait Chunk: Deref<Target = [u8]> {
    /// The bytes for a message that outlives the batch, without a copy where possible.
    fn keep(self) -> Bytes;
}

impl Chunk for Bytes {
    fn keep(self) -> Bytes {
        self
    }
}

/// The large writes of one batch of ops, by index (each op names one and takes it once).
#[derive(Debug)]
pub struct BigChunks<C> {
    chunks: Vec<Option<C>>,
}

impl BigChunks<Bytes> {
    /// A batch without large writes.
    pub fn none() -> Self {
        BigChunks { chunks: Vec::new() }
    }
}

impl<C: Chunk> BigChunks<C> {
    /// The large writes of a batch, in the order its ops name them.
    pub fn new(chunks: Vec<C>) -> Self {
        BigChunks {
            chunks: chunks.into_iter().map(Some).collect(),
        }
    }

    /// The bytes of chunk `i`, read while the batch is applied (empty if there is none).
    pub fn view(&self, i: usize) -> &[u8] {
        self.chunks
            .get(i)
            .and_then(Option::as_ref)
            .map_or(&[][..], |b| &b[..])
    }

    /// Whether chunk `i` came with this batch and was not taken yet. An op naming a chunk that
    /// did not come with it was applied by a path that could not see what JS holds: a bug
    /// the caller reports instead of writing nothing.
    pub fn has(&self, i: usize) -> bool {
        self.chunks.get(i).is_some_and(Option::is_some)
    }

    /// Chunk `i`'s bytes for a message that outlives the batch, without a copy: a slice of a
    /// lent read (`true`), or the chunk kept alive by [`Chunk::keep`]. Empty if there is none
    /// or it was taken.
    pub fn take(&mut self, i: usize) -> (Bytes, bool) {
        let Some(chunk) = self.chunks.get_mut(i).and_then(Option::take) else {
            return (Bytes::new(), false);
        };
        let slice = crate::thread_context::with(|c| c.lent.borrow().slice_of(&chunk)).flatten();
        if let Some(bytes) = slice {
            return (bytes, true);
        }
        (chunk.keep(), false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_inside_a_lent_read_becomes_a_slice_of_it_and_nothing_else_does() {
        let read = Bytes::from(vec![7u8; 64]);
        let other = [7u8; 64];
        let mut lent = Lent::default();
        lent.lend(1, std::slice::from_ref(&read));

        let inside = lent.slice_of(&read[8..40]).expect("a view inside the read");
        assert_eq!(
            inside.as_ptr(),
            read[8..].as_ptr(),
            "the same memory, not a copy"
        );
        assert_eq!(inside.len(), 32);
        assert!(lent.slice_of(&read[..]).is_some(), "the whole read");
        assert!(lent.slice_of(&other[..]).is_none(), "equal bytes elsewhere");
        lent.clear(2);
        assert!(
            lent.slice_of(&read[8..40]).is_some(),
            "another hub's delivery ended"
        );
        lent.clear(1);
        assert!(lent.slice_of(&read[8..40]).is_none(), "after the delivery");
    }
}
