//! Issue 10: behaviours Netty 4.1 documents for executors, promises and timers.

use crate::common;

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use common::manual_loop;
use netloop_eventloop::{
    EventLoop, LoopConfig, LoopError, LoopState, Promise, PromiseCombiner, RejectReason,
    SelectorFault,
};

fn wait_until(mut f: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(5) {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    false
}

#[test]
fn a_panic_escaping_the_loop_body_terminates_the_loop_and_fails_its_termination_future() {
    let armed = Arc::new(AtomicU32::new(0));
    let a = armed.clone();
    let el = EventLoop::standalone(LoopConfig {
        fault_injector: Some(Arc::new(move || {
            if a.load(Ordering::SeqCst) == 1 {
                panic!("selector exploded");
            }
            SelectorFault::None
        })),
        ..LoopConfig::default()
    })
    .unwrap();
    let ran = Arc::new(AtomicU32::new(0));
    let r = ran.clone();
    el.execute(move || {
        r.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    assert!(wait_until(|| ran.load(Ordering::SeqCst) == 1));
    armed.store(1, Ordering::SeqCst);
    el.execute(|| {}).unwrap();
    let res = el
        .termination_future()
        .wait_timeout(Duration::from_secs(5))
        .expect("the termination future completes");
    match res {
        Err(LoopError::Panicked(m)) => assert!(m.contains("selector exploded"), "{m}"),
        other => panic!("expected a panic failure, got {other:?}"),
    }
    assert_eq!(el.state(), LoopState::Terminated);
    assert_eq!(
        el.execute(|| {}),
        Err(LoopError::Rejected(RejectReason::Shutdown))
    );
}

#[test]
fn a_panic_escaping_an_attached_iteration_terminates_the_loop() {
    let armed = Arc::new(AtomicU32::new(0));
    let a = armed.clone();
    let (el, driver, _t) = manual_loop(|c| {
        c.fault_injector = Some(Arc::new(move || {
            if a.load(Ordering::SeqCst) == 1 {
                panic!("boom");
            }
            SelectorFault::None
        }))
    });
    driver.run_once();
    armed.store(1, Ordering::SeqCst);
    let it = driver.run_once();
    assert!(it.terminated);
    assert!(el.is_terminated());
    assert!(matches!(
        el.termination_future().result(),
        Some(Err(LoopError::Panicked(_)))
    ));
}

#[test]
fn a_loop_whose_thread_cannot_start_rejects_the_first_task_like_every_later_one() {
    // A thread name with a NUL byte cannot be given to the OS: the thread never starts.
    let el = EventLoop::standalone(LoopConfig {
        name: "bad\0name".into(),
        ..LoopConfig::default()
    })
    .unwrap();
    let first = el.execute(|| {});
    assert_eq!(first, Err(LoopError::Rejected(RejectReason::Shutdown)));
    assert_eq!(
        el.execute(|| {}),
        Err(LoopError::Rejected(RejectReason::Shutdown))
    );
    assert_eq!(el.state(), LoopState::Terminated);
    assert_eq!(el.pending_tasks(), 0);
    assert!(matches!(el.termination_future().result(), Some(Err(_))));
}

#[test]
fn waiting_on_a_future_from_the_loop_thread_fails_at_once_with_a_deadlock_error() {
    let el = EventLoop::standalone(LoopConfig::default()).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    el.execute(move || {
        let p = Promise::<(), LoopError>::new();
        let t0 = Instant::now();
        let waited = p.future().wait_timeout(Duration::from_secs(3));
        let blocked = p.future().wait();
        tx.send((waited, blocked, t0.elapsed())).unwrap();
    })
    .unwrap();
    let (waited, blocked, took) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(waited, Some(Err(LoopError::BlockingOperation)));
    assert_eq!(blocked, Err(LoopError::BlockingOperation));
    assert!(took < Duration::from_secs(1), "blocked for {took:?}");
    // A completed future is fine to read on the loop thread.
    let (tx, rx) = std::sync::mpsc::channel();
    el.execute(move || {
        let done = Promise::<u8, LoopError>::completed(Ok(3));
        tx.send(done.wait()).unwrap();
    })
    .unwrap();
    assert_eq!(rx.recv().unwrap(), Ok(3));
    el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(5))
        .wait()
        .unwrap();
}

#[test]
fn listeners_run_in_the_order_added_one_at_a_time_when_completion_races_add_listener() {
    for _ in 0..300 {
        let p = Promise::<(), String>::new();
        let log = Arc::new(Mutex::new(Vec::new()));
        let running = Arc::new(AtomicUsize::new(0));
        let overlap = Arc::new(AtomicUsize::new(0));
        let add = |i: u32| {
            let (log, running, overlap) = (log.clone(), running.clone(), overlap.clone());
            p.future().add_listener(move |_| {
                if running.fetch_add(1, Ordering::SeqCst) != 0 {
                    overlap.fetch_add(1, Ordering::SeqCst);
                }
                std::thread::yield_now();
                log.lock().unwrap().push(i);
                running.fetch_sub(1, Ordering::SeqCst);
            })
        };
        add(1);
        let barrier = Arc::new(Barrier::new(2));
        let (p2, b2) = (p.clone(), barrier.clone());
        let t = std::thread::spawn(move || {
            b2.wait();
            p2.try_success(());
        });
        barrier.wait();
        add(2);
        add(3);
        add(4);
        t.join().unwrap();
        assert!(wait_until(|| log.lock().unwrap().len() == 4));
        assert_eq!(*log.lock().unwrap(), [1, 2, 3, 4]);
        assert_eq!(overlap.load(Ordering::SeqCst), 0, "listeners overlapped");
    }
}

#[test]
fn a_timer_scheduled_from_another_thread_wakes_the_loop_only_if_it_becomes_the_earliest() {
    let el = EventLoop::standalone(LoopConfig::default()).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    // The loop plans to wake up in 30 s (far beyond any delay of this test), then sleeps.
    let h = el.schedule(Duration::from_secs(30), || {}).unwrap();
    assert!(
        wait_until(|| el.is_sleeping() && el.pending_tasks() == 0),
        "the loop went to sleep"
    );
    let before = el.wakeups();
    // The wake decision is made inside `schedule`, on this thread: no need to wait for it.
    let late = el.schedule(Duration::from_secs(60), || {}).unwrap();
    assert_eq!(el.wakeups(), before, "a later timer woke the loop");
    let t0 = Instant::now();
    el.schedule(Duration::from_millis(20), move || tx.send(()).unwrap())
        .unwrap();
    assert!(el.wakeups() > before, "an earlier timer must wake the loop");
    rx.recv_timeout(Duration::from_secs(20))
        .expect("the earlier timer ran before the loop's planned wake-up");
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    h.cancel();
    late.cancel();
    el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(5))
        .wait()
        .unwrap();
}

fn rebuilds_with(threshold: u32, faults: &[SelectorFault]) -> u64 {
    let script = Arc::new(Mutex::new(faults.to_vec()));
    let s = script.clone();
    let (el, driver, _t) = manual_loop(|c| {
        c.selector_rebuild_threshold = threshold;
        c.fault_injector = Some(Arc::new(move || {
            let mut v = s.lock().unwrap();
            if v.is_empty() {
                SelectorFault::None
            } else {
                v.remove(0)
            }
        }));
    });
    for _ in 0..faults.len() {
        driver.run_io_ready();
    }
    el.selector_rebuilds()
}

#[test]
fn an_interrupted_poll_resets_the_premature_return_counter() {
    use SelectorFault::*;
    let p = PrematureEmpty;
    assert_eq!(rebuilds_with(4, &[p, p, p, Interrupted, p, p, p]), 0);
    assert_eq!(rebuilds_with(4, &[p, p, p, p]), 1);
}

#[test]
fn a_rebuild_threshold_below_three_turns_spin_detection_off() {
    let p = SelectorFault::PrematureEmpty;
    assert_eq!(rebuilds_with(1, &[p; 20]), 0);
    assert_eq!(rebuilds_with(2, &[p; 20]), 0);
    assert_eq!(rebuilds_with(3, &[p; 3]), 1);
}

#[test]
fn a_cancelled_timer_leaves_the_heap_at_once_on_the_loop_thread() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let local = driver.local().clone();
    // A server arms a 30 s timeout per request and cancels it after 1 ms.
    for _ in 0..10_000 {
        let h = el.schedule(Duration::from_secs(30), || {}).unwrap();
        ticker.advance(Duration::from_micros(1));
        assert!(h.cancel());
    }
    assert_eq!(
        local.timer_count(),
        0,
        "cancelled timers stayed in the heap"
    );
    driver.run_once();
    // From another thread: removed at the loop's next look at the heap, without a wake-up.
    let handles: Vec<_> = (0..100)
        .map(|_| el.schedule(Duration::from_secs(30), || {}).unwrap())
        .collect();
    assert_eq!(local.timer_count(), 100);
    let wakeups = el.wakeups();
    std::thread::spawn(move || {
        for h in handles {
            assert!(h.cancel());
        }
    })
    .join()
    .unwrap();
    assert_eq!(el.wakeups(), wakeups, "a cross-thread cancel woke the loop");
    driver.run_once();
    assert_eq!(local.timer_count(), 0);
}

#[test]
fn cancel_fails_the_promise_with_cancelled_unless_uncancellable() {
    let p = Promise::<u32, LoopError>::new();
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    p.future()
        .add_listener(move |r| *s.lock().unwrap() = Some(r.clone()));
    assert!(p.is_cancellable());
    assert!(p.future().cancel(true));
    assert!(p.is_cancelled() && p.is_done());
    assert_eq!(*seen.lock().unwrap(), Some(Err(LoopError::Cancelled)));
    assert!(!p.cancel(false), "cancelled once");
    assert!(!p.try_success(1));
    assert!(
        !p.set_uncancellable(),
        "a cancelled promise cannot become uncancellable"
    );

    let q = Promise::<u32, LoopError>::new();
    assert!(q.set_uncancellable());
    assert!(!q.is_cancellable());
    assert!(!q.cancel(true));
    assert!(!q.is_done());
    assert!(q.try_success(2));
    assert!(!q.is_cancelled());

    let done = Promise::<u32, LoopError>::new();
    done.try_success(1);
    assert!(!done.is_cancellable());
    assert!(!done.cancel(true));
    assert!(done.set_uncancellable(), "done without cancellation");
}

#[test]
fn a_promise_combiner_completes_when_every_future_has_with_the_first_failure() {
    let (a, b, c) = (
        Promise::<u32, String>::new(),
        Promise::<(), String>::new(),
        Promise::<(), String>::new(),
    );
    let combiner = PromiseCombiner::new();
    combiner.add(&a.future()).unwrap();
    combiner.add_all([&b.future(), &c.future()]).unwrap();
    let aggregate = Promise::new();
    combiner.finish(aggregate.clone()).unwrap();
    assert!(combiner.add(&a.future()).is_err(), "no add after finish");
    assert!(combiner.finish(Promise::new()).is_err(), "finish once");
    b.try_failure("b failed".into());
    a.try_success(1);
    assert!(!aggregate.is_done());
    c.try_failure("c failed".into());
    assert_eq!(
        aggregate.future().result(),
        Some(Err("b failed".to_string()))
    );

    let empty = PromiseCombiner::<String>::new();
    let agg = Promise::new();
    empty.finish(agg.clone()).unwrap();
    assert_eq!(agg.future().result(), Some(Ok(())));
}

#[test]
fn a_lazy_task_does_not_wake_an_idle_loop_and_runs_at_its_next_wake_up() {
    let el = EventLoop::standalone(LoopConfig::default()).unwrap();
    el.execute(|| {}).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let ran = Arc::new(AtomicU32::new(0));
    let r = ran.clone();
    let before = el.wakeups();
    el.lazy_execute(move || {
        r.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(ran.load(Ordering::SeqCst), 0, "a lazy task woke the loop");
    assert_eq!(el.wakeups(), before);
    el.execute(|| {}).unwrap();
    assert!(wait_until(|| ran.load(Ordering::SeqCst) == 1));
    el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(5))
        .wait()
        .unwrap();
}

#[test]
fn a_removed_tail_task_does_not_run() {
    let (_el, driver, _t) = manual_loop(|_| {});
    let local = driver.local().clone();
    let log = common::Log::default();
    let (l1, l2) = (log.clone(), log.clone());
    let a = local.add_tail_task(move || l1.push("a")).unwrap();
    let b = local.add_tail_task(move || l2.push("b")).unwrap();
    assert!(local.remove_tail_task(a));
    assert!(!local.remove_tail_task(a), "removed once");
    driver.run_once();
    assert_eq!(log.take(), ["b"]);
    assert!(!local.remove_tail_task(b), "already ran");
}

#[test]
fn cleanup_hooks_run_once_after_the_last_task_before_termination_completes() {
    let el = EventLoop::standalone(LoopConfig::default()).unwrap();
    let log = common::Log::default();
    let (l1, l2, l3) = (log.clone(), log.clone(), log.clone());
    let on_loop = Arc::new(Mutex::new(false));
    let (o, el2) = (on_loop.clone(), el.clone());
    el.add_cleanup_hook(move || {
        *o.lock().unwrap() = el2.in_event_loop();
        l1.push("cleanup");
    })
    .unwrap();
    el.execute(move || l2.push("task")).unwrap();
    el.termination_future()
        .add_listener(move |_| l3.push("terminated"));
    el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(5))
        .wait()
        .unwrap();
    // The listener runs on the loop thread, maybe just after `wait` returned here.
    assert!(wait_until(|| log.len() == 3));
    assert_eq!(log.take(), ["task", "cleanup", "terminated"]);
    assert!(*on_loop.lock().unwrap());
    assert!(el.add_cleanup_hook(|| {}).is_err());
}

#[test]
fn await_termination_on_a_loop_thread_does_not_block() {
    let a = EventLoop::standalone(LoopConfig::default()).unwrap();
    let b = EventLoop::standalone(LoopConfig::default()).unwrap();
    b.execute(|| {}).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let b2 = b.clone();
    a.execute(move || {
        let t0 = Instant::now();
        let done = b2.await_termination(Duration::from_secs(3));
        tx.send((done, t0.elapsed())).unwrap();
    })
    .unwrap();
    let (done, took) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(!done);
    assert!(took < Duration::from_secs(1), "blocked for {took:?}");
    for el in [a, b] {
        el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(5))
            .wait()
            .unwrap();
    }
}
