//! The close handshake: the peer's close answered and the connection closed; our close (a
//! close frame written, or `close()`) waiting for the peer's answer, with a timeout.

use crate::support;

use std::time::Duration;

use netloop_ws::frame::Opcode;
use netloop_ws::{CloseCode, CloseFrame, WebSocketFrame, WsConfig};
use support::*;

#[test]
fn the_peers_close_is_answered_with_its_code_then_the_connection_closes() {
    let ws = Ws::server();
    let mut input = close(1001, "bye");
    input.extend_from_slice(&text("after close"));
    ws.feed(&input);
    assert_eq!(
        ws.received(),
        [WebSocketFrame::Close(CloseFrame::new(
            CloseCode::GOING_AWAY,
            "bye"
        ))]
    );
    assert_eq!(ws.sent_close(), Some(CloseCode::GOING_AWAY));
    assert!(!ws.is_open());
    assert_eq!(ws.error(), None);
}

#[test]
fn an_empty_close_is_answered_with_an_empty_close() {
    let ws = Ws::server();
    ws.feed(&client(true, Opcode::Close, b""));
    let sent = ws.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].opcode, sent[0].payload.len()), (Opcode::Close, 0));
    assert!(!ws.is_open());
}

#[test]
fn close_from_the_application_sends_1000_then_closes_without_waiting() {
    let ws = Ws::server();
    let done = ws.ch.channel().close();
    ws.ch.run_pending_tasks();
    assert_eq!(ws.sent_close(), Some(CloseCode::NORMAL));
    assert!(!ws.is_open());
    assert!(done.is_success());
}

#[test]
fn a_close_frame_from_the_application_waits_for_the_answer() {
    let ws = Ws::server();
    ws.send(WebSocketFrame::Close(CloseFrame::new(
        CloseCode::NORMAL,
        "",
    )));
    assert_eq!(ws.sent_close(), Some(CloseCode::NORMAL));
    assert!(ws.is_open(), "waits for the peer's close");
    ws.feed(&text("still delivered"));
    assert_eq!(ws.received(), [WebSocketFrame::text("still delivered")]);
    ws.feed(&close(1000, ""));
    assert!(!ws.is_open());
    assert!(ws.sent().is_empty(), "our close is not sent twice");
}

#[test]
fn a_peer_that_never_answers_our_close_is_cut_off_after_the_close_timeout() {
    let ws = Ws::new(WsConfig {
        close_timeout: Duration::from_secs(3),
        ..WsConfig::default()
    });
    ws.send(WebSocketFrame::Close(CloseFrame::new(
        CloseCode(4000),
        "done",
    )));
    assert_eq!(ws.sent_close(), Some(CloseCode(4000)));
    ws.ch.advance_time(Duration::from_millis(2900));
    assert!(ws.is_open());
    ws.ch.advance_time(Duration::from_millis(200));
    assert!(!ws.is_open(), "closed at the timeout");
}

#[test]
fn data_written_after_our_close_fails_and_is_not_sent() {
    let ws = Ws::server();
    ws.send(WebSocketFrame::Close(CloseFrame::new(
        CloseCode::NORMAL,
        "",
    )));
    let late = ws.ch.channel().write_future(WebSocketFrame::text("late"));
    ws.ch.channel().flush();
    ws.ch.run_pending_tasks();
    assert_eq!(
        late.result()
            .and_then(Result::err)
            .map(|e| e.code().to_string())
            .as_deref(),
        Some("ERR_CHANNEL_CLOSED")
    );
    let sent = ws.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].opcode, Opcode::Close);
}

#[test]
fn a_close_code_that_may_not_be_sent_is_replaced_with_1000() {
    let ws = Ws::server();
    ws.send(WebSocketFrame::Close(CloseFrame::new(
        CloseCode::ABNORMAL,
        "",
    )));
    assert_eq!(ws.sent_close(), Some(CloseCode::NORMAL));
}

#[test]
fn end_of_input_without_a_close_drops_a_partial_frame_and_closes() {
    let ws = Ws::server();
    let frame = raw(0x82, 126, &[1, 0], &[7; 256]);
    ws.feed(&frame[..20]);
    assert!(ws.is_open());
    ws.ch
        .pipeline()
        .fire_user_event_triggered(Box::new(netloop_transport::ChannelInputShutdown));
    ws.ch.run_pending_tasks();
    assert!(!ws.is_open());
    assert!(ws.received().is_empty());
    assert!(
        ws.sent().is_empty(),
        "no close frame: the peer is gone (1006)"
    );
}
