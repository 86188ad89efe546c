use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use common::{manual_loop, Log};
use netloop_eventloop::{EventLoop, LoopConfig, LoopError, LoopState, RejectReason};

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn standalone_loop_starts_its_thread_lazily_on_first_task() {
    let el = EventLoop::standalone(LoopConfig::default()).unwrap();
    assert_eq!(el.state(), LoopState::NotStarted);
    let (tx, rx) = mpsc::channel();
    el.execute(move || {
        tx.send(std::thread::current().name().map(str::to_owned))
            .unwrap()
    })
    .unwrap();
    let name = rx.recv_timeout(WAIT).unwrap();
    assert_eq!(el.state(), LoopState::Started);
    assert_eq!(name.as_deref(), Some("netloop"));
    el.shutdown_gracefully(Duration::ZERO, WAIT).wait().unwrap();
}

#[test]
fn tasks_from_one_producer_run_in_fifo_order_on_the_loop_thread() {
    let el = EventLoop::standalone(LoopConfig::default()).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = mpsc::channel();
    for i in 0..1000 {
        let seen = seen.clone();
        let el2 = el.clone();
        el.execute(move || {
            assert!(el2.in_event_loop());
            seen.lock().unwrap().push(i)
        })
        .unwrap();
    }
    el.execute(move || tx.send(()).unwrap()).unwrap();
    rx.recv_timeout(WAIT).unwrap();
    assert_eq!(*seen.lock().unwrap(), (0..1000).collect::<Vec<_>>());
    assert!(!el.in_event_loop());
    el.shutdown_gracefully(Duration::ZERO, WAIT).wait().unwrap();
}

#[test]
fn execute_from_inside_the_loop_runs_after_the_current_task() {
    let (el, driver, _) = manual_loop(|_| {});
    let log = Log::default();
    let (l, e) = (log.clone(), el.clone());
    el.execute(move || {
        let l2 = l.clone();
        e.execute(move || l2.push("inner")).unwrap();
        l.push("outer");
    })
    .unwrap();
    driver.run_until_idle();
    assert_eq!(log.take(), ["outer", "inner"]);
}

#[test]
fn tasks_from_many_threads_all_run_exactly_once() {
    let el = EventLoop::standalone(LoopConfig::default()).unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let producers: Vec<_> = (0..4)
        .map(|_| {
            let (el, count) = (el.clone(), count.clone());
            std::thread::spawn(move || {
                for _ in 0..10_000 {
                    let c = count.clone();
                    el.execute(move || {
                        c.fetch_add(1, Ordering::Relaxed);
                    })
                    .unwrap();
                }
            })
        })
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    el.shutdown_gracefully(Duration::ZERO, WAIT).wait().unwrap();
    assert_eq!(count.load(Ordering::Relaxed), 40_000);
}

#[test]
fn a_sleeping_loop_is_woken_once_however_many_tasks_arrive() {
    // ioRatio 100: one batch runs all 100 tasks, so the loop needs no self-wake in between.
    let (el, driver, _) = manual_loop(|c| c.io_ratio = 100);
    driver.run_once();
    let before = el.wakeups();
    let el2 = el.clone();
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    std::thread::spawn(move || {
        for _ in 0..100 {
            let r = r.clone();
            el2.execute(move || {
                r.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
        }
    })
    .join()
    .unwrap();
    assert_eq!(
        el.wakeups() - before,
        1,
        "100 tasks into a sleeping loop must wake it exactly once"
    );
    driver.run_until_idle();
    assert_eq!(ran.load(Ordering::Relaxed), 100);
    // Asleep again: the next task wakes it again.
    let el3 = el.clone();
    std::thread::spawn(move || el3.execute(|| {}).unwrap())
        .join()
        .unwrap();
    assert_eq!(el.wakeups() - before, 2);
}

#[test]
fn a_standalone_loop_sleeping_in_poll_is_woken_by_a_task() {
    let el = EventLoop::standalone(LoopConfig::default()).unwrap();
    el.execute(|| {}).unwrap();
    std::thread::sleep(Duration::from_millis(50)); // let it fall asleep (no timers: infinite poll)
    let (tx, rx) = mpsc::channel();
    el.execute(move || tx.send(()).unwrap()).unwrap();
    rx.recv_timeout(WAIT)
        .expect("a task must wake a loop blocked in poll");
    el.shutdown_gracefully(Duration::ZERO, WAIT).wait().unwrap();
}

#[test]
fn max_pending_tasks_rejects_with_queue_full() {
    let (el, driver, _) = manual_loop(|c| c.max_pending_tasks = 3);
    let el2 = el.clone();
    let results =
        std::thread::spawn(move || (0..5).map(|_| el2.execute(|| {})).collect::<Vec<_>>())
            .join()
            .unwrap();
    assert!(results[..3].iter().all(Result::is_ok));
    for r in &results[3..] {
        let e = r.clone().unwrap_err();
        assert_eq!(e, LoopError::Rejected(RejectReason::QueueFull));
        assert_eq!(e.code(), "ERR_REJECTED_EXECUTION");
    }
    assert_eq!(el.pending_tasks(), 3);
    driver.run_until_idle();
    assert_eq!(el.pending_tasks(), 0);
}

#[test]
fn a_panicking_task_is_reported_and_the_loop_goes_on() {
    let reports = Arc::new(Mutex::new(Vec::<String>::new()));
    let r = reports.clone();
    let (el, driver, _) = manual_loop(move |c| {
        c.on_task_panic = Some(Arc::new(move |m| r.lock().unwrap().push(m.into())))
    });
    let log = Log::default();
    let l = log.clone();
    el.execute(|| panic!("boom")).unwrap();
    el.execute(move || l.push("after")).unwrap();
    driver.run_until_idle();
    assert_eq!(log.take(), ["after"]);
    assert_eq!(*reports.lock().unwrap(), ["boom"]);
    assert_eq!(el.task_failures(), 1);
}

#[test]
fn io_ratio_bounds_a_task_batch_to_64_tasks_when_there_was_no_io() {
    let (el, driver, _) = manual_loop(|c| c.io_ratio = 50);
    let count = Arc::new(AtomicUsize::new(0));
    for _ in 0..200 {
        let c = count.clone();
        el.execute(move || {
            c.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    }
    driver.run_once();
    assert_eq!(
        count.load(Ordering::Relaxed),
        64,
        "the fake clock never moves, so the budget ends the batch at the first check"
    );
    driver.run_until_idle();
    assert_eq!(count.load(Ordering::Relaxed), 200);
}

#[test]
fn io_ratio_100_runs_every_pending_task_in_one_batch() {
    let (el, driver, _) = manual_loop(|c| c.io_ratio = 100);
    let count = Arc::new(AtomicUsize::new(0));
    for _ in 0..200 {
        let c = count.clone();
        el.execute(move || {
            c.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    }
    driver.run_once();
    assert_eq!(count.load(Ordering::Relaxed), 200);
}

#[test]
fn io_ratio_outside_1_to_100_is_rejected() {
    for bad in [0, 101] {
        let err = EventLoop::standalone(LoopConfig {
            io_ratio: bad,
            ..LoopConfig::default()
        })
        .unwrap_err();
        assert_eq!(err.code(), "ERR_INVALID_ARG_VALUE");
    }
}

#[test]
fn tail_tasks_run_once_after_the_task_batch() {
    let (el, driver, _) = manual_loop(|_| {});
    let log = Log::default();
    let (l1, l2) = (log.clone(), log.clone());
    let local = el.local().unwrap();
    local.execute_after_batch(move || l1.push("tail"));
    el.execute(move || l2.push("task")).unwrap();
    driver.run_until_idle();
    driver.run_once();
    assert_eq!(log.take(), ["task", "tail"]);
}

#[test]
fn local_tasks_and_send_tasks_from_the_loop_thread_share_one_fifo() {
    let (el, driver, _) = manual_loop(|_| {});
    let log = Log::default();
    let local = el.local().unwrap();
    for i in 0..6 {
        let l = log.clone();
        if i % 2 == 0 {
            el.execute(move || l.push(i.to_string())).unwrap();
        } else {
            local.execute_local(move || l.push(i.to_string()));
        }
    }
    driver.run_until_idle();
    assert_eq!(log.take(), ["0", "1", "2", "3", "4", "5"]);
}
