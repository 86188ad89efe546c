//! The RESP decoder's pause while the channel is not writable (`pause_while_unwritable`): no
//! value fired and no reading until the channel drains, and a paused decoder that leaves the
//! pipeline hands its bytes and reading over.

use std::rc::Rc;

use netloop_resp::bytes::Bytes;
use netloop_resp::{RespConfig, RespDecoderHandler, RespValue};
use netloop_transport::EmbeddedChannel;

use super::recorder::{inbound, Ev, Recorder};

/// decoder (pausing while unwritable when `pause`) → recorder, and a write of 100 KiB that
/// is not flushed yet: the channel is past its high water mark (64 KiB).
fn unwritable_channel(pause: bool) -> (EmbeddedChannel, Rc<RespDecoderHandler>, Rc<Recorder>) {
    let d = Rc::new(
        RespDecoderHandler::new(RespConfig::default())
            .expect("valid config")
            .pause_while_unwritable(pause),
    );
    let rec = Rc::new(Recorder::default());
    let ch = EmbeddedChannel::new(vec![("resp", d.clone()), ("recorder", rec.clone())]);
    inbound(&ch, b"PING\r\n");
    assert_eq!(rec.take_values(), [RespValue::command(["PING"])]);
    ch.channel().write(Bytes::from(vec![b'x'; 100 * 1024]));
    assert!(!ch.channel().is_writable());
    (ch, d, rec)
}

#[test]
fn pausing_while_unwritable_fires_no_value_and_stops_reading_until_the_channel_drains() {
    let (ch, d, rec) = unwritable_channel(true);
    inbound(&ch, b"PING\r\nECHO a\r\n");
    assert_eq!(rec.take_values(), [], "nothing decoded while unwritable");
    assert!(d.is_paused());
    assert_eq!(d.buffered_len(), 14, "the bytes wait in the decoder");
    assert!(!ch.channel().is_auto_read(), "and reading stops");
    inbound(&ch, b"PING\r\n");
    assert_eq!(
        rec.take_values(),
        [],
        "bytes already in flight are kept, not decoded"
    );
    ch.channel().flush();
    assert!(ch.channel().is_writable());
    ch.run_pending_tasks();
    assert_eq!(
        rec.take(),
        [
            Ev::Value(RespValue::command(["PING"])),
            Ev::Value(RespValue::command(["ECHO", "a"])),
            Ev::Value(RespValue::command(["PING"])),
            Ev::ReadComplete
        ],
        "writable again: what waited is decoded, in order"
    );
    assert!(!d.is_paused());
    assert!(ch.channel().is_auto_read(), "and reading resumes");
}

#[test]
fn without_the_option_values_keep_coming_while_the_channel_is_not_writable() {
    let (ch, d, rec) = unwritable_channel(false);
    inbound(&ch, b"PING\r\nECHO a\r\n");
    assert_eq!(rec.take_values().len(), 2);
    assert!(!d.is_paused());
    assert!(ch.channel().is_auto_read());
}

#[test]
fn a_paused_decoder_that_leaves_the_pipeline_hands_over_its_bytes_and_reading() {
    let (ch, _, rec) = unwritable_channel(true);
    inbound(&ch, b"PING\r\n");
    assert_eq!(rec.take(), [Ev::ReadComplete], "held");
    assert!(!ch.channel().is_auto_read());
    ch.pipeline().remove("resp").expect("removed");
    assert_eq!(
        rec.take(),
        [Ev::Bytes(b"PING\r\n".to_vec()), Ev::ReadComplete]
    );
    assert!(ch.channel().is_auto_read());
}
