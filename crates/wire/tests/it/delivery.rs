//! Delivery batching without Node: a hub on a hand-driven attached loop, delivering to a
//! surface that records what JS would get (the batches, the calls and the records each call
//! found in the shared event array) and that can push records as JS's ops would.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use netloop_eventloop::{EventLoop, LoopConfig, LoopDriver};
use netloop_wire::delivery::{ITERATION_BUDGET, MAX_ROUNDS};
use netloop_wire::outbox::Outbox;
use netloop_wire::record::RECORD;
use netloop_wire::shared::{Shared, SharedArrays};
use netloop_wire::{Hub, Surface};

/// What the fake JS side saw.
#[derive(Default)]
struct Seen {
    /// The records of each batch, as handed over.
    batches: Vec<Vec<f64>>,
    /// Per call into JS: the records found in the shared event array.
    calls: Vec<Vec<f64>>,
}

struct FakeJs {
    seen: Rc<RefCell<Seen>>,
    /// The shared event array's memory (owned by the hub's `Shared`).
    events: *const f64,
    events_len: usize,
    started: Instant,
    /// Records each batch makes JS push back (as ops producing records would).
    echo: bool,
}

impl Surface for FakeJs {
    fn iteration_started(&self) -> Instant {
        self.started
    }

    fn deliver(&self, hub: &Hub, batch: &mut Outbox) {
        self.seen.borrow_mut().batches.push(batch.records.clone());
        hub.put_in_calls(&batch.records, |n| {
            // SAFETY: the array is the hub's events `Shared`, alive as long as the hub, and
            // nothing writes it while this callback runs (one thread, between copies).
            let all = unsafe { std::slice::from_raw_parts(self.events, self.events_len) };
            self.seen
                .borrow_mut()
                .calls
                .push(all[..n * RECORD].to_vec());
        });
        if self.echo {
            let next = batch.records[3] + 1.0;
            hub.outbox().push(3, 1.0, 0.0, next, 0.0, 0.0);
        }
        // A nested delivery (JS calling into the hub while it delivers) does nothing.
        let before = self.seen.borrow().batches.len();
        if let Some(hub) = netloop_wire::remote::local_hub(hub.loop_id()) {
            hub.deliver();
        }
        assert_eq!(self.seen.borrow().batches.len(), before, "no nested batch");
    }
}

struct Setup {
    hub: Rc<Hub>,
    seen: Rc<RefCell<Seen>>,
    _driver: LoopDriver,
    _handle: EventLoop,
}

/// A hub whose event array holds `capacity` records, and whose iteration started at
/// `started`.
fn hub(capacity: usize, started: Instant, echo: bool) -> Setup {
    let (handle, driver) = EventLoop::attached(LoopConfig::default()).expect("a loop");
    let mut events = vec![0.0; capacity * RECORD];
    let (ptr, len) = (events.as_mut_ptr() as *const f64, events.len());
    let shared = SharedArrays {
        events: Shared::of_vec(events),
        ops: Shared::of_vec(vec![0.0; 1 + 16 * RECORD]),
        arena: Shared::of_vec(vec![0u8; 64]),
        state: Shared::of_vec(vec![0.0; 8]),
    };
    let seen = Rc::new(RefCell::new(Seen::default()));
    let surface = FakeJs {
        seen: seen.clone(),
        events: ptr,
        events_len: len,
        started,
        echo,
    };
    let hub = Hub::new(driver.local(), Box::new(surface), shared);
    Setup {
        hub,
        seen,
        _driver: driver,
        _handle: handle,
    }
}

/// A record of kind `Active` (3) for channel 1 with `a` = `n`.
fn record(n: f64) -> [f64; RECORD] {
    [3.0, 1.0, 0.0, n, 0.0, 0.0]
}

#[test]
fn the_records_of_one_turn_reach_js_in_one_batch_in_their_order() {
    let s = hub(16, Instant::now() + Duration::from_secs(3600), false);
    for n in 0..5 {
        s.hub.outbox().push(3, 1.0, 0.0, f64::from(n), 0.0, 0.0);
    }
    s.hub.deliver();
    let seen = s.seen.borrow();
    assert_eq!(seen.batches.len(), 1, "one batch");
    let expected: Vec<f64> = (0..5).flat_map(|n| record(f64::from(n))).collect();
    assert_eq!(seen.batches[0], expected);
    assert_eq!(
        seen.calls,
        vec![expected],
        "one call, the records in the shared array"
    );
    assert!(s.hub.outbox().is_empty(), "nothing left");
    assert_eq!(s.hub.metrics.records.get(), 5.0);
    assert_eq!(s.hub.metrics.deliveries.get(), 1.0);
}

#[test]
fn a_batch_larger_than_the_event_array_goes_in_several_calls_in_order() {
    let s = hub(2, Instant::now() + Duration::from_secs(3600), false);
    for n in 0..5 {
        s.hub.outbox().push(3, 1.0, 0.0, f64::from(n), 0.0, 0.0);
    }
    s.hub.deliver();
    let seen = s.seen.borrow();
    assert_eq!(seen.batches.len(), 1, "still one batch");
    let calls: Vec<Vec<f64>> = seen.calls.clone();
    assert_eq!(
        calls.iter().map(|c| c.len() / RECORD).collect::<Vec<_>>(),
        vec![2, 2, 1],
        "as many records per call as the array holds"
    );
    let joined: Vec<f64> = calls.concat();
    let expected: Vec<f64> = (0..5).flat_map(|n| record(f64::from(n))).collect();
    assert_eq!(joined, expected, "order kept across calls");
    assert_eq!(s.hub.metrics.deliveries.get(), 3.0);
}

#[test]
fn rounds_repeat_while_js_produces_records_and_stop_at_the_round_limit() {
    // An iteration that never runs out of time: only MAX_ROUNDS stops the rounds.
    let s = hub(16, Instant::now() + Duration::from_secs(3600), true);
    s.hub.outbox().push(3, 1.0, 0.0, 0.0, 0.0, 0.0);
    s.hub.deliver();
    {
        let seen = s.seen.borrow();
        assert_eq!(seen.batches.len(), MAX_ROUNDS);
        for (i, b) in seen.batches.iter().enumerate() {
            assert_eq!(
                b,
                &record(i as f64).to_vec(),
                "round {i} carries what round {i}-1 made"
            );
        }
    }
    let left = s.hub.outbox().records.clone();
    assert_eq!(
        left,
        record(MAX_ROUNDS as f64).to_vec(),
        "the last round's record waits"
    );
    // The next iteration delivers it first.
    s.hub.deliver();
    assert_eq!(
        s.seen.borrow().batches[MAX_ROUNDS],
        record(MAX_ROUNDS as f64).to_vec()
    );
}

#[test]
fn past_the_budget_only_the_first_round_runs_and_the_rest_waits_in_order() {
    let late = Instant::now()
        .checked_sub(ITERATION_BUDGET + Duration::from_millis(1))
        .expect("a clock past its start");
    let s = hub(16, late, true);
    s.hub.outbox().push(3, 1.0, 0.0, 0.0, 0.0, 0.0);
    s.hub.outbox().push(3, 1.0, 0.0, 1.0, 0.0, 0.0);
    s.hub.deliver();
    assert_eq!(
        s.seen.borrow().batches.len(),
        1,
        "the first round always runs, no other"
    );
    assert_eq!(
        s.hub.outbox().records.clone(),
        record(1.0).to_vec(),
        "what JS produced waits for the next iteration"
    );
    s.hub.deliver();
    let seen = s.seen.borrow();
    assert_eq!(seen.batches.len(), 2);
    assert_eq!(seen.batches[1], record(1.0).to_vec());
}

#[test]
fn an_empty_outbox_calls_no_js() {
    let s = hub(16, Instant::now(), false);
    s.hub.deliver();
    assert!(s.seen.borrow().batches.is_empty());
    assert_eq!(s.hub.metrics.deliveries.get(), 0.0);
}
