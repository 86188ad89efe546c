//! Frames per second of each frame decoder (and the prepender) over a prebuilt stream.
//!
//! Each iteration decodes a stream of `FRAMES` frames of `PAYLOAD` bytes, fed through a
//! `Cumulator` in `READ_SIZE` chunks as socket reads would deliver it, so cumulation,
//! partial frames at read boundaries and frame extraction are all measured.

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use netloop_codec::bytes::BytesMut;
use netloop_codec::{
    Cumulator, DelimiterBasedFrameDecoder, Delimiters, FixedLengthFrameDecoder, FrameDecoder,
    LengthFieldBasedFrameDecoder, LengthFieldConfig, LengthFieldPrepender, LineBasedFrameDecoder,
};

const FRAMES: usize = 10_000;
const PAYLOAD: usize = 32;
const READ_SIZE: usize = 16 * 1024;

fn payload(i: usize) -> Vec<u8> {
    (0..PAYLOAD).map(|j| b'a' + ((i + j) % 26) as u8).collect()
}

fn delimited_stream(delimiter: &[u8]) -> Vec<u8> {
    let mut stream = Vec::with_capacity(FRAMES * (PAYLOAD + delimiter.len()));
    for i in 0..FRAMES {
        stream.extend_from_slice(&payload(i));
        stream.extend_from_slice(delimiter);
    }
    stream
}

fn length_field_stream(prepender: &LengthFieldPrepender) -> Vec<u8> {
    let mut stream = BytesMut::new();
    for i in 0..FRAMES {
        prepender
            .encode(&payload(i), &mut stream)
            .expect("payload fits");
    }
    stream.to_vec()
}

/// Decodes `stream` read by read; returns the number of frames.
fn decode_stream<D: FrameDecoder>(decoder: D, stream: &[u8]) -> usize {
    let mut cumulator = Cumulator::new(decoder);
    let mut out = Vec::with_capacity(1024);
    let mut frames = 0;
    for read in stream.chunks(READ_SIZE) {
        cumulator.feed(read, &mut out);
        frames += out.iter().filter(|r| r.is_ok()).count();
        out.clear();
    }
    frames
}

fn bench_decoder<D: FrameDecoder>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    make: impl Fn() -> D,
    stream: &[u8],
) {
    assert_eq!(
        decode_stream(make(), stream),
        FRAMES,
        "{name} decodes every frame"
    );
    group.bench_function(name, |b| {
        b.iter(|| decode_stream(make(), black_box(stream)))
    });
}

fn decoders(c: &mut Criterion) {
    let mut group = c.benchmark_group("decoders");
    group.throughput(Throughput::Elements(FRAMES as u64));

    let lines = delimited_stream(b"\r\n");
    bench_decoder(
        &mut group,
        "line",
        || LineBasedFrameDecoder::new(1024),
        &lines,
    );

    let nul = delimited_stream(b"\0");
    let make_nul = || DelimiterBasedFrameDecoder::new(1024, Delimiters::nul()).expect("valid");
    bench_decoder(&mut group, "delimiter_nul", make_nul, &nul);

    let fixed = delimited_stream(b"");
    let make_fixed = || FixedLengthFrameDecoder::new(PAYLOAD).expect("valid");
    bench_decoder(&mut group, "fixed_length", make_fixed, &fixed);

    let prepender = LengthFieldPrepender::new(2).expect("valid");
    let framed = length_field_stream(&prepender);
    let make_length_field = || {
        let cfg = LengthFieldConfig {
            initial_bytes_to_strip: 2,
            ..LengthFieldConfig::new(1024, 0, 2)
        };
        LengthFieldBasedFrameDecoder::new(cfg).expect("valid")
    };
    bench_decoder(&mut group, "length_field", make_length_field, &framed);

    let messages: Vec<Vec<u8>> = (0..FRAMES).map(payload).collect();
    group.bench_function("length_field_prepender", |b| {
        let mut out = BytesMut::with_capacity(FRAMES * (PAYLOAD + 2));
        b.iter(|| {
            out.clear();
            for message in &messages {
                prepender
                    .encode(black_box(message), &mut out)
                    .expect("fits");
            }
            out.len()
        })
    });

    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = decoders
}
criterion_main!(benches);
