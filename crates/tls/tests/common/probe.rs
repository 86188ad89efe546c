//! A handler that records what reaches it behind an `SslHandler`.
#![allow(dead_code)]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use netloop_tls::{SslCloseCompletionEvent, SslHandshakeCompletionEvent, TlsSession};
use netloop_transport::*;

#[derive(Default)]
pub struct Log {
    pub data: Vec<u8>,
    pub events: Vec<String>,
    pub session: Option<Arc<TlsSession>>,
}

pub type Shared = Rc<RefCell<Log>>;

impl Log {
    pub fn has(&self, e: &str) -> bool {
        self.events.iter().any(|x| x == e)
    }
    /// Why the handshake failed (the error's message).
    pub fn reason(&self) -> Option<&str> {
        self.events
            .iter()
            .find(|e| e.starts_with("reason "))
            .map(|s| &s[7..])
    }
    pub fn handshake(&self) -> Option<&str> {
        self.events
            .iter()
            .find(|e| e.starts_with("handshake "))
            .map(|s| &s[10..])
    }
}

pub struct Probe {
    pub log: Shared,
    pub echo: bool,
}

impl ChannelHandler for Probe {
    fn channel_active(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.log.borrow_mut().events.push("active".into());
        ctx.fire_channel_active();
        Ok(())
    }
    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.log.borrow_mut().events.push("inactive".into());
        ctx.fire_channel_inactive();
        Ok(())
    }
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let b = msg
            .into_bytes()
            .map_err(|_| TransportError::UnsupportedMessage("test"))?;
        self.log.borrow_mut().data.extend_from_slice(&b);
        if self.echo {
            ctx.write(b);
        }
        Ok(())
    }
    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        if self.echo {
            ctx.flush();
        }
        Ok(())
    }
    fn user_event_triggered(&self, _: &ChannelHandlerContext, e: UserEvent) -> HandlerResult {
        let mut log = self.log.borrow_mut();
        if let Some(SslHandshakeCompletionEvent(r)) =
            e.downcast_ref::<SslHandshakeCompletionEvent>()
        {
            match r {
                Ok(s) => {
                    log.events.push("handshake ok".into());
                    log.session = Some(s.clone());
                }
                Err(err) => {
                    log.events.push(format!("handshake {}", err.code()));
                    log.events.push(format!("reason {err}"));
                }
            }
        } else if e.is::<SslCloseCompletionEvent>() {
            log.events.push("close_notify".into());
        }
        Ok(())
    }
    fn channel_writability_changed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        let w = ctx.channel().is_writable();
        self.log.borrow_mut().events.push(format!("writable={w}"));
        Ok(())
    }
    fn exception_caught(&self, _: &ChannelHandlerContext, e: TransportError) -> HandlerResult {
        self.log
            .borrow_mut()
            .events
            .push(format!("exception {}", e.code()));
        Ok(())
    }
}

/// Puts `tls` first in `ch`'s pipeline and a non-echoing [`Probe`] last; the probe's log.
pub fn tls_and_probe(ch: &Channel, tls: netloop_tls::SslHandler) -> Shared {
    let log: Shared = Rc::new(RefCell::new(Log::default()));
    ch.pipeline().add_first("tls", tls).unwrap();
    let probe = Probe {
        log: log.clone(),
        echo: false,
    };
    ch.pipeline().add_last("probe", probe).unwrap();
    log
}
