//! Reads JS gives back: a codec's messages (RESP commands, HTTP requests) that reach JS in one
//! delivery, of which JS handles only those before the channel turned unwritable. The rest go
//! back to the codec (`netloop_transport::ReadPause`), which fires them again, in order, once
//! the channel is writable: what a client that does not read makes the server queue is then
//! bounded by the replies to what JS handled, not by the replies to a whole read batch.
//!
//! Ground rules (loop thread only):
//! - A stand-in whose previous handler is a pausing codec (`JsAdapter::holds`, reviewed on
//!   every pipeline change) keeps each such read's message with the batch (`Outbox::kept`,
//!   by its offset in the batch's bytes) and marks its record (`c` = [`HOLDABLE`]). The
//!   messages live until the delivery's calls return, then are dropped.
//! - JS gives a record back with [`Hub::hold_back`] (`NativeChannels::holdBack`) while its call runs; once it
//!   gave one back, it gives back every later one of that firing too
//!   ([`Hub::holds_firing`]), so the codec keeps the order.
//! - A run of RESP commands (`RespCommands`, one record for a read's commands) is given back
//!   from one of its commands on: JS names the offset of that command's tag form, the run
//!   keeps the commands before it (JS handled them) and the rest goes back as a run.
//! - Nothing here applies JS's ops: the calls come from inside a delivery.

use netloop_http::HttpServerCodec;
use netloop_resp::{RespCommands, RespDecoderHandler};
use netloop_transport::{ChannelHandler, ChannelHandlerContext, Message};

use crate::adapter::JsAdapter;
use crate::hub::Hub;

/// A read record's `c` when JS may give its message back.
pub const HOLDABLE: f64 = 1.0;

/// The kept messages of the batch being delivered, by offset in its bytes (ascending).
#[derive(Default)]
pub struct Kept(Vec<(usize, Option<Message>)>);

impl Drop for Kept {
    fn drop(&mut self) {
        for (_, m) in self.0.drain(..) {
            if let Some(m) = m {
                drop_read(m);
            }
        }
    }
}

/// Drops a read's message; an HTTP request's box is kept for the codec's next request
/// (`netloop_http::recycle_request`).
pub fn drop_read(m: Message) {
    if let Message::User(v) = m {
        if let Ok(req) = v.downcast::<netloop_http::HttpRequest>() {
            netloop_http::recycle_request(req);
        }
    }
}

impl Kept {
    pub fn from_batch(kept: Vec<(usize, Message)>) -> Self {
        Kept(kept.into_iter().map(|(at, m)| (at, Some(m))).collect())
    }

    /// The message read at offset `at`: a kept message, or the commands of a kept run from
    /// the one whose tag form starts at `at` on (the run keeps those before).
    fn take(&mut self, at: usize) -> Option<Message> {
        let i = match self.0.binary_search_by_key(&at, |(o, _)| *o) {
            Ok(i) => return self.0[i].1.take(),
            Err(0) => return None,
            Err(i) => i - 1,
        };
        let (start, Some(Message::User(kept))) = &mut self.0[i] else {
            return None;
        };
        let run = kept.downcast_mut::<RespCommands>()?;
        // Which command starts at `at`: its tag forms follow each other from `start` on.
        let mut to = *start;
        let k = crate::resp_wire::command_tag_lengths(run)
            .position(|len| {
                to += len;
                to >= at
            })
            .filter(|_| to == at)?;
        run.split_at(k + 1).map(Message::user)
    }
}

/// The codec a JS stand-in's held reads go back to.
enum Holder {
    Resp(ChannelHandlerContext, std::rc::Rc<dyn ChannelHandler>),
    Http(ChannelHandlerContext, std::rc::Rc<dyn ChannelHandler>),
}

impl Holder {
    /// The pausing codec right in front of `ctx` (the stand-in's context), if any.
    fn before(ctx: &ChannelHandlerContext) -> Option<Holder> {
        let p = ctx.try_pipeline()?;
        let names = p.names();
        let i = names.iter().position(|n| n == ctx.name())?;
        let prev = p.context(&names[i.checked_sub(1)?])?;
        let h = prev.handler();
        let any = h.as_any()?;
        if any
            .downcast_ref::<RespDecoderHandler>()
            .is_some_and(|d| d.pauses(&prev))
        {
            Some(Holder::Resp(prev, h))
        } else if any.is::<HttpServerCodec>() {
            Some(Holder::Http(prev, h))
        } else {
            None
        }
    }

    fn resp(h: &std::rc::Rc<dyn ChannelHandler>) -> Option<&RespDecoderHandler> {
        h.as_any()?.downcast_ref()
    }

    fn http(h: &std::rc::Rc<dyn ChannelHandler>) -> Option<&HttpServerCodec> {
        h.as_any()?.downcast_ref()
    }

    fn hold_back(&self, msg: Message) {
        match self {
            Holder::Resp(c, h) => Self::resp(h).map(|d| d.hold_back(c, msg)),
            Holder::Http(c, h) => Self::http(h).map(|d| d.hold_back(c, msg)),
        };
    }

    fn holds_firing(&self) -> bool {
        match self {
            Holder::Resp(_, h) => Self::resp(h).is_some_and(RespDecoderHandler::holds_firing),
            Holder::Http(_, h) => Self::http(h).is_some_and(HttpServerCodec::holds_firing),
        }
    }
}

/// Sets `holds` on each stand-in of channel `id`: whether a pausing codec sits right in
/// front of it.
pub fn review_holds(hub: &Hub, id: f64) {
    let Some(ch) = hub.channel(id as u64) else {
        return;
    };
    let p = ch.pipeline();
    for name in p.names() {
        let Some(ctx) = p.context(&name) else {
            continue;
        };
        let h = ctx.handler();
        if let Some(js) = h.as_any().and_then(|a| a.downcast_ref::<JsAdapter>()) {
            js.holds.set(Holder::before(&ctx).is_some());
        }
    }
}

impl Hub {
    /// The native context of channel `id`'s JS context `ctx`.
    fn js_context(&self, id: f64, ctx: f64) -> Option<ChannelHandlerContext> {
        let map = self.channels.borrow();
        let e = map.get(&(id as u64))?;
        let found = e.ctxs.iter().find(|(c, _)| *c == ctx as u64);
        found.map(|(_, c)| c.clone())
    }
}

impl Hub {
    /// JS does not start the read at offset `at` of the batch it is handed (a record marked
    /// holdable) of channel `id`'s JS context `ctx`: its message goes back to the codec in
    /// front of that context. False if it cannot (JS then handles the read itself).
    pub fn hold_back(&self, id: f64, ctx: f64, at: f64) -> bool {
        let Some(holder) = self.js_context(id, ctx).and_then(|c| Holder::before(&c)) else {
            return false;
        };
        let Some(msg) = self.kept.borrow_mut().take(at as usize) else {
            return false;
        };
        holder.hold_back(msg);
        true
    }

    /// True once the codec in front of channel `id`'s JS context `ctx` took back a read of
    /// its latest firing: JS gives back the later reads of that firing too.
    pub fn holds_firing(&self, id: f64, ctx: f64) -> bool {
        self.js_context(id, ctx)
            .and_then(|c| Holder::before(&c))
            .is_some_and(|h| h.holds_firing())
    }
}

#[cfg(test)]
mod tests {
    use super::Kept;
    use netloop_resp::bytes::BytesMut;
    use netloop_resp::{RespCommands, RespConfig, RespDecoder};
    use netloop_transport::Message;

    /// `n` commands `GET k<i>` as one run, and the offsets of their tag forms from `start`.
    fn run(n: usize, start: usize) -> (RespCommands, Vec<usize>) {
        let mut wire = BytesMut::new();
        for i in 0..n {
            let k = format!("k{i}");
            wire.extend_from_slice(
                format!("*2\r\n$3\r\nGET\r\n${}\r\n{k}\r\n", k.len()).as_bytes(),
            );
        }
        let mut d = RespDecoder::new(RespConfig::default()).unwrap();
        let run = d.decode_commands(&mut wire).unwrap();
        let mut tags = Vec::new();
        crate::resp_wire::put_commands(&mut tags, &run);
        let mut at = start;
        let offsets = crate::resp_wire::command_tag_lengths(&run)
            .map(|len| {
                at += len;
                at - len
            })
            .collect();
        assert_eq!(
            at - start,
            tags.len(),
            "the lengths add up to what put_commands wrote"
        );
        (run, offsets)
    }

    fn keys(m: Message) -> Vec<Vec<u8>> {
        let run = m.downcast::<RespCommands>().expect("a run");
        run.iter().map(|mut a| a.nth(1).unwrap().to_vec()).collect()
    }

    #[test]
    fn a_run_is_given_back_from_the_command_whose_tag_form_starts_at_the_offset() {
        let (first, at) = run(5, 10);
        let (second, at2) = run(3, 500);
        let mut kept = Kept::from_batch(vec![
            (10, Message::user(first)),
            (500, Message::user(second)),
        ]);
        assert!(kept.take(at[2] + 1).is_none(), "inside a command: nothing");
        assert!(kept.take(5).is_none(), "before every kept message: nothing");
        let rest = kept.take(at[3]).expect("commands 3 and 4");
        assert_eq!(keys(rest), [b"k3".to_vec(), b"k4".to_vec()]);
        assert!(kept.take(at[4]).is_none(), "already given back with 3");
        let whole = kept.take(at2[0]).expect("the second run whole");
        assert_eq!(keys(whole).len(), 3);
        assert!(kept.take(at2[1]).is_none(), "taken whole before");
        let head = kept
            .take(at[1])
            .expect("what the first run kept, from 1 on");
        assert_eq!(keys(head), [b"k1".to_vec(), b"k2".to_vec()]);
    }
}
