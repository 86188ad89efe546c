//! JS timers of one loop: the id → handle table, and the `Float64Array` shared with JS
//! through which JS schedules and cancels timers, and learns which fired, without a napi call
//! per timer.
//!
//! Ground rules (loop thread only; JS never runs while this code runs):
//! - Layout: `[count, (kind, id, a, b, jsStamp) × OPS_CAPACITY, fired ids × FIRED_SLOTS]`,
//!   defined here only and exported to JS (`TIMER_*` constants), which sizes the buffer.
//! - Ops are written by JS; they are applied after every dispatch call, at the start and end
//!   of every iteration, and when JS asks (buffer full, shutdown). Each op carries the JS time
//!   (`performance.now()`, ms) at which it was made. `performance.now()` and the loop clock
//!   both read CLOCK_MONOTONIC, so their offset, measured when the loop is made, turns a stamp
//!   into loop time: a buffered timer fires as if it had been scheduled at the call. The
//!   offset errs late (never early), and a deadline is capped at "now + delay".
//! - Firing: every JS timer is a batched timer of one sink (this table), so due timers that
//!   follow each other in a task batch reach JS in one dispatch call: their ids are written to
//!   the fired region and JS runs them in that order.
//! - Ids are JS's; a one-shot id leaves the table when its timer fires or is cancelled. JS
//!   never hands out an id that is still live (ids wrap after 2^32 - 2 schedules).
//! - The table holds the loop weakly: it never keeps the selector's fds open.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashMap;
use std::rc::{Rc, Weak};
use std::time::Duration;

use napi_derive::napi;
use netloop_eventloop::{LocalLoop, ScheduledHandle, TimerSink, MAX_TIMER_BATCH};

use crate::bridge::{Bridge, Dispatch};
use crate::error::debug;

/// Fields per op, the header length, the op capacity and the fired-id slots at the end of
/// the buffer.
pub const OP_FIELDS: usize = 5;
pub const OP_HEADER: usize = 1;
pub const OPS_CAPACITY: usize = 256;
pub const FIRED_SLOTS: usize = MAX_TIMER_BATCH;

/// Layout of the shared timer buffer, for JS (see the module documentation).
#[napi]
pub const TIMER_OP_FIELDS: u32 = OP_FIELDS as u32;
#[napi]
pub const TIMER_OP_HEADER: u32 = OP_HEADER as u32;
#[napi]
pub const TIMER_OPS_CAPACITY: u32 = OPS_CAPACITY as u32;
#[napi]
pub const TIMER_FIRED_SLOTS: u32 = FIRED_SLOTS as u32;
/// The buffer's length in f64s.
pub const BUFFER_LEN: usize = OP_HEADER + OP_FIELDS * OPS_CAPACITY + FIRED_SLOTS;

const OP_ONESHOT: f64 = 1.0;
const OP_FIXED_RATE: f64 = 2.0;
const OP_FIXED_DELAY: f64 = 3.0;
const OP_CANCEL: f64 = 4.0;

struct Entry {
    handle: ScheduledHandle,
    periodic: bool,
}

pub struct JsTimers {
    local: Weak<LocalLoop>,
    bridge: Weak<Bridge>,
    handles: RefCell<HashMap<u32, Entry>>,
    buffer: Cell<(*mut f64, usize)>,
    /// Loop clock (ms) minus `performance.now()`: constant, both count CLOCK_MONOTONIC.
    offset_ms: Cell<f64>,
    /// This table as the loop's timer sink (a weak link: no cycle through the loop).
    sink: OnceCell<Rc<dyn TimerSink>>,
}

struct Sink(Weak<JsTimers>);

impl TimerSink for Sink {
    fn fire(&self, ids: &[u64]) {
        if let Some(t) = self.0.upgrade() {
            t.fire(ids);
        }
    }
}

fn ms(v: f64) -> Duration {
    Duration::try_from_secs_f64(v.max(0.0) / 1000.0).unwrap_or(Duration::MAX)
}

impl JsTimers {
    pub fn new(local: Weak<LocalLoop>, bridge: Weak<Bridge>) -> Rc<Self> {
        let t = Rc::new(JsTimers {
            local,
            bridge,
            handles: RefCell::default(),
            buffer: Cell::new((std::ptr::null_mut(), 0)),
            offset_ms: Cell::new(0.0),
            sink: OnceCell::new(),
        });
        let _ = t.sink.set(Rc::new(Sink(Rc::downgrade(&t))));
        t
    }

    fn loop_now_ms(&self) -> f64 {
        self.local
            .upgrade()
            .map_or(0.0, |l| l.now().as_secs_f64() * 1000.0)
    }

    /// JS timers scheduled and not yet finished or cancelled.
    pub fn live(&self) -> usize {
        self.handles.borrow().len()
    }

    /// Records `performance.now()` read by JS just before making the loop.
    pub fn calibrate(&self, js_now_ms: f64) {
        self.offset_ms.set(self.loop_now_ms() - js_now_ms);
    }

    /// Shares JS's buffer: `len` f64s at `data`, kept alive by a reference the caller holds.
    pub fn set_buffer(&self, data: *mut f64, len: usize) {
        self.buffer.set((data, len));
    }

    fn with_buffer<R>(&self, f: impl FnOnce(&mut [f64]) -> R) -> Option<R> {
        let (data, len) = self.buffer.get();
        if data.is_null() || len != BUFFER_LEN {
            return None;
        }
        // SAFETY: `data` points to `len` f64s of a Float64Array that the loop keeps referenced
        // (so not collected, and never detached: JS keeps it private); we are on the JS thread
        // and JS is not running while native code runs; no other slice of it is alive.
        let buf = unsafe { std::slice::from_raw_parts_mut(data, len) };
        Some(f(buf))
    }

    /// Timer `id` at loop time `first`, repeating every `period` if given.
    fn add(&self, id: u32, first: Duration, period: Option<(Duration, bool)>) -> bool {
        let (Some(sink), Some(local)) = (self.sink.get().cloned(), self.local.upgrade()) else {
            return false;
        };
        match local.schedule_batched_at(first, period, sink, u64::from(id)) {
            Ok(handle) => {
                let periodic = period.is_some();
                if let Some(old) = self
                    .handles
                    .borrow_mut()
                    .insert(id, Entry { handle, periodic })
                {
                    old.handle.cancel();
                }
                true
            }
            Err(_) => false,
        }
    }

    fn now(&self) -> Duration {
        self.local.upgrade().map_or(Duration::ZERO, |l| l.now())
    }

    /// `false` if the loop refused it (terminated).
    pub fn schedule(&self, id: u32, delay: Duration) -> bool {
        self.add(id, self.now().saturating_add(delay), None)
    }

    /// `false` if the loop refused it (a zero period, or terminated).
    pub fn schedule_periodic(
        &self,
        id: u32,
        initial: Duration,
        period: Duration,
        fixed_rate: bool,
    ) -> bool {
        self.add(
            id,
            self.now().saturating_add(initial),
            Some((period, fixed_rate)),
        )
    }

    pub fn cancel(&self, id: u32) -> bool {
        self.handles
            .borrow_mut()
            .remove(&id)
            .is_some_and(|e| e.handle.cancel())
    }

    pub fn cancel_all(&self) {
        for (_, e) in self.handles.borrow_mut().drain() {
            e.handle.cancel();
        }
    }

    /// Hands fired ids to JS in one dispatch call.
    fn fire(&self, ids: &[u64]) {
        let written = self.with_buffer(|buf| {
            let base = buf.len() - FIRED_SLOTS;
            let mut handles = self.handles.borrow_mut();
            for (slot, &id) in buf[base..].iter_mut().zip(ids) {
                *slot = id as f64;
                let key = id as u32;
                if handles.get(&key).is_some_and(|e| !e.periodic) {
                    handles.remove(&key);
                }
            }
            ids.len().min(FIRED_SLOTS)
        });
        if let (Some(n), Some(b)) = (written, self.bridge.upgrade()) {
            b.call(Dispatch::Timers, n as f64);
        }
    }

    /// Applies the ops JS buffered, then marks the buffer empty.
    pub fn drain(&self) {
        let ops = self.with_buffer(|buf| {
            let count = (buf[0].max(0.0) as usize).min(OPS_CAPACITY);
            buf[0] = 0.0;
            buf[OP_HEADER..OP_HEADER + count * OP_FIELDS].to_vec()
        });
        let Some(ops) = ops else { return };
        let offset = self.offset_ms.get();
        let now = self.loop_now_ms();
        for op in ops.chunks_exact(OP_FIELDS) {
            let (kind, id, a, b, stamp) = (op[0], op[1] as u32, op[2], op[3], op[4]);
            // Loop time of the call (never later than now: the offset may err by µs), plus
            // the delay. May be in the past: then it is due now, still ordered by deadline.
            let deadline = ms((stamp + offset).min(now) + a.max(0.0));
            // JS validated the numbers (finite, period >= 1 µs), so the loop refuses an op
            // only when it is terminating, which JS also checks before buffering.
            let ok = if kind == OP_ONESHOT {
                self.add(id, deadline, None)
            } else if kind == OP_FIXED_RATE || kind == OP_FIXED_DELAY {
                self.add(id, deadline, Some((ms(b), kind == OP_FIXED_RATE)))
            } else {
                if kind == OP_CANCEL {
                    self.cancel(id);
                }
                true
            };
            if !ok {
                debug(format_args!("timer op {kind} for id {id} was refused"));
            }
        }
    }
}
