//! Behaviour of `IdleStateHandler` on an `EmbeddedChannel` (fake clock, hand-driven loop).

use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use netloop_transport::EmbeddedChannel;

use super::recorder::{Ev, Recorder};
use crate::{IdleConfig, IdleState, IdleStateEvent, IdleStateHandler};

const PERIOD: Duration = Duration::from_millis(10);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn ev(state: IdleState, first: bool) -> IdleStateEvent {
    IdleStateEvent { state, first }
}

fn reader_only() -> IdleConfig {
    IdleConfig {
        reader: Some(PERIOD),
        ..IdleConfig::default()
    }
}

fn idle_channel(cfg: IdleConfig) -> EmbeddedChannel {
    EmbeddedChannel::new(vec![("idle", Rc::new(IdleStateHandler::new(cfg)))])
}

/// Moves the clock to `t` (since the channel's creation at 0) and returns the idle events
/// that reached the tail.
fn at(ch: &EmbeddedChannel, t: u64) -> Vec<IdleStateEvent> {
    let now = ch.now();
    assert!(ms(t) >= now, "time moves forward");
    ch.advance_time(ms(t) - now);
    std::iter::from_fn(|| ch.read_user_event())
        .map(|e| *e.downcast::<IdleStateEvent>().expect("an idle event"))
        .collect()
}

fn read_at(ch: &EmbeddedChannel, t: u64) {
    assert_eq!(at(ch, t), []);
    ch.write_inbound(Bytes::from_static(b"x"));
}

fn timers(ch: &EmbeddedChannel) -> usize {
    ch.driver().local().timer_count()
}

#[test]
fn reader_idle_fires_first_after_the_period_then_repeats_with_first_false() {
    let ch = idle_channel(reader_only());
    assert_eq!(at(&ch, 9), []);
    assert_eq!(at(&ch, 10), [ev(IdleState::ReaderIdle, true)]);
    assert_eq!(at(&ch, 19), []);
    assert_eq!(at(&ch, 20), [ev(IdleState::ReaderIdle, false)]);
    assert_eq!(at(&ch, 30), [ev(IdleState::ReaderIdle, false)]);
}

#[test]
fn read_activity_postpones_the_next_event_by_a_full_period_and_resets_first() {
    let ch = idle_channel(reader_only());
    read_at(&ch, 6);
    assert_eq!(at(&ch, 15), []);
    assert_eq!(at(&ch, 16), [ev(IdleState::ReaderIdle, true)]);
    assert_eq!(at(&ch, 26), [ev(IdleState::ReaderIdle, false)]);
    read_at(&ch, 30);
    assert_eq!(at(&ch, 39), []);
    assert_eq!(at(&ch, 40), [ev(IdleState::ReaderIdle, true)]);
}

#[test]
fn a_read_burst_in_progress_counts_as_reader_activity_until_it_completes() {
    let ch = idle_channel(reader_only());
    ch.pipeline().fire_channel_read(Bytes::from_static(b"x"));
    assert_eq!(at(&ch, 35), [], "busy reading: no reader idle");
    ch.pipeline().fire_channel_read_complete();
    assert_eq!(at(&ch, 44), []);
    assert_eq!(at(&ch, 45), [ev(IdleState::ReaderIdle, true)]);
}

#[test]
fn writer_idle_counts_completed_writes_and_ignores_reads() {
    let ch = idle_channel(IdleConfig {
        writer: Some(PERIOD),
        ..IdleConfig::default()
    });
    read_at(&ch, 5);
    assert_eq!(at(&ch, 10), [ev(IdleState::WriterIdle, true)]);
    assert_eq!(at(&ch, 12), []);
    ch.write_outbound(Bytes::from_static(b"w")); // void promise: tracked all the same
    assert_eq!(at(&ch, 21), []);
    assert_eq!(at(&ch, 22), [ev(IdleState::WriterIdle, true)]);
    assert_eq!(at(&ch, 32), [ev(IdleState::WriterIdle, false)]);
}

#[test]
fn a_write_counts_when_it_completes_not_when_it_is_issued() {
    let ch = idle_channel(IdleConfig {
        writer: Some(PERIOD),
        ..IdleConfig::default()
    });
    assert_eq!(at(&ch, 3), []);
    let written = ch.channel().write_future(Bytes::from_static(b"w")); // not flushed
    assert_eq!(
        at(&ch, 10),
        [ev(IdleState::WriterIdle, true)],
        "pending write: still idle"
    );
    assert_eq!(at(&ch, 14), []);
    ch.channel().flush();
    ch.run_pending_tasks();
    assert!(written.is_done());
    assert_eq!(at(&ch, 20), [], "completed at 14: next event at 24");
    assert_eq!(at(&ch, 24), [ev(IdleState::WriterIdle, true)]);
}

#[test]
fn all_idle_counts_reads_and_writes() {
    let ch = idle_channel(IdleConfig {
        all: Some(PERIOD),
        ..IdleConfig::default()
    });
    read_at(&ch, 5);
    assert_eq!(at(&ch, 12), []);
    ch.write_outbound(Bytes::from_static(b"w"));
    assert_eq!(at(&ch, 21), []);
    assert_eq!(at(&ch, 22), [ev(IdleState::AllIdle, true)]);
    assert_eq!(at(&ch, 32), [ev(IdleState::AllIdle, false)]);
}

#[test]
fn one_timer_serves_all_three_kinds_and_events_come_reader_writer_all() {
    let ch = idle_channel(IdleConfig {
        reader: Some(PERIOD),
        writer: Some(PERIOD),
        all: Some(PERIOD),
    });
    assert_eq!(timers(&ch), 1);
    assert_eq!(
        at(&ch, 10),
        [
            ev(IdleState::ReaderIdle, true),
            ev(IdleState::WriterIdle, true),
            ev(IdleState::AllIdle, true),
        ]
    );
    assert_eq!(timers(&ch), 1, "re-armed once");
    read_at(&ch, 13);
    assert_eq!(timers(&ch), 1, "activity does not arm another timer");
    assert_eq!(
        at(&ch, 20),
        [ev(IdleState::WriterIdle, false)],
        "the read postponed reader and all idle"
    );
}

#[test]
fn no_events_after_the_channel_closes() {
    let ch = idle_channel(IdleConfig {
        reader: Some(PERIOD),
        writer: Some(PERIOD),
        all: Some(PERIOD),
    });
    assert_eq!(at(&ch, 10).len(), 3);
    assert_eq!(at(&ch, 15), []);
    ch.close();
    assert_eq!(at(&ch, 100), []);
}

#[test]
fn no_events_after_the_handler_is_removed() {
    let ch = idle_channel(reader_only());
    assert_eq!(at(&ch, 10).len(), 1);
    ch.pipeline().remove("idle").unwrap();
    assert_eq!(at(&ch, 100), []);
}

#[test]
fn removing_the_handler_from_an_idle_event_stops_the_events_of_the_same_tick() {
    let rec = Recorder::with_hook(|ctx, _| {
        let _ = ctx.pipeline().remove("idle");
    });
    let cfg = IdleConfig {
        reader: Some(PERIOD),
        writer: Some(PERIOD),
        all: Some(PERIOD),
    };
    let ch = EmbeddedChannel::new(vec![
        ("idle", Rc::new(IdleStateHandler::new(cfg))),
        ("recorder", rec.clone()),
    ]);
    ch.advance_time(ms(50));
    let first = ev(IdleState::ReaderIdle, true);
    assert_eq!(rec.take(), [Ev::Event(format!("{first:?}"))]);
}

#[test]
fn a_handler_added_to_an_active_channel_starts_timing_when_added() {
    let ch = EmbeddedChannel::new(vec![]);
    ch.advance_time(ms(5));
    ch.pipeline()
        .add_last("idle", IdleStateHandler::new(reader_only()))
        .unwrap();
    assert_eq!(at(&ch, 14), []);
    assert_eq!(at(&ch, 15), [ev(IdleState::ReaderIdle, true)]);
}

#[test]
fn a_handler_with_every_kind_disabled_arms_no_timer() {
    let ch = idle_channel(IdleConfig::default());
    assert_eq!(timers(&ch), 0);
    let zeros = IdleStateHandler::with_periods(Duration::ZERO, Duration::ZERO, Duration::ZERO);
    ch.pipeline().add_last("zeros", zeros).unwrap();
    assert_eq!(timers(&ch), 0);
    ch.write_outbound(Bytes::from_static(b"w"));
    assert_eq!(at(&ch, 1000), []);
}

/// Refuses every write, as a failing outbound handler would.
struct RefuseWrites;

impl netloop_transport::ChannelHandler for RefuseWrites {
    fn write(
        &self,
        _ctx: &netloop_transport::ChannelHandlerContext,
        _msg: netloop_transport::Message,
        _promise: netloop_transport::ChannelPromise,
    ) -> netloop_transport::HandlerResult {
        Err(netloop_transport::TransportError::foreign(
            "ERR_TEST_REFUSED",
            std::io::Error::other("refused"),
        ))
    }
}

#[test]
fn a_failed_write_without_a_promise_still_reaches_exception_caught_through_the_idle_handler() {
    let ch = EmbeddedChannel::new(vec![
        ("refuse", Rc::new(RefuseWrites)),
        (
            "idle",
            Rc::new(IdleStateHandler::new(IdleConfig {
                writer: Some(PERIOD),
                ..IdleConfig::default()
            })),
        ),
    ]);
    ch.write_outbound(Bytes::from_static(b"x"));
    let err = ch
        .check_exception()
        .expect_err("the refusal is reported, not swallowed");
    assert_eq!(err.code(), "ERR_TEST_REFUSED");
}

/// Keeps every write's promise, to fail them later (as a reset channel fails queued writes).
#[derive(Default)]
struct KeepWrites(std::cell::RefCell<Vec<netloop_transport::ChannelPromise>>);

impl netloop_transport::ChannelHandler for KeepWrites {
    fn write(
        &self,
        _ctx: &netloop_transport::ChannelHandlerContext,
        _msg: netloop_transport::Message,
        promise: netloop_transport::ChannelPromise,
    ) -> netloop_transport::HandlerResult {
        self.0.borrow_mut().push(promise);
        Ok(())
    }
}

#[test]
fn queued_writes_without_a_promise_that_fail_later_stay_silent_through_the_idle_handler() {
    let keep = Rc::new(KeepWrites::default());
    let ch = EmbeddedChannel::new(vec![
        ("keep", keep.clone()),
        (
            "idle",
            Rc::new(IdleStateHandler::new(IdleConfig {
                writer: Some(PERIOD),
                ..IdleConfig::default()
            })),
        ),
    ]);
    for _ in 0..100 {
        ch.write_outbound(Bytes::from_static(b"x"));
    }
    for p in keep.0.borrow_mut().drain(..) {
        p.try_failure(netloop_transport::TransportError::ChannelClosed);
    }
    ch.check_exception()
        .expect("failures of promise-less writes after their write call are not reported");
}
