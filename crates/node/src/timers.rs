//! JS timers of one loop: the id → handle table, and the shared op buffer through which JS
//! schedules and cancels timers without a napi call per timer.
//!
//! Ground rules (loop thread only):
//! - Ops are written by JS into a `Float64Array` it shares with this module, only while a
//!   dispatch call is running; the bridge drains them right after each dispatch call returns
//!   (and JS drains them itself when the buffer fills). So ops never wait across iterations.
//! - Layout: `[count, (kind, id, a, b, jsStamp) × count]`. Each op carries the JS time
//!   (`performance.now()`, ms) at which it was made. Both `performance.now()` and the loop's
//!   clock read CLOCK_MONOTONIC, so their offset, measured once when the loop is made, turns a
//!   stamp into the op's age at drain; the deadline is corrected by that age, so a buffered
//!   timer fires as if it had been scheduled at the call.
//! - Drains happen after every dispatch call, at the start of every iteration, and when JS
//!   asks (buffer full, shutdown).
//! - Ids are JS's; a one-shot id leaves the table when its timer fires or is cancelled.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::{Rc, Weak};
use std::time::Duration;

use netloop_eventloop::{LocalLoop, ScheduledHandle};

use crate::bridge::{Bridge, Dispatch};

/// Fields per op in the shared buffer, and the header length.
pub const OP_FIELDS: usize = 5;
pub const OP_HEADER: usize = 1;

const OP_ONESHOT: f64 = 1.0;
const OP_FIXED_RATE: f64 = 2.0;
const OP_FIXED_DELAY: f64 = 3.0;
const OP_CANCEL: f64 = 4.0;

pub struct JsTimers {
    local: Rc<LocalLoop>,
    bridge: Weak<Bridge>,
    handles: RefCell<HashMap<u32, ScheduledHandle>>,
    ops: Cell<(*mut f64, usize)>,
    /// Loop clock (ms) minus `performance.now()`: constant, both count CLOCK_MONOTONIC.
    offset_ms: Cell<f64>,
}

fn ms(v: f64) -> Duration {
    Duration::try_from_secs_f64(v.max(0.0) / 1000.0).unwrap_or(Duration::MAX)
}

impl JsTimers {
    pub fn new(local: Rc<LocalLoop>, bridge: Weak<Bridge>) -> Rc<Self> {
        Rc::new(JsTimers {
            local,
            bridge,
            handles: RefCell::default(),
            ops: Cell::new((std::ptr::null_mut(), 0)),
            offset_ms: Cell::new(0.0),
        })
    }

    fn loop_now_ms(&self) -> f64 {
        self.local.now().as_secs_f64() * 1000.0
    }

    /// Records `performance.now()` read by JS just before making the loop.
    pub fn calibrate(&self, js_now_ms: f64) {
        self.offset_ms.set(self.loop_now_ms() - js_now_ms);
    }

    /// Shares JS's op buffer: `len` f64s at `data`, kept alive by a reference the caller holds.
    pub fn set_op_buffer(&self, data: *mut f64, len: usize) {
        self.ops.set((data, len));
    }

    pub fn schedule(self: &Rc<Self>, id: u32, delay: Duration) {
        self.schedule_at(id, self.local.now().saturating_add(delay));
    }

    /// One-shot timer `id` at loop time `deadline`.
    pub fn schedule_at(self: &Rc<Self>, id: u32, deadline: Duration) {
        let (b, me) = (self.bridge.clone(), Rc::downgrade(self));
        let h = self.local.schedule_local_at(deadline, move || {
            if let Some(t) = me.upgrade() {
                t.handles.borrow_mut().remove(&id);
            }
            if let Some(b) = b.upgrade() {
                b.call(Dispatch::Timer, f64::from(id));
            }
        });
        self.handles.borrow_mut().insert(id, h);
    }

    pub fn schedule_periodic(
        &self,
        id: u32,
        initial: Duration,
        period: Duration,
        fixed_rate: bool,
    ) -> bool {
        self.schedule_periodic_at(
            id,
            self.local.now().saturating_add(initial),
            period,
            fixed_rate,
        )
    }

    /// Periodic timer `id`, first run at loop time `first`.
    pub fn schedule_periodic_at(
        &self,
        id: u32,
        first: Duration,
        period: Duration,
        fixed_rate: bool,
    ) -> bool {
        let b = self.bridge.clone();
        let res = self
            .local
            .schedule_local_periodic_at(first, period, fixed_rate, move || {
                if let Some(b) = b.upgrade() {
                    b.call(Dispatch::Timer, f64::from(id));
                }
            });
        match res {
            Ok(h) => {
                self.handles.borrow_mut().insert(id, h);
                true
            }
            Err(_) => false,
        }
    }

    pub fn cancel(&self, id: u32) -> bool {
        self.handles
            .borrow_mut()
            .remove(&id)
            .is_some_and(|h| h.cancel())
    }

    pub fn cancel_all(&self) {
        for (_, h) in self.handles.borrow_mut().drain() {
            h.cancel();
        }
    }

    /// Applies the ops JS buffered, then marks the buffer empty.
    pub fn drain(self: &Rc<Self>) {
        let (data, len) = self.ops.get();
        if data.is_null() || len < OP_HEADER {
            return;
        }
        // SAFETY: `data` points to `len` f64s of a Float64Array that the loop keeps referenced
        // (so not collected, and never detached: JS keeps it private); we are on the JS thread
        // and JS is not running while native code runs.
        let buf = unsafe { std::slice::from_raw_parts_mut(data, len) };
        let count = (buf[0].max(0.0) as usize).min((len - OP_HEADER) / OP_FIELDS);
        if count == 0 {
            return;
        }
        let offset = self.offset_ms.get();
        let now = self.loop_now_ms();
        for i in 0..count {
            let at = OP_HEADER + i * OP_FIELDS;
            let (kind, id, a, b, stamp) = (
                buf[at],
                buf[at + 1] as u32,
                buf[at + 2],
                buf[at + 3],
                buf[at + 4],
            );
            // Deadline in loop time, from the moment JS made the call (may be in the past:
            // then it is due now, still ordered by its deadline).
            // Never later than counting from now: the calibration may be off by microseconds.
            let deadline = ms((stamp + offset).min(now) + a.max(0.0));
            if kind == OP_ONESHOT {
                self.schedule_at(id, deadline);
            } else if kind == OP_FIXED_RATE || kind == OP_FIXED_DELAY {
                self.schedule_periodic_at(id, deadline, ms(b), kind == OP_FIXED_RATE);
            } else if kind == OP_CANCEL {
                self.cancel(id);
            }
        }
        buf[0] = 0.0;
    }
}
