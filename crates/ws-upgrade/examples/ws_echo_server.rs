//! WebSocket echo server on the netloop core, natively (no JS): each connection's pipeline is
//! `HttpServerCodec`, then `WebSocketServerProtocolHandler` (the handshake, then a
//! `WebSocketHandler` in its place), then `WebSocketEchoHandler`. Plain HTTP requests are
//! answered `426 Upgrade Required`; the subprotocol `chat` is accepted when offered. One
//! event loop both accepts and serves.
//!
//! `cargo run --release -p netloop-ws-upgrade --example ws_echo_server -- [ADDR]`
//! (ADDR default 127.0.0.1:0: the kernel picks the port). Prints `listening on ADDR` once
//! it accepts. crates/ws-upgrade/tests/it/peers.rs runs it in-process against real clients.

use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use netloop_http::{HttpRequest, HttpResponse, HttpServerCodec, HttpServerConfig};
use netloop_transport::eventloop::{EventLoopGroup, LoopConfig};
use netloop_transport::*;
use netloop_ws::handshake::HandshakeOptions;
use netloop_ws::WebSocketEchoHandler;
use netloop_ws_upgrade::WebSocketServerProtocolHandler;

/// Answers requests that are not WebSocket upgrades; drops protocol errors quietly (the
/// WebSocket handler already closed the connection with the error's code).
struct Fallback;

impl ChannelHandler for Fallback {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        if let Ok(req) = msg.downcast::<HttpRequest>() {
            let res = HttpResponse::new(426)
                .header("Upgrade", "websocket")
                .header("Content-Type", "text/plain")
                .body("this server speaks WebSocket\n")
                .for_request(req.id);
            ctx.write_and_flush(Message::user(res));
        }
        Ok(())
    }

    fn exception_caught(&self, _: &ChannelHandlerContext, _: TransportError) -> HandlerResult {
        Ok(())
    }
}

/// A running server: its address, its channel and its loops.
pub struct Server {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The listening channel.
    pub channel: ChannelHandle,
    /// The loop group serving it.
    pub group: EventLoopGroup,
}

impl Server {
    /// Closes the listening channel and shuts the loops down.
    #[allow(dead_code)]
    pub fn stop(self) {
        let _ = self.channel.close().wait();
        let _ = self
            .group
            .shutdown_gracefully(Duration::ZERO, Duration::from_secs(2))
            .wait();
    }
}

/// Starts the echo server on `addr` (on its own loop thread).
pub fn serve(addr: SocketAddr) -> Result<Server, Box<dyn std::error::Error>> {
    let group = EventLoopGroup::new(
        1,
        LoopConfig {
            name: "ws-echo".into(),
            ..LoopConfig::default()
        },
    )?;
    let channel = ServerBootstrap::new()
        .group(group.clone(), group.clone())
        .child_option(ChannelOption::TcpNoDelay(true))
        .child_handler(|ch| {
            let http = HttpServerCodec::new(HttpServerConfig::default())
                .map_err(|e| TransportError::InvalidOption(e.to_string()))?;
            ch.pipeline().add_last("http", http)?;
            let options = HandshakeOptions {
                subprotocols: vec!["chat".into()],
                origin_check: None,
                ..HandshakeOptions::default()
            };
            let ws = WebSocketServerProtocolHandler::new("/")
                .path_prefix(true)
                .handshake_options(options);
            ch.pipeline().add_last("ws", Rc::new(ws))?;
            ch.pipeline()
                .add_last("echo", WebSocketEchoHandler::new())?;
            ch.pipeline().add_last("fallback", Fallback)?;
            Ok(())
        })
        .bind(addr)
        .wait()?;
    let addr = channel.local_addr().unwrap_or(addr);
    Ok(Server {
        addr,
        channel,
        group,
    })
}

#[allow(dead_code)]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into())
        .parse()?;
    let server = serve(addr)?;
    println!("listening on {}", server.addr);
    server.channel.close_future().wait()?;
    server.stop();
    Ok(())
}
