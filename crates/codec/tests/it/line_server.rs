//! The guide's example (docs/guide.md), run for real: a line server on loopback built from a
//! `ServerBootstrap`, a `LineBasedFrameDecoder` and a handler that answers each line.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use netloop_codec::{ByteToMessageDecoder, LineBasedFrameDecoder};
use netloop_transport::eventloop::{EventLoopGroup, LoopConfig};
use netloop_transport::*;

/// Answers each line (a frame without its delimiter) with the line upper-cased.
struct Shout;

impl ChannelHandler for Shout {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let line = msg
            .as_bytes()
            .map(|b| b.to_ascii_uppercase())
            .unwrap_or_default();
        let mut reply = line;
        reply.push(b'\n');
        ctx.write_and_flush(Bytes::from(reply));
        Ok(())
    }

    fn exception_caught(
        &self,
        ctx: &ChannelHandlerContext,
        error: TransportError,
    ) -> HandlerResult {
        // A line over 64 bytes: say so, and go on with the next line.
        ctx.write_and_flush(Bytes::from(format!("{}\n", error.code())));
        Ok(())
    }
}

#[test]
fn a_line_server_answers_each_line_and_reports_a_too_long_one() {
    let boss = EventLoopGroup::new(1, LoopConfig::default()).unwrap();
    let workers = EventLoopGroup::new(2, LoopConfig::default()).unwrap();
    let server = ServerBootstrap::new()
        .group(boss.clone(), workers.clone())
        .child_option(ChannelOption::TcpNoDelay(true))
        .child_handler(|ch| {
            ch.pipeline().add_last(
                "frames",
                ByteToMessageDecoder::new(LineBasedFrameDecoder::new(64)),
            )?;
            ch.pipeline().add_last("shout", Shout)?;
            Ok(())
        })
        .bind("127.0.0.1:0".parse::<SocketAddr>().unwrap())
        .wait()
        .unwrap();

    let mut client = TcpStream::connect(server.local_addr().unwrap()).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let too_long = "x".repeat(100);
    write!(client, "hello\n{too_long}\nworld\n").unwrap();
    let mut lines = BufReader::new(client).lines();
    let mut next = || lines.next().unwrap().unwrap();
    assert_eq!(next(), "HELLO");
    assert_eq!(next(), "ERR_TOO_LONG_FRAME");
    assert_eq!(next(), "WORLD");

    server.close().wait().unwrap();
    let quiet = Duration::ZERO;
    workers
        .shutdown_gracefully(quiet, Duration::from_secs(5))
        .wait()
        .unwrap();
    boss.shutdown_gracefully(quiet, Duration::from_secs(5))
        .wait()
        .unwrap();
}
