//! JS timers of one loop, native side: ONE loop timer armed for the earliest JS deadline.
//! The timers themselves (heap, order, periods, cancel) live in JS (`src/timers.ts`,
//! docs/decisions/0006-js-timers.md); this side only arms, disarms and reports "fired".
//!
//! Ground rules (loop thread only; JS never runs while this code runs):
//! - Layout of the `Float64Array` shared with JS: `[dirty, deadline, stamp]`, defined by
//!   `protocol::TimerArmSlot`. JS sets `dirty` to 1 when it wants the timer moved;
//!   `deadline` is in `performance.now()` milliseconds, or negative for "disarm"; `stamp` is
//!   the `performance.now()` at which JS wrote it (or NaN).
//! - `drain` reads it after every dispatch call, at the start and end of every iteration, and
//!   when JS asks (`requestDrain`, outside an iteration). Only the last request counts.
//! - Clocks: `performance.now()` and the loop clock both read CLOCK_MONOTONIC, so loop time =
//!   JS time + a constant offset. The offset is measured when the loop is made (JS reads its
//!   clock first, so the estimate errs late, never early) and tightened by every stamp
//!   (`loop now - stamp` is another late estimate; the smallest is kept). The native timer
//!   therefore never fires before the JS deadline; JS checks due-ness with its own clock.
//! - Firing: the armed timer is a loop timer (so `next_timeout`, liveness and shutdown see
//!   it); when it runs it forgets itself and makes one `Timers` dispatch call. JS runs the due
//!   timers (bounded) and re-arms; a due re-arm lands in the loop's next batch, i.e. the next
//!   iteration.
//! - Ownership: the loop's `NativeEventLoop` and its `Bridge` (crates/node) hold the
//!   `JsTimers`; it holds the loop weakly, and its `on_fire` (the binding's `Timers` dispatch
//!   call) holds the bridge weakly, so it never keeps the selector's fds open.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

use netloop_eventloop::{LocalLoop, ScheduledHandle};

use crate::protocol::TimerArmSlot;

/// The buffer's length in f64s: `[dirty, deadline, stamp]` ([`TimerArmSlot`]).
pub const BUFFER_LEN: usize = TimerArmSlot::Length as usize;
const DIRTY: usize = TimerArmSlot::Dirty as usize;
const DEADLINE: usize = TimerArmSlot::Deadline as usize;
const STAMP: usize = TimerArmSlot::Stamp as usize;

pub struct JsTimers {
    local: Weak<LocalLoop>,
    /// Calls JS: its due timers run (the binding's `Timers` dispatch call).
    on_fire: Box<dyn Fn()>,
    me: Weak<JsTimers>,
    /// The armed loop timer and its loop-time deadline.
    armed: RefCell<Option<(ScheduledHandle, Duration)>>,
    /// Counts armings: a firing timer forgets itself only if it is still the armed one.
    generation: Cell<u64>,
    buffer: Cell<(*mut f64, usize)>,
    /// Loop clock (ms) minus `performance.now()`: constant, both count CLOCK_MONOTONIC; the
    /// smallest late estimate seen.
    offset_ms: Cell<f64>,
}

fn ms(v: f64) -> Duration {
    Duration::try_from_secs_f64(v.max(0.0) / 1000.0).unwrap_or(Duration::MAX)
}

impl JsTimers {
    /// The JS timers of loop `local`; `on_fire` calls JS when the armed timer fires.
    pub fn new(local: Weak<LocalLoop>, on_fire: Box<dyn Fn()>) -> Rc<Self> {
        Rc::new_cyclic(|me| JsTimers {
            local,
            on_fire,
            me: me.clone(),
            armed: RefCell::new(None),
            generation: Cell::new(0),
            buffer: Cell::new((std::ptr::null_mut(), 0)),
            offset_ms: Cell::new(f64::INFINITY),
        })
    }

    fn loop_now_ms(&self) -> f64 {
        self.local
            .upgrade()
            .map_or(0.0, |l| l.now().as_secs_f64() * 1000.0)
    }

    /// 1 while the loop timer is armed (JS has pending timers), else 0.
    pub fn live(&self) -> usize {
        usize::from(
            self.armed
                .borrow()
                .as_ref()
                .is_some_and(|(h, _)| !h.is_cancelled() && !h.is_finished()),
        )
    }

    /// Records `performance.now()` read by JS before this call (a late estimate of the offset).
    pub fn calibrate(&self, js_now_ms: f64) {
        if js_now_ms.is_finite() {
            let estimate = self.loop_now_ms() - js_now_ms;
            if estimate < self.offset_ms.get() {
                self.offset_ms.set(estimate);
            }
        }
    }

    /// Shares JS's buffer: `len` f64s at `data`, kept alive by a reference the caller holds.
    ///
    /// # Safety
    /// `data` must point to `len` f64s that stay valid (not freed, moved or detached) as long
    /// as this `JsTimers` lives, and that nothing else touches while its methods run.
    pub unsafe fn set_buffer(&self, data: *mut f64, len: usize) {
        self.buffer.set((data, len));
    }

    /// The request JS left in the buffer, if any (and marks it read): `Some(deadline, stamp)`.
    fn take_request(&self) -> Option<(f64, f64)> {
        let (data, len) = self.buffer.get();
        if data.is_null() || len != BUFFER_LEN {
            return None;
        }
        // SAFETY: `data` points to `len` f64s that stay valid while we live (the contract of
        // `set_buffer`: a Float64Array the loop keeps referenced, never detached); we are on the
        // JS thread and JS is not running while native code runs; no other slice of it is alive.
        let buf = unsafe { std::slice::from_raw_parts_mut(data, len) };
        if buf[DIRTY] == 0.0 {
            return None;
        }
        buf[DIRTY] = 0.0;
        Some((buf[DEADLINE], buf[STAMP]))
    }

    /// Cancels the loop timer, if armed.
    pub fn cancel_all(&self) {
        let armed = self.armed.borrow_mut().take();
        if let Some((h, _)) = armed {
            h.cancel();
        }
    }

    /// Applies JS's last request: arm the loop timer at its deadline, or disarm it.
    pub fn drain(&self) {
        let Some((deadline, stamp)) = self.take_request() else {
            return;
        };
        self.calibrate(stamp);
        if deadline.is_nan() || deadline < 0.0 {
            self.cancel_all();
            return;
        }
        let Some(local) = self.local.upgrade() else {
            return;
        };
        let now = local.now();
        let mut at = ms(deadline + self.offset_ms.get());
        if stamp.is_finite() {
            // `now + (deadline - stamp)` is late too (the stamp was read before `now`), and
            // exact for a deadline JS found due (no float rounding pushing it past `now`,
            // which would cost a 1 ms uv timer instead of the next iteration).
            at = at.min(now.saturating_add(ms(deadline - stamp)));
        }
        if self
            .armed
            .borrow()
            .as_ref()
            .is_some_and(|(h, d)| *d == at && !h.is_cancelled() && !h.is_finished())
        {
            return;
        }
        self.cancel_all();
        let me = self.me.clone();
        let generation = self.generation.get().wrapping_add(1);
        self.generation.set(generation);
        let handle = local.schedule_local_at(at, move || {
            if let Some(t) = me.upgrade() {
                t.fire(generation);
            }
        });
        *self.armed.borrow_mut() = Some((handle, at));
    }

    /// The loop timer ran: it is gone; JS runs its due timers and re-arms.
    fn fire(&self, generation: u64) {
        if generation != self.generation.get() {
            return;
        }
        self.armed.borrow_mut().take();
        (self.on_fire)();
    }
}

impl std::fmt::Debug for JsTimers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsTimers")
            .field("generation", &self.generation.get())
            .finish_non_exhaustive()
    }
}
