//! The channel hub of one attached loop: its channels, the records it owes JS, and the ops JS
//! sent. One delivery per loop iteration carries the events of all of the loop's channels to
//! JS in one call; the ops JS made while handling them are applied when that call returns.
//!
//! Ground rules:
//! - Loop thread only (the JS thread the loop is attached to). No `RefCell` borrow is held
//!   while JS runs or while a pipeline method runs (pipelines re-enter the hub through the
//!   adapters).
//! - Order: records reach JS in the order the pipeline produced them; ops are applied in the
//!   order JS made them. A delivery repeats (bounded) while applying ops produced new records.
//! - A channel stays in the table until it is closed and unregistered; ops for a channel that
//!   left it fail their promise with `ERR_CHANNEL_CLOSED`.

use crate::protocol::{Outcome, RecordValue as _, WireKind};
use std::cell::{Cell, RefCell, RefMut};
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicU32, Ordering};

use netloop_eventloop::LocalLoop;
use netloop_transport::{
    Channel, ChannelHandlerContext, ChannelPipeline, ChannelPromise, TransportError,
};

use crate::adapter::Marks;
use crate::delivery::Surface;
use crate::ids::IdMap;
use crate::outbox::Outbox;
use crate::record;
use crate::shared::SharedArrays;

mod promises;

static NEXT_HUB: AtomicU32 = AtomicU32::new(1);

pub struct Entry {
    pub channel: Channel,
    /// The channel's JS stand-ins by JS context id: a few per channel, found by a scan.
    pub ctxs: Vec<(u64, ChannelHandlerContext)>,
    pub refd: bool,
    /// What the channel's stand-ins share (see `adapter`), made with the first one: a
    /// pipeline of native handlers only has none (48 bytes less per such connection).
    pub mark: std::cell::OnceCell<Rc<Marks>>,
    /// The `apply_ops` batch that last counted writes of this channel ahead, and the
    /// channel's slot in that batch's reservations (`ops.rs`): no map per batch.
    pub reserve: Cell<(u32, u32)>,
}

/// Counters of one loop's JS boundary, read by `loop.metrics()`.
#[derive(Default)]
pub struct Metrics {
    pub iterations: Cell<f64>,
    pub deliveries: Cell<f64>,
    pub records: Cell<f64>,
    pub ops: Cell<f64>,
    pub bytes_to_js: Cell<f64>,
    pub bytes_from_js: Cell<f64>,
    pub bytes_from_reads: Cell<f64>,
    pub bytes_released: Cell<f64>,
}

pub struct Hub {
    pub id: u32,
    pub loop_id: u64,
    pub local: Weak<LocalLoop>,
    /// The JS side: where batches go (crates/node's, over napi and libuv).
    pub surface: Box<dyn Surface>,
    pub shared: SharedArrays,
    pub channels: RefCell<IdMap<Entry>>,
    /// Bumped whenever `channels` is borrowed to change (and when a batch of ops starts): an
    /// `apply_ops` run reuses the channel it found for the previous op while this is unchanged.
    pub channels_gen: Cell<u64>,
    pub closing: RefCell<Vec<u64>>,
    /// Close causes of the channels the last sweep removed: ops JS made before it learnt
    /// (`WireKind::Forget`) fail with them as their cause.
    pub gone_causes: RefCell<IdMap<TransportError>>,
    pub outbox: RefCell<Outbox>,
    pub promises: RefCell<IdMap<ChannelPromise>>,
    /// The native promises made for JS promises (by JS id) until they complete, so that a
    /// JS `cancel()` reaches them.
    pub js_promises: RefCell<IdMap<ChannelPromise>>,
    pub next_promise: Cell<u64>,
    pub delivering: Cell<bool>,
    /// The loop is shutting down (`close_all` ran): a close that no JS handler takes goes on
    /// at once instead of waiting behind the channel's records for JS (see `Adapter::close`).
    pub closing_all: Cell<bool>,
    pub refd_open: Cell<usize>,
    /// `apply_ops`'s list of the channels whose writes it counted ahead, kept empty between
    /// batches so that its capacity is reused.
    pub reserved: RefCell<crate::ops::Reserved>,
    /// The stamp of the last `apply_ops` batch (see `Entry::reserve`).
    pub reserve_stamp: Cell<u32>,
    /// The messages JS may give back while the batch holding them is delivered (`held.rs`).
    pub kept: RefCell<crate::held::Kept>,
    /// The last delivered batch, emptied: its vectors take the next batch (`Outbox::take`).
    pub(crate) spare_outbox: std::cell::Cell<Option<Outbox>>,
    pub metrics: Metrics,
}

/// Where an inbound op starts: the pipeline's head, or a JS context.
pub enum From {
    Head(ChannelPipeline),
    Ctx(ChannelHandlerContext),
}

impl Hub {
    /// The hub of loop `local`, delivering to `surface` through the arrays of `shared`.
    pub fn new(local: &Rc<LocalLoop>, surface: Box<dyn Surface>, shared: SharedArrays) -> Rc<Hub> {
        let handle = local.handle();
        let hub = Rc::new(Hub {
            id: NEXT_HUB.fetch_add(1, Ordering::Relaxed),
            loop_id: handle.id(),
            local: Rc::downgrade(local),
            surface,
            shared,
            channels: RefCell::default(),
            channels_gen: Cell::new(0),
            closing: RefCell::default(),
            gone_causes: RefCell::default(),
            outbox: RefCell::default(),
            promises: RefCell::default(),
            js_promises: RefCell::default(),
            // Lent ids are negated and must stay below `PromiseId::VoidFiring.value()` (-1).
            next_promise: Cell::new(2),
            delivering: Cell::new(false),
            closing_all: Cell::new(false),
            refd_open: Cell::new(0),
            reserved: RefCell::default(),
            reserve_stamp: Cell::new(0),
            kept: RefCell::default(),
            spare_outbox: std::cell::Cell::new(None),
            metrics: Metrics::default(),
        });
        // A graceful shutdown goes on while events wait for JS or JS's ops wait for the loop.
        let weak = Rc::downgrade(&hub);
        local.set_work_probe(Rc::new(move || {
            weak.upgrade()
                .is_some_and(|h| !h.outbox.borrow().is_empty() || h.shared.has_ops())
        }));
        crate::remote::register(hub.loop_id, handle, &hub);
        hub
    }

    /// The id of this hub's loop.
    pub fn loop_id(&self) -> u64 {
        self.loop_id
    }

    pub fn id(&self) -> u32 {
        self.id
    }

    pub fn outbox(&self) -> RefMut<'_, Outbox> {
        self.outbox.borrow_mut()
    }

    pub fn count_bytes_out_to_js(&self, n: usize) {
        let m = &self.metrics.bytes_to_js;
        m.set(m.get() + n as f64);
    }

    // ---- channels ----

    /// Adds a channel; its close is reported to JS and it leaves the table once unregistered.
    pub fn adopt(self: &Rc<Self>, channel: Channel) -> u64 {
        let id = channel.id().0;
        let weak = Rc::downgrade(self);
        let sink = weak.clone();
        // What reaches the native tail is reported to JS like what reaches the JS tail.
        channel.pipeline().set_unhandled_exception_sink(move |e| {
            if let Some(hub) = sink.upgrade() {
                let mut out = hub.outbox();
                let (a, b) = record::error_fields(out.put_error(hub.id, &e));
                out.push(WireKind::Unhandled as u32, id as f64, 0.0, a, b, 0.0);
            }
        });
        // JS handlers pass the close events on after the native part returned: the handlers
        // are removed when the channel leaves the hub (`sweep`), once the events went through.
        channel.pipeline().defer_destroy();
        channel.on_close(move || {
            if let Some(hub) = weak.upgrade() {
                hub.on_closed(id);
            }
        });
        self.refd_open.set(self.refd_open.get() + 1);
        crate::remote::set_owner(id, self.loop_id);
        self.channels_mut().insert(
            id,
            Entry {
                channel,
                ctxs: Vec::new(),
                refd: true,
                mark: std::cell::OnceCell::new(),
                reserve: Cell::new((0, 0)),
            },
        );
        id
    }

    fn on_closed(&self, id: u64) {
        let mut cause = None;
        if let Some(e) = self.channels.borrow().get(&id) {
            if e.refd {
                self.refd_open.set(self.refd_open.get().saturating_sub(1));
            }
            cause = e.channel.close_cause();
        }
        let mut out = self.outbox();
        // The error that closed the channel, if one did: JS fails later operations with it
        // as their cause.
        let (a, b) = cause.map_or((0.0, Outcome::Success.value()), |c| {
            record::error_fields(out.put_error(self.id, &c))
        });
        out.push(WireKind::Closed as u32, id as f64, 0.0, a, b, 0.0);
        drop(out);
        self.closing.borrow_mut().push(id);
    }

    /// The marks shared by channel `id`'s stand-ins (made on first use).
    pub fn mark_of(&self, id: u64) -> Rc<Marks> {
        self.channels.borrow().get(&id).map_or_else(
            || Rc::new(Marks::default()),
            |e| e.mark.get_or_init(|| Rc::new(Marks::default())).clone(),
        )
    }

    /// Whether channel `id`'s stand-ins share marks yet (it ever had a JS handler).
    pub fn has_marks(&self, id: u64) -> bool {
        self.channels
            .borrow()
            .get(&id)
            .is_some_and(|e| e.mark.get().is_some())
    }

    /// The channel map, to change (see `channels_gen`).
    fn channels_mut(&self) -> std::cell::RefMut<'_, IdMap<Entry>> {
        self.channels_gen
            .set(self.channels_gen.get().wrapping_add(1));
        self.channels.borrow_mut()
    }

    pub fn channel(&self, id: u64) -> Option<Channel> {
        self.channels.borrow().get(&id).map(|e| e.channel.clone())
    }

    pub fn set_ctx(&self, id: u64, ctx_id: u64, ctx: ChannelHandlerContext) {
        if let Some(e) = self.channels_mut().get_mut(&id) {
            match e.ctxs.iter_mut().find(|(id, _)| *id == ctx_id) {
                Some(slot) => slot.1 = ctx,
                None => {
                    e.ctxs.reserve_exact(1);
                    e.ctxs.push((ctx_id, ctx));
                }
            }
        }
    }

    pub fn set_ref(&self, id: u64, refd: bool) {
        let mut map = self.channels_mut();
        let Some(e) = map.get_mut(&id) else { return };
        if e.refd == refd {
            return;
        }
        e.refd = refd;
        if e.channel.is_open() {
            let n = self.refd_open.get();
            self.refd_open
                .set(if refd { n + 1 } else { n.saturating_sub(1) });
        }
    }

    /// Closes every open channel (through its pipeline, as `channel.close()`).
    /// Netty's closeAll at a loop's shutdown: every open channel closes now, through its
    /// pipeline. A JS handler that takes `close` still sees it (as a record); any other close
    /// does not wait behind the records of the channel that JS has not had yet: under a
    /// stream of events those may only go out an iteration later, and an iteration may come
    /// a whole turn of a busy Node thread later, while the loop's shutdown timeout runs.
    pub fn close_all(&self) {
        self.closing_all.set(true);
        let open: Vec<Channel> = self
            .channels
            .borrow()
            .values()
            .filter(|e| e.channel.is_open())
            .map(|e| e.channel.clone())
            .collect();
        for ch in open {
            ch.close();
        }
    }

    pub fn channel_count(&self) -> usize {
        self.channels.borrow().len()
    }

    /// Closed channels that are unregistered leave the table, once their close events went
    /// through the whole pipeline: a channel for which records still wait to reach JS stays
    /// (a JS handler in front of a native one passes `channelInactive` on with an op, which
    /// the native handler passes to the JS handlers behind it with new records). Netty runs
    /// the pipeline's `handlerRemoved`s after `channelUnregistered` went through it.
    pub fn sweep(&self) {
        let ids: Vec<u64> = std::mem::take(&mut *self.closing.borrow_mut());
        if ids.is_empty() {
            return;
        }
        let busy: std::collections::HashSet<u64> = self
            .outbox
            .borrow()
            .records
            .chunks_exact(record::RECORD)
            .map(|r| r[1] as u64)
            .collect();
        let mut keep = Vec::new();
        let mut gone = Vec::new();
        {
            let mut map = self.channels_mut();
            for id in ids {
                match map.get(&id) {
                    Some(e) if e.channel.is_registered() || busy.contains(&id) => keep.push(id),
                    Some(_) => gone.extend(map.remove(&id)),
                    None => {}
                }
            }
        }
        {
            // Ops for these channels can only come from JS code that ran before `WireKind::Forget`
            // reached it: in the next round's ops at the latest.
            let mut causes = self.gone_causes.borrow_mut();
            causes.clear();
            for e in &gone {
                if let Some(c) = e.channel.close_cause() {
                    causes.insert(e.channel.id().0, c);
                }
            }
        }
        {
            let mut out = self.outbox();
            for e in &gone {
                crate::remote::clear_owner(e.channel.id().0);
                out.push(
                    WireKind::Forget as u32,
                    e.channel.id().0 as f64,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                );
            }
        }
        // Outside the borrows: removing handlers (and dropping a pipeline) runs handler code.
        for e in &gone {
            e.channel.pipeline().destroy();
        }
        drop(gone);
        self.closing.borrow_mut().extend(keep);
    }

    /// True while an open, ref'ed channel lives on this loop.
    pub fn keeps_alive(&self) -> bool {
        self.refd_open.get() > 0
    }
}

impl Hub {
    /// The loop ran an iteration: counts it and delivers what it produced.
    pub fn after_iteration(self: &Rc<Self>) {
        let m = &self.metrics.iterations;
        m.set(m.get() + 1.0);
        self.deliver();
    }

    /// Leaves the registries: the loop, this thread's hub entry, the channels' handles.
    /// Idempotent (the loop's close and the hub's drop both call it).
    pub fn unregister(&self) {
        crate::remote::unregister(self.loop_id);
        if let Ok(channels) = self.channels.try_borrow() {
            for id in channels.keys() {
                crate::remote::clear_owner(*id);
            }
        }
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.unregister();
    }
}
