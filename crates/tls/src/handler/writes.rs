//! The writes an `SslHandler` holds: until the handshake completes, and after it until the
//! next flush, so that the plaintext of one flush is encrypted as one stream (full records
//! across the writes' edges) into one buffer of records per batch.
//!
//! Same thread and order as the handler (its loop thread, `!Send`).

use bytes::Bytes;
use netloop_transport::{ChannelHandlerContext, ChannelPromise, LocalListenerExt, TransportError};

use super::State;

impl State {
    /// Encrypts the held writes (handshake done) and passes their records on, in batches of up
    /// to `BATCH_BYTES` plaintext bytes.
    pub(super) fn encrypt_held(&self, ctx: &ChannelHandlerContext) {
        const BATCH_BYTES: usize = 64 * 1024;
        let (single, held) = {
            let mut held = self.held.borrow_mut();
            match held.len() {
                0 => return,
                // The common case (one write per flush): nothing to gather.
                1 => (held.pop_front(), Vec::new()),
                _ => (None, held.drain(..).collect()),
            }
        };
        let n = self.held_bytes.replace(0);
        if n > 0 {
            if let Some(ch) = ctx.try_channel() {
                ch.sub_pending_outbound_bytes(n);
            }
        }
        if let Some((plain, promise)) = single {
            self.encrypt(ctx, &[&plain], std::iter::once(promise));
            return;
        }
        let mut batch: Vec<(Bytes, ChannelPromise)> = Vec::new();
        let mut size = 0;
        for (plain, promise) in held {
            size += plain.len();
            batch.push((plain, promise));
            if size >= BATCH_BYTES {
                self.encrypt_batch(ctx, std::mem::take(&mut batch));
                size = 0;
            }
        }
        if !batch.is_empty() {
            self.encrypt_batch(ctx, batch);
        }
    }

    fn encrypt_batch(&self, ctx: &ChannelHandlerContext, batch: Vec<(Bytes, ChannelPromise)>) {
        let parts: Vec<&[u8]> = batch.iter().map(|(b, _)| &b[..]).collect();
        let promises: Vec<ChannelPromise> = batch.iter().map(|(_, p)| p.clone()).collect();
        self.encrypt(ctx, &parts, promises.into_iter());
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

    pub(super) fn fail_held(&self, ctx: &ChannelHandlerContext, error: TransportError) {
        let held: Vec<_> = self.held.borrow_mut().drain(..).collect();
        let n = self.held_bytes.replace(0);
        if n > 0 {
            if let Some(ch) = ctx.try_channel() {
                ch.sub_pending_outbound_bytes(n);
            }
        }
        for (_, promise) in held {
            promise.try_failure(error.clone());
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
