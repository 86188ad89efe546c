//! Delivering what a loop produced to JS: one call per batch of records (as many as the shared
//! record buffer holds), the ops JS made meanwhile applied when the call returns, rounds
//! repeated while they produce records, within a time budget. Ground rules as in
//! [`crate::hub`]: no borrow of the outbox is held while JS runs.
//!
//! What a call into JS is (napi values, the loop's dispatch function) is the binding's: it
//! implements [`Surface`], called once per batch.

use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::big::BigChunks;
use crate::held::Kept;
use crate::hub::Hub;
use crate::outbox::Outbox;
use crate::protocol::WireKind;
use crate::record::RECORD;
use crate::token::drain_released;

/// Most delivery rounds in one go; more records wait for the next iteration.
pub const MAX_ROUNDS: usize = 64;

/// How long an iteration may run before its delivery stops starting new rounds (checked
/// between rounds: a round's JS call is not interrupted; the first round always runs).
pub const ITERATION_BUDGET: Duration = Duration::from_millis(2);

/// The JS side of a hub, as its delivery sees it. crates/node implements it over napi and the
/// loop's libuv bridge; tests implement it with plain Rust.
pub trait Surface {
    /// When the loop's current iteration started ([`ITERATION_BUDGET`] counts from it).
    fn iteration_started(&self) -> Instant;

    /// Hands `batch` to JS: its records through [`Hub::put_in_calls`] (one call into JS per
    /// fill of the shared event array), its bytes, strings and segments with each call. The
    /// ops JS makes during the calls stay in the shared op array: the delivery applies them.
    /// What the surface leaves in `batch` is cleared and its vectors reused for a later batch
    /// (it takes out what it hands over for good).
    fn deliver(&self, hub: &Hub, batch: &mut Outbox);
}

impl Hub {
    /// Records wait and no delivery runs: the loop's next iteration delivers them.
    pub fn schedule_delivery(&self) {
        if !self.delivering.get() && !self.outbox.borrow().is_empty() {
            if let Some(l) = self.local.upgrade() {
                l.request_iteration();
            }
        }
    }

    /// Delivers what the loop produced, applying the ops JS makes meanwhile, until nothing is
    /// left, for at most `MAX_ROUNDS` rounds, and no further round once the iteration (its I/O
    /// and tasks included) has run for `ITERATION_BUDGET`: a round's ops
    /// produce the next round's records (writes drain the socket, the channel turns writable,
    /// the handler writes again), which must not keep the thread from Node's timers, I/O and
    /// `setImmediate`s. What is left waits for the loop's next iteration, which libuv runs in
    /// its next poll phase, after those.
    pub fn deliver(self: &Rc<Self>) {
        if self.delivering.replace(true) {
            return;
        }
        let start = self.surface.iteration_started();
        for round in 0..MAX_ROUNDS {
            self.apply_ops(&mut BigChunks::none(), &[]);
            self.sweep();
            let mut released = Vec::new();
            drain_released(self.id, &mut released);
            if !released.is_empty() {
                let mut out = self.outbox();
                for t in released {
                    out.push(WireKind::Release as u32, 0.0, 0.0, t, 0.0, 0.0);
                }
            }
            if self.outbox.borrow().is_empty() || (round > 0 && start.elapsed() >= ITERATION_BUDGET)
            {
                break;
            }
            let spare = self.spare_outbox.take();
            let batch = self.outbox.borrow_mut().take(spare);
            self.hand_over(batch);
        }
        // The ops of the last call (after the last round) are applied now, not left in the
        // shared buffer until something else applies them.
        self.apply_ops(&mut BigChunks::none(), &[]);
        crate::big::forget(self.id);
        self.delivering.set(false);
        if !self.outbox.borrow().is_empty() {
            if let Some(l) = self.local.upgrade() {
                l.request_iteration();
            }
        }
    }

    /// One batch to the surface, with the messages JS may give back kept meanwhile
    /// (`held.rs`) and its large reads lent (`big.rs`).
    fn hand_over(&self, mut batch: Outbox) {
        let m = &self.metrics;
        m.records.set(m.records.get() + batch.records_len() as f64);
        *self.kept.borrow_mut() = Kept::from_batch(std::mem::take(&mut batch.kept));
        crate::big::lend(self.id, &batch.segments);
        self.surface.deliver(self, &mut batch);
        // What JS did not give back is not needed any more.
        drop(std::mem::take(&mut *self.kept.borrow_mut()));
        // The batch's vectors serve the next one (no allocation per iteration).
        batch.clear();
        self.spare_outbox.set(Some(batch));
    }

    /// Copies `records` into the shared event array, as many as it holds at a time, and calls
    /// `call` with the number copied after each copy: one call into JS per fill, in order.
    pub fn put_in_calls(&self, records: &[f64], mut call: impl FnMut(usize)) {
        let cap = self.shared.event_capacity();
        let m = &self.metrics;
        for chunk in records.chunks(cap * RECORD) {
            let n = self.shared.put_events(chunk);
            m.deliveries.set(m.deliveries.get() + 1.0);
            call(n);
        }
    }
}
