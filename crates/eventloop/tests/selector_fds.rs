//! Issue 10 item 4: a standalone loop closes the selector a rebuild replaced at once (nobody
//! else watches it). One test in this binary on purpose: it counts open descriptors.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use netloop_eventloop::{EventLoop, LoopConfig, SelectorFault};

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
#[cfg(target_os = "linux")]
fn a_standalone_loop_closes_the_replaced_selector_after_a_rebuild() {
    let faults = Arc::new(AtomicU32::new(0));
    let f = faults.clone();
    let el = EventLoop::standalone(LoopConfig {
        selector_rebuild_threshold: 3,
        fault_injector: Some(Arc::new(move || {
            if f.load(Ordering::SeqCst) > 0 {
                f.fetch_sub(1, Ordering::SeqCst);
                SelectorFault::PrematureEmpty
            } else {
                SelectorFault::None
            }
        })),
        ..LoopConfig::default()
    })
    .unwrap();
    el.execute(|| {}).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let before = open_fds();
    faults.store(3 * 20, Ordering::SeqCst);
    el.execute(|| {}).unwrap();
    let t0 = std::time::Instant::now();
    while el.selector_rebuilds() < 20 && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(el.selector_rebuilds(), 20);
    // Each rebuild opens an epoll fd and an eventfd and must close the old pair.
    assert!(
        open_fds() <= before + 2,
        "old selectors stayed open: {} -> {}",
        before,
        open_fds()
    );
    el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(5))
        .wait()
        .unwrap();
}
