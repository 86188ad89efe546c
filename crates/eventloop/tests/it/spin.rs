//! A standalone loop's bounded spin before it sleeps (`LoopConfig::spin_before_sleep`).

use std::sync::mpsc;
use std::time::{Duration, Instant};

use netloop_eventloop::{EventLoop, LoopConfig};

fn spinning_loop(spin: Duration) -> EventLoop {
    EventLoop::standalone(LoopConfig {
        spin_before_sleep: spin,
        ..LoopConfig::default()
    })
    .unwrap()
}

/// Runs a task on `el` and waits until it ran.
fn run_on(el: &EventLoop) {
    let (tx, rx) = mpsc::channel();
    el.execute(move || tx.send(()).unwrap()).unwrap();
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the task ran");
}

fn shut_down(el: &EventLoop) {
    el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(10))
        .wait_timeout(Duration::from_secs(10))
        .expect("terminated in time")
        .expect("terminated");
}

#[test]
fn a_task_sent_while_the_loop_spins_runs_without_waking_it() {
    // A budget far beyond the test's gaps: the loop is still spinning when the tasks come.
    let el = spinning_loop(Duration::from_secs(5));
    run_on(&el);
    let wakeups = el.wakeups();
    for _ in 0..10 {
        // Send the next task once the loop is spinning (its poll count moves).
        let polls = el.spin_polls();
        while el.spin_polls() == polls {
            std::thread::yield_now();
        }
        run_on(&el);
    }
    assert_eq!(
        el.wakeups(),
        wakeups,
        "no waker fired for tasks sent while it spun"
    );
    let started = Instant::now();
    shut_down(&el);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "a shutdown ends the spin at once, not after its budget"
    );
}

#[test]
fn without_a_spin_every_task_sent_to_an_idle_loop_wakes_it() {
    let el = spinning_loop(Duration::ZERO);
    run_on(&el);
    let wakeups = el.wakeups();
    for _ in 0..10 {
        // Time for the loop to go back to sleep (nothing observable says it did; one of ten
        // is enough for the assertion).
        std::thread::sleep(Duration::from_millis(10));
        run_on(&el);
    }
    assert!(
        el.wakeups() > wakeups,
        "a sleeping loop is woken for a task"
    );
    assert_eq!(el.spin_polls(), 0);
    shut_down(&el);
}

#[test]
fn an_idle_loop_stops_spinning_after_its_budget() {
    let el = spinning_loop(Duration::from_millis(5));
    run_on(&el);
    // After the budget the loop sleeps: the count of spin polls stops moving.
    let deadline = Instant::now() + Duration::from_secs(10);
    let settled = loop {
        let before = el.spin_polls();
        std::thread::sleep(Duration::from_millis(100));
        if el.spin_polls() == before {
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
    };
    assert!(settled, "the loop kept spinning while idle");
    shut_down(&el);
}
