//! Tests of [`IdleStateTracker`] with a fake clock (milliseconds since an origin).

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn ev(state: IdleState, first: bool) -> IdleStateEvent {
    IdleStateEvent { state, first }
}

fn reader_only(period: u64) -> IdleStateTracker {
    IdleStateTracker::new(
        IdleConfig {
            reader: Some(ms(period)),
            ..IdleConfig::default()
        },
        ms(0),
    )
}

#[test]
fn reader_idle_fires_first_event_after_one_silent_period() {
    let mut tracker = reader_only(100);
    assert_eq!(tracker.next_deadline(), Some(ms(100)));
    assert!(tracker.poll(ms(99)).is_empty(), "not due yet");
    assert_eq!(tracker.poll(ms(100)), [ev(IdleState::ReaderIdle, true)]);
}

#[test]
fn reader_idle_repeats_every_period_with_first_false() {
    let mut tracker = reader_only(100);
    tracker.poll(ms(100));
    assert_eq!(tracker.next_deadline(), Some(ms(200)));
    assert_eq!(tracker.poll(ms(200)), [ev(IdleState::ReaderIdle, false)]);
    assert_eq!(tracker.poll(ms(300)), [ev(IdleState::ReaderIdle, false)]);
}

#[test]
fn read_postpones_reader_idle_by_a_full_period_from_the_read() {
    let mut tracker = reader_only(100);
    tracker.on_read(ms(60));
    tracker.on_read_complete(ms(70));
    assert!(
        tracker.poll(ms(100)).is_empty(),
        "deadline reached, but read 30 ms ago"
    );
    assert_eq!(tracker.next_deadline(), Some(ms(170)));
    assert!(tracker.poll(ms(169)).is_empty());
    assert_eq!(tracker.poll(ms(170)), [ev(IdleState::ReaderIdle, true)]);
}

#[test]
fn read_after_idle_events_makes_the_next_event_first_again() {
    let mut tracker = reader_only(100);
    tracker.poll(ms(100));
    tracker.poll(ms(200));
    tracker.on_read(ms(250));
    tracker.on_read_complete(ms(250));
    assert!(tracker.poll(ms(300)).is_empty());
    assert_eq!(tracker.poll(ms(350)), [ev(IdleState::ReaderIdle, true)]);
}

#[test]
fn read_burst_in_progress_suppresses_reader_and_all_idle_but_not_writer_idle() {
    let cfg = IdleConfig {
        reader: Some(ms(100)),
        writer: Some(ms(100)),
        all: Some(ms(100)),
    };
    let mut tracker = IdleStateTracker::new(cfg, ms(0));
    tracker.on_read(ms(10));
    assert_eq!(tracker.poll(ms(500)), [ev(IdleState::WriterIdle, true)]);
    tracker.on_read_complete(ms(500));
    assert!(tracker.poll(ms(599)).is_empty());
    assert_eq!(
        tracker.poll(ms(600)),
        [
            ev(IdleState::ReaderIdle, true),
            ev(IdleState::WriterIdle, false),
            ev(IdleState::AllIdle, true)
        ]
    );
}

#[test]
fn write_postpones_writer_idle_and_resets_first() {
    let cfg = IdleConfig {
        writer: Some(ms(100)),
        ..IdleConfig::default()
    };
    let mut tracker = IdleStateTracker::new(cfg, ms(0));
    assert_eq!(tracker.poll(ms(100)), [ev(IdleState::WriterIdle, true)]);
    tracker.on_write(ms(150));
    assert!(tracker.poll(ms(200)).is_empty());
    assert_eq!(tracker.poll(ms(250)), [ev(IdleState::WriterIdle, true)]);
}

#[test]
fn all_idle_waits_for_both_reads_and_writes_to_stop() {
    let cfg = IdleConfig {
        all: Some(ms(100)),
        ..IdleConfig::default()
    };
    let mut tracker = IdleStateTracker::new(cfg, ms(0));
    tracker.on_write(ms(80));
    assert!(tracker.poll(ms(100)).is_empty());
    tracker.on_read(ms(150));
    tracker.on_read_complete(ms(150));
    assert!(
        tracker.poll(ms(180)).is_empty(),
        "write at 80 is old, but read at 150 is not"
    );
    assert_eq!(tracker.next_deadline(), Some(ms(250)));
    assert_eq!(tracker.poll(ms(250)), [ev(IdleState::AllIdle, true)]);
}

#[test]
fn write_does_not_reset_reader_first_flag() {
    let cfg = IdleConfig {
        reader: Some(ms(100)),
        writer: Some(ms(1000)),
        ..IdleConfig::default()
    };
    let mut tracker = IdleStateTracker::new(cfg, ms(0));
    tracker.poll(ms(100));
    tracker.on_write(ms(150));
    assert_eq!(tracker.poll(ms(200)), [ev(IdleState::ReaderIdle, false)]);
}

#[test]
fn late_poll_fires_once_per_kind_without_catch_up() {
    let mut tracker = reader_only(100);
    assert_eq!(tracker.poll(ms(1_000)), [ev(IdleState::ReaderIdle, true)]);
    assert_eq!(tracker.next_deadline(), Some(ms(1_100)));
    assert!(tracker.poll(ms(1_050)).is_empty());
}

#[test]
fn disabled_or_zero_periods_never_fire_and_have_no_deadline() {
    let cfg = IdleConfig {
        reader: Some(Duration::ZERO),
        writer: None,
        all: None,
    };
    let mut tracker = IdleStateTracker::new(cfg, ms(0));
    assert_eq!(tracker.next_deadline(), None);
    assert!(tracker.poll(ms(1_000_000)).is_empty());
}

#[test]
fn tiny_periods_are_raised_to_the_minimum_timeout() {
    let cfg = IdleConfig {
        writer: Some(Duration::from_nanos(10)),
        ..IdleConfig::default()
    };
    let tracker = IdleStateTracker::new(cfg, ms(5));
    assert_eq!(tracker.next_deadline(), Some(ms(5) + MIN_IDLE_TIMEOUT));
}

#[test]
fn next_deadline_is_the_earliest_enabled_kind() {
    let cfg = IdleConfig {
        reader: Some(ms(300)),
        writer: Some(ms(100)),
        all: Some(ms(200)),
    };
    let mut tracker = IdleStateTracker::new(cfg, ms(0));
    assert_eq!(tracker.next_deadline(), Some(ms(100)));
    tracker.poll(ms(100));
    assert_eq!(tracker.next_deadline(), Some(ms(200)));
}

#[test]
fn waking_at_next_deadline_never_misses_an_event() {
    // Random activity; compare polling only at next_deadline with polling every ms.
    let cfg = IdleConfig {
        reader: Some(ms(7)),
        writer: Some(ms(11)),
        all: Some(ms(5)),
    };
    let mut every_ms = IdleStateTracker::new(cfg, ms(0));
    let mut on_deadline = IdleStateTracker::new(cfg, ms(0));
    let mut rng = crate::testing::XorShift::new(5);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for t in 1..2_000u64 {
        let now = ms(t);
        a.extend(every_ms.poll(now).into_iter().map(|e| (t, e)));
        if on_deadline.next_deadline().is_some_and(|d| d <= now) {
            b.extend(on_deadline.poll(now).into_iter().map(|e| (t, e)));
        }
        match rng.below(40) {
            0 => [&mut every_ms, &mut on_deadline]
                .into_iter()
                .for_each(|x| x.on_write(now)),
            1 => [&mut every_ms, &mut on_deadline].into_iter().for_each(|x| {
                x.on_read(now);
                x.on_read_complete(now);
            }),
            _ => {}
        }
    }
    assert!(a.len() > 50, "the scenario produces events");
    assert_eq!(a, b);
}
