//! A channel's queue of written messages: unflushed entries behind flushed ones, the pending
//! byte count and the writability it drives through the high/low water marks.
//!
//! Ground rules: owned by one channel, used on its loop thread. This is plain data: it never
//! completes promises or fires events itself.
//!
//! The pending total and the writability bits live in a shared [`Writability`] (atomics, module
//! `pending`), because other threads count their writes at submission and may set user flags.
//! Each entry counts its estimated size plus [`ENTRY_OVERHEAD`] (Netty's
//! `CHANNEL_OUTBOUND_BUFFER_ENTRY_OVERHEAD`), so many tiny writes still reach the high mark.
//! Methods hand back the promises to complete and whether writability changed, and the channel acts on them after releasing its borrow, so a
//! listener may write or close re-entrantly.

use std::collections::VecDeque;
use std::io::IoSlice;
use std::sync::Arc;

use crate::message::Message;
use crate::options::WaterMark;
use crate::promise::ChannelPromise;

mod pending;
pub(crate) use pending::Writability;
pub use pending::WritabilityChange;

struct Entry {
    msg: Message,
    promise: ChannelPromise,
    /// What this entry still counts in the pending total.
    size: usize,
}

/// Bytes each queued message counts on top of its own size (Netty's default, 96).
pub const ENTRY_OVERHEAD: usize = 96;

/// Written messages waiting to reach the socket.
pub struct OutboundBuffer {
    entries: VecDeque<Entry>,
    /// How many entries at the front are flushed.
    flushed: usize,
    state: Arc<Writability>,
    water: WaterMark,
    /// Bytes (and non-byte messages) handed to the socket so far (flush progress).
    progress: u64,
    /// The buffer emptied once already (see `emptied`).
    emptied_once: bool,
}

impl OutboundBuffer {
    /// An empty buffer with these water marks.
    pub fn new(water: WaterMark) -> Self {
        OutboundBuffer {
            entries: VecDeque::new(),
            flushed: 0,
            state: Writability::new(water),
            water,
            progress: 0,
            emptied_once: false,
        }
    }

    /// The shared pending total and writability bits.
    pub(crate) fn writability(&self) -> Arc<Writability> {
        self.state.clone()
    }

    /// The same, borrowed (no reference count: two atomic operations less per call).
    pub(crate) fn writability_ref(&self) -> &Writability {
        &self.state
    }

    /// Queues an unflushed message counting `size` pending bytes.
    pub fn add_message(
        &mut self,
        msg: Message,
        size: usize,
        promise: ChannelPromise,
    ) -> WritabilityChange {
        if self.entries.capacity() == 0 {
            // Room for one entry, not the default four: most connections have one write in
            // flight at a time, and the queue's memory stays with the connection.
            self.entries.reserve_exact(1);
        }
        self.entries.push_back(Entry { msg, promise, size });
        self.state.add(size)
    }

    /// Marks every queued message flushed (Netty's `addFlush`). A message whose promise was
    /// cancelled is dropped instead: its bytes leave the pending total, which may make the
    /// channel writable again (the change is returned). The others' promises become
    /// uncancellable: from here on the write is under way.
    pub fn add_flush(&mut self) -> WritabilityChange {
        let mut released = 0;
        let mut i = self.flushed;
        while i < self.entries.len() {
            if self.entries[i].promise.set_uncancellable() {
                i += 1;
            } else if let Some(e) = self.entries.remove(i) {
                released += e.size;
            }
        }
        self.flushed = self.entries.len();
        if released == 0 {
            return WritabilityChange::None;
        }
        self.release(released)
    }

    /// Changes the water marks.
    pub fn set_water_mark(&mut self, water: WaterMark) {
        self.water = water;
        self.state.set_marks(water);
    }

    /// True unless pending bytes passed the high water mark (and did not yet fall below the low one).
    pub fn is_writable(&self) -> bool {
        self.state.is_writable()
    }

    /// Pending bytes of all entries, flushed or not.
    pub fn pending_bytes(&self) -> usize {
        self.state.pending()
    }

    /// Bytes that can be written before the channel becomes unwritable (0 if it is).
    pub fn bytes_before_unwritable(&self) -> usize {
        if !self.is_writable() {
            0
        } else {
            (self.water.high + 1).saturating_sub(self.pending_bytes())
        }
    }

    /// Bytes that must drain before the channel becomes writable (0 if it is).
    pub fn bytes_before_writable(&self) -> usize {
        if !self.is_writable() {
            (self.pending_bytes() + 1).saturating_sub(self.water.low)
        } else {
            0
        }
    }

    /// Flush progress: grows with every byte (or non-byte message) handed to the socket.
    /// Netty's `currentProgress`, for `IdleStateHandler`'s `observeOutput`.
    pub fn progress(&self) -> u64 {
        self.progress
    }

    /// True if nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Number of flushed entries not yet written.
    pub fn flushed_len(&self) -> usize {
        self.flushed
    }

    /// Number of entries, flushed or not.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The bytes of the only flushed entry, when there is exactly one and it holds bytes: the
    /// common case of a request/response or echo, written without gathering.
    pub fn single_flushed_bytes(&self) -> Option<&[u8]> {
        if self.flushed != 1 {
            return None;
        }
        match &self.entries.front()?.msg {
            Message::Bytes(b) if !b.is_empty() => Some(b),
            _ => None,
        }
    }

    /// Fills `iov` with the flushed byte messages at the front, stopping at the first message
    /// that is not bytes. Returns how many slices were filled and their total length.
    pub fn gather<'a>(&'a self, iov: &mut [IoSlice<'a>]) -> (usize, usize) {
        let mut n = 0;
        let mut bytes = 0;
        for e in self.entries.iter().take(self.flushed) {
            if n == iov.len() {
                break;
            }
            let Message::Bytes(b) = &e.msg else { break };
            if b.is_empty() {
                continue;
            }
            iov[n] = IoSlice::new(b);
            n += 1;
            bytes += b.len();
        }
        (n, bytes)
    }

    /// True if the first flushed entry is a byte message (or there is none).
    pub fn front_is_bytes(&self) -> bool {
        self.flushed == 0
            || matches!(
                self.entries.front(),
                Some(Entry {
                    msg: Message::Bytes(_),
                    ..
                })
            )
    }

    /// The first flushed entry if it is a file region with bytes left to send.
    pub(crate) fn front_region(&self) -> Option<&crate::file_region::FileRegion> {
        if self.flushed == 0 {
            return None;
        }
        match self.entries.front() {
            Some(Entry {
                msg: Message::File(r),
                ..
            }) if r.remaining() > 0 => Some(r),
            _ => None,
        }
    }

    /// True if the flushed byte messages at the front (at most `within` of them are looked at)
    /// are followed by a file region with bytes to send: their write may ask the kernel to wait
    /// for it (`MSG_MORE`), so that a head and the file behind it leave in full segments.
    pub(crate) fn region_follows_bytes(&self, within: usize) -> bool {
        for e in self.entries.iter().take(self.flushed.min(within + 1)) {
            match &e.msg {
                Message::Bytes(_) => {}
                Message::File(r) => return r.remaining() > 0,
                Message::User(_) => return false,
            }
        }
        false
    }

    /// Accounts `written` bytes from the front: fully written entries (and empty ones) are
    /// removed and their promises (all but void ones) pushed to `done`; a partly written one is
    /// advanced. One write covers byte messages only or one file region only (a gathering
    /// write stops at a region).
    pub fn remove_bytes(
        &mut self,
        mut written: usize,
        done: &mut Vec<ChannelPromise>,
    ) -> WritabilityChange {
        self.progress = self.progress.wrapping_add(written as u64);
        let mut released = 0;
        while self.flushed > 0 {
            let Some(front) = self.entries.front_mut() else {
                break;
            };
            let len = match &front.msg {
                Message::Bytes(b) => b.len(),
                Message::File(r) => usize::try_from(r.remaining()).unwrap_or(usize::MAX),
                Message::User(_) => break,
            };
            if len <= written {
                written -= len;
                let e = self.entries.pop_front().expect("front exists");
                self.flushed -= 1;
                released += e.size;
                // Success of a void promise does nothing: keep `done` empty (no allocation)
                // for the common case of writes nobody listens to.
                if !e.promise.is_void() {
                    done.push(e.promise);
                }
                continue;
            }
            if written == 0 {
                break;
            }
            match &mut front.msg {
                Message::Bytes(b) => {
                    bytes::Buf::advance(b, written);
                    let take = written.min(front.size);
                    front.size -= take;
                    released += take;
                }
                // A region holds its count (the entry overhead) until it is done.
                Message::File(r) => r.advance(written as u64),
                Message::User(_) => {}
            }
            break;
        }
        self.emptied();
        self.release(released)
    }

    /// The first time the buffer empties, its slots are freed: a connection that wrote once
    /// and then idles (a WebSocket after its `101`, an HTTP keep-alive connection after one
    /// answer) keeps no allocation here. One that writes again keeps them from then on, so
    /// a busy connection allocates them twice in all, not once per write
    /// (docs/decisions/0017-websocket.md, "Memory per idle connection").
    fn emptied(&mut self) {
        if self.entries.is_empty() && !self.emptied_once && self.entries.capacity() > 0 {
            self.emptied_once = true;
            self.entries = VecDeque::new();
        }
    }

    /// Removes the first flushed entry, whatever it carries (channels without a socket).
    pub fn remove_front(&mut self) -> Option<(Message, ChannelPromise, WritabilityChange)> {
        if self.flushed == 0 {
            return None;
        }
        let e = self.entries.pop_front()?;
        self.flushed -= 1;
        self.progress = self.progress.wrapping_add(1);
        self.emptied();
        let change = self.release(e.size);
        Some((e.msg, e.promise, change))
    }

    fn release(&mut self, n: usize) -> WritabilityChange {
        self.state.sub(n)
    }

    /// Empties the flushed part, returning its promises (to fail them). Writability is not
    /// changed here: the caller re-checks it (`Writability::recheck_low`) and reports it.
    pub fn take_flushed(&mut self) -> Vec<ChannelPromise> {
        let n = self.flushed;
        self.flushed = 0;
        let taken: Vec<Entry> = self.entries.drain(..n).collect();
        let size: usize = taken.iter().map(|e| e.size).sum();
        self.state.sub_quiet(size);
        taken.into_iter().map(|e| e.promise).collect()
    }

    /// Empties the buffer (the channel is closing): flushed promises, then unflushed ones.
    /// Writability is left as it was, as Netty does for a closed buffer.
    pub fn take_all(&mut self) -> (Vec<ChannelPromise>, Vec<ChannelPromise>) {
        let flushed = self.take_flushed();
        let rest: Vec<Entry> = self.entries.drain(..).collect();
        let size: usize = rest.iter().map(|e| e.size).sum();
        self.state.sub_quiet(size);
        (flushed, rest.into_iter().map(|e| e.promise).collect())
    }
}

impl std::fmt::Debug for OutboundBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutboundBuffer")
            .field("entries", &self.len())
            .field("flushed", &self.flushed_len())
            .field("pending_bytes", &self.pending_bytes())
            .finish()
    }
}

#[cfg(test)]
mod tests;
