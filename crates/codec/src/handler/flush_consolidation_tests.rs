//! Behaviour of `FlushConsolidationHandler` on `EmbeddedChannel`s: flushes that reach the
//! head (counted by a handler in front of it) and the messages written.

use std::cell::Cell;
use std::rc::Rc;

use bytes::Bytes;
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, EmbeddedChannel, HandlerResult, Message,
};

use crate::FlushConsolidationHandler;

/// Counts the flushes that pass it towards the head.
#[derive(Default)]
struct FlushCounter(Cell<usize>);

impl ChannelHandler for FlushCounter {
    fn flush(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.0.set(self.0.get() + 1);
        ctx.flush();
        Ok(())
    }
}

/// Answers every inbound message with `write_and_flush` (what consolidation is for).
struct EchoEachFlushed;

impl ChannelHandler for EchoEachFlushed {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        ctx.write_and_flush(msg);
        Ok(())
    }
}

fn channel(h: FlushConsolidationHandler) -> (EmbeddedChannel, Rc<FlushCounter>) {
    let counter = Rc::new(FlushCounter::default());
    let ch = EmbeddedChannel::new(vec![
        ("count", counter.clone() as Rc<dyn ChannelHandler>),
        ("consolidate", Rc::new(h)),
        ("echo", Rc::new(EchoEachFlushed)),
    ]);
    (ch, counter)
}

fn outbound(ch: &EmbeddedChannel) -> usize {
    std::iter::from_fn(|| ch.read_outbound()).count()
}

fn read_batch(ch: &EmbeddedChannel, n: usize) {
    for i in 0..n {
        ch.pipeline()
            .fire_channel_read(Bytes::from(vec![i as u8; 8]));
    }
}

#[test]
fn the_flushes_of_a_read_batch_reach_the_socket_as_one_at_its_end() {
    let (ch, flushes) = channel(FlushConsolidationHandler::default());
    read_batch(&ch, 16);
    assert_eq!(flushes.0.get(), 0, "nothing flushed while the batch lasts");
    assert_eq!(outbound(&ch), 0);
    ch.pipeline().fire_channel_read_complete();
    assert_eq!(flushes.0.get(), 1);
    assert_eq!(outbound(&ch), 16, "every answer written by that one flush");
}

#[test]
fn every_explicit_flush_after_flushes_th_flush_of_a_long_batch_passes_at_once() {
    let (ch, flushes) = channel(FlushConsolidationHandler::new(4, false).unwrap());
    read_batch(&ch, 10);
    assert_eq!(flushes.0.get(), 2, "after the 4th and the 8th");
    assert_eq!(outbound(&ch), 8);
    ch.pipeline().fire_channel_read_complete();
    assert_eq!(flushes.0.get(), 3);
    assert_eq!(outbound(&ch), 2);
}

#[test]
fn outside_a_read_batch_a_flush_passes_at_once_by_default() {
    let (ch, flushes) = channel(FlushConsolidationHandler::default());
    for _ in 0..3 {
        ch.channel().write_and_flush(Bytes::from_static(b"x"));
        assert_eq!(outbound(&ch), 1);
    }
    assert_eq!(flushes.0.get(), 3);
}

#[test]
fn with_consolidate_when_no_read_in_progress_flushes_outside_reads_become_one_task() {
    let (ch, flushes) = channel(FlushConsolidationHandler::new(256, true).unwrap());
    for _ in 0..5 {
        ch.channel().write_and_flush(Bytes::from_static(b"x"));
    }
    assert_eq!(flushes.0.get(), 0, "deferred to the loop's next task batch");
    assert_eq!(outbound(&ch), 0);
    ch.run_pending_tasks();
    assert_eq!(flushes.0.get(), 1);
    assert_eq!(outbound(&ch), 5);
    ch.run_pending_tasks();
    assert_eq!(flushes.0.get(), 1, "the task flushes once");
}

#[test]
fn a_read_batch_end_makes_the_scheduled_flush_stale() {
    let (ch, flushes) = channel(FlushConsolidationHandler::new(256, true).unwrap());
    ch.channel().write_and_flush(Bytes::from_static(b"x"));
    read_batch(&ch, 2);
    ch.pipeline().fire_channel_read_complete();
    assert_eq!(flushes.0.get(), 1, "the batch's end flushed everything");
    assert_eq!(outbound(&ch), 3);
    ch.run_pending_tasks();
    assert_eq!(flushes.0.get(), 1, "the stale task does not flush again");
}

#[test]
fn a_close_flushes_what_was_counted_first() {
    let (ch, flushes) = channel(FlushConsolidationHandler::default());
    read_batch(&ch, 3);
    ch.channel().close();
    ch.run_pending_tasks();
    assert_eq!(flushes.0.get(), 1);
    assert_eq!(
        outbound(&ch),
        3,
        "the answers were written before the close"
    );
}

#[test]
fn removing_the_handler_flushes_what_was_counted() {
    let (ch, flushes) = channel(FlushConsolidationHandler::default());
    read_batch(&ch, 2);
    ch.pipeline().remove("consolidate").unwrap();
    assert_eq!(flushes.0.get(), 1);
    assert_eq!(outbound(&ch), 2);
}

#[test]
fn zero_explicit_flush_after_flushes_is_refused() {
    let e = FlushConsolidationHandler::new(0, false).unwrap_err();
    assert_eq!(e.code(), "ERR_INVALID_ARG_VALUE");
    assert!(e.to_string().contains("explicit_flush_after_flushes"));
}
