//! [`ReadPause`]: a decoder's pause while its channel is not writable (node:http's rule for
//! servers), shared by the HTTP server codec and the RESP decoder. While paused the decoder
//! fires nothing new and reading stops; once the channel is writable again it goes on.
//!
//! The pause also *holds reads back*: a consumer that cannot answer each message before the
//! next one is fired (JS handlers: a read batch reaches JS in one call, and the replies it
//! writes are seen natively only when the call returns) gives the messages it did not start
//! back to the decoder ([`ReadPause::hold_back`]) once the channel turned unwritable; the
//! decoder fires them again, in order, before anything new. So what a pause leaves queued
//! is bounded by the replies to the messages handled before the channel turned unwritable,
//! whatever a reply's size, not by the replies to a whole read batch.
//!
//! Ground rules:
//! - Loop thread only (`Cell`/`RefCell`); no borrow is held while a message is fired.
//! - Reading stops by turning `autoRead` off, only if it was on; the decoder turns it back on
//!   when it resumes, or when it leaves the pipeline. A `read()` asked while paused is held
//!   ([`ReadPause::hold_read`]) and passed on at the resume.
//! - Resuming runs from a loop task, never from inside the writability event, which may come
//!   from inside a write made in the decoder's own `channel_read`.
//! - Held messages go back in order: the messages of one *firing session* (what the decoder
//!   fired since it last fired after a hold-back) are given back in the order they were
//!   fired, and each goes before the messages still held from earlier, after the ones given
//!   back before it in the same session. A session's messages are given back before the
//!   decoder fires again (the consumer gives them back while it handles that batch).
//! - A resume fires at most [`REFIRE_LIMIT`] held messages, then goes on from another task
//!   (the next loop iteration, after the consumer saw them) while the channel stays writable.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;

use crate::{ChannelHandler, ChannelHandlerContext, ChannelOption, Message};

/// Most held messages a resume fires before it lets the consumer see them.
pub const REFIRE_LIMIT: usize = 1024;

/// What [`ReadPause::refire_reads`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refired {
    /// At least one held message was fired.
    pub fired: bool,
    /// None is left held (false: the channel turned unwritable, the decoder left the
    /// pipeline, or [`REFIRE_LIMIT`] was reached).
    pub done: bool,
}

/// A decoder's pause state (see the module docs).
#[derive(Debug, Default)]
pub struct ReadPause {
    paused: Cell<bool>,
    /// The pause turned `autoRead` off (and turns it back on when it ends).
    auto_read_off: Cell<bool>,
    /// A `read()` held back while paused.
    read_wanted: Cell<bool>,
    resume_scheduled: Cell<bool>,
    held: RefCell<VecDeque<Message>>,
    /// Where the next message given back in this session goes among the held ones.
    insert_at: Cell<usize>,
    /// A message of the current firing session was given back.
    session_held: Cell<bool>,
}

impl ReadPause {
    /// True while the decoder is paused.
    pub fn is_paused(&self) -> bool {
        self.paused.get()
    }

    /// Messages given back and not fired again yet.
    pub fn held_len(&self) -> usize {
        self.held.borrow().len()
    }

    /// True once a message of the current firing session was given back: the consumer gives
    /// back the rest of that session too (they come after it).
    pub fn holds_session(&self) -> bool {
        self.session_held.get()
    }

    /// The decoder is about to fire a message: a new firing session starts if the last one
    /// had messages given back.
    pub fn firing(&self) {
        if self.session_held.replace(false) {
            self.insert_at.set(0);
        }
    }

    /// True if the channel is not writable (or gone).
    pub fn unwritable(ctx: &ChannelHandlerContext) -> bool {
        ctx.try_channel().is_some_and(|ch| !ch.is_writable())
    }

    /// Stops reading (auto-read off, or `read()` held) until [`ReadPause::unpause`].
    pub fn pause(&self, ctx: &ChannelHandlerContext) {
        if self.paused.replace(true) {
            return;
        }
        if let Some(ch) = ctx.try_channel() {
            if ch.is_auto_read() && ch.set_option(ChannelOption::AutoRead(false)).is_ok() {
                self.auto_read_off.set(true);
            }
        }
    }

    /// Decoding may go on (reading is still paused until [`ReadPause::unpause`]).
    pub fn continue_decoding(&self) {
        self.paused.set(false);
    }

    /// Ends the pause: auto-read back on if the pause turned it off (that starts a read), or
    /// the `read()` held back passed on.
    pub fn unpause(&self, ctx: &ChannelHandlerContext) {
        self.paused.set(false);
        if self.auto_read_off.replace(false) {
            if let Some(ch) = ctx.try_channel() {
                let _ = ch.set_option(ChannelOption::AutoRead(true));
            }
        } else if self.read_wanted.replace(false) {
            ctx.read();
        }
    }

    /// A `read()` reaching the decoder: true if it is held for the resume (paused).
    pub fn hold_read(&self) -> bool {
        if self.paused.get() {
            self.read_wanted.set(true);
        }
        self.paused.get()
    }

    /// Takes back a message the decoder fired and its consumer did not start (see the module
    /// docs for the order), and pauses. The caller schedules a resume if the channel is
    /// writable already.
    pub fn hold_back(&self, ctx: &ChannelHandlerContext, msg: Message) {
        {
            let mut held = self.held.borrow_mut();
            let at = self.insert_at.get().min(held.len());
            held.insert(at, msg);
        }
        self.insert_at.set(self.insert_at.get() + 1);
        self.session_held.set(true);
        self.pause(ctx);
    }

    /// Holds a message the decoder made while others are held, behind all of them (it came
    /// after them in the stream), and pauses.
    pub fn hold_behind(&self, ctx: &ChannelHandlerContext, msg: Message) {
        self.held.borrow_mut().push_back(msg);
        self.pause(ctx);
    }

    /// Fires held messages with `fire` while the channel is writable, at most
    /// [`REFIRE_LIMIT`]; true if none is left.
    pub fn fire_held(&self, ctx: &ChannelHandlerContext, fire: impl Fn(Message)) -> bool {
        for _ in 0..REFIRE_LIMIT {
            if Self::unwritable(ctx) || ctx.is_removed() {
                return false;
            }
            let Some(msg) = self.held.borrow_mut().pop_front() else {
                return true;
            };
            self.firing();
            fire(msg);
        }
        self.held.borrow().is_empty()
    }

    /// Fires held messages as channel reads while the channel is writable, as
    /// [`ReadPause::fire_held`] does: what a decoder's resume does first. The caller fires
    /// one `channel_read_complete` if [`Refired::fired`].
    pub fn refire_reads(&self, ctx: &ChannelHandlerContext) -> Refired {
        let fired = Cell::new(false);
        let done = self.fire_held(ctx, |m| {
            fired.set(true);
            ctx.fire_channel_read(m);
        });
        Refired {
            fired: fired.get(),
            done,
        }
    }

    /// Takes back a message its consumer did not start ([`ReadPause::hold_back`]) and, if the
    /// channel is writable already, schedules `resume` ([`ReadPause::resume_if_writable`]).
    pub fn give_back<H: ChannelHandler + 'static>(
        &self,
        ctx: &ChannelHandlerContext,
        msg: Message,
        resume: fn(&H, &ChannelHandlerContext),
    ) {
        self.hold_back(ctx, msg);
        self.resume_if_writable(ctx, resume);
    }

    /// Schedules `resume` ([`ReadPause::schedule_resume`]) if the decoder is paused and its
    /// channel is writable again: on a writability change, and after a give-back.
    pub fn resume_if_writable<H: ChannelHandler + 'static>(
        &self,
        ctx: &ChannelHandlerContext,
        resume: fn(&H, &ChannelHandlerContext),
    ) {
        if self.can_resume(ctx) {
            self.schedule_resume(ctx, resume);
        }
    }

    /// Fires every held message with `fire`, writable or not (the decoder leaves the
    /// pipeline: the next handler takes them).
    pub fn fire_all_held(&self, fire: impl Fn(Message)) {
        loop {
            let Some(msg) = self.held.borrow_mut().pop_front() else {
                return;
            };
            fire(msg);
        }
    }

    /// Drops what is held (end of input: nothing can be answered).
    pub fn drop_held(&self) {
        let held = std::mem::take(&mut *self.held.borrow_mut());
        drop(held);
        self.insert_at.set(0);
        self.session_held.set(false);
    }

    /// Paused while the channel is writable again: time to resume.
    pub fn can_resume(&self, ctx: &ChannelHandlerContext) -> bool {
        self.paused.get() && ctx.try_channel().is_some_and(|ch| ch.is_writable())
    }

    /// Runs `resume` on handler `H` (found at `ctx` then) from a loop task, once however often
    /// it is asked before it runs. `resume` calls [`ReadPause::resuming`] first.
    pub fn schedule_resume<H: ChannelHandler + 'static>(
        &self,
        ctx: &ChannelHandlerContext,
        resume: fn(&H, &ChannelHandlerContext),
    ) {
        if self.resume_scheduled.get() {
            return;
        }
        let Some(event_loop) = ctx.try_channel().and_then(|ch| ch.event_loop().local()) else {
            return;
        };
        self.resume_scheduled.set(true);
        let c = ctx.clone();
        event_loop.execute_local(move || {
            if c.is_removed() {
                return;
            }
            let handler = c.handler();
            if let Some(h) = handler.as_any().and_then(|a| a.downcast_ref::<H>()) {
                resume(h, &c);
            }
        });
    }

    /// The scheduled resume runs (another may be scheduled from now on).
    pub fn resuming(&self) {
        self.resume_scheduled.set(false);
    }
}
