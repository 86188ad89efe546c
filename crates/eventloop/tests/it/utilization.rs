//! A standalone loop's busy time (`EventLoop::busy_time`): time in iterations counts, time
//! blocked in the selector does not.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use netloop_eventloop::{EventLoop, LoopConfig};

const WAIT: Duration = Duration::from_secs(10);

fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

#[test]
fn a_task_that_spins_counts_as_busy_time_and_an_idle_loop_does_not() {
    let el = EventLoop::standalone(LoopConfig::default()).unwrap();
    assert_eq!(
        el.busy_time(),
        (Duration::ZERO, Duration::ZERO),
        "not started yet"
    );
    let (tx, rx) = mpsc::channel();
    el.execute(move || {
        spin(Duration::from_millis(50));
        tx.send(()).unwrap();
    })
    .unwrap();
    rx.recv_timeout(WAIT).unwrap();
    // The iteration ends right after the task: wait for a second task so it is counted.
    let (tx, rx) = mpsc::channel();
    el.execute(move || tx.send(()).unwrap()).unwrap();
    rx.recv_timeout(WAIT).unwrap();
    let (busy1, elapsed1) = el.busy_time();
    assert!(busy1 >= Duration::from_millis(45), "busy {busy1:?}");
    assert!(busy1 <= elapsed1);

    // Idle: blocked in the selector for a while, busy time barely moves.
    std::thread::sleep(Duration::from_millis(200));
    let (busy2, elapsed2) = el.busy_time();
    let idle_window = elapsed2 - elapsed1;
    assert!(idle_window >= Duration::from_millis(150), "{idle_window:?}");
    assert!(
        busy2 - busy1 < idle_window / 4,
        "busy grew by {:?} over {idle_window:?} of idleness",
        busy2 - busy1
    );
    assert!(el
        .shutdown_gracefully(Duration::ZERO, WAIT)
        .wait_timeout(WAIT)
        .is_some());
}
