//! [`WebSocketClientProtocolHandler`] (Netty's handler of the same name): goes after
//! `HttpClientCodec` on a client channel. Once the channel is active (at once if it already
//! is when the handler is added) it writes the upgrade request
//! (`netloop_ws::client_handshake`); the answer is checked, and accepted, a
//! `netloop_ws::WebSocketHandler` in client role (outbound frames masked, inbound frames
//! unmasked) takes this handler's place and a [`ClientHandshakeComplete`] user event goes to
//! the next handler. With `WsConfig::permessage_deflate` set ([`WebSocketClientProtocolHandler::config`]),
//! the request offers permessage-deflate and the handler that takes over compresses and
//! inflates with the parameters the server answered (none if it declined).
//! `HttpClientCodec` then leaves the pipeline (as Netty's client handshaker removes it): the
//! bytes the server sent right after its `101` reach the new handler (the codec's removal
//! fires them, after the event), and only the frame handling stays. Refused (another status, a wrong
//! `Sec-WebSocket-Accept`, a subprotocol or extension not offered) or cut short (the
//! connection ends first): a `ClientHandshakeError` in `exception_caught` (`ERR_WS_HANDSHAKE_*`)
//! and the channel closes.
//!
//! Ground rules: loop thread only, like every handler; no borrow held while an event is
//! fired.

use std::cell::Cell;

use netloop_http::{HeaderList, HttpClientCodec, HttpClientRequest, HttpClientResponse};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, ChannelPipeline, HandlerResult, Message,
};
use netloop_ws::client_handshake::{ClientHandshake, ClientHandshakeError};
use netloop_ws::{Role, WebSocketHandler, WsConfig};

/// The user event fired after the client's handshake succeeded.
#[derive(Debug, Clone)]
pub struct ClientHandshakeComplete {
    /// The request target sent (path and query).
    pub target: String,
    /// The answer's header fields.
    pub headers: HeaderList,
    /// The subprotocol the server chose, if any.
    pub protocol: Option<String>,
}

/// Sends the client handshake, checks the answer, then puts a `WebSocketHandler` in its place.
#[derive(Debug)]
pub struct WebSocketClientProtocolHandler {
    target: String,
    host: Option<String>,
    headers: Vec<(String, String)>,
    handshake: ClientHandshake,
    config: WsConfig,
    /// The request went.
    sent: Cell<bool>,
    /// The answer came (accepted or not).
    done: Cell<bool>,
}

impl WebSocketClientProtocolHandler {
    /// A handshake for `target` (`/path?query`), offering no subprotocol, with the client
    /// defaults of [`WsConfig`] (role client, no pause while unwritable).
    pub fn new(target: impl Into<String>) -> Self {
        WebSocketClientProtocolHandler {
            target: target.into(),
            host: None,
            headers: Vec::new(),
            handshake: ClientHandshake::new(Vec::new()),
            config: WsConfig {
                role: Role::Client,
                pause_while_unwritable: false,
                ..WsConfig::default()
            },
            sent: Cell::new(false),
            done: Cell::new(false),
        }
    }

    /// The `Host` field (else the codec's configured host, if any).
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = Some(host.into());
        self
    }

    /// The subprotocols offered, in order of preference.
    pub fn subprotocols(mut self, protocols: Vec<String>) -> Self {
        self.handshake =
            ClientHandshake::new(protocols).with_deflate(self.config.permessage_deflate.clone());
        self
    }

    /// The handshake itself (a fixed key in tests); its permessage-deflate offer follows
    /// the configuration's.
    pub fn handshake(mut self, handshake: ClientHandshake) -> Self {
        self.handshake = handshake.with_deflate(self.config.permessage_deflate.clone());
        self
    }

    /// An extra request field (`Origin`, `Authorization`, ...).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The connection's configuration after the handshake; its role is forced to client
    /// and `pause_while_unwritable` off (a client must read the replies it waits for). Its
    /// `permessage_deflate` (`Some`) makes the request offer permessage-deflate
    /// (`netloop_ws::extension::client_offer`).
    pub fn config(mut self, config: WsConfig) -> Self {
        self.config = WsConfig {
            role: Role::Client,
            pause_while_unwritable: false,
            ..config
        };
        self.handshake = self
            .handshake
            .with_deflate(self.config.permessage_deflate.clone());
        self
    }

    /// The request, once.
    fn send_request(&self, ctx: &ChannelHandlerContext) {
        if self.sent.replace(true) {
            return;
        }
        let mut req = HttpClientRequest::new("GET", self.target.clone());
        if let Some(host) = &self.host {
            req = req.header("Host", host.clone());
        }
        for (name, value) in self.handshake.request_headers() {
            req = req.header(name, value);
        }
        for (name, value) in &self.headers {
            req = req.header(name.clone(), value.clone());
        }
        ctx.write_and_flush(Message::user(req));
    }

    fn fail(&self, ctx: &ChannelHandlerContext, error: ClientHandshakeError) {
        self.done.set(true);
        ctx.fire_exception_caught(error.into());
        ctx.close();
    }

    fn on_response(&self, ctx: &ChannelHandlerContext, res: HttpClientResponse) -> HandlerResult {
        if res.is_informational() || self.done.get() {
            return Ok(());
        }
        let fields: Vec<(&[u8], &[u8])> = res.headers.iter().collect();
        let checked = match self.handshake.check_response(res.status, &fields) {
            Ok(_) if !res.upgraded => Err(ClientHandshakeError::NotUpgrade),
            other => other,
        };
        let accepted = match checked {
            Ok(accepted) => accepted,
            Err(error) => {
                self.fail(ctx, error);
                return Ok(());
            }
        };
        self.done.set(true);
        let ws = WebSocketHandler::with_deflate(self.config.clone(), accepted.deflate)?;
        let name = ctx.name().to_string();
        ctx.pipeline().replace(&name, &name, ws)?;
        let event = ClientHandshakeComplete {
            target: self.target.clone(),
            headers: res.headers.to_list(),
            protocol: accepted.protocol,
        };
        let pipeline = ctx.pipeline();
        if let Some(ws_ctx) = pipeline.context(&name) {
            ws_ctx.fire_user_event(event);
        }
        // The codec leaves now (as Netty's client handshaker removes `HttpClientCodec`): its
        // removal fires the bytes read behind the `101`, which the new handler decodes, after
        // the event above; what comes later goes straight to the frames.
        if let Some(codec) = codec_name(&pipeline) {
            pipeline.remove(&codec)?;
        }
        Ok(())
    }
}

/// The name of the pipeline's `HttpClientCodec`, if it has one.
fn codec_name(pipeline: &ChannelPipeline) -> Option<String> {
    pipeline.names().into_iter().find(|name| {
        pipeline
            .get(name)
            .is_some_and(|h| h.as_any().is_some_and(|a| a.is::<HttpClientCodec>()))
    })
}

impl ChannelHandler for WebSocketClientProtocolHandler {
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

    fn handler_added(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if ctx.try_channel().is_some_and(|ch| ch.is_active()) {
            self.send_request(ctx);
        }
        Ok(())
    }

    fn channel_active(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.fire_channel_active();
        self.send_request(ctx);
        Ok(())
    }

    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        match msg.downcast::<HttpClientResponse>() {
            Ok(res) => self.on_response(ctx, res),
            Err(other) => {
                ctx.fire_channel_read(other);
                Ok(())
            }
        }
    }

    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if !self.done.replace(true) {
            ctx.fire_exception_caught(ClientHandshakeError::Aborted.into());
        }
        ctx.fire_channel_inactive();
        Ok(())
    }
}
