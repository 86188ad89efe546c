//! Test support for the handler tests: a handler that records the inbound events reaching
//! it, plus a helper to build embedded channels. Tests only.

use std::cell::RefCell;
use std::rc::Rc;

use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, ChannelInputShutdown, EmbeddedChannel, HandlerResult,
    Message, TransportError, UserEvent,
};

/// One recorded event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ev {
    Read(Vec<u8>),
    ReadUser(u32),
    ReadComplete,
    Exception(String),
    Inactive,
    Event(String),
}

pub(crate) fn read(bytes: &[u8]) -> Ev {
    Ev::Read(bytes.to_vec())
}

pub(crate) fn exception(code: &str) -> Ev {
    Ev::Exception(code.to_string())
}

type Hook = Box<dyn Fn(&ChannelHandlerContext, &Ev)>;

/// Records inbound events and passes nothing on (it is meant to be the last handler).
#[derive(Default)]
pub(crate) struct Recorder {
    log: RefCell<Vec<Ev>>,
    hook: Option<Hook>,
}

impl Recorder {
    pub(crate) fn new() -> Rc<Self> {
        Rc::new(Recorder::default())
    }

    /// A recorder that also runs `hook` after recording each event.
    pub(crate) fn with_hook(hook: impl Fn(&ChannelHandlerContext, &Ev) + 'static) -> Rc<Self> {
        Rc::new(Recorder {
            log: RefCell::default(),
            hook: Some(Box::new(hook)),
        })
    }

    /// Takes everything recorded so far.
    pub(crate) fn take(&self) -> Vec<Ev> {
        std::mem::take(&mut *self.log.borrow_mut())
    }

    /// Takes the recorded reads only.
    pub(crate) fn take_reads(&self) -> Vec<Ev> {
        self.take()
            .into_iter()
            .filter(|e| matches!(e, Ev::Read(_) | Ev::ReadUser(_)))
            .collect()
    }

    fn record(&self, ctx: &ChannelHandlerContext, ev: Ev) {
        self.log.borrow_mut().push(ev.clone());
        if let Some(hook) = &self.hook {
            hook(ctx, &ev);
        }
    }
}

impl ChannelHandler for Recorder {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let ev = match msg {
            Message::Bytes(b) => Ev::Read(b.to_vec()),
            other => Ev::ReadUser(other.downcast::<u32>().unwrap_or(u32::MAX)),
        };
        self.record(ctx, ev);
        Ok(())
    }
    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.record(ctx, Ev::ReadComplete);
        Ok(())
    }
    fn exception_caught(
        &self,
        ctx: &ChannelHandlerContext,
        error: TransportError,
    ) -> HandlerResult {
        self.record(ctx, Ev::Exception(error.code().to_string()));
        Ok(())
    }
    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.record(ctx, Ev::Inactive);
        Ok(())
    }
    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, event: UserEvent) -> HandlerResult {
        let name = if event.is::<ChannelInputShutdown>() {
            "input-shutdown".to_string()
        } else if let Some(idle) = event.downcast_ref::<crate::IdleStateEvent>() {
            format!("{idle:?}")
        } else if let Some(m) = event.downcast_ref::<crate::HAProxyMessage>() {
            let addr = |a: Option<std::net::SocketAddr>| a.map_or("-".into(), |a| a.to_string());
            format!(
                "haproxy {} {} {}",
                m.protocol.name(),
                addr(m.source_addr()),
                addr(m.destination_addr())
            )
        } else {
            "other".to_string()
        };
        self.record(ctx, Ev::Event(name));
        Ok(())
    }
}

/// An embedded channel with `handler` named "codec" then the recorder named "recorder".
pub(crate) fn channel_with(
    handler: impl ChannelHandler,
    recorder: &Rc<Recorder>,
) -> EmbeddedChannel {
    EmbeddedChannel::new(vec![
        ("codec", Rc::new(handler)),
        ("recorder", recorder.clone()),
    ])
}
