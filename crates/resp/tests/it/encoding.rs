//! The RESP encoder in a pipeline, on `EmbeddedChannel`s: values written as RESP, bytes passed
//! through, large payloads without a copy, and a small server of decoder, handler and encoder.

use std::rc::Rc;

use netloop_resp::bytes::{Bytes, BytesMut};
use netloop_resp::{encode, RespConfig, RespEncoder, RespError, RespValue, GATHER_THRESHOLD};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, EmbeddedChannel, HandlerResult, Message, TransportError,
};

use super::recorder::{decoder, inbound};

#[test]
fn the_encoder_writes_values_as_resp_and_passes_bytes_through() {
    let ch = EmbeddedChannel::new(vec![("encoder", Rc::new(RespEncoder::new()))]);
    ch.write_outbound(RespValue::command(["GET", "k"]));
    let mut raw = BytesMut::new();
    encode::write_integer(&mut raw, 42);
    ch.write_outbound(raw.freeze());
    ch.write_outbound(Message::user(5u32));
    let first = ch.read_outbound().unwrap();
    assert_eq!(first.as_bytes().unwrap(), "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    assert_eq!(ch.read_outbound().unwrap().as_bytes().unwrap(), ":42\r\n");
    assert_eq!(ch.read_outbound().unwrap().downcast::<u32>().ok(), Some(5));
}

#[test]
fn a_large_bulk_payload_goes_out_without_a_copy_and_the_promise_completes() {
    let ch = EmbeddedChannel::new(vec![("encoder", Rc::new(RespEncoder::new()))]);
    let payload = Bytes::from(vec![7u8; GATHER_THRESHOLD]);
    let future = ch.channel().write_future(RespValue::bulk(payload.clone()));
    ch.channel().flush();
    ch.run_pending_tasks();
    let parts: Vec<Bytes> = std::iter::from_fn(|| ch.read_outbound())
        .map(|m| m.into_bytes().unwrap())
        .collect();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[0], "$4096\r\n");
    assert_eq!(parts[1].as_ptr(), payload.as_ptr(), "payload not copied");
    assert_eq!(parts[2], "\r\n");
    assert!(matches!(future.result(), Some(Ok(()))));
}

/// A tiny server: PING → PONG, anything else → the command echoed as an array; a protocol
/// error → Redis's error reply, then close.
struct Server;

impl ChannelHandler for Server {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let Ok(command) = msg.downcast::<RespValue>() else {
            return Ok(());
        };
        let args = command.command_args().unwrap_or_default();
        if args
            .first()
            .is_some_and(|a| a.eq_ignore_ascii_case(b"PING"))
        {
            ctx.write(RespValue::simple("PONG"));
        } else {
            ctx.write(command);
        }
        Ok(())
    }
    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.flush();
        Ok(())
    }
    fn exception_caught(
        &self,
        ctx: &ChannelHandlerContext,
        error: TransportError,
    ) -> HandlerResult {
        if let Some(resp) = error
            .foreign_source()
            .and_then(|e| e.downcast_ref::<RespError>())
        {
            let mut reply = BytesMut::new();
            encode::write_error(&mut reply, resp.reply_text().as_bytes());
            ctx.write_and_flush(reply.freeze());
            ctx.close();
        }
        Ok(())
    }
}

#[test]
fn a_server_pipeline_answers_pipelined_commands_and_closes_on_a_protocol_error() {
    let ch = EmbeddedChannel::new(vec![
        ("encoder", Rc::new(RespEncoder::new())),
        ("decoder", decoder(RespConfig::default())),
        ("server", Rc::new(Server)),
    ]);
    inbound(&ch, b"PING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\nping\r\n");
    let mut out = Vec::new();
    while let Some(m) = ch.read_outbound() {
        out.extend_from_slice(m.as_bytes().unwrap());
    }
    assert_eq!(out, b"+PONG\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n+PONG\r\n");
    inbound(&ch, b"*1\r\n$-5\r\n");
    let reply = ch.read_outbound().unwrap();
    assert_eq!(
        reply.as_bytes().unwrap(),
        "-ERR Protocol error: invalid bulk length\r\n"
    );
    assert!(
        !ch.channel().is_active(),
        "the server closed the connection"
    );
}
