//! What the RESP pipeline tests share: a recorder at the end of the pipeline that notes every
//! inbound event, and the decoder → recorder channel most of them drive.

use std::cell::RefCell;
use std::rc::Rc;

use netloop_resp::{RespCommand, RespCommands, RespConfig, RespDecoderHandler, RespValue};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, EmbeddedChannel, HandlerResult, Message, TransportError,
};

/// One inbound event reaching the end of the pipeline.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ev {
    Value(RespValue),
    /// A `RespCommand` frame, as its value.
    Command(RespValue),
    /// A `RespCommands` run, as its commands' values.
    Run(Vec<RespValue>),
    Bytes(Vec<u8>),
    Other,
    ReadComplete,
    Exception(String),
    Inactive,
}

#[derive(Default)]
pub(crate) struct Recorder(RefCell<Vec<Ev>>);

impl Recorder {
    pub(crate) fn take(&self) -> Vec<Ev> {
        std::mem::take(&mut *self.0.borrow_mut())
    }

    pub(crate) fn take_values(&self) -> Vec<RespValue> {
        self.take()
            .into_iter()
            .filter_map(|e| match e {
                Ev::Value(v) => Some(v),
                _ => None,
            })
            .collect()
    }
}

impl ChannelHandler for Recorder {
    fn channel_read(&self, _: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let ev = match msg {
            Message::Bytes(b) => Ev::Bytes(b.to_vec()),
            other => match other.downcast::<RespCommand>() {
                Ok(command) => Ev::Command(command.to_value()),
                Err(other) => match other.downcast::<RespCommands>() {
                    Ok(run) => Ev::Run(
                        run.to_commands()
                            .iter()
                            .map(RespCommand::to_value)
                            .collect(),
                    ),
                    Err(other) => other.downcast::<RespValue>().map_or(Ev::Other, Ev::Value),
                },
            },
        };
        self.0.borrow_mut().push(ev);
        Ok(())
    }
    fn channel_read_complete(&self, _: &ChannelHandlerContext) -> HandlerResult {
        self.0.borrow_mut().push(Ev::ReadComplete);
        Ok(())
    }
    fn exception_caught(&self, _: &ChannelHandlerContext, error: TransportError) -> HandlerResult {
        self.0
            .borrow_mut()
            .push(Ev::Exception(error.code().to_string()));
        Ok(())
    }
    fn channel_inactive(&self, _: &ChannelHandlerContext) -> HandlerResult {
        self.0.borrow_mut().push(Ev::Inactive);
        Ok(())
    }
}

pub(crate) fn decoder(config: RespConfig) -> Rc<RespDecoderHandler> {
    Rc::new(RespDecoderHandler::new(config).expect("valid config"))
}

/// decoder → recorder.
pub(crate) fn channel(
    config: RespConfig,
) -> (EmbeddedChannel, Rc<RespDecoderHandler>, Rc<Recorder>) {
    let d = decoder(config);
    let rec = Rc::new(Recorder::default());
    let ch = EmbeddedChannel::new(vec![("resp", d.clone()), ("recorder", rec.clone())]);
    (ch, d, rec)
}

pub(crate) fn inbound(ch: &EmbeddedChannel, data: &[u8]) {
    ch.write_inbound(data.to_vec());
}

pub(crate) fn set(i: usize) -> RespValue {
    RespValue::command(["SET".to_string(), format!("key{i}"), "value".to_string()])
}
