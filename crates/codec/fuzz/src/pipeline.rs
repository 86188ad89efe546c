//! Runs a case through the pipeline handler instead: `ByteToMessageDecoder` in an
//! `EmbeddedChannel`, each read one `channel_read`, then a close (the final decode runs on
//! `channel_inactive`). A recording handler behind the decoder turns what reaches it,
//! frames as reads and codec errors as `exception_caught`, into the model's events, which
//! must come out read by read as with the cumulator. Memory is not measured here (the
//! channel machinery allocates on its own); `harness` does that.

use std::cell::RefCell;
use std::rc::Rc;

use netloop_codec::bytes::Bytes;
use netloop_codec::{ByteToMessageDecoder, CodecError, FrameDecoder};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, EmbeddedChannel, HandlerResult, Message, TransportError,
};

use super::harness::{take_due, Case};
use super::model::Ev;

/// Records frames and codec errors, in the order they arrive.
struct Record(Rc<RefCell<Vec<Ev>>>);

impl ChannelHandler for Record {
    fn channel_read(&self, _: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let ev = match msg.as_bytes() {
            Some(bytes) => Ev::Frame(bytes.to_vec()),
            None => Ev::Other("a message that is not bytes".into()),
        };
        self.0.borrow_mut().push(ev);
        Ok(())
    }

    fn exception_caught(&self, _: &ChannelHandlerContext, error: TransportError) -> HandlerResult {
        let codec = error
            .foreign_source()
            .and_then(|e| e.downcast_ref::<CodecError>());
        let ev = match codec {
            Some(codec) => Ev::from(Err(codec.clone())),
            None => Ev::Other(error.to_string()),
        };
        self.0.borrow_mut().push(ev);
        Ok(())
    }
}

/// Runs `case` through a pipeline; panics on the first difference from its model.
pub fn check_in_pipeline<D: FrameDecoder + 'static>(case: Case<D>) {
    let label = case.label;
    let seen: Rc<RefCell<Vec<Ev>>> = Rc::default();
    let channel = EmbeddedChannel::new(vec![
        ("decoder", Rc::new(ByteToMessageDecoder::new(case.decoder))),
        ("record", Rc::new(Record(seen.clone()))),
    ]);
    let mut expected = case.expected.into_iter().peekable();
    let mut end = 0;
    for (index, chunk) in case.chunks.iter().enumerate() {
        end += chunk.len();
        channel.write_inbound(Bytes::copy_from_slice(chunk));
        let actual = std::mem::take(&mut *seen.borrow_mut());
        let due = take_due(&mut expected, end);
        assert_eq!(
            actual, due,
            "{label} in a pipeline: events of read {index} (stream at {end})"
        );
    }
    channel.close();
    let actual = std::mem::take(&mut *seen.borrow_mut());
    let rest: Vec<Ev> = expected.map(|(_, ev)| ev).collect();
    assert_eq!(actual, rest, "{label} in a pipeline: events at close");
}
