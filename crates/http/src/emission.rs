//! How [`ResponseQueue`] turns the front slot's response into write actions: encoded with
//! what the codec knows of the request (`Answering`), the slot's framing and keep-alive
//! recorded, an upgrade's verdict given, the parts queued with the promise on the last.
//! Ground rules in the parent module (`queue.rs`).

use netloop_transport::{ChannelPromise, Message};

use super::{Action, Outgoing, ResponseQueue, Slot};
use crate::date::DateValue;
use crate::encoder::{self, Answering, BodyMode};
use crate::error::HttpError;

impl ResponseQueue {
    /// What the codec knows of the request `slot` answers, for a response with `status`.
    pub(super) fn answering<'a>(
        slot: &mut Slot,
        status: u16,
        date: Option<&'a DateValue>,
    ) -> Answering<'a> {
        if !encoder::is_interim(status) {
            slot.continue_pending = false;
        }
        let unread_body = slot.start.expect_continue && !slot.continue_sent;
        Answering {
            head: slot.start.head,
            version: slot.start.version,
            keep_alive: slot.start.keep_alive && !slot.close && (!unread_body || slot.body_done),
            date: date.map(|d| &d[..]),
            upgrade: slot.start.upgrade,
            connect: slot.start.connect,
        }
    }

    /// After a response to `slot` with `status` was encoded: what it says of an upgrade.
    pub(super) fn upgrade_verdict(&mut self, slot: &mut Slot, status: u16) {
        if !slot.start.upgrade || self.switched {
            return;
        }
        if encoder::switches(slot.start.upgrade, slot.start.connect, status) {
            slot.finished = true;
            slot.mode = None;
            self.switched = true;
            self.actions.push(Action::Upgrade { switched: true });
        } else if !encoder::is_interim(status) {
            slot.start.upgrade = false; // answered: later pieces of it say nothing more
            self.actions.push(Action::Upgrade { switched: false });
        }
    }

    /// Records in `slot` what an encoded response with `status` means for the connection.
    pub(super) fn framed(
        slot: &mut Slot,
        status: u16,
        r: Result<encoder::Encoded, HttpError>,
    ) -> Result<encoder::Encoded, HttpError> {
        let interim = encoder::is_interim(status);
        match &r {
            Ok(enc) if !interim => {
                slot.close |= enc.close;
                slot.mode = enc.mode;
                slot.finished = enc.mode.is_none();
            }
            Ok(_) => {}
            Err(_) => {
                // Checked when submitted, so not expected; never leave the slot hanging.
                slot.finished = !interim;
                slot.close = !interim;
            }
        }
        r
    }

    /// Queues the writes of `parts` in order, `promise` on the last (completed at once when
    /// there is none). No vector is made: a response is one to three parts.
    pub(super) fn push_writes(
        &mut self,
        parts: impl Iterator<Item = Message>,
        promise: ChannelPromise,
    ) {
        let mut parts = parts.peekable();
        let mut promise = Some(promise);
        while let Some(part) = parts.next() {
            let p = match parts.peek() {
                Some(_) => ChannelPromise::void(),
                None => promise.take().unwrap_or_else(ChannelPromise::void),
            };
            self.actions.push(Action::Write(part, p));
        }
        if let Some(promise) = promise {
            self.actions.push(Action::Complete(promise, Ok(())));
        }
    }

    /// Queues the writes of an encoded response (head, body, file), `promise` on the last.
    pub(super) fn push_encoded(&mut self, enc: encoder::Encoded, promise: ChannelPromise) {
        let parts = std::iter::once(Message::Bytes(enc.head))
            .chain(enc.body.map(Message::Bytes))
            .chain(enc.file.map(Message::File));
        self.push_writes(parts, promise);
    }

    /// Encodes `out` for the front slot and queues its writes.
    pub(super) fn emit(&mut self, slot: &mut Slot, out: Outgoing, promise: ChannelPromise) {
        let date = self.date;
        let (status, encoded) = match out {
            Outgoing::Refusal(status) => {
                slot.finished = true;
                slot.close = true;
                let bytes = encoder::encode_refusal(status, date.as_ref().map(|d| &d[..]));
                self.push_writes(std::iter::once(Message::Bytes(bytes)), promise);
                return;
            }
            Outgoing::Content(c) => {
                let mut mode = slot.mode.unwrap_or(BodyMode::Discard);
                let r = encoder::encode_piece(&mut mode, c.data, c.last, &c.trailers);
                slot.mode = Some(mode);
                if c.last || r.is_err() {
                    slot.finished = true;
                }
                match r {
                    Ok(parts) => self.push_writes(parts.into_iter().map(Message::Bytes), promise),
                    Err(e) => {
                        slot.close = true; // the body's framing is broken
                        let e = Err(e.into_transport());
                        self.actions.push(Action::Complete(promise, e));
                    }
                }
                return;
            }
            Outgoing::Response(resp) => {
                let status = resp.status;
                let answering = Self::answering(slot, status, date.as_ref());
                (status, encoder::encode(resp, answering))
            }
            Outgoing::Frozen(frozen) => {
                let status = frozen.status();
                let answering = Self::answering(slot, status, date.as_ref());
                (status, Ok(frozen.encode(answering)))
            }
        };
        match Self::framed(slot, status, encoded) {
            Ok(enc) => {
                self.push_encoded(enc, promise);
                self.upgrade_verdict(slot, status);
            }
            Err(e) => self
                .actions
                .push(Action::Complete(promise, Err(e.into_transport()))),
        }
    }
}
