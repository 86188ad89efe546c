//! File regions written through an `SslHandler` (Netty's `FileRegion`, which Netty's own
//! `SslHandler` refuses, wanting a `ChunkedWriteHandler` before it): the handler reads a region
//! piece by piece and encrypts the pieces like held bytes, so TLS pipelines serve files
//! unchanged and a file larger than memory is never read whole.
//!
//! Ground rules:
//! - A region is held in write order with the byte writes (before the handshake too); it counts
//!   0 bytes towards the water marks, as in the transport. A piece read from it is encrypted at
//!   once, never held, so it is not counted either: its records count in the outbound buffer.
//! - A piece (up to one batch: 64 KiB with the bytes before it) is read only while there is
//!   room: the channel is writable, or the records waiting in its outbound buffer (its pending
//!   bytes less the plaintext held here) are below the low water mark, so that bytes held
//!   *behind* the region cannot keep it from going on. Without room, encryption stops at the
//!   region (the handler is *stalled*) and everything behind it stays held, until the channel
//!   becomes writable again; then it goes on and flushes. At most about the high water mark
//!   plus one batch of records wait, whatever the file's size.
//! - Bytes held behind a stalled region may keep the channel unwritable after its records
//!   drained (no writability event would come): then an empty write follows the records, and
//!   its completion (the records before it were written) lets the handler go on as well.
//! - The region's promise succeeds with its last piece's records. A failed piece write fails it
//!   (and the region is dropped). A failed read (an IO error, a file truncated after the region
//!   was made) fails it with the IO error, fails what is held behind it and closes the channel
//!   without a close_notify: the peer must see the stream cut, not a clean end.
//!
//! Same thread as the handler (its loop thread, `!Send`).

use std::cell::Cell;
use std::io;
use std::rc::{Rc, Weak};

use bytes::Bytes;
use netloop_transport::{
    ChannelHandlerContext, ChannelPromise, FileRegion, LocalListenerExt, TransportError,
};

use super::{Phase, State};

/// A write the handler holds: plaintext bytes, or a file region read out piece by piece.
pub(super) enum Held {
    Bytes(Bytes, ChannelPromise),
    File(HeldRegion),
}

impl Held {
    pub(super) fn promise(self) -> ChannelPromise {
        match self {
            Held::Bytes(_, p) => p,
            Held::File(r) => r.promise,
        }
    }
}

/// A held region with its write's promise.
pub(super) struct HeldRegion {
    region: FileRegion,
    promise: ChannelPromise,
    /// Set once the write of one of its pieces failed (its promise failed with it).
    broken: Rc<Cell<bool>>,
}

impl HeldRegion {
    pub(super) fn new(region: FileRegion, promise: ChannelPromise) -> Self {
        HeldRegion {
            region,
            promise,
            broken: Rc::new(Cell::new(false)),
        }
    }
}

/// What the region at the front of the held writes gave.
pub(super) enum Piece {
    /// Its last bytes (or none: it was empty): the region is done, its promise goes with them.
    Last(Bytes),
    /// Some of its bytes, with the promise for their records; more remain.
    More(Bytes, ChannelPromise),
    /// No room to read now: stop here until there is.
    NoRoom,
    /// A piece's write failed before: the region is dropped (its promise failed already).
    Dropped,
    /// The file could not be read (or ended early).
    Failed(io::Error),
}

/// The promise of a piece's records that are not the region's last: a failure fails the
/// region (and marks it, so that no more of it is read).
fn piece_promise(r: &HeldRegion) -> ChannelPromise {
    let piece = ChannelPromise::new();
    if let Some(future) = piece.future() {
        let region = r.promise.clone();
        let broken = r.broken.clone();
        future.add_local_listener(move |result| {
            if let Err(e) = result {
                broken.set(true);
                region.try_failure(e.clone());
            }
        });
    }
    piece
}

impl State {
    /// Reads the next piece (at most `max` bytes) of `r`, if there is room for its records.
    pub(super) fn read_piece(
        &self,
        ctx: &ChannelHandlerContext,
        r: &mut HeldRegion,
        max: usize,
    ) -> Piece {
        if r.broken.get() {
            return Piece::Dropped;
        }
        if r.region.remaining() == 0 {
            return Piece::Last(Bytes::new());
        }
        if !self.has_room(ctx) {
            return Piece::NoRoom;
        }
        match r.region.read_chunk(max) {
            Ok(piece) if r.region.remaining() == 0 => Piece::Last(piece),
            Ok(piece) => Piece::More(piece, piece_promise(r)),
            Err(e) => Piece::Failed(e),
        }
    }

    /// True while one more piece's records may join the outbound buffer (see module docs).
    fn has_room(&self, ctx: &ChannelHandlerContext) -> bool {
        let Some(ch) = ctx.try_channel() else {
            return false; // no channel to write to: read nothing
        };
        if ch.is_writable() {
            return true;
        }
        let records = ch
            .pending_outbound_bytes()
            .saturating_sub(self.held_bytes.get());
        ch.is_active() && records < ch.write_buffer_water_mark().low
    }

    /// The handler stalled at a region: if bytes held behind it may keep the channel
    /// unwritable once the records drained, an empty write after the records goes on when
    /// they were written (one at a time).
    pub(super) fn wake_when_drained(self: &Rc<Self>, ctx: &ChannelHandlerContext) {
        if self.held_bytes.get() == 0 || self.waking.replace(true) {
            return;
        }
        let marker = ChannelPromise::new();
        if let Some(future) = marker.future() {
            let state: Weak<State> = Rc::downgrade(self);
            let ctx2 = ctx.clone();
            future.add_local_listener(move |result| {
                if let Some(s) = state.upgrade() {
                    s.waking.set(false);
                    if result.is_ok() {
                        s.resume(&ctx2);
                    }
                }
            });
        }
        ctx.write_with(Bytes::new(), marker);
    }

    /// Goes on with the held writes if a region stalled them (the channel has room again).
    pub(super) fn resume(self: &Rc<Self>, ctx: &ChannelHandlerContext) {
        if self.stalled.get()
            && !self.encrypting.get()
            && self.phase.get() == Phase::Done
            && !self.close_sent.get()
        {
            self.encrypt_held(ctx);
            ctx.flush();
        }
    }

    /// Reading `r` failed: its promise fails with the IO error, what is held behind it fails,
    /// and the channel closes without a close_notify (the peer must not take the cut for an end).
    pub(super) fn fail_read(&self, ctx: &ChannelHandlerContext, r: HeldRegion, e: io::Error) {
        self.phase.set(Phase::Finished);
        self.close_sent.set(true);
        r.promise.try_failure(TransportError::from(e));
        self.fail_held(ctx, TransportError::ChannelClosed);
        // The records before the region go out as far as the socket takes them now.
        ctx.flush();
        ctx.close();
    }
}
