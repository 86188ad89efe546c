//! Issue 9: a terminated loop releases its epoll fd and its eventfd at termination (attached
//! loops: when the driver releases the selector), not when the last handle is dropped.
//!
//! One test in this binary on purpose: it counts the process's open descriptors.

use std::time::Duration;

use netloop_eventloop::{EventLoop, LoopConfig};

const LOOPS: usize = 200;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .count()
}

#[test]
#[cfg(target_os = "linux")]
fn terminated_loops_release_their_descriptors() {
    // Standalone: released at termination, although every handle is still alive.
    let before = open_fds();
    let loops: Vec<EventLoop> = (0..LOOPS)
        .map(|_| EventLoop::standalone(LoopConfig::default()).unwrap())
        .collect();
    for el in &loops {
        el.execute(|| {}).unwrap();
    }
    for el in &loops {
        el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(5));
    }
    for el in &loops {
        el.termination_future().wait().unwrap();
    }
    assert_eq!(open_fds(), before, "standalone loops kept descriptors open");
    drop(loops);

    // Attached: the eventfd closes at termination, the epoll fd (watched by libuv) when the
    // driver releases it; releasing twice is harmless.
    let before = open_fds();
    let attached: Vec<_> = (0..LOOPS)
        .map(|_| EventLoop::attached(LoopConfig::default()).unwrap())
        .collect();
    assert_eq!(open_fds(), before + 2 * LOOPS);
    for (el, driver) in &attached {
        el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(5));
        while !driver.run_once().terminated {}
    }
    assert_eq!(
        open_fds(),
        before + LOOPS,
        "the eventfds close at termination"
    );
    for (el, driver) in &attached {
        assert!(driver.release_selector());
        assert!(!driver.release_selector());
        assert_eq!(driver.raw_fd(), -1);
        assert!(driver.run_io_ready().terminated);
        assert!(el.is_terminated());
    }
    assert_eq!(open_fds(), before, "release_selector closes the epoll fds");
    let handles: Vec<EventLoop> = attached.into_iter().map(|(el, _)| el).collect();
    assert_eq!(open_fds(), before);

    // Attached, never shut down: dropping the driver terminates and releases.
    let before = open_fds();
    let attached: Vec<_> = (0..LOOPS)
        .map(|_| EventLoop::attached(LoopConfig::default()).unwrap())
        .collect();
    let (els, drivers): (Vec<_>, Vec<_>) = attached.into_iter().unzip();
    drop(drivers);
    assert!(els.iter().all(EventLoop::is_terminated));
    assert_eq!(
        open_fds(),
        before,
        "dropping the driver releases the descriptors"
    );
    drop((els, handles));
}
