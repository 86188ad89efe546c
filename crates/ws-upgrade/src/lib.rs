//! WebSocket over netloop's HTTP codec: [`WebSocketServerProtocolHandler`] (Netty's handler
//! of the same name) goes after `HttpServerCodec`. An upgrade request for its path is checked
//! with `netloop_ws::handshake::server_handshake`; accepted, it is answered `101`, a
//! `netloop_ws::WebSocketHandler` takes this handler's place, the HTTP codec leaves the
//! pipeline (in a loop task, once it has passed on the bytes read after the request, as
//! Netty's handshaker removes `HttpServerCodec`) and a
//! [`HandshakeComplete`] user event goes to the next handler; refused, it is answered with
//! the refusal's status (400, 403, 405, 426) and the connection stays HTTP. Other requests
//! pass on to the application. With `WsConfig::permessage_deflate` set, a client's
//! permessage-deflate offer is answered in the `101` (`Sec-WebSocket-Extensions`) and the
//! `WebSocketHandler` compresses with the parameters agreed.
//!
//! ```
//! use std::rc::Rc;
//! use netloop_http::{HttpServerCodec, HttpServerConfig};
//! use netloop_transport::EmbeddedChannel;
//! use netloop_ws::WebSocketEchoHandler;
//! use netloop_ws_upgrade::WebSocketServerProtocolHandler;
//!
//! let ch = EmbeddedChannel::new(vec![
//!     ("http", Rc::new(HttpServerCodec::new(HttpServerConfig::default()).unwrap())),
//!     ("ws", Rc::new(WebSocketServerProtocolHandler::new("/"))),
//!     ("echo", Rc::new(WebSocketEchoHandler::new())),
//! ]);
//! ch.write_inbound(&b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
//!     Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"[..]);
//! let head = ch.read_outbound().unwrap();
//! let head = String::from_utf8_lossy(head.as_bytes().unwrap()).into_owned();
//! assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
//! assert!(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), "{head}");
//! ```
//!
//! The client side is [`WebSocketClientProtocolHandler`] (after `HttpClientCodec`).
//!
//! Ground rules: loop thread only, like every handler; no borrow held while an event is
//! fired.

#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

mod client;

pub use client::{ClientHandshakeComplete, WebSocketClientProtocolHandler};

use netloop_http::{HeaderList, HttpRequest, HttpResponse, HttpServerCodec};
use netloop_transport::{ChannelHandler, ChannelHandlerContext, HandlerResult, Message};
use netloop_ws::handshake::{is_websocket_request, server_handshake, HandshakeOptions};
use netloop_ws::{WebSocketHandler, WsConfig};

/// The user event fired after a handshake succeeded (Netty's `HandshakeComplete`).
#[derive(Debug, Clone)]
pub struct HandshakeComplete {
    /// The request target (path and query).
    pub target: String,
    /// The request's header fields.
    pub headers: HeaderList,
    /// The subprotocol chosen, if any.
    pub protocol: Option<String>,
}

/// Performs the server handshake, then puts a `WebSocketHandler` in its place.
#[derive(Debug)]
pub struct WebSocketServerProtocolHandler {
    path: String,
    prefix: bool,
    options: HandshakeOptions,
    config: WsConfig,
}

impl WebSocketServerProtocolHandler {
    /// Upgrades requests whose path (without the query) is `path`, with the default options.
    pub fn new(path: impl Into<String>) -> Self {
        WebSocketServerProtocolHandler {
            path: path.into(),
            prefix: false,
            options: HandshakeOptions::default(),
            config: WsConfig::default(),
        }
    }

    /// Upgrades every path starting with the path (Netty's `checkStartsWith`).
    pub fn path_prefix(mut self, on: bool) -> Self {
        self.prefix = on;
        self
    }

    /// The handshake's options (subprotocols, origin check; permessage-deflate, if set here,
    /// else as the configuration has it).
    pub fn handshake_options(mut self, options: HandshakeOptions) -> Self {
        let deflate = self.options.permessage_deflate.take();
        self.options = options;
        if self.options.permessage_deflate.is_none() {
            self.options.permessage_deflate = deflate;
        }
        self
    }

    /// The connection's configuration after the handshake; its `permessage_deflate` is what
    /// the handshake accepts (`None`: offers are declined).
    pub fn config(mut self, config: WsConfig) -> Self {
        self.options.permessage_deflate = config.permessage_deflate.clone();
        self.config = config;
        self
    }

    fn is_for_me(&self, req: &HttpRequest) -> bool {
        let target = &req.target[..];
        let path = target.split(|&b| b == b'?').next().unwrap_or(target);
        let wanted = self.path.as_bytes();
        let path_ok = if self.prefix {
            path.starts_with(wanted)
        } else {
            path == wanted
        };
        path_ok && req.upgrade && is_websocket_request(req.headers.iter())
    }

    fn upgrade(&self, ctx: &ChannelHandlerContext, req: HttpRequest) -> HandlerResult {
        let fields: Vec<(&[u8], &[u8])> = req.headers.iter().collect();
        let accepted = match server_handshake(&req.method, &fields, &self.options) {
            Ok(accepted) => accepted,
            Err(refused) => {
                let mut res = HttpResponse::new(refused.status()).for_request(req.id);
                for (name, value) in refused.headers() {
                    res = res.header(name, value);
                }
                ctx.write_and_flush(Message::user(res.body(refused.to_string())));
                return Ok(());
            }
        };
        // The codec leaves the pipeline once the 101 is out and the bytes read after the
        // request are passed on (as Netty's handshaker removes `HttpServerCodec`).
        let _ = ctx.pipeline().find_handler::<HttpServerCodec, ()>(|codec| {
            codec.leave_on_switch();
            Some(())
        });
        let mut res = HttpResponse::new(101).for_request(req.id);
        for (name, value) in accepted.response_headers() {
            res = res.header(name, value);
        }
        ctx.write_and_flush(Message::user(res));
        let ws = WebSocketHandler::with_deflate(self.config.clone(), accepted.deflate)?;
        let name = ctx.name().to_string();
        ctx.pipeline().replace(&name, &name, ws)?;
        let event = HandshakeComplete {
            target: String::from_utf8_lossy(&req.target).into_owned(),
            headers: req.headers.to_list(),
            protocol: accepted.protocol,
        };
        if let Some(ws_ctx) = ctx.pipeline().context(&name) {
            ws_ctx.fire_user_event(event);
        }
        Ok(())
    }
}

impl ChannelHandler for WebSocketServerProtocolHandler {
    // Reads, writes and flushes pass by (the default methods): the mask skips this context.
    fn takes_read(&self) -> bool {
        false
    }
    fn takes_write(&self) -> bool {
        false
    }
    fn takes_flush(&self) -> bool {
        false
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        match msg.downcast::<HttpRequest>() {
            Ok(req) if self.is_for_me(&req) => self.upgrade(ctx, req),
            Ok(req) => {
                ctx.fire_channel_read(Message::user(req));
                Ok(())
            }
            Err(other) => {
                ctx.fire_channel_read(other);
                Ok(())
            }
        }
    }
}
