use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{manual_loop, Log};
use netloop_eventloop::{EventLoop, LoopConfig, LoopError, LoopState, RejectReason};

const MS: Duration = Duration::from_millis(1);
const WAIT: Duration = Duration::from_secs(10);

fn send_from_thread(el: &EventLoop, log: &Log, label: &'static str) -> Result<(), LoopError> {
    let (el, l) = (el.clone(), log.clone());
    std::thread::spawn(move || el.execute(move || l.push(label)))
        .join()
        .unwrap()
}

#[test]
fn graceful_shutdown_moves_through_the_states_and_completes_the_termination_future() {
    let (el, driver, ticker) = manual_loop(|_| {});
    assert_eq!(el.state(), LoopState::Started);
    let f = el.shutdown_gracefully(10 * MS, 100 * MS);
    assert_eq!(el.state(), LoopState::ShuttingDown);
    assert!(el.is_shutting_down() && !el.is_shutdown());
    driver.run_once();
    assert!(!f.is_done(), "the quiet period has not passed yet");
    ticker.advance(11 * MS);
    let it = driver.run_once();
    assert!(it.terminated);
    assert_eq!(el.state(), LoopState::Terminated);
    assert_eq!(f.result(), Some(Ok(())));
}

#[test]
fn a_task_during_the_quiet_period_still_runs_and_restarts_the_quiet_period() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let log = Log::default();
    let f = el.shutdown_gracefully(100 * MS, Duration::from_secs(10));
    driver.run_once();
    ticker.advance(60 * MS);
    send_from_thread(&el, &log, "late").expect("accepted while shutting down");
    driver.run_once();
    assert_eq!(log.take(), ["late"]);
    ticker.advance(60 * MS); // 120 ms after start, but only 60 ms after the last task
    driver.run_once();
    assert!(!f.is_done());
    ticker.advance(41 * MS);
    driver.run_once();
    assert!(f.is_done());
}

#[test]
fn the_timeout_bounds_a_quiet_period_that_keeps_restarting() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let log = Log::default();
    let f = el.shutdown_gracefully(50 * MS, 200 * MS);
    for _ in 0..10 {
        ticker.advance(30 * MS);
        let _ = send_from_thread(&el, &log, "busy");
        driver.run_once();
        if f.is_done() {
            break;
        }
    }
    assert!(
        f.is_done(),
        "terminated by the timeout although tasks kept arriving"
    );
    assert!(log.len() >= 6);
}

#[test]
fn after_shutdown_execute_and_schedule_are_rejected() {
    let (el, driver, ticker) = manual_loop(|_| {});
    el.shutdown_gracefully(Duration::ZERO, MS);
    ticker.advance(2 * MS);
    driver.run_once();
    assert!(el.is_terminated());
    let log = Log::default();
    assert_eq!(
        send_from_thread(&el, &log, "x"),
        Err(LoopError::Rejected(RejectReason::Shutdown))
    );
    assert_eq!(
        el.execute(|| {}),
        Err(LoopError::Rejected(RejectReason::Shutdown))
    );
    assert!(el.schedule(MS, || {}).is_err());
}

#[test]
fn scheduled_tasks_are_cancelled_by_shutdown() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let h = el.schedule(Duration::from_secs(1), || {}).unwrap();
    el.shutdown_gracefully(Duration::ZERO, MS);
    driver.run_once();
    ticker.advance(2 * MS);
    driver.run_once();
    assert!(el.is_terminated());
    assert!(h.is_cancelled());
}

#[test]
fn quiet_period_longer_than_timeout_is_an_invalid_argument() {
    let (el, _driver, _) = manual_loop(|_| {});
    let f = el.shutdown_gracefully(2 * MS, MS);
    assert_eq!(
        f.result().unwrap().unwrap_err().code(),
        "ERR_INVALID_ARG_VALUE"
    );
    assert_eq!(el.state(), LoopState::Started);
}

#[test]
fn no_task_is_abandoned_when_producers_race_with_termination() {
    for _ in 0..5 {
        let el = EventLoop::standalone(LoopConfig::default()).unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let accepted = Arc::new(AtomicUsize::new(0));
        let producers: Vec<_> = (0..3)
            .map(|_| {
                let (el, ran, accepted) = (el.clone(), ran.clone(), accepted.clone());
                std::thread::spawn(move || loop {
                    let r = ran.clone();
                    match el.execute(move || {
                        r.fetch_add(1, Ordering::SeqCst);
                    }) {
                        Ok(()) => {
                            accepted.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(e) => {
                            assert_eq!(e, LoopError::Rejected(RejectReason::Shutdown));
                            return;
                        }
                    }
                })
            })
            .collect();
        std::thread::sleep(5 * MS);
        el.shutdown_gracefully(Duration::ZERO, 50 * MS);
        for p in producers {
            p.join().unwrap();
        }
        assert!(el.await_termination(WAIT));
        assert_eq!(
            ran.load(Ordering::SeqCst),
            accepted.load(Ordering::SeqCst),
            "every accepted task ran"
        );
    }
}

#[test]
fn a_never_started_loop_terminates_on_shutdown() {
    let el = EventLoop::standalone(LoopConfig::default()).unwrap();
    assert_eq!(el.state(), LoopState::NotStarted);
    el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(1));
    assert!(el.await_termination(WAIT));
    assert_eq!(el.state(), LoopState::Terminated);
}

#[test]
fn standalone_graceful_shutdown_waits_for_the_quiet_period_on_the_real_clock() {
    let el = EventLoop::standalone(LoopConfig::default()).unwrap();
    el.execute(|| {}).unwrap();
    let started = std::time::Instant::now();
    el.shutdown_gracefully(100 * MS, Duration::from_secs(5))
        .wait()
        .unwrap();
    assert!(started.elapsed() >= 100 * MS);
    assert!(el.await_termination(WAIT));
}

#[test]
fn dropping_the_driver_of_an_attached_loop_terminates_it_and_runs_accepted_tasks() {
    let (el, driver, _) = manual_loop(|_| {});
    let log = Log::default();
    send_from_thread(&el, &log, "queued").unwrap();
    drop(driver);
    assert!(el.is_terminated());
    assert_eq!(log.take(), ["queued"]);
    assert!(el.termination_future().is_success());
}

#[test]
fn timers_scheduled_during_the_quiet_period_are_cancelled_on_every_path() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let local = el.local().unwrap();
    el.shutdown_gracefully(100 * MS, Duration::from_secs(10));
    driver.run_once(); // the graceful shutdown starts
    let log = Log::default();
    let l = log.clone();
    let handles = [
        el.schedule(MS, || {}).unwrap(),
        local.schedule_local(MS, move || l.push("local")),
        local.schedule_local_periodic(MS, MS, true, || {}).unwrap(),
    ];
    ticker.advance(5 * MS);
    driver.run_once();
    assert!(handles.iter().all(|h| h.is_cancelled()));
    assert_eq!(log.len(), 0);
}

/// A task that submits itself again every time it runs, counting its runs and the
/// submissions the loop rejected.
fn resubmit_forever(el: &EventLoop, runs: Arc<AtomicUsize>, rejected: Arc<AtomicUsize>) {
    let again = el.clone();
    let _ = el.execute(move || {
        runs.fetch_add(1, Ordering::SeqCst);
        let (r, x) = (runs.clone(), rejected.clone());
        if again.is_shutdown() {
            // Submitting now is rejected: count it.
            if again.execute(|| {}).is_err() {
                x.fetch_add(1, Ordering::SeqCst);
            }
            return;
        }
        resubmit_forever(&again, r, x);
    });
}

#[test]
fn with_no_quiet_period_shutdown_ends_after_the_current_run_although_tasks_keep_submitting_tasks() {
    let (el, driver, _ticker) = manual_loop(|_| {});
    let runs = Arc::new(AtomicUsize::new(0));
    let rejected = Arc::new(AtomicUsize::new(0));
    resubmit_forever(&el, runs.clone(), rejected.clone());
    driver.run_once();
    driver.run_once();
    assert!(runs.load(Ordering::SeqCst) >= 2, "the chain runs");
    // The clock never moves: only the quiet period of 0 can end this shutdown, not its
    // timeout. A bounded number of batches runs, then the loop terminates.
    let f = el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(3600));
    let before = runs.load(Ordering::SeqCst);
    for _ in 0..200 {
        if driver.run_once().terminated {
            break;
        }
    }
    assert!(
        el.is_terminated(),
        "terminated although the tasks keep coming"
    );
    assert!(
        runs.load(Ordering::SeqCst) - before <= 100,
        "a bounded number of runs"
    );
    assert_eq!(f.result(), Some(Ok(())));
    assert_eq!(
        rejected.load(Ordering::SeqCst),
        1,
        "the chain ends with a rejected submission"
    );
}

#[test]
fn with_a_quiet_period_tasks_that_keep_submitting_tasks_hold_the_shutdown_until_the_timeout() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let runs = Arc::new(AtomicUsize::new(0));
    resubmit_forever(&el, runs.clone(), Arc::new(AtomicUsize::new(0)));
    let f = el.shutdown_gracefully(MS, 100 * MS);
    for _ in 0..20 {
        ticker.advance(2 * MS);
        driver.run_once();
    }
    assert!(!f.is_done(), "each run restarts the quiet period");
    ticker.advance(100 * MS);
    for _ in 0..4 {
        driver.run_once();
    }
    assert!(f.is_done(), "the timeout ends it");
}
