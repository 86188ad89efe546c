//! HTTP/1.1 "Hello, World!" on the netloop core alone (no JS): the same pipeline as
//! `examples/http-hello.ts` with its native codec (a reader-idle timeout, `HttpServerCodec`,
//! a handler that answers each request with a frozen response and flushes once per read
//! batch), on one loop that accepts and serves. The benchmarks run it beside the TS example
//! (`benches/node/channels-vs-net.mjs`): the difference is what the JS handler and its bridge
//! cost.
//!
//! `cargo run --release -p netloop-http --example http_hello -- [addr]` (default
//! 127.0.0.1:8080); prints `listening PORT` once bound. `curl http://127.0.0.1:8080/` and
//! `wrk -c 50 http://127.0.0.1:8080/` work.

use std::cell::Cell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use netloop_codec::{IdleStateEvent, IdleStateHandler};
use netloop_http::{
    boxed_frozen, recycle_request, FrozenResponse, HttpContent, HttpRequest, HttpResponse,
    HttpServerCodec, HttpServerConfig,
};
use netloop_transport::eventloop::{EventLoopGroup, LoopConfig};
use netloop_transport::*;

thread_local! {
    /// The two answers, encoded once per thread (a frozen response belongs to its thread).
    static ANSWERS: Rc<Answers> = Rc::new(Answers::new());
}

/// The answer to a request that keeps the connection alive, and to one that does not.
struct Answers {
    keep: FrozenResponse,
    close: FrozenResponse,
}

impl Answers {
    fn new() -> Self {
        let hello = |keep: bool| {
            let r = HttpResponse::new(200).header("Content-Type", "text/plain; charset=utf-8");
            let r = if keep {
                r.header("Connection", "keep-alive")
            } else {
                r
            };
            r.body("Hello, World!").freeze().expect("a valid response")
        };
        Answers {
            keep: hello(true),
            close: hello(false),
        }
    }
}

/// Answers every request (after the last piece of a streamed body); flushes once per read
/// batch; closes a connection idle for the reader period.
struct Hello {
    answers: Rc<Answers>,
    /// `keep_alive` of a request whose body is still streaming in.
    streaming_keep: Cell<bool>,
}

impl Hello {
    fn answer(&self, keep: bool) -> Message {
        let a = &self.answers;
        let frozen = if keep {
            a.keep.clone()
        } else {
            a.close.clone()
        };
        // In a box the codec keeps when it takes the response apart: no allocation a write.
        Message::User(boxed_frozen(frozen))
    }
}

impl ChannelHandler for Hello {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let Message::User(value) = msg else {
            return Ok(());
        };
        match value.downcast::<HttpRequest>() {
            Ok(req) => {
                if req.streaming {
                    self.streaming_keep.set(req.keep_alive);
                } else {
                    ctx.write(self.answer(req.keep_alive));
                }
                // Its box goes back to the codec for the next request: no allocation a read.
                recycle_request(req);
            }
            Err(other) => {
                if other.downcast_ref::<HttpContent>().is_some_and(|c| c.last) {
                    ctx.write(self.answer(self.streaming_keep.get()));
                }
            }
        }
        Ok(())
    }

    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.flush();
        Ok(())
    }

    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, event: UserEvent) -> HandlerResult {
        if event.is::<IdleStateEvent>() {
            ctx.close();
        } else {
            ctx.fire_user_event_triggered(event);
        }
        Ok(())
    }

    fn exception_caught(
        &self,
        ctx: &ChannelHandlerContext,
        error: TransportError,
    ) -> HandlerResult {
        // HPE_* and ERR_HTTP_*: a request the codec refused; it answered and closes. A peer
        // that resets or leaves is no news (a load tool resets every connection it ends), and
        // a line each would cost more than the connection did.
        let code = error.code();
        if code.starts_with("HPE_") || code.starts_with("ERR_HTTP_") {
            return Ok(());
        }
        if !matches!(code, "ECONNRESET" | "EPIPE" | "ERR_CHANNEL_CLOSED") {
            eprintln!("http_hello: {code}: {error}");
        }
        ctx.close();
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".into())
        .parse()?;
    let group = EventLoopGroup::new(
        1,
        LoopConfig {
            name: "http".into(),
            ..LoopConfig::default()
        },
    )?;
    let server = ServerBootstrap::new()
        .group(group.clone(), group.clone())
        .option(ChannelOption::SoBacklog(1024))
        .child_option(ChannelOption::TcpNoDelay(true))
        .child_handler(|ch| {
            let idle = Duration::from_secs(60);
            ch.pipeline()
                .add_last(
                    "idle",
                    IdleStateHandler::with_periods(idle, Duration::ZERO, Duration::ZERO),
                )?
                .add_last("http", HttpServerCodec::new(HttpServerConfig::default())?)?
                .add_last(
                    "hello",
                    Hello {
                        answers: ANSWERS.with(Rc::clone),
                        streaming_keep: Cell::new(true),
                    },
                )?;
            Ok(())
        })
        .bind(addr)
        .wait()?;
    println!(
        "listening {}",
        server.local_addr().map_or(addr.port(), |a| a.port())
    );
    server.close_future().wait()?;
    group
        .shutdown_gracefully(Duration::ZERO, Duration::from_secs(2))
        .wait()?;
    Ok(())
}
