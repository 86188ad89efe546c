//! The RESP handlers in a pipeline, on `EmbeddedChannel`s: values, errors, read control,
//! removal, end of input, encoding, and a small server.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use netloop_resp::bytes::{Bytes, BytesMut};
use netloop_resp::{
    encode, RespCommand, RespCommands, RespConfig, RespDecoderHandler, RespEncoder, RespError,
    RespValue, GATHER_THRESHOLD,
};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, ChannelOptions, EmbeddedChannel, HandlerResult, Message,
    ReadCounter, TransportError,
};

/// One inbound event reaching the end of the pipeline.
#[derive(Debug, Clone, PartialEq)]
enum Ev {
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
struct Recorder(RefCell<Vec<Ev>>);

impl Recorder {
    fn take(&self) -> Vec<Ev> {
        std::mem::take(&mut *self.0.borrow_mut())
    }

    fn take_values(&self) -> Vec<RespValue> {
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

fn decoder(config: RespConfig) -> Rc<RespDecoderHandler> {
    Rc::new(RespDecoderHandler::new(config).expect("valid config"))
}

/// decoder → recorder.
fn channel(config: RespConfig) -> (EmbeddedChannel, Rc<RespDecoderHandler>, Rc<Recorder>) {
    let d = decoder(config);
    let rec = Rc::new(Recorder::default());
    let ch = EmbeddedChannel::new(vec![("resp", d.clone()), ("recorder", rec.clone())]);
    (ch, d, rec)
}

fn inbound(ch: &EmbeddedChannel, data: &[u8]) {
    ch.write_inbound(data.to_vec());
}

fn set(i: usize) -> RespValue {
    RespValue::command(["SET".to_string(), format!("key{i}"), "value".to_string()])
}

#[test]
fn pipelined_commands_in_one_read_fire_one_value_each_in_order_then_one_read_complete() {
    let (ch, _, rec) = channel(RespConfig::default());
    let mut wire = BytesMut::new();
    (0..16).for_each(|i| set(i).encode(&mut wire));
    wire.extend_from_slice(b"PING\r\n");
    ch.write_inbound(wire.freeze());
    let mut expected: Vec<Ev> = (0..16).map(|i| Ev::Value(set(i))).collect();
    expected.push(Ev::Value(RespValue::command(["PING"])));
    expected.push(Ev::ReadComplete);
    assert_eq!(rec.take(), expected);
}

#[test]
fn with_command_frames_whole_commands_fire_as_frames_and_everything_else_as_values() {
    let d = Rc::new(
        RespDecoderHandler::new(RespConfig::default())
            .expect("valid config")
            .command_frames(true),
    );
    let rec = Rc::new(Recorder::default());
    let ch = EmbeddedChannel::new(vec![("resp", d), ("recorder", rec.clone())]);
    let mut wire = BytesMut::new();
    (0..3).for_each(|i| set(i).encode(&mut wire));
    wire.extend_from_slice(b"PING\r\n+OK\r\n*2\r\n$3\r\nGET\r\n$1\r\n");
    ch.write_inbound(wire.freeze());
    // The GET's last part is missing: its header is taken now, so it ends as a value.
    inbound(&ch, b"k\r\n*1\r\n$4\r\nPING\r\n");
    let expected = vec![
        Ev::Command(set(0)),
        Ev::Command(set(1)),
        Ev::Command(set(2)),
        Ev::Value(RespValue::command(["PING"])), // inline
        Ev::Value(RespValue::simple("OK")),
        Ev::ReadComplete,
        Ev::Value(RespValue::command(["GET", "k"])),
        Ev::Command(RespValue::command(["PING"])),
        Ev::ReadComplete,
    ];
    assert_eq!(rec.take(), expected);
}

#[test]
fn with_command_runs_the_whole_commands_back_to_back_fire_as_one_run_and_everything_else_as_before()
{
    let d = Rc::new(
        RespDecoderHandler::new(RespConfig::default())
            .expect("valid config")
            .command_runs(true),
    );
    let rec = Rc::new(Recorder::default());
    let ch = EmbeddedChannel::new(vec![("resp", d), ("recorder", rec.clone())]);
    let mut wire = BytesMut::new();
    (0..3).for_each(|i| set(i).encode(&mut wire));
    wire.extend_from_slice(b"PING\r\n");
    (3..5).for_each(|i| set(i).encode(&mut wire));
    wire.extend_from_slice(b"+OK\r\n*2\r\n$3\r\nGET\r\n$1\r\n");
    ch.write_inbound(wire.freeze());
    // The GET's last part is missing: its header is taken now, so it ends as a value.
    inbound(&ch, b"k\r\n*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n");
    let expected = vec![
        Ev::Run((0..3).map(set).collect()),
        Ev::Value(RespValue::command(["PING"])), // inline
        Ev::Run((3..5).map(set).collect()),
        Ev::Value(RespValue::simple("OK")),
        Ev::ReadComplete,
        Ev::Value(RespValue::command(["GET", "k"])),
        Ev::Run(vec![
            RespValue::command(["PING"]),
            RespValue::command(["PING"]),
        ]),
        Ev::ReadComplete,
    ];
    assert_eq!(rec.take(), expected);
}

#[test]
fn a_run_split_before_a_command_keeps_the_ones_before_and_gives_the_rest() {
    let mut decoder = netloop_resp::RespDecoder::new(RespConfig::default()).expect("valid config");
    let mut wire = BytesMut::new();
    (0..5).for_each(|i| set(i).encode(&mut wire));
    let mut run = decoder.decode_commands(&mut wire).expect("a run");
    assert!(wire.is_empty());
    assert!(
        run.split_at(0).is_none() && run.split_at(5).is_none(),
        "out of range"
    );
    let tail = run.split_at(2).expect("a tail");
    let values = |r: &RespCommands| {
        r.to_commands()
            .iter()
            .map(RespCommand::to_value)
            .collect::<Vec<_>>()
    };
    assert_eq!(values(&run), (0..2).map(set).collect::<Vec<_>>());
    assert_eq!(values(&tail), (2..5).map(set).collect::<Vec<_>>());
    assert_eq!(tail.iter().map(|a| a.len()).collect::<Vec<_>>(), [3, 3, 3]);
}

#[test]
fn a_stream_split_at_every_byte_boundary_fires_the_same_values() {
    let wire: &[u8] = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n%1\r\n+a\r\n,2.5\r\nECHO \"x y\"\r\n|1\r\n+t\r\n:1\r\n_\r\n";
    let (ch, _, rec) = channel(RespConfig::default());
    inbound(&ch, wire);
    let expected = rec.take_values();
    assert_eq!(expected.len(), 4);
    for cut in 0..=wire.len() {
        let (ch, d, rec) = channel(RespConfig::default());
        inbound(&ch, &wire[..cut]);
        inbound(&ch, &wire[cut..]);
        assert_eq!(rec.take_values(), expected, "cut at {cut}");
        assert_eq!(d.buffered_len(), 0);
    }
}

#[test]
fn a_protocol_error_fires_once_after_the_values_before_it_and_later_bytes_are_dropped() {
    let (ch, d, rec) = channel(RespConfig::default());
    inbound(&ch, b"+before\r\n$abc\r\n+after\r\n");
    assert_eq!(
        rec.take(),
        [
            Ev::Value(RespValue::simple("before")),
            Ev::Exception("ERR_RESP_BAD_LENGTH".into()),
            Ev::ReadComplete
        ]
    );
    assert!(d.is_failed());
    assert_eq!(d.buffered_len(), 0);
    inbound(&ch, b"+more\r\n");
    assert_eq!(
        rec.take(),
        [Ev::ReadComplete],
        "nothing decoded after the error"
    );
    assert_eq!(d.buffered_len(), 0, "dropped bytes are not kept");
}

#[test]
fn the_typed_error_is_recoverable_from_exception_caught() {
    let ch = EmbeddedChannel::new(vec![("resp", decoder(RespConfig::default()))]);
    inbound(&ch, b"*1\r\n$536870913\r\n");
    let error = ch.check_exception().unwrap_err();
    assert_eq!(error.code(), "ERR_RESP_BULK_TOO_LONG");
    let typed = error
        .foreign_source()
        .and_then(|e| e.downcast_ref::<RespError>());
    assert_eq!(
        typed,
        Some(&RespError::BulkTooLong {
            length: 536_870_913,
            max: 536_870_912
        })
    );
}

#[test]
fn limits_and_malformed_input_reach_exception_caught_with_their_codes() {
    let tight = RespConfig {
        max_bulk_length: 8,
        max_array_length: 3,
        max_nesting_depth: 2,
        max_inline_length: 40,
        ..RespConfig::default()
    };
    let inline = format!("SET k {}\r\n", "v".repeat(40));
    let cases: &[(&[u8], &str)] = &[
        (b"*1\r\n$9\r\n", "ERR_RESP_BULK_TOO_LONG"),
        (b"*4\r\n", "ERR_RESP_ARRAY_TOO_LONG"),
        (b"*1\r\n*1\r\n*1\r\n", "ERR_RESP_TOO_DEEP"),
        (inline.as_bytes(), "ERR_RESP_INLINE_TOO_LONG"),
        (b"*1\r\n@\r\n", "ERR_RESP_BAD_TYPE"),
        (b"*x\r\n", "ERR_RESP_BAD_LENGTH"),
        (b":12z\r\n", "ERR_RESP_BAD_VALUE"),
        (b"$1\r\nab\r\n", "ERR_RESP_MISSING_CRLF"),
        (b"ECHO 'a\r\n", "ERR_RESP_BAD_INLINE"),
    ];
    for (wire, code) in cases {
        let (ch, _, rec) = channel(tight.clone());
        inbound(&ch, wire);
        assert_eq!(
            rec.take(),
            [Ev::Exception(code.to_string()), Ev::ReadComplete]
        );
    }
}

#[test]
fn messages_that_are_not_bytes_pass_through_unchanged() {
    let (ch, _, rec) = channel(RespConfig::default());
    inbound(&ch, b"+par");
    ch.write_inbound(Message::user(7u32));
    inbound(&ch, b"tial\r\n");
    let events: Vec<Ev> = rec
        .take()
        .into_iter()
        .filter(|e| *e != Ev::ReadComplete)
        .collect();
    assert_eq!(events, [Ev::Other, Ev::Value(RespValue::simple("partial"))]);
}

#[test]
fn without_auto_read_a_partial_value_asks_for_another_read() {
    let ch = EmbeddedChannel::unregistered(ChannelOptions {
        auto_read: false,
        ..ChannelOptions::default()
    });
    let counter = Rc::new(ReadCounter::default());
    let rec = Rc::new(Recorder::default());
    ch.pipeline().add_last("reads", counter.clone()).unwrap();
    ch.pipeline()
        .add_last("resp", decoder(RespConfig::default()))
        .unwrap();
    ch.pipeline().add_last("recorder", rec.clone()).unwrap();
    ch.register();
    let before = counter.reads();
    inbound(&ch, b"*1\r\n$4\r\nPI");
    assert_eq!(counter.reads(), before + 1, "partial value: read more");
    inbound(&ch, b"NG\r\n");
    assert_eq!(
        counter.reads(),
        before + 1,
        "a value was fired: the application decides"
    );
    assert_eq!(rec.take_values(), [RespValue::command(["PING"])]);
}

#[test]
fn removing_the_decoder_between_values_forwards_the_unread_bytes() {
    // A protocol switch: the handler of the first command removes the decoder.
    struct Switch;
    impl ChannelHandler for Switch {
        fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
            let switch = msg.downcast_ref::<RespValue>().is_some();
            ctx.fire_channel_read(msg);
            if switch {
                ctx.pipeline().remove("resp").unwrap();
            }
            Ok(())
        }
    }
    let rec = Rc::new(Recorder::default());
    let ch = EmbeddedChannel::new(vec![
        ("resp", decoder(RespConfig::default())),
        ("switch", Rc::new(Switch)),
        ("recorder", rec.clone()),
    ]);
    inbound(&ch, b"SWITCH\r\n+raw bytes\r\n");
    let events: Vec<Ev> = rec
        .take()
        .into_iter()
        .filter(|e| *e != Ev::ReadComplete)
        .collect();
    assert_eq!(
        events,
        [
            Ev::Value(RespValue::command(["SWITCH"])),
            Ev::Bytes(b"+raw bytes\r\n".to_vec())
        ]
    );
}

#[test]
fn end_of_input_drops_a_partial_value_and_passes_inactive_on() {
    let (ch, d, rec) = channel(RespConfig::default());
    inbound(&ch, b"*2\r\n$3\r\nGET\r\n$1\r\n");
    assert_eq!(rec.take_values(), [], "the value is incomplete");
    ch.close();
    let events: Vec<Ev> = rec
        .take()
        .into_iter()
        .filter(|e| *e != Ev::ReadComplete)
        .collect();
    assert_eq!(events, [Ev::Inactive]);
    assert_eq!(d.buffered_len(), 0);
}

/// How much slower than native the CPU running the tests is: `NETLOOP_TEST_TIME_SCALE` (set by
/// scripts/arm64.sh for qemu), 1 by default.
fn time_scale() -> u32 {
    std::env::var("NETLOOP_TEST_TIME_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// Feeds `wire` in `piece`-byte reads; returns the values and the time it took.
fn feed(wire: &[u8], piece: usize) -> (Vec<RespValue>, Duration, usize) {
    let (ch, d, rec) = channel(RespConfig::default());
    let start = Instant::now();
    let mut max_capacity = 0;
    for chunk in wire.chunks(piece) {
        ch.pipeline()
            .fire_channel_read(Bytes::copy_from_slice(chunk));
        max_capacity = max_capacity.max(d.buffer_capacity());
    }
    ch.pipeline().fire_channel_read_complete();
    (rec.take_values(), start.elapsed(), max_capacity)
}

#[test]
fn a_one_mib_bulk_string_in_1_byte_and_4_kib_reads_decodes_in_linear_time_and_memory() {
    let payload = Bytes::from(vec![b'x'; 1 << 20]);
    let command = RespValue::Array(vec![
        RespValue::bulk("SET"),
        RespValue::bulk("k"),
        RespValue::bulk(payload),
    ]);
    let wire = command.to_bytes();
    for piece in [1, 4096] {
        let (values, elapsed, max_capacity) = feed(&wire, piece);
        assert_eq!(values, std::slice::from_ref(&command), "piece {piece}");
        // Re-scanning or re-copying the payload per read would be ~10^12 byte operations
        // for 1-byte reads: minutes, not seconds, even in a release build. An emulated CPU
        // (the aarch64 tests under qemu, scripts/arm64.sh) is several times slower: it scales the bound.
        assert!(
            elapsed < Duration::from_secs(20) * time_scale(),
            "piece {piece}: {elapsed:?}"
        );
        assert!(
            max_capacity <= 4 << 20,
            "piece {piece}: buffer grew to {max_capacity}"
        );
    }
}

#[test]
fn the_encoder_writes_values_as_resp_and_passes_bytes_through() {
    let ch = EmbeddedChannel::new(vec![("encoder", Rc::new(RespEncoder::new()))]);
    ch.write_outbound(RespValue::command(["GET", "k"]));
    let mut raw = BytesMut::new();
    encode::write_integer(&mut raw, 42);
    ch.write_outbound(raw.freeze());
    ch.write_outbound(Message::user(5u32));
    let first = ch.read_outbound().unwrap();
    assert_eq!(first.as_bytes().unwrap(), "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    assert_eq!(ch.read_outbound().unwrap().as_bytes().unwrap(), ":42\r\n");
    assert_eq!(ch.read_outbound().unwrap().downcast::<u32>().ok(), Some(5));
}

#[test]
fn a_large_bulk_payload_goes_out_without_a_copy_and_the_promise_completes() {
    let ch = EmbeddedChannel::new(vec![("encoder", Rc::new(RespEncoder::new()))]);
    let payload = Bytes::from(vec![7u8; GATHER_THRESHOLD]);
    let future = ch.channel().write_future(RespValue::bulk(payload.clone()));
    ch.channel().flush();
    ch.run_pending_tasks();
    let parts: Vec<Bytes> = std::iter::from_fn(|| ch.read_outbound())
        .map(|m| m.into_bytes().unwrap())
        .collect();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[0], "$4096\r\n");
    assert_eq!(parts[1].as_ptr(), payload.as_ptr(), "payload not copied");
    assert_eq!(parts[2], "\r\n");
    assert!(matches!(future.result(), Some(Ok(()))));
}

/// A tiny server: PING → PONG, anything else → the command echoed as an array; a protocol
/// error → Redis's error reply, then close.
struct Server;

impl ChannelHandler for Server {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let Ok(command) = msg.downcast::<RespValue>() else {
            return Ok(());
        };
        let args = command.command_args().unwrap_or_default();
        if args
            .first()
            .is_some_and(|a| a.eq_ignore_ascii_case(b"PING"))
        {
            ctx.write(RespValue::simple("PONG"));
        } else {
            ctx.write(command);
        }
        Ok(())
    }
    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.flush();
        Ok(())
    }
    fn exception_caught(
        &self,
        ctx: &ChannelHandlerContext,
        error: TransportError,
    ) -> HandlerResult {
        if let Some(resp) = error
            .foreign_source()
            .and_then(|e| e.downcast_ref::<RespError>())
        {
            let mut reply = BytesMut::new();
            encode::write_error(&mut reply, resp.reply_text().as_bytes());
            ctx.write_and_flush(reply.freeze());
            ctx.close();
        }
        Ok(())
    }
}

#[test]
fn a_server_pipeline_answers_pipelined_commands_and_closes_on_a_protocol_error() {
    let ch = EmbeddedChannel::new(vec![
        ("encoder", Rc::new(RespEncoder::new())),
        ("decoder", decoder(RespConfig::default())),
        ("server", Rc::new(Server)),
    ]);
    inbound(&ch, b"PING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\nping\r\n");
    let mut out = Vec::new();
    while let Some(m) = ch.read_outbound() {
        out.extend_from_slice(m.as_bytes().unwrap());
    }
    assert_eq!(out, b"+PONG\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n+PONG\r\n");
    inbound(&ch, b"*1\r\n$-5\r\n");
    let reply = ch.read_outbound().unwrap();
    assert_eq!(
        reply.as_bytes().unwrap(),
        "-ERR Protocol error: invalid bulk length\r\n"
    );
    assert!(
        !ch.channel().is_active(),
        "the server closed the connection"
    );
}

/// decoder (pausing while unwritable when `pause`) → recorder, and a write of 100 KiB that
/// is not flushed yet: the channel is past its high water mark (64 KiB).
fn unwritable_channel(pause: bool) -> (EmbeddedChannel, Rc<RespDecoderHandler>, Rc<Recorder>) {
    let d = Rc::new(
        RespDecoderHandler::new(RespConfig::default())
            .expect("valid config")
            .pause_while_unwritable(pause),
    );
    let rec = Rc::new(Recorder::default());
    let ch = EmbeddedChannel::new(vec![("resp", d.clone()), ("recorder", rec.clone())]);
    inbound(&ch, b"PING\r\n");
    assert_eq!(rec.take_values(), [RespValue::command(["PING"])]);
    ch.channel().write(Bytes::from(vec![b'x'; 100 * 1024]));
    assert!(!ch.channel().is_writable());
    (ch, d, rec)
}

#[test]
fn pausing_while_unwritable_fires_no_value_and_stops_reading_until_the_channel_drains() {
    let (ch, d, rec) = unwritable_channel(true);
    inbound(&ch, b"PING\r\nECHO a\r\n");
    assert_eq!(rec.take_values(), [], "nothing decoded while unwritable");
    assert!(d.is_paused());
    assert_eq!(d.buffered_len(), 14, "the bytes wait in the decoder");
    assert!(!ch.channel().is_auto_read(), "and reading stops");
    inbound(&ch, b"PING\r\n");
    assert_eq!(
        rec.take_values(),
        [],
        "bytes already in flight are kept, not decoded"
    );
    ch.channel().flush();
    assert!(ch.channel().is_writable());
    ch.run_pending_tasks();
    assert_eq!(
        rec.take(),
        [
            Ev::Value(RespValue::command(["PING"])),
            Ev::Value(RespValue::command(["ECHO", "a"])),
            Ev::Value(RespValue::command(["PING"])),
            Ev::ReadComplete
        ],
        "writable again: what waited is decoded, in order"
    );
    assert!(!d.is_paused());
    assert!(ch.channel().is_auto_read(), "and reading resumes");
}

#[test]
fn without_the_option_values_keep_coming_while_the_channel_is_not_writable() {
    let (ch, d, rec) = unwritable_channel(false);
    inbound(&ch, b"PING\r\nECHO a\r\n");
    assert_eq!(rec.take_values().len(), 2);
    assert!(!d.is_paused());
    assert!(ch.channel().is_auto_read());
}

#[test]
fn a_paused_decoder_that_leaves_the_pipeline_hands_over_its_bytes_and_reading() {
    let (ch, _, rec) = unwritable_channel(true);
    inbound(&ch, b"PING\r\n");
    assert_eq!(rec.take(), [Ev::ReadComplete], "held");
    assert!(!ch.channel().is_auto_read());
    ch.pipeline().remove("resp").expect("removed");
    assert_eq!(
        rec.take(),
        [Ev::Bytes(b"PING\r\n".to_vec()), Ev::ReadComplete]
    );
    assert!(ch.channel().is_auto_read());
}
