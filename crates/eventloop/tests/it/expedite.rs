//! `EventLoop::expedite_shutdown`: a graceful shutdown cut short.

use std::time::{Duration, Instant};

use netloop_eventloop::{EventLoop, LoopConfig};

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn expedite_shutdown_skips_the_rest_of_the_quiet_period() {
    let el = EventLoop::standalone(LoopConfig::default()).unwrap();
    el.execute(|| {}).unwrap();
    let started = Instant::now();
    let f = el.shutdown_gracefully(Duration::from_secs(60), Duration::from_secs(120));
    el.expedite_shutdown();
    assert!(
        f.wait_timeout(WAIT).is_some(),
        "terminated without waiting out 60 s"
    );
    assert!(started.elapsed() < WAIT);
    assert!(el.is_terminated());
}
