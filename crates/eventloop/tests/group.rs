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
