//! An exhaustive interleaving check of the wake-up handshake between producers (`execute`
//! from other threads) and a loop going to sleep, as implemented in `shared.rs` and `submit.rs`
//! (`Shared::wake_if_sleeping`, `Shared::wake`, `Shared::polled`) and `local.rs`
//! (`block_timeout`, `prepare_attached_sleep`).
//!
//! Every atomic in the protocol is `SeqCst` (with `SeqCst` fences), so a sequentially
//! consistent model is faithful: each step below is one atomic operation, and the checker
//! explores every interleaving of two producers and the loop (a breadth-first search over all
//! reachable states). The property: the loop never ends up waiting for a wake-up that nobody
//! will send while a task sits in the queue (no lost wake-up).
//!
//! The model of the eventfd: `event` is true while a written wake has not been consumed by a
//! poll. `pending` is `Shared::wake_pending`.

use std::collections::{HashSet, VecDeque};

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Producer {
    /// `queue.push(task)`
    Push,
    /// `fence; if sleeping.swap(false)` → `Wake`, else `Done`
    SwapSleeping,
    /// `Shared::wake`: `if !pending.swap(true)` → `Write`, else `Done`
    Wake,
    /// `waker.wake()`: the eventfd becomes readable
    Write,
    /// Broken order only: the push after the wake-up check
    PushLate,
    Done,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Loop {
    /// Going to sleep: `sleeping.store(true)`
    SetSleeping,
    /// `fence; if !queue.is_empty()` → `CancelSleep`, else `Poll`
    Recheck,
    /// `sleeping.store(false)` and run the tasks without polling
    CancelSleep,
    /// Blocked until `event`; consumes it
    Poll,
    /// `Shared::polled`, first half: `sleeping.store(false)`
    PolledSleeping,
    /// `Shared::polled`, second half: `pending.store(false)`
    PolledPending,
    /// The batch takes every task in the queue
    Drain,
    /// Attached only: after the batch, work left → `Shared::wake` (`SelfWake`), else sleep.
    AfterBatch,
    SelfWake,
    SelfWrite,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct State {
    producers: [Producer; 2],
    lp: Loop,
    queue: u8,
    sleeping: bool,
    pending: bool,
    event: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// A standalone loop blocking in its poll.
    Standalone,
    /// An attached loop: libuv calls `run_io_ready` when the fd is readable.
    Attached,
    /// A broken producer that checks `sleeping` before pushing (the checker must fail it).
    BrokenProducerOrder,
}

fn producer_step(s: &State, i: usize, mode: Mode) -> Option<State> {
    let mut n = *s;
    let broken = mode == Mode::BrokenProducerOrder;
    // What a producer does once its wake-up part is over: the broken one pushes only now.
    let finish = if broken {
        Producer::PushLate
    } else {
        Producer::Done
    };
    n.producers[i] = match s.producers[i] {
        Producer::Push if broken => {
            let was = std::mem::replace(&mut n.sleeping, false);
            if was {
                Producer::Wake
            } else {
                finish
            }
        }
        Producer::Push => {
            n.queue += 1;
            Producer::SwapSleeping
        }
        Producer::SwapSleeping => {
            let was = std::mem::replace(&mut n.sleeping, false);
            if was {
                Producer::Wake
            } else {
                finish
            }
        }
        Producer::Wake => {
            let was = std::mem::replace(&mut n.pending, true);
            if was {
                finish
            } else {
                Producer::Write
            }
        }
        Producer::Write => {
            n.event = true;
            finish
        }
        Producer::PushLate => {
            n.queue += 1;
            Producer::Done
        }
        Producer::Done => return None,
    };
    Some(n)
}

fn loop_step(s: &State, mode: Mode) -> Option<State> {
    let mut n = *s;
    let attached = mode == Mode::Attached;
    match s.lp {
        Loop::SetSleeping => {
            n.sleeping = true;
            n.lp = Loop::Recheck;
        }
        Loop::Recheck => {
            n.lp = if n.queue > 0 {
                if attached {
                    // prepare_attached_sleep: `if !queue.is_empty() && sleeping.swap(false)`
                    // → wake; the loop then waits for its fd like any sleep.
                    let was = n.sleeping;
                    n.sleeping = false;
                    if was {
                        Loop::SelfWake
                    } else {
                        Loop::Poll
                    }
                } else {
                    Loop::CancelSleep
                }
            } else {
                Loop::Poll
            };
        }
        Loop::CancelSleep => {
            n.sleeping = false;
            n.lp = Loop::Drain;
        }
        Loop::Poll => {
            if !n.event {
                return None; // blocked
            }
            n.event = false;
            n.lp = Loop::PolledSleeping;
        }
        Loop::PolledSleeping => {
            n.sleeping = false;
            n.lp = Loop::PolledPending;
        }
        Loop::PolledPending => {
            n.pending = false;
            n.lp = Loop::Drain;
        }
        Loop::Drain => {
            n.queue = 0;
            n.lp = if attached {
                Loop::AfterBatch
            } else {
                Loop::SetSleeping
            };
        }
        Loop::AfterBatch => {
            // Bounded batches may leave work: the model lets tasks arrive meanwhile.
            n.lp = if n.queue > 0 {
                Loop::SelfWake
            } else {
                Loop::SetSleeping
            };
        }
        Loop::SelfWake => {
            let was = n.pending;
            n.pending = true;
            n.lp = if was { Loop::Poll } else { Loop::SelfWrite };
        }
        Loop::SelfWrite => {
            n.event = true;
            n.lp = Loop::Poll;
        }
    }
    Some(n)
}

/// Explores every interleaving; returns the number of states, or a lost-wake-up state.
fn check(mode: Mode) -> Result<usize, State> {
    let start = State {
        producers: [Producer::Push; 2],
        lp: Loop::SetSleeping,
        queue: 0,
        sleeping: mode == Mode::Attached,
        pending: false,
        event: false,
    };
    let mut seen = HashSet::from([start]);
    let mut todo = VecDeque::from([start]);
    while let Some(s) = todo.pop_front() {
        let next: Vec<State> = [
            producer_step(&s, 0, mode),
            producer_step(&s, 1, mode),
            loop_step(&s, mode),
        ]
        .into_iter()
        .flatten()
        .collect();
        if next.is_empty() {
            // Nothing can move: every producer is done and the loop waits for a wake.
            assert_eq!(s.lp, Loop::Poll);
            if s.queue > 0 {
                return Err(s);
            }
        }
        for n in next {
            if seen.insert(n) {
                todo.push_back(n);
            }
        }
    }
    Ok(seen.len())
}

#[test]
fn no_interleaving_of_two_producers_and_a_sleeping_standalone_loop_loses_a_wake_up() {
    let states = check(Mode::Standalone).unwrap_or_else(|s| panic!("lost wake-up: {s:?}"));
    assert!(states > 100, "explored {states} states");
}

#[test]
fn no_interleaving_of_two_producers_and_an_attached_loop_loses_a_wake_up() {
    let states = check(Mode::Attached).unwrap_or_else(|s| panic!("lost wake-up: {s:?}"));
    assert!(states > 100, "explored {states} states");
}

#[test]
fn the_checker_finds_the_lost_wake_up_of_a_producer_that_checks_before_pushing() {
    let lost = check(Mode::BrokenProducerOrder).expect_err("a lost wake-up exists");
    assert!(lost.queue > 0 && !lost.event);
}
