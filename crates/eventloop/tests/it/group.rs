use std::collections::HashSet;
use std::time::Duration;

use netloop_eventloop::{default_loop_count, EventLoopGroup, LoopConfig};

#[test]
fn a_group_defaults_to_the_available_parallelism() {
    let g = EventLoopGroup::new(0, LoopConfig::default()).unwrap();
    assert_eq!(g.len(), default_loop_count());
    assert!(!g.is_empty());
}

#[test]
fn next_hands_out_loops_round_robin_with_a_power_of_two_count() {
    let g = EventLoopGroup::new(4, LoopConfig::default()).unwrap();
    assert!(g.uses_power_of_two_chooser());
    let ids: Vec<u64> = (0..8).map(|_| g.next().id()).collect();
    assert_eq!(ids[..4], ids[4..]);
    assert_eq!(ids[..4].iter().collect::<HashSet<_>>().len(), 4);
}

#[test]
fn next_hands_out_loops_round_robin_with_any_count() {
    let g = EventLoopGroup::new(3, LoopConfig::default()).unwrap();
    assert!(!g.uses_power_of_two_chooser());
    let ids: Vec<u64> = (0..6).map(|_| g.next().id()).collect();
    assert_eq!(ids[..3], ids[3..]);
    assert_eq!(ids[..3].iter().collect::<HashSet<_>>().len(), 3);
    assert_eq!(g.loops()[1].name(), "netloop-1");
}

#[test]
fn group_shutdown_terminates_every_loop() {
    let g = EventLoopGroup::new(3, LoopConfig::default()).unwrap();
    g.next().execute(|| {}).unwrap();
    let f = g.shutdown_gracefully(Duration::ZERO, Duration::from_secs(1));
    assert!(g.await_termination(Duration::from_secs(10)));
    assert!(g.is_terminated());
    assert_eq!(f.wait_timeout(Duration::from_secs(10)), Some(Ok(())));
    assert!(g.termination_future().is_success());
}

#[test]
fn shutdown_gracefully_returns_the_same_termination_future_on_every_call() {
    let g = EventLoopGroup::new(2, LoopConfig::default()).unwrap();
    let first = g.shutdown_gracefully(Duration::ZERO, Duration::from_secs(1));
    let second = g.shutdown_gracefully(Duration::ZERO, Duration::from_secs(1));
    assert!(
        first.ptr_eq(&second),
        "Netty: shutdownGracefully() returns terminationFuture()"
    );
    assert!(first.ptr_eq(&g.termination_future()));
    assert!(
        first.ptr_eq(&g.clone().termination_future()),
        "clones share it"
    );
    assert_eq!(first.wait_timeout(Duration::from_secs(10)), Some(Ok(())));
}

#[test]
fn a_quiet_period_above_the_timeout_fails_the_group_shutdown_call() {
    let g = EventLoopGroup::new(2, LoopConfig::default()).unwrap();
    let f = g.shutdown_gracefully(Duration::from_secs(2), Duration::from_secs(1));
    assert!(!f.ptr_eq(&g.termination_future()));
    assert_eq!(
        f.result().unwrap().unwrap_err().code(),
        "ERR_INVALID_ARG_VALUE"
    );
    g.shutdown_gracefully(Duration::ZERO, Duration::from_secs(1));
    assert!(g.await_termination(Duration::from_secs(10)));
}
