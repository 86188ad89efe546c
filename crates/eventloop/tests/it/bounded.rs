//! Issue 9: every batch and every attached iteration is bounded, and a graceful shutdown
//! honours its timeout even when tasks keep coming.

use crate::common;

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::manual_loop;
use netloop_eventloop::{EventLoop, LocalLoop, LoopConfig, LoopState};

const MS: Duration = Duration::from_millis(1);

/// A task that re-submits itself through `EventLoop::execute` from inside the loop.
fn respawn(el: EventLoop, runs: Arc<AtomicUsize>) {
    runs.fetch_add(1, Ordering::SeqCst);
    let e = el.clone();
    // After the loop is shut down the re-submission is rejected: that ends the chain.
    let _ = el.execute(move || respawn(e, runs));
}

/// The same through `LocalLoop::execute_local`.
fn respawn_local(local: Rc<LocalLoop>, runs: Rc<Cell<usize>>) {
    runs.set(runs.get() + 1);
    let l = local.clone();
    local.execute_local(move || respawn_local(l, runs));
}

#[test]
fn an_attached_iteration_with_io_ratio_100_returns_although_a_task_re_executes_itself() {
    let (el, driver, _) = manual_loop(|c| c.io_ratio = 100);
    let runs = Arc::new(AtomicUsize::new(0));
    let (e, r) = (el.clone(), runs.clone());
    el.execute(move || respawn(e, r)).unwrap();
    for i in 1..=5 {
        let it = driver.run_once();
        assert_eq!(runs.load(Ordering::SeqCst), i, "one run per iteration");
        assert!(it.more_work, "the re-submitted task is ready: more work");
        assert_eq!(driver.next_timeout(), Some(Duration::ZERO));
    }
}

#[test]
fn a_local_task_that_re_executes_itself_runs_once_per_iteration() {
    let (_el, driver, _) = manual_loop(|c| c.io_ratio = 100);
    let runs = Rc::new(Cell::new(0));
    let local = driver.local().clone();
    let r = runs.clone();
    let l = local.clone();
    local.execute_local(move || respawn_local(l, r));
    for i in 1..=5 {
        assert!(driver.run_once().more_work);
        assert_eq!(runs.get(), i);
    }
}

#[test]
fn a_batch_runs_only_the_tasks_present_when_it_started() {
    let (el, driver, _) = manual_loop(|c| c.io_ratio = 100);
    let order = Rc::new(std::cell::RefCell::new(Vec::new()));
    let local = driver.local().clone();
    for i in 0..3 {
        let (o, l) = (order.clone(), local.clone());
        local.execute_local(move || {
            o.borrow_mut().push(i);
            let o2 = o.clone();
            l.execute_local(move || o2.borrow_mut().push(10 + i));
        });
    }
    let it = driver.run_once();
    assert_eq!(*order.borrow(), [0, 1, 2]);
    assert!(it.more_work);
    let it = driver.run_once();
    assert_eq!(*order.borrow(), [0, 1, 2, 10, 11, 12]);
    assert!(!it.more_work);
    assert_eq!(driver.next_timeout(), None);
    drop(el);
}

#[test]
fn leftover_work_makes_the_loop_fire_its_own_waker_once() {
    let (el, driver, _) = manual_loop(|c| c.io_ratio = 100);
    let runs = Arc::new(AtomicUsize::new(0));
    let (e, r) = (el.clone(), runs.clone());
    el.execute(move || respawn(e, r)).unwrap();
    driver.run_once();
    let before = el.wakeups();
    let it = driver.run_once();
    assert!(it.more_work);
    assert_eq!(
        el.wakeups() - before,
        1,
        "the iteration made the fd readable"
    );
    // Already pending: asking again does not write the eventfd again.
    driver.wake_for_more_work();
    driver.wake_for_more_work();
    assert_eq!(el.wakeups() - before, 1);
    // The next poll consumes the wake; the iteration leaves work behind and fires it again.
    let before = el.wakeups();
    assert!(driver.run_io_ready().more_work);
    assert_eq!(el.wakeups() - before, 1);
    driver.wake_for_more_work();
    assert_eq!(el.wakeups() - before, 1);
}

/// Drives `driver` with the fake clock moving 10 ms per iteration; returns iterations
/// until termination (panics past `max`).
fn iterations_until_terminated(
    driver: &netloop_eventloop::LoopDriver,
    ticker: &netloop_eventloop::ManualTicker,
    max: usize,
) -> usize {
    for i in 1..=max {
        if driver.run_once().terminated {
            return i;
        }
        ticker.advance(10 * MS);
    }
    panic!("the loop did not terminate within {max} iterations");
}

#[test]
fn shutdown_honours_its_timeout_while_a_task_keeps_re_executing_itself() {
    for quiet in [Duration::ZERO, 50 * MS] {
        let (el, driver, ticker) = manual_loop(|c| c.io_ratio = 100);
        let runs = Arc::new(AtomicUsize::new(0));
        let (e, r) = (el.clone(), runs.clone());
        el.execute(move || respawn(e, r)).unwrap();
        driver.run_once();
        let shutdown = el.shutdown_gracefully(quiet, 100 * MS);
        // 100 ms at 10 ms per iteration, plus a few iterations to drain.
        let n = iterations_until_terminated(&driver, &ticker, 20);
        assert!(n <= 13, "quiet {quiet:?}: took {n} iterations");
        assert_eq!(el.state(), LoopState::Terminated);
        assert!(shutdown.wait_timeout(Duration::ZERO).is_some());
    }
}

#[test]
fn shutdown_honours_its_timeout_while_local_tasks_keep_coming() {
    let (el, driver, ticker) = manual_loop(|c| c.io_ratio = 100);
    let runs = Rc::new(Cell::new(0));
    let local = driver.local().clone();
    let r = runs.clone();
    let l = local.clone();
    local.execute_local(move || respawn_local(l, r));
    el.shutdown_gracefully(Duration::ZERO, 100 * MS);
    iterations_until_terminated(&driver, &ticker, 20);
    let at_termination = runs.get();
    assert!(driver.run_once().terminated);
    assert_eq!(runs.get(), at_termination);
}

#[test]
fn a_standalone_loop_terminates_within_its_timeout_while_a_task_re_executes_itself() {
    let el = EventLoop::standalone(LoopConfig {
        io_ratio: 100,
        ..LoopConfig::default()
    })
    .unwrap();
    let runs = Arc::new(AtomicUsize::new(0));
    let (e, r) = (el.clone(), runs.clone());
    el.execute(move || respawn(e, r)).unwrap();
    while runs.load(Ordering::SeqCst) < 100 {
        std::thread::yield_now();
    }
    let started = Instant::now();
    let done = el
        .shutdown_gracefully(Duration::ZERO, 100 * MS)
        .wait_timeout(Duration::from_secs(10));
    assert!(done.is_some(), "the loop did not terminate");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(el.await_termination(Duration::from_secs(1)));
}

/// A chain of `left` local tasks, each submitting the next.
fn chain(local: Rc<LocalLoop>, left: usize, done: Rc<Cell<usize>>) {
    done.set(done.get() + 1);
    if left > 0 {
        let l = local.clone();
        local.execute_local(move || chain(l, left - 1, done));
    }
}

#[test]
fn a_shutdown_with_no_quiet_period_lets_a_finite_task_chain_finish_before_terminating() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let done = Rc::new(Cell::new(0));
    let (l, d) = (driver.local().clone(), done.clone());
    l.clone().execute_local(move || chain(l, 49, d));
    el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(5));
    iterations_until_terminated(&driver, &ticker, 100);
    assert_eq!(done.get(), 50, "every task of the chain ran");
}

#[test]
fn a_work_probe_keeps_a_shutdown_going_until_it_reports_nothing() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let pending = Rc::new(Cell::new(3_u32));
    let p = pending.clone();
    driver.local().set_work_probe(Rc::new(move || {
        let n = p.get();
        p.set(n.saturating_sub(1));
        n > 0
    }));
    el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(5));
    let n = iterations_until_terminated(&driver, &ticker, 100);
    assert_eq!(pending.get(), 0);
    assert!(
        n >= 3,
        "terminated after {n} iterations although the probe reported work"
    );
}
