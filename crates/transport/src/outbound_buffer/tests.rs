//! The outbound buffer's unit tests: water marks, promises handed back, partial writes.

use super::*;
use bytes::Bytes;

fn wm(low: usize, high: usize) -> WaterMark {
    WaterMark::new(low, high).unwrap()
}

fn msg(n: usize) -> Message {
    Message::Bytes(Bytes::from(vec![7u8; n]))
}

#[test]
fn crossing_high_water_mark_makes_unwritable_once() {
    let mut b = OutboundBuffer::new(wm(4, 8));
    assert_eq!(
        b.add_message(msg(8), 8, ChannelPromise::void()),
        WritabilityChange::None
    );
    assert!(b.is_writable());
    assert_eq!(
        b.add_message(msg(1), 1, ChannelPromise::void()),
        WritabilityChange::BecameUnwritable
    );
    assert_eq!(
        b.add_message(msg(1), 1, ChannelPromise::void()),
        WritabilityChange::None
    );
    assert!(!b.is_writable());
    assert_eq!(b.bytes_before_unwritable(), 0);
}

#[test]
fn written_entries_hand_back_only_promises_somebody_listens_to() {
    let mut b = OutboundBuffer::new(wm(4, 8));
    let real = ChannelPromise::new();
    b.add_message(msg(2), 2, ChannelPromise::void());
    b.add_message(msg(2), 2, real.clone());
    b.add_message(msg(2), 2, ChannelPromise::void());
    b.add_flush();
    let mut done = Vec::new();
    b.remove_bytes(6, &mut done);
    assert!(b.is_empty());
    assert_eq!(done.len(), 1, "void promises are not collected");
    assert!(!done[0].is_void());
}

#[test]
fn the_first_time_it_empties_the_buffer_frees_its_slots_and_keeps_them_afterwards() {
    let mut b = OutboundBuffer::new(WaterMark::default());
    let mut done = Vec::new();
    b.add_message(msg(3), 3, ChannelPromise::void());
    b.add_flush();
    b.remove_bytes(2, &mut done);
    assert!(b.entries.capacity() > 0, "not empty yet");
    b.remove_bytes(1, &mut done);
    assert_eq!(
        b.entries.capacity(),
        0,
        "a connection that wrote once keeps no slots"
    );
    for _ in 0..2 {
        b.add_message(msg(3), 3, ChannelPromise::void());
        b.add_flush();
        b.remove_bytes(3, &mut done);
        assert!(b.is_empty());
        assert!(b.entries.capacity() > 0, "one that writes again keeps them");
    }
}

#[test]
fn draining_below_low_water_mark_makes_writable_once() {
    let mut b = OutboundBuffer::new(wm(4, 8));
    b.add_message(msg(10), 10, ChannelPromise::new());
    b.add_flush();
    let mut done = Vec::new();
    assert_eq!(
        b.remove_bytes(6, &mut done),
        WritabilityChange::None,
        "4 pending is not below low 4"
    );
    assert_eq!(
        b.remove_bytes(1, &mut done),
        WritabilityChange::BecameWritable
    );
    assert_eq!(b.remove_bytes(3, &mut done), WritabilityChange::None);
    assert_eq!(done.len(), 1);
    assert!(b.is_empty());
}

#[test]
fn gather_covers_only_flushed_entries() {
    let mut b = OutboundBuffer::new(WaterMark::default());
    b.add_message(msg(3), 3, ChannelPromise::void());
    b.add_message(msg(5), 5, ChannelPromise::void());
    b.add_flush();
    b.add_message(msg(7), 7, ChannelPromise::void());
    let mut iov = [IoSlice::new(&[]); 8];
    assert_eq!(b.gather(&mut iov), (2, 8));
    assert_eq!(b.flushed_len(), 2);
    assert_eq!(b.pending_bytes(), 15);
}

#[test]
fn partial_write_advances_the_front_entry_and_completes_whole_ones() {
    let mut b = OutboundBuffer::new(WaterMark::default());
    let p1 = ChannelPromise::new();
    let p2 = ChannelPromise::new();
    b.add_message(Message::Bytes(Bytes::from_static(b"abc")), 3, p1.clone());
    b.add_message(Message::Bytes(Bytes::from_static(b"defgh")), 5, p2.clone());
    b.add_flush();
    let mut done = Vec::new();
    b.remove_bytes(5, &mut done);
    assert_eq!(done.len(), 1);
    let mut iov = [IoSlice::new(&[]); 4];
    let (n, len) = b.gather(&mut iov);
    assert_eq!((n, len), (1, 3));
    assert_eq!(&*iov[0], b"fgh");
    assert_eq!(b.pending_bytes(), 3);
}

#[test]
fn take_all_returns_flushed_then_unflushed_promises() {
    let mut b = OutboundBuffer::new(WaterMark::default());
    b.add_message(msg(1), 1, ChannelPromise::new());
    b.add_flush();
    b.add_message(msg(1), 1, ChannelPromise::new());
    b.add_message(msg(1), 1, ChannelPromise::new());
    let (f, u) = b.take_all();
    assert_eq!((f.len(), u.len()), (1, 2));
    assert!(b.is_empty());
    assert_eq!(b.pending_bytes(), 0);
}
