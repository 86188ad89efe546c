//! [`RespDecoderHandler`]: a [`RespDecoder`] over a cumulation buffer, as a pipeline handler
//! (Netty's `RedisDecoder` + `RedisArrayAggregator`, fired as whole values).
//!
//! Behaviour:
//! - Inbound `Message::Bytes` are appended to the cumulation (one copy per read); each
//!   complete top-level value is fired as `channel_read(Message::user(RespValue))`, in stream
//!   order, as soon as it is decoded. Other messages pass through unchanged.
//! - With [`RespDecoderHandler::command_frames`] on, a plain command (an array of bulk
//!   strings, wholly buffered) is fired as a `RespCommand` instead: the same arguments, kept
//!   as the frame they came in, with no value tree (`RespDecoder::decode_command`). Every
//!   other value, and a command that arrives in parts, is still a `RespValue`.
//! - With [`RespDecoderHandler::command_runs`] on, the plain commands found back to back are
//!   fired as one `RespCommands` run (a pipelined read's commands in one `channel_read`).
//! - A protocol error is fired once as `exception_caught` (after the values that preceded it
//!   in the stream); from then on the handler drops every inbound byte and asks for no more
//!   reads. The application closes the channel (a server first writes
//!   `RespError::reply_text()` as an error reply), as redis-server does.
//! - `channel_read_complete` is passed on. With `autoRead` off, a burst that brought bytes but
//!   no value asks for another read, so a partial value can complete.
//! - End of input (`channel_inactive`, or the `ChannelInputShutdown` event) drops a partial
//!   value silently (RESP values need their final CRLF, so none can complete at end of input;
//!   Netty's `RedisDecoder` drops it too), then passes the event on.
//! - Removal forwards the bytes not consumed yet as one `Message::Bytes` read followed by
//!   `channel_read_complete` (Netty's `handlerRemoved`). Parts of a value already consumed are
//!   not forwarded: remove the decoder between values (e.g. from the handler of the command
//!   that switches protocols, which the decoder fires before touching the next bytes).
//!
//! - Backpressure ([`RespDecoderHandler::pause_while_unwritable`], pause.rs; on by default
//!   for a server's channels): while the channel is not writable no new value is fired and
//!   reading stops; values a consumer gives back ([`RespDecoderHandler::hold_back`]) are
//!   fired again, first, once it is writable.
//!
//! Memory: the cumulation grows by at least doubling, so a value arriving in many small
//! reads costs amortised O(1) copying per byte, and the decode call per read is O(1) while a
//! bulk payload is incomplete. Decoded payloads are views of the cumulation; once the values
//! holding them are dropped, its space is reused.

use std::cell::{Cell, RefCell};

use bytes::BytesMut;
use netloop_transport::{
    append_to_cumulation, ChannelHandler, ChannelHandlerContext, ChannelInputShutdown,
    HandlerResult, Message, UserEvent,
};

use super::pause::Pause;
use crate::config::RespConfig;
use crate::decoder::RespDecoder;
use crate::error::ConfigError;

struct State {
    decoder: RespDecoder,
    buf: BytesMut,
}

/// A handler that decodes RESP values from inbound bytes.
///
/// ```
/// use netloop_resp::{RespConfig, RespDecoderHandler};
/// let handler = RespDecoderHandler::new(RespConfig::default()).unwrap();
/// # let _ = handler;
/// ```
pub struct RespDecoderHandler {
    state: RefCell<State>,
    /// A value was fired since the last `channel_read_complete`.
    fired_value: Cell<bool>,
    /// Bytes were received since the last `channel_read_complete`.
    got_bytes: Cell<bool>,
    pause: Pause,
    /// Plain commands are fired as `RespCommand` frames (see `command_frames`).
    command_frames: bool,
    /// Back-to-back plain commands are fired as one `RespCommands` run (see `command_runs`).
    command_runs: bool,
}

impl RespDecoderHandler {
    /// A handler enforcing `config`'s limits.
    ///
    /// # Errors
    /// [`ConfigError`] when `config` is out of range (see [`RespConfig::validate`]).
    pub fn new(config: RespConfig) -> Result<Self, ConfigError> {
        Ok(Self::from_decoder(RespDecoder::new(config)?))
    }

    /// A handler around an existing decoder.
    pub fn from_decoder(decoder: RespDecoder) -> Self {
        RespDecoderHandler {
            state: RefCell::new(State {
                decoder,
                buf: BytesMut::new(),
            }),
            fired_value: Cell::new(false),
            got_bytes: Cell::new(false),
            pause: Pause::default(),
            command_frames: false,
            command_runs: false,
        }
    }

    /// Fire each plain command (an array of bulk strings whose parts are all buffered) as a
    /// [`RespCommand`](crate::RespCommand) instead of a `RespValue::Array`: for consumers that
    /// only walk the arguments, it saves a value per argument. Other values, and commands
    /// that arrive in several reads, are still `RespValue`s, so a consumer must take both
    /// (`RespCommand::to_value` gives the value). Off by default.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use netloop_resp::{RespCommand, RespConfig, RespDecoderHandler};
    /// use netloop_transport::EmbeddedChannel;
    /// let handler = RespDecoderHandler::new(RespConfig::default()).unwrap().command_frames(true);
    /// let ch = EmbeddedChannel::new(vec![("resp-decoder", Rc::new(handler))]);
    /// ch.write_inbound(&b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"[..]);
    /// let get = ch.read_inbound().unwrap().downcast::<RespCommand>().unwrap();
    /// assert_eq!(get.args().collect::<Vec<_>>(), [&b"GET"[..], b"k"]);
    /// ```
    pub fn command_frames(mut self, on: bool) -> Self {
        self.command_frames = on;
        self
    }

    /// Fire the plain commands found back to back in the cumulation as one
    /// [`RespCommands`](crate::RespCommands) run (one `channel_read` for all the commands of
    /// a pipelined read) instead of one message each; other values, and commands split across
    /// reads, come as with [`command_frames`](Self::command_frames). For a consumer that sees
    /// a read's messages all at once anyway (the JS binding): the pause while unwritable is
    /// checked before each *message*, so a native consumer answering inside `channel_read`
    /// would no longer be stopped between the commands of a run; it gives back the commands
    /// it did not start instead ([`RespCommands::split_at`](crate::RespCommands::split_at)
    /// and [`hold_back`](Self::hold_back)). Off by default.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use netloop_resp::{RespCommands, RespConfig, RespDecoderHandler};
    /// use netloop_transport::EmbeddedChannel;
    /// let handler = RespDecoderHandler::new(RespConfig::default()).unwrap().command_runs(true);
    /// let ch = EmbeddedChannel::new(vec![("resp-decoder", Rc::new(handler))]);
    /// ch.write_inbound(&b"*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"[..]);
    /// let run = ch.read_inbound().unwrap().downcast::<RespCommands>().unwrap();
    /// assert_eq!(run.len(), 2);
    /// assert!(ch.read_inbound().is_none());
    /// ```
    pub fn command_runs(mut self, on: bool) -> Self {
        self.command_runs = on;
        self.command_frames |= on;
        self
    }

    /// While the channel is not writable, fire no new value and stop reading (`autoRead`
    /// off meanwhile); go on when it is writable again. For servers: a client that pipelines
    /// commands without reading the replies is held back by TCP instead of growing the
    /// outbound buffer. By default on for a server's channels (accepted ones) and off for
    /// clients (a client would stop reading replies while its own commands cannot drain).
    ///
    /// ```
    /// use netloop_resp::{RespConfig, RespDecoderHandler};
    /// let handler = RespDecoderHandler::new(RespConfig::default()).unwrap().pause_while_unwritable(true);
    /// # let _ = handler;
    /// ```
    pub fn pause_while_unwritable(mut self, on: bool) -> Self {
        self.pause.enabled = Some(on);
        self
    }

    /// Whether decoding waits for the channel to be writable again.
    pub fn is_paused(&self) -> bool {
        self.pause.state.is_paused()
    }

    /// Whether the pause applies on `ctx`'s channel (see `pause_while_unwritable`).
    pub fn pauses(&self, ctx: &ChannelHandlerContext) -> bool {
        self.pause.active(ctx)
    }

    /// Takes back a value this decoder fired (at `ctx`) that its consumer did not start
    /// because the channel turned unwritable (a JS consumer sees a batch of values at once):
    /// it is fired again, in order and before anything new, once the channel is writable.
    /// Decoding and reading pause meanwhile.
    pub fn hold_back(&self, ctx: &ChannelHandlerContext, msg: Message) {
        self.pause
            .state
            .give_back(ctx, msg, RespDecoderHandler::resume);
    }

    /// True once a value of the decoder's latest firing was given back: the consumer gives
    /// back the values fired after it too.
    pub fn holds_firing(&self) -> bool {
        self.pause.state.holds_session()
    }

    /// Values given back and not fired again yet.
    pub fn held_len(&self) -> usize {
        self.pause.state.held_len()
    }

    /// Bytes received but not yet consumed by the decoder.
    pub fn buffered_len(&self) -> usize {
        self.state.borrow().buf.len()
    }

    /// Capacity of the cumulation buffer (for diagnostics and tests).
    pub fn buffer_capacity(&self) -> usize {
        self.state.borrow().buf.capacity()
    }

    /// Whether a protocol error stopped decoding on this channel.
    pub fn is_failed(&self) -> bool {
        self.state.borrow().decoder.is_failed()
    }

    /// Decodes and fires values until the cumulation yields no more.
    fn decode(&self, ctx: &ChannelHandlerContext) {
        loop {
            if self.pause.stops(ctx) {
                return;
            }
            let result = {
                let mut state = self.state.borrow_mut();
                let State { decoder, buf } = &mut *state;
                if self.command_runs {
                    match decoder.decode_commands(buf) {
                        Some(run) => Ok(Some(Message::user(run))),
                        None => decoder.decode(buf).map(|value| value.map(Message::user)),
                    }
                } else {
                    match self.command_frames.then(|| decoder.decode_command(buf)) {
                        Some(Some(command)) => Ok(Some(Message::user(command))),
                        _ => decoder.decode(buf).map(|value| value.map(Message::user)),
                    }
                }
            };
            match result {
                Ok(Some(message)) => {
                    self.pause.state.firing();
                    self.fired_value.set(true);
                    ctx.fire_channel_read(message);
                }
                Ok(None) => return,
                Err(error) => {
                    ctx.fire_exception_caught(error.into());
                    return;
                }
            }
            if ctx.is_removed() {
                return;
            }
        }
    }

    /// Fires what was given back, decodes what waited, then reads again unless it paused
    /// once more. Held values beyond one resume's share go on from the next task.
    fn resume(&self, ctx: &ChannelHandlerContext) {
        let p = &self.pause.state;
        p.resuming();
        if !p.can_resume(ctx) {
            return;
        }
        self.fired_value.set(false);
        let refired = p.refire_reads(ctx);
        if refired.done {
            p.continue_decoding();
            self.decode(ctx);
        }
        if self.fired_value.replace(false) | refired.fired {
            ctx.fire_channel_read_complete();
        }
        if !refired.done {
            p.resume_if_writable(ctx, RespDecoderHandler::resume);
            return;
        }
        if !p.is_paused() && ctx.try_channel().is_some_and(|ch| ch.is_open()) {
            p.unpause(ctx);
        }
    }

    /// Drops a partial value and the unconsumed bytes (end of input).
    fn discard(&self) {
        self.pause.state.drop_held();
        let mut state = self.state.borrow_mut();
        state.buf = BytesMut::new();
        if !state.decoder.is_failed() {
            state.decoder.reset();
        }
    }
}

impl std::fmt::Debug for RespDecoderHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RespDecoderHandler")
            .field("buffered", &self.buffered_len())
            .field("failed", &self.is_failed())
            .finish_non_exhaustive()
    }
}

impl ChannelHandler for RespDecoderHandler {
    // Reads passes by (the default method): the mask skips this context.
    fn takes_read(&self) -> bool {
        false
    }

    // Writes and flushes only pass by (the trait's methods): their walk skips this context.
    fn takes_write(&self) -> bool {
        false
    }
    fn takes_flush(&self) -> bool {
        false
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn handler_removed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.pause.state.fire_all_held(|m| ctx.fire_channel_read(m));
        let leftover = {
            let mut state = self.state.borrow_mut();
            std::mem::take(&mut state.buf).freeze()
        };
        if !leftover.is_empty() && !self.is_failed() {
            ctx.fire_channel_read(Message::Bytes(leftover));
            ctx.fire_channel_read_complete();
        }
        self.pause.state.unpause(ctx);
        Ok(())
    }

    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let bytes = match msg.into_bytes() {
            Ok(bytes) => bytes,
            Err(other) => {
                ctx.fire_channel_read(other);
                return Ok(());
            }
        };
        self.got_bytes.set(true);
        {
            let mut state = self.state.borrow_mut();
            if state.decoder.is_failed() {
                return Ok(());
            }
            append_to_cumulation(&mut state.buf, &bytes);
        }
        self.decode(ctx);
        Ok(())
    }

    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        let fired = self.fired_value.replace(false);
        let got_bytes = self.got_bytes.replace(false);
        if got_bytes && !fired && !self.is_failed() && !self.is_paused() {
            ctx.read_unless_auto_read();
        }
        ctx.fire_channel_read_complete();
        Ok(())
    }

    fn channel_writability_changed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.pause
            .state
            .resume_if_writable(ctx, RespDecoderHandler::resume);
        ctx.fire_channel_writability_changed();
        Ok(())
    }

    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.discard();
        ctx.fire_channel_inactive();
        Ok(())
    }

    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, event: UserEvent) -> HandlerResult {
        if event.is::<ChannelInputShutdown>() {
            self.discard();
        }
        ctx.fire_user_event_triggered(event);
        Ok(())
    }
}
