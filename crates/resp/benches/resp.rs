//! RESP decode and encode costs per command, reads of 16 pipelined commands (what
//! `redis-benchmark -P 16` sends). Criterion's throughput is in commands, so its time per
//! element is the cost of one command.
//!
//! - `decode/set_p16`: `SET key value` as RESP arrays, through the pure decoder with the
//!   handler's cumulation (one copy of each read, then one value per command).
//! - `decode/ping_inline_p16`: `PING\r\n` inline commands, the same way.
//! - `handler/set_p16`: the same SET reads through `RespDecoderHandler` on an embedded
//!   channel, each value fired to a handler that drops it (pipeline cost included).
//! - `encode/replies_p16`: `+OK`, an integer and a bulk reply written with the encode helpers.
//!
//! Run: `cargo bench -p netloop-resp --bench resp`; ns per command = 1000 / (Melem/s), or
//! the time per iteration / 1024.

use std::hint::black_box;
use std::rc::Rc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netloop_resp::bytes::{Bytes, BytesMut};
use netloop_resp::{encode, RespConfig, RespDecoder, RespDecoderHandler, RespValue};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, EmbeddedChannel, HandlerResult, Message,
};

const PIPELINE: usize = 16;
const READS: usize = 64;

/// One read: 16 commands made by `command(i)`.
fn read_of(command: impl Fn(usize) -> Vec<u8>) -> Bytes {
    let mut read = Vec::new();
    for i in 0..PIPELINE {
        read.extend_from_slice(&command(i));
    }
    Bytes::from(read)
}

fn set_command(i: usize) -> Vec<u8> {
    let key = format!("key:{:012}", i);
    RespValue::command([b"SET".to_vec(), key.into_bytes(), b"value".to_vec()])
        .to_bytes()
        .to_vec()
}

/// Decodes `READS` copies of `read`; returns the number of commands.
fn decode_reads(read: &[u8]) -> usize {
    let mut decoder = RespDecoder::new(RespConfig::default()).expect("valid config");
    let mut buf = BytesMut::new();
    let mut commands = 0;
    for _ in 0..READS {
        buf.extend_from_slice(read);
        while let Some(value) = decoder.decode(&mut buf).expect("valid input") {
            black_box(&value);
            commands += 1;
        }
    }
    commands
}

struct Drop;

impl ChannelHandler for Drop {
    fn channel_read(&self, _: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        black_box(msg);
        Ok(())
    }
}

fn bench(c: &mut Criterion) {
    let set = read_of(set_command);
    let ping = read_of(|_| b"PING\r\n".to_vec());
    assert_eq!(decode_reads(&set), PIPELINE * READS);
    assert_eq!(decode_reads(&ping), PIPELINE * READS);

    let mut group = c.benchmark_group("decode");
    group.throughput(Throughput::Elements((PIPELINE * READS) as u64));
    group.bench_function("set_p16", |b| b.iter(|| decode_reads(black_box(&set))));
    group.bench_function("ping_inline_p16", |b| {
        b.iter(|| decode_reads(black_box(&ping)))
    });
    group.finish();

    let mut group = c.benchmark_group("handler");
    group.throughput(Throughput::Elements((PIPELINE * READS) as u64));
    let decoder = Rc::new(RespDecoderHandler::new(RespConfig::default()).expect("valid config"));
    let ch = EmbeddedChannel::new(vec![("resp", decoder), ("drop", Rc::new(Drop))]);
    group.bench_function("set_p16", |b| {
        b.iter(|| {
            for _ in 0..READS {
                ch.pipeline().fire_channel_read(set.clone());
                ch.pipeline().fire_channel_read_complete();
            }
        })
    });
    group.finish();

    let mut group = c.benchmark_group("encode");
    group.throughput(Throughput::Elements((PIPELINE * READS) as u64));
    let mut out = BytesMut::with_capacity(64 * 1024);
    group.bench_function("replies_p16", |b| {
        b.iter(|| {
            for _ in 0..READS {
                out.clear();
                for i in 0..PIPELINE {
                    match i % 3 {
                        0 => encode::write_simple(&mut out, b"OK"),
                        1 => encode::write_integer(&mut out, i as i64),
                        _ => encode::write_bulk(&mut out, b"value"),
                    }
                }
                black_box(&out);
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
