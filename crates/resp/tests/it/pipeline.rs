//! The RESP decoder in a pipeline, on `EmbeddedChannel`s: values, command frames and runs,
//! errors, read control, removal, end of input, and large values in small reads.

use std::rc::Rc;
use std::time::{Duration, Instant};

use netloop_resp::bytes::{Bytes, BytesMut};
use netloop_resp::{
    RespCommand, RespCommands, RespConfig, RespDecoderHandler, RespError, RespValue,
};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, ChannelOptions, EmbeddedChannel, HandlerResult, Message,
    ReadCounter,
};

use super::recorder::{channel, decoder, inbound, set, Ev, Recorder};

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
