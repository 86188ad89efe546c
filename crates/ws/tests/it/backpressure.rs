//! Backpressure: while the channel is not writable, the handler decodes no new frame and stops
//! reading; once it drains, what waited is decoded in order and reading resumes.

use crate::support;

use netloop_transport::Bytes;
use netloop_ws::frame::Opcode;
use netloop_ws::{WebSocketFrame, WsConfig};
use support::*;

/// A write of 100 KiB not flushed yet: the channel is past its high water mark (64 KiB).
fn make_unwritable(ws: &Ws) {
    ws.ch.channel().write(Bytes::from(vec![b'x'; 100 * 1024]));
    assert!(!ws.ch.channel().is_writable());
}

#[test]
fn an_unwritable_channel_pauses_decoding_and_reading_until_it_drains() {
    let ws = Ws::server();
    ws.feed(&text("first"));
    assert_eq!(ws.received(), [WebSocketFrame::text("first")]);
    make_unwritable(&ws);
    let mut input = text("second");
    input.extend_from_slice(&client(true, Opcode::Ping, b"p"));
    ws.feed(&input);
    assert!(ws.received().is_empty(), "nothing decoded while unwritable");
    assert!(!ws.ch.channel().is_auto_read(), "and reading stops");
    ws.feed(&text("third"));
    assert!(ws.received().is_empty(), "bytes in flight wait too");
    ws.ch.channel().flush();
    assert!(ws.ch.channel().is_writable());
    ws.ch.run_pending_tasks();
    assert_eq!(
        ws.received(),
        [
            WebSocketFrame::text("second"),
            WebSocketFrame::text("third")
        ]
    );
    let pongs: Vec<_> = ws
        .sent()
        .into_iter()
        .filter(|f| f.opcode == Opcode::Pong)
        .collect();
    assert_eq!(pongs.len(), 1, "the ping is answered once drained");
    assert!(ws.ch.channel().is_auto_read(), "reading resumes");
}

#[test]
fn with_the_pause_off_messages_keep_coming_while_unwritable() {
    let ws = Ws::new(WsConfig {
        pause_while_unwritable: false,
        ..WsConfig::default()
    });
    make_unwritable(&ws);
    ws.feed(&text("still"));
    assert_eq!(ws.received(), [WebSocketFrame::text("still")]);
    assert!(ws.ch.channel().is_auto_read());
}

#[test]
fn a_client_may_not_pause_reading() {
    let config = WsConfig {
        role: netloop_ws::Role::Client,
        ..WsConfig::default()
    };
    assert!(config.validate().is_err());
}
