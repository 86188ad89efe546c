//! The writes an `SslHandler` holds: until the handshake completes, and after it until the
//! next flush, so that the plaintext of one flush is encrypted as one stream (full records
//! across the writes' edges) into one buffer of records per batch.
//!
//! Ground rules:
//! - Same thread and order as the handler (its loop thread, `!Send`). Held bytes count toward
//!   the channel's water marks until they are taken into a batch; file regions count nothing
//!   and are read out piece by piece (region.rs), in write order with the bytes.
//! - No borrow of the held writes is kept while anything can call back (writability events,
//!   promise listeners): a handler may write, flush or close from there. Encryption does not
//!   nest: a call made meanwhile leaves the running one to go on.

use std::rc::Rc;

use bytes::Bytes;
use netloop_transport::{
    ChannelHandlerContext, ChannelPromise, LocalListenerExt, Message, TransportError,
};

use super::region::{Held, HeldRegion, Piece};
use super::{Phase, State};

/// Plaintext bytes encrypted into one buffer of records at most (a region's piece included).
const BATCH_BYTES: usize = 64 * 1024;

/// Writes taken from the front of the held ones, encrypted together.
#[derive(Default)]
struct Batch {
    parts: Vec<Bytes>,
    promises: Vec<ChannelPromise>,
    size: usize,
}

impl Batch {
    fn push(&mut self, plain: Bytes, promise: ChannelPromise) {
        self.size += plain.len();
        self.parts.push(plain);
        self.promises.push(promise);
    }
}

/// Why taking a batch stopped.
enum Stop {
    /// The batch is full, or nothing more is held.
    Go,
    /// A region has no room for its next piece.
    Stalled,
    /// Reading a region failed.
    Failed(HeldRegion, std::io::Error),
}

impl State {
    /// Holds a write (bytes or a file region) until the next flush; fails anything else.
    pub(super) fn hold(&self, ctx: &ChannelHandlerContext, msg: Message, promise: ChannelPromise) {
        let held = match msg {
            Message::Bytes(bytes) => Held::Bytes(bytes, promise),
            Message::File(region) => Held::File(HeldRegion::new(region, promise)),
            other => {
                promise.try_failure(TransportError::UnsupportedMessage(other.kind()));
                return;
            }
        };
        if self.phase.get() == Phase::Finished {
            held.promise().try_failure(TransportError::ChannelClosed);
            return;
        }
        if self.output_shut.get() {
            held.promise().try_failure(TransportError::OutputShutdown);
            return;
        }
        if let Held::Bytes(bytes, _) = &held {
            let n = bytes.len();
            self.held_bytes.set(self.held_bytes.get() + n);
            if let Some(ch) = ctx.try_channel() {
                ch.add_pending_outbound_bytes(n);
            }
        }
        self.held.borrow_mut().push_back(held);
    }

    /// Encrypts the held writes (handshake done) and passes their records on, in batches of up
    /// to `BATCH_BYTES` plaintext bytes, until nothing is held or a region has no room.
    pub(super) fn encrypt_held(self: &Rc<Self>, ctx: &ChannelHandlerContext) {
        if self.encrypting.replace(true) {
            return;
        }
        self.stalled.set(false);
        while self.phase.get() == Phase::Done && !self.close_sent.get() {
            if let Some((plain, promise)) = self.take_single(ctx) {
                // The common case (one write per flush): nothing to gather.
                self.encrypt(ctx, &[&plain], std::iter::once(promise));
                continue;
            }
            if self.held.borrow().is_empty() {
                break;
            }
            let (batch, stop) = self.take_batch(ctx);
            if !batch.promises.is_empty() {
                let parts: Vec<&[u8]> = batch.parts.iter().map(|b| &b[..]).collect();
                self.encrypt(ctx, &parts, batch.promises.into_iter());
            }
            match stop {
                Stop::Go => {}
                Stop::Stalled => {
                    self.stalled.set(true);
                    self.wake_when_drained(ctx);
                    break;
                }
                Stop::Failed(region, e) => {
                    self.encrypting.set(false);
                    self.fail_read(ctx, region, e);
                    return;
                }
            }
        }
        self.encrypting.set(false);
        if self.output_shut.get() {
            self.finish_shutdown_if_drained(ctx);
        }
    }

    /// The only held write, if it is bytes.
    fn take_single(&self, ctx: &ChannelHandlerContext) -> Option<(Bytes, ChannelPromise)> {
        let single = {
            let mut held = self.held.borrow_mut();
            match held.front() {
                Some(Held::Bytes(..)) if held.len() == 1 => held.pop_front(),
                _ => None,
            }
        };
        match single {
            Some(Held::Bytes(plain, promise)) => {
                self.release(ctx, plain.len());
                Some((plain, promise))
            }
            _ => None,
        }
    }

    /// Takes held writes from the front until `BATCH_BYTES` are gathered, a region's piece
    /// ends the batch, or a region has no room.
    fn take_batch(self: &Rc<Self>, ctx: &ChannelHandlerContext) -> (Batch, Stop) {
        let mut batch = Batch::default();
        let mut taken = 0;
        let stop = loop {
            if batch.size >= BATCH_BYTES || self.phase.get() != Phase::Done {
                break Stop::Go;
            }
            let front_is_bytes = match self.held.borrow().front() {
                None => break Stop::Go,
                Some(held) => matches!(held, Held::Bytes(..)),
            };
            if front_is_bytes {
                if let Some(Held::Bytes(plain, promise)) = self.held.borrow_mut().pop_front() {
                    taken += plain.len();
                    batch.push(plain, promise);
                }
                continue;
            }
            // Count the bytes taken out before the region looks for room (this may fire a
            // writability event: the region stays in place meanwhile).
            self.release(ctx, std::mem::take(&mut taken));
            let max = BATCH_BYTES - batch.size;
            let piece = match self.held.borrow_mut().front_mut() {
                Some(Held::File(r)) => self.read_piece(ctx, r, max),
                _ => continue,
            };
            match piece {
                Piece::More(plain, promise) => {
                    batch.push(plain, promise);
                    break Stop::Go;
                }
                Piece::NoRoom => break Stop::Stalled,
                Piece::Last(plain) => {
                    if let Some(held) = self.held.borrow_mut().pop_front() {
                        batch.push(plain, held.promise());
                    }
                }
                Piece::Dropped => {
                    self.held.borrow_mut().pop_front();
                }
                Piece::Failed(e) => match self.held.borrow_mut().pop_front() {
                    Some(Held::File(r)) => break Stop::Failed(r, e),
                    _ => break Stop::Go,
                },
            }
        };
        self.release(ctx, taken);
        (batch, stop)
    }

    /// No longer counts `n` plaintext bytes taken out of the held writes.
    fn release(&self, ctx: &ChannelHandlerContext, n: usize) {
        if n == 0 {
            return;
        }
        self.held_bytes.set(self.held_bytes.get().saturating_sub(n));
        if let Some(ch) = ctx.try_channel() {
            ch.sub_pending_outbound_bytes(n);
        }
    }

    /// Encrypts `parts` as one stream and writes its records with one promise completing all
    /// of `promises`.
    fn encrypt(
        &self,
        ctx: &ChannelHandlerContext,
        parts: &[&[u8]],
        promises: impl Iterator<Item = ChannelPromise>,
    ) {
        let records = self.engine.borrow_mut().as_mut().map(|e| e.encrypt(parts));
        match records {
            Some(Ok(records)) => ctx.write_with(records, joined(promises)),
            Some(Err(e)) => {
                let e = e.into_transport();
                for p in promises {
                    p.try_failure(e.clone());
                }
            }
            None => {
                for p in promises {
                    p.try_failure(TransportError::ChannelClosed);
                }
            }
        }
    }

    /// Fails every held write (bytes and regions) and stops counting the held bytes.
    pub(super) fn fail_held(&self, ctx: &ChannelHandlerContext, error: TransportError) {
        self.stalled.set(false);
        let held: Vec<Held> = self.held.borrow_mut().drain(..).collect();
        let n = self.held_bytes.replace(0);
        if n > 0 {
            if let Some(ch) = ctx.try_channel() {
                ch.sub_pending_outbound_bytes(n);
            }
        }
        for h in held {
            h.promise().try_failure(error.clone());
        }
    }
}

/// One promise for the records of several writes: completing it completes each of theirs
/// (the only one itself; void if none is listened to).
fn joined(promises: impl Iterator<Item = ChannelPromise>) -> ChannelPromise {
    let mut all: Vec<ChannelPromise> = promises.collect();
    if all.len() == 1 {
        return all.pop().unwrap_or_default();
    }
    if all.iter().all(|p| p.is_void() && !p.is_firing()) {
        return ChannelPromise::void();
    }
    let joined = ChannelPromise::new();
    if let Some(future) = joined.future() {
        future.add_local_listener(move |result| {
            for p in all {
                p.try_complete(result.clone());
            }
        });
    }
    joined
}
