//! The promises a hub keeps between native code and JS: native promises lent to JS (negative
//! ids), promises made for JS ones (positive ids, reported back as `PromiseDone` records), and
//! the two void ones (0: silent, Netty's `write(msg)`; `PromiseId::VoidFiring`: its failure is
//! fired into `exceptionCaught`). Split from [`super`]; its ground rules hold here.

use std::rc::Rc;

use netloop_transport::{ChannelPipeline, ChannelPromise, LocalListenerExt, TransportError};

use super::Hub;
use crate::protocol::{Outcome, PromiseId, RecordValue as _, WireKind};
use crate::record;

impl Hub {
    /// Keeps a native promise for JS; 0 for a silent void one, `PromiseId::VoidFiring` for one whose
    /// failure goes to `exceptionCaught`.
    pub fn lend_promise(&self, p: ChannelPromise) -> f64 {
        if p.is_void() {
            return if p.is_firing() {
                PromiseId::VoidFiring.value()
            } else {
                0.0
            };
        }
        let id = self.next_promise.get();
        self.next_promise.set(id + 1);
        self.promises.borrow_mut().insert(id, p);
        -(id as f64)
    }

    /// The native promise lent as `id` (below `PromiseId::VoidFiring`), if any.
    pub fn take_promise(&self, id: f64) -> Option<ChannelPromise> {
        if id < PromiseId::VoidFiring.value() {
            self.promises.borrow_mut().remove(&((-id) as u64))
        } else {
            None
        }
    }

    /// The promise for an op: a lent native one, a new one reporting to JS promise `id`, the
    /// silent void one (0: a write made without a promise, Netty's `write(msg)`), or
    /// (`PromiseId::VoidFiring`) one whose failure is fired into the pipeline's `exceptionCaught`.
    pub fn promise_for(self: &Rc<Self>, id: f64, pipeline: &ChannelPipeline) -> ChannelPromise {
        if id < PromiseId::VoidFiring.value() {
            return self.take_promise(id).unwrap_or_default();
        }
        if id == PromiseId::VoidFiring.value() {
            return ChannelPromise::void_firing(pipeline);
        }
        if id == 0.0 {
            return ChannelPromise::void();
        }
        let p = ChannelPromise::new();
        if let Some(f) = p.future() {
            self.js_promises.borrow_mut().insert(id as u64, p.clone());
            let weak = Rc::downgrade(self);
            f.add_local_listener(move |r| {
                if let Some(hub) = weak.upgrade() {
                    hub.js_promises.borrow_mut().remove(&(id as u64));
                    hub.report_promise(id, r);
                }
            });
        }
        p
    }

    /// JS cancelled promise `id` (a JS one, or one lent by native code): cancels the native
    /// promise unless it is done or uncancellable (a flushed write, an operation under way).
    /// `true` if it was cancelled.
    pub fn cancel_promise(&self, id: f64) -> bool {
        let p = if id > 0.0 {
            self.js_promises.borrow().get(&(id as u64)).cloned()
        } else if id < 0.0 {
            self.promises.borrow().get(&((-id) as u64)).cloned()
        } else {
            None
        };
        let Some(p) = p else { return false };
        // Listeners run here (no borrow is held).
        let cancelled = p.cancel(false);
        if cancelled && id < 0.0 {
            self.take_promise(id);
        }
        cancelled
    }

    pub fn report_promise(&self, id: f64, r: &Result<(), TransportError>) {
        let mut out = self.outbox();
        match r {
            Ok(()) => out.push(
                WireKind::PromiseDone as u32,
                0.0,
                0.0,
                id,
                Outcome::Success.value(),
                0.0,
            ),
            Err(e) => {
                let (at, b) = record::error_fields(out.put_error(self.id, e));
                out.push(WireKind::PromiseDone as u32, 0.0, 0.0, id, b, at);
            }
        }
    }

    /// Fails promise `id` of an op for channel `chan`, which is gone, at once. The silent void
    /// promise learns nothing (Netty's `write(msg)`); the firing one (`voidPromise()`) reports
    /// to JS, which fires the failure into that channel's pipeline: JS made the op before it
    /// learned the channel was forgotten, and still knows the channel for a while
    /// (hub.ts `forgotten`).
    pub fn fail_promise(&self, chan: u64, id: f64, e: TransportError) {
        if id > 0.0 {
            self.report_promise(id, &Err(e));
        } else if id == PromiseId::VoidFiring.value() {
            let mut out = self.outbox();
            let (at, b) = record::error_fields(out.put_error(self.id, &e));
            out.push(WireKind::PromiseDone as u32, chan as f64, 0.0, id, b, at);
        } else if let Some(p) = self.take_promise(id) {
            p.try_failure(e);
        }
    }

    /// Completes promise `id` of an op that needed nothing done.
    pub fn succeed_promise(&self, id: f64) {
        if id > 0.0 {
            self.report_promise(id, &Ok(()));
        } else if let Some(p) = self.take_promise(id) {
            p.try_success();
        }
    }
}
