//! [`Start`]: where an op's operation enters its channel's pipeline, its JS context or (for
//! ops JS made on the channel itself) the tail, with the operations the ops need. One place
//! for the choice every op made with a `match` of its own.

use netloop_transport::{
    ChannelHandlerContext, ChannelPipeline, ChannelPromise, Message, WrittenNow,
};

use crate::hub::From;

/// An op's JS context, or the tail of the pipeline when it names none.
#[derive(Clone, Copy)]
pub(crate) struct Start<'a> {
    pub(crate) ctx: Option<&'a ChannelHandlerContext>,
    pub(crate) pipeline: &'a ChannelPipeline,
}

impl Start<'_> {
    pub(crate) fn write_with(self, msg: impl Into<Message>, promise: ChannelPromise) {
        match self.ctx {
            Some(x) => x.write_with(msg, promise),
            None => self.pipeline.write_with(msg, promise),
        }
    }

    pub(crate) fn flush(self) {
        match self.ctx {
            Some(x) => x.flush(),
            None => self.pipeline.flush(),
        }
    }

    pub(crate) fn read(self) {
        match self.ctx {
            Some(x) => x.read(),
            None => self.pipeline.read(),
        }
    }

    pub(crate) fn close_with(self, promise: ChannelPromise) {
        match self.ctx {
            Some(x) => x.close_with(promise),
            None => self.pipeline.close_with(promise),
        }
    }

    /// A write and its flush, together (one call of a handler that takes both in one).
    pub(crate) fn write_and_flush_with(self, msg: impl Into<Message>, promise: ChannelPromise) {
        match self.ctx {
            Some(x) => x.write_and_flush_with(msg, promise),
            None => self.pipeline.write_and_flush_with(msg, promise),
        }
    }

    /// `write_and_flush_now`: `data` straight to the socket when nothing stands between.
    pub(crate) fn write_and_flush_now(self, data: &[u8], promise: ChannelPromise) -> WrittenNow {
        match self.ctx {
            Some(x) => x.write_and_flush_now(data, promise),
            None => self.pipeline.write_and_flush_now(data, promise),
        }
    }

    /// Where an inbound event JS fired from here enters (the head for the channel's own).
    pub(crate) fn inbound(self) -> From {
        match self.ctx {
            Some(x) => From::Ctx(x.clone()),
            None => From::Head(self.pipeline.clone()),
        }
    }
}
