//! A decoder pausing while its channel is unwritable, with replies far larger than the
//! commands: what the channel queues stays near the high water mark (64 KiB), whether the
//! consumer answers each command as it comes (a native handler) or a whole read batch at
//! once, giving back what it cannot answer yet (as the JS delivery does).

use std::cell::RefCell;
use std::rc::Rc;

use netloop_resp::{RespCommand, RespCommands, RespConfig, RespDecoderHandler, RespValue};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, EmbeddedChannel, HandlerResult, Message,
};

const REPLY: usize = 64 * 1024;
const HIGH: usize = 64 * 1024;
/// What the outbound buffer counts per entry on top of its bytes.
const OVERHEAD: usize = 96;

/// `GET k<i>` for i in `from..to`, in one read.
fn gets(from: usize, to: usize) -> Vec<u8> {
    (from..to)
        .flat_map(|i| {
            let k = format!("k{i}");
            format!("*2\r\n$3\r\nGET\r\n${}\r\n{k}\r\n", k.len()).into_bytes()
        })
        .collect()
}

/// The index of the key `k<i>`.
fn index_of_key(k: &[u8]) -> usize {
    std::str::from_utf8(&k[1..]).unwrap().parse().unwrap()
}

/// The index in a `GET k<i>` command.
fn index_of(msg: &Message) -> usize {
    if let Some(c) = msg.downcast_ref::<RespCommand>() {
        return index_of_key(c.args().nth(1).expect("a key"));
    }
    let v = msg.downcast_ref::<RespValue>().expect("a RespValue");
    let RespValue::Array(items) = v else {
        panic!("not a command: {v:?}")
    };
    let RespValue::BulkString(k) = &items[1] else {
        panic!("no key")
    };
    std::str::from_utf8(&k[1..]).unwrap().parse().unwrap()
}

/// A reply of `size` bytes starting with the command's index.
fn reply(i: usize, size: usize) -> Message {
    let mut b = vec![b'x'; size];
    let tag = format!("{i:08}");
    b[..8].copy_from_slice(tag.as_bytes());
    Message::Bytes(b.into())
}

/// Answers commands with `REPLY`-byte replies, never flushing (a client that does not read),
/// either each as it comes (`batch` false) or all at `channel_read_complete`, giving back to
/// the decoder those that come after the channel turned unwritable.
struct Server {
    batch: bool,
    reply_size: usize,
    waiting: RefCell<Vec<Message>>,
    answered: RefCell<Vec<usize>>,
    /// The most bytes the channel had queued after a reply.
    peak: RefCell<usize>,
}

impl Server {
    fn new(batch: bool, reply_size: usize) -> Rc<Self> {
        Rc::new(Server {
            batch,
            reply_size,
            waiting: RefCell::default(),
            answered: RefCell::default(),
            peak: RefCell::default(),
        })
    }

    fn answer(&self, ctx: &ChannelHandlerContext, msg: &Message) {
        let i = index_of(msg);
        ctx.write(reply(i, self.reply_size));
        self.answered.borrow_mut().push(i);
        let queued = ctx.channel().pending_outbound_bytes();
        let mut peak = self.peak.borrow_mut();
        *peak = (*peak).max(queued);
    }
}

impl Server {
    /// A run's commands in order; from the first that finds the channel unwritable on, the
    /// run goes back to the decoder (split there), as the JS delivery gives a record back.
    fn answer_run(
        &self,
        ctx: &ChannelHandlerContext,
        decoder_ctx: &ChannelHandlerContext,
        decoder: &RespDecoderHandler,
        mut run: RespCommands,
    ) {
        let mut stop = None;
        for (k, mut args) in run.iter().enumerate() {
            if decoder.holds_firing() || !ctx.channel().is_writable() {
                stop = Some(k);
                break;
            }
            let i = index_of_key(args.nth(1).expect("a key"));
            ctx.write(reply(i, self.reply_size));
            self.answered.borrow_mut().push(i);
            let queued = ctx.channel().pending_outbound_bytes();
            let mut peak = self.peak.borrow_mut();
            *peak = (*peak).max(queued);
        }
        if let Some(k) = stop {
            let rest = if k == 0 { Some(run) } else { run.split_at(k) };
            decoder.hold_back(decoder_ctx, Message::user(rest.expect("a tail")));
        }
    }
}

impl ChannelHandler for Server {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        if self.batch {
            self.waiting.borrow_mut().push(msg);
        } else {
            self.answer(ctx, &msg);
        }
        Ok(())
    }

    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        let waiting = std::mem::take(&mut *self.waiting.borrow_mut());
        let decoder_ctx = ctx.pipeline().context("resp").expect("the decoder");
        let decoder = decoder_ctx.handler();
        let decoder = decoder
            .as_any()
            .and_then(|a| a.downcast_ref::<RespDecoderHandler>())
            .expect("a RespDecoderHandler");
        for msg in waiting {
            let msg = match msg.downcast::<RespCommands>() {
                Ok(run) => {
                    self.answer_run(ctx, &decoder_ctx, decoder, run);
                    continue;
                }
                Err(msg) => msg,
            };
            if decoder.holds_firing() || !ctx.channel().is_writable() {
                decoder.hold_back(&decoder_ctx, msg);
            } else {
                self.answer(ctx, &msg);
            }
        }
        Ok(())
    }
}

fn server(batch: bool) -> (EmbeddedChannel, Rc<RespDecoderHandler>, Rc<Server>) {
    server_with(batch, REPLY)
}

fn server_with(
    batch: bool,
    reply_size: usize,
) -> (EmbeddedChannel, Rc<RespDecoderHandler>, Rc<Server>) {
    server_of(batch, reply_size, false)
}

/// A batching server whose decoder fires runs of commands (as the JS binding's does).
fn run_server(reply_size: usize) -> (EmbeddedChannel, Rc<RespDecoderHandler>, Rc<Server>) {
    server_of(true, reply_size, true)
}

fn server_of(
    batch: bool,
    reply_size: usize,
    runs: bool,
) -> (EmbeddedChannel, Rc<RespDecoderHandler>, Rc<Server>) {
    let d = Rc::new(
        RespDecoderHandler::new(RespConfig::default())
            .expect("valid config")
            .pause_while_unwritable(true)
            .command_runs(runs),
    );
    let s = Server::new(batch, reply_size);
    let ch = EmbeddedChannel::new(vec![("resp", d.clone()), ("server", s.clone())]);
    (ch, d, s)
}

/// The client reads everything queued: the channel drains and the decoder resumes.
fn client_reads(ch: &EmbeddedChannel) {
    ch.channel().flush();
    while ch.read_outbound().is_some() {}
    ch.run_pending_tasks();
}

#[test]
fn a_native_server_answering_64_kib_per_get_queues_one_reply_past_the_high_water_mark() {
    let (ch, d, s) = server(false);
    ch.write_inbound(gets(0, 1000));
    assert_eq!(*s.answered.borrow(), [0], "the first reply passed the mark");
    assert!(d.is_paused() && !ch.channel().is_auto_read());
    assert!(*s.peak.borrow() <= HIGH + REPLY + OVERHEAD);
    assert_eq!(d.held_len(), 0, "the rest waits as bytes, undecoded");
    client_reads(&ch);
    assert_eq!(*s.answered.borrow(), [0, 1]);
}

#[test]
fn a_batching_server_gives_back_what_follows_the_reply_that_made_the_channel_unwritable() {
    let (ch, d, s) = server(true);
    ch.write_inbound(gets(0, 1000));
    assert_eq!(
        *s.answered.borrow(),
        [0],
        "one reply, then the channel was unwritable"
    );
    assert_eq!(d.held_len(), 999, "the others went back to the decoder");
    assert!(
        d.is_paused() && !ch.channel().is_auto_read(),
        "reading stopped"
    );
    let queued = ch.channel().pending_outbound_bytes();
    assert!(queued <= HIGH + REPLY + OVERHEAD, "{queued} bytes queued");
}

#[test]
fn given_back_commands_come_again_in_order_and_the_queue_stays_bounded_until_all_are_answered() {
    let (ch, d, s) = server(true);
    ch.write_inbound(gets(0, 300));
    let mut rounds = 0;
    while s.answered.borrow().len() < 300 {
        rounds += 1;
        assert!(
            rounds < 1000,
            "stuck at {} answered",
            s.answered.borrow().len()
        );
        client_reads(&ch);
    }
    let answered = s.answered.borrow().clone();
    assert_eq!(
        answered,
        (0..300).collect::<Vec<_>>(),
        "every command once, in order"
    );
    assert!(
        *s.peak.borrow() <= HIGH + REPLY + OVERHEAD,
        "peak {} bytes",
        s.peak.borrow()
    );
    assert_eq!(d.held_len(), 0);
    assert!(
        !d.is_paused() && ch.channel().is_auto_read(),
        "reading again"
    );
}

#[test]
fn commands_read_while_others_are_held_come_after_them() {
    let (ch, _, s) = server(true);
    ch.write_inbound(gets(0, 10));
    assert_eq!(*s.answered.borrow(), [0]);
    // Bytes in flight when reading stopped: decoded only after the held commands.
    ch.write_inbound(gets(10, 20));
    for _ in 0..100 {
        client_reads(&ch);
    }
    assert_eq!(*s.answered.borrow(), (0..20).collect::<Vec<_>>());
}

#[test]
fn the_pause_is_off_by_default_on_a_channel_without_a_parent_a_client() {
    let d = Rc::new(RespDecoderHandler::new(RespConfig::default()).expect("valid config"));
    let ch = EmbeddedChannel::new(vec![("resp", d.clone() as Rc<dyn ChannelHandler>)]);
    let ctx = ch.pipeline().context("resp").expect("the decoder");
    assert!(!d.pauses(&ctx));
}

#[test]
fn more_given_back_commands_than_one_resume_fires_still_come_in_order() {
    // Small replies: a few hundred per round, 3000 commands held at first (more than
    // `REFIRE_LIMIT`, which a resume fires before it lets the consumer see them).
    let (ch, d, s) = server_with(true, 100);
    ch.write_inbound(gets(0, 3000));
    assert!(d.held_len() > netloop_transport::REFIRE_LIMIT);
    for _ in 0..200 {
        if s.answered.borrow().len() == 3000 {
            break;
        }
        client_reads(&ch);
    }
    assert_eq!(*s.answered.borrow(), (0..3000).collect::<Vec<_>>());
    assert!(*s.peak.borrow() <= HIGH + 100 + OVERHEAD);
}

#[test]
fn a_server_taking_runs_gives_back_the_rest_of_a_run_from_the_command_after_the_mark() {
    let (ch, d, s) = run_server(REPLY);
    ch.write_inbound(gets(0, 1000));
    assert_eq!(
        *s.answered.borrow(),
        [0],
        "one reply, then the channel was unwritable"
    );
    assert_eq!(d.held_len(), 1, "the other 999 went back as one run");
    assert!(
        d.is_paused() && !ch.channel().is_auto_read(),
        "reading stopped"
    );
    assert!(ch.channel().pending_outbound_bytes() <= HIGH + REPLY + OVERHEAD);
}

#[test]
fn runs_given_back_in_part_come_again_in_order_with_the_queue_bounded() {
    for (reply_size, n) in [(REPLY, 300), (100, 3000)] {
        let (ch, d, s) = run_server(reply_size);
        ch.write_inbound(gets(0, n / 2));
        // Bytes in flight when reading stopped: decoded only after the held commands.
        ch.write_inbound(gets(n / 2, n));
        for _ in 0..1000 {
            if s.answered.borrow().len() == n {
                break;
            }
            client_reads(&ch);
        }
        assert_eq!(
            *s.answered.borrow(),
            (0..n).collect::<Vec<_>>(),
            "every command once, in order"
        );
        assert!(
            *s.peak.borrow() <= HIGH + reply_size + OVERHEAD,
            "peak {} bytes",
            s.peak.borrow()
        );
        assert_eq!(d.held_len(), 0);
        assert!(
            !d.is_paused() && ch.channel().is_auto_read(),
            "reading again"
        );
    }
}
