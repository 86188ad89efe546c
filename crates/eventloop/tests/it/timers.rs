use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use common::{manual_loop, Log};
use netloop_eventloop::{EventLoop, LoopConfig};

const MS: Duration = Duration::from_millis(1);

#[test]
fn a_zero_delay_schedule_is_due_now() {
    let (el, driver, _) = manual_loop(|_| {});
    let log = Log::default();
    let l = log.clone();
    el.schedule(Duration::ZERO, move || l.push("ran")).unwrap();
    assert_eq!(driver.next_timeout(), Some(Duration::ZERO));
    driver.run_once();
    assert_eq!(log.take(), ["ran"]);
}

#[test]
fn a_timer_does_not_run_before_its_deadline() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let log = Log::default();
    let l = log.clone();
    el.schedule(10 * MS, move || l.push("ran")).unwrap();
    driver.run_until_idle();
    ticker.advance(9 * MS);
    driver.run_until_idle();
    assert_eq!(log.len(), 0);
    assert_eq!(driver.next_timeout(), Some(MS));
    ticker.advance(MS);
    driver.run_until_idle();
    assert_eq!(log.take(), ["ran"]);
}

#[test]
fn timers_with_equal_deadlines_run_in_the_order_scheduled() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let log = Log::default();
    for i in 0..50 {
        let l = log.clone();
        el.schedule(5 * MS, move || l.push(i.to_string())).unwrap();
    }
    ticker.advance(5 * MS);
    driver.run_until_idle();
    assert_eq!(
        log.take(),
        (0..50).map(|i| i.to_string()).collect::<Vec<_>>()
    );
}

#[test]
fn earlier_deadlines_run_first_whatever_the_scheduling_order() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let log = Log::default();
    for (name, ms) in [("c", 30), ("a", 10), ("b", 20)] {
        let l = log.clone();
        el.schedule(ms * MS, move || l.push(name)).unwrap();
    }
    ticker.advance(100 * MS);
    driver.run_until_idle();
    assert_eq!(log.take(), ["a", "b", "c"]);
}

#[test]
fn due_timers_join_the_queue_behind_tasks_already_waiting() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let log = Log::default();
    let l = log.clone();
    el.schedule(MS, move || l.push("timer")).unwrap();
    ticker.advance(MS);
    let l = log.clone();
    el.execute(move || l.push("task")).unwrap();
    driver.run_until_idle();
    assert_eq!(log.take(), ["task", "timer"]);
}

#[test]
fn a_cancelled_timer_never_runs() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let log = Log::default();
    let l = log.clone();
    let h = el.schedule(MS, move || l.push("ran")).unwrap();
    assert!(h.cancel());
    assert!(
        !h.cancel(),
        "a second cancel reports that nothing was cancelled"
    );
    ticker.advance(10 * MS);
    driver.run_until_idle();
    assert_eq!(log.len(), 0);
    assert!(h.is_cancelled());
}

#[test]
fn cancelling_a_timer_after_it_ran_returns_false() {
    let (el, driver, _) = manual_loop(|_| {});
    let h = el.schedule(Duration::ZERO, || {}).unwrap();
    driver.run_until_idle();
    assert!(h.is_finished());
    assert!(!h.cancel());
}

#[test]
fn fixed_rate_catches_up_missed_runs_back_to_back() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let runs = Arc::new(AtomicUsize::new(0));
    let r = runs.clone();
    el.schedule_at_fixed_rate(10 * MS, 10 * MS, move || {
        r.fetch_add(1, Ordering::Relaxed);
    })
    .unwrap();
    ticker.advance(45 * MS); // deadlines 10, 20, 30, 40 have passed
    driver.run_until_idle();
    assert_eq!(runs.load(Ordering::Relaxed), 4);
    assert_eq!(
        driver.next_timeout(),
        Some(5 * MS),
        "the next deadline stays on the 10 ms grid"
    );
}

#[test]
fn fixed_delay_counts_the_delay_from_the_end_of_the_previous_run() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let runs = Arc::new(AtomicUsize::new(0));
    let (r, t) = (runs.clone(), ticker.clone());
    el.schedule_with_fixed_delay(10 * MS, 10 * MS, move || {
        r.fetch_add(1, Ordering::Relaxed);
        t.advance(3 * MS); // the run takes 3 ms
    })
    .unwrap();
    ticker.advance(10 * MS);
    driver.run_until_idle();
    assert_eq!(runs.load(Ordering::Relaxed), 1);
    // Ended at 13 ms: the next run is due at 23 ms, not at 20 ms.
    assert_eq!(driver.next_timeout(), Some(10 * MS));
    ticker.advance(9 * MS);
    driver.run_until_idle();
    assert_eq!(runs.load(Ordering::Relaxed), 1);
    ticker.advance(MS);
    driver.run_until_idle();
    assert_eq!(runs.load(Ordering::Relaxed), 2);
}

#[test]
fn cancelling_a_periodic_task_stops_it() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let runs = Arc::new(AtomicUsize::new(0));
    let r = runs.clone();
    let h = el
        .schedule_at_fixed_rate(MS, MS, move || {
            r.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    ticker.advance(MS);
    driver.run_until_idle();
    assert_eq!(runs.load(Ordering::Relaxed), 1);
    assert!(h.cancel());
    ticker.advance(10 * MS);
    driver.run_until_idle();
    assert_eq!(runs.load(Ordering::Relaxed), 1);
}

#[test]
fn a_periodic_task_may_cancel_itself() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let runs = Arc::new(AtomicUsize::new(0));
    let slot: Arc<std::sync::Mutex<Option<netloop_eventloop::ScheduledHandle>>> =
        Default::default();
    let (r, s) = (runs.clone(), slot.clone());
    let h = el
        .schedule_with_fixed_delay(MS, MS, move || {
            if r.fetch_add(1, Ordering::Relaxed) == 2 {
                s.lock().unwrap().as_ref().unwrap().cancel();
            }
        })
        .unwrap();
    *slot.lock().unwrap() = Some(h);
    for _ in 0..10 {
        ticker.advance(MS);
        driver.run_until_idle();
    }
    assert_eq!(runs.load(Ordering::Relaxed), 3);
}

#[test]
fn a_non_positive_period_is_an_invalid_argument() {
    let (el, _driver, _) = manual_loop(|_| {});
    let e = el
        .schedule_at_fixed_rate(MS, Duration::ZERO, || {})
        .unwrap_err();
    assert_eq!(e.code(), "ERR_INVALID_ARG_VALUE");
    let e = el
        .schedule_with_fixed_delay(MS, Duration::ZERO, || {})
        .unwrap_err();
    assert_eq!(e.code(), "ERR_INVALID_ARG_VALUE");
}

#[test]
fn a_huge_delay_saturates_instead_of_overflowing() {
    let (el, driver, ticker) = manual_loop(|_| {});
    ticker.advance(Duration::from_secs(5));
    let log = Log::default();
    let l = log.clone();
    el.schedule(Duration::MAX, move || l.push("never")).unwrap();
    driver.run_until_idle();
    let t = driver.next_timeout().unwrap();
    assert!(t > Duration::from_secs(100 * 365 * 24 * 3600), "{t:?}");
    assert_eq!(log.len(), 0);
}

#[test]
fn a_timer_scheduled_from_another_thread_runs_on_the_loop() {
    let el = EventLoop::standalone(LoopConfig::default()).unwrap();
    let (tx, rx) = mpsc::channel();
    let el2 = el.clone();
    el.schedule(5 * MS, move || tx.send(el2.in_event_loop()).unwrap())
        .unwrap();
    assert!(rx.recv_timeout(Duration::from_secs(10)).unwrap());
    el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(10))
        .wait()
        .unwrap();
}

#[test]
fn scheduling_and_cancelling_many_timers_keeps_the_heap_bounded() {
    let (el, driver, _) = manual_loop(|_| {});
    let local = el.local().unwrap();
    for _ in 0..100_000 {
        let h = el.schedule(Duration::from_secs(60), || {}).unwrap();
        h.cancel();
    }
    driver.run_until_idle();
    assert!(
        local.timer_count() < 1000,
        "cancelled timers must be purged, heap has {}",
        local.timer_count()
    );
}

#[test]
fn local_timers_due_together_fire_in_deadline_order_and_a_cancelled_one_does_not_fire() {
    // The loop's one timer mechanism (the pre-0006 batched timers are gone): due timers run
    // one by one, in deadline order, interleaved with nothing else.
    let (el, driver, ticker) = manual_loop(|c| c.io_ratio = 100);
    let local = el.local().unwrap();
    let log = Log::default();
    for (v, at) in [(1u64, 3u64), (2, 1), (3, 2), (4, 5)] {
        let l = log.clone();
        local.schedule_local_at(Duration::from_millis(at), move || l.push(format!("t{v}")));
    }
    let l = log.clone();
    local.schedule_local_at(Duration::from_millis(4), move || l.push("closure"));
    let l = log.clone();
    let cancelled = local.schedule_local_at(Duration::from_millis(6), move || l.push("cancelled"));
    assert!(cancelled.cancel());
    ticker.advance(10 * MS);
    driver.run_until_idle();
    assert_eq!(log.take(), ["t2", "t3", "t1", "closure", "t4"]);
}

#[test]
fn a_due_fixed_rate_timer_left_behind_by_the_budget_does_not_fire_after_shutdown() {
    // ioRatio 50 with no I/O: the batch stops at the first budget check, after 64 tasks.
    let (el, driver, ticker) = manual_loop(|c| c.io_ratio = 50);
    let local = driver.local().clone();
    for _ in 0..100 {
        local.execute_local(|| {});
    }
    let fired = Arc::new(AtomicUsize::new(0));
    let f = fired.clone();
    let handle = el
        .schedule_at_fixed_rate(Duration::ZERO, 10 * MS, move || {
            f.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    driver.run_once();
    assert_eq!(
        fired.load(Ordering::SeqCst),
        0,
        "the budget stopped the batch first"
    );
    el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(1));
    let mut iterations = 0;
    while !driver.run_once().terminated {
        ticker.advance(10 * MS);
        iterations += 1;
        assert!(iterations < 10, "the loop must terminate promptly");
    }
    assert_eq!(
        fired.load(Ordering::SeqCst),
        0,
        "fired after shutdown started"
    );
    assert!(handle.is_cancelled());
}

#[test]
fn a_periodic_timer_that_starts_the_shutdown_is_not_re_inserted() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let fired = Arc::new(AtomicUsize::new(0));
    let (f, e) = (fired.clone(), el.clone());
    let handle = el
        .schedule_with_fixed_delay(MS, MS, move || {
            f.fetch_add(1, Ordering::SeqCst);
            e.shutdown_gracefully(Duration::ZERO, Duration::from_secs(1));
        })
        .unwrap();
    ticker.advance(MS);
    for _ in 0..10 {
        if driver.run_once().terminated {
            break;
        }
        ticker.advance(MS);
    }
    assert!(el.is_terminated());
    assert_eq!(fired.load(Ordering::SeqCst), 1);
    assert!(handle.is_cancelled());
}

#[test]
fn cancelling_a_one_shot_while_it_runs_returns_false() {
    let (el, driver, _) = manual_loop(|_| {});
    let slot: Arc<std::sync::Mutex<Option<netloop_eventloop::ScheduledHandle>>> = Arc::default();
    let result = Arc::new(std::sync::Mutex::new(None));
    let (s, r) = (slot.clone(), result.clone());
    let handle = el
        .schedule(Duration::ZERO, move || {
            let h = s.lock().unwrap().clone().unwrap();
            *r.lock().unwrap() = Some((h.cancel(), h.is_cancelled()));
        })
        .unwrap();
    *slot.lock().unwrap() = Some(handle.clone());
    driver.run_until_idle();
    assert_eq!(
        *result.lock().unwrap(),
        Some((false, false)),
        "a running one-shot cannot be cancelled: it will not be 'not run'"
    );
    assert!(handle.is_finished());
    assert!(!handle.cancel(), "a finished one-shot cannot be cancelled");
}

#[test]
fn a_cancel_that_returns_true_means_the_task_never_runs() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    let handle = el
        .schedule(MS, move || {
            r.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    ticker.advance(MS);
    assert!(handle.cancel());
    assert!(!handle.cancel(), "only the first cancel succeeds");
    driver.run_until_idle();
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert!(handle.is_cancelled() && !handle.is_finished());
}

#[test]
fn a_periodic_timer_cancelled_while_it_runs_stops_repeating() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let slot: Arc<std::sync::Mutex<Option<netloop_eventloop::ScheduledHandle>>> = Arc::default();
    let runs = Arc::new(AtomicUsize::new(0));
    let (s, r) = (slot.clone(), runs.clone());
    let handle = el
        .schedule_at_fixed_rate(MS, MS, move || {
            if r.fetch_add(1, Ordering::SeqCst) == 1 {
                assert!(s.lock().unwrap().clone().unwrap().cancel());
            }
        })
        .unwrap();
    *slot.lock().unwrap() = Some(handle);
    for _ in 0..5 {
        ticker.advance(MS);
        driver.run_until_idle();
    }
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[test]
fn a_cancel_on_a_thread_with_many_loops_leaves_the_right_heap_at_once() {
    // Loops living on this thread are found by id (a map, not a scan of the thread's loops);
    // the cancelled entry leaves its own loop's heap before any iteration, the others keep theirs.
    let loops: Vec<_> = (0..50).map(|_| manual_loop(|_| {})).collect();
    let handles: Vec<_> = loops
        .iter()
        .map(|(el, _, _)| el.schedule(Duration::from_secs(60), || {}).unwrap())
        .collect();
    for (el, _, _) in &loops {
        assert_eq!(el.local().unwrap().timer_count(), 1);
    }
    assert!(handles[37].cancel());
    for (i, (el, _, _)) in loops.iter().enumerate() {
        let expected = usize::from(i != 37);
        assert_eq!(el.local().unwrap().timer_count(), expected, "loop {i}");
    }
}
