//! Applying the ops JS buffered: writes, flushes, reads, closes and inbound events that leave
//! JS at a context, promise completions, registrations. Ground rules as in [`crate::hub`]:
//! applied in JS's order, no borrow held while a pipeline method runs.
//!
//! Writability: JS counts the writes it queued towards writability before they get here (it
//! reports the crossing of the high mark itself, see `src/writability.ts`). So that the native count
//! agrees while they are applied one by one (a flush among them drains the socket), every
//! write of a batch is first counted on its channel as reserved bytes; each write gives its
//! reservation back as it is applied, and the channel looks at the low mark once at the end.
//! The reservations of a batch are a list; each channel's entry in the hub notes its slot
//! there under the batch's stamp (no map per batch: the ops already look the channel up).

use crate::protocol::{Outcome, RecordValue as _, WireKind};
use std::rc::Rc;

use netloop_transport::{LocalListenerExt, Message, TransportError, WrittenNow};

use crate::big::BigChunks;
use crate::hub::Hub;
use crate::op_messages::whole;
use crate::outbox::ErrorRef;
use crate::record::RECORD;
use crate::start::Start;

/// A record's id field: a whole number below 2^53 (a negative or NaN one names nothing). Through
/// `i64`, which x86 converts in one instruction; the saturating conversion to `u64` takes a
/// dozen, and each op has two ids.
fn id_of(v: f64) -> u64 {
    v as i64 as u64
}

/// The channels whose writes an `apply_ops` counted ahead (by id), with the bytes still
/// reserved.
pub type Reserved = Vec<(u64, netloop_transport::Channel, usize)>;

/// What a write op counts towards writability, as JS counts it (and as the outbound buffer
/// estimates it: bytes their length, other values 8, plus the per-entry overhead).
pub fn write_size(kind: WireKind, len: f64) -> Option<usize> {
    let size = match kind {
        WireKind::WriteBytes | WireKind::WriteBytesFlush | WireKind::WriteBig => whole(len),
        WireKind::WriteValue => 8,
        // A file region counts no bytes, only its entry (as the outbound buffer counts it).
        WireKind::WriteFile => 0,
        _ => return None,
    };
    Some(size + netloop_transport::ENTRY_OVERHEAD)
}

impl Hub {
    /// Applies the ops JS buffered. `big` holds the JS Buffers of large writes, `strings` the
    /// codes and messages of JS errors, both indexed by the ops. A large write's bytes are not
    /// copied: its message owns the JS Buffer's reference (taken out of `big`), which is
    /// released when the socket has written it or the write fails (node:net writes from the
    /// JS Buffer likewise). napi-rs releases a reference dropped off the JS thread on it.
    pub fn apply_ops<C: crate::big::Chunk>(
        self: &Rc<Self>,
        big: &mut BigChunks<C>,
        strings: &[String],
    ) {
        let ops = self.shared.take_ops();
        if ops.is_empty() {
            return;
        }
        let m = &self.metrics.ops;
        m.set(m.get() + (ops.len() / RECORD) as f64);
        // A batch applied inside another (none is known to happen) takes a stamp of its own;
        // the outer one then finds its slots taken over and gives its reservations back at
        // its end instead of write by write.
        let stamp = self.reserve_stamp.get().wrapping_add(1).max(1);
        self.reserve_stamp.set(stamp);
        let mut reserved = self.reserve_writes(&ops, stamp);
        // (An outer batch's `last` is stale once this one started: its slots moved.)
        self.channels_gen
            .set(self.channels_gen.get().wrapping_add(1));
        let mut last = None;
        let mut records = ops.chunks_exact(RECORD).peekable();
        while let Some(op) = records.next() {
            // A RESP reply or an HTTP message written, then flushed by the same context, goes as
            // one (the JS side merges a byte write and its flush itself: `WriteBytesFlush`).
            let then_flush = records.peek().is_some_and(|next| flushes_after(op, next));
            if then_flush {
                records.next();
            }
            self.apply(
                op,
                big,
                strings,
                (stamp, &mut reserved),
                &mut last,
                then_flush,
            );
        }
        for (_, ch, left) in reserved.drain(..) {
            if left > 0 {
                ch.release_pending_outbound(left);
            }
            if ch.is_open() {
                ch.recheck_writability();
            }
        }
        // The emptied map keeps its capacity for the next batch (no allocation, no rehash).
        *self.reserved.borrow_mut() = reserved;
    }

    /// Counts the writes of `ops` on their open channels (see the module docs): the channels
    /// and the bytes still reserved on each, each channel's slot noted in its entry under
    /// `stamp`. The list is the hub's scratch list, taken out of it (a nested call finds an
    /// empty one and allocates its own).
    fn reserve_writes(&self, ops: &[f64], stamp: u32) -> Reserved {
        let mut out = std::mem::take(&mut *self.reserved.borrow_mut());
        {
            let map = self.channels.borrow();
            for op in ops.chunks_exact(RECORD) {
                let kind = WireKind::try_from(op[0] as u32);
                let Some(n) = kind.ok().and_then(|k| write_size(k, op[4])) else {
                    continue;
                };
                let id = id_of(op[1]);
                let Some(e) = map.get(&id) else { continue };
                if let Some(slot) = slot_of(&out, e, id, stamp) {
                    out[slot].2 += n;
                } else if e.channel.is_open() {
                    e.reserve.set((stamp, out.len() as u32));
                    out.push((id, e.channel.clone(), n));
                }
            }
        }
        for (_, ch, n) in &out {
            ch.reserve_pending_outbound(*n);
        }
        out
    }

    fn apply<C: crate::big::Chunk>(
        self: &Rc<Self>,
        op: &[f64],
        big: &mut BigChunks<C>,
        strings: &[String],
        (stamp, reserved): (u32, &mut Reserved),
        last: &mut Option<Found>,
        then_flush: bool,
    ) {
        // A code that names no kind does nothing (as an event no handler method takes).
        let Ok(kind) = WireKind::try_from(op[0] as u32) else {
            return;
        };
        let (kind, chan, ctx, a, b, c) = (
            match kind {
                // Applied as the write, then the flush (below).
                WireKind::WriteBytesFlush => WireKind::WriteBytes,
                k => k,
            },
            id_of(op[1]),
            id_of(op[2]),
            op[3],
            op[4],
            op[5],
        );
        if kind == WireKind::CompletePromise {
            if let Some(p) = self.take_promise(a) {
                if b == Outcome::Success.value() {
                    p.try_success();
                } else {
                    p.try_failure(self.js_error(c, strings, op[2]));
                }
            }
            return;
        }
        let gen = self.channels_gen.get();
        let hit = last
            .as_ref()
            .is_some_and(|f| f.gen == gen && f.chan == chan && f.ctx_id == ctx);
        if !hit {
            let map = self.channels.borrow();
            *last = map.get(&chan).map(|e| {
                let channel = e.channel.clone();
                Found {
                    gen,
                    chan,
                    ctx_id: ctx,
                    pipeline: channel.pipeline(),
                    channel,
                    ctx: if ctx == 0 {
                        None
                    } else {
                        e.ctxs
                            .iter()
                            .find(|(id, _)| *id == ctx)
                            .map(|(_, c)| c.clone())
                    },
                    slot: slot_of(reserved, e, chan, stamp),
                }
            });
        }
        let Some(Found {
            channel,
            pipeline,
            ctx,
            slot,
            ..
        }) = last.as_ref()
        else {
            if matches!(kind, WireKind::WriteFile | WireKind::WriteHttp) {
                // Read to close the descriptor a file region handed over (file_wire.rs).
                drop(self.framed(kind, a, b, big));
            }
            if kind == WireKind::Close {
                // Closing a closed channel succeeds (Netty: the close future is done), as it
                // does when JS already knows the channel is closed (hub.ts `sendOutbound`).
                self.succeed_promise(c);
            } else if matches!(
                kind,
                WireKind::WriteBytes
                    | WireKind::WriteValue
                    | WireKind::WriteBig
                    | WireKind::WriteResp
                    | WireKind::WriteHttp
                    | WireKind::WriteFile
                    | WireKind::WriteWs
            ) {
                let closed = match self.gone_causes.borrow().get(&chan) {
                    Some(cause) => TransportError::ClosedBy(std::sync::Arc::new(cause.clone())),
                    None => TransportError::ChannelClosed,
                };
                self.fail_promise(chan, c, closed);
            }
            return;
        };
        let slot = *slot;
        let start = Start {
            ctx: ctx.as_ref(),
            pipeline,
        };
        match kind {
            WireKind::Register => {
                let weak = Rc::downgrade(self);
                channel.register().add_local_listener(move |r| {
                    if let (Err(e), Some(hub)) = (r, weak.upgrade()) {
                        let mut out = hub.outbox();
                        if let ErrorRef::Native(i) = out.put_error(hub.id, e) {
                            out.push(
                                WireKind::Exception as u32,
                                chan as f64,
                                0.0,
                                i,
                                Outcome::NativeError.value(),
                                0.0,
                            );
                        }
                    }
                });
            }
            WireKind::WriteBytes | WireKind::WriteValue | WireKind::WriteBig => {
                let left = slot.map(|i| &mut reserved[i].2);
                if let (Some(n), Some(left)) = (write_size(kind, b), left) {
                    let n = n.min(*left);
                    *left -= n;
                    channel.release_pending_outbound(n);
                }
                if kind == WireKind::WriteBig && !big.has(a as usize) {
                    // Never acknowledge a write whose bytes did not arrive (see BigChunks::has).
                    // The failed promise tells the application; the log says why, for whoever
                    // installed a logger (NETLOOP_DEBUG=1 in Node).
                    log::error!(target: netloop_eventloop::log::TARGET, "netloop: internal error: a large write on channel {chan} reached the native side without its bytes; it fails");
                    let p = self.promise_for(c, pipeline);
                    p.try_failure(TransportError::foreign(
                        std::borrow::Cow::Borrowed("ERR_INTERNAL_ASSERTION"),
                        std::io::Error::other(
                            "a large write reached the native side without its bytes",
                        ),
                    ));
                    return;
                }
                let flush = op[0] as u32 == WireKind::WriteBytesFlush as u32;
                let p = self.promise_for(c, pipeline);
                if flush && kind == WireKind::WriteBytes {
                    // A writeAndFlush of bytes: straight from the arena to the socket when
                    // nothing stands between (no message made; the usual echo's write).
                    if let Some((rest, p)) = self.write_now(whole(a), whole(b), start, p) {
                        start.write_with(rest, p);
                        start.flush();
                    }
                    return;
                }
                start.write_with(self.message(kind, a, b, big), p);
                if flush {
                    start.flush();
                }
            }
            WireKind::WriteResp | WireKind::WriteHttp | WireKind::WriteFile | WireKind::WriteWs => {
                if kind == WireKind::WriteFile {
                    if let Some(left) = slot.map(|i| &mut reserved[i].2) {
                        let n = netloop_transport::ENTRY_OVERHEAD.min(*left);
                        *left -= n;
                        channel.release_pending_outbound(n);
                    }
                }
                let p = self.promise_for(c, pipeline);
                // A frozen HTTP response is read where it lies (no copy of its op first).
                let frozen = match kind {
                    WireKind::WriteHttp if b >= 0.0 => {
                        self.shared.arena_view(whole(a), whole(b), |s| {
                            crate::http_wire::frozen_from_js(s)
                                .map(|r| r.map_err(|e| ("ERR_HTTP_RESPONSE", e)))
                        })
                    }
                    _ => None,
                };
                match frozen.unwrap_or_else(|| self.framed(kind, a, b, big)) {
                    Ok(Message::Bytes(bytes)) if then_flush => {
                        // The reply and its flush: straight to the socket when nothing stands
                        // between (`write_and_flush_now`), else the rest the usual way.
                        if let WrittenNow::Part(n, p) = start.write_and_flush_now(&bytes, p) {
                            start.write_with(bytes.slice(n..), p);
                            start.flush();
                        }
                        return;
                    }
                    // (An HTTP codec takes a frozen response and its flush in one.)
                    Ok(msg) if then_flush => {
                        start.write_and_flush_with(msg, p);
                        return;
                    }
                    Ok(msg) => start.write_with(msg, p),
                    Err((code, e)) => {
                        p.try_failure(TransportError::foreign(
                            std::borrow::Cow::Borrowed(code),
                            std::io::Error::other(e),
                        ));
                    }
                }
                if then_flush {
                    start.flush();
                }
            }
            WireKind::Flush => start.flush(),
            WireKind::Read => start.read(),
            WireKind::Close => start.close_with(self.promise_for(c, pipeline)),
            _ => self.fire_inbound(start.inbound(), kind, a, b, big, strings),
        }
    }
}

impl Hub {
    /// Writes and flushes the `len` arena bytes at `off` from `start` straight to the socket
    /// if nothing stands between (`write_and_flush_now`): `None` if all of them went, else
    /// the bytes that did not (a copy) and the promise, to write and flush the usual way.
    fn write_now(
        &self,
        off: usize,
        len: usize,
        start: Start<'_>,
        promise: netloop_transport::ChannelPromise,
    ) -> Option<(bytes::Bytes, netloop_transport::ChannelPromise)> {
        // The socket write runs on the arena's slice itself. The promise's listeners may run
        // in it too (on success): they cannot reach the op arena, which only `apply_ops`
        // reads, and that is called from JS, which does not run inside native code.
        let (done, seen) = self.shared.arena_view(off, len, |s| {
            (start.write_and_flush_now(s, promise), s.len())
        });
        let m = &self.metrics.bytes_from_js;
        m.set(m.get() + seen as f64);
        match done {
            WrittenNow::All => None,
            WrittenNow::Part(n, promise) => {
                Some((self.shared.arena_bytes(off + n, seen - n), promise))
            }
        }
    }
}

/// True if `next` flushes what `op` writes: a RESP reply's or an HTTP message's write, then a
/// flush from the same channel and context.
fn flushes_after(op: &[f64], next: &[f64]) -> bool {
    let kind = op[0] as u32;
    (kind == WireKind::WriteResp as u32 || kind == WireKind::WriteHttp as u32)
        && next[0] as u32 == WireKind::Flush as u32
        && next[1] == op[1]
        && next[2] == op[2]
}

/// The channel an op named, its JS context and its reservation slot, as found for the op
/// before (ops come in runs for one channel: a response's write, then its flush): reused
/// while the channel map is unchanged (`Hub::channels_gen`).
pub struct Found {
    gen: u64,
    chan: u64,
    ctx_id: u64,
    channel: netloop_transport::Channel,
    pipeline: netloop_transport::ChannelPipeline,
    ctx: Option<netloop_transport::ChannelHandlerContext>,
    slot: Option<usize>,
}

/// The slot of channel `id` (its hub entry `e`) in the reservations of batch `stamp`, if its
/// writes were counted ahead in that batch.
fn slot_of(out: &Reserved, e: &crate::hub::Entry, id: u64, stamp: u32) -> Option<usize> {
    let (s, slot) = e.reserve.get();
    let slot = slot as usize;
    (s == stamp && out.get(slot).is_some_and(|r| r.0 == id)).then_some(slot)
}
