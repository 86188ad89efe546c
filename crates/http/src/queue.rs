//! [`ResponseQueue`]: responses in request order (pipelining), 100 Continue, keep-alive and
//! close decisions (Netty's `HttpServerKeepAliveHandler`, plus the ordering Netty leaves to
//! the application).
//!
//! Ground rules:
//! - One slot per request, opened when its head is accepted, in request order. Only the front
//!   slot writes; what the application writes for a later request is held in its slot, not
//!   encoded, until every earlier response is complete.
//! - The queue does no I/O: each operation appends [`Action`]s that the handler runs after it
//!   released its borrow of the queue (the pipeline is re-entrant).
//! - A response that closes the connection (asked by the request or the response, HTTP/1.0
//!   without keep-alive, a refused request, a broken streamed body) is the last: after it the
//!   queue emits [`Action::Close`], fails every held write and refuses new ones.
//! - A request sent with `Expect: 100-continue` gets `100 Continue` when its slot reaches the
//!   front, unless its final response is already there; that response then closes the
//!   connection if the body has not arrived (the client may never send it).
//! - What is held counts ([`ResponseQueue::held_bytes`], a message's bytes plus 96 as the
//!   outbound buffer counts one): the handler adds it to the channel's pending outbound bytes,
//!   so that writability, and the water marks, see responses waiting for earlier ones.
//! - The response to an upgrade request says what follows ([`Action::Upgrade`], when it is
//!   written): one that switches protocols (`Answering::switches`) finishes its slot, and the
//!   queue takes no HTTP response after it; any other final response declines the upgrade.

use std::collections::VecDeque;

use bytes::Bytes;
use netloop_transport::{ChannelPromise, Message, TransportError};

use crate::date::DateValue;
use crate::decoder::RequestStart;
use crate::encoder::{self, BodyMode};
use crate::error::HttpError;
use crate::frozen::FrozenResponse;
use crate::message::{HttpContent, HttpResponse};

#[path = "emission.rs"]
mod emission;

/// What the handler must do, in order.
#[derive(Debug)]
pub(crate) enum Action {
    /// Write this message: bytes or a file region (not flushed).
    Write(Message, ChannelPromise),
    /// Complete a write that wrote nothing (or failed before writing).
    Complete(ChannelPromise, Result<(), TransportError>),
    /// Flush what was written.
    Flush,
    /// Close once the writes before this are done.
    Close,
    /// The response to an upgrade request was written: `switched` (the connection now
    /// speaks another protocol) or declined (HTTP goes on).
    Upgrade { switched: bool },
}

/// Something written by the application, or the codec's own refusal.
#[derive(Debug)]
pub(crate) enum Outgoing {
    Response(HttpResponse),
    /// A whole response checked and encoded once (no `check` per write).
    Frozen(FrozenResponse),
    Content(HttpContent),
    Refusal(u16),
}

#[derive(Debug)]
struct Slot {
    start: RequestStart,
    continue_pending: bool,
    continue_sent: bool,
    body_done: bool,
    // What the application submitted (held or written).
    final_submitted: bool,
    streaming_submitted: bool,
    end_submitted: bool,
    // What was written (front slot only).
    mode: Option<BodyMode>,
    finished: bool,
    close: bool,
    held: VecDeque<(Outgoing, ChannelPromise)>,
}

/// The response side of one connection.
#[derive(Debug, Default)]
pub(crate) struct ResponseQueue {
    slots: VecDeque<Slot>,
    /// `Close` was emitted (or the channel is gone): nothing more is written.
    closed: bool,
    /// No more requests will be read: close once the slots are done.
    input_done: bool,
    /// A response switched protocols: no HTTP response is taken any more.
    switched: bool,
    /// The size of what the slots hold (see [`held_size`]).
    held_bytes: usize,
    date: Option<DateValue>,
    actions: Vec<Action>,
}

impl ResponseQueue {
    /// Frees the capacity of the slot and action vectors kept for reuse (what they hold
    /// stays): after a protocol switch they would be kept for nothing.
    pub(crate) fn release_storage(&mut self) {
        self.slots.shrink_to_fit();
        self.actions.shrink_to_fit();
    }

    /// The actions produced so far, to run in order; `spare` (empty) takes their place, so a
    /// handler that hands its drained vector back allocates none per write.
    pub(crate) fn take_actions(&mut self, spare: Vec<Action>) -> Vec<Action> {
        std::mem::replace(&mut self.actions, spare)
    }

    /// True when actions wait to be run.
    pub(crate) fn has_actions(&self) -> bool {
        !self.actions.is_empty()
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// What the application wrote that waits for earlier responses, counted as the outbound
    /// buffer counts a message.
    pub(crate) fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// Requests waiting for (the end of) their response.
    pub(crate) fn pending(&self) -> usize {
        self.slots.len()
    }

    /// The `Date` value for what is encoded next.
    pub(crate) fn set_date(&mut self, date: Option<DateValue>) {
        self.date = date;
    }

    /// A request head was accepted.
    pub(crate) fn open(&mut self, start: RequestStart) {
        if self.closed || self.input_done {
            return;
        }
        self.slots.push_back(Slot {
            start,
            continue_pending: start.expect_continue,
            continue_sent: false,
            body_done: !start.has_body,
            final_submitted: false,
            streaming_submitted: false,
            end_submitted: false,
            mode: None,
            finished: false,
            close: false,
            held: VecDeque::new(),
        });
        self.pump();
    }

    /// The body of request `id` has been received completely.
    pub(crate) fn body_done(&mut self, id: u64) {
        if let Some(slot) = self.slots.iter_mut().find(|s| s.start.id == id) {
            slot.body_done = true;
        }
    }

    /// No more requests will be read (end of input or a refusal): the connection closes once
    /// the pending responses are written.
    pub(crate) fn input_done(&mut self) {
        self.input_done = true;
        self.pump();
    }

    /// Answers natively with `error`'s status: request `in_body` (whose body failed) if it
    /// has no response yet, else a new request `next_id`. The connection closes after it.
    pub(crate) fn refuse(&mut self, error: &HttpError, in_body: Option<u64>, next_id: u64) {
        let Some(status) = error.status() else { return };
        if self.closed {
            return;
        }
        let slot = in_body.and_then(|id| self.slots.iter_mut().find(|s| s.start.id == id));
        match slot {
            Some(slot) if slot.final_submitted => slot.close = true,
            Some(slot) => {
                slot.final_submitted = true;
                slot.end_submitted = true;
                slot.close = true;
                slot.continue_pending = false;
                slot.held
                    .push_back((Outgoing::Refusal(status), ChannelPromise::void()));
            }
            None if !self.input_done => {
                let start = RequestStart {
                    id: next_id,
                    head: false,
                    version: crate::message::Version::Http11,
                    keep_alive: false,
                    expect_continue: false,
                    has_body: false,
                    upgrade: false,
                    connect: false,
                };
                self.open(start);
                if let Some(slot) = self.slots.back_mut() {
                    slot.final_submitted = true;
                    slot.end_submitted = true;
                    slot.close = true;
                    slot.held
                        .push_back((Outgoing::Refusal(status), ChannelPromise::void()));
                }
            }
            None => {}
        }
        self.input_done = true;
        self.pump();
    }

    /// Fails every held write; nothing more is written (the channel closed).
    pub(crate) fn abandon(&mut self) {
        self.closed = true;
        for slot in self.slots.drain(..) {
            for (_, p) in slot.held {
                self.actions
                    .push(Action::Complete(p, Err(TransportError::ChannelClosed)));
            }
        }
        self.held_bytes = 0;
    }

    /// A response or a piece of one written by the application.
    pub(crate) fn submit(&mut self, out: Outgoing, promise: ChannelPromise) {
        if self.closed {
            let e = Err(TransportError::ChannelClosed);
            self.actions.push(Action::Complete(promise, e));
            return;
        }
        if self.switched {
            let e = Err(HttpError::NoPendingRequest.into_transport());
            self.actions.push(Action::Complete(promise, e));
            return;
        }
        match self.admit(&out) {
            Ok(0) => {
                let mut front = self.slots.pop_front().expect("admitted to a slot");
                self.emit(&mut front, out, promise);
                self.slots.push_front(front);
                self.pump();
            }
            Ok(i) => {
                self.held_bytes += held_size(&out);
                self.slots[i].held.push_back((out, promise));
            }
            Err(e) => {
                self.actions
                    .push(Action::Complete(promise, Err(e.into_transport())));
            }
        }
    }

    /// A frozen response answering the front request in the common case, encoded and its slot
    /// retired, with no action queued: the caller writes the parts. `None` (nothing changed)
    /// whenever another rule may apply (a held or closing response, 100 Continue, an upgrade,
    /// an interim status, a failed check, actions not run yet): then [`submit`] decides.
    ///
    /// [`submit`]: ResponseQueue::submit
    pub(crate) fn answer_front(
        &mut self,
        frozen: &FrozenResponse,
        date: Option<DateValue>,
    ) -> Option<encoder::Encoded> {
        self.date = date;
        let status = frozen.status();
        if self.closed || self.switched || self.input_done || !self.actions.is_empty() {
            return None;
        }
        let front = self.slots.front()?;
        let plain = !front.final_submitted
            && front.held.is_empty()
            && front.body_done
            && !front.continue_pending
            && !front.start.expect_continue
            && !front.start.upgrade
            && !encoder::is_interim(status)
            && frozen.request_id.map_or(true, |id| id == front.start.id)
            && self.slots.get(1).map_or(true, |next| next.held.is_empty())
            && frozen.check(front.start.head).is_ok();
        if !plain {
            return None;
        }
        let slot = self.slots.front_mut()?;
        let enc = frozen.encode(Self::answering(slot, status, date.as_ref()));
        if enc.close || enc.mode.is_some() || enc.file.is_some() {
            return None; // (nothing was changed: `submit` encodes it again, from the cache)
        }
        self.slots.pop_front();
        Some(enc)
    }

    /// Finds the slot `out` belongs to and records it as submitted.
    fn admit(&mut self, out: &Outgoing) -> Result<usize, HttpError> {
        let find = |pred: &dyn Fn(&Slot) -> bool| self.slots.iter().position(pred);
        let index = match out {
            Outgoing::Response(HttpResponse { request_id, .. })
            | Outgoing::Frozen(FrozenResponse { request_id, .. }) => match request_id {
                Some(id) => find(&|s| s.start.id == *id),
                None => find(&|s| !s.final_submitted),
            },
            Outgoing::Content(c) => match c.request_id {
                Some(id) => find(&|s| s.start.id == id),
                None => find(&|s| s.streaming_submitted && !s.end_submitted),
            },
            Outgoing::Refusal(_) => None,
        };
        let i = index.ok_or(HttpError::NoPendingRequest)?;
        let slot = &mut self.slots[i];
        match out {
            Outgoing::Response(r) => {
                if slot.final_submitted {
                    return Err(HttpError::NoPendingRequest);
                }
                encoder::check(r, slot.start.head)?;
                if !encoder::is_interim(r.status) {
                    slot.final_submitted = true;
                    slot.streaming_submitted = r.streaming;
                    slot.end_submitted = !r.streaming;
                }
            }
            Outgoing::Frozen(r) => {
                if slot.final_submitted {
                    return Err(HttpError::NoPendingRequest);
                }
                r.check(slot.start.head)?;
                if !encoder::is_interim(r.status()) {
                    slot.final_submitted = true;
                    slot.end_submitted = true;
                }
            }
            Outgoing::Content(c) => {
                if !slot.streaming_submitted || slot.end_submitted {
                    return Err(HttpError::NoPendingRequest);
                }
                slot.end_submitted = c.last;
            }
            Outgoing::Refusal(_) => {}
        }
        Ok(i)
    }

    /// Writes what the front slots can write, in order, and retires finished ones.
    fn pump(&mut self) {
        if let Some(front) = self.slots.front() {
            let continue_due = front.continue_pending && !front.final_submitted && !front.body_done;
            if !continue_due && front.held.is_empty() && !front.finished {
                return; // the front request waits for its response: nothing to write or retire
            }
        }
        let mut wrote = false;
        while let Some(mut front) = self.slots.pop_front() {
            if front.continue_pending && !front.final_submitted && !front.body_done {
                front.continue_pending = false;
                front.continue_sent = true;
                let bytes = Bytes::from_static(encoder::CONTINUE);
                self.actions
                    .push(Action::Write(Message::Bytes(bytes), ChannelPromise::void()));
                wrote = true;
            }
            while let Some((out, promise)) = front.held.pop_front() {
                self.held_bytes = self.held_bytes.saturating_sub(held_size(&out));
                self.emit(&mut front, out, promise);
                wrote = true;
            }
            if !front.finished {
                self.slots.push_front(front);
                break;
            }
            if front.close {
                self.close();
                return;
            }
        }
        if wrote {
            self.actions.push(Action::Flush);
        }
        if self.slots.is_empty() && self.input_done && !self.closed {
            self.close();
        }
    }

    fn close(&mut self) {
        self.actions.push(Action::Flush);
        self.actions.push(Action::Close);
        self.abandon();
    }
}

/// The size a held write counts for: its bytes plus 96, as the outbound buffer counts a message.
fn held_size(out: &Outgoing) -> usize {
    const OVERHEAD: usize = 96;
    OVERHEAD
        + match out {
            Outgoing::Response(r) => {
                let fields: usize = r.headers.iter().map(|(n, v)| n.len() + v.len() + 4).sum();
                r.body.len() + fields
            }
            Outgoing::Frozen(f) => f.body().len(),
            Outgoing::Content(c) => c.data.len(),
            Outgoing::Refusal(_) => 0,
        }
}
